// Package storekit is for those who implement a billing.Store, the way package
// database/sql/driver is for those who implement a database driver: the rules every
// store applies alike, the sentinel and the bound of its answers, and the optional
// interfaces a store may add to save the Tracker round trips. Merchants never import it;
// they pass a store (billing.NewMemoryStore, pgstore.New) to billing.TrackerOptions.
//
// Package storetest checks an implementation against the rules.
package storekit

import (
	"context"
	"time"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/internal/storeabi"
)

// ErrLeaseLost is matched (errors.Is) by the error of a Store call made under a claim
// the caller no longer holds: its lease ended and another owner took it, or the movement
// was settled meanwhile. A store wraps it; the Tracker then drops the work, which the
// claim's holder does.
var ErrLeaseLost = storeabi.ErrLeaseLost

// MaxClaim, 1,000, is the most a single ClaimDue, ClaimUnreported or Callbacks
// returns, and the most each list of a Reconcile holds, whatever limit is asked, so
// that one call bounds its memory.
const MaxClaim = storeabi.MaxClaim

// merge is package billing's own merge, the one its in-memory store applies.
var merge = storeabi.MergeOutcome.(func(*billing.Settlement, billing.MovementKey, billing.Outcome, []byte) (billing.Settlement, bool, error))

// MergeOutcome applies the precedence rules of final outcomes: o, a final outcome for
// key, arrives where prev (nil when none) is stored. It returns the settlement to store
// next and whether o became its outcome. A Store's Settle stores what it returns.
//
// Final states are ranked: money moved (succeeded, mismatched) outranks nothing moved
// (failed, expired), which outranks not knowing (unknown). A state of higher rank
// replaces one of lower rank under a new ID, unreported, so it is reported again; at
// equal rank the first stands. One exception: a refusal of the movement's own request
// (Source SourceRequest) is never replaced, since the service refused the only request
// made under it, so a success reported later under that reference is another
// movement's (a reused reference). A final state from another source that differs sets
// Disagreed. o that is not final, has no source or no time is a *billing.ValidationError.
func MergeOutcome(prev *billing.Settlement, key billing.MovementKey, o billing.Outcome, body []byte) (billing.Settlement, bool, error) {
	return merge(prev, key, o, body)
}

// ValidateClaim returns a *billing.ValidationError for a claim a Store must refuse: an
// empty owner, a lease that ends at or before now, or a limit below one. It returns the
// limit capped at MaxClaim.
func ValidateClaim(owner string, now, leaseUntil time.Time, limit int) (int, error) {
	return storeabi.ValidateClaim(owner, now, leaseUntil, limit)
}

// ValidateOwner returns a *billing.ValidationError for an empty owner.
func ValidateOwner(owner string) error {
	return storeabi.ValidateOwner(owner)
}

// CallbackEntryBeginner is implemented by a Store that reads, in the same round trip as
// BeginCallback, what it knows of the callback's movement (what Get returns for c.Key).
// The callback handler then learns the kind a reference is tracked as without a round
// trip of its own. It is optional: without it the handler calls Get.
type CallbackEntryBeginner interface {
	BeginCallbackEntry(ctx context.Context, c billing.Callback, owner string, leaseUntil time.Time) (billing.CallbackClaim, billing.Entry, error)
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
	TrackEntry(ctx context.Context, m billing.Movement) (e billing.Entry, created bool, err error)

	// TrackNew is TrackEntry for a movement whose request is sent next: it tracks m only
	// when its key holds neither a movement nor an outcome. An outcome there, whatever
	// its kind, is another movement's (this one has not been sent), and adopting it would
	// report it as this one's. When it tracks nothing it answers what the key holds, with
	// created false.
	TrackNew(ctx context.Context, m billing.Movement) (e billing.Entry, created bool, err error)
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

// ClockUser is implemented by a Store that must know the clock its callers' times come
// from: pgstore compares leases and due times on the database's clock, which a manual
// clock does not follow. billing.NewTracker hands it the Tracker's Clock (nil when the
// Tracker keeps the wall clock, TrackerOptions.Clock nil), so that a test driving a
// Tracker with a manual clock works on the store with no option of the store's own. An
// error, a clock the store cannot follow (another clock than the one it follows
// already), makes NewTracker panic with it: a mismatch shows at start, never as
// movements that never fall due.
type ClockUser interface {
	UseClock(c billing.Clock) error
}

// ContradictionRecorder is implemented by a Store that keeps a record of the callbacks
// the status check contradicted (billing.Contradiction), so that Reconcile lists the
// movement (Reconciliation.Contradicted) though nothing was settled. The Tracker's
// handler records through it when it refuses a callback because the status check
// contradicted it, never when the status check could not be asked. It is optional:
// without it such a callback is only logged.
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
	// validate (billing.Contradiction.Validate) is refused with its error.
	RecordContradiction(ctx context.Context, c billing.Contradiction) (recorded bool, err error)
}
