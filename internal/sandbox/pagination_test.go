package sandbox

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// numberedTable holds the ints 0..n-1 under ids "n0".."n<n-1>".
func numberedTable(n int) *table[int] {
	var t table[int]
	for i := range n {
		v := i
		t.insert(fmt.Sprintf("n%d", i), &v)
	}
	return &t
}

func identity(v *int) int { return *v }

func TestParsePageQuery(t *testing.T) {
	pq, err := parsePageQuery(url.Values{})
	require.NoError(t, err)
	assert.Equal(t, pageQuery{limit: 20}, pq)
	pq, err = parsePageQuery(url.Values{"limit": {"100"}, "cursor": {"abc"}})
	require.NoError(t, err)
	assert.Equal(t, pageQuery{limit: 100, cursor: "abc"}, pq)
	for _, limit := range []string{"0", "101", "-1", "1.5", "ten", ""} {
		_, err := parsePageQuery(url.Values{"limit": {limit}})
		requireRule(t, err, "limit", "limit must be an integer from 1 to 100")
	}
}

func TestListPageWalksNewestFirstOnce(t *testing.T) {
	tbl := numberedTable(250)
	var seen []int
	q := pageQuery{limit: 100}
	for pages := 1; ; pages++ {
		p, err := listPage(tbl, q, nil, identity)
		require.NoError(t, err)
		seen = append(seen, p.Items...)
		if !p.HasMore {
			assert.Empty(t, p.NextCursor)
			assert.Len(t, p.Items, 50)
			assert.Equal(t, 3, pages)
			break
		}
		require.NotEmpty(t, p.NextCursor)
		q.cursor = p.NextCursor
	}
	require.Len(t, seen, 250)
	for i, v := range seen {
		assert.Equal(t, 249-i, v)
	}
}

func TestListPageHasMoreIsExact(t *testing.T) {
	p, err := listPage(numberedTable(20), pageQuery{limit: 20}, nil, identity)
	require.NoError(t, err)
	assert.Len(t, p.Items, 20)
	assert.False(t, p.HasMore, "a full last page has no more")
	assert.Empty(t, p.NextCursor)

	even := func(v *int) bool { return *v%2 == 0 }
	p, err = listPage(numberedTable(21), pageQuery{limit: 10}, even, identity)
	require.NoError(t, err)
	assert.Equal(t, []int{20, 18, 16, 14, 12, 10, 8, 6, 4, 2}, p.Items)
	assert.True(t, p.HasMore, "0 still matches")
	p, err = listPage(numberedTable(21), pageQuery{limit: 10, cursor: p.NextCursor}, even, identity)
	require.NoError(t, err)
	assert.Equal(t, []int{0}, p.Items)
	assert.False(t, p.HasMore)

	p, err = listPage(&table[int]{}, pageQuery{limit: 10}, nil, identity)
	require.NoError(t, err)
	assert.NotNil(t, p.Items, "an empty page encodes items as []")
	assert.Empty(t, p.Items)
}

func TestListPageRefusesUnknownCursors(t *testing.T) {
	tbl := numberedTable(3)
	for _, cursor := range []string{"!!!", base64.RawURLEncoding.EncodeToString([]byte("cust_unknown"))} {
		_, err := listPage(tbl, pageQuery{limit: 10, cursor: cursor}, nil, identity)
		requireRule(t, err, "cursor", "cursor is not valid: pass the nextCursor of the previous page of this list")
	}
}

// A page from a cursor costs its own size, not the records before it, so
// walking 100,000 records page by page stays linear.
func TestListPageResumesWithoutRescanning(t *testing.T) {
	tbl := numberedTable(100_000)
	visited := 0
	count := func(*int) bool { visited++; return true }
	q := pageQuery{limit: 100}
	pages := 0
	for {
		p, err := listPage(tbl, q, count, identity)
		require.NoError(t, err)
		pages++
		if !p.HasMore {
			break
		}
		q.cursor = p.NextCursor
	}
	assert.Equal(t, 1000, pages)
	assert.LessOrEqual(t, visited, 100_000+pages, "each page looks at most one record past itself")
}
