package billing

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"iter"
	"strings"
)

// ListParams are the paging parameters every list call takes. The zero value asks for the
// first page at the service's default size (20).
type ListParams struct {
	// Limit is the page size, 1 to 100. Zero means the service default.
	Limit int `url:"limit,omitempty"`
	// Cursor is the NextCursor of a previous page; empty for the first page.
	Cursor string `url:"cursor,omitempty"`
}

func (p *ListParams) listParams() *ListParams { return p }

func (p *ListParams) validate() error {
	if p.Limit != 0 && (p.Limit < 1 || p.Limit > 100) {
		return invalid("limit", "must be from 1 to 100")
	}
	return nil
}

// Page is one page of a list: its items, and where the next page starts.
type Page[T any] struct {
	Items      []T    `json:"items"`
	NextCursor string `json:"nextCursor"`
	HasMore    bool   `json:"hasMore"`

	// maxItems is the most items the page may hold: the limit its request asked, or
	// maxPageLimit. Decoding stops past it (see UnmarshalJSON).
	maxItems int
}

// maxPageLimit is the largest page the service serves: the bound of a page whose request
// named no limit.
const maxPageLimit = 100

// ErrNoProgress is yielded by a list iterator when the service says there are more items
// but gives no cursor, or a cursor the walk has already been given, so the iteration
// stops instead of looping forever.
var ErrNoProgress = errors.New("billing: list made no progress: the service gave no new cursor")

// ErrPageTooLarge is returned when the service answers a list request with more items
// than the request's limit asked (at most 100 when it named none). The page is refused
// as a whole, and is decoded no further than one item past the limit.
var ErrPageTooLarge = errors.New("billing: the service returned more items than the page limit")

// boundItems sets the most items the page may hold; n <= 0 means maxPageLimit.
func (p *Page[T]) boundItems(n int) { p.maxItems = n }

// resetData empties the page for another attempt's answer, keeping its bound.
func (p *Page[T]) resetData() { *p = Page[T]{maxItems: p.maxItems} }

// itemBounded is data decoded with a bound on its item count: a Page.
type itemBounded interface {
	boundItems(n int)
	resetData()
}

// decodeStream reads the envelope of a page from r (see decodeStream).
func (p *Page[T]) decodeStream(r io.Reader, h *envelopeHeader) error { return decodeStream(r, h, p) }

// UnmarshalJSON reads a page as encoding/json would (keys in any case, null as empty),
// one item at a time, and refuses it with ErrPageTooLarge as soon as it holds one item
// more than its bound: a page of 200,000 items costs what limit+1 items cost.
func (p *Page[T]) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := p.decodeFrom(dec); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("billing: data after a page")
	}
	return nil
}

// decodeFrom reads the page that comes next in dec (see UnmarshalJSON).
func (p *Page[T]) decodeFrom(dec *json.Decoder) error {
	limit := p.maxItems
	if limit <= 0 {
		limit = maxPageLimit
	}
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok == nil {
		return nil // null leaves the page as it is, as encoding/json does
	}
	if tok != json.Delim('{') {
		return fmt.Errorf("billing: a page must be a JSON object, not %v", tok)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		switch {
		case strings.EqualFold(key, "items"):
			if p.Items, err = decodeItems[T](dec, limit); err != nil {
				return err
			}
		case strings.EqualFold(key, "nextCursor"):
			err = dec.Decode(&p.NextCursor)
		case strings.EqualFold(key, "hasMore"):
			err = dec.Decode(&p.HasMore)
		default:
			var skipped json.RawMessage
			err = dec.Decode(&skipped)
		}
		if err != nil {
			return err
		}
	}
	_, err = dec.Token() // the closing brace
	return err
}

