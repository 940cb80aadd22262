package billing

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestListEndsWhenAnyCursorRepeats walks lists whose cursors cycle, for every cycle
// length up to 8 entered after every prefix up to 4 pages, from the first page and from
// a given cursor: each walk ends with ErrNoProgress, after fetching each distinct cursor
// once.
func TestListEndsWhenAnyCursorRepeats(t *testing.T) {
	walks := 0
	for _, start := range []string{"", "c0"} {
		for prefix := 0; prefix <= 4; prefix++ {
			for cycle := 1; cycle <= 8; cycle++ {
				// Pages p0 .. p(prefix+cycle-1); the last one points back at p(prefix).
				n := prefix + cycle
				cursorOf := func(i int) string {
					if i == 0 {
						return start
					}
					return fmt.Sprintf("c%d", i)
				}
				next := func(i int) string {
					if i == n-1 {
						return cursorOf(prefix)
					}
					return cursorOf(i + 1)
				}
				if next(n-1) == "" {
					continue // a cycle back to the first page of a walk from "" is a missing cursor, tested below
				}
				fetched := map[string]int{}
				fetch := func(_ context.Context, cursor string) (*Page[int], error) {
					fetched[cursor]++
					require.LessOrEqual(t, len(fetched), n, "only the pages of the cycle are fetched")
					for i := range n {
						if cursorOf(i) == cursor {
							return &Page[int]{Items: []int{i}, NextCursor: next(i), HasMore: true}, nil
						}
					}
					return nil, fmt.Errorf("unknown cursor %q", cursor)
				}
				var items []int
				var last error
				for item, err := range paginate(context.Background(), start, fetch) {
					if err != nil {
						last = err
						break
					}
					items = append(items, *item)
				}
				desc := fmt.Sprintf("start %q, prefix %d, cycle %d", start, prefix, cycle)
				require.ErrorIs(t, last, ErrNoProgress, desc)
				require.Len(t, items, n, desc)
				for cursor, times := range fetched {
					require.Equal(t, 1, times, "%s: cursor %q fetched once", desc, cursor)
				}
				walks++
			}
		}
	}
	t.Logf("%d cycling walks ended", walks)
}

// TestListThroughTheClientEndsOnACursorCycle: the service answers cursor A with B and B
// with A; List ends with ErrNoProgress after three requests.
func TestListThroughTheClientEndsOnACursorCycle(t *testing.T) {
	c, mock := newMockClient(t, WithSecretKey("sk_test"))
	next := map[string]string{"": "A", "A": "B", "B": "A"}
	mock.RegisterResponder(http.MethodGet, mockBaseURL+"/v1/customers", func(r *http.Request) (*http.Response, error) {
		cursor := r.URL.Query().Get("cursor")
		body := fmt.Sprintf(`{"success":true,"data":{"items":[{"id":"cust_%s"}],"nextCursor":%q,"hasMore":true}}`, cursor, next[cursor])
		return httpmock.NewStringResponse(200, body), nil
	})
	var ids []string
	var last error
	for cust, err := range c.Customers.List(context.Background(), nil) {
		if err != nil {
			last = err
			break
		}
		ids = append(ids, cust.ID)
	}
	require.ErrorIs(t, last, ErrNoProgress)
	assert.Equal(t, []string{"cust_", "cust_A", "cust_B"}, ids)
	assert.Equal(t, 3, mock.GetTotalCallCount())
}

// pageOf returns a customer list answer of n items.
func pageOf(n int) string {
	var b strings.Builder
	b.WriteString(`{"success":true,"data":{"nextCursor":"next","hasMore":true,"items":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":"cust_%d"}`, i)
	}
	b.WriteString(`]}}`)
	return b.String()
}

