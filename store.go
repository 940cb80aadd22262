package billing

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/billingsdk/billing-go/internal/storeabi"
)

// Package storekit, for Store implementers, runs these rules (it imports this package,
// which cannot import it).
func init() {
	storeabi.MergeOutcome = mergeOutcome
	storeabi.ValidateClaim = validateClaim
	storeabi.ValidateOwner = validateOwner
}

// Store is where a Tracker keeps the money movements it resolves, their final outcomes
// and the callbacks delivered for them. TrackerOptions.Store nil is a store in the
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
	// the rules of storekit.MergeOutcome: the first final outcome stands, except that a higher
	// rank replaces it (money moved over nothing moved over unknown), and a callback and
	// a status check that disagree are remembered. body is the raw callback when o came
	// from one (kept for audit), nil otherwise. The Tracker derives Outcome.Event from
	// the outcome's fields when it reads a settlement back, so a store need not keep it. A key
	// never tracked is remembered too: a callback may come before Track. Its outcome keeps
	// o.Kind (the kind a status check confirmed it as, empty when none did) until Track
	// makes it the movement's; Track's refusal reads it. It returns the settlement now
	// stored and whether o became its outcome. Settling ends any claim on the movement.
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
	// next delivery is handled. storekit.ErrLeaseLost when owner no longer holds it.
	FinishCallback(ctx context.Context, dedupeKey, owner string, handled bool, now time.Time) error

	// Callbacks returns the callbacks kept for key, first received first, at most
	// storekit.MaxClaim of them: the audit of what was delivered for a movement.
	Callbacks(ctx context.Context, key MovementKey) ([]Callback, error)

	// ClaimDue claims up to limit tracked movements still unsettled whose next check is
	// due at now and that no live lease holds, for owner until leaseUntil. Each is
	// claimed by one owner at a time; a claim whose lease ended may be taken by another.
	ClaimDue(ctx context.Context, owner string, now, leaseUntil time.Time, limit int) ([]Movement, error)

	// RenewClaim extends owner's claim on key to leaseUntil. storekit.ErrLeaseLost when owner no
	// longer holds it (another owner took it after the lease ended, or it was settled).
	RenewClaim(ctx context.Context, key MovementKey, owner string, leaseUntil time.Time) error

	// Reschedule records that a status check left key pending: one more check is
	// counted, the next is due at next, and owner's claim is released. storekit.ErrLeaseLost
	// when owner no longer holds the claim.
	Reschedule(ctx context.Context, key MovementKey, owner string, next time.Time) error

	// ReleaseClaim gives back owner's claim on key without a check (the next check time
	// is unchanged), so another owner may take it at once. storekit.ErrLeaseLost when owner no
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
	// counted and it may be claimed again from at. storekit.ErrLeaseLost when owner no longer
	// holds it.
	RetryReport(ctx context.Context, id, owner string, at time.Time) error

	// Pending counts the tracked movements without a final outcome and returns when the
	// oldest of them started (the zero time when there is none), for gauges.
	Pending(ctx context.Context) (count int, oldestStart time.Time, err error)

	// Reconcile reports the tracked movements started in [from, to): those still
	// unsettled past their callback deadline at now, those whose callback and status
	// check disagreed, and those settled by a status check with no callback. Each list
	// holds at most storekit.MaxClaim (1,000) entries, the earliest started first (then by reference), so
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

// callbackEntryBeginner is storekit.CallbackEntryBeginner: a Store that reads, with
// BeginCallback, what it knows of the callback's movement.
type callbackEntryBeginner interface {
	BeginCallbackEntry(ctx context.Context, c Callback, owner string, leaseUntil time.Time) (CallbackClaim, Entry, error)
}

// clockUser is storekit.ClockUser: a Store that NewTracker hands the Tracker's Clock.
type clockUser interface {
	UseClock(c Clock) error
}

// entryTracker is storekit.EntryTracker: a Store that answers, with Track, what the
// movement's key holds, and can refuse a key holding an outcome.
type entryTracker interface {
	TrackEntry(ctx context.Context, m Movement) (Entry, bool, error)
	TrackNew(ctx context.Context, m Movement) (Entry, bool, error)
}

