package billing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/billingsdk/billing-go/storekit"
)

// SourceOperator is the Source of an outcome an operator set with Tracker.Resolve: the
// service could not say, and a person decided, with a reason kept in the store's audit
// records. It is reported to OnOutcome once, like any outcome, and never replaced: a
// callback or status check that disagrees later is recorded as a contradiction
// (Reconcile lists the movement as Disagreed), never reported a second time.
const SourceOperator OutcomeSource = storekit.SourceOperator

// Action names an operator's action on a movement. None moves money or deletes a record.
type Action string

// The operator's actions, each a method of Tracker.
const (
	ActionRecheck     Action = storekit.ActionRecheck
	ActionReportAgain Action = storekit.ActionReportAgain
	ActionResolve     Action = storekit.ActionResolve
	ActionRelease     Action = storekit.ActionRelease
)

// Typed refusals of the operator's actions; each changes nothing.
var (
	// ErrActionUnsupported: the Tracker's store keeps no audit records
	// (storekit.OperatorStore; the memory store and pgstore do), or the action has no
	// one to act for it (ReportAgain with no OnOutcome on a store of the Tracker's own).
	ErrActionUnsupported = errors.New("billing: the store does not support operator actions")
	// ErrAlreadySettled: the movement has a final outcome already; Recheck, Resolve and
	// Release act only on one still pending.
	ErrAlreadySettled = errors.New("billing: movement already settled")
	// ErrNotSettled: ReportAgain needs a final outcome that was reported.
	ErrNotSettled = errors.New("billing: movement has no reported outcome")
	// ErrNotReleasable: Release found a callback kept for the movement, or it changed
	// meanwhile: its request may have left, so it stays tracked.
	ErrNotReleasable = errors.New("billing: movement cannot be released")
)

// MaxBulkRecheck, 100, is the most movements RecheckAll rechecks in one call.
const MaxBulkRecheck = 100

// ActionResult is what an operator's action did: the movement's state before and after
// (a final state, "pending" or "released"), and its outcome once it has one.
type ActionResult struct {
	Action          Action
	Kind            Kind
	ClientReference string
	Actor           string
	Reason          string
	Before, After   string
	Outcome         *Outcome
}

// ActionObserver is implemented by a TrackerObserver that wants to hear of operators'
// actions (a span each, for otelbilling): the Tracker calls OperatorActed after each
// action it took, with what it did, or with the refusal's error.
type ActionObserver interface {
	OperatorActed(ctx context.Context, r ActionResult, err error)
}

// Recheck asks the movement's status check once, now, for the operator actor, and
// settles it by the normal rules when the answer is final; a pending answer changes
// nothing (Run asks again on its schedule). It refuses a movement already settled
// (ErrAlreadySettled) and one not tracked (ErrNotTracked). reason may be empty. The
// action is audited in the store.
func (t *Tracker) Recheck(ctx context.Context, actor, reason string, kind Kind, clientReference string) (ActionResult, error) {
	r, err := t.recheck(ctx, actor, reason, kind, clientReference)
	t.observeAction(ctx, r, err)
	return r, err
}

func (t *Tracker) recheck(ctx context.Context, actor, reason string, kind Kind, clientReference string) (ActionResult, error) {
	r, key, e, ops, err := t.beginAction(ctx, ActionRecheck, actor, reason, false, kind, clientReference)
	if err != nil {
		return r, err
	}
	if e.Final != nil {
		return r, fmt.Errorf("%w: %s %q is %s", ErrAlreadySettled, kind, clientReference, e.Final.Outcome.State)
	}
	o, serr := movementStatus(ctx, t.client, e.Movement)
	t.observeStatusCheck(ctx, e.Movement.Kind, clientReference, o, serr)
	now := t.opts.Clock.Now()
	r.After = string(EventPending)
	if serr == nil && o.IsFinal() {
		o.At = now
		s, err := t.settle(context.WithoutCancel(ctx), key, *o, nil)
		if err != nil {
			return r, err
		}
		r.After, r.Outcome = string(s.Outcome.State), settledOutcome(&s, s.Outcome.Kind)
	}
	if err := t.audit(ctx, ops, r, key, now); err != nil {
		return r, err
	}
	if serr != nil {
		return r, fmt.Errorf("billing: status check of %s %q: %w", kind, clientReference, serr)
	}
	return r, nil
}

