package billing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// runBatch is how many movements, and how many outcomes, one round of Run claims.
const runBatch = 100

// Run resolves, until ctx ends, the movements of the Tracker's store that no callback
// resolved in time, on behalf of every instance sharing the store: call it on each
// instance (go tracker.Run(ctx)). Each round it claims movements whose callback is
// overdue, under a lease so that one instance checks each at a time and the claims of an
// instance that dies expire; asks their status checks (again with backoff while they say
// pending, without giving up: Reconcile lists those still pending); settles the final
// ones; and calls OnOutcome for each final outcome not yet reported, whichever instance
// learned it, until OnOutcome returns nil. It also forgets what is older than Retention.
//
// Store and status check errors are logged and tried again later; Run returns only when
// ctx ends, with an error matching ctx's (context.Canceled or DeadlineExceeded).
func (t *Tracker) Run(ctx context.Context) error {
	for {
		busy := t.runRound(ctx)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !busy {
			_ = t.sleepUntil(ctx, t.opts.Clock.Now().Add(t.opts.RunInterval), nil)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

// runRound does one round of Run and reports whether there may be more work at once (a
// claim came back full).
func (t *Tracker) runRound(ctx context.Context) bool {
	now := t.opts.Clock.Now()
	due, err := t.store.ClaimDue(ctx, t.opts.Owner, now, now.Add(t.opts.Lease), runBatch)
	if err != nil && ctx.Err() == nil {
		t.opts.Logger.LogAttrs(ctx, slog.LevelWarn, "billing tracker: claiming overdue movements failed", slog.String("error", err.Error()))
	}
	t.each(len(due), func(i int) { t.check(ctx, due[i]) })

	var unreported []Settlement
	if t.opts.OnOutcome != nil && ctx.Err() == nil {
		now = t.opts.Clock.Now()
		unreported, err = t.store.ClaimUnreported(ctx, t.opts.Owner, now, now.Add(t.opts.Lease), runBatch)
		if err != nil && ctx.Err() == nil {
			t.opts.Logger.LogAttrs(ctx, slog.LevelWarn, "billing tracker: claiming unreported outcomes failed", slog.String("error", err.Error()))
		}
		t.each(len(unreported), func(i int) { t.report(ctx, unreported[i]) })
	}
	if ctx.Err() == nil {
		t.purgeIfDue(ctx)
	}
	return len(due) == runBatch || len(unreported) == runBatch
}

// each calls fn(0..n-1), RunConcurrency at a time, and waits for all.
func (t *Tracker) each(n int, fn func(i int)) {
	sem := make(chan struct{}, t.opts.RunConcurrency)
	var wg sync.WaitGroup
	for i := range n {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			fn(i)
		}()
	}
	wg.Wait()
}

// check asks the status check of a claimed movement and settles it or reschedules it.
// A checkout still unpaid CheckoutExpiry after its creation settles expired; one the
// service never showed to exist by then settles unknown.
func (t *Tracker) check(ctx context.Context, m Movement) {
	key := m.Key()
	attrs := []slog.Attr{slog.String("kind", string(m.Kind)), slog.String("clientReference", m.ClientReference)}
	stop := t.holdClaim(ctx, key)
	o, err := movementStatus(ctx, t.client, m)
	t.observeStatusCheck(ctx, m.Kind, m.ClientReference, o, err)
	stop()
	// Store writes go on once ctx ends, so that the claim is not left to expire.
	wctx := context.WithoutCancel(ctx)
	now := t.opts.Clock.Now()
	if final := t.checkoutGivenUp(m, o, err, now); final != nil && ctx.Err() == nil {
		o, err = final, nil
	}
	switch {
	case err == nil && o.IsFinal():
		o.At = now
		if _, err := t.settle(wctx, key, *o, nil); err != nil {
			t.opts.Logger.LogAttrs(ctx, slog.LevelWarn, "billing tracker: settling failed", append(attrs, slog.String("error", err.Error()))...)
		}
		return
	case ctx.Err() != nil:
		if err := t.store.ReleaseClaim(wctx, key, t.opts.Owner); err != nil && !errors.Is(err, ErrLeaseLost) {
			t.opts.Logger.LogAttrs(wctx, slog.LevelWarn, "billing tracker: releasing a claim failed", append(attrs, slog.String("error", err.Error()))...)
		}
		return
	case err != nil && !worthPollingAgain(err):
		t.opts.Logger.LogAttrs(ctx, slog.LevelError, "billing status check refused; asking again later", append(attrs, slog.String("error", err.Error()))...)
	case err != nil:
		t.opts.Logger.LogAttrs(ctx, slog.LevelWarn, "billing status check failed; asking again later", append(attrs, slog.String("error", err.Error()))...)
	}
	next := now.Add(jitter(t.backoff(m.Checks)))
	if err := t.store.Reschedule(wctx, key, t.opts.Owner, next); err != nil && !errors.Is(err, ErrLeaseLost) {
		t.opts.Logger.LogAttrs(ctx, slog.LevelWarn, "billing tracker: rescheduling failed", append(attrs, slog.String("error", err.Error()))...)
	}
}

// backoff is the pause after the attempts-th failed try: PollInterval doubling, up to
// MaxPollInterval.
func (t *Tracker) backoff(attempts int) time.Duration {
	d := t.opts.PollInterval
	for range attempts {
		if d >= t.opts.MaxPollInterval {
			break
		}
		d *= 2
	}
	return min(d, t.opts.MaxPollInterval)
}

// holdClaim renews the claim on key every third of a lease, on the Clock, until the
// returned function is called, so that a slow status check keeps its movement.
func (t *Tracker) holdClaim(ctx context.Context, key MovementKey) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.opts.Clock.After(t.opts.Lease / 3):
			}
			if err := t.store.RenewClaim(ctx, key, t.opts.Owner, t.opts.Clock.Now().Add(t.opts.Lease)); err != nil {
				return // lost: the settle or reschedule that follows says so
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// report calls OnOutcome for a claimed settlement and records the result.
func (t *Tracker) report(ctx context.Context, s Settlement) {
	o := settledOutcome(&s, s.Outcome.Kind)
	err := t.callOnOutcome(ctx, o)
	wctx := context.WithoutCancel(ctx)
	now := t.opts.Clock.Now()
	if err == nil {
		if err := t.store.MarkReported(wctx, s.ID, now); err != nil {
			t.opts.Logger.LogAttrs(ctx, slog.LevelWarn, "billing tracker: recording a report failed; it will be made again",
				slog.String("id", s.ID), slog.String("error", err.Error()))
		}
		return
	}
	next := now.Add(jitter(t.backoff(s.ReportAttempts)))
	if ctx.Err() != nil {
		next = now // stopping: let another instance take it at once
	} else {
		t.opts.Logger.LogAttrs(ctx, slog.LevelWarn, "billing OnOutcome failed; it will be called again",
			slog.String("id", s.ID), slog.Int("attempts", s.ReportAttempts+1), slog.String("error", err.Error()))
	}
	if err := t.store.RetryReport(wctx, s.ID, t.opts.Owner, next); err != nil && !errors.Is(err, ErrLeaseLost) {
		t.opts.Logger.LogAttrs(ctx, slog.LevelWarn, "billing tracker: recording a failed report failed", slog.String("id", s.ID), slog.String("error", err.Error()))
	}
}

// callOnOutcome calls OnOutcome, turning a panic into an error.
func (t *Tracker) callOnOutcome(ctx context.Context, o *Outcome) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("billing: OnOutcome panicked: %v", p)
		}
	}()
	return t.opts.OnOutcome(ctx, o)
}

// Reconcile reports the tracked movements started in [from, to): those still unsettled
// past their callback deadline, those whose callback and status check disagreed (a
// forged or stale callback, or a late reversal: look at them), and those settled by a
// status check alone (no callback came: check the callback URL).
func (t *Tracker) Reconcile(ctx context.Context, from, to time.Time) (Reconciliation, error) {
	return t.store.Reconcile(ctx, from, to, t.opts.Clock.Now())
}
