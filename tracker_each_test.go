package billing

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/billingsdk/billing-go/internal/goroutines"
)

// A round's status checks: every one made once, at most RunConcurrency at a time, by
// as many pooled goroutines, each making the next when its last returns.
func TestEachMakesEveryCallOnceOnRunConcurrencyGoroutines(t *testing.T) {
	tr, _, _ := newTestTracker(t, TrackerOptions{RunConcurrency: 8})
	for _, n := range []int{1, 7, 8, 9, 200} {
		var (
			mu       sync.Mutex
			calls    = make([]int, n)
			where    = map[string]bool{}
			running  atomic.Int32
			mostSeen atomic.Int32
		)
		tr.each(context.Background(), n, func(i int) {
			now := running.Add(1)
			defer running.Add(-1)
			for seen := mostSeen.Load(); now > seen && !mostSeen.CompareAndSwap(seen, now); seen = mostSeen.Load() {
			}
			mu.Lock()
			defer mu.Unlock()
			calls[i]++
			where[goroutines.ID()] = true
		}, func(from int) { t.Errorf("stopped(%d) under a context that never ends", from) })
		for i, c := range calls {
			require.Equal(t, 1, c, "call %d of %d", i, n)
		}
		assert.LessOrEqual(t, int(mostSeen.Load()), 8, "at most RunConcurrency at a time")
		assert.LessOrEqual(t, len(where), min(n, 8), "%d calls on %d goroutines", n, len(where))
	}
}

// When its context ends, each starts no more calls: it calls stopped with the first it
// did not start while the calls under way go on, and returns once both are done.
func TestEachStopsAtTheFirstCallNotStarted(t *testing.T) {
	tr, _, _ := newTestTracker(t, TrackerOptions{RunConcurrency: 4})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const n = 50
	var started [n]atomic.Bool
	underWay := make(chan int, n)
	release := make(chan struct{})
	stoppedFrom := make(chan int, 1)
	returned := make(chan struct{})
	go func() {
		defer close(returned)
		tr.each(ctx, n, func(i int) {
			started[i].Store(true)
			underWay <- i
			<-release
		}, func(from int) {
			stoppedFrom <- from
		})
	}()
	for range 4 {
		<-underWay
	}
	cancel()
	from := <-stoppedFrom // while the four calls under way still wait
	select {
	case <-returned:
		t.Fatal("each returned before the calls under way did")
	default:
	}
	close(release)
	<-returned
	assert.Equal(t, 4, from, "the four under way were started, the rest not")
	for i := range n {
		assert.Equal(t, i < from, started[i].Load(), "call %d", i)
	}
}
