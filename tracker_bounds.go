package billing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/billingsdk/billing-go/storekit"
)

// Defaults of TrackerOptions for the deadlines of store and OnOutcome calls.
const (
	DefaultStoreTimeout     = 10 * time.Second
	DefaultOnOutcomeTimeout = time.Minute
)

// stopGrace is how long Run, once its context has ended, still waits for an OnOutcome
// call it cancelled. With the default StoreTimeout for the one store write that follows,
// Run returns within 15 seconds of its context ending.
const stopGrace = 3 * time.Second

// maxAbandonedCalls bounds the store calls still running past their deadline (a driver
// that does not heed its context): beyond it, calls fail at once instead of piling up
// goroutines on a store that answers nothing.
const maxAbandonedCalls = 64

// ErrStoreTimeout is matched (errors.Is) by the error of a Tracker's store call that got
// no answer within TrackerOptions.StoreTimeout: the network to a shared store may be
// down or a connection dead. Whether the call took effect is unknown; the Tracker's own
// calls are safe to make again. The error matches context.DeadlineExceeded too.
var ErrStoreTimeout = errors.New("billing: store call timed out")

// deadlineFunc derives from ctx a context that ends d from now: context.WithTimeout,
// or in tests a fake clock's.
type deadlineFunc func(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc)

// boundedStore gives every call of the Store it wraps a deadline of its own, so that no
// call of the Tracker, including the writes it makes after its caller's context ended,
// waits on the network for longer than timeout. A call that outlives its deadline is
// left to finish on its own (its context is cancelled) and the caller gets an error
// matching ErrStoreTimeout, with a warning naming the call. A store that heeds its
// context (storekit.ContextHeeder) is called on the caller's goroutine instead, since it
// returns at the deadline itself. It embeds Store so that a method added to the
// interface later still compiles, unbounded until listed here.
type boundedStore struct {
	storekit.Store
	timeout   time.Duration
	logger    *slog.Logger
	deadline  deadlineFunc
	abandoned atomic.Int64
	heeds     bool // the store returns by its context's end: calls run on the caller's goroutine
}

// boundStore returns s with every call bounded by o.StoreTimeout; nil for nil. A store
// already bounded (another Tracker's Store) is bounded by o's settings instead.
func boundStore(s storekit.Store, o TrackerOptions) storekit.Store {
	if s == nil {
		return nil
	}
	if b, ok := s.(*boundedStore); ok {
		s = b.Store
	}
	h, ok := s.(storekit.ContextHeeder)
	return &boundedStore{Store: s, timeout: o.StoreTimeout, logger: o.Logger, deadline: o.deadline, heeds: ok && h.HeedsContext()}
}

// unbounded returns the store a boundedStore wraps, or s.
func unbounded(s storekit.Store) storekit.Store {
	if b, ok := s.(*boundedStore); ok {
		return b.Store
	}
	return s
}

// bounded runs fn under the store's deadline and returns at the latest when it ends.
func bounded[T any](b *boundedStore, ctx context.Context, name string, fn func(context.Context) (T, error)) (T, error) {
	var zero T
	if n := b.abandoned.Load(); n >= maxAbandonedCalls {
		return zero, fmt.Errorf("%w: %s not tried: %d earlier calls are still unanswered past their deadline", ErrStoreTimeout, name, n)
	}
	cctx, cancel := b.deadline(ctx, b.timeout)
	defer cancel()
	answer := func(v T, err error) (T, error) {
		if err != nil && ctx.Err() == nil && cctx.Err() != nil {
			return v, b.timedOut(ctx, name, err)
		}
		return v, err
	}
	if b.heeds {
		return answer(heeded(b, cctx, name, fn))
	}
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	pool.Go(func() {
		defer func() {
			if p := recover(); p != nil {
				done <- result{err: recovered(b.logger, "the store's "+name, p)}
			}
		}()
		v, err := fn(cctx)
		done <- result{v, err}
	})
	select {
	case r := <-done:
		return answer(r.v, r.err)
	case <-cctx.Done():
	}
	select {
	case r := <-done: // answered as the deadline came
		return answer(r.v, r.err)
	default:
	}
	b.abandoned.Add(1)
	go func() {
		<-done
		b.abandoned.Add(-1)
	}()
	if err := ctx.Err(); err != nil {
		return zero, fmt.Errorf("billing: store %s: %w", name, err) // the caller gave up, not the bound
	}
	return zero, b.timedOut(ctx, name, nil)
}

// heeded makes the call fn of a store that heeds its context on this goroutine; a panic
// in it is an error, as on a goroutine of its own.
func heeded[T any](b *boundedStore, ctx context.Context, name string, fn func(context.Context) (T, error)) (v T, err error) {
	defer func() {
		if p := recover(); p != nil {
			var zero T
			v, err = zero, recovered(b.logger, "the store's "+name, p)
		}
	}()
	return fn(ctx)
}

