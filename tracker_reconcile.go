package billing

import (
	"context"
	"iter"
	"time"
)

// Reconcile reports the tracked movements started in [from, to): those still unsettled
// past their callback deadline, those whose callback and status check disagreed (a
// forged or stale callback, or a late reversal: look at them), and those settled by a
// status check alone (no callback came: check the callback URL), and, with a store that
// records them (storekit.ContradictionRecorder: the memory store and pgstore do), those
// for which a callback was refused because the status check contradicted it
// (Contradicted: a forged or stale claim, which settled nothing), and the money no one
// tracked that a status check confirmed, settled in the window (Untracked: a flow started
// by another system, by the billing command or by hand; look at it first). Each list holds at
// most 1,000 entries (storekit.MaxClaim), the earliest started first, so that memory
// stays bounded whatever the window; Truncated says more were left out. ReconcilePages
// walks a window of any size.
func (t *Tracker) Reconcile(ctx context.Context, from, to time.Time) (Reconciliation, error) {
	if ctx == nil {
		return Reconciliation{}, errNilContext()
	}
	return t.store.Reconcile(ctx, from, to, t.opts.Clock.Now())
}

// minReconcileWindow is the narrowest window ReconcilePages splits: a database keeps
// times to the microsecond, so a narrower one holds the same movements.
const minReconcileWindow = time.Microsecond

// ReconcilePages reconciles [from, to) page by page, in order of start: each page is a
// Reconcile of a part of the window narrow enough that none of its lists was cut, so
// that the whole window is reported, whatever its size, with one page in memory at a
// time. A part is halved while its lists are cut; a page is Truncated only when more
// than 1,000 movements of one of its lists started within the same microsecond. Every
// page is reconciled at the time the walk began. The walk stops at the first error,
// which it yields.
func (t *Tracker) ReconcilePages(ctx context.Context, from, to time.Time) iter.Seq2[Reconciliation, error] {
	return func(yield func(Reconciliation, error) bool) {
		if ctx == nil {
			yield(Reconciliation{}, errNilContext())
			return
		}
		now := t.opts.Clock.Now()
		type window struct{ from, to time.Time }
		// The windows still to walk, the earliest last: a depth-first walk holds at most
		// one pending half per halving.
		todo := []window{{from, to}}
		for len(todo) > 0 {
			w := todo[len(todo)-1]
			todo = todo[:len(todo)-1]
			if !w.from.Before(w.to) {
				continue
			}
			r, err := t.store.Reconcile(ctx, w.from, w.to, now)
			if err != nil {
				yield(Reconciliation{}, err)
				return
			}
			if span := w.to.Sub(w.from); r.Truncated && span > minReconcileWindow {
				mid := w.from.Add(span / 2).Truncate(minReconcileWindow)
				if !mid.After(w.from) {
					mid = w.from.Add(minReconcileWindow)
				}
				todo = append(todo, window{mid, w.to}, window{w.from, mid})
				continue
			}
			if !yield(r, nil) {
				return
			}
		}
	}
}
