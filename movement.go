package billing

import (
	"context"
	"fmt"
	"time"
)

// This file models a money movement once: each Kind's row in the movements table says
// how its callbacks look and how its status check reads as an Outcome. The Tracker and
// the webhook confirmation read the table instead of switching on kinds.

// Kind is the kind of money movement a Tracker awaits.
type Kind string

// The money movements a Tracker resolves, each with its status check.
const (
	// KindReceive is a mobile-money prompt (Payments.Receive; Payments.ReceiveStatus).
	KindReceive Kind = "receive"
	// KindSend is a mobile-money payout (Payouts.Send; Payouts.SendStatus).
	KindSend Kind = "send"
	// KindBankTransfer is a send-to-bank payout (Payouts.SendToBank;
	// Payouts.BankTransferStatus, from the client's disbursement account).
	KindBankTransfer Kind = "bank_transfer"
	// KindDirectDebit is a charge under a mandate (Mandates.Charge; Mandates.ChargeStatus).
	KindDirectDebit Kind = "direct_debit"
	// KindMandate is a mandate awaiting approval (Mandates.Create or Reactivate;
	// Mandates.Status), keyed by its clientReferenceId.
	KindMandate Kind = "mandate"
)

// movement is one row of the table: what the SDK knows of a kind of money movement.
type movement struct {
	// callback is the shape of the kind's callbacks; two kinds share each shape
	// (receive and direct debit, send and send-to-bank).
	callback EventKind
	// status asks the kind's status check about a client reference and reads its answer
	// as an Outcome (Kind, ClientReference, Source and At left to the caller).
	status func(ctx context.Context, c *Client, clientReference string) (*Outcome, error)
}

// movements is the table, one row a kind.
var movements = map[Kind]movement{
	KindReceive: {EventKindTransaction, statusOf(
		func(ctx context.Context, c *Client, ref string) (*ReceiveTransaction, error) {
			return c.Payments.ReceiveStatus(ctx, ref)
		},
		func(r *ReceiveTransaction) Outcome {
			return Outcome{Code: r.ResponseCode, TransactionID: r.TransactionID, ExternalTransactionID: r.ExternalTransactionID,
				Amount: r.Amount, Charges: r.Charges}
		})},
	KindDirectDebit: {EventKindTransaction, statusOf(
		func(ctx context.Context, c *Client, ref string) (*DirectDebitTransaction, error) {
			return c.Mandates.ChargeStatus(ctx, ref)
		},
		func(r *DirectDebitTransaction) Outcome {
			return Outcome{Code: r.ResponseCode, TransactionID: r.TransactionID, ExternalTransactionID: r.ExternalTransactionID,
				Amount: int64(r.Amount), Charges: int64(r.Charges)}
		})},
	KindSend: {EventKindPayout, statusOf(
		func(ctx context.Context, c *Client, ref string) (*SendTransaction, error) {
			return c.Payouts.SendStatus(ctx, ref)
		},
		func(r *SendTransaction) Outcome {
			return Outcome{Code: r.ResponseCode, TransactionID: r.TransactionID, ExternalTransactionID: r.NetworkTransactionID,
				Amount: r.Amount, Charges: r.Fees}
		})},
	KindBankTransfer: {EventKindPayout, statusOf(
		func(ctx context.Context, c *Client, ref string) (*BankTransferTransaction, error) {
			return c.Payouts.BankTransferStatus(ctx, &BankTransferStatusParams{ClientReference: ref})
		},
		func(r *BankTransferTransaction) Outcome {
			return Outcome{Code: r.ResponseCode, TransactionID: r.TransactionID, ExternalTransactionID: r.NetworkTransactionID,
				Amount: int64(r.Amount), Charges: int64(r.Fees)}
		})},
	KindMandate: {EventKindMandate, statusOf(
		func(ctx context.Context, c *Client, ref string) (*Mandate, error) {
			return c.Mandates.Status(ctx, ref)
		},
		func(m *Mandate) Outcome { return Outcome{TransactionID: m.ServicePreApprovalID} })},
}

// movementKinds lists every kind, in the order the webhook confirmation asks their
// status checks about a callback whose shape two kinds share.
var movementKinds = []Kind{KindReceive, KindDirectDebit, KindSend, KindBankTransfer, KindMandate}

