package storekit

import (
	"fmt"
	"strings"
	"time"
)

// MovementKey names a movement the way both its request and its callbacks can: a
// callback does not say which of the movements sharing its shape it reports (receive or
// direct debit, send or bank transfer), so the key is the callback's shape and the
// client reference. Movement.Key gives it.
type MovementKey struct {
	// Callback is CallbackTransaction, CallbackPayout, CallbackMandate or
	// CallbackPaymentSucceeded for a movement; any event kind in a Callback kept for
	// audit.
	Callback        string
	ClientReference string
}

// Validate returns a *ValidationError when k names no movement.
func (k MovementKey) Validate() error {
	if !isMovementCallback(k.Callback) {
		return invalid("key.callback", fmt.Sprintf("%q is not the callback of a money movement", k.Callback))
	}
	return ValidateReference("key.clientReference", k.ClientReference, MaxClientReference)
}

// ValidateReference returns a *ValidationError naming field for a reference no movement
// has: empty, longer than max (MaxClientReference for a client reference,
// MaxServiceReference for the service's), or other than letters, digits, '-' and '_'.
func ValidateReference(field, v string, max int) error {
	switch {
	case v == "":
		return invalid(field, "is required")
	case len(v) > max:
		return invalid(field, fmt.Sprintf("must be at most %d characters", max))
	}
	for i := range len(v) {
		if !ReferenceByte(v[i]) {
			return invalid(field, "must be letters, digits, hyphens and underscores only")
		}
	}
	return nil
}

// ReferenceByte reports whether c may appear in a movement's client or service
// reference: an ASCII letter or digit, '-' or '_'.
func ReferenceByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_'
}

// Movement is a money movement a Store tracks.
type Movement struct {
	// Kind is one of the Kind constants.
	Kind            string
	ClientReference string
	// Amount and Currency are what the merchant asked to move, in minor units; zero and
	// empty when not given. A success whose status check names another amount or
	// currency is settled as mismatched.
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
	// one, at most MaxTrackID characters. A Track made again with the same TrackID after
	// its answer was lost is answered as that call (see Store.Track). Empty when none was
	// given.
	TrackID string
}

// Key returns the movement's key; the zero key for an unknown kind.
func (m Movement) Key() MovementKey {
	callback, ok := CallbackOf(m.Kind)
	if !ok {
		return MovementKey{}
	}
	return MovementKey{Callback: callback, ClientReference: m.ClientReference}
}

// Validate returns a *ValidationError when m cannot be tracked: an unknown kind, an
// empty or overlong reference, no start, or a deadline before the start.
func (m Movement) Validate() error {
	if _, ok := CallbackOf(m.Kind); !ok {
		return invalid("kind", fmt.Sprintf("unknown kind %q", m.Kind))
	}
	if err := ValidateReference("clientReference", m.ClientReference, MaxClientReference); err != nil {
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
	case len(m.ServiceReference) > MaxServiceReference:
		return invalid("serviceReference", fmt.Sprintf("must be at most %d characters", MaxServiceReference))
	case len(m.TrackID) > MaxTrackID:
		return invalid("trackID", fmt.Sprintf("must be at most %d characters", MaxTrackID))
	}
	return nil
}

// Outcome is a final outcome as a Store keeps it: billing.Outcome's fields, as plain
// values. A store keeps every field as given.
type Outcome struct {
	// Kind is the kind of the movement: the tracked movement's, or while untracked the
	// kind a status check confirmed it as (empty when none did).
	Kind            string
	ClientReference string
	// State is a final state: StateSucceeded, StateMismatched, StateFailed,
	// StateExpired or StateUnknown.
	State string
	// Code is the status check's response code; TransactionID and
	// ExternalTransactionID the service's and the network's ids of the transaction.
	Code                  string
	TransactionID         string
	ExternalTransactionID string
	// Amount and Charges are in minor units; Currency names Amount's currency.
	Amount   int64
	Charges  int64
	Currency string
	// ServiceReference is the service's own reference of the movement, when it has one.
	ServiceReference string
	// Source is SourceCallback, SourceStatusCheck or SourceRequest.
	Source string
	// At is when the Tracker learned the outcome.
	At time.Time
}

