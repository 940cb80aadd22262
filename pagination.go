package billing

import (
	"context"
	"errors"
	"iter"
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
}

// ErrNoProgress is yielded by a list iterator when the service says there are more items
// but gives no new cursor, so the iteration stops instead of looping forever.
var ErrNoProgress = errors.New("billing: list made no progress: the service returned the same cursor")

// paginate walks the pages that fetch returns, starting at cursor, and yields their items
// one by one. Only one page is held at a time, ctx is checked before each page, and the
// loop ends when the consumer stops, a page is the last, or a page makes no progress.
func paginate[T any](ctx context.Context, start string, fetch func(ctx context.Context, cursor string) (*Page[T], error)) iter.Seq2[*T, error] {
	return func(yield func(*T, error) bool) {
		cursor := start // each range starts afresh
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
			if page.NextCursor == "" || page.NextCursor == cursor || len(page.Items) == 0 {
				yield(nil, ErrNoProgress)
				return
			}
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
