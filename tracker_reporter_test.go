package billing

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/billingsdk/billing-go/internal/goroutines"
)

// Reports claimed beyond the calls free wait in the reporter's queue, not on goroutines
// of their own, and each is made once a call ends.
func TestReportsWaitingForACallHoldNoGoroutine(t *testing.T) {
	const calls, reports = 2, 60
	r := newReporter(calls, time.Minute)
	now := time.Now()
	release := make(chan struct{})
	var made atomic.Int64
	before := goroutines.Created(t)
	for i := range reports {
		r.start(context.Background(), fmt.Sprintf("outcome%d", i), now.Add(time.Minute), func(*reportClaim, func()) bool {
			<-release
			made.Add(1)
			return true
		}, func() { t.Error("a report was given back while its Run went on") }, func() time.Time { return now })
	}
	assert.LessOrEqual(t, goroutines.Created(t)-before, uint64(calls), "goroutines started for %d reports with %d calls", reports, calls)
	assert.Equal(t, calls-reports, r.free(), "every report taken on is held")
	close(release)
	r.wait()
	assert.Equal(t, int64(reports), made.Load())
	assert.Equal(t, calls, r.free(), "every report finished frees its place")
}

// When Run's context ends, the reports still waiting for a call are given back at once,
// while the calls under way go on; none is made after.
func TestReportsWaitingWhenRunEndsAreGivenBack(t *testing.T) {
	const reports = 10
	r := newReporter(1, time.Minute)
	now := time.Now()
	ctx, cancel := context.WithCancel(context.Background())
	entered, release := make(chan struct{}), make(chan struct{})
	var made, givenBack atomic.Int64
	gaveBack := make(chan struct{}, reports)
	for i := range reports {
		r.start(ctx, fmt.Sprintf("outcome%d", i), now.Add(time.Minute), func(*reportClaim, func()) bool {
			made.Add(1)
			close(entered) // only the first is made
			<-release
			return true
		}, func() { givenBack.Add(1); gaveBack <- struct{}{} }, func() time.Time { return now })
	}
	<-entered
	cancel()
	for range reports - 1 {
		<-gaveBack // while the first call is still under way
	}
	close(release)
	r.wait()
	assert.Equal(t, int64(1), made.Load())
	assert.Equal(t, int64(reports-1), givenBack.Load())
	assert.Equal(t, 1, r.free())
}

// reportBehaviour is what one OnOutcome call does in TestReportsOverRandomOnOutcomes, and
// whether recording its result panics (a store's driver).
type reportBehaviour struct {
	call        int // one of the onOutcome* below
	recordPanic bool
}

const (
	onOutcomeNil     = iota // returns nil before its deadline
	onOutcomeErr            // returns an error before its deadline
	onOutcomePanic          // panics before its deadline
	onOutcomeGoexit         // ends its goroutine before its deadline
	onOutcomeOverrun        // returns once its deadline has passed, racing its grace
	onOutcomeHang           // outlives its deadline and its grace: returns when the test ends
	onOutcomeKinds
)

// Reports over random sequences of OnOutcome calls, each returning, failing, panicking,
// ending its goroutine, overrunning its deadline or never returning, and of recordings
// that panic, with random limits of calls at once: every report is made once and
// recorded once, as finished when its call returned in time and as not finished when it
// did not; calls not given up on never number more than the limit; and every report
// ends, so that Run's wait for them returns and the limit is free again. Each call's
// deadline passes when the call says (an overrunning or hanging one), each grace as
// soon as it is set. BILLING_REPORT_ROUNDS sets the rounds (default 150);
// BILLING_REPORT_SEED picks another sample.
func TestReportsOverRandomOnOutcomes(t *testing.T) {
	rounds, seed := 150, uint64(time.Now().UnixNano())
	if v := os.Getenv("BILLING_REPORT_ROUNDS"); v != "" {
		n, err := strconv.Atoi(v)
		require.NoError(t, err, "BILLING_REPORT_ROUNDS")
		rounds = n
	}
	if v := os.Getenv("BILLING_REPORT_SEED"); v != "" {
		s, err := strconv.ParseUint(v, 10, 64)
		require.NoError(t, err, "BILLING_REPORT_SEED")
		seed = s
	}
	t.Logf("seed %d (BILLING_REPORT_SEED), %d rounds (BILLING_REPORT_ROUNDS)", seed, rounds)
	rnd := rand.New(rand.NewPCG(seed, seed))
	forGood := make(chan struct{})
	defer close(forGood)
	for round := range rounds {
		reports, limit := 1+rnd.IntN(24), 1+rnd.IntN(4)
		plan := make([]reportBehaviour, reports)
		for i := range plan {
			plan[i] = reportBehaviour{call: rnd.IntN(onOutcomeKinds), recordPanic: rnd.IntN(5) == 0}
		}
		reportRound(t, round, plan, limit, forGood)
		if t.Failed() {
			t.Fatalf("round %d failed: seed %d, plan %+v, limit %d", round, seed, plan, limit)
		}
	}
}

