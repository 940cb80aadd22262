package billing

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/billingsdk/billing-go/storekit"
)

// A Tracker keeps its movements, their final outcomes and the callbacks delivered for
// them in a storekit.Store: TrackerOptions.Store, or NewMemoryStore's when it is nil.
// The store speaks plain values (package storekit is its implementer's vocabulary); the
// Tracker works in its own typed records below, and storeGate converts between the two
// at the one place every store call passes.

// NewMemoryStore returns an empty store in this process's memory, the one a Tracker
// uses when TrackerOptions.Store is nil, holding at most maxMovements movements
// (DefaultMaxTracked when maxMovements <= 0) and DefaultMaxBytes: it is
// storekit.NewMemoryStore, whose doc says what it forgets and when it refuses (an error
// matching storekit.ErrStoreFull). Give several Trackers of one process the same store
// to share their movements; to share them between processes, use package pgstore.
func NewMemoryStore(maxMovements int) storekit.Store {
	return storekit.NewMemoryStore(storekit.MemoryStoreOptions{MaxMovements: maxMovements})
}

// ErrForgotten is matched (errors.Is) by the error of Await, Track, TrackAmount and the
// Tracker's send helpers for a movement its store forgot: it was settled, its outcome
// reported to OnOutcome, and kept TrackerOptions.Retention before it was forgotten. Its
// outcome is not asked or reported again; nothing is recorded. A reference names one
// movement: send a new movement under a new one.
var ErrForgotten = storekit.ErrForgotten

// ErrNotTracked is matched (errors.Is) by the error of Tracker.Await for a reference
// never tracked (Track adopts a movement sent outside the Tracker before it is awaited),
// and by a store's answer about a movement it does not track.
var ErrNotTracked = storekit.ErrNotTracked

// Reconciliation is Tracker.Reconcile's report: the movements still unsettled past
// their callback deadline, those whose callback and status check disagreed, those
// settled by a status check alone, and those whose callback the status check
// contradicted, each list bounded. Its records are the store's (package storekit).
type Reconciliation = storekit.Reconciliation

// errLeaseLost is storekit.ErrLeaseLost: a store call made under a claim the caller no
// longer holds. The caller drops the work; the claim's holder does it.
var errLeaseLost = storekit.ErrLeaseLost

// movementKey names a movement the way both its request and its callbacks can: a
// callback does not say which of the movements sharing its shape it reports (receive or
// direct debit, send or bank transfer), so the key is the callback's kind and the
// client reference. movement.Key gives it.
type movementKey struct {
	// Callback is EventKindTransaction, EventKindPayout, EventKindMandate or
	// EventKindPaymentSucceeded (a checkout) for a movement; any event kind in a
	// callbackRecord kept for audit.
	Callback        EventKind
	ClientReference string
}

// keyOf returns the key of the movement of kind and clientReference, or a
// *ValidationError for an unknown kind or a reference no movement can have (empty,
// longer than 36 characters, or other than letters, digits, '-' and '_').
func keyOf(kind Kind, clientReference string) (movementKey, error) {
	callback, ok := kind.callbackKind()
	if !ok {
		return movementKey{}, invalid("kind", fmt.Sprintf("unknown kind %q: use KindReceive, KindSend, KindBankTransfer, KindDirectDebit, KindMandate or KindCheckout", kind))
	}
	// No movement has a longer reference or other characters; refusing them keeps what
	// a store holds for each small.
	if err := lookupReference("clientReference", clientReference, maxClientReference); err != nil {
		return movementKey{}, err
	}
	return movementKey{Callback: callback, ClientReference: clientReference}, nil
}

// eventKey returns the key of the movement a callback reports.
func eventKey(ev Event) movementKey {
	if nilEvent(ev) {
		return movementKey{} // names no movement: the store refuses it
	}
	return movementKey{Callback: ev.Kind(), ClientReference: ev.Reference()}
}

// movement is a money movement as the Tracker tracks it: storekit.Movement, typed.
type movement struct {
	Kind             Kind
	ClientReference  string
	Amount           int64 // minor units; zero when not given
	Currency         string
	ServiceReference string
	StartedAt        time.Time
	Deadline         time.Time
	NextCheckAt      time.Time
	Checks           int
	LeaseOwner       string
	LeaseUntil       time.Time
	TrackID          string
}

