package storekit

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// SourceOperator is the Source of an outcome an operator set (billing.Tracker.Resolve):
// the service could not say, and a person decided, with a reason kept in an AuditRecord.
// MergeOutcome never replaces it: a later callback or status check that disagrees is
// remembered (Disagreed) and recorded as a Contradiction, never reported a second time.
const SourceOperator = "operator"

// The actions an operator may take on a movement (AuditRecord.Action). None moves money
// or deletes a record a store keeps for audit.
const (
	ActionRecheck     = "recheck"
	ActionReportAgain = "report_again"
	ActionResolve     = "resolve"
	ActionRelease     = "release"
)

// IsAction reports whether a is one of the Action constants.
func IsAction(a string) bool {
	switch a {
	case ActionRecheck, ActionReportAgain, ActionResolve, ActionRelease:
		return true
	}
	return false
}

// Bounds of an AuditRecord's strings.
const (
	MaxActor  = 128
	MaxReason = 500
)

// MaxAudits, 100, is the most audit records Audits returns for one movement, the latest.
const MaxAudits = 100

// AuditRecord is what a store keeps of one operator action on a movement: who took it,
// why, when (the Tracker's Clock), and the movement's state before and after (a final
// state, StatePending, or "released"). It outlives the movement: Release and Purge do
// not forget it.
type AuditRecord struct {
	Key    MovementKey
	Action string
	Actor  string
	Reason string
	At     time.Time
	Before string
	After  string
	// OutcomeID is the Settlement.ID the action concerned, when there is one.
	OutcomeID string
}

// Validate returns a *ValidationError when a cannot be recorded.
func (a AuditRecord) Validate() error {
	if err := a.Key.Validate(); err != nil {
		return err
	}
	switch {
	case !IsAction(a.Action):
		return invalid("audit.action", fmt.Sprintf("unknown action %q", a.Action))
	case strings.TrimSpace(a.Actor) == "":
		return invalid("audit.actor", "is required")
	case len(a.Actor) > MaxActor:
		return invalid("audit.actor", fmt.Sprintf("must be at most %d bytes", MaxActor))
	case len(a.Reason) > MaxReason:
		return invalid("audit.reason", fmt.Sprintf("must be at most %d bytes", MaxReason))
	case a.At.IsZero():
		return invalid("audit.at", "is required")
	case len(a.Before) > MaxClaimedState || len(a.After) > MaxClaimedState:
		return invalid("audit.state", fmt.Sprintf("must be at most %d characters", MaxClaimedState))
	case len(a.OutcomeID) > 2*MaxClientReference+64:
		return invalid("audit.outcomeID", "is too long")
	}
	return nil
}

// OperatorStore is implemented by a Store that supports the operator's actions of
// billing.Tracker (Recheck, ReportAgain, Resolve, Release): it keeps an audit record of
// each, and offers the compare-and-set writes Resolve and ReportAgain need. It is
// optional: on a store without it the Tracker refuses every action
// (billing.ErrActionUnsupported), since an action no one can audit is not taken.
type OperatorStore interface {
	// RecordAudit keeps a. An a that does not validate is refused with its error.
	RecordAudit(ctx context.Context, a AuditRecord) error

	// Audits returns the audit records of key, oldest first, at most MaxAudits (the
	// latest).
	Audits(ctx context.Context, key MovementKey) ([]AuditRecord, error)

	// Resolve settles the tracked movement key with o (Source SourceOperator) only when
	// it has no final outcome yet: a compare-and-set that never overrides one. It keeps a
	// in the same step when it settles. It returns the settlement the key holds
	// afterwards and whether o became it. ErrNotTracked when key is not tracked.
	Resolve(ctx context.Context, key MovementKey, o Outcome, a AuditRecord) (Settlement, bool, error)

	// RequeueReport marks the reported outcome id unreported again, under the same id,
	// so that it is claimed by ClaimUnreported and reported once more, and keeps a in
	// the same step. It reports whether it did: false when id is not the current
	// outcome of a tracked movement or is not reported yet (it will be).
	RequeueReport(ctx context.Context, id string, a AuditRecord) (bool, error)
}

// The states a movement can be listed under (ListQuery.State, Summary).
const (
	ListPending      = "pending"      // tracked, no final outcome, before its deadline
	ListOverdue      = "overdue"      // tracked, no final outcome, past its deadline
	ListUnreported   = "unreported"   // settled, not yet reported to OnOutcome
	ListSettled      = "settled"      // settled (any final state); with Outcome to narrow
	ListContradicted = "contradicted" // a callback contradicted, or sources disagreed
	ListUntracked    = "untracked"    // confirmed by a status check, never tracked
	ListFailing      = "failing"      // settled, unreported, with failed report attempts
)

// IsListState reports whether s is one of the List constants, or empty.
func IsListState(s string) bool {
	switch s {
	case "", ListPending, ListOverdue, ListUnreported, ListSettled, ListContradicted, ListUntracked, ListFailing:
		return true
	}
	return false
}

// MaxList, 500, is the most a List page holds.
const MaxList = 500

// ListQuery selects movements for an operator's list. Zero fields select everything.
type ListQuery struct {
	// Kind is one of the Kind constants; State one of the List constants; Outcome a
	// final state (with State ListSettled or empty).
	Kind    string
	State   string
	Outcome string
	// Reference selects the movements whose client reference starts with it.
	Reference string
	// From and To bound when the movement started (or, untracked, was settled):
	// [From, To).
	From, To time.Time
	// After continues a list after the item of this cursor (ListItem.Cursor).
	After Cursor
	// Limit caps the page, at most MaxList (the default when zero).
	Limit int
	// Now is the time overdue is judged at.
	Now time.Time
}