// reportRound makes the reports of plan, limit calls at a time, and checks them.
func reportRound(t *testing.T, round int, plan []reportBehaviour, limit int, forGood <-chan struct{}) {
	graces := newFakeDeadlines()
	var (
		mu               sync.Mutex
		calls, recorded  = map[string]int{}, map[string]int{}
		finished         = map[string]bool{}
		under, mostUnder int                                        // calls under way and not given up on
		pass             = map[context.Context]context.CancelFunc{} // a call's deadline, by its context
	)
	deadline := func(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
		if d == stopGrace {
			return graces.deadline(ctx, d)
		}
		c, cancel := context.WithCancel(ctx)
		mu.Lock()
		pass[c] = cancel
		mu.Unlock()
		return c, cancel
	}
	tr, _, _ := newTestTracker(t, TrackerOptions{deadline: deadline, OnOutcome: func(ctx context.Context, o *Outcome) error {
		var i int
		_, _ = fmt.Sscanf(o.ID, "report%d", &i)
		mu.Lock()
		calls[o.ID]++
		under++
		mostUnder = max(mostUnder, under)
		passed := pass[ctx]
		mu.Unlock()
		switch plan[i].call {
		case onOutcomeErr:
			return errors.New("the order service refused it")
		case onOutcomePanic:
			panic("the order service's client")
		case onOutcomeGoexit:
			runtime.Goexit()
		case onOutcomeOverrun:
			passed()
			<-ctx.Done()
			return ctx.Err()
		case onOutcomeHang:
			passed()
			<-forGood
		}
		return nil
	}})
	r := newReporter(limit, time.Minute)
	now := time.Now()
	for i := range plan {
		id := fmt.Sprintf("report%d", i)
		r.start(context.Background(), id, now.Add(time.Hour), func(c *reportClaim, goOn func()) (kept bool) {
			kept = true
			defer tr.recoverPanic("a report of Run")
			return tr.callOnOutcome(context.Background(), &Outcome{ID: id}, func(done bool, err error) {
				mu.Lock()
				recorded[id]++
				finished[id] = done
				under-- // returned, or given up on: a call given up on runs on uncounted
				mu.Unlock()
				if plan[i].recordPanic {
					panic("the store's driver")
				}
			}, goOn)
		}, func() { t.Errorf("round %d: %s given back while its Run went on", round, id) }, func() time.Time { return now })
	}
	allDone := make(chan struct{})
	go func() { r.wait(); close(allDone) }()
	graces.fireUntil(t, allDone)
	_ = tr.takePanic()
	mu.Lock()
	defer mu.Unlock()
	for i, b := range plan {
		id := fmt.Sprintf("report%d", i)
		assert.Equal(t, 1, calls[id], "round %d: %s made once", round, id)
		assert.Equal(t, 1, recorded[id], "round %d: %s recorded once", round, id)
		switch b.call {
		case onOutcomeGoexit, onOutcomeHang:
			assert.False(t, finished[id], "round %d: %s did not return in time", round, id)
		case onOutcomeNil, onOutcomeErr, onOutcomePanic:
			assert.True(t, finished[id], "round %d: %s returned in time", round, id)
		}
	}
	assert.LessOrEqual(t, mostUnder, limit, "round %d: at most %d calls at once", round, limit)
	assert.Equal(t, limit, r.free(), "round %d: every report finished frees its place", round)
}
