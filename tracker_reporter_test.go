package billing

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

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