// Cursor is the position of a listed item: the list is ordered latest started first,
// then by key. The zero Cursor is the start.
type Cursor struct {
	At              time.Time
	Callback        string
	ClientReference string
}

// IsZero reports whether c is the start of a list.
func (c Cursor) IsZero() bool { return c.At.IsZero() && c.ClientReference == "" }

// Before reports whether an item at c comes before one at d in a list.
func (c Cursor) Before(d Cursor) bool {
	if !c.At.Equal(d.At) {
		return c.At.After(d.At)
	}
	if c.Callback != d.Callback {
		return c.Callback < d.Callback
	}
	return c.ClientReference < d.ClientReference
}

// Validate returns a *ValidationError for a query a store must refuse.
func (q ListQuery) Validate() error {
	switch {
	case q.Kind != "" && kindCallbacks[q.Kind] == "":
		return invalid("kind", fmt.Sprintf("unknown kind %q", q.Kind))
	case !IsListState(q.State):
		return invalid("state", fmt.Sprintf("unknown state %q", q.State))
	case q.Outcome != "" && !IsFinal(q.Outcome):
		return invalid("outcome", fmt.Sprintf("%q is not a final state", q.Outcome))
	case len(q.Reference) > MaxClientReference:
		return invalid("reference", fmt.Sprintf("must be at most %d characters", MaxClientReference))
	case !q.From.IsZero() && !q.To.IsZero() && !q.From.Before(q.To):
		return invalid("to", "must be after from")
	case q.Limit < 0:
		return invalid("limit", "must not be negative")
	case q.Now.IsZero():
		return invalid("now", "is required")
	}
	for i := range len(q.Reference) {
		if !ReferenceByte(q.Reference[i]) {
			return invalid("reference", "must be letters, digits, hyphens and underscores only")
		}
	}
	return nil
}

// ListItem is one movement of a list: what Get returns of its key, and whether a
// contradiction was recorded for it.
type ListItem struct {
	Key          MovementKey
	Entry        Entry
	Contradicted bool
	// Cursor is the item's position, for ListQuery.After.
	Cursor Cursor
}

// State is the List state the item is shown under: the first of untracked,
// contradicted, overdue, pending, failing, unreported and settled that holds.
func (it ListItem) State(now time.Time) string {
	e := it.Entry
	switch {
	case !e.Tracked:
		return ListUntracked
	case it.Contradicted || (e.Final != nil && e.Final.Disagreed):
		return ListContradicted
	case e.Final == nil && e.Movement.Deadline.Before(now):
		return ListOverdue
	case e.Final == nil:
		return ListPending
	case e.Final.ReportedAt.IsZero() && e.Final.ReportAttempts > 0:
		return ListFailing
	case e.Final.ReportedAt.IsZero():
		return ListUnreported
	}
	return ListSettled
}

// Matches reports whether it is selected by q's state, outcome, kind and reference
// (not by time or cursor). A state selects every item it holds for, not only the one it
// is shown under: an overdue movement whose callback was contradicted is listed both as
// overdue and as contradicted.
func (q ListQuery) Matches(it ListItem) bool {
	e := it.Entry
	kind := e.Movement.Kind
	if !e.Tracked && e.Final != nil {
		kind = e.Final.Outcome.Kind
	}
	if q.Kind != "" && q.Kind != kind {
		return false
	}
	if q.Reference != "" && !strings.HasPrefix(it.Key.ClientReference, q.Reference) {
		return false
	}
	if q.Outcome != "" && (e.Final == nil || e.Final.Outcome.State != q.Outcome) {
		return false
	}
	switch q.State {
	case ListPending:
		return e.Tracked && e.Final == nil && !e.Movement.Deadline.Before(q.Now)
	case ListOverdue:
		return e.Tracked && e.Final == nil && e.Movement.Deadline.Before(q.Now)
	case ListUnreported:
		return e.Tracked && e.Final != nil && e.Final.ReportedAt.IsZero()
	case ListFailing:
		return e.Tracked && e.Final != nil && e.Final.ReportedAt.IsZero() && e.Final.ReportAttempts > 0
	case ListSettled:
		return e.Tracked && e.Final != nil
	case ListContradicted:
		return e.Tracked && (it.Contradicted || (e.Final != nil && e.Final.Disagreed))
	case ListUntracked:
		return !e.Tracked && e.Final != nil && e.Final.Outcome.Kind != ""
	}
	return e.Tracked || (e.Final != nil && e.Final.Outcome.Kind != "")
}

// Summary counts movements by the states an operator looks at first. A movement counts
// in every state that holds for it (see ListQuery.Matches); Settled counts by final
// state.
type Summary struct {
	Pending      int
	Overdue      int
	Unreported   int
	Failing      int
	Contradicted int
	Untracked    int
	Settled      map[string]int
	// OldestOverdue is when the earliest overdue movement started; zero when none is.
	OldestOverdue time.Time
}

// Inspector is implemented by a Store that lists what it holds for an operator's view
// (package opsview): pages of movements with filters, counts by state, and a movement's
// contradiction record. It is optional: without it the view shows the reconciliation
// only.
type Inspector interface {
	// List returns the movements q selects, latest started first, at most q.Limit (the
	// default MaxList), and whether more follow.
	List(ctx context.Context, q ListQuery) (items []ListItem, more bool, err error)

	// Summarize counts the movements by state at now.
	Summarize(ctx context.Context, now time.Time) (Summary, error)

	// Contradiction returns the contradiction recorded for key, nil when none is.
	Contradiction(ctx context.Context, key MovementKey) (*Contradiction, error)
}
