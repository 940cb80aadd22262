package billing

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/billingsdk/billing-go/storekit"
)

// ReconcilePages reports every movement of a window however many there are, each once,
// in order of start, with no page cut; Reconcile alone reports the first 1,000 and says
// it cut the rest.
func TestReconcilePagesWalksAWindowOfAnySize(t *testing.T) {
	tr, _, clock := newTestTracker(t, TrackerOptions{})
	ctx := context.Background()
	start := clock.Now()
	const n = 2*storekit.MaxClaim + 345
	for i := range n {
		// Several movements share a start, as under load.
		at := start.Add(time.Duration(i/3) * time.Millisecond)
		_, _, err := tr.store.Track(ctx, movement{Kind: KindSend, ClientReference: fmt.Sprintf("rec%05d", i), StartedAt: at, Deadline: at.Add(time.Minute)})
		require.NoError(t, err)
	}
	clock.Advance(time.Hour)
	from, to := start.Add(-time.Second), start.Add(time.Hour)

	one, err := tr.Reconcile(ctx, from, to)
	require.NoError(t, err)
	assert.Len(t, one.Overdue, storekit.MaxClaim)
	assert.True(t, one.Truncated)

	seen := map[string]bool{}
	var last time.Time
	pages := 0
	for page, err := range tr.ReconcilePages(ctx, from, to) {
		require.NoError(t, err)
		pages++
		assert.False(t, page.Truncated, "page %d cut", pages)
		assert.LessOrEqual(t, len(page.Overdue), storekit.MaxClaim)
		for _, m := range page.Overdue {
			assert.False(t, seen[m.ClientReference], "%s reported twice", m.ClientReference)
			seen[m.ClientReference] = true
			assert.False(t, m.StartedAt.Before(last), "%s out of order", m.ClientReference)
			last = m.StartedAt
		}
	}
	assert.Len(t, seen, n, "every overdue movement reported")
	assert.GreaterOrEqual(t, pages, 3)
	t.Logf("%d movements in %d pages", n, pages)

	// Stopping early stops the walk.
	pages = 0
	for range tr.ReconcilePages(ctx, from, to) {
		pages++
		break
	}
	assert.Equal(t, 1, pages)
}

// More movements of one list than a page holds that started within the same
// microsecond cannot be split: their page says Truncated.
func TestReconcilePagesSaysWhatItCannotSplit(t *testing.T) {
	tr, _, clock := newTestTracker(t, TrackerOptions{})
	ctx := context.Background()
	at := clock.Now()
	for i := range storekit.MaxClaim + 1 {
		_, _, err := tr.store.Track(ctx, movement{Kind: KindSend, ClientReference: fmt.Sprintf("same%05d", i), StartedAt: at, Deadline: at.Add(time.Minute)})
		require.NoError(t, err)
	}
	clock.Advance(time.Hour)
	var cut int
	for page, err := range tr.ReconcilePages(ctx, at.Add(-time.Hour), at.Add(time.Hour)) {
		require.NoError(t, err)
		if page.Truncated {
			cut++
			assert.Len(t, page.Overdue, storekit.MaxClaim)
		}
	}
	assert.Equal(t, 1, cut)
}

type failingReconcile struct{ storekit.Store }

func (failingReconcile) Reconcile(context.Context, time.Time, time.Time, time.Time) (Reconciliation, error) {
	return Reconciliation{}, errors.New("database gone")
}

func TestReconcilePagesYieldsTheStoresError(t *testing.T) {
	tr, _, _ := newTestTracker(t, TrackerOptions{Store: failingReconcile{NewMemoryStore(0)}})
	var errs []error
	for _, err := range tr.ReconcilePages(context.Background(), time.Unix(0, 0), time.Unix(100, 0)) {
		errs = append(errs, err)
	}
	require.Len(t, errs, 1)
	assert.ErrorContains(t, errs[0], "database gone")
}