// RecheckAll rechecks each of refs (at most MaxBulkRecheck) for the operator actor,
// one by one, skipping the ones already settled. With dryRun it checks nothing and
// counts how many it would recheck, so that the operator confirms the number first. It
// returns the results of the rechecks made (or, dry, of the ones it would make), and
// stops at the first error other than a refusal.
func (t *Tracker) RecheckAll(ctx context.Context, actor, reason string, refs []MovementRef, dryRun bool) ([]ActionResult, error) {
	if ctx == nil {
		return nil, errNilContext()
	}
	if len(refs) > MaxBulkRecheck {
		return nil, invalid("refs", fmt.Sprintf("at most %d movements are rechecked at once", MaxBulkRecheck))
	}
	var out []ActionResult
	for _, ref := range refs {
		if dryRun {
			r, _, e, _, err := t.beginAction(ctx, ActionRecheck, actor, reason, false, ref.Kind, ref.ClientReference)
			if err != nil {
				return out, err
			}
			if e.Final == nil {
				out = append(out, r)
			}
			continue
		}
		r, err := t.Recheck(ctx, actor, reason, ref.Kind, ref.ClientReference)
		switch {
		case errors.Is(err, ErrAlreadySettled):
			continue
		case err != nil && r.Before == "":
			return out, err
		}
		out = append(out, r)
	}
	return out, nil
}

// MovementRef names a movement: its kind and client reference.
type MovementRef struct {
	Kind            Kind
	ClientReference string
}

// ReportAgain has the movement's reported outcome reported once more, under the same
// Outcome.ID, for a merchant whose side lost it: the store marks it unreported, and Run
// (on any instance sharing the store) calls OnOutcome or OnOutcomeTx with it as it
// would the first time. It refuses a movement with no reported outcome
// (ErrNotSettled: one not yet reported will be). The action is audited in the store.
func (t *Tracker) ReportAgain(ctx context.Context, actor, reason string, kind Kind, clientReference string) (ActionResult, error) {
	r, err := t.reportAgain(ctx, actor, reason, kind, clientReference)
	t.observeAction(ctx, r, err)
	return r, err
}

func (t *Tracker) reportAgain(ctx context.Context, actor, reason string, kind Kind, clientReference string) (ActionResult, error) {
	r, key, e, ops, err := t.beginAction(ctx, ActionReportAgain, actor, reason, false, kind, clientReference)
	if err != nil {
		return r, err
	}
	if t.own && t.opts.OnOutcome == nil {
		return r, fmt.Errorf("%w: the Tracker has no OnOutcome to report to", ErrActionUnsupported)
	}
	if e.Final == nil || e.Final.ReportedAt.IsZero() {
		return r, fmt.Errorf("%w: %s %q", ErrNotSettled, kind, clientReference)
	}
	r.After, r.Outcome = r.Before, settledOutcome(e.Final, e.Final.Outcome.Kind)
	a := t.auditRecord(r, key, t.opts.Clock.Now())
	ok, err := ops.RequeueReport(context.WithoutCancel(ctx), e.Final.ID, a)
	if err != nil {
		return r, err
	}
	if !ok {
		return r, fmt.Errorf("%w: %s %q changed meanwhile", ErrNotSettled, kind, clientReference)
	}
	return r, nil
}

// Resolve sets the final state of a movement the service cannot answer about (it
// forgot it, or its status check keeps failing), for the operator actor with a reason:
// a compare-and-set in the store, so it never overrides a settled outcome
// (ErrAlreadySettled). The outcome (Source SourceOperator) is reported to OnOutcome
// like any other, once; a later callback or status check that disagrees is recorded as
// a contradiction, never reported. state is succeeded, failed, expired or unknown. The
// action is audited in the store.
func (t *Tracker) Resolve(ctx context.Context, actor, reason string, kind Kind, clientReference string, state EventState) (ActionResult, error) {
	r, err := t.resolve(ctx, actor, reason, kind, clientReference, state)
	t.observeAction(ctx, r, err)
	return r, err
}

