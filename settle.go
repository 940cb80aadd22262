package billing

// The settle step of the inbound pipeline, and of Run and Await: a final outcome is
// recorded in the store under its rules of precedence, and read back as the Outcome
// merchant code sees.

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"time"
)

// settle records a final outcome in the store under its rules of precedence (see
// mergeOutcome) and wakes this process's Awaits of key. The store is given no Event:
// the outcome's event is derived from its fields whenever it is read back.
func (t *Tracker) settle(ctx context.Context, key movementKey, o Outcome, body []byte) (settlement, error) {
	o.Event = nil
	s, changed, err := t.store.Settle(ctx, key, o, body)
	if err != nil {
		return settlement{}, fmt.Errorf("billing: settling %s %q: %w", key.Callback, key.ClientReference, err)
	}
	t.operatorOverruled(ctx, key, o, s, changed, body)
	attrs := []slog.Attr{slog.String("clientReference", key.ClientReference), slog.String("source", string(o.Source)),
		slog.String("state", string(o.State)), slog.String("code", string(o.Code))}
	switch {
	case !changed && o.State != s.Outcome.State:
		t.opts.Logger.LogAttrs(ctx, slog.LevelWarn, "billing: a later "+string(o.State)+" does not replace the settled "+string(s.Outcome.State), attrs...)
	case changed && s.Disagreed:
		t.opts.Logger.LogAttrs(ctx, slog.LevelWarn, "billing: a later "+string(o.State)+" replaces an earlier final state", attrs...)
	}
	if changed && o.State == EventMismatched {
		t.opts.Logger.LogAttrs(ctx, slog.LevelWarn, "billing: the money moved, but not as asked",
			append(attrs, slog.Int64("amount", o.Amount), slog.String("currency", o.Currency))...)
	}
	if changed && t.own && t.opts.OnOutcome == nil {
		// Nobody to report to: reported, so that the store may forget it after Retention.
		if err := t.store.MarkReported(ctx, s.ID, o.At); err != nil {
			return settlement{}, err
		}
	}
	if changed && t.opts.Observer != nil { // the observer's copy, made for it alone
		t.observeSettled(ctx, *settledOutcome(&s, s.Outcome.Kind))
	}
	t.wake(key)
	t.purgeOwn(ctx)
	return s, nil
}

// settledOutcome is the Outcome an Await of kind returns for a settlement, its Event
// derived from its own fields: whatever a store kept or parsed, nothing of a callback
// reaches merchant code.
func settledOutcome(s *settlement, kind Kind) *Outcome {
	o := s.Outcome
	o.Kind, o.ClientReference, o.ID = cmp.Or(kind, o.Kind), s.Key.ClientReference, s.ID
	o.Event = derivedEvent(&o, s.Key.Callback)
	return &o
}

// settleConfirmed is Deliver's settle step: it settles the outcome conf confirmed, for
// the callback body given, and returns what the hand-out step gives the merchant's event
// function, with the words to log when there is none: nothing for a tracked movement
// (Await and OnOutcome report it); the confirmed event, unsettled, of a checkout session
// no Tracker tracks; and, for money no Tracker tracks, an *UntrackedMovementEvent of
// the outcome settled all the same (an Await of its reference finds it).
func (t *Tracker) settleConfirmed(ctx context.Context, conf confirmation, body []byte) (Event, string, error) {
	o := conf.outcome
	key, err := keyOf(o.Kind, o.ClientReference)
	if o.Kind == KindCheckout {
		// A checkout is tracked by CreateCheckout; a session no one tracks is the
		// merchant's own business, for its event handler.
		var e entry
		if err == nil {
			if e, err = t.store.Get(ctx, key); err != nil {
				return nil, "", fmt.Errorf("billing: reading the tracker's store: %w", err)
			}
		}
		if !e.Tracked {
			return conf.truth, "billing checkout webhook of a session no tracker tracks", nil
		}
		conf.tracking = trackingTracked
	}
	if err != nil {
		return nil, "", err
	}
	settled := *o
	settled.At = t.opts.Clock.Now()
	s, err := t.settle(ctx, key, settled, body)
	if err != nil {
		return nil, "", err
	}
	if conf.tracking == trackingUnread {
		e, err := t.store.Get(ctx, key)
		if err != nil {
			return nil, "", fmt.Errorf("billing: reading the tracker's store: %w", err)
		}
		conf.tracking = trackingOf(e)
	}
	if conf.tracking == trackingUntracked {
		// Money moved that nobody tracked: told as the confirmed fact it is, never
		// dropped.
		return &UntrackedMovementEvent{Untracked: true, Outcome: *settledOutcome(&s, s.Outcome.Kind)},
			"billing callback of a money movement no tracker tracks", nil
	}
	return nil, "", nil
}

// wake wakes the Awaits of key in this process.
func (t *Tracker) wake(key movementKey) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if w := t.watches[key]; w != nil {
		close(w.ch)
		w.ch = make(chan struct{})
	}
}

// purgeOwn forgets, from the Tracker's own in-memory store, outcomes reported longer
// than Retention ago, at most once a minute of the clock; Run purges a shared store.
func (t *Tracker) purgeOwn(ctx context.Context) {
	if t.own {
		t.purgeIfDue(ctx)
	}
}

// purgeIfDue purges the store of what is older than Retention, at most once a minute.
func (t *Tracker) purgeIfDue(ctx context.Context) {
	now := t.opts.Clock.Now()
	every := min(time.Minute, t.opts.Retention)
	t.mu.Lock()
	due := now.Sub(t.lastPurge) >= every
	if due {
		t.lastPurge = now
	}
	t.mu.Unlock()
	if !due {
		return
	}
	if _, err := t.store.Purge(ctx, now.Add(-t.opts.Retention)); err != nil {
		t.opts.Logger.LogAttrs(ctx, slog.LevelWarn, "billing tracker purge failed", slog.String("error", err.Error()))
	}
}
