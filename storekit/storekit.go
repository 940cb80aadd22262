// Package storekit is for those who implement a store for a billing.Tracker, the way
// package database/sql/driver is for those who implement a database driver: the Store
// interface and the records it keeps, in types of their own with plain fields (strings,
// integers, times), the rules every store applies alike (MergeOutcome, ValidateClaim),
// the sentinels and bounds of its answers, and the optional interfaces a store may add
// to save the Tracker round trips. It imports nothing of package billing; billing
// converts its own values to these at the one place the Tracker calls its store.
//
// Merchants pass a store (billing.NewMemoryStore, pgstore.New) to
// billing.TrackerOptions.Store and never need the names here. Package storetest checks
// an implementation against the rules; NewMemoryStore is one built on them.
package storekit

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"
)

// ErrLeaseLost is matched (errors.Is) by the error of a Store call made under a claim
// the caller no longer holds: its lease ended and another owner took it, or the movement
// was settled meanwhile. A store wraps it; the Tracker then drops the work, which the
// claim's holder does.
var ErrLeaseLost = errors.New("billing: store lease lost")

// ErrForgotten is matched (errors.Is) by the error of Track for a key whose movement was
// settled, reported and forgotten after its retention (see Store.Purge). It is the error
// billing.ErrForgotten names.
var ErrForgotten = errors.New("billing: movement forgotten after its retention")

// ErrNotTracked is matched (errors.Is) by the error of a Store call about a movement the
// store does not track. It is the error billing.ErrNotTracked names.
var ErrNotTracked = errors.New("billing: movement not tracked")

// ErrStoreFull is matched (errors.Is) when a store bounded in memory (NewMemoryStore)
// holds as much as it may and nothing can be forgotten (all is pending or unreported).
// Nothing was recorded: the Tracker does not send the movement.
var ErrStoreFull = errors.New("billing: store full")

// MaxClaim, 1,000, is the most a single ClaimDue, ClaimUnreported or Callbacks
// returns, and the most each list of a Reconcile holds, whatever limit is asked, so
// that one call bounds its memory.
const MaxClaim = 1000

// MaxBodyBytes bounds a callback's raw body a store is given to keep: a Callback's, a
// Settle's and a Contradiction's. It is billing.MaxEventBytes.
const MaxBodyBytes = 1 << 20

// MaxClientReference bounds the client reference of a movement: no movement's is longer.
const MaxClientReference = 36

// MaxServiceReference bounds a movement's ServiceReference.
const MaxServiceReference = 64

// MaxTrackID bounds Movement.TrackID.
const MaxTrackID = 64

// MaxClaimedState bounds Contradiction.Claimed: longer than any state.
const MaxClaimedState = 32

// The kinds of money movement a store tracks (Movement.Kind), the values of billing's
// Kind constants.
const (
	KindReceive      = "receive"
	KindDirectDebit  = "direct_debit"
	KindSend         = "send"
	KindBankTransfer = "bank_transfer"
	KindMandate      = "mandate"
	KindCheckout     = "checkout"
)

// The callback shapes of the movements (MovementKey.Callback), the values of billing's
// EventKind constants: a callback does not say which of the kinds sharing its shape it
// reports, so a movement is keyed by its shape.
const (
	CallbackTransaction      = "transaction"       // KindReceive, KindDirectDebit
	CallbackPayout           = "payout"            // KindSend, KindBankTransfer
	CallbackMandate          = "mandate"           // KindMandate
	CallbackPaymentSucceeded = "payment.succeeded" // KindCheckout
)

// kindCallbacks maps each kind to the shape of its callbacks.
var kindCallbacks = map[string]string{
	KindReceive: CallbackTransaction, KindDirectDebit: CallbackTransaction,
	KindSend: CallbackPayout, KindBankTransfer: CallbackPayout,
	KindMandate: CallbackMandate, KindCheckout: CallbackPaymentSucceeded,
}

// Kinds returns every movement kind, sorted: a test of a store iterates them, so that a
// kind added later is covered at once.
func Kinds() []string { return slices.Sorted(maps.Keys(kindCallbacks)) }

// CallbackOf returns the callback shape of the movements of kind, and false for a kind
// no movement has.
func CallbackOf(kind string) (string, bool) {
	c, ok := kindCallbacks[kind]
	return c, ok
}

// isMovementCallback reports whether callback is the shape of some kind's callbacks.
func isMovementCallback(callback string) bool {
	for _, c := range kindCallbacks {
		if c == callback {
			return true
		}
	}
	return false
}

// The states of an outcome (Outcome.State), the values of billing's EventState
// constants. A store keeps only final ones; StatePending is what a Contradiction may
// claim.
const (
	StateSucceeded  = "succeeded"
	StateMismatched = "mismatched"
	StateFailed     = "failed"
	StateExpired    = "expired"
	StateUnknown    = "unknown"
	StatePending    = "pending"
)

// finalRank orders the final states: money moved outranks nothing moved, which outranks
// not knowing. Other states are not final (rank 0).
var finalRank = map[string]int{
	StateSucceeded: 3, StateMismatched: 3,
	StateFailed: 2, StateExpired: 2,
	StateUnknown: 1,
}

// IsFinal reports whether state is a final one: succeeded, mismatched, failed, expired
// or unknown.
func IsFinal(state string) bool { return finalRank[state] > 0 }