// Key returns the movement's key; the zero key for an unknown kind.
func (m movement) Key() movementKey {
	k, _ := keyOf(m.Kind, m.ClientReference)
	return k
}

// entry is what the store knows of one key: storekit.Entry, typed.
type entry struct {
	Tracked   bool
	Movement  movement
	Final     *settlement
	Forgotten bool
}

// settlement is a final outcome as the store keeps it: storekit.Settlement, typed. Its
// Outcome's Event is not the store's: the Tracker derives it from the outcome's fields.
type settlement struct {
	ID             string
	Key            movementKey
	Outcome        Outcome
	Body           []byte
	ByCallback     bool
	ByStatusCheck  bool
	Disagreed      bool
	ReportedAt     time.Time
	ReportAttempts int
}

// callbackClaim is BeginCallback's answer: storekit.CallbackClaim.
type callbackClaim = storekit.CallbackClaim

const (
	callbackClaimed  = storekit.CallbackClaimed
	callbackInFlight = storekit.CallbackInFlight
	callbackHandled  = storekit.CallbackHandled
)

// callbackRecord is a delivered callback kept for audit and dedupe: storekit.Callback,
// typed.
type callbackRecord struct {
	Key        movementKey
	DedupeKey  string
	Body       []byte
	At         time.Time
	LastAt     time.Time
	Deliveries int
}

// settledAsOther reports whether final, settled for a key before any Track, is the
// outcome of a movement of another kind than kind (storekit.SettledAsOther).
func settledAsOther(final *settlement, kind Kind) bool {
	return final != nil && final.Outcome.Kind != "" && final.Outcome.Kind != kind
}

// handClock gives s, when it takes one (storekit.ClockUser), the Tracker's Clock c (nil
// for the wall clock), and panics with its error: a store that cannot follow the
// Tracker's clock would never find a movement due.
func handClock(s storekit.Store, c Clock) {
	u, ok := unbounded(s).(storekit.ClockUser)
	if !ok {
		return
	}
	var kc storekit.Clock // nil for the wall clock, not a nil Clock in an interface
	if c != nil {
		kc = c
	}
	if err := u.UseClock(kc); err != nil {
		panic(fmt.Errorf("billing: NewTracker: %w", err))
	}
}

// storeGate is the one place the Tracker and its webhook handler call a store: it
// converts the Tracker's typed records to the store's plain ones and back, and a store's
// *storekit.ValidationError to a *ValidationError of the same field and rule.
type storeGate struct {
	s storekit.Store
}

// gateOf returns the gate to s; nil for nil.
func gateOf(s storekit.Store) *storeGate {
	if s == nil {
		return nil
	}
	return &storeGate{s: s}
}

// gateErr is err with a store's ValidationError made the SDK's.
func gateErr(err error) error {
	if err == nil {
		return nil // before v, which errors.As makes escape: no allocation for a nil error
	}
	var v *storekit.ValidationError
	if errors.As(err, &v) {
		return fmt.Errorf("%w (%w)", &ValidationError{Field: v.Field, Rule: v.Rule}, err)
	}
	return err
}

func (k movementKey) kit() storekit.MovementKey {
	return storekit.MovementKey{Callback: string(k.Callback), ClientReference: k.ClientReference}
}

func keyFromKit(k storekit.MovementKey) movementKey {
	return movementKey{Callback: EventKind(k.Callback), ClientReference: k.ClientReference}
}

func (m movement) kit() storekit.Movement {
	return storekit.Movement{Kind: string(m.Kind), ClientReference: m.ClientReference, Amount: m.Amount, Currency: m.Currency,
		ServiceReference: m.ServiceReference, StartedAt: m.StartedAt, Deadline: m.Deadline, NextCheckAt: m.NextCheckAt,
		Checks: m.Checks, LeaseOwner: m.LeaseOwner, LeaseUntil: m.LeaseUntil, TrackID: m.TrackID}
}

func movementFromKit(m storekit.Movement) movement {
	return movement{Kind: Kind(m.Kind), ClientReference: m.ClientReference, Amount: m.Amount, Currency: m.Currency,
		ServiceReference: m.ServiceReference, StartedAt: m.StartedAt, Deadline: m.Deadline, NextCheckAt: m.NextCheckAt,
		Checks: m.Checks, LeaseOwner: m.LeaseOwner, LeaseUntil: m.LeaseUntil, TrackID: m.TrackID}
}

