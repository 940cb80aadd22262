package billing

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"strings"
	"time"
)

// confirmation is what the status check says of an event that claims a final state.
// Nothing in a callback is signed, so the callback is only a hint: the status check is
// the truth.
type confirmation struct {
	// status is http.StatusOK when the status check confirms the event,
	// http.StatusForbidden when it contradicts it, and http.StatusServiceUnavailable when
	// it cannot tell yet (still pending, unreachable, or answering about something else).
	status int
	// reason says why, for the log; it is never shown to the sender.
	reason string
	// truth is the confirmed event, built from the status check alone, when confirmed.
	truth Event
	// outcome is the status check's outcome, when a movement or checkout was confirmed;
	// nil for events without a status check.
	outcome *Outcome
	// tracking is what the Tracker's store said of the movement when the confirmation
	// read it: trackingUnread when no store was read.
	tracking tracking
}

// tracking says whether a Tracker tracks a confirmed movement, as its store said.
type tracking uint8

const (
	trackingUnread    tracking = iota // no store was read: a handler that tracks nothing
	trackingTracked                   // the store tracks the movement
	trackingUntracked                 // the store tracks no movement under its key
)

// trackingOf is what entry e says of a movement's tracking.
func trackingOf(e entry) tracking {
	if e.Tracked {
		return trackingTracked
	}
	return trackingUntracked
}

func refused(status int, format string, args ...any) confirmation {
	return confirmation{status: status, reason: fmt.Sprintf(format, args...)}
}

// trackedLookup reads what a Tracker's store knows of a movement; nil for a handler
// that tracks nothing.
type trackedLookup func(ctx context.Context, key movementKey) (entry, error)

// movementCallback is a callback of a money movement or a mandate: it can say what it
// claims beyond its state, to be compared with the status check.
type movementCallback interface {
	Event
	// claimed returns the amount (minor units, 0 when the callback carries none) and the
	// service's transaction id the callback claims.
	claimed() (amount int64, transactionID string)
}

// confirm is the handler's confirm step: with WithStatusCheckConfirmation it asks the
// status check about claim and returns ctx carrying the confirmation, the event the
// status check confirms (built from it alone) and its outcome; a claim it refuses is
// logged, recorded for Reconcile when the status check contradicts a movement's
// callback, answered (403, or 503 "retry later"), and reported false. Without
// confirmation the claim passes as it is.
func (h *webhookHandler) confirm(ctx context.Context, w http.ResponseWriter, claim Event, body []byte) (context.Context, Event, *Outcome, bool) {
	if h.confirmer == nil {
		return ctx, claim, nil, true
	}
	conf := confirmEvent(ctx, h.confirmer, h.lookup, claim)
	if conf.status != http.StatusOK {
		h.logger.LogAttrs(ctx, slog.LevelWarn, refusedClaimLog[claim.State()],
			append(eventAttrs(claim), slog.Int("status", conf.status), slog.String("reason", conf.reason))...)
		if conf.status == http.StatusForbidden && h.stored != nil {
			contradicted(ctx, h.stored.store, h.stored.clock.Now(), claim, body, h.logger)
		}
		refuse(w, conf.status)
		return ctx, nil, nil, false
	}
	return withConfirmation(ctx, conf), conf.truth, conf.outcome, true
}

// confirmDelivered is Deliver's confirm step: the confirmation the handler made already,
// or the status check's, asked now. A claim the status check cannot confirm yet is an
// error matching ErrStillPending; one it contradicts matches ErrUnconfirmed and, for a
// movement the store tracks, is recorded for Reconcile.
func (t *Tracker) confirmDelivered(ctx context.Context, claim Event, logger *slog.Logger) (confirmation, error) {
	if conf, ok := confirmedBefore(ctx); ok {
		return conf, nil
	}
	if err := checkCallbackReference(claim); err != nil {
		return confirmation{}, err
	}
	conf := confirmEvent(ctx, t.client, t.store.Get, claim)
	switch {
	case conf.status == http.StatusServiceUnavailable:
		return conf, fmt.Errorf("%w: %s", ErrStillPending, conf.reason)
	case conf.status == http.StatusForbidden:
		contradicted(ctx, t.store, t.opts.Clock.Now(), claim, callbackBody(ctx, claim), logger)
		return conf, fmt.Errorf("%w: %s", ErrUnconfirmed, conf.reason)
	case conf.status != http.StatusOK || conf.outcome == nil:
		return conf, fmt.Errorf("%w: %s", ErrUnconfirmed, conf.reason)
	}
	return conf, nil
}

