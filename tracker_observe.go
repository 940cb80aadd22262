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
	// Tracker (transaction, payout and mandate callbacks and checkout webhooks, in any
	// state), before the Tracker acts on it.
	CallbackReceived(ctx context.Context, ev Event)
	// StatusChecked is told of each status check the Tracker asked: its outcome (Source
	// SourceStatusCheck, possibly still pending), or the error it ended with.
	StatusChecked(ctx context.Context, kind Kind, clientReference string, o *Outcome, err error)
	// OutcomeSettled is told of each final outcome the Tracker records, once per
	// movement, and once more if a later state of higher rank replaces it (see
	// storekit.MergeOutcome). o.Source says whether the callback or the status check settled it;
	// o.Kind is empty when a callback settled a movement no Await or Track had named yet.
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

// Stats returns how many tracked movements the Tracker's store holds without a final
// outcome, and the age of the oldest by the Tracker's clock. With a store shared by
// several instances it counts every instance's movements, so watch one of them for a
// gauge. The in-memory store answers from memory; a database store with one query.
func (t *Tracker) Stats(ctx context.Context) (TrackerStats, error) {
	if ctx == nil {
		return TrackerStats{}, errNilContext()
	}
	count, oldest, err := t.store.Pending(ctx)
	if err != nil {
		return TrackerStats{}, err
	}
	s := TrackerStats{Pending: count}
	if count > 0 && !oldest.IsZero() {
		s.OldestPendingAge = max(0, t.opts.Clock.Now().Sub(oldest))
	}
	return s, nil
}

// observeStatusCheck tells the observer of a status check asked.
func (t *Tracker) observeStatusCheck(ctx context.Context, kind Kind, clientReference string, o *Outcome, err error) {
	if t.opts.Observer != nil {
		t.opts.Observer.StatusChecked(ctx, kind, clientReference, o, err)
	}
}

// observeSettled tells the observer of an outcome settled; o is the observer's copy.
func (t *Tracker) observeSettled(ctx context.Context, o Outcome) {
	if t.opts.Observer != nil {
		t.opts.Observer.OutcomeSettled(ctx, &o)
	}
}