func movementsFromKit(ms []storekit.Movement) []movement {
	out := make([]movement, len(ms))
	for i, m := range ms {
		out[i] = movementFromKit(m)
	}
	return out
}

// outcomeKit is what the store keeps of o: every field but Event, which is derived.
func outcomeKit(o Outcome) storekit.Outcome {
	return storekit.Outcome{Kind: string(o.Kind), ClientReference: o.ClientReference, State: string(o.State), Code: string(o.Code),
		TransactionID: o.TransactionID, ExternalTransactionID: o.ExternalTransactionID, Amount: o.Amount, Charges: o.Charges,
		Currency: o.Currency, ServiceReference: o.ServiceReference, Source: string(o.Source), At: o.At}
}

func outcomeFromKit(o storekit.Outcome) Outcome {
	return Outcome{Kind: Kind(o.Kind), ClientReference: o.ClientReference, State: EventState(o.State), Code: ResponseCode(o.Code),
		TransactionID: o.TransactionID, ExternalTransactionID: o.ExternalTransactionID, Amount: o.Amount, Charges: o.Charges,
		Currency: o.Currency, ServiceReference: o.ServiceReference, Source: OutcomeSource(o.Source), At: o.At}
}

func settlementFromKit(s storekit.Settlement) settlement {
	return settlement{ID: s.ID, Key: keyFromKit(s.Key), Outcome: outcomeFromKit(s.Outcome), Body: s.Body,
		ByCallback: s.ByCallback, ByStatusCheck: s.ByStatusCheck, Disagreed: s.Disagreed,
		ReportedAt: s.ReportedAt, ReportAttempts: s.ReportAttempts}
}

func entryFromKit(e storekit.Entry) entry {
	out := entry{Tracked: e.Tracked, Movement: movementFromKit(e.Movement), Forgotten: e.Forgotten}
	if e.Final != nil {
		s := settlementFromKit(*e.Final)
		out.Final = &s
	}
	return out
}

func (c callbackRecord) kit() storekit.Callback {
	return storekit.Callback{Key: c.Key.kit(), DedupeKey: c.DedupeKey, Body: c.Body, At: c.At, LastAt: c.LastAt, Deliveries: c.Deliveries}
}

func callbackFromKit(c storekit.Callback) callbackRecord {
	return callbackRecord{Key: keyFromKit(c.Key), DedupeKey: c.DedupeKey, Body: c.Body, At: c.At, LastAt: c.LastAt, Deliveries: c.Deliveries}
}

func (g *storeGate) Track(ctx context.Context, m movement) (movement, bool, error) {
	stored, created, err := g.s.Track(ctx, m.kit())
	return movementFromKit(stored), created, gateErr(err)
}

func (g *storeGate) Get(ctx context.Context, key movementKey) (entry, error) {
	e, err := g.s.Get(ctx, key.kit())
	return entryFromKit(e), gateErr(err)
}

func (g *storeGate) Settle(ctx context.Context, key movementKey, o Outcome, body []byte) (settlement, bool, error) {
	s, changed, err := g.s.Settle(ctx, key.kit(), outcomeKit(o), body)
	return settlementFromKit(s), changed, gateErr(err)
}

func (g *storeGate) BeginCallback(ctx context.Context, c callbackRecord, owner string, leaseUntil time.Time) (callbackClaim, error) {
	claim, err := g.s.BeginCallback(ctx, c.kit(), owner, leaseUntil)
	return claim, gateErr(err)
}

func (g *storeGate) FinishCallback(ctx context.Context, dedupeKey, owner string, handled bool, now time.Time) error {
	return gateErr(g.s.FinishCallback(ctx, dedupeKey, owner, handled, now))
}

func (g *storeGate) Callbacks(ctx context.Context, key movementKey) ([]callbackRecord, error) {
	cs, err := g.s.Callbacks(ctx, key.kit())
	out := make([]callbackRecord, len(cs))
	for i, c := range cs {
		out[i] = callbackFromKit(c)
	}
	return out, gateErr(err)
}

