package billing

import (
	"bytes"
	"context"
	"encoding/json"
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
			return Outcome{Code: r.ResponseCode, codeImplied: r.codeImplied, TransactionID: r.TransactionID, ExternalTransactionID: r.NetworkTransactionID,
				Amount: r.Amount, Charges: r.Fees}
		})},
	KindBankTransfer: {EventKindPayout, statusOf(
		func(ctx context.Context, c *Client, ref string) (*BankTransferTransaction, error) {
			return c.Payouts.BankTransferStatus(ctx, &BankTransferStatusParams{ClientReference: ref})
		},
		func(r *BankTransferTransaction) Outcome {
			return Outcome{Code: r.ResponseCode, codeImplied: r.codeImplied, TransactionID: r.TransactionID, ExternalTransactionID: r.NetworkTransactionID,
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
func isMovementCallback(ev Event) bool { return ev.Kind().isMovementCallback() }

// isMovementCallback reports whether k is the callback shape of some kind.
func (k EventKind) isMovementCallback() bool {
	for _, kind := range movementKinds {
		if movements[kind].callback == k {
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

	// codeImplied: the status check named no code, so Code is the one State implies.
	codeImplied bool
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
	if err := json.Unmarshal(b, &w); err != nil {
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
		isFulfilled: w.IsFulfilled.v,
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
		amount: w.Amount.minorOr0(u), fees: w.Fees.minorOr0(u), createdAt: w.CreatedAt.at,
	}
}

// payoutStateCodes are the codes a payout's state implies where the provider writes
// none: 0000 paid, 0001 pending, and 2001, the spec's general failure, when failed (the
// provider's status check names no reason).
var payoutStateCodes = map[PayoutStatus]ResponseCode{
	PayoutStatusSuccess: CodeSuccess, PayoutStatusPending: CodeAccepted, PayoutStatusFailed: CodeFailed,
}

// mandateWire is a mandate on either wire and in either casing: the answers of the
// mandate calls (lower camel) and the mandate callback (Pascal) share its keys.
type mandateWire struct {
	ServicePreApprovalID wireText `json:"servicePreApprovalId"`
	ClientReferenceID    wireText `json:"clientReferenceId"`
	CustomerMSISDN       wireText `json:"customerMsisdn"`
	Channel              wireText `json:"channel"`
	VerificationType     wireText `json:"verificationType"`
	OTPPrefix            wireText `json:"otpPrefix"`
	PreapprovalStatus    wireText `json:"preapprovalStatus"`
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