// statusResult is what every status-check result says of its state.
type statusResult interface {
	IsFinal() bool
	Succeeded() bool
}

// statusOf builds a row's status function from its status check and the reading of its
// result's fields; the state comes from the result's own IsFinal and Succeeded.
func statusOf[T statusResult](check func(context.Context, *Client, string) (T, error), read func(T) Outcome) func(context.Context, *Client, string) (*Outcome, error) {
	return func(ctx context.Context, c *Client, clientReference string) (*Outcome, error) {
		r, err := check(ctx, c, clientReference)
		if err != nil {
			return nil, err
		}
		o := read(r)
		switch {
		case r.Succeeded():
			o.State = EventSucceeded
		case r.IsFinal():
			o.State = EventFailed
		default:
			o.State = EventPending
		}
		return &o, nil
	}
}

// callbackKind is the event kind whose callbacks report a movement of kind k.
func (k Kind) callbackKind() (EventKind, bool) {
	m, ok := movements[k]
	return m.callback, ok
}

// isMovementCallback reports whether ev has the shape of the callbacks of some kind.
func isMovementCallback(ev Event) bool {
	for _, kind := range movementKinds {
		if movements[kind].callback == ev.Kind() {
			return true
		}
	}
	return false
}

// statusOutcome asks the status check of kind about clientReference and returns what it
// says as an Outcome (Source SourceStatusCheck, At unset).
func statusOutcome(ctx context.Context, c *Client, kind Kind, clientReference string) (*Outcome, error) {
	m, ok := movements[kind]
	if !ok {
		return nil, invalid("kind", fmt.Sprintf("unknown kind %q", kind))
	}
	o, err := m.status(ctx, c, clientReference)
	if err != nil {
		return nil, err
	}
	o.Kind, o.ClientReference, o.Source = kind, clientReference, SourceStatusCheck
	return o, nil
}

// OutcomeSource says how a Tracker learned an outcome.
type OutcomeSource string

// The sources of an outcome.
const (
	// SourceCallback: the callback delivered to the Tracker.
	SourceCallback OutcomeSource = "callback"
	// SourceStatusCheck: the status check, after no callback came in time.
	SourceStatusCheck OutcomeSource = "status_check"
	// SourceRequest: the movement's own request was refused outright (an *APIError
	// that is not ErrOutcomeUnknown, or invalid input), so nothing moved. Only the
	// Tracker's Send, Receive, SendToBank, Charge and CreateMandate settle this way.
	SourceRequest OutcomeSource = "request"
)

// Outcome is what a Tracker knows of a money movement.
type Outcome struct {
	// ID names a final outcome, the same on every instance and in every report of it
	// (the store's Settlement.ID): dedupe OnOutcome on it. Empty while pending.
	ID              string
	Kind            Kind
	ClientReference string
	// State is EventSucceeded or EventFailed once final, EventPending otherwise.
	State EventState
	// Code is the response code of the callback or the status check; empty for a
	// mandate, whose messages carry none.
	Code ResponseCode
	// TransactionID is the service's id of the transaction (the servicePreApprovalId of
	// a mandate); ExternalTransactionID is the network's, when there is one.
	TransactionID         string
	ExternalTransactionID string
	// Amount and Charges are in minor units (5000 is 50.00), whichever unit the wire
	// used. A failure callback may report Amount 0.
	Amount  int64
	Charges int64
	// Source says where the outcome came from; empty when nothing was learned at all
	// (no callback, and no status check has answered yet).
	Source OutcomeSource
	// Event is the callback when Source is SourceCallback.
	Event Event
	// At is when the Tracker learned the outcome, by its clock.
	At time.Time
}

// Succeeded reports whether the money moved (or the mandate was approved): fulfil the
// order.
func (o *Outcome) Succeeded() bool { return o.State == EventSucceeded }

// Failed reports whether the movement failed finally: nothing moved.
func (o *Outcome) Failed() bool { return o.State == EventFailed }

// IsFinal reports whether the outcome is final, succeeded or failed.
func (o *Outcome) IsFinal() bool { return o.State == EventSucceeded || o.State == EventFailed }

// IsPending reports whether the final state is still unknown. A pending outcome is not a
// failure: the money may still move.
func (o *Outcome) IsPending() bool { return !o.IsFinal() }