func (g *storeGate) ClaimDue(ctx context.Context, owner string, now, leaseUntil time.Time, limit int) ([]movement, error) {
	ms, err := g.s.ClaimDue(ctx, owner, now, leaseUntil, limit)
	return movementsFromKit(ms), gateErr(err)
}

func (g *storeGate) RenewClaim(ctx context.Context, key movementKey, owner string, leaseUntil time.Time) error {
	return gateErr(g.s.RenewClaim(ctx, key.kit(), owner, leaseUntil))
}

func (g *storeGate) Reschedule(ctx context.Context, key movementKey, owner string, next time.Time) error {
	return gateErr(g.s.Reschedule(ctx, key.kit(), owner, next))
}

// RescheduleAfter is Reschedule keeping the status check's attempt a, when the store
// keeps attempts (storekit.AttemptLog); Reschedule alone otherwise.
func (g *storeGate) RescheduleAfter(ctx context.Context, key movementKey, owner string, next time.Time, a storekit.Attempt) error {
	l, ok := unbounded(g.s).(storekit.AttemptLog)
	if !ok {
		return g.Reschedule(ctx, key, owner, next)
	}
	_, err := boundedAs(g.s, ctx, "Reschedule", none(func(ctx context.Context) error { return l.RescheduleAfter(ctx, key.kit(), owner, next, a) }))
	return gateErr(err)
}

// RetryReportAfter is RetryReport keeping the report's attempt a, when the store keeps
// attempts (storekit.AttemptLog); RetryReport alone otherwise.
func (g *storeGate) RetryReportAfter(ctx context.Context, id, owner string, at time.Time, a storekit.Attempt) error {
	l, ok := unbounded(g.s).(storekit.AttemptLog)
	if !ok {
		return g.RetryReport(ctx, id, owner, at)
	}
	_, err := boundedAs(g.s, ctx, "RetryReport", none(func(ctx context.Context) error { return l.RetryReportAfter(ctx, id, owner, at, a) }))
	return gateErr(err)
}

func (g *storeGate) ReleaseClaim(ctx context.Context, key movementKey, owner string) error {
	return gateErr(g.s.ReleaseClaim(ctx, key.kit(), owner))
}

func (g *storeGate) ClaimUnreported(ctx context.Context, owner string, now, leaseUntil time.Time, limit int) ([]settlement, error) {
	ss, err := g.s.ClaimUnreported(ctx, owner, now, leaseUntil, limit)
	out := make([]settlement, len(ss))
	for i, s := range ss {
		out[i] = settlementFromKit(s)
	}
	return out, gateErr(err)
}

func (g *storeGate) MarkReported(ctx context.Context, id string, now time.Time) error {
	return gateErr(g.s.MarkReported(ctx, id, now))
}

func (g *storeGate) RetryReport(ctx context.Context, id, owner string, at time.Time) error {
	return gateErr(g.s.RetryReport(ctx, id, owner, at))
}

func (g *storeGate) Pending(ctx context.Context) (int, time.Time, error) {
	n, oldest, err := g.s.Pending(ctx)
	return n, oldest, gateErr(err)
}

func (g *storeGate) Reconcile(ctx context.Context, from, to, now time.Time) (Reconciliation, error) {
	r, err := g.s.Reconcile(ctx, from, to, now)
	return r, gateErr(err)
}

func (g *storeGate) Release(ctx context.Context, key movementKey, startedAt time.Time) (bool, error) {
	ok, err := g.s.Release(ctx, key.kit(), startedAt)
	return ok, gateErr(err)
}

func (g *storeGate) RecordReference(ctx context.Context, key movementKey, serviceReference string) (movement, error) {
	m, err := g.s.RecordReference(ctx, key.kit(), serviceReference)
	return movementFromKit(m), gateErr(err)
}

func (g *storeGate) Purge(ctx context.Context, before time.Time) (int, error) {
	n, err := g.s.Purge(ctx, before)
	return n, gateErr(err)
}

// trackEntry is the store's TrackNew when fresh, else its TrackEntry, bounded as its
// other calls are; nil when it has neither (storekit.EntryTracker).
func (g *storeGate) trackEntry(fresh bool) func(ctx context.Context, m movement) (entry, bool, error) {
	call := trackEntry(g.s, fresh)
	if call == nil {
		return nil
	}
	return func(ctx context.Context, m movement) (entry, bool, error) {
		e, created, err := call(ctx, m.kit())
		return entryFromKit(e), created, gateErr(err)
	}
}