// Rank returns the rank of a final state in the precedence MergeOutcome applies: 3 when
// money moved (succeeded, mismatched), 2 when nothing moved (failed, expired), 1 for
// unknown, 0 for a state that is not final.
func Rank(state string) int { return finalRank[state] }

// Where an outcome came from (Outcome.Source), the values of billing's OutcomeSource
// constants.
const (
	SourceCallback    = "callback"
	SourceStatusCheck = "status_check"
	SourceRequest     = "request"
)

// ValidationError is the error of a Store call given a value it must refuse: Field
// names it, Rule says what it must be. The Tracker answers its caller with a
// *billing.ValidationError of the same field and rule.
type ValidationError struct {
	Field string
	Rule  string
}

func (e *ValidationError) Error() string {
	return fmt.Sprintf("billing: invalid %s: %s", e.Field, e.Rule)
}

func invalid(field, rule string) *ValidationError {
	return &ValidationError{Field: field, Rule: rule}
}

// Clock is the clock a Tracker's times come from: billing.Clock, which every value of
// that type satisfies.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

// CallbackEntryBeginner is implemented by a Store that reads, in the same round trip as
// BeginCallback, what it knows of the callback's movement (what Get returns for c.Key).
// The callback handler then learns the kind a reference is tracked as without a round
// trip of its own. It is optional: without it the handler calls Get.
type CallbackEntryBeginner interface {
	BeginCallbackEntry(ctx context.Context, c Callback, owner string, leaseUntil time.Time) (CallbackClaim, Entry, error)
}

// EntryTracker is implemented by a Store whose Track answers, in the same round trip,
// what the movement's key holds, and that can refuse a key already holding an outcome.
// The Tracker then tracks a movement without reading its key first. It is optional:
// without it the Tracker calls Get before Track.
type EntryTracker interface {
	// TrackEntry is Track, by Track's rules, answering the entry the key holds once it
	// returns, as Get would return it: with created true, the movement this call
	// tracked (with the outcome it adopted, when its callback came first); with created
	// false, the movement tracked before it, or the outcome settled before any Track as
	// another kind's, which it refused to adopt.
	TrackEntry(ctx context.Context, m Movement) (e Entry, created bool, err error)

	// TrackNew is TrackEntry for a movement whose request is sent next: it tracks m only
	// when its key holds neither a movement nor an outcome. An outcome there, whatever
	// its kind, is another movement's (this one has not been sent), and adopting it would
	// report it as this one's. When it tracks nothing it answers what the key holds, with
	// created false.
	TrackNew(ctx context.Context, m Movement) (e Entry, created bool, err error)
}

// ReportLeaseRenewer is implemented by a Store that can extend a claim of
// ClaimUnreported. A Tracker renews the claim while OnOutcome runs and while it records
// the report, so that no other instance reports the same outcome meanwhile. With a store
// that does not implement it, the Tracker claims outcomes for long enough to cover
// OnOutcomeTimeout and the report's recording instead.
type ReportLeaseRenewer interface {
	// RenewReport extends owner's claim on the unreported outcome id to leaseUntil.
	// ErrLeaseLost when owner no longer holds it (its lease ended and another owner
	// took it, or it was reported or replaced meanwhile).
	RenewReport(ctx context.Context, id, owner string, leaseUntil time.Time) error
}

// ContextHeeder is implemented by a Store that can say whether each of its calls
// returns by the end of its context, whatever the network or the database does: a call
// waiting on a connection, a lock or an answer gives up when its context ends. A Tracker
// makes the calls of a Store that answers true on the caller's goroutine, under the
// deadline it gives every store call (TrackerOptions.StoreTimeout). Otherwise it hands
// each call to a goroutine of its own, which it leaves behind at the deadline. A Store
// that embeds one implementing ContextHeeder gives that store's answer; its own methods
// must then heed their context too.
type ContextHeeder interface {
	HeedsContext() bool
}

// ClockUser is implemented by a Store that must know the clock its callers' times come
// from: pgstore compares leases and due times on the database's clock, which a manual
// clock does not follow. billing.NewTracker hands it the Tracker's Clock (nil when the
// Tracker keeps the wall clock, TrackerOptions.Clock nil), so that a test driving a
// Tracker with a manual clock works on the store with no option of the store's own. An
// error, a clock the store cannot follow (another clock than the one it follows
// already), makes NewTracker panic with it: a mismatch shows at start, never as
// movements that never fall due.
type ClockUser interface {
	UseClock(c Clock) error
}

// ContradictionRecorder is implemented by a Store that keeps a record of the callbacks
// the status check contradicted (Contradiction), so that Reconcile lists the movement
// (Reconciliation.Contradicted) though nothing was settled. The Tracker's handler
// records through it when it refuses a callback because the status check contradicted
// it, never when the status check could not be asked. It is optional: without it such a
// callback is only logged.
//
// The record is audit only. It settles nothing and is never reported; Release ignores
// it (a forged callback must not pin a movement whose request never left), and Release
// and Purge forget it with its movement.
type ContradictionRecorder interface {
	// RecordContradiction records c for the movement tracked under c.Key, and reports
	// whether it did: false, and no error, when nothing is tracked under the key (a
	// reference no one tracks is only logged, so that forged callbacks for made-up
	// references take no room). The first contradiction of a movement is kept, with its
	// claimed state and body; later ones count (Count) and move LastAt. c that does not
	// validate (Contradiction.Validate) is refused with its error.
	RecordContradiction(ctx context.Context, c Contradiction) (recorded bool, err error)
}