func (t *Tracker) resolve(ctx context.Context, actor, reason string, kind Kind, clientReference string, state EventState) (ActionResult, error) {
	switch state {
	case EventSucceeded, EventFailed, EventExpired, EventUnknown:
	default:
		return ActionResult{}, invalid("state", "must be succeeded, failed, expired or unknown")
	}
	r, key, e, ops, err := t.beginAction(ctx, ActionResolve, actor, reason, true, kind, clientReference)
	if err != nil {
		return r, err
	}
	if e.Final != nil {
		return r, fmt.Errorf("%w: %s %q is %s", ErrAlreadySettled, kind, clientReference, e.Final.Outcome.State)
	}
	now := t.opts.Clock.Now()
	r.After = string(state)
	o := Outcome{Kind: e.Movement.Kind, ClientReference: clientReference, State: state, Source: SourceOperator,
		ServiceReference: e.Movement.ServiceReference, Currency: e.Movement.Currency, At: now}
	s, changed, err := ops.Resolve(context.WithoutCancel(ctx), key, o, t.auditRecord(r, key, now))
	if err != nil {
		return r, err
	}
	if !changed {
		r.After = string(s.Outcome.State)
		return r, fmt.Errorf("%w: %s %q is %s", ErrAlreadySettled, kind, clientReference, s.Outcome.State)
	}
	if t.own && t.opts.OnOutcome == nil {
		if err := t.store.MarkReported(context.WithoutCancel(ctx), s.ID, now); err != nil {
			return r, err
		}
	}
	r.Outcome = settledOutcome(&s, s.Outcome.Kind)
	t.observeSettled(ctx, *r.Outcome)
	t.wake(key)
	return r, nil
}

// Release forgets a tracked movement whose request surely never left (the send's own
// error said so, and the Tracker could not release it then), for the operator actor
// with a reason, so that it is neither pending nor overdue and its reference may be
// tracked again. It refuses a movement settled (ErrAlreadySettled) or with a callback
// kept for it (ErrNotReleasable): its request left. The audit record outlives the
// movement.
func (t *Tracker) Release(ctx context.Context, actor, reason string, kind Kind, clientReference string) (ActionResult, error) {
	r, err := t.release1(ctx, actor, reason, kind, clientReference)
	t.observeAction(ctx, r, err)
	return r, err
}

func (t *Tracker) release1(ctx context.Context, actor, reason string, kind Kind, clientReference string) (ActionResult, error) {
	r, key, e, ops, err := t.beginAction(ctx, ActionRelease, actor, reason, true, kind, clientReference)
	if err != nil {
		return r, err
	}
	if e.Final != nil {
		return r, fmt.Errorf("%w: %s %q is %s", ErrAlreadySettled, kind, clientReference, e.Final.Outcome.State)
	}
	ok, err := t.store.Release(context.WithoutCancel(ctx), key, e.Movement.StartedAt)
	if err != nil {
		return r, err
	}
	if !ok {
		return r, fmt.Errorf("%w: %s %q has a callback kept for it, or changed meanwhile", ErrNotReleasable, kind, clientReference)
	}
	r.After = "released"
	return r, t.audit(ctx, ops, r, key, t.opts.Clock.Now())
}