// timedOut logs that the call name hit the bound and returns its error.
func (b *boundedStore) timedOut(ctx context.Context, name string, err error) error {
	b.logger.LogAttrs(ctx, slog.LevelWarn, "billing tracker: a store call got no answer within its deadline",
		slog.String("call", name), slog.Duration("timeout", b.timeout))
	if err != nil {
		return fmt.Errorf("%w: %s not answered within %s: %w: %w", ErrStoreTimeout, name, b.timeout, context.DeadlineExceeded, err)
	}
	return fmt.Errorf("%w: %s not answered within %s: %w", ErrStoreTimeout, name, b.timeout, context.DeadlineExceeded)
}

// none adapts a call that returns only an error.
func none(fn func(context.Context) error) func(context.Context) (struct{}, error) {
	return func(ctx context.Context) (struct{}, error) { return struct{}{}, fn(ctx) }
}

type trackResult struct {
	m       storekit.Movement
	created bool
}

func (b *boundedStore) Track(ctx context.Context, m storekit.Movement) (storekit.Movement, bool, error) {
	r, err := bounded(b, ctx, "Track", func(ctx context.Context) (trackResult, error) {
		m, created, err := b.Store.Track(ctx, m)
		return trackResult{m, created}, err
	})
	return r.m, r.created, err
}

func (b *boundedStore) Get(ctx context.Context, key storekit.MovementKey) (storekit.Entry, error) {
	return bounded(b, ctx, "Get", func(ctx context.Context) (storekit.Entry, error) { return b.Store.Get(ctx, key) })
}

type settleResult struct {
	s       storekit.Settlement
	changed bool
}

func (b *boundedStore) Settle(ctx context.Context, key storekit.MovementKey, o storekit.Outcome, body []byte) (storekit.Settlement, bool, error) {
	r, err := bounded(b, ctx, "Settle", func(ctx context.Context) (settleResult, error) {
		s, changed, err := b.Store.Settle(ctx, key, o, body)
		return settleResult{s, changed}, err
	})
	return r.s, r.changed, err
}

func (b *boundedStore) BeginCallback(ctx context.Context, c storekit.Callback, owner string, leaseUntil time.Time) (storekit.CallbackClaim, error) {
	return bounded(b, ctx, "BeginCallback", func(ctx context.Context) (storekit.CallbackClaim, error) {
		return b.Store.BeginCallback(ctx, c, owner, leaseUntil)
	})
}

func (b *boundedStore) FinishCallback(ctx context.Context, dedupeKey, owner string, handled bool, now time.Time) error {
	_, err := bounded(b, ctx, "FinishCallback", none(func(ctx context.Context) error {
		return b.Store.FinishCallback(ctx, dedupeKey, owner, handled, now)
	}))
	return err
}

func (b *boundedStore) Callbacks(ctx context.Context, key storekit.MovementKey) ([]storekit.Callback, error) {
	return bounded(b, ctx, "Callbacks", func(ctx context.Context) ([]storekit.Callback, error) { return b.Store.Callbacks(ctx, key) })
}

func (b *boundedStore) ClaimDue(ctx context.Context, owner string, now, leaseUntil time.Time, limit int) ([]storekit.Movement, error) {
	return bounded(b, ctx, "ClaimDue", func(ctx context.Context) ([]storekit.Movement, error) {
		return b.Store.ClaimDue(ctx, owner, now, leaseUntil, limit)
	})
}

func (b *boundedStore) RenewClaim(ctx context.Context, key storekit.MovementKey, owner string, leaseUntil time.Time) error {
	_, err := bounded(b, ctx, "RenewClaim", none(func(ctx context.Context) error {
		return b.Store.RenewClaim(ctx, key, owner, leaseUntil)
	}))
	return err
}

func (b *boundedStore) Reschedule(ctx context.Context, key storekit.MovementKey, owner string, next time.Time) error {
	_, err := bounded(b, ctx, "Reschedule", none(func(ctx context.Context) error {
		return b.Store.Reschedule(ctx, key, owner, next)
	}))
	return err
}

func (b *boundedStore) ReleaseClaim(ctx context.Context, key storekit.MovementKey, owner string) error {
	_, err := bounded(b, ctx, "ReleaseClaim", none(func(ctx context.Context) error {
		return b.Store.ReleaseClaim(ctx, key, owner)
	}))
	return err
}

func (b *boundedStore) ClaimUnreported(ctx context.Context, owner string, now, leaseUntil time.Time, limit int) ([]storekit.Settlement, error) {
	return bounded(b, ctx, "ClaimUnreported", func(ctx context.Context) ([]storekit.Settlement, error) {
		return b.Store.ClaimUnreported(ctx, owner, now, leaseUntil, limit)
	})
}

func (b *boundedStore) MarkReported(ctx context.Context, id string, now time.Time) error {
	_, err := bounded(b, ctx, "MarkReported", none(func(ctx context.Context) error {
		return b.Store.MarkReported(ctx, id, now)
	}))
	return err
}

func (b *boundedStore) RetryReport(ctx context.Context, id, owner string, at time.Time) error {
	_, err := bounded(b, ctx, "RetryReport", none(func(ctx context.Context) error {
		return b.Store.RetryReport(ctx, id, owner, at)
	}))
	return err
}

