package billing

import (
	"context"
	"reflect"
	"sync"
	"time"
)

// deadlineSlices is how finely sharedDeadlines cut a timeout: calls that begin within
// one slice of it share a context.
const deadlineSlices = 100

// sharedDeadlines is the Tracker's deadlineFunc on the wall clock. Calls bounded by
// the same timeout that begin under the same lasting parent (Run's context, see share)
// within one slice of that timeout (a hundredth of it) share one context, which ends
// timeout after the first of them began: every call is bounded by its timeout, and none
// by less than 99% of it. A busy Run, whose every resolution makes a few bounded store
// calls and an OnOutcome call, then pays one context and one timer per slice instead of
// one per call.
//
// A shared context is not cancelled when a call returns (its CancelFunc does nothing):
// it ends at its deadline, which stops its timer, or with its parent, and keeps its
// parent alive until then. That is why only a parent that outlives its calls anyway is
// shared: under any other (a callback request's, say, whose values may hold its body)
// each call gets a context of its own, cancelled when it returns, so that nothing a
// call was given outlives it. At most deadlineSlices shared contexts per timeout and
// parent are alive at once.
type sharedDeadlines struct {
	now    func() time.Time
	derive deadlineFunc

	mu      sync.Mutex
	slots   map[slotKey]*deadlineSlot // by timeout and parent
	lasting map[context.Context]int   // the parents shared, each with its count of share calls
}

// sharingContext is the context of a Run whose calls share deadlines: its store and
// OnOutcome calls, and the attempts of its status checks (see Client.attemptContext),
// which find the deadlines through it. It is the context Run was given in all else.
type sharingContext struct {
	context.Context
	deadlines *sharedDeadlines
	without   context.Context // context.WithoutCancel of it, made once: see withoutCancel
}

// newSharingContext marks ctx, Run's, as one whose calls share the deadlines d.
func newSharingContext(ctx context.Context, d *sharedDeadlines) *sharingContext {
	run := &sharingContext{Context: ctx, deadlines: d}
	run.without = context.WithoutCancel(run)
	return run
}

// withoutCancel is context.WithoutCancel(ctx), the context of the writes that go on once
// ctx ends; for Run's context, the one made with it rather than one per write.
func withoutCancel(ctx context.Context) context.Context {
	if run, ok := ctx.(*sharingContext); ok {
		return run.without
	}
	return context.WithoutCancel(ctx)
}

// slotKey names the calls that share a context: those of one timeout under one parent.
// Run's calls alternate between its parents (its context, and the one its last writes
// run under), each of which keeps its own context for the slice.
type slotKey struct {
	timeout time.Duration
	parent  context.Context
}

// deadlineSlot is the context calls of one timeout and parent share now.
type deadlineSlot struct {
	ctx     context.Context
	renewAt time.Time // from then on, a call gets a new context
}

func newSharedDeadlines(now func() time.Time, derive deadlineFunc) *sharedDeadlines {
	return &sharedDeadlines{now: now, derive: derive, slots: make(map[slotKey]*deadlineSlot),
		lasting: make(map[context.Context]int)}
}

// share lets the calls under parent, a context that outlives them (Run's), share
// deadlines until done is called. A context that cannot be a map key is not shared.
func (d *sharedDeadlines) share(parent context.Context) (done func()) {
	if !keyable(parent) {
		return func() {}
	}
	d.mu.Lock()
	d.lasting[parent]++
	d.mu.Unlock()
	return func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		if d.lasting[parent]--; d.lasting[parent] <= 0 {
			delete(d.lasting, parent)
			for key := range d.slots {
				if key.parent == parent {
					delete(d.slots, key)
				}
			}
		}
	}
}

// deadline returns a context that ends within timeout from now, and at the earliest
// timeout less a slice from now.
func (d *sharedDeadlines) deadline(parent context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	slice := timeout / deadlineSlices
	if slice <= 0 || !keyable(parent) {
		return d.derive(parent, timeout) // a context that cannot be a map key shares nothing
	}
	now := d.now()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.lasting[parent] == 0 {
		return d.derive(parent, timeout)
	}
	key := slotKey{timeout, parent}
	s := d.slots[key]
	if s == nil {
		s = &deadlineSlot{}
		d.slots[key] = s
	}
	if s.ctx == nil || s.ctx.Err() != nil || !now.Before(s.renewAt) {
		// Its cancel is dropped: the context ends at its deadline, which releases its
		// timer, and the calls sharing it cannot know which of them is the last.
		ctx, _ := d.derive(parent, timeout)
		s.ctx, s.renewAt = ctx, now.Add(slice)
	}
	return s.ctx, func() {}
}

// keyable reports whether ctx can be a map key without panicking: a pointer, as most
// contexts of package context are, or a value each of whose parts, looking through
// interfaces to the value they hold (WithoutCancel's holds its parent), is one ==
// compares. Comparable alone does not look inside an interface, whose value may be a map.
func keyable(ctx context.Context) bool {
	return ctx != nil && keyableValue(reflect.ValueOf(ctx))
}

func keyableValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Map, reflect.Slice, reflect.Func, reflect.Invalid:
		return false
	case reflect.Interface:
		return v.IsNil() || keyableValue(v.Elem())
	case reflect.Struct:
		for i := range v.NumField() {
			if !keyableValue(v.Field(i)) {
				return false
			}
		}
	case reflect.Array:
		for i := range v.Len() {
			if !keyableValue(v.Index(i)) {
				return false
			}
		}
	}
	return true
}