// confirmEvent asks the status check whether ev tells the truth. Events without a status
// check (a trial start) pass as they are: they settle nothing. lookup, when given, says which kind a reference is tracked as: that
// kind alone confirms it.
func confirmEvent(ctx context.Context, c *Client, lookup trackedLookup, ev Event) confirmation {
	// A notice that claims no final state is asked about too: its fields are a sender's
	// as much as a success's are, so what passes on is the status check's truth, pending
	// or final, never the notice.
	switch ev := ev.(type) {
	case *CheckoutEvent:
		return confirmCheckout(ctx, c, lookup, ev)
	case movementCallback:
		return confirmMovement(ctx, c, lookup, ev)
	case *UnconfirmedEvent:
		return confirmation{status: http.StatusOK, truth: ev}
	}
	// No status check confirms it (a trial start): it passes on as the unconfirmed
	// claim it is, never as a fact.
	claim, _ := UnconfirmedClaimFrom(ctx)
	return confirmation{status: http.StatusOK, truth: unconfirmed("", ev, claim.Body)}
}

// confirmMovement asks the status check of the kind ev's reference is tracked as or,
// when it is not tracked, of every kind whose callbacks have ev's shape: exactly one of
// them must know the reference. The confirmed event is built from the status check's
// outcome by the kind's row; nothing of ev is in it.
func confirmMovement(ctx context.Context, c *Client, lookup trackedLookup, ev movementCallback) confirmation {
	kinds, _ := callbackKinds(ev.Kind())
	m := movement{ClientReference: ev.Reference()}
	tracked := trackingUnread
	if lookup != nil {
		e, err := lookup(ctx, eventKey(ev))
		if err != nil {
			return refused(http.StatusServiceUnavailable, "reading the tracker's store failed: %v", err)
		}
		if tracked = trackingOf(e); e.Tracked {
			kinds, m = []Kind{e.Movement.Kind}, e.Movement
		}
	}
	var found *Outcome
	for _, kind := range kinds {
		m.Kind = kind
		o, err := movementStatus(ctx, c, m)
		var invalidErr *ValidationError
		switch {
		case errors.Is(err, ErrNotFound), errors.As(err, &invalidErr):
			continue // not this kind (or, for a bank transfer, no account to ask about)
		case err != nil:
			return refused(http.StatusServiceUnavailable, "the %s status check failed: %v", kind, err)
		case found != nil:
			return refused(http.StatusForbidden, "ambiguous: the %s and the %s status checks both know the reference %q",
				found.Kind, kind, ev.Reference())
		}
		found = o
	}
	o := found
	amount, transactionID := ev.claimed()
	claimsFinal := ev.State() != EventPending
	switch {
	case o == nil:
		return refused(http.StatusForbidden, "no status check of %v knows the reference %q", kinds, ev.Reference())
	case claimsFinal && o.IsPending():
		return refused(http.StatusServiceUnavailable, "the %s status check says it is still pending", o.Kind)
	case claimsFinal && o.moved() != (ev.State() == EventSucceeded):
		return refused(http.StatusForbidden, "the %s status check says %s (code %s)", o.Kind, o.State, o.Code)
	case amount != 0 && o.Amount != 0 && amount != o.Amount:
		return refused(http.StatusForbidden, "the callback's amount %d differs from the %s status check's %d", amount, o.Kind, o.Amount)
	case transactionID != "" && o.TransactionID != "" && transactionID != o.TransactionID:
		return refused(http.StatusForbidden, "the callback's transaction id %q differs from the %s status check's %q", transactionID, o.Kind, o.TransactionID)
	}
	o.Source = SourceCallback
	return confirmation{status: http.StatusOK, truth: movements[o.Kind].event(o), outcome: o, tracking: tracked}
}

