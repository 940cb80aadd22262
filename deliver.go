package billing

// The entry of the inbound pipeline into a Tracker: Deliver, and Handler, which mounts
// the webhook handler with Deliver as its function. A delivered event goes through the
// steps in order: confirm (confirm.go), settle (settle.go), hand out (handout.go).

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
)

// ErrUnconfirmed is matched (errors.Is) by the error of a Deliver whose callback the
// status check contradicts: another final state, another amount or transaction id, or a
// reference no status check knows. Such a callback settles nothing; a genuine sender
// never sends one, so refuse it (the handler answers 403).
var ErrUnconfirmed = errors.New("billing: the status check does not confirm the callback")

// Deliver gives the Tracker a parsed callback. Nothing in a callback is signed, so a
// callback of a transaction, a payout, a mandate or a checkout that claims a final state
// (failure as well as success) is confirmed by the status check through the Tracker's
// client first: by the status check of the kind its reference is tracked as (an
// untracked reference must be known to exactly one kind), for a checkout by
// Payments.Get. The outcome settled in the store is built from the status check alone:
// it resolves the matching Awaits on every instance, now or later. The confirmed callback
// of a movement the Tracker does not track settles its outcome all the same (an Await of
// its reference finds it) and is logged at warning level as money no tracker tracks
// (Handler gives it to WithEventHandler's function as an *UntrackedMovementEvent).
// Pending callbacks, checkout webhooks of sessions the Tracker does not track and other
// events settle nothing and are logged (Handler gives them to WithEventHandler's
// function).
//
// The error says what to answer the sender: one matching ErrStillPending means the
// status check cannot confirm the callback yet (still pending, unreachable, or
// answering about another reference), so have it delivered again later; ErrUnconfirmed
// means the status check contradicts it (recorded for Reconcile, as Handler does); any
// other error means the store did not record it. Handler does all of this, and confirms each callback with a single status check:
// mount it rather than calling Deliver where you can.
func (t *Tracker) Deliver(ctx context.Context, ev Event) error {
	return t.deliver(ctx, ev, nil, t.opts.Logger)
}

// deliver is Deliver, giving the events that settle nothing to other (nil: logged).
//
// Its steps, in order: confirm (confirm.go), settle (settle.go), hand out (handout.go).
func (t *Tracker) deliver(ctx context.Context, ev Event, other func(context.Context, Event) error, logger *slog.Logger) error {
	if ctx == nil {
		return errNilContext()
	}
	if nilEvent(ev) {
		return invalid("event", "is required")
	}
	t.observeCallback(ctx, ev)
	if !isMovementCallback(ev) {
		return settlesNothing(ctx, ev, other, logger, "billing webhook settles no movement")
	}
	if ev.State() == EventPending {
		return nil
	}
	conf, err := t.confirmDelivered(ctx, ev, logger) // confirm (confirm.go)
	if err != nil {
		return err
	}
	out, why, err := t.settleConfirmed(ctx, conf, callbackBody(ctx, ev)) // settle (settle.go)
	if err != nil || out == nil {
		return err
	}
	return settlesNothing(ctx, out, other, logger, why) // hand out (handout.go)
}

// Handler returns an http.Handler for the callback URLs and the webhook URL (see
// NewWebhookHandler for the answers it gives): the one endpoint a merchant needs.
//
// Money movement callbacks (transaction, payout, mandate) and the checkout webhooks of
// sessions CreateCheckout tracks are confirmed with the status check through the
// Tracker's client (see Deliver) and settle their movement; the merchant learns the
// outcome from Await or OnOutcome, never from the callback. A forged success or a forged
// failure settles nothing, and its sender is told 403 (contradicted) or 503 (not
// confirmed yet); a contradicted one of a tracked movement is recorded, when the store
// records them, for Reconcile to list (Reconciliation.Contradicted). Every other event goes to the function given with WithEventHandler:
// the subscription trial webhook, the checkout webhook of a session no Tracker tracks
// (confirmed first, as the payment Payments.Get returned), the confirmed callback of a
// money movement no Tracker tracks (an *UntrackedMovementEvent, its outcome settled
// too), and any other event; without WithEventHandler they are answered 200 and logged
// at warning level.
//
// It records each callback with its raw body in the Tracker's store, deduplicated across
// every instance sharing the store: a redelivery already handled is answered 200, one
// being handled elsewhere 503 "retry later". Options add to this (WithEventHandler,
// WithDedupe, WithWebhookLogger); a WithStatusCheckConfirmation among them replaces the
// Tracker's client.
func (t *Tracker) Handler(opts ...WebhookOption) http.Handler {
	stored := withCallbackStore(t.store, t.opts.Owner, t.opts.Clock, t.opts.Lease)
	base := []WebhookOption{stored, WithStatusCheckConfirmation(t.client), withLookup(t.store.Get), WithWebhookLogger(t.opts.Logger)}
	h := newWebhookHandler(nil, append(base, opts...)...)
	h.fn = func(ctx context.Context, ev Event) error { return t.deliver(ctx, ev, h.other, h.logger) }
	return h
}

// withLookup makes the handler confirm a tracked reference by its tracked kind.
func withLookup(lookup trackedLookup) WebhookOption {
	return func(h *webhookHandler) { h.lookup = lookup }
}

// observeCallback tells the observer of a callback delivered.
func (t *Tracker) observeCallback(ctx context.Context, ev Event) {
	if t.opts.Observer != nil && isMovementCallback(ev) {
		t.opts.Observer.CallbackReceived(ctx, ev)
	}
}