// beginCallbackEntry is the store's BeginCallbackEntry, bounded as its other calls are;
// nil when it has none (storekit.CallbackEntryBeginner).
func (g *storeGate) beginCallbackEntry() func(ctx context.Context, c callbackRecord, owner string, leaseUntil time.Time) (callbackClaim, entry, error) {
	call := beginCallbackEntry(g.s)
	if call == nil {
		return nil
	}
	return func(ctx context.Context, c callbackRecord, owner string, leaseUntil time.Time) (callbackClaim, entry, error) {
		claim, e, err := call(ctx, c.kit(), owner, leaseUntil)
		return claim, entryFromKit(e), gateErr(err)
	}
}

// recordContradiction is the store's RecordContradiction for the movement key, bounded
// as its other calls are; nil when it has none (storekit.ContradictionRecorder). It
// returns false, recording nothing, for a contradiction the store's rules refuse.
func (g *storeGate) recordContradiction() func(ctx context.Context, key movementKey, claimed EventState, body []byte, at time.Time) (bool, error) {
	call := recordContradiction(g.s)
	if call == nil {
		return nil
	}
	return func(ctx context.Context, key movementKey, claimed EventState, body []byte, at time.Time) (bool, error) {
		c := storekit.Contradiction{Key: key.kit(), Claimed: string(claimed), Body: body, At: at}
		if c.Validate() != nil {
			return false, nil // no movement has such a key or state: nothing to keep
		}
		ok, err := call(ctx, c)
		return ok, gateErr(err)
	}
}

// renewReport is the store's RenewReport, bounded as its other calls are; nil when it
// has none (storekit.ReportLeaseRenewer).
func (g *storeGate) renewReport() func(ctx context.Context, id, owner string, leaseUntil time.Time) error {
	call := renewReport(g.s)
	if call == nil {
		return nil
	}
	return func(ctx context.Context, id, owner string, leaseUntil time.Time) error {
		return gateErr(call(ctx, id, owner, leaseUntil))
	}
}

// operatorStore is the store's storekit.OperatorStore, each call bounded as its other
// calls are; nil when it has none: the Tracker then refuses every operator action.
func (g *storeGate) operatorStore() *operatorGate {
	o, ok := unbounded(g.s).(storekit.OperatorStore)
	if !ok {
		return nil
	}
	return &operatorGate{s: g.s, o: o}
}

// operatorGate calls a storekit.OperatorStore under the deadline of its store's calls.
type operatorGate struct {
	s storekit.Store
	o storekit.OperatorStore
}

func (g *operatorGate) RecordAudit(ctx context.Context, a storekit.AuditRecord) error {
	_, err := boundedAs(g.s, ctx, "RecordAudit", none(func(ctx context.Context) error { return g.o.RecordAudit(ctx, a) }))
	return gateErr(err)
}

func (g *operatorGate) Audits(ctx context.Context, key movementKey) ([]storekit.AuditRecord, error) {
	as, err := boundedAs(g.s, ctx, "Audits", func(ctx context.Context) ([]storekit.AuditRecord, error) { return g.o.Audits(ctx, key.kit()) })
	return as, gateErr(err)
}

func (g *operatorGate) Resolve(ctx context.Context, key movementKey, o Outcome, a storekit.AuditRecord) (settlement, bool, error) {
	type result struct {
		s       storekit.Settlement
		changed bool
	}
	r, err := boundedAs(g.s, ctx, "Resolve", func(ctx context.Context) (result, error) {
		s, changed, err := g.o.Resolve(ctx, key.kit(), outcomeKit(o), a)
		return result{s, changed}, err
	})
	return settlementFromKit(r.s), r.changed, gateErr(err)
}

func (g *operatorGate) RequeueReport(ctx context.Context, id string, a storekit.AuditRecord) (bool, error) {
	ok, err := boundedAs(g.s, ctx, "RequeueReport", func(ctx context.Context) (bool, error) { return g.o.RequeueReport(ctx, id, a) })
	return ok, gateErr(err)
}