// errLeaseLost is storekit.ErrLeaseLost: a Store call made under a claim the caller no
// longer holds. The caller drops the work; the claim's holder does it.
var errLeaseLost = storeabi.ErrLeaseLost

// ErrForgotten is matched (errors.Is) by the error of Await, Track, TrackAmount and the
// Tracker's send helpers for a movement its store forgot: it was settled, its outcome
// reported to OnOutcome, and kept TrackerOptions.Retention before it was forgotten. Its
// outcome is not asked or reported again; nothing is recorded. A reference names one
// movement: send a new movement under a new one.
var ErrForgotten = errors.New("billing: movement forgotten after its retention")

// ErrNotTracked is matched (errors.Is) by the error of a Store call about a movement
// the store does not track, and by the error of Tracker.Await for a reference never
// tracked: Track adopts a movement sent outside the Tracker before it is awaited.
var ErrNotTracked = errors.New("billing: movement not tracked")

// ErrStoreFull is matched (errors.Is) when the in-memory store holds as many movements
// as it may and none can be forgotten (all are pending or unreported). Nothing was
// recorded: do not send the movement; retry later.
var ErrStoreFull = errors.New("billing: store full")

// maxClaim is storekit.MaxClaim: the most one ClaimDue, ClaimUnreported, Callbacks or
// Reconcile list holds.
const maxClaim = storeabi.MaxClaim

// MovementKey names a movement the way both its request and its callbacks can: a
// callback does not say which of the movements sharing its shape it reports (receive or
// direct debit, send or bank transfer), so the key is the callback's kind and the
// client reference. Movement.Key gives it.
type MovementKey struct {
	// Callback is EventKindTransaction, EventKindPayout, EventKindMandate or
	// EventKindPaymentSucceeded (a checkout) for a movement; any event kind in a Callback
	// kept for audit.
	Callback        EventKind
	ClientReference string
}

// KeyOf returns the key of the movement of kind and clientReference, or a
// *ValidationError for an unknown kind or a reference no movement can have (empty,
// longer than 36 characters, or other than letters, digits, '-' and '_').
func KeyOf(kind Kind, clientReference string) (MovementKey, error) {
	callback, ok := kind.callbackKind()
	if !ok {
		return MovementKey{}, invalid("kind", fmt.Sprintf("unknown kind %q: use KindReceive, KindSend, KindBankTransfer, KindDirectDebit, KindMandate or KindCheckout", kind))
	}
	// No movement has a longer reference or other characters; refusing them keeps what
	// a store holds for each small.
	if err := lookupReference("clientReference", clientReference, maxClientReference); err != nil {
		return MovementKey{}, err
	}
	return MovementKey{Callback: callback, ClientReference: clientReference}, nil
}

// EventKey returns the key of the movement a callback reports.
func EventKey(ev Event) MovementKey {
	if nilEvent(ev) {
		return MovementKey{} // names no movement: Validate refuses it
	}
	return MovementKey{Callback: ev.Kind(), ClientReference: ev.Reference()}
}

// Validate returns a *ValidationError when k names no movement.
func (k MovementKey) Validate() error {
	if !k.Callback.isMovementCallback() {
		return invalid("key.callback", fmt.Sprintf("%q is not the callback of a money movement", k.Callback))
	}
	return required("key.clientReference", k.ClientReference)
}

// Movement is a money movement a Store tracks.
type Movement struct {
	Kind            Kind
	ClientReference string
	// Amount and Currency are what the merchant asked to move, in minor units; zero and
	// empty when not given (Track). A success whose status check names another amount
	// or currency is EventMismatched.
	Amount   int64
	Currency string
	// ServiceReference is the service's own reference of the movement, once its request
	// was accepted (a checkout session's payment reference; see RecordReference).
	ServiceReference string
	// StartedAt is when it was tracked, just before its request was sent.
	StartedAt time.Time
	// Deadline is when its callback is overdue: from then on its status check is asked.
	Deadline time.Time
	// NextCheckAt is when its status check is next due: Deadline at first, later what
	// Reschedule set. Track ignores it.
	NextCheckAt time.Time
	// Checks counts the status checks that left it pending (Reschedule).
	Checks int
	// LeaseOwner holds a claim on it until LeaseUntil; empty when unclaimed.
	LeaseOwner string
	LeaseUntil time.Time
	// TrackID names the Track call that recorded it: the Tracker gives each call a random
	// one, at most 64 characters. A Track made again with the same TrackID after its
	// answer was lost is answered as that call (see Store.Track). Empty when none was
	// given.
	TrackID string
}