type pendingResult struct {
	count  int
	oldest time.Time
}

func (b *boundedStore) Pending(ctx context.Context) (int, time.Time, error) {
	r, err := bounded(b, ctx, "Pending", func(ctx context.Context) (pendingResult, error) {
		n, oldest, err := b.Store.Pending(ctx)
		return pendingResult{n, oldest}, err
	})
	return r.count, r.oldest, err
}

func (b *boundedStore) Reconcile(ctx context.Context, from, to, now time.Time) (storekit.Reconciliation, error) {
	return bounded(b, ctx, "Reconcile", func(ctx context.Context) (storekit.Reconciliation, error) {
		return b.Store.Reconcile(ctx, from, to, now)
	})
}

func (b *boundedStore) Purge(ctx context.Context, before time.Time) (int, error) {
	return bounded(b, ctx, "Purge", func(ctx context.Context) (int, error) { return b.Store.Purge(ctx, before) })
}

func (b *boundedStore) Release(ctx context.Context, key storekit.MovementKey, startedAt time.Time) (bool, error) {
	return bounded(b, ctx, "Release", func(ctx context.Context) (bool, error) { return b.Store.Release(ctx, key, startedAt) })
}

func (b *boundedStore) RecordReference(ctx context.Context, key storekit.MovementKey, serviceReference string) (storekit.Movement, error) {
	return bounded(b, ctx, "RecordReference", func(ctx context.Context) (storekit.Movement, error) {
		return b.Store.RecordReference(ctx, key, serviceReference)
	})
}

// boundedAs calls fn under s's deadline when s is a boundedStore, and as it is
// otherwise: the optional interfaces a Store may add are called through it.
func boundedAs[T any](s storekit.Store, ctx context.Context, name string, fn func(context.Context) (T, error)) (T, error) {
	if b, ok := s.(*boundedStore); ok {
		return bounded(b, ctx, name, fn)
	}
	return fn(ctx)
}

// renewReport is s's RenewReport, bounded as s's other calls are; nil when s has none.
func renewReport(s storekit.Store) func(ctx context.Context, id, owner string, leaseUntil time.Time) error {
	r, ok := unbounded(s).(storekit.ReportLeaseRenewer)
	if !ok {
		return nil
	}
	return func(ctx context.Context, id, owner string, leaseUntil time.Time) error {
		_, err := boundedAs(s, ctx, "RenewReport", none(func(ctx context.Context) error {
			return r.RenewReport(ctx, id, owner, leaseUntil)
		}))
		return err
	}
}

// trackEntry is s's TrackNew when fresh, else its TrackEntry, bounded as s's other calls
// are; nil when s has neither (storekit.EntryTracker).
func trackEntry(s storekit.Store, fresh bool) func(ctx context.Context, m storekit.Movement) (storekit.Entry, bool, error) {
	t, ok := unbounded(s).(storekit.EntryTracker)
	if !ok {
		return nil
	}
	call, name := t.TrackEntry, "TrackEntry"
	if fresh {
		call, name = t.TrackNew, "TrackNew"
	}
	type result struct {
		e       storekit.Entry
		created bool
	}
	return func(ctx context.Context, m storekit.Movement) (storekit.Entry, bool, error) {
		r, err := boundedAs(s, ctx, name, func(ctx context.Context) (result, error) {
			e, created, err := call(ctx, m)
			return result{e, created}, err
		})
		return r.e, r.created, err
	}
}

// beginCallbackEntry is s's BeginCallbackEntry, bounded as s's other calls are; nil when
// s has none (storekit.CallbackEntryBeginner).
func beginCallbackEntry(s storekit.Store) func(ctx context.Context, c storekit.Callback, owner string, leaseUntil time.Time) (storekit.CallbackClaim, storekit.Entry, error) {
	cb, ok := unbounded(s).(storekit.CallbackEntryBeginner)
	if !ok {
		return nil
	}
	type result struct {
		claim storekit.CallbackClaim
		e     storekit.Entry
	}
	return func(ctx context.Context, c storekit.Callback, owner string, leaseUntil time.Time) (storekit.CallbackClaim, storekit.Entry, error) {
		r, err := boundedAs(s, ctx, "BeginCallbackEntry", func(ctx context.Context) (result, error) {
			claim, e, err := cb.BeginCallbackEntry(ctx, c, owner, leaseUntil)
			return result{claim, e}, err
		})
		return r.claim, r.e, err
	}
}

// recordContradiction is s's RecordContradiction, bounded as s's other calls are; nil
// when s has none (storekit.ContradictionRecorder).
func recordContradiction(s storekit.Store) func(ctx context.Context, c storekit.Contradiction) (bool, error) {
	r, ok := unbounded(s).(storekit.ContradictionRecorder)
	if !ok {
		return nil
	}
	return func(ctx context.Context, c storekit.Contradiction) (bool, error) {
		return boundedAs(s, ctx, "RecordContradiction", func(ctx context.Context) (bool, error) {
			return r.RecordContradiction(ctx, c)
		})
	}
}