// confirmCheckout asks Payments.Get about a checkout webhook: by the session's reference
// (the spec's webhook), or by the merchant's client reference (the provider's), then by
// the session it names. The event handed on is the payment the service holds, and the
// outcome's client reference is the one the service's payment names (or the one the
// service was asked by): never a field of the webhook.
func confirmCheckout(ctx context.Context, c *Client, lookup trackedLookup, ev *CheckoutEvent) confirmation {
	ref := ev.Reference()
	p, err := checkoutRecord(ctx, c, ref)
	byClientReference := ev.byClientReference
	if byClientReference && errors.Is(err, ErrNotFound) && ev.Data.Reference != "" && ev.Data.Reference != ref {
		// A service that finds no session by client reference: ask about the session
		// named, whose own record must then name the client reference.
		p, err = checkoutRecord(ctx, c, ev.Data.Reference)
		byClientReference = false
	}
	var invalidErr *ValidationError
	switch {
	case errors.Is(err, ErrNotFound), errors.As(err, &invalidErr):
		return refused(http.StatusForbidden, "the service knows no payment %q", ref)
	case errors.Is(err, errOtherKindRecord):
		return refused(http.StatusForbidden, "the status check of %q: %v", ref, err)
	case err != nil:
		return refused(http.StatusServiceUnavailable, "Payments.Get failed: %v", err)
	}
	o := paymentOutcome(p)
	clientReference := o.named
	if byClientReference && clientReference == "" {
		clientReference = ref // the service answered for this client reference
	}
	switch {
	case byClientReference && clientReference != ref:
		return refused(http.StatusForbidden, "the payment found for %q names the client reference %q", ref, clientReference)
	case ev.byClientReference && clientReference != "" && ev.ClientReference != clientReference:
		return refused(http.StatusForbidden, "the webhook's client reference %q is not the payment's %q", ev.ClientReference, clientReference)
	case ev.Data.Reference != "" && p.Reference != "" && ev.Data.Reference != p.Reference:
		return refused(http.StatusForbidden, "the webhook names the session %q; the service's is %q", ev.Data.Reference, p.Reference)
	case ev.State() != EventPending && !p.IsFinal():
		return refused(http.StatusServiceUnavailable, "the payment is still %s", p.Status)
	case ev.State() != EventPending && p.Status != ev.Data.Status:
		return refused(http.StatusForbidden, "the payment is %s", p.Status)
	case ev.Data.Amount != 0 && ev.Data.Amount != p.Amount:
		return refused(http.StatusForbidden, "the webhook's amount %d differs from the payment's %d", ev.Data.Amount, p.Amount)
	case ev.Data.Currency != "" && !strings.EqualFold(ev.Data.Currency, p.Currency):
		return refused(http.StatusForbidden, "the webhook's currency %q differs from the payment's %q", ev.Data.Currency, p.Currency)
	case len(ev.Data.Metadata) != 0 && !reflect.DeepEqual(ev.Data.Metadata, p.Metadata):
		return refused(http.StatusForbidden, "the webhook's metadata differs from the payment's")
	}
	o.State = o.stateOf(p)
	o.Kind, o.ClientReference, o.Source = KindCheckout, clientReference, SourceCallback
	tracked := trackingUnread
	if key, err := keyOf(KindCheckout, clientReference); err == nil && lookup != nil {
		e, err := lookup(ctx, key)
		if err != nil {
			return refused(http.StatusServiceUnavailable, "reading the tracker's store failed: %v", err)
		}
		if tracked = trackingOf(e); e.Tracked {
			if r := e.Movement.ServiceReference; r != "" && r != p.Reference {
				return refused(http.StatusForbidden, "the checkout %q was created as session %q, not %q", clientReference, r, p.Reference)
			}
			o.judge(e.Movement)
		}
	}
	return confirmation{status: http.StatusOK, truth: checkoutTruth(p, o.State == EventExpired), outcome: &o, tracking: tracked}
}