// decodeStream reads an envelope whose data is a page straight from r, so that a page
// refused past its bound is read no further: the rest of the body is never read, let
// alone held. The envelope's other keys are read as json.Unmarshal reads them.
func decodeStream[T any](r io.Reader, h *envelopeHeader, data *Page[T]) error {
	dec := json.NewDecoder(r)
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok == nil {
		return nil // a body of null decodes to nothing, as json.Unmarshal has it
	}
	if tok != json.Delim('{') {
		return fmt.Errorf("billing: an answer must be a JSON object, not %v", tok)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		if strings.EqualFold(key, "data") {
			if err := data.decodeFrom(dec); err != nil {
				return err
			}
			continue
		}
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return err
		}
		field, err := json.Marshal(map[string]json.RawMessage{key: value})
		if err != nil {
			return err
		}
		if err := json.Unmarshal(field, h); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("billing: data after the answer")
	}
	return nil
}

// decodeItems reads a JSON array of at most limit items (or null) from dec.
func decodeItems[T any](dec *json.Decoder, limit int) ([]T, error) {
	tok, err := dec.Token()
	if err != nil || tok == nil {
		return nil, err
	}
	if tok != json.Delim('[') {
		return nil, fmt.Errorf("billing: a page's items must be a JSON array, not %v", tok)
	}
	items := make([]T, 0, min(limit, 16))
	for dec.More() {
		if len(items) == limit {
			return nil, fmt.Errorf("%w: more than %d items", ErrPageTooLarge, limit)
		}
		// Decoded in place, in the slot it keeps: a variable of its own would escape
		// to the heap through Decode, one allocation an item.
		var zero T
		items = append(items, zero)
		if err := dec.Decode(&items[len(items)-1]); err != nil {
			return nil, err
		}
	}
	_, err = dec.Token() // the closing bracket
	return items, err
}

// pageLimit is the limit a list request asks for, or 0 when it names none or is no list.
func pageLimit(query any) int {
	if q, ok := query.(interface{ listParams() *ListParams }); ok && q.listParams() != nil {
		return q.listParams().Limit
	}
	return 0
}

// paginate walks the pages that fetch returns, starting at cursor, and yields their items
// one by one. Only one page is held at a time, ctx is checked before each page, and the
// loop ends when the consumer stops, a page is the last, or a page makes no progress: it
// gives no cursor, or one the walk has been given before (A, B, A ends at the second A).
// The cursors seen are kept as hashes, so a walk's memory does not grow with their size.
func paginate[T any](ctx context.Context, start string, fetch func(ctx context.Context, cursor string) (*Page[T], error)) iter.Seq2[*T, error] {
	return func(yield func(*T, error) bool) {
		cursor := start // each range starts afresh
		seed := maphash.MakeSeed()
		seen := map[uint64]struct{}{maphash.String(seed, cursor): {}}
		for {
			if err := ctx.Err(); err != nil {
				yield(nil, err)
				return
			}
			page, err := fetch(ctx, cursor)
			if err != nil {
				yield(nil, err)
				return
			}
			for i := range page.Items {
				if !yield(&page.Items[i], nil) {
					return
				}
			}
			if !page.HasMore {
				return
			}
			next := maphash.String(seed, page.NextCursor)
			if _, repeated := seen[next]; repeated || page.NextCursor == "" || len(page.Items) == 0 {
				yield(nil, ErrNoProgress)
				return
			}
			seen[next] = struct{}{}
			cursor = page.NextCursor
		}
	}
}

// listAll is the body of every List method: it copies the caller's params once (they are
// never modified), then walks the pages with fetch, the service's ListPage. P is the
// resource's list params type, which embeds ListParams.
func listAll[P any, PP interface {
	*P
	listParams() *ListParams
}, T any](ctx context.Context, p *P, fetch func(context.Context, *P) (*Page[T], error)) iter.Seq2[*T, error] {
	if ctx == nil {
		return func(yield func(*T, error) bool) { yield(nil, errNilContext()) }
	}
	var q P
	if p != nil {
		q = *p
	}
	return paginate(ctx, PP(&q).listParams().Cursor, func(ctx context.Context, cursor string) (*Page[T], error) {
		page := q
		PP(&page).listParams().Cursor = cursor
		return fetch(ctx, &page)
	})
}
