// The webhook handler: the merchant's entry point for webhooks and callbacks. Parsing lives
// in events.go, confirmation against the status checks in confirm.go, the store-backed
// dedupe in webhooks_store.go.

package billing

import (
	"context"
	"log/slog"
	"net/http"
)

// MaxEventBytes is the largest webhook or callback body the handler reads; a larger one
// is answered 413.
const MaxEventBytes = 1 << 20

// DefaultDedupeSize is how many handled events WithDedupe remembers when given n <= 0.
const DefaultDedupeSize = 10_000

// WebhookOption configures NewWebhookHandler.
type WebhookOption func(*webhookHandler)

// WithDedupe makes the handler answer 200 to a redelivery of an event it has already
// handled, without calling the function again. Events are the same when their kind,
// reference and state are (with WithStatusCheckConfirmation, as the status check tells
// them: a checkout by the payment's reference Payments.Get returns), never by what else
// the sender wrote, such as a response code; so a later different state of the same
// reference (a failure after a pending notice, say) still reaches the function. The
// handler remembers the last n events (DefaultDedupeSize when n <= 0), so memory stays
// bounded. An event is remembered only once the function returned nil for it: one whose
// handling failed or panicked is handled again when redelivered, and a redelivery that
// arrives while the first copy is still being handled is answered 503 with Retry-After.
func WithDedupe(n int) WebhookOption {
	if n <= 0 {
		n = DefaultDedupeSize
	}
	return func(h *webhookHandler) { h.seen = newSeenSet(n) }
}

// WithWebhookLogger sends the handler's logs to l: refused, unconfirmed and failed
// events at warning level, duplicates at debug level. Without it the handler is silent.
func WithWebhookLogger(l *slog.Logger) WebhookOption {
	return func(h *webhookHandler) {
		if l != nil {
			h.logger = scrubLogger(l, nil)
		}
	}
}

// WithStatusCheckConfirmation makes the handler confirm every event that claims a final
// state, success or failure, against the matching status check through c before the
// function sees it. The service signs no callback, so nothing else proves that a
// callback came from the service: a forged success could ship an unpaid order, and a
// forged failure could make a merchant pay a payout twice.
//
// A transaction callback is checked with Payments.ReceiveStatus and
// Mandates.ChargeStatus, a payout callback with Payouts.SendStatus and
// Payouts.BankTransferStatus (exactly one of the two must know the reference; under
// Tracker.Handler, only the status check of the kind the reference is tracked as), a
// mandate callback with Mandates.Status, and a checkout event with Payments.Get. The
// function then receives the status check's truth, built from it alone: a fresh
// *TransactionCallback, *PayoutCallback or *MandateCallback holding the state, code,
// amounts and ids the status check reported, every field only a callback carries
// (AmountCharged, OrderId, RecipientName, a MSISDN, metadata) left empty; for a checkout
// event, a *CheckoutEvent whose Data is the payment Payments.Get returned. The claim as
// the sender wrote it is kept apart: UnconfirmedClaimFrom.
//
// An event the status check contradicts is refused with 403: it says another final
// state, no status check (or more than one) knows the reference, or the event's amount,
// currency, metadata, session or transaction id differs from the service's. One it cannot confirm yet (the status
// check says pending, or could not be reached) is answered 503 with Retry-After, so a
// genuine sender delivers it again later. Both are logged. Pending notices and events
// without a status check (the subscription trial) pass unchecked: they settle nothing.
func WithStatusCheckConfirmation(c *Client) WebhookOption {
	return func(h *webhookHandler) { h.confirmer = c }
}