// confirmedKey carries a confirmation from the handler to the function it calls.
type confirmedKey struct{}

// withConfirmation returns ctx carrying conf, the status check's confirmation of the
// event the handler passes on, when it confirmed a movement or a checkout.
func withConfirmation(ctx context.Context, conf confirmation) context.Context {
	if conf.outcome == nil {
		return ctx
	}
	return context.WithValue(ctx, confirmedKey{}, conf)
}

// confirmedBefore returns the confirmation of the event being handled, made by the
// handler, and false when the handler confirmed no movement or checkout.
func confirmedBefore(ctx context.Context) (confirmation, bool) {
	conf, ok := ctx.Value(confirmedKey{}).(confirmation)
	return conf, ok
}

// UnconfirmedClaim is a webhook or callback as its unauthenticated sender wrote it: the
// event ParseEvent read from it and its raw body. It is kept apart for audit and
// debugging only. Nothing in it is confirmed: never act on it (fulfil, refund, pay out);
// act on the event the handler's function receives, or on the Tracker's Outcome.
type UnconfirmedClaim struct {
	// Event is the claim as parsed; nil when the body parses as no event.
	Event Event
	// Body is the raw body.
	Body []byte
}

// claimKey carries the claim being handled.
type claimKey struct{}

func withClaim(ctx context.Context, claim UnconfirmedClaim) context.Context {
	return context.WithValue(ctx, claimKey{}, claim)
}

// UnconfirmedClaimFrom returns, inside a function called by the webhook handler, the
// claim as the sender wrote it, beside the confirmed event the function received. It
// reports false outside a handler.
func UnconfirmedClaimFrom(ctx context.Context) (UnconfirmedClaim, bool) {
	if ctx == nil {
		return UnconfirmedClaim{}, false
	}
	claim, ok := ctx.Value(claimKey{}).(UnconfirmedClaim)
	return claim, ok
}

func (c *TransactionCallback) claimed() (int64, string) {
	return int64(c.Data.Amount), c.Data.TransactionID
}

func (c *PayoutCallback) claimed() (int64, string) {
	return int64(c.Data.Amount), c.Data.TransactionID
}

func (c *MandateCallback) claimed() (int64, string) { return 0, c.ServicePreapprovalID }

// contradicted keeps, in a store that records them (storekit.ContradictionRecorder),
// that the status check contradicted ev, a callback of a money movement refused for it:
// Reconcile then lists the movement. It settles nothing, and a store without the
// record, or a reference nothing tracks, leaves only the log of the refusal.
func contradicted(ctx context.Context, store *storeGate, now time.Time, ev Event, body []byte, logger *slog.Logger) {
	if store == nil || nilEvent(ev) || !isMovementCallback(ev) {
		return
	}
	record := store.recordContradiction()
	if record == nil {
		return
	}
	if len(body) > MaxEventBytes {
		body = nil
	}
	// The sender may have gone; the record is the merchant's, kept all the same.
	if _, err := record(context.WithoutCancel(ctx), eventKey(ev), ev.State(), body, now); err != nil {
		logger.LogAttrs(ctx, slog.LevelWarn, "billing: the contradicted callback was not recorded",
			append(eventAttrs(ev), slog.String("error", err.Error()))...)
	}
}

// callbackBody is the raw body of ev for the store: the one the handler read (the
// claim's), else ev encoded again (a callback given to Deliver by the merchant's own
// code).
func callbackBody(ctx context.Context, ev Event) []byte {
	if claim, ok := UnconfirmedClaimFrom(ctx); ok && len(claim.Body) > 0 {
		return claim.Body
	}
	body, err := json.Marshal(ev)
	if err != nil || len(body) > MaxEventBytes {
		return nil
	}
	return body
}