// beginAction checks an action's arguments and reads the movement: it is tracked, the
// store audits, the actor is named and, when needed, the reason given.
func (t *Tracker) beginAction(ctx context.Context, action Action, actor, reason string, needReason bool, kind Kind, clientReference string) (ActionResult, movementKey, entry, *operatorGate, error) {
	r := ActionResult{Action: action, Kind: kind, ClientReference: clientReference, Actor: actor, Reason: reason}
	if ctx == nil {
		return r, movementKey{}, entry{}, nil, errNilContext()
	}
	switch {
	case strings.TrimSpace(actor) == "":
		return r, movementKey{}, entry{}, nil, invalid("actor", "is required: every action names who took it")
	case len(actor) > storekit.MaxActor:
		return r, movementKey{}, entry{}, nil, invalid("actor", fmt.Sprintf("must be at most %d bytes", storekit.MaxActor))
	case needReason && strings.TrimSpace(reason) == "":
		return r, movementKey{}, entry{}, nil, invalid("reason", "is required for "+string(action))
	case len(reason) > storekit.MaxReason:
		return r, movementKey{}, entry{}, nil, invalid("reason", fmt.Sprintf("must be at most %d bytes", storekit.MaxReason))
	}
	key, err := keyOf(kind, clientReference)
	if err != nil {
		return r, key, entry{}, nil, err
	}
	ops := t.store.operatorStore()
	if ops == nil {
		return r, key, entry{}, nil, ErrActionUnsupported
	}
	e, err := t.store.Get(ctx, key)
	if err != nil {
		return r, key, e, nil, err
	}
	if !e.Tracked || e.Movement.Kind != kind {
		return r, key, e, nil, fmt.Errorf("%w: %s %q", ErrNotTracked, kind, clientReference)
	}
	r.Before = string(EventPending)
	if e.Final != nil {
		r.Before = string(e.Final.Outcome.State)
	}
	return r, key, e, ops, nil
}

// auditRecord is the store's record of r, taken at now.
func (t *Tracker) auditRecord(r ActionResult, key movementKey, now time.Time) storekit.AuditRecord {
	a := storekit.AuditRecord{Key: key.kit(), Action: string(r.Action), Actor: r.Actor, Reason: r.Reason, At: now, Before: r.Before, After: r.After}
	if r.Outcome != nil {
		a.OutcomeID = r.Outcome.ID
	}
	return a
}

// audit keeps the record of r in the store, bounded by StoreTimeout and made whether or
// not ctx ended: the action was taken.
func (t *Tracker) audit(ctx context.Context, ops *operatorGate, r ActionResult, key movementKey, now time.Time) error {
	if err := ops.RecordAudit(context.WithoutCancel(ctx), t.auditRecord(r, key, now)); err != nil {
		return fmt.Errorf("billing: recording the audit of %s on %s %q: %w", r.Action, r.Kind, r.ClientReference, err)
	}
	return nil
}

// observeAction logs an operator's action and tells an ActionObserver of it.
func (t *Tracker) observeAction(ctx context.Context, r ActionResult, err error) {
	if ctx == nil {
		return
	}
	attrs := []slog.Attr{slog.String("action", string(r.Action)), slog.String("kind", string(r.Kind)),
		slog.String("clientReference", r.ClientReference), slog.String("actor", r.Actor),
		slog.String("before", r.Before), slog.String("after", r.After)}
	if err != nil {
		t.opts.Logger.LogAttrs(ctx, slog.LevelWarn, "billing operator action refused", append(attrs, slog.String("error", err.Error()))...)
	} else {
		t.opts.Logger.LogAttrs(ctx, slog.LevelInfo, "billing operator action", append(attrs, slog.String("reason", r.Reason))...)
	}
	if o, ok := t.opts.Observer.(ActionObserver); ok {
		o.OperatorActed(ctx, r, err)
	}
}

// operatorOverruled records, as a contradiction, a final state a callback or status
// check reported for a movement an operator resolved otherwise: it is never reported,
// and Reconcile lists the movement (its settlement Disagreed).
func (t *Tracker) operatorOverruled(ctx context.Context, key movementKey, o Outcome, s settlement, changed bool, body []byte) {
	if changed || s.Outcome.Source != SourceOperator || o.State == s.Outcome.State || o.Source == SourceOperator {
		return
	}
	record := t.store.recordContradiction()
	t.opts.Logger.LogAttrs(ctx, slog.LevelWarn, "billing: a "+string(o.State)+" from the "+string(o.Source)+" disagrees with an operator's "+string(s.Outcome.State),
		slog.String("clientReference", key.ClientReference))
	if record == nil {
		return
	}
	if _, err := record(context.WithoutCancel(ctx), key, o.State, body, o.At); err != nil {
		t.opts.Logger.LogAttrs(ctx, slog.LevelWarn, "billing: recording a contradiction failed",
			slog.String("clientReference", key.ClientReference), slog.String("error", err.Error()))
	}
}

// ErrInspectUnsupported is matched (errors.Is) by the error of Tracker.List, Summarize
// and Inspect on a store that cannot list what it holds (storekit.Inspector; the memory
// store and pgstore can).
var ErrInspectUnsupported = errors.New("billing: the store cannot list its movements")

