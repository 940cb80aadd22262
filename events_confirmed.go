package billing

// This file holds the types merchant code receives for facts the status check
// confirmed, one type per confirmed state of a checkout and one for a money movement no
// Tracker tracks, and the type of an event the SDK could not confirm (DESIGN "One gate per boundary", confirmed facts). A checkout the
// service holds FAILED or expired is never handed on as payment.succeeded: a merchant
// who switches on the kind ships only what was paid.

// The kinds of the confirmed checkout states that are no success, and of an unconfirmed
// event. ParseEvent returns none of them: the webhook handler and the Tracker build them
// from the status check, or, for EventKindUnconfirmed, from an event nothing confirms.
const (
	// EventKindPaymentFailed is a checkout the status check confirmed ended unpaid:
	// failed, or expired because nobody paid it in time. Nothing moved.
	EventKindPaymentFailed EventKind = "payment.failed"
	// EventKindPaymentPending is a checkout the status check says is not final yet.
	EventKindPaymentPending EventKind = "payment.pending"
	// EventKindUnconfirmed is an event the SDK could not confirm: an event kind it does
	// not know, or a notice no status check can confirm (the subscription trial). It is
	// a claim, never a money fact.
	EventKindUnconfirmed EventKind = "unconfirmed"
	// EventKindUntrackedMovement is a money movement no Tracker tracks (started by
	// another system, by the billing command's trigger, or by hand) whose callback the
	// status check confirmed: a fact, of money nobody here asked to move.
	EventKindUntrackedMovement EventKind = "movement.untracked"
)

// CheckoutFailedEvent is a checkout session the status check confirmed ended unpaid:
// Data is the payment Payments.Get returned (FAILED), or the movement's record when the
// Tracker gave the session up as expired. Nothing moved: never fulfil an order on it.
type CheckoutFailedEvent struct {
	// Data is the payment as the service holds it.
	Data Payment `json:"data"`
	// Expired says the session ended because nobody paid it in time (the service's
	// failureCode "expired", or the Tracker's CheckoutExpiry).
	Expired bool `json:"expired,omitempty"`
}

// Kind returns EventKindPaymentFailed.
func (*CheckoutFailedEvent) Kind() EventKind { return EventKindPaymentFailed }

// Reference returns the payment's reference.
func (e *CheckoutFailedEvent) Reference() string { return e.Data.Reference }

// State is EventExpired for an expired session, EventFailed otherwise.
func (e *CheckoutFailedEvent) State() EventState {
	if e.Expired {
		return EventExpired
	}
	return EventFailed
}

// Code returns "": the checkout record carries no response code.
func (*CheckoutFailedEvent) Code() ResponseCode { return "" }

// CheckoutPendingEvent is a checkout session the status check says is not final yet:
// Data is the payment Payments.Get returned.
type CheckoutPendingEvent struct {
	// Data is the payment as the service holds it.
	Data Payment `json:"data"`
}

// Kind returns EventKindPaymentPending.
func (*CheckoutPendingEvent) Kind() EventKind { return EventKindPaymentPending }

// Reference returns the payment's reference.
func (e *CheckoutPendingEvent) Reference() string { return e.Data.Reference }

// State returns EventPending.
func (*CheckoutPendingEvent) State() EventState { return EventPending }

// Code returns "": the checkout record carries no response code.
func (*CheckoutPendingEvent) Code() ResponseCode { return "" }

// UnconfirmedEvent is an event the SDK could not confirm, UNCONFIRMED: its kind is one
// the SDK does not know, or it is a notice no status check can confirm (the subscription
// trial). Everything in it is what an unauthenticated sender wrote: never act on it as
// a money fact (fulfil, refund, pay out). Its Kind is always EventKindUnconfirmed, so a
// switch on the kind never takes it for the event it claims to be; ClaimedKind says what
// it claims.
type UnconfirmedEvent struct {
	// Unconfirmed is always true: the mark that nothing in this event was confirmed.
	Unconfirmed bool `json:"unconfirmed"`
	// ClaimedKind is the kind the body names: its "event" field, or the kind of the
	// event ParseEvent read from it.
	ClaimedKind EventKind `json:"claimedKind"`
	// Claim is the event ParseEvent read from the body, nil for a kind it does not know.
	Claim Event `json:"-"`
	// Body is the raw body as received.
	Body []byte `json:"-"`
}

