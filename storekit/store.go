package storekit

import (
	"context"
	"time"
)

// Store is where a Tracker keeps the money movements it resolves, their final outcomes
// and the callbacks delivered for them. billing.TrackerOptions.Store nil is a store in the
// process's memory; package github.com/billingsdk/billing-go/pgstore keeps them in
// PostgreSQL, shared by every instance of a server and kept across restarts.
//
// A Store never reads a clock: every time it needs (now, a lease's end, the next check)
// is given by the caller, from the Tracker's Clock, so a manual clock drives it in tests.
// Owners are the callers' names for themselves (one per Tracker instance); a lease held
// by an owner keeps others from claiming the same thing until it ends, so the claims of
// an instance that died free themselves.
//
// Implementations are safe for concurrent use, by many goroutines and, for a shared
// store, by many processes. Package storetest checks an implementation against these
// rules.
type Store interface {
	// Track records a movement as started, before its request is sent, so that a crash
	// after sending can never forget it. It is idempotent: tracking a movement already
	// tracked (by its key) changes nothing and returns the movement as stored, with
	// created false. created is true when this call tracked it, including a movement
	// whose callback came first (see Settle): it keeps the outcome it already has. An
	// outcome settled before Track as another kind's (a movement sent outside the
	// Tracker under the same reference and callback shape) is not the movement's own:
	// Track then tracks nothing and returns the zero Movement with created false. A key
	// forgotten after its retention (see Purge) is not tracked again: the error matches
	// ErrForgotten, also for a Track that waited for the Purge forgetting it.
	//
	// A Track made again with the TrackID of the call that tracked the movement, for the
	// same kind (its answer was lost: the caller never learnt that it tracked the
	// movement, so it sent nothing) is answered as that call would have been, created
	// true and the movement as stored. An empty TrackID names no call.
	Track(ctx context.Context, m Movement) (stored Movement, created bool, err error)

	// Get returns what the store knows of key: the movement if it was tracked and its
	// final outcome if one was settled, and whether a movement tracked under it was
	// forgotten (see Purge). An unknown key is the zero Entry and no error.
	Get(ctx context.Context, key MovementKey) (Entry, error)

	// Settle records the final outcome o (a final State, At set) of the movement key, by
	// the rules of MergeOutcome: the first final outcome stands, except that a higher
	// rank replaces it (money moved over nothing moved over unknown), and a callback and
	// a status check that disagree are remembered. body is the raw callback when o came
	// from one (kept for audit), nil otherwise. A key never tracked is remembered too: a
	// callback may come before Track. Its outcome keeps o.Kind (the kind a status check
	// confirmed it as, empty when none did) until Track makes it the movement's; Track's
	// refusal reads it. It returns the settlement now stored and whether o became its
	// outcome. Settling ends any claim on the movement.
	Settle(ctx context.Context, key MovementKey, o Outcome, body []byte) (Settlement, bool, error)

	// BeginCallback records a delivered callback (its raw body is kept for audit, each
	// distinct body once) and claims its handling for owner until leaseUntil. It
	// answers CallbackClaimed when the caller must handle it, CallbackInFlight when
	// another delivery of it is being handled under a lease that has not ended (answer
	// "retry later"), and CallbackHandled when merchant code already handled it. c.At is
	// now.
	BeginCallback(ctx context.Context, c Callback, owner string, leaseUntil time.Time) (CallbackClaim, error)

	// FinishCallback ends owner's handling of the callback dedupeKey: handled true marks
	// it done for good; false (the merchant code failed or panicked) forgets it, so the
	// next delivery is handled. ErrLeaseLost when owner no longer holds it.
	FinishCallback(ctx context.Context, dedupeKey, owner string, handled bool, now time.Time) error

	// Callbacks returns the callbacks kept for key, first received first, at most
	// MaxClaim of them: the audit of what was delivered for a movement.
	Callbacks(ctx context.Context, key MovementKey) ([]Callback, error)

	// ClaimDue claims up to limit tracked movements still unsettled whose next check is
	// due at now and that no live lease holds, for owner until leaseUntil. Each is
	// claimed by one owner at a time; a claim whose lease ended may be taken by another.
	ClaimDue(ctx context.Context, owner string, now, leaseUntil time.Time, limit int) ([]Movement, error)

	// RenewClaim extends owner's claim on key to leaseUntil. ErrLeaseLost when owner no
	// longer holds it (another owner took it after the lease ended, or it was settled).
	RenewClaim(ctx context.Context, key MovementKey, owner string, leaseUntil time.Time) error

	// Reschedule records that a status check left key pending: one more check is
	// counted, the next is due at next, and owner's claim is released. ErrLeaseLost
	// when owner no longer holds the claim.
	Reschedule(ctx context.Context, key MovementKey, owner string, next time.Time) error

	// ReleaseClaim gives back owner's claim on key without a check (the next check time
	// is unchanged), so another owner may take it at once. ErrLeaseLost when owner no
	// longer holds it.
	ReleaseClaim(ctx context.Context, key MovementKey, owner string) error

	// ClaimUnreported claims up to limit settled outcomes of tracked movements not yet
	// reported to OnOutcome, and not held by a live lease or waiting out a retry, for
	// owner until leaseUntil. A crash before MarkReported means they are claimed again
	// once the lease ends (at least once).
	ClaimUnreported(ctx context.Context, owner string, now, leaseUntil time.Time, limit int) ([]Settlement, error)

	// MarkReported records that the outcome with the given Settlement.ID was reported.
	// An id no longer current (a success replaced the failure it named) changes
	// nothing, so the success is still reported.
	MarkReported(ctx context.Context, id string, now time.Time) error

	// RetryReport records that reporting the outcome id failed: one more attempt is
	// counted and it may be claimed again from at. ErrLeaseLost when owner no longer
	// holds it.
	RetryReport(ctx context.Context, id, owner string, at time.Time) error

	// Pending counts the tracked movements without a final outcome and returns when the
	// oldest of them started (the zero time when there is none), for gauges.
	Pending(ctx context.Context) (count int, oldestStart time.Time, err error)

	// Reconcile reports the tracked movements started in [from, to): those still
	// unsettled past their callback deadline at now, those whose callback and status
	// check disagreed, and those settled by a status check with no callback; and the
	// outcomes of movements never tracked that a status check confirmed, settled in the
	// window (Untracked: a store written before the field may leave it empty). Each list
	// holds at most MaxClaim (1,000) entries, the earliest started first (then by reference), so
	// that one call bounds its memory; Truncated says more were left out.
	Reconcile(ctx context.Context, from, to, now time.Time) (Reconciliation, error)

	// Release forgets the tracked movement key whose request surely never left (it was
	// invalid, or its context ended before any byte was written), so it is neither
	// pending nor overdue and its reference may be tracked again. It releases only a
	// movement started at startedAt (the one the caller tracked) that has no final
	// outcome and no callback kept for it, and reports whether it did.
	Release(ctx context.Context, key MovementKey, startedAt time.Time) (bool, error)

	// RecordReference records the service's own reference of the tracked movement key
	// (a checkout session's payment reference) once its request was accepted, for its
	// status check. A reference already recorded is kept; it returns the movement as
	// stored. ErrNotTracked when key is not tracked.
	RecordReference(ctx context.Context, key MovementKey, serviceReference string) (Movement, error)

	// Purge forgets settlements made before before, once reported (or never tracked),
	// with their movements and callbacks, and callback dedupe records finished, or
	// whose lease ended, before before. Unsettled and unreported movements are kept. It
	// keeps a tombstone of each tracked movement it forgets, so that Get says Forgotten
	// and Track refuses the key (ErrForgotten): a later Await must not ask and report
	// the outcome a second time. It returns how many movements it forgot. A Tracker
	// calls it with now minus Retention.
	Purge(ctx context.Context, before time.Time) (int, error)
}