// Settlement is a final outcome as a Store keeps it.
type Settlement struct {
	// ID names this final outcome, the same in every report of it: the Tracker gives it
	// to OnOutcome (billing.Outcome.ID) for the merchant's dedupe. It changes only when a
	// state of higher rank replaces it, which is a new outcome to report.
	ID string
	// Key is the movement's key.
	Key MovementKey
	// Outcome is the final outcome. Its Kind is the tracked movement's; while untracked,
	// the kind it was settled as (empty when unknown).
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

// Entry is what a Store knows of one key.
type Entry struct {
	// Tracked says whether Track recorded the movement; Movement is zero otherwise.
	Tracked  bool
	Movement Movement
	// Final is the settled final outcome, nil while there is none.
	Final *Settlement
	// Forgotten says that a movement tracked under the key was settled, reported and
	// then forgotten (see Store.Purge): its outcome was told already, so the key is
	// never tracked again. A callback settled since is held as untracked (Final).
	Forgotten bool
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
	// Body is the raw body, at most MaxBodyBytes.
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
	case len(c.Body) > MaxBodyBytes:
		return invalid("callback.body", fmt.Sprintf("must be at most %d bytes", MaxBodyBytes))
	}
	return nil
}

// Reconciliation is Store.Reconcile's report, and billing.Tracker.Reconcile's.
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
	// (ContradictionRecorder) lists any.
	Contradicted []Contradiction
	// Untracked are the outcomes of money movements no one tracked, settled in the
	// window (by Outcome.At) once a status check confirmed them as their kind
	// (Outcome.Kind): a flow started by another system, by the billing command or by
	// hand. Money nobody expected is the first thing to look at. Earliest first.
	Untracked []Settlement
	// Truncated says that a list held MaxClaim (1,000) entries, the earliest started,
	// and more were left out: reconcile a narrower window to see them.
	Truncated bool
}

// Cap cuts each list of r to MaxClaim entries, setting Truncated when it cut one, for a
// store that reads one entry more than it keeps to learn whether more were left out.
func (r *Reconciliation) Cap() {
	if len(r.Overdue) > MaxClaim {
		r.Overdue, r.Truncated = r.Overdue[:MaxClaim], true
	}
	if len(r.Disagreed) > MaxClaim {
		r.Disagreed, r.Truncated = r.Disagreed[:MaxClaim], true
	}
	if len(r.StatusCheckOnly) > MaxClaim {
		r.StatusCheckOnly, r.Truncated = r.StatusCheckOnly[:MaxClaim], true
	}
	if len(r.Contradicted) > MaxClaim {
		r.Contradicted, r.Truncated = r.Contradicted[:MaxClaim], true
	}
	if len(r.Untracked) > MaxClaim {
		r.Untracked, r.Truncated = r.Untracked[:MaxClaim], true
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
	Claimed string
	// Body is the raw body of the first contradicted callback, at most MaxBodyBytes,
	// kept for audit; nil when none was given, or when a store bounded in memory had no
	// room for it.
	Body []byte
	// At is when the first contradicted callback came, LastAt when the last did, and
	// Count how many came.
	At     time.Time
	LastAt time.Time
	Count  int
}

// Validate returns a *ValidationError when c cannot be recorded: a key that names no
// movement, a claim of no state, no time, or a body larger than MaxBodyBytes.
func (c Contradiction) Validate() error {
	if err := c.Key.Validate(); err != nil {
		return err
	}
	switch {
	case c.Claimed == "":
		return invalid("contradiction.claimed", "is required")
	case len(c.Claimed) > MaxClaimedState:
		return invalid("contradiction.claimed", fmt.Sprintf("must be at most %d characters", MaxClaimedState))
	case c.At.IsZero():
		return invalid("contradiction.at", "is required")
	case len(c.Body) > MaxBodyBytes:
		return invalid("contradiction.body", fmt.Sprintf("must be at most %d bytes", MaxBodyBytes))
	}
	return nil
}

// firstError returns the first of errs that is not nil.
func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// required refuses an empty or blank value.
func required(field, v string) error {
	if strings.TrimSpace(v) == "" {
		return invalid(field, "is required")
	}
	return nil
}