// unconfirmed returns the unconfirmed event of a body: claim is ParseEvent's event, nil
// for an unknown kind named kind.
func unconfirmed(kind EventKind, claim Event, body []byte) *UnconfirmedEvent {
	if claim != nil {
		kind = claim.Kind()
	}
	return &UnconfirmedEvent{Unconfirmed: true, ClaimedKind: kind, Claim: claim, Body: body}
}

// Kind returns EventKindUnconfirmed.
func (*UnconfirmedEvent) Kind() EventKind { return EventKindUnconfirmed }

// Reference returns the reference the claim names, "" for an unknown kind.
func (e *UnconfirmedEvent) Reference() string {
	if e.Claim != nil {
		return e.Claim.Reference()
	}
	return ""
}

// State returns EventUnknown: nothing about the claim's state is known.
func (*UnconfirmedEvent) State() EventState { return EventUnknown }

// Code returns "": a code written by the sender is no fact.
func (*UnconfirmedEvent) Code() ResponseCode { return "" }

// UntrackedMovementEvent is a money movement that no Tracker tracks, UNTRACKED, whose
// callback the status check confirmed: a receive, send, bank transfer, direct debit or
// mandate started by another system, by the billing command's trigger, or by hand. It
// is a confirmed fact, built from the status check alone like every Outcome, but of
// money nobody asked this Tracker to move: it settles no tracked movement, OnOutcome
// never reports it, and an order is never fulfilled on it by the Tracker. Look at it:
// money nobody expected is the first thing an operator must see. Its Kind is always
// EventKindUntrackedMovement, so a switch on the kind never takes it for a tracked
// outcome. Tracker.Handler gives it to the function of WithEventHandler, or logs it at
// warning level when there is none.
type UntrackedMovementEvent struct {
	// Untracked is always true: the mark that no Tracker tracks this movement.
	Untracked bool `json:"untracked"`
	// Outcome is the movement's final outcome as the Tracker's store keeps it: the kind
	// the status check confirmed it as, its client reference, state, code, amounts and
	// ids, Source SourceCallback, and Event, the confirmed event of its kind built from
	// those fields. An Await of its kind and reference returns the same outcome.
	Outcome Outcome `json:"outcome"`
}

// Kind returns EventKindUntrackedMovement.
func (*UntrackedMovementEvent) Kind() EventKind { return EventKindUntrackedMovement }

// Reference returns the movement's client reference.
func (e *UntrackedMovementEvent) Reference() string { return e.Outcome.ClientReference }

// State returns the confirmed final state: EventSucceeded when the money moved (or the
// mandate was approved), EventFailed when nothing moved.
func (e *UntrackedMovementEvent) State() EventState { return e.Outcome.State }

// Code returns the status check's response code ("" for a mandate).
func (e *UntrackedMovementEvent) Code() ResponseCode { return e.Outcome.Code }

// checkoutTruth is the confirmed event of a checkout payment as the service holds it,
// typed by its state: succeeded, failed (or expired), or pending.
func checkoutTruth(p *Payment, expired bool) Event {
	switch {
	case p.Status == PaymentStatusSucceeded && !expired:
		return &CheckoutEvent{Event: EventKindPaymentSucceeded, Data: *p}
	case p.Status == PaymentStatusFailed || expired:
		return &CheckoutFailedEvent{Data: *p, Expired: expired}
	}
	return &CheckoutPendingEvent{Data: *p}
}
