package billing

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pagesOf serves n numbered items in pages of size, counting fetches.
func pagesOf(n, size int, fetches *int) func(context.Context, string) (*Page[int], error) {
	return func(_ context.Context, cursor string) (*Page[int], error) {
		*fetches++
		start := 0
		if cursor != "" {
			_, _ = fmt.Sscanf(cursor, "after-%d", &start)
		}
		p := &Page[int]{}
		for i := start; i < min(start+size, n); i++ {
			p.Items = append(p.Items, i)
		}
		if end := start + len(p.Items); end < n {
			p.HasMore, p.NextCursor = true, fmt.Sprintf("after-%d", end)
		}
		return p, nil
	}
}

func TestPaginateYieldsEachItemOnceAcrossPages(t *testing.T) {
	var fetches int
	seen := map[int]int{}
	for v, err := range paginate(context.Background(), "", pagesOf(250, 100, &fetches)) {
		require.NoError(t, err)
		seen[*v]++
	}
	assert.Len(t, seen, 250)
	for v, n := range seen {
		assert.Equal(t, 1, n, "item %d", v)
	}
	assert.Equal(t, 3, fetches)
}

func TestPaginateCanBeRangedTwice(t *testing.T) {
	var fetches int
	seq := paginate(context.Background(), "", pagesOf(30, 10, &fetches))
	count := func() (n int) {
		for range seq {
			n++
		}
		return n
	}
	assert.Equal(t, 30, count())
	assert.Equal(t, 30, count(), "a second range starts from the beginning")
}

func TestPaginateStopsWhenAPageMakesNoProgress(t *testing.T) {
	for name, page := range map[string]*Page[int]{
		"same cursor":  {Items: []int{1}, HasMore: true, NextCursor: "c1"},
		"empty cursor": {Items: []int{1}, HasMore: true},
		"empty page":   {HasMore: true, NextCursor: "c2"},
	} {
		fetches := 0
		var errs []error
		for _, err := range paginate(context.Background(), "c1", func(context.Context, string) (*Page[int], error) {
			fetches++
			return page, nil
		}) {
			if err != nil {
				errs = append(errs, err)
			}
		}
		assert.Equal(t, []error{ErrNoProgress}, errs, name)
		assert.Equal(t, 1, fetches, name)
	}
}

func TestPaginateChecksTheContextBetweenPages(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var fetches int
	var lastErr error
	n := 0
	for _, err := range paginate(ctx, "", pagesOf(50, 10, &fetches)) {
		if err != nil {
			lastErr = err
			break
		}
		if n++; n == 10 {
			cancel() // the last item of the first page
		}
	}
	assert.ErrorIs(t, lastErr, context.Canceled)
	assert.Equal(t, 1, fetches, "no page is fetched after cancellation")
}

// A page's items are decoded in the slots the page keeps: reading a page of 100 costs
// the decoder and the slice's growth, not an allocation an item.
func TestPageItemsDecodeInPlace(t *testing.T) {
	type item struct {
		N int `json:"n"`
	}
	var body bytes.Buffer
	body.WriteByte('[')
	for i := range 100 {
		if i > 0 {
			body.WriteByte(',')
		}
		fmt.Fprintf(&body, `{"n":%d}`, i)
	}
	body.WriteByte(']')
	var items []item
	allocs := testing.AllocsPerRun(20, func() {
		var err error
		items, err = decodeItems[item](json.NewDecoder(bytes.NewReader(body.Bytes())), 100)
		if err != nil {
			t.Fatal(err)
		}
	})
	require.Len(t, items, 100)
	assert.Equal(t, 99, items[99].N)
	assert.Less(t, allocs, 50.0, "fewer than one allocation for every two items")
}
