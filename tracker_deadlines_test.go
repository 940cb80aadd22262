package billing

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recordedDeadlines derives contexts on a fake clock and counts them.
type recordedDeadlines struct {
	now     time.Time
	derived int
}

func (r *recordedDeadlines) derive(parent context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	r.derived++
	return context.WithDeadline(parent, r.now.Add(timeout))
}

// valueCtx is a context of a type == cannot compare.
type valueCtx struct {
	context.Context
	tags []string
}

func TestSharedDeadlinesBoundEveryCallWithinASlice(t *testing.T) {
	rec := &recordedDeadlines{now: time.Now()} // the derived contexts end by the wall clock
	d := newSharedDeadlines(func() time.Time { return rec.now }, rec.derive)
	parent, stop := context.WithCancel(context.Background())
	defer stop()
	const timeout = 10 * time.Second
	slice := timeout / deadlineSlices

	first, cancel := d.deadline(parent, timeout)
	cancel()
	require.NoError(t, first.Err(), "a call's cancel leaves the shared context to the others")
	rec.now = rec.now.Add(slice - time.Nanosecond)
	second, _ := d.deadline(parent, timeout)
	assert.Same(t, first, second, "within the slice: shared")
	deadline, _ := second.Deadline()
	assert.GreaterOrEqual(t, deadline.Sub(rec.now), timeout-slice, "never bounded by less than the timeout less a slice")
	assert.LessOrEqual(t, deadline.Sub(rec.now), timeout, "never by more than the timeout")

	rec.now = rec.now.Add(time.Nanosecond)
	third, _ := d.deadline(parent, timeout)
	assert.NotSame(t, first, third, "a slice later: a new one")
	deadline, _ = third.Deadline()
	assert.Equal(t, timeout, deadline.Sub(rec.now))

	other, _ := d.deadline(context.WithoutCancel(parent), timeout)
	assert.NotSame(t, third, other, "another parent: another context")
	longer, _ := d.deadline(parent, time.Minute)
	deadline, _ = longer.Deadline()
	assert.Equal(t, time.Minute, deadline.Sub(rec.now), "each timeout has its own")

	stop()
	require.Error(t, third.Err())
	again, _ := d.deadline(parent, timeout)
	assert.NotSame(t, third, again, "an ended context is never handed out again")

	before := rec.derived
	assert.Equal(t, 5, before, "first, third, other, longer and again: one context each")
	odd := valueCtx{Context: context.Background(), tags: []string{"x"}}
	d.deadline(odd, timeout)
	d.deadline(odd, timeout)
	assert.Equal(t, before+2, rec.derived, "a parent that cannot be compared shares nothing")
}