// Key returns the movement's key; the zero key for an unknown kind.
func (m Movement) Key() MovementKey {
	k, _ := KeyOf(m.Kind, m.ClientReference)
	return k
}

// Validate returns a *ValidationError when m cannot be tracked: an unknown kind, an
// empty reference, no start, or a deadline before the start.
func (m Movement) Validate() error {
	if _, err := KeyOf(m.Kind, m.ClientReference); err != nil {
		return err
	}
	switch {
	case m.StartedAt.IsZero():
		return invalid("startedAt", "is required")
	case m.Deadline.Before(m.StartedAt):
		return invalid("deadline", "must not be before startedAt")
	case m.Amount < 0:
		return invalid("amount", "must not be negative")
	case len(m.Currency) > 3:
		return invalid("currency", "must be an ISO 4217 code")
	case len(m.ServiceReference) > maxServiceReference:
		return invalid("serviceReference", fmt.Sprintf("must be at most %d characters", maxServiceReference))
	case len(m.TrackID) > maxTrackID:
		return invalid("trackID", fmt.Sprintf("must be at most %d characters", maxTrackID))
	}
	return nil
}

// maxTrackID bounds Movement.TrackID.
const maxTrackID = 64

// Entry is what a Store knows of one key.
type Entry struct {
	// Tracked says whether Track recorded the movement; Movement is zero otherwise.
	Tracked  bool
	Movement Movement
	// Final is the settled final outcome, nil while there is none.
	Final *Settlement
	// Forgotten says that a movement tracked under the key was settled, reported and
	// then forgotten (see Purge): its outcome was told already, so the key is never
	// tracked again. A callback settled since is held as untracked (Final).
	Forgotten bool
}

// Settlement is a final outcome as a Store keeps it.
type Settlement struct {
	// ID names this final outcome, the same in every report of it: give OnOutcome's
	// dedupe this. It changes only when a state of higher rank replaces it, which is a new
	// outcome to report.
	ID string
	// Key is the movement's key.
	Key MovementKey
	// Outcome is the final outcome. Its Kind is the tracked movement's; while untracked,
	// the kind it was settled as (empty when unknown). Its Event is not a store's to keep: the Tracker derives it from the
	// outcome's fields.
	Outcome Outcome
	// Body is the raw callback that prompted the outcome (Source SourceCallback), nil
	// otherwise: an unconfirmed claim, kept for audit only.
	Body []byte
	// ByCallback and ByStatusCheck say which sources reported a final state; Disagreed
	// that they reported different ones.
	ByCallback    bool
	ByStatusCheck bool
	Disagreed     bool
	// ReportedAt is when OnOutcome accepted it; zero until then. ReportAttempts counts
	// the failed attempts.
	ReportedAt     time.Time
	ReportAttempts int
}

// mergeOutcome is storekit.MergeOutcome, whose doc gives the rules: o, a final
// outcome for key, arrives where prev (nil when none) is stored.
func mergeOutcome(prev *Settlement, key MovementKey, o Outcome, body []byte) (Settlement, bool, error) {
	if err := validateSettle(key, o, body); err != nil {
		return Settlement{}, false, err
	}
	o.ClientReference = key.ClientReference
	if o.Source != SourceCallback {
		body = nil
	}
	if prev == nil {
		s := Settlement{ID: outcomeID(key, o.State), Key: key, Outcome: o, Body: body}
		s.noteSource(o.Source)
		return s, true, nil
	}
	s := *prev
	s.noteSource(o.Source)
	if o.State != s.Outcome.State && o.Source != s.Outcome.Source {
		s.Disagreed = true
	}
	if finalRank[o.State] > finalRank[s.Outcome.State] && s.Outcome.Source != SourceRequest {
		kind := s.Outcome.Kind
		s.ID, s.Outcome, s.Body = outcomeID(key, o.State), o, body
		if s.Outcome.Kind == "" {
			s.Outcome.Kind = kind
		}
		s.ReportedAt, s.ReportAttempts = time.Time{}, 0
		return s, true, nil
	}
	return s, false, nil
}

