package billing

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
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
	// KindCheckout is a hosted checkout session (Payments.CreateCheckout; Payments.Get),
	// keyed by the merchant's CheckoutParams.ClientReference. Its status check asks
	// Payments.Get about the session's reference once the Tracker knows it, else about
	// the client reference.
	KindCheckout Kind = "checkout"
)

// kindRules is one row of the table: what the SDK knows of a kind of money kindRules.
type kindRules struct {
	// callback is the shape of the kind's callbacks; two kinds share each of the
	// transaction and payout shapes (receive and direct debit, send and send-to-bank).
	callback EventKind
	// status asks the kind's status check about the movement and reads its answer as an
	// Outcome (Kind, ClientReference, Source and At left to the caller), with named set
	// to the client reference the answer names, when it names one.
	status func(ctx context.Context, c *Client, m movement) (*Outcome, error)
	// event builds the confirmed event of a final outcome from the outcome's own fields:
	// what the status check and the movement's record say, nothing a callback claimed.
	event func(o *Outcome) Event
	// maxReference bounds the reference its callbacks name.
	maxReference int
}

// movements is the table, one row a kind.
var movements = map[Kind]kindRules{
	KindReceive: {EventKindTransaction, statusOf(
		func(ctx context.Context, c *Client, m movement) (*ReceiveTransaction, error) {
			return c.Payments.ReceiveStatus(ctx, m.ClientReference)
		},
		func(r *ReceiveTransaction) Outcome {
			return Outcome{Code: r.ResponseCode, TransactionID: r.TransactionID, ExternalTransactionID: r.ExternalTransactionID,
				Amount: r.Amount, Charges: r.Charges, Currency: r.CurrencyCode, named: r.ClientReference, amountNamed: r.amountNamed}
		}), transactionEvent, maxClientReference},
	KindDirectDebit: {EventKindTransaction, statusOf(
		func(ctx context.Context, c *Client, m movement) (*DirectDebitTransaction, error) {
			return c.Mandates.ChargeStatus(ctx, m.ClientReference)
		},
		func(r *DirectDebitTransaction) Outcome {
			return Outcome{Code: r.ResponseCode, TransactionID: r.TransactionID, ExternalTransactionID: r.ExternalTransactionID,
				Amount: int64(r.Amount), Charges: int64(r.Charges), Currency: r.CurrencyCode, named: r.ClientReference, amountNamed: r.amountNamed}
		}), transactionEvent, maxClientReference},
	KindSend: {EventKindPayout, statusOf(
		func(ctx context.Context, c *Client, m movement) (*SendTransaction, error) {
			return c.Payouts.SendStatus(ctx, m.ClientReference)
		},
		func(r *SendTransaction) Outcome {
			return Outcome{Code: r.ResponseCode, codeImplied: r.codeImplied, TransactionID: r.TransactionID, ExternalTransactionID: r.NetworkTransactionID,
				Amount: r.Amount, Charges: r.Fees, named: r.ClientReference, amountNamed: r.amountNamed}
		}), payoutEvent, maxClientReference},
	KindBankTransfer: {EventKindPayout, statusOf(
		func(ctx context.Context, c *Client, m movement) (*BankTransferTransaction, error) {
			return c.Payouts.BankTransferStatus(ctx, &BankTransferStatusParams{ClientReference: m.ClientReference})
		},
		func(r *BankTransferTransaction) Outcome {
			return Outcome{Code: r.ResponseCode, codeImplied: r.codeImplied, TransactionID: r.TransactionID, ExternalTransactionID: r.NetworkTransactionID,
				Amount: int64(r.Amount), Charges: int64(r.Fees), named: r.ClientReference, amountNamed: r.amountNamed}
		}), payoutEvent, maxClientReference},
	KindMandate: {EventKindMandate, statusOf(
		func(ctx context.Context, c *Client, m movement) (*Mandate, error) {
			return c.Mandates.Status(ctx, m.ClientReference)
		},
		func(m *Mandate) Outcome {
			return Outcome{TransactionID: m.ServicePreApprovalID, named: m.ClientReferenceID}
		}),
		mandateEvent, maxClientReference},
	KindCheckout: {EventKindPaymentSucceeded, statusOf(
		func(ctx context.Context, c *Client, m movement) (*Payment, error) {
			return checkoutRecord(ctx, c, cmp.Or(m.ServiceReference, m.ClientReference))
		}, paymentOutcome), checkoutEvent, maxServiceReference},
}

