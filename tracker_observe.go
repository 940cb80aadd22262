package billing

import (
	"context"
	"time"
)

// TrackerObserver is told what a Tracker learns, for metrics (package otelbilling
// implements it with OpenTelemetry). Give it in TrackerOptions.Observer. Its methods are
// called on the goroutine that delivered the callback or awaited the movement, never
// while the Tracker holds its lock, so they may call Tracker.Stats; they must be quick
// and safe for concurrent use.
type TrackerObserver interface {
	// CallbackReceived is told of each callback of a money movement delivered to the
	// Tracker (transaction, payout and mandate callbacks, in any state), before the
	// Tracker acts on it.
	CallbackReceived(ctx context.Context, ev Event)
	// StatusChecked is told of each status check the Tracker asked: its outcome (Source
	// SourceStatusCheck, possibly still pending), or the error it ended with.
	StatusChecked(ctx context.Context, kind Kind, clientReference string, o *Outcome, err error)
	// OutcomeSettled is told of each final outcome the Tracker records, once per movement,
	// and once more if a later success replaces a failure. o.Source says whether the
	// callback or the status check settled it; o.Kind is empty when a callback settled a
	// movement no Await or Track had named yet.
	OutcomeSettled(ctx context.Context, o *Outcome)
}

// TrackerStats is a snapshot of what a Tracker is waiting for, for gauges.
type TrackerStats struct {
	// Pending is the number of movements remembered without a final outcome.
	Pending int
	// OldestPendingAge is how long ago, by the Tracker's clock, the oldest of them
	// started (see Track); 0 when none is pending.
	OldestPendingAge time.Duration
}

// Stats returns how many movements the Tracker is waiting for and the age of the oldest.
// It is cheap enough for a gauge read on every scrape: it does not visit the movements.
func (t *Tracker) Stats() TrackerStats {
	now := t.opts.Clock.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	p := &t.pending
	for len(p.queue) > 0 && !t.isPendingLocked(p.queue[0]) {
		p.queue[0] = nil
		p.queue = p.queue[1:]
	}
	s := TrackerStats{Pending: p.count}
	if len(p.queue) > 0 {
		s.OldestPendingAge = max(0, now.Sub(p.queue[0].started))
	}
	return s
}

// pendingMovements is what Stats reports, kept as movements come and go so that Stats
// need not visit them all: the number without a final outcome, and a queue of them in
// the order they started. Movements that settle or are forgotten leave the queue when
// they reach its front, or when they make up most of it, so it stays within four times
// the pending count (or a small floor).
type pendingMovements struct {
	count int
	queue []*tracked
}

// pendingQueueFloor is the queue length below which settled movements are left in it.
const pendingQueueFloor = 1024

// isPendingLocked reports whether e is remembered and has no final outcome.
func (t *Tracker) isPendingLocked(e *tracked) bool {
	return e.outcome == nil && t.entries[e.key] == e
}

// pendingStartedLocked counts a movement the Tracker has just started to remember.
func (t *Tracker) pendingStartedLocked(e *tracked) {
	t.pending.count++
	t.pending.queue = append(t.pending.queue, e)
}

// pendingEndedLocked counts a pending movement that has just settled or been forgotten.
func (t *Tracker) pendingEndedLocked() {
	p := &t.pending
	p.count--
	if n := len(p.queue); n <= pendingQueueFloor || n <= 4*p.count {
		return
	}
	kept := make([]*tracked, 0, 2*p.count)
	for _, e := range p.queue {
		if t.isPendingLocked(e) {
			kept = append(kept, e)
		}
	}
	p.queue = kept
}

// observeCallback tells the observer of a callback delivered.
func (t *Tracker) observeCallback(ctx context.Context, ev Event) {
	if t.opts.Observer != nil {
		t.opts.Observer.CallbackReceived(ctx, ev)
	}
}

// observeStatusCheck tells the observer of a status check asked.
func (t *Tracker) observeStatusCheck(ctx context.Context, kind Kind, clientReference string, o *Outcome, err error) {
	if t.opts.Observer != nil {
		t.opts.Observer.StatusChecked(ctx, kind, clientReference, o, err)
	}
}

// observeSettled tells the observer of an outcome settled, nil meaning none was. It
// runs after the Tracker's lock is released.
func (t *Tracker) observeSettled(ctx context.Context, o *Outcome) {
	if o != nil && t.opts.Observer != nil {
		t.opts.Observer.OutcomeSettled(ctx, o)
	}
}

// forObserver returns a copy of o for the observer, which may keep it; nil without one.
func (t *Tracker) forObserver(o *Outcome) *Outcome {
	if t.opts.Observer == nil {
		return nil
	}
	c := *o
	return &c
}
