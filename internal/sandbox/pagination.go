package sandbox

import (
	"encoding/base64"
	"net/url"
	"strconv"
)

// Page sizes of every list (SPEC "Limits").
const (
	defaultPageLimit = 20
	maxPageLimit     = 100
)

// pageQuery is the limit and cursor of a list request.
type pageQuery struct {
	limit  int
	cursor string
}

// page is the paged list envelope's data (SPEC "Conventions"). HasMore is
// authoritative; NextCursor is "" on the last page.
type page[T any] struct {
	Items      []T    `json:"items"`
	NextCursor string `json:"nextCursor"`
	HasMore    bool   `json:"hasMore"`
}

// parsePageQuery reads the query parameters limit (an integer from 1 to 100,
// default 20) and cursor.
func parsePageQuery(q url.Values) (pageQuery, error) {
	pq := pageQuery{limit: defaultPageLimit, cursor: q.Get("cursor")}
	if q.Has("limit") {
		n, err := strconv.Atoi(q.Get("limit"))
		if err != nil || n < 1 || n > maxPageLimit {
			return pageQuery{}, validationError("limit", "limit must be an integer from 1 to %d", maxPageLimit)
		}
		pq.limit = n
	}
	return pq, nil
}

// listPage returns one page of t, newest first: the records keep accepts (all
// when keep is nil), each shown through view, starting after the record the
// cursor names. A cursor is the base64 of the last id of the previous page;
// one this table does not hold is refused. It looks one match past the page
// so that HasMore is exact. Call it with the Server's mu held.
func listPage[T, V any](t *table[T], q pageQuery, keep func(*T) bool, view func(*T) V) (page[V], error) {
	start := t.len() - 1
	if q.cursor != "" {
		id, err := base64.RawURLEncoding.DecodeString(q.cursor)
		i, ok := t.index[string(id)]
		if err != nil || !ok {
			return page[V]{}, validationError("cursor", "cursor is not valid: pass the nextCursor of the previous page of this list")
		}
		start = i - 1
	}
	result := page[V]{Items: make([]V, 0, min(q.limit, start+1))}
	last := -1
	for i := start; i >= 0; i-- {
		row := t.rows[i]
		if keep != nil && !keep(row) {
			continue
		}
		if len(result.Items) == q.limit {
			result.HasMore = true
			result.NextCursor = encodeCursor(t.ids[last])
			break
		}
		result.Items = append(result.Items, view(row))
		last = i
	}
	return result, nil
}

// encodeCursor makes the cursor that resumes a list after the record id.
func encodeCursor(id string) string { return base64.RawURLEncoding.EncodeToString([]byte(id)) }