// movementKinds lists every kind, in a fixed order.
var movementKinds = []Kind{KindReceive, KindDirectDebit, KindSend, KindBankTransfer, KindMandate, KindCheckout}

// checkoutExpiredCode is the failureCode of a checkout session the service ended unpaid
// because nobody paid it in time: the payer left, nothing moved.
const checkoutExpiredCode = "expired"

// paymentOutcome reads a checkout payment as an Outcome: TransactionID is the payment's
// id, ServiceReference the session's reference, Charges its fee.
func paymentOutcome(p *Payment) Outcome {
	named, _ := p.Metadata["clientReference"].(string)
	return Outcome{TransactionID: p.ID, ServiceReference: p.Reference, Amount: p.Amount, Charges: p.Fee, Currency: p.Currency, named: named,
		expired: p.Status == PaymentStatusFailed && strings.EqualFold(p.FailureCode, checkoutExpiredCode)}
}

// transactionEvent is the confirmed transaction callback of a receive or a direct debit.
func transactionEvent(o *Outcome) Event {
	message := "success"
	if !o.moved() {
		message = "failed"
	}
	return &TransactionCallback{ResponseCode: o.Code, Message: message, Data: TransactionCallbackData{
		Amount: DecimalAmount(o.Amount), Charges: DecimalAmount(o.Charges), ClientReference: o.ClientReference,
		TransactionID: o.TransactionID, ExternalTransactionID: o.ExternalTransactionID,
	}}
}

// payoutEvent is the confirmed payout callback of a send or a send-to-bank.
func payoutEvent(o *Outcome) Event {
	return &PayoutCallback{ResponseCode: o.Code, Data: PayoutCallbackData{
		Amount: DecimalAmount(o.Amount), Charges: DecimalAmount(o.Charges), ClientReference: o.ClientReference,
		TransactionID: o.TransactionID, ExternalTransactionID: o.ExternalTransactionID,
	}}
}

// mandateEvent is the confirmed mandate callback: approved or failed, as the status check
// said.
func mandateEvent(o *Outcome) Event {
	status := MandateStatusFailed
	if o.moved() {
		status = MandateStatusApproved
	}
	return &MandateCallback{PreapprovalStatus: status, ServicePreapprovalID: o.TransactionID, ClientReferenceID: o.ClientReference}
}

// checkoutEvent is the confirmed checkout webhook: the payment as the outcome holds it.
// The handler hands on the whole payment Payments.Get returned instead, when it has it.
func checkoutEvent(o *Outcome) Event {
	status := PaymentStatusFailed
	if o.moved() {
		status = PaymentStatusSucceeded
	}
	p := Payment{ID: o.TransactionID, Reference: o.ServiceReference, Status: status, Amount: o.Amount, Currency: o.Currency, Fee: o.Charges}
	if o.ClientReference != "" {
		p.Metadata = Metadata{"clientReference": o.ClientReference}
	}
	return checkoutTruth(&p, o.State == EventExpired)
}

// derivedEvent is the confirmed event of an outcome settled by a callback, built from the
// outcome's fields by its kind's row (the row of the first kind of its callback shape
// when the kind is not known: rows sharing a shape build the same event). It is nil for
// an outcome no callback settled, and for the states no event reports.
func derivedEvent(o *Outcome, callback EventKind) Event {
	if o.Source != SourceCallback || !(o.moved() || o.State == EventFailed) {
		return nil
	}
	m, ok := movements[o.Kind]
	if !ok {
		for _, kind := range movementKinds {
			if movements[kind].callback == callback {
				m, ok = movements[kind], true
				break
			}
		}
	}
	if !ok {
		return nil
	}
	return m.event(o)
}

// statusResult is what every status-check result says of its state.
type statusResult interface {
	IsFinal() bool
	Succeeded() bool
}