func (s *Settlement) noteSource(src OutcomeSource) {
	switch src {
	case SourceCallback:
		s.ByCallback = true
	case SourceStatusCheck:
		s.ByStatusCheck = true
	}
}

// outcomeID is stable for a movement's final state, so that two instances settling the
// same outcome give it the same name.
func outcomeID(key MovementKey, state EventState) string {
	return string(key.Callback) + "/" + string(state) + "/" + key.ClientReference
}

func validateSettle(key MovementKey, o Outcome, body []byte) error {
	if err := key.Validate(); err != nil {
		return err
	}
	switch {
	case o.ClientReference != "" && o.ClientReference != key.ClientReference:
		return invalid("outcome.clientReference", "must be the key's client reference")
	case !o.IsFinal():
		return invalid("outcome.state", "must be final: succeeded, failed, mismatched, expired or unknown")
	case o.Source != SourceCallback && o.Source != SourceStatusCheck && o.Source != SourceRequest:
		return invalid("outcome.source", "must be callback, status_check or request")
	case o.At.IsZero():
		return invalid("outcome.at", "is required")
	case len(body) > MaxEventBytes:
		return invalid("body", fmt.Sprintf("must be at most %d bytes", MaxEventBytes))
	}
	return nil
}

// CallbackClaim is BeginCallback's answer.
type CallbackClaim string

// BeginCallback's answers.
const (
	// CallbackClaimed: handle the callback, then FinishCallback.
	CallbackClaimed CallbackClaim = "claimed"
	// CallbackInFlight: another delivery is being handled; answer "retry later".
	CallbackInFlight CallbackClaim = "in_flight"
	// CallbackHandled: merchant code already handled it; answer "done".
	CallbackHandled CallbackClaim = "handled"
)

// Callback is a delivered callback kept for audit and dedupe.
type Callback struct {
	// Key is the movement (or, for a webhook that is no movement's, the event kind and
	// reference) it concerns.
	Key MovementKey
	// DedupeKey names the callback for dedupe: two deliveries with the same key are the
	// same callback (the webhook handler uses kind, reference, state and code).
	DedupeKey string
	// Body is the raw body, at most MaxEventBytes.
	Body []byte
	// At is when it was delivered: the first delivery of this body when read back.
	At time.Time
	// LastAt and Deliveries, when read back: the last delivery of this body and how
	// many there were.
	LastAt     time.Time
	Deliveries int
}

// Validate returns a *ValidationError when c cannot be recorded.
func (c Callback) Validate() error {
	switch {
	case c.Key.Callback == "":
		return invalid("callback.key.callback", "is required")
	case strings.TrimSpace(c.Key.ClientReference) == "":
		return invalid("callback.key.clientReference", "is required")
	case c.DedupeKey == "":
		return invalid("callback.dedupeKey", "is required")
	case c.At.IsZero():
		return invalid("callback.at", "is required")
	case len(c.Body) > MaxEventBytes:
		return invalid("callback.body", fmt.Sprintf("must be at most %d bytes", MaxEventBytes))
	}
	return nil
}

// Reconciliation is Store.Reconcile's report.
type Reconciliation struct {
	// Overdue are movements still unsettled past their callback deadline.
	Overdue []Movement
	// Disagreed are settlements whose callback and status check reported different final
	// states.
	Disagreed []Settlement
	// StatusCheckOnly are settlements no callback reported: the callback never came.
	StatusCheckOnly []Settlement
	// Contradicted are the records of movements, still pending or settled without
	// Disagreed, for which a callback was refused because the status check contradicted
	// it (a forged or stale claim: see Contradiction). A movement settled with Disagreed
	// is listed there instead. Only a store that records contradictions
	// (storekit.ContradictionRecorder) lists any.
	Contradicted []Contradiction
	// Truncated says that a list held storekit.MaxClaim (1,000) entries, the earliest started, and more
	// were left out: reconcile a narrower window to see them.
	Truncated bool
}