// NewWebhookHandler returns the http.Handler to mount at the webhook URL and the callback
// URLs. It accepts POST only (405 otherwise), reads at most MaxEventBytes (413 beyond),
// answers 400 to a body ParseEvent refuses, and calls fn with the typed event: 200 when fn
// returns nil, 500 when it returns an error, so the sender delivers the event again.
//
// With WithStatusCheckConfirmation, fn receives confirmed facts typed by their state: a
// checkout is a *CheckoutEvent (payment.succeeded) only when the service holds it
// SUCCEEDED, a *CheckoutFailedEvent (payment.failed) when FAILED or expired, a
// *CheckoutPendingEvent otherwise. An event nothing confirms (a kind the SDK does not
// know, a subscription trial notice under confirmation) reaches fn as an
// *UnconfirmedEvent, whose Kind is EventKindUnconfirmed: never act on it as a money
// fact. Dedupe keys come from the confirmed facts (kind, reference, confirmed state), so
// one fact delivered in several claim shapes reaches fn once; unconfirmed events reach
// it each time they are delivered.
//
// fn may be called concurrently. Redeliveries reach fn again unless WithDedupe is given.
//
// The handler keeps no clock of its own while it reads: serve it from an http.Server with
// a ReadTimeout (and ReadHeaderTimeout), which bounds a sender that trickles its body.
func NewWebhookHandler(fn func(context.Context, Event) error, opts ...WebhookOption) http.Handler {
	h := newWebhookHandler(fn, opts...)
	h.other = nil // fn receives every event
	return h
}

func newWebhookHandler(fn func(context.Context, Event) error, opts ...WebhookOption) *webhookHandler {
	h := &webhookHandler{fn: fn, logger: slog.New(slog.DiscardHandler)}
	for _, opt := range opts {
		opt(h)
	}
	return h
}

// WithEventHandler gives Tracker.Handler the merchant's function for the events that
// settle no tracked movement: the subscription trial webhook, a checkout webhook for a
// session no Tracker tracks (confirmed first: fn receives the payment Payments.Get
// returned), a money movement no Tracker tracks whose callback the status check
// confirmed (an *UntrackedMovementEvent: started by another system, by the billing
// command's trigger, or by hand), and any other event ParseEvent reads that is no money
// movement's. Without it such events are answered 200 and logged at warning level,
// never dropped in silence. An error from fn is answered 500, so the sender delivers the
// event again. The callbacks of tracked movements never reach fn: they settle their
// movement, reported by Await and OnOutcome. NewWebhookHandler ignores this option: its
// function receives every event. fn receives the types NewWebhookHandler describes: a
// checkout in the type of its confirmed state, an untracked movement as
// *UntrackedMovementEvent, and the trial notice and unknown kinds as *UnconfirmedEvent.
func WithEventHandler(fn func(context.Context, Event) error) WebhookOption {
	return func(h *webhookHandler) { h.other = fn }
}

type webhookHandler struct {
	fn        func(context.Context, Event) error
	seen      *seenSet      // nil without WithDedupe
	stored    *storeDedupe  // nil without WithDedupeStore
	confirmer *Client       // nil without WithStatusCheckConfirmation
	lookup    trackedLookup // the Tracker's store under Tracker.Handler, else nil
	other     func(context.Context, Event) error
	logger    *slog.Logger
}

// ServeHTTP is the inbound pipeline, its steps in order: the gate reads the body once
// into its canonical form and the shape reads its event (readEvent); confirm asks the
// status check; dedupe answers a redelivery; settle and hand out are the function's
// (under Tracker.Handler, Tracker.deliver), whose result handOut answers the sender.
func (h *webhookHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, ok := receiveBody(w, r) // gate (inbound.go)
	if !ok {
		return
	}
	claim, err := readEvent(body) // gate, then shape (events.go)
	if err != nil {
		refuseUnread(r.Context(), w, h.logger, err)
		return
	}
	ctx := withClaim(r.Context(), UnconfirmedClaim{Event: claim, Body: body})
	if h.seenClaim(ctx, w, claim) { // dedupe of the very claim (dedupe.go)
		return
	}
	ctx, ev, confirmed, ok := h.confirm(ctx, w, claim, body) // confirm (confirm.go)
	if !ok {
		return
	}
	done, ok := h.dedupe(ctx, w, r, claim, ev, confirmed, body) // dedupe (dedupe.go)
	if !ok {
		return
	}
	handled := false
	defer func() { done(handled) }()
	handled = h.handOut(ctx, w, ev) // settle and hand out (handout.go)
}