// statusOf builds a row's status function from its status check and the reading of its
// result's fields; the state comes from the result's own IsFinal and Succeeded.
func statusOf[T statusResult](check func(context.Context, *Client, movement) (T, error), read func(T) Outcome) func(context.Context, *Client, movement) (*Outcome, error) {
	return func(ctx context.Context, c *Client, m movement) (*Outcome, error) {
		r, err := check(ctx, c, m)
		if err != nil {
			return nil, err
		}
		o := read(r)
		o.State = o.stateOf(r)
		return &o, nil
	}
}

// stateOf is the state a status-check result r says, with what o read of it: succeeded,
// expired (a checkout the service ended unpaid), failed, or pending.
func (o *Outcome) stateOf(r statusResult) EventState {
	switch {
	case r.Succeeded():
		return EventSucceeded
	case o.expired:
		return EventExpired
	case r.IsFinal():
		return EventFailed
	}
	return EventPending
}

// callbackKind is the event kind whose callbacks report a movement of kind k.
func (k Kind) callbackKind() (EventKind, bool) {
	m, ok := movements[k]
	return m.callback, ok
}

// isMovementCallback reports whether ev has the shape of the callbacks of some kind.
func isMovementCallback(ev Event) bool { return ev.Kind().isMovementCallback() }

// isMovementCallback reports whether k is the callback shape of some kind.
func (k EventKind) isMovementCallback() bool {
	_, ok := callbackKinds(k)
	return ok
}

// callbackKinds returns the kinds whose callbacks have the shape k, in the order of
// movementKinds.
func callbackKinds(k EventKind) ([]Kind, bool) {
	var kinds []Kind
	for _, kind := range movementKinds {
		if movements[kind].callback == k {
			kinds = append(kinds, kind)
		}
	}
	return kinds, len(kinds) > 0
}

// checkCallbackReference returns a *ValidationError when ev, a callback of some kind,
// names a reference no movement of its shape can have.
func checkCallbackReference(ev Event) error {
	kinds, _ := callbackKinds(ev.Kind())
	max := 0
	for _, kind := range kinds {
		max = cmp.Or(max, movements[kind].maxReference)
	}
	return lookupReference("reference", ev.Reference(), max)
}

// errAnsweredOther is matched by a status check whose answer names another client
// reference than the one asked about: it is no answer, so the movement stays unknown.
var errAnsweredOther = errors.New("billing: the status check answered about another client reference")

// statusOutcome asks the status check of kind about clientReference and returns what it
// says as an Outcome (Source SourceStatusCheck, At unset).
func statusOutcome(ctx context.Context, c *Client, kind Kind, clientReference string) (*Outcome, error) {
	return movementStatus(ctx, c, movement{Kind: kind, ClientReference: clientReference})
}

// movementStatus asks the status check of m's kind about m and returns what it says as
// an Outcome (Source SourceStatusCheck, At unset). An answer that names another client
// reference, or another session than the one m recorded, is errAnsweredOther. A
// success whose amount or currency differs from what m asked is EventMismatched.
func movementStatus(ctx context.Context, c *Client, m movement) (*Outcome, error) {
	row, ok := movements[m.Kind]
	if !ok {
		return nil, invalid("kind", fmt.Sprintf("unknown kind %q", m.Kind))
	}
	o, err := row.status(ctx, c, m)
	if err != nil {
		return nil, err
	}
	if o.named != "" && o.named != m.ClientReference {
		return nil, fmt.Errorf("%w: asked about %q, answered about %q", errAnsweredOther, m.ClientReference, o.named)
	}
	if m.ServiceReference != "" && o.ServiceReference != "" && o.ServiceReference != m.ServiceReference {
		return nil, fmt.Errorf("%w: asked about session %q, answered about %q", errAnsweredOther, m.ServiceReference, o.ServiceReference)
	}
	o.Kind, o.ClientReference, o.Source = m.Kind, m.ClientReference, SourceStatusCheck
	o.judge(m)
	return o, nil
}