// capReconciliation cuts each list of r to maxClaim entries, setting Truncated when it
// cut one, for Store implementations that read one entry more than they keep.
func capReconciliation(r *Reconciliation) {
	if len(r.Overdue) > maxClaim {
		r.Overdue, r.Truncated = r.Overdue[:maxClaim], true
	}
	if len(r.Disagreed) > maxClaim {
		r.Disagreed, r.Truncated = r.Disagreed[:maxClaim], true
	}
	if len(r.StatusCheckOnly) > maxClaim {
		r.StatusCheckOnly, r.Truncated = r.StatusCheckOnly[:maxClaim], true
	}
	if len(r.Contradicted) > maxClaim {
		r.Contradicted, r.Truncated = r.Contradicted[:maxClaim], true
	}
}

// Contradiction is the record a Store keeps of the callbacks of one tracked movement
// that its status check contradicted: a callback claiming a final state (success or
// failure) the status check denied, or for a reference no status check knows. It is
// audit only: it settles nothing, is never reported to OnOutcome nor given to merchant
// code, and does not keep Release from releasing the movement (a forged callback for a
// movement whose request never left must not pin it). Reconcile lists it
// (Reconciliation.Contradicted). It goes with the movement: Release and Purge forget it.
type Contradiction struct {
	// Key is the movement's key.
	Key MovementKey
	// Claimed is the state the first contradicted callback claimed: usually a final one,
	// though a pending notice whose amount or transaction id the status check denies is
	// contradicted too.
	Claimed EventState
	// Body is the raw body of the first contradicted callback, at most MaxEventBytes, kept
	// for audit; nil when none was given, or when a store bounded in memory had no room
	// for it.
	Body []byte
	// At is when the first contradicted callback came, LastAt when the last did, and
	// Count how many came.
	At     time.Time
	LastAt time.Time
	Count  int
}

// Validate returns a *ValidationError when c cannot be recorded: a key that names no
// movement, a claim of no final state, no time, or a body larger than MaxEventBytes.
func (c Contradiction) Validate() error {
	if err := c.Key.Validate(); err != nil {
		return err
	}
	switch {
	case c.Claimed == "":
		return invalid("contradiction.claimed", "is required")
	case len(c.Claimed) > maxClaimedState:
		return invalid("contradiction.claimed", fmt.Sprintf("must be at most %d characters", maxClaimedState))
	case c.At.IsZero():
		return invalid("contradiction.at", "is required")
	case len(c.Body) > MaxEventBytes:
		return invalid("contradiction.body", fmt.Sprintf("must be at most %d bytes", MaxEventBytes))
	}
	return nil
}

// maxClaimedState bounds Contradiction.Claimed: longer than any EventState.
const maxClaimedState = 32

// contradictionRecorder is storekit.ContradictionRecorder: a Store that keeps the
// callbacks the status check contradicted, for Reconcile.
type contradictionRecorder interface {
	RecordContradiction(ctx context.Context, c Contradiction) (bool, error)
}

// validateClaim is storekit.ValidateClaim.
func validateClaim(owner string, now, leaseUntil time.Time, limit int) (int, error) {
	switch {
	case strings.TrimSpace(owner) == "":
		return 0, invalid("owner", "is required")
	case now.IsZero():
		return 0, invalid("now", "is required")
	case !leaseUntil.After(now):
		return 0, invalid("leaseUntil", "must be after now")
	case limit < 1:
		return 0, invalid("limit", "must be at least 1")
	}
	return min(limit, maxClaim), nil
}

// validateOwner is storekit.ValidateOwner.
func validateOwner(owner string) error {
	if strings.TrimSpace(owner) == "" {
		return invalid("owner", "is required")
	}
	return nil
}

// settledAsOther reports whether final, settled for a key before any Track, is the
// outcome of a movement of another kind than kind: its status check confirmed it as
// that kind, so a movement of kind tracked under the key now is another movement.
func settledAsOther(final *Settlement, kind Kind) bool {
	return final != nil && final.Outcome.Kind != "" && final.Outcome.Kind != kind
}

// handClock gives s, when it takes one (storekit.ClockUser), the Tracker's Clock c (nil
// for the wall clock), and panics with its error: a store that cannot follow the
// Tracker's clock would never find a movement due.
func handClock(s Store, c Clock) {
	u, ok := unbounded(s).(clockUser)
	if !ok {
		return
	}
	if err := u.UseClock(c); err != nil {
		panic(fmt.Errorf("billing: NewTracker: %w", err))
	}
}