// Inspection is what the Tracker's store knows of one movement, for an operator: what
// Get returns, the callbacks kept for it (raw: scrub them before showing them), the
// contradiction recorded, the operators' actions on it, and the Tracker's tries that
// came back unsuccessful: what each status check answered and why each report failed
// (the latest, on a store that keeps them: storekit.AttemptLog).
type Inspection struct {
	Key           storekit.MovementKey
	Entry         storekit.Entry
	Callbacks     []storekit.Callback
	Contradiction *storekit.Contradiction
	Audits        []storekit.AuditRecord
	Attempts      []storekit.Attempt
}

// Now is the time on the Tracker's Clock.
func (t *Tracker) Now() time.Time { return t.opts.Clock.Now() }

// Scrub returns text as the Tracker's Client lets it out: its own credentials removed and
// personal data masked (see Scrub). An operator's view passes everything it shows
// through it.
func (t *Tracker) Scrub(text string) string { return t.client.scrub.Text(text) }

// inspector is the store's Inspector, unbounded; nil when it has none.
func (t *Tracker) inspector() storekit.Inspector {
	i, _ := unbounded(t.kit).(storekit.Inspector)
	return i
}

// List returns the movements q selects from the Tracker's store, latest started first,
// and whether more follow (continue with q.After set to the last item's Cursor). q.Now
// zero is the Tracker's Clock.
func (t *Tracker) List(ctx context.Context, q storekit.ListQuery) ([]storekit.ListItem, bool, error) {
	if ctx == nil {
		return nil, false, errNilContext()
	}
	in := t.inspector()
	if in == nil {
		return nil, false, ErrInspectUnsupported
	}
	if q.Now.IsZero() {
		q.Now = t.opts.Clock.Now()
	}
	type result struct {
		items []storekit.ListItem
		more  bool
	}
	r, err := boundedAs(t.kit, ctx, "List", func(ctx context.Context) (result, error) {
		items, more, err := in.List(ctx, q)
		return result{items, more}, err
	})
	return r.items, r.more, gateErr(err)
}

// Summarize counts the movements of the Tracker's store by state, now.
func (t *Tracker) Summarize(ctx context.Context) (storekit.Summary, error) {
	if ctx == nil {
		return storekit.Summary{}, errNilContext()
	}
	in := t.inspector()
	if in == nil {
		return storekit.Summary{}, ErrInspectUnsupported
	}
	now := t.opts.Clock.Now()
	s, err := boundedAs(t.kit, ctx, "Summarize", func(ctx context.Context) (storekit.Summary, error) { return in.Summarize(ctx, now) })
	return s, gateErr(err)
}

// Inspect returns what the store knows of the movement key.
func (t *Tracker) Inspect(ctx context.Context, key storekit.MovementKey) (Inspection, error) {
	if ctx == nil {
		return Inspection{}, errNilContext()
	}
	if err := key.Validate(); err != nil {
		return Inspection{}, gateErr(err)
	}
	in := Inspection{Key: key}
	var err error
	if in.Entry, err = t.kit.Get(ctx, key); err != nil {
		return in, gateErr(err)
	}
	if in.Callbacks, err = t.kit.Callbacks(ctx, key); err != nil {
		return in, gateErr(err)
	}
	if i := t.inspector(); i != nil {
		c, err := boundedAs(t.kit, ctx, "Contradiction", func(ctx context.Context) (*storekit.Contradiction, error) { return i.Contradiction(ctx, key) })
		if err != nil {
			return in, gateErr(err)
		}
		in.Contradiction = c
	}
	if ops := t.store.operatorStore(); ops != nil {
		if in.Audits, err = ops.Audits(ctx, keyFromKit(key)); err != nil {
			return in, err
		}
	}
	if l, ok := unbounded(t.kit).(storekit.AttemptLog); ok {
		in.Attempts, err = boundedAs(t.kit, ctx, "Attempts", func(ctx context.Context) ([]storekit.Attempt, error) { return l.Attempts(ctx, key) })
		if err != nil {
			return in, gateErr(err)
		}
	}
	return in, nil
}