// judge turns a success whose amount or currency differs from what m asked into
// EventMismatched: the money moved, but not as asked. An amount the answer carries is
// compared, zero included; only an absent one (and, for an answer whose reader cannot
// tell absent from zero, a zero) is not named. A currency the answer does not name
// (empty) is not compared.
func (o *Outcome) judge(m movement) {
	if o.State != EventSucceeded {
		return
	}
	if (m.Amount != 0 && (o.amountNamed || o.Amount != 0) && o.Amount != m.Amount) ||
		(m.Currency != "" && o.Currency != "" && !strings.EqualFold(o.Currency, m.Currency)) {
		o.State = EventMismatched
	}
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

// Outcome is what a Tracker knows of a money movement. Every field is the movement's
// own record or what the status check of its kind said; nothing in it is copied from a
// callback, which only prompts the Tracker to ask.
type Outcome struct {
	// ID names a final outcome, the same on every instance and in every report of it
	// (the store's storekit.Settlement.ID): dedupe OnOutcome on it. Empty while pending.
	ID              string
	Kind            Kind
	ClientReference string
	// State is final (EventSucceeded, EventFailed, EventMismatched, EventExpired or
	// EventUnknown) once settled, EventPending otherwise.
	State EventState
	// Code is the response code of the status check that confirmed the outcome; empty
	// for a mandate and a checkout, whose answers carry none.
	Code ResponseCode
	// TransactionID is the service's id of the transaction (the servicePreApprovalId of
	// a mandate, the payment's id of a checkout); ExternalTransactionID is the
	// network's, when there is one.
	TransactionID         string
	ExternalTransactionID string
	// Amount and Charges are in minor units (5000 is 50.00), whichever unit the wire
	// used, as the status check reported them. A failure may report Amount 0.
	Amount  int64
	Charges int64
	// Currency is the currency the status check named for Amount; empty when it names
	// none (a payout's status check).
	Currency string
	// ServiceReference is the service's own reference of the movement when it has one
	// besides TransactionID: a checkout session's payment reference.
	ServiceReference string
	// Source says where the outcome came from; empty when nothing was learned at all
	// (no callback, and no status check has answered yet).
	Source OutcomeSource
	// Event, when a callback settled the outcome (Source SourceCallback), is the
	// confirmed event built from this outcome's fields: the status check's state,
	// code, amounts and ids, with every field only the callback carried left empty.
	// What the callback claimed is kept apart for audit (storekit.Store.Callbacks,
	// UnconfirmedClaimFrom).
	Event Event
	// At is when the Tracker learned the outcome, by its clock.
	At time.Time

	// codeImplied: the status check named no code, so Code is the one State implies.
	codeImplied bool
	// named is the client reference the status check's answer named, "" when none.
	named string
	// expired: the service ended a checkout session unpaid because it expired.
	expired bool
	// amountNamed: the status check's answer carried an amount field, so Amount is
	// what it said, 0 included; otherwise 0 says nothing.
	amountNamed bool
}

// Succeeded reports whether the money moved as asked (or the mandate was approved):
// fulfil the order.
func (o *Outcome) Succeeded() bool { return o.State == EventSucceeded }

// Failed reports whether the movement failed finally: nothing moved.
func (o *Outcome) Failed() bool { return o.State == EventFailed }

// Mismatched reports whether the money moved, but not as asked: the status check's
// amount or currency differs from the one the movement was tracked with. Do not fulfil
// the order as paid; look at it.
func (o *Outcome) Mismatched() bool { return o.State == EventMismatched }

// Expired reports whether a checkout session ended unpaid: the payer left, nothing
// moved.
func (o *Outcome) Expired() bool { return o.State == EventExpired }

// Unknown reports whether the Tracker gave up without learning the state (a checkout
// whose creation's answer was lost and of which nothing was heard): money may have
// moved; look at it with the service.
func (o *Outcome) Unknown() bool { return o.State == EventUnknown }

// IsFinal reports whether the outcome is final: succeeded, failed, mismatched, expired
// or unknown. Nothing settles it again, except that a later state of higher rank
// replaces it (see storekit.MergeOutcome).
func (o *Outcome) IsFinal() bool { return finalRank[o.State] > 0 }

// IsPending reports whether the final state is still unknown. A pending outcome is not a
// failure: the money may still move.
func (o *Outcome) IsPending() bool { return !o.IsFinal() }

// moved reports whether the outcome says money moved.
func (o *Outcome) moved() bool { return o.State == EventSucceeded || o.State == EventMismatched }

// finalRank orders the final states: money moved outranks nothing moved, which outranks
// not knowing. Other states are not final (rank 0).
var finalRank = map[EventState]int{
	EventSucceeded: 3, EventMismatched: 3,
	EventFailed: 2, EventExpired: 2,
	EventUnknown: 1,
}

// The wire forms of a money movement. Each is one unexported struct read with the
// tolerant types of wire.go, so no field can fail the decode of the state beside it,
// and each has one conversion into SDK units that every exported result of that form
// shares. Keys match case-insensitively, so one struct reads both casings.

// unmarshalWire decodes b into the wire form W and fills t from it. null leaves t as
// it is, as encoding/json does for a value without a decoder of its own.
func unmarshalWire[W any, PT interface{ fromWire(*W) }](b []byte, t PT) error {
	if string(bytes.TrimSpace(b)) == "null" {
		return nil
	}
	var w W
	if err := decodeJSON(b, &w); err != nil {
		return err
	}
	t.fromWire(&w)
	return nil
}

// acceptedWire is the acceptance of a receive or a send: the spec's {id, reference,
// status, amount, fee, ...} in minor units, or the provider's {TransactionId,
// ClientReference, Amount, Charges, ...} in cedis.
type acceptedWire struct {
	ID              wireText `json:"id"`
	TransactionID   wireText `json:"TransactionId"`
	Reference       wireText `json:"reference"`
	ClientReference wireText `json:"ClientReference"`
	Status          wireText `json:"status"`
	Currency        wireText `json:"currency"`
	Phone           wireText `json:"phone"`
	Provider        wireText `json:"provider"`
	Name            wireText `json:"name"`
	RecipientName   wireText `json:"RecipientName"`
	Description     wireText `json:"description"`
	CreatedAt       wireTime `json:"createdAt"`

	Amount             wireAmount `json:"amount"`
	Fee                wireAmount `json:"fee"`
	Charges            wireAmount `json:"Charges"`
	AmountAfterCharges wireAmount `json:"AmountAfterCharges"`
	AmountCharged      wireAmount `json:"AmountCharged"`
	AmountDebited      wireAmount `json:"AmountDebited"`
	DeliveryFee        wireAmount `json:"DeliveryFee"`
}

// acceptance is an acceptedWire in SDK units.
type acceptance struct {
	id, reference, status, currency, phone, provider, name, description string
	amount, fee                                                         int64
	createdAt                                                           time.Time
}

func (w *acceptedWire) read() acceptance {
	u := objectUnit(minorUnits, w.Amount, w.Fee, w.Charges, w.AmountAfterCharges, w.AmountCharged, w.AmountDebited, w.DeliveryFee)
	fee := w.Fee
	if !fee.present() {
		fee = w.Charges
	}
	return acceptance{
		id: firstText(w.ID, w.TransactionID), reference: firstText(w.Reference, w.ClientReference),
		status: string(w.Status), currency: string(w.Currency), phone: string(w.Phone), provider: string(w.Provider),
		name: firstText(w.Name, w.RecipientName), description: string(w.Description),
		amount: w.Amount.minorOr0(u), fee: fee.minorOr0(u), createdAt: w.CreatedAt.at,
	}
}

// firstText returns the first non-empty text: the spec's key, then the provider's.
func firstText(texts ...wireText) string {
	for _, t := range texts {
		if t != "" {
			return string(t)
		}
	}
	return ""
}

// transactionWire is the Pascal form of a collection: the transaction callback, the
// direct-debit acceptance and the provider's receive acceptance. Its amounts are
// decimals in major units on both wires.
type transactionWire struct {
	Amount                wireAmount `json:"Amount"`
	Charges               wireAmount `json:"Charges"`
	AmountAfterCharges    wireAmount `json:"AmountAfterCharges"`
	AmountCharged         wireAmount `json:"AmountCharged"`
	DeliveryFee           wireAmount `json:"DeliveryFee"`
	Description           wireText   `json:"Description"`
	ClientReference       wireText   `json:"ClientReference"`
	TransactionID         wireText   `json:"TransactionId"`
	ExternalTransactionID wireText   `json:"ExternalTransactionId"`
	OrderID               wireText   `json:"OrderId"`
	PaymentDate           wireText   `json:"PaymentDate"`
}

// transaction is a transactionWire in minor units.
type transaction struct {
	amount, charges, amountAfterCharges, amountCharged, deliveryFee                          int64
	description, clientReference, transactionID, externalTransactionID, orderID, paymentDate string
}

func (w *transactionWire) read() transaction {
	u := majorUnits
	return transaction{
		amount: w.Amount.minorOr0(u), charges: w.Charges.minorOr0(u), amountAfterCharges: w.AmountAfterCharges.minorOr0(u),
		amountCharged: w.AmountCharged.minorOr0(u), deliveryFee: w.DeliveryFee.minorOr0(u),
		description: string(w.Description), clientReference: string(w.ClientReference), transactionID: string(w.TransactionID),
		externalTransactionID: string(w.ExternalTransactionID), orderID: string(w.OrderID), paymentDate: string(w.PaymentDate),
	}
}

// payoutWire is the Pascal form of a payout: the send and send-to-bank callbacks and
// the send-to-bank acceptance. Its amounts are decimals in major units on both wires.
type payoutWire struct {
	AmountDebited         wireAmount      `json:"AmountDebited"`
	Amount                wireAmount      `json:"Amount"`
	Charges               wireAmount      `json:"Charges"`
	TransactionID         wireText        `json:"TransactionId"`
	Description           wireText        `json:"Description"`
	ClientReference       wireText        `json:"ClientReference"`
	ExternalTransactionID wireText        `json:"ExternalTransactionId"`
	RecipientName         wireText        `json:"RecipientName"`
	Meta                  json.RawMessage `json:"Meta"`
}

// payout is a payoutWire in minor units.
type payout struct {
	amountDebited, amount, charges                                                    int64
	transactionID, description, clientReference, externalTransactionID, recipientName string
	meta                                                                              json.RawMessage
}

func (w *payoutWire) read() payout {
	u := majorUnits
	return payout{
		amountDebited: w.AmountDebited.minorOr0(u), amount: w.Amount.minorOr0(u), charges: w.Charges.minorOr0(u),
		transactionID: string(w.TransactionID), description: string(w.Description), clientReference: string(w.ClientReference),
		externalTransactionID: string(w.ExternalTransactionID), recipientName: string(w.RecipientName), meta: w.Meta,
	}
}

// collectionStatusWire is the status check of a receive or a direct-debit charge: the
// same lower-camel object on both wires, its amounts in its kind's unit on the spec's
// and in cedis on the provider's (see amountUnit).
type collectionStatusWire struct {
	Date                  wireTime         `json:"date"`
	Status                wireText         `json:"status"`
	TransactionID         wireText         `json:"transactionId"`
	ExternalTransactionID wireText         `json:"externalTransactionId"`
	PaymentMethod         wireText         `json:"paymentMethod"`
	ClientReference       wireText         `json:"clientReference"`
	CurrencyCode          wireNullableText `json:"currencyCode"`
	Amount                wireAmount       `json:"amount"`
	Charges               wireAmount       `json:"charges"`
	AmountAfterCharges    wireAmount       `json:"amountAfterCharges"`
	IsFulfilled           wireValue[bool]  `json:"isFulfilled"`
}

// collectionStatus is a collectionStatusWire in minor units.
type collectionStatus struct {
	date                                                                           time.Time
	status                                                                         CollectionStatus
	transactionID, externalTransactionID, paymentMethod, clientReference, currency string
	amount, charges, amountAfterCharges                                            int64
	isFulfilled                                                                    bool
	amountNamed                                                                    bool // the amount field was there
}

// read converts the status, reading plain integers in declared (the kind's unit).
func (w *collectionStatusWire) read(declared amountUnit) collectionStatus {
	if w.CurrencyCode.null {
		// The spec's status check always names its currency; the provider's writes
		// currencyCode null, and cedis throughout, whole numbers included.
		declared = majorUnits
	}
	u := objectUnit(declared, w.Amount, w.Charges, w.AmountAfterCharges)
	return collectionStatus{
		date: w.Date.at, status: foldedOneOf(w.Status, CollectionStatusPaid, CollectionStatusUnpaid),
		transactionID: string(w.TransactionID), externalTransactionID: string(w.ExternalTransactionID),
		paymentMethod: string(w.PaymentMethod), clientReference: string(w.ClientReference), currency: string(w.CurrencyCode.text),
		amount: w.Amount.minorOr0(u), charges: w.Charges.minorOr0(u), amountAfterCharges: w.AmountAfterCharges.minorOr0(u),
		isFulfilled: w.IsFulfilled.v, amountNamed: w.Amount.present(),
	}
}

// payoutStatusWire is the status check of a send or a send-to-bank.
type payoutStatusWire struct {
	TransactionID        wireText   `json:"TransactionId"`
	NetworkTransactionID wireText   `json:"networkTransactionId"`
	Amount               wireAmount `json:"Amount"`
	Fees                 wireAmount `json:"Fees"`
	ClientReference      wireText   `json:"ClientReference"`
	Channel              wireText   `json:"Channel"`
	CustomerNumber       wireText   `json:"CustomerNumber"`
	Description          wireText   `json:"Description"`
	TransactionStatus    wireText   `json:"transactionStatus"`
	CreatedAt            wireTime   `json:"CreatedAt"`
}

// payoutStatus is a payoutStatusWire in minor units, with the response code the
// transaction's state carries.
type payoutStatus struct {
	StatusResponse
	transactionID, networkTransactionID, clientReference, customerNumber, description string
	channel                                                                           PayoutChannel
	status                                                                            PayoutStatus
	amount, fees                                                                      int64
	createdAt                                                                         time.Time
	amountNamed                                                                       bool // the Amount field was there
}

// read converts the status under the envelope's r, reading plain integers in declared
// (the kind's unit). The provider's status check answers the word "success" for the
// request whatever became of the payout, and writes cedis throughout: under that word
// the integers are major units and the code is the one the payout's state implies.
func (w *payoutStatusWire) read(declared amountUnit, r StatusResponse) payoutStatus {
	status := foldedOneOf(w.TransactionStatus, PayoutStatusPending, PayoutStatusSuccess, PayoutStatusFailed)
	if r.ResponseCode.isSuccessWord() {
		declared = majorUnits
		if code, ok := payoutStateCodes[status]; ok {
			r.ResponseCode, r.codeImplied = code, true
		}
	}
	u := objectUnit(declared, w.Amount, w.Fees)
	return payoutStatus{
		StatusResponse: r,
		transactionID:  string(w.TransactionID), networkTransactionID: string(w.NetworkTransactionID),
		clientReference: string(w.ClientReference), customerNumber: string(w.CustomerNumber), description: string(w.Description),
		channel: PayoutChannel(w.Channel), status: status,
		amount: w.Amount.minorOr0(u), fees: w.Fees.minorOr0(u), createdAt: w.CreatedAt.at, amountNamed: w.Amount.present(),
	}
}

// payoutStateCodes are the codes a payout's state implies where the provider writes
// none: 0000 paid, 0001 pending, and 2001, the spec's general failure, when failed (the
// provider's status check names no reason).
var payoutStateCodes = map[PayoutStatus]ResponseCode{
	PayoutStatusSuccess: CodeSuccess, PayoutStatusPending: CodeAccepted, PayoutStatusFailed: CodeFailed,
}

// mandateWire is a mandate on either wire and in either casing: the answers of the
// mandate calls (lower camel) and the mandate callback (Pascal) share its keys, but for
// the id, which each wire spells its own way (wirePreApprovalID).
type mandateWire struct {
	wirePreApprovalID
	ClientReferenceID wireText `json:"clientReferenceId"`
	CustomerMSISDN    wireText `json:"customerMsisdn"`
	Channel           wireText `json:"channel"`
	VerificationType  wireText `json:"verificationType"`
	OTPPrefix         wireText `json:"otpPrefix"`
	PreapprovalStatus wireText `json:"preapprovalStatus"`
	// CreatedAt is read as a time by Mandate and kept as written by MandateCallback.
	CreatedAt json.RawMessage `json:"createdAt"`
}

// createdAtText returns CreatedAt as written, "" when it is no string.
func (w *mandateWire) createdAtText() string {
	var t wireText
	_ = t.UnmarshalJSON(w.CreatedAt)
	return string(t)
}

func (w *mandateWire) status() MandateStatus {
	return foldedOneOf(w.PreapprovalStatus, MandateStatusPending, MandateStatusApproved, MandateStatusActive,
		MandateStatusCancelled, MandateStatusFailed)
}

func (w *mandateWire) verification() VerificationType {
	return foldedOneOf(w.VerificationType, VerificationTypeUSSD, VerificationTypeOTP)
}