// TestPageWithMoreItemsThanAskedIsAnError: for every limit asked (none included, which
// bounds at 100), a page of exactly that many items is read and one more is refused with
// ErrPageTooLarge, once: another attempt would get the same answer.
func TestPageWithMoreItemsThanAskedIsAnError(t *testing.T) {
	for _, limit := range []int{0, 1, 2, 10, 99, 100} {
		bound := limit
		if bound == 0 {
			bound = maxPageLimit
		}
		for _, n := range []int{bound, bound + 1, 3 * bound} {
			t.Run(fmt.Sprintf("limit %d, %d items", limit, n), func(t *testing.T) {
				c, mock := newMockClient(t, WithSecretKey("sk_test"), WithRetry(DefaultMaxAttempts, 0, 0))
				mock.RegisterResponder(http.MethodGet, mockBaseURL+"/v1/customers", httpmock.NewStringResponder(200, pageOf(n)))
				page, err := c.Customers.ListPage(context.Background(), &CustomerListParams{ListParams: ListParams{Limit: limit}})
				if n <= bound {
					require.NoError(t, err)
					assert.Len(t, page.Items, n)
					assert.Equal(t, "next", page.NextCursor)
					assert.True(t, page.HasMore)
					return
				}
				require.ErrorIs(t, err, ErrPageTooLarge)
				assert.Nil(t, page)
				assert.Equal(t, 1, mock.GetTotalCallCount(), "not retried")

				var last error
				for _, err := range c.Customers.List(context.Background(), &CustomerListParams{ListParams: ListParams{Limit: limit}}) {
					last = err
				}
				require.ErrorIs(t, last, ErrPageTooLarge, "List stops at the oversized page")
			})
		}
	}
}

// hugePage is a customer list answer just under the 32 MiB body limit holding 200,000
// small items.
func hugePage(tb testing.TB) []byte {
	tb.Helper()
	const items = 200_000
	pad := (maxBodyBytes - 100) / items
	var b bytes.Buffer
	b.Grow(maxBodyBytes)
	b.WriteString(`{"success":true,"data":{"hasMore":false,"items":[`)
	for i := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		item := fmt.Sprintf(`{"id":"cust_%d","name":"`, i)
		b.WriteString(item)
		b.WriteString(strings.Repeat("x", pad-len(item)-4))
		b.WriteString(`"}`)
	}
	b.WriteString(`]}}`)
	require.LessOrEqual(tb, b.Len(), maxBodyBytes)
	require.Greater(tb, b.Len(), maxBodyBytes-(maxBodyBytes/16), "about 32 MiB")
	return b.Bytes()
}

// listHugePage asks for 10 customers and is answered hugePage.
func listHugePage(tb testing.TB, body []byte) (*Client, func() error) {
	c, mock := newMockClient(tb, WithSecretKey("sk_test"))
	mock.RegisterResponder(http.MethodGet, mockBaseURL+"/v1/customers", func(*http.Request) (*http.Response, error) {
		return httpmock.NewBytesResponse(200, body), nil
	})
	return c, func() error {
		_, err := c.Customers.ListPage(context.Background(), &CustomerListParams{ListParams: ListParams{Limit: 10}})
		return err
	}
}

// maxHugePageAlloc bounds what reading hugePage may allocate: the page is decoded as it
// arrives and refused at its eleventh item, so the rest of the 32 MiB is never read;
// decoding it whole cost 200 MiB and more.
const maxHugePageAlloc = 1 << 20

// TestHugePageIsDecodedInBoundedMemory counts the bytes a ListPage of limit 10 answered
// 200,000 items allocates: it is refused, and costs at most maxHugePageAlloc.
func TestHugePageIsDecodedInBoundedMemory(t *testing.T) {
	body := hugePage(t)
	_, list := listHugePage(t, body)
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	err := list()
	runtime.ReadMemStats(&after)
	require.ErrorIs(t, err, ErrPageTooLarge)
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("a %d-byte page of 200,000 items for limit 10 allocated %d bytes", len(body), allocated)
	assert.Less(t, allocated, uint64(maxHugePageAlloc))
	assert.False(t, errors.Is(err, ErrOutcomeUnknown))
}

// BenchmarkHugePage reports what refusing a 32 MiB page of 200,000 items for limit 10
// costs.
func BenchmarkHugePage(b *testing.B) {
	body := hugePage(b)
	_, list := listHugePage(b, body)
	b.ReportAllocs()
	for b.Loop() {
		if err := list(); !errors.Is(err, ErrPageTooLarge) {
			b.Fatal(err)
		}
	}
}
