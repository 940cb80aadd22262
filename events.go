package billing

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// EventKind says which of the service's webhook and callback payloads an Event is.
type EventKind string

// The kinds of event ParseEvent recognises.
const (
	// EventKindPaymentSucceeded is the checkout webhook: a checkout payment became
	// SUCCEEDED. It arrives at the webhook URL registered in the dashboard.
	EventKindPaymentSucceeded EventKind = "payment.succeeded"
	// EventKindSubscriptionTrial is the webhook sent when a subscription's trial starts.
	EventKindSubscriptionTrial EventKind = "customer.subscription.trial"
	// EventKindTransaction is the callback of a direct receive, a direct-debit charge or
	// a payment through the client SDKs. Its shape does not say which of them it is.
	EventKindTransaction EventKind = "transaction"
	// EventKindPayout is the callback of a direct send or a send-to-bank. Its shape does
	// not say which of them it is.
	EventKindPayout EventKind = "payout"
	// EventKindMandate is the callback of a direct-debit mandate being approved.
	EventKindMandate EventKind = "mandate"
)

// EventState is what an event reports about the operation it concerns.
type EventState string

// The states an event can report.
const (
	// EventSucceeded: the money moved, the mandate was approved, or (for an event that
	// reports a fact rather than an outcome, like a trial start) the thing happened.
	EventSucceeded EventState = "succeeded"
	// EventFailed: the operation failed finally; nothing moved.
	EventFailed EventState = "failed"
	// EventPending: not final yet; another event or the status check will say more.
	EventPending EventState = "pending"

	// The final states below are a Tracker's, never an event's.

	// EventMismatched: the money moved, but not as asked: the status check's amount or
	// currency differs from the one the movement was tracked with.
	EventMismatched EventState = "mismatched"
	// EventExpired: a checkout session ended unpaid; nothing moved.
	EventExpired EventState = "expired"
	// EventUnknown: the Tracker gave up without learning the state.
	EventUnknown EventState = "unknown"
)

// Event is a webhook or callback payload, as returned by ParseEvent. Its concrete type
// is one of *CheckoutEvent, *SubscriptionTrialEvent, *TransactionCallback,
// *PayoutCallback and *MandateCallback; switch on it for the details.
type Event interface {
	// Kind says which payload this is.
	Kind() EventKind
	// Reference is the merchant's client reference of the operation (the payment
	// reference for a checkout event, the subscription id for a trial event).
	Reference() string
	// State says whether the event reports success, failure or a pending state.
	State() EventState
	// Code is the response code the payload carries, or "" when its shape has none.
	Code() ResponseCode
}

// ErrInvalidEvent is matched (errors.Is) by every error of ParseEvent: the body is not
// JSON, is not the shape of any event of the spec, or lacks the fields that identify it.
var ErrInvalidEvent = errors.New("billing: not a valid event")

// CheckoutEvent is the checkout webhook payment.succeeded, sent to the webhook URL registered in the dashboard when a checkout payment
// becomes SUCCEEDED. One variant of it carries ID, Environment and CreatedAt; the other
// leaves them empty.
type CheckoutEvent struct {
	// ID is the event id (evt_ prefix), when the variant carries one.
	ID string `json:"id,omitempty"`
	// Event is EventKindPaymentSucceeded.
	Event       EventKind          `json:"event"`
	Environment PaymentEnvironment `json:"environment,omitempty"`
	CreatedAt   time.Time          `json:"createdAt,omitzero"`
	// Data is the payment, SUCCEEDED, with its method, fee, net, paidAt, customer and
	// payment details. Amounts are integer minor units (5000 is 50.00). From the
	// provider's webhook, Data holds what it carries: Reference its CheckoutId (the
	// reference Payments.Get takes), ID its SalesInvoiceId, Status, Amount (0.5 cedi is
	// 50), Description, the customer's phone and the mobile-money details.
	Data Payment `json:"data"`
	// ClientReference is the merchant's reference of the checkout, carried by the
	// provider's webhook; empty on the spec's, whose payment holds it in
	// Data.Metadata["clientReference"].
	ClientReference string `json:"clientReference,omitempty"`
	// ResponseCode is the provider's webhook's code (0000); the spec's carries none.
	ResponseCode ResponseCode `json:"responseCode,omitempty"`

	// byClientReference: the provider's webhook, which names its session by the
	// merchant's client reference.
	byClientReference bool
}

// Kind returns EventKindPaymentSucceeded.
func (*CheckoutEvent) Kind() EventKind { return EventKindPaymentSucceeded }

// Reference returns the reference the webhook's status check takes: the payment's
// reference for the spec's webhook, the merchant's ClientReference for the provider's,
// which names its session by it (its CheckoutId when it names no client reference).
func (e *CheckoutEvent) Reference() string {
	if e.byClientReference && e.ClientReference != "" {
		return e.ClientReference
	}
	return e.Data.Reference
}

// State is EventSucceeded for a SUCCEEDED payment, EventFailed for FAILED, and
// EventPending otherwise.
func (e *CheckoutEvent) State() EventState {
	switch e.Data.Status {
	case PaymentStatusSucceeded:
		return EventSucceeded
	case PaymentStatusFailed:
		return EventFailed
	}
	return EventPending
}

// Code returns the provider's webhook's response code, or "" for the spec's webhook,
// which carries none.
func (e *CheckoutEvent) Code() ResponseCode { return e.ResponseCode }

// SubscriptionTrialEvent is the webhook customer.subscription.trial, sent to the webhook
// URL registered in the dashboard when a subscription's free trial starts. The spec
// names the event without a body; the service's body is {id, event, createdAt, data:
// <the subscription>}.
type SubscriptionTrialEvent struct {
	// ID is the event id (evt_ prefix).
	ID string `json:"id,omitempty"`
	// Event is EventKindSubscriptionTrial.
	Event     EventKind `json:"event"`
	CreatedAt time.Time `json:"createdAt,omitzero"`
	// Data is the subscription whose trial started.
	Data Subscription `json:"data"`
}

// Kind returns EventKindSubscriptionTrial.
func (*SubscriptionTrialEvent) Kind() EventKind { return EventKindSubscriptionTrial }

// Reference returns the subscription's id.
func (e *SubscriptionTrialEvent) Reference() string { return e.Data.ID }

// State returns EventSucceeded: the event reports that the trial started.
func (*SubscriptionTrialEvent) State() EventState { return EventSucceeded }

// Code returns "": the event carries no response code.
func (*SubscriptionTrialEvent) Code() ResponseCode { return "" }

// TransactionCallback is the callback of a direct receive, a direct-debit charge or a
// client-SDK payment.
// ResponseCode 0000 means the money moved; 2001 (or another code) means it failed.
type TransactionCallback struct {
	ResponseCode ResponseCode `json:"ResponseCode"`
	// Message is "success" or "failed".
	Message string                  `json:"Message"`
	Data    TransactionCallbackData `json:"Data"`
}

// TransactionCallbackData is the transaction a TransactionCallback reports. Amounts hold
// minor units (DecimalAmount(80) is 0.80), read from the decimals in major units both
// wires write (Amount 0 on some failures, and for an amount the SDK cannot read).
type TransactionCallbackData struct {
	Amount             DecimalAmount `json:"Amount"`
	Charges            DecimalAmount `json:"Charges"`
	AmountAfterCharges DecimalAmount `json:"AmountAfterCharges"`
	AmountCharged      DecimalAmount `json:"AmountCharged"`
	Description        string        `json:"Description"`
	ClientReference    string        `json:"ClientReference"`
	TransactionID      string        `json:"TransactionId"`
	// ExternalTransactionID is the telco's reference; empty when there is none.
	ExternalTransactionID string `json:"ExternalTransactionId"`
	OrderID               string `json:"OrderId"`
	// PaymentDate is kept as the service wrote it; the spec does not fix its format.
	PaymentDate string `json:"PaymentDate"`
}

// UnmarshalJSON reads the transaction on either wire. A field it cannot read is left
// empty: the callback's code still says its state.
func (d *TransactionCallbackData) UnmarshalJSON(b []byte) error {
	return unmarshalWire[transactionWire](b, d)
}

func (d *TransactionCallbackData) fromWire(w *transactionWire) {
	t := w.read()
	*d = TransactionCallbackData{
		Amount: DecimalAmount(t.amount), Charges: DecimalAmount(t.charges), AmountAfterCharges: DecimalAmount(t.amountAfterCharges),
		AmountCharged: DecimalAmount(t.amountCharged), Description: t.description, ClientReference: t.clientReference,
		TransactionID: t.transactionID, ExternalTransactionID: t.externalTransactionID, OrderID: t.orderID,
		PaymentDate: t.paymentDate,
	}
}

// Kind returns EventKindTransaction.
func (*TransactionCallback) Kind() EventKind { return EventKindTransaction }

// Reference returns the merchant's client reference.
func (c *TransactionCallback) Reference() string { return c.Data.ClientReference }

// State reports the outcome the response code describes.
func (c *TransactionCallback) State() EventState { return codeState(c.ResponseCode) }

// Code returns the callback's response code.
func (c *TransactionCallback) Code() ResponseCode { return c.ResponseCode }

// PayoutCallback is the callback of a direct send or a send-to-bank. ResponseCode 0000 means the money arrived; any other code
// (2001, 4075, …) means the payout failed and the disbursement account was not charged.
type PayoutCallback struct {
	ResponseCode ResponseCode       `json:"ResponseCode"`
	Data         PayoutCallbackData `json:"Data"`
}

// PayoutCallbackData is the payout a PayoutCallback reports. Amounts hold minor units
// (DecimalAmount(80) is 0.80), read from the decimals in major units both wires write:
// the provider's Charges 0.010 is 1. An amount the SDK cannot read is 0.
type PayoutCallbackData struct {
	AmountDebited   DecimalAmount `json:"AmountDebited"`
	Amount          DecimalAmount `json:"Amount"`
	Charges         DecimalAmount `json:"Charges"`
	TransactionID   string        `json:"TransactionId"`
	Description     string        `json:"Description"`
	ClientReference string        `json:"ClientReference"`
	// ExternalTransactionID is the network's reference; empty when the payout failed
	// (the service sends null).
	ExternalTransactionID string `json:"ExternalTransactionId"`
	// RecipientName is the name the network holds for the recipient; empty when the
	// payout failed (the service sends null).
	RecipientName string `json:"RecipientName"`
	// Meta is passed through as the service wrote it; the spec does not describe it.
	Meta json.RawMessage `json:"Meta,omitempty"`
}

// UnmarshalJSON reads the payout on either wire. A field it cannot read is left empty:
// the callback's code still says its state.
func (d *PayoutCallbackData) UnmarshalJSON(b []byte) error {
	return unmarshalWire[payoutWire](b, d)
}

func (d *PayoutCallbackData) fromWire(w *payoutWire) {
	p := w.read()
	*d = PayoutCallbackData{
		AmountDebited: DecimalAmount(p.amountDebited), Amount: DecimalAmount(p.amount), Charges: DecimalAmount(p.charges),
		TransactionID: p.transactionID, Description: p.description, ClientReference: p.clientReference,
		ExternalTransactionID: p.externalTransactionID, RecipientName: p.recipientName, Meta: p.meta,
	}
}

// Kind returns EventKindPayout.
func (*PayoutCallback) Kind() EventKind { return EventKindPayout }

// Reference returns the merchant's client reference.
func (c *PayoutCallback) Reference() string { return c.Data.ClientReference }

// State reports the outcome the response code describes.
func (c *PayoutCallback) State() EventState { return codeState(c.ResponseCode) }

// Code returns the callback's response code.
func (c *PayoutCallback) Code() ResponseCode { return c.ResponseCode }

// MandateCallback is sent when the customer authorises a direct-debit mandate, to the
// callbackUrl given at initiation or reactivation.
type MandateCallback struct {
	CustomerMsisdn   string           `json:"CustomerMsisdn"`
	VerificationType VerificationType `json:"VerificationType"`
	// PreapprovalStatus is APPROVED once authorised; the spec also names ACTIVE.
	PreapprovalStatus MandateStatus `json:"PreapprovalStatus"`
	// ServicePreapprovalID is the mandate's id: ServicePreapprovalId on the spec's wire,
	// HubtelPreapprovalId on the provider's (either, in any casing, is read here).
	ServicePreapprovalID string `json:"ServicePreapprovalId"`
	ClientReferenceID    string `json:"ClientReferenceId"`
	// CreatedAt is kept as the service wrote it; the spec does not fix its format.
	CreatedAt string `json:"CreatedAt"`
}

// UnmarshalJSON reads the callback in either casing, its status in any casing (the
// provider's FAILED included). A field it cannot read is left empty.
func (c *MandateCallback) UnmarshalJSON(b []byte) error {
	return unmarshalWire[mandateWire](b, c)
}

func (c *MandateCallback) fromWire(w *mandateWire) {
	*c = MandateCallback{
		CustomerMsisdn: string(w.CustomerMSISDN), VerificationType: w.verification(), PreapprovalStatus: w.status(),
		ServicePreapprovalID: w.id(), ClientReferenceID: string(w.ClientReferenceID),
		CreatedAt: w.createdAtText(),
	}
}

// Kind returns EventKindMandate.
func (*MandateCallback) Kind() EventKind { return EventKindMandate }

// Reference returns the merchant's mandate reference (clientReferenceId).
func (c *MandateCallback) Reference() string { return c.ClientReferenceID }

// State is EventSucceeded for APPROVED or ACTIVE, EventPending for PENDING, and
// EventFailed for any other status (a cancelled or refused mandate).
func (c *MandateCallback) State() EventState { return mandateState(c.PreapprovalStatus) }

// Code returns "": the mandate callback carries no response code.
func (*MandateCallback) Code() ResponseCode { return "" }

// mandateState maps a preapprovalStatus to the state it reports.
func mandateState(status MandateStatus) EventState {
	switch status {
	case MandateStatusApproved, MandateStatusActive:
		return EventSucceeded
	case MandateStatusPending:
		return EventPending
	}
	return EventFailed
}

// codeState maps the response code of a callback or status check to the state it
// describes: 0000 success, 0001 and 0005 pending, anything else a failure.
func codeState(code ResponseCode) EventState {
	switch code {
	case CodeSuccess:
		return EventSucceeded
	case CodeAccepted, CodeConnectionError:
		// 0005: the service could not reach the network, so the final state is unknown;
		// reading it as a failure could fail an order that was paid.
		return EventPending
	}
	return EventFailed
}

// ParseEvent reads a webhook or callback body and returns its typed event. It
// recognises every webhook and callback payload of the service by its shape: the checkout payment.succeeded
// webhook (with or without id, environment and createdAt), the customer.subscription.trial
// webhook, the transaction callbacks of receive, direct debit and SDK payments, the send
// and send-to-bank callbacks, and the mandate callback. It reads the provider's wire
// too: its checkout webhook ({ResponseCode, Status, Data: {CheckoutId, ...}}) as a
// *CheckoutEvent, amounts in cedis, keys in either casing, the mandate status FAILED. A
// field it cannot read (an amount finer than a minor unit, a number where text was
// expected) is left empty: the state fields still decide the event.
//
// Anything else, and a payload without the fields that identify it (its reference, and
// the response code of a transaction or payout callback), is an error matching
// ErrInvalidEvent. A body that writes one field twice with values that disagree (two
// casings of ResponseCode, say) is read by the inbound gate as no event at all: its
// error matches ErrContradiction as well. ParseEvent never panics, whatever the input.
func ParseEvent(body []byte) (Event, error) {
	canonical, err := readInbound(body)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidEvent, err)
	}
	return parseCanonical(canonical)
}

// readEvent reads a delivered body through the inbound gate and returns its event: the
// one ParseEvent reads (a movement's callback only when its reference is one a movement
// can have), or, for a webhook of a kind the SDK does not know, the
// *UnconfirmedEvent of its claim (it settles nothing: DESIGN "Events that settle
// nothing"). Every reader after the gate reads the canonical form; the event keeps the
// body as it came, for audit only.
func readEvent(body []byte) (Event, error) {
	canonical, err := readInbound(body)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidEvent, err)
	}
	ev, err := parseCanonical(canonical)
	if kind, ok := unknownEventKind(canonical); err != nil && ok {
		return unconfirmed(kind, nil, body), nil
	}
	if err == nil && isMovementCallback(ev) {
		// No movement has such a reference: refuse it before anything is recorded of it.
		err = checkCallbackReference(ev)
	}
	return ev, err
}

// parseCanonical is ParseEvent after the gate: b is the canonical form readInbound
// returned.
func parseCanonical(body []byte) (Event, error) {
	sh, err := scanShape(body)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidEvent, err)
	}
	form, err := sh.newForm()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidEvent, err)
	}
	if err := json.Unmarshal(body, form); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrInvalidEvent, form.event().Kind(), err)
	}
	ev := form.event()
	if missing := ev.missing(); missing != "" {
		return nil, fmt.Errorf("%w: %s without %s", ErrInvalidEvent, ev.Kind(), missing)
	}
	return ev, nil
}

// unknownEventKind reports the kind a body, in its canonical form, names in its "event"
// field when that is a webhook kind the SDK does not know: such a body is no error of
// the sender's, only an event that settles nothing (see UnconfirmedEvent).
func unknownEventKind(body []byte) (EventKind, bool) {
	sh, err := scanShape(body)
	if err != nil || sh.keys&keyEvent == 0 || len(sh.event) == 0 {
		return "", false
	}
	if _, err := sh.newForm(); err == nil {
		return "", false
	}
	var kind string
	if json.Unmarshal(append(append([]byte{'"'}, sh.event...), '"'), &kind) != nil || kind == "" {
		return "", false
	}
	return EventKind(kind), true
}

// parsedEvent is an Event that can say which identifying field it lacks after decoding.
type parsedEvent interface {
	Event
	missing() string
}

// eventForm is what ParseEvent decodes a body into: an event read as it is, or a wire
// form of another shape that it converts into one.
type eventForm interface {
	event() parsedEvent
}

func (e *CheckoutEvent) event() parsedEvent          { return e }
func (e *SubscriptionTrialEvent) event() parsedEvent { return e }
func (c *TransactionCallback) event() parsedEvent    { return c }
func (c *PayoutCallback) event() parsedEvent         { return c }
func (c *MandateCallback) event() parsedEvent        { return c }

// checkoutWebhookWire is the provider's checkout webhook: {ResponseCode, Status, Data:
// {CheckoutId, SalesInvoiceId, ClientReference, Status, Amount, CustomerPhoneNumber,
// PaymentDetails, Description}}, its amount in cedis.
type checkoutWebhookWire struct {
	wireCode
	Status wireText `json:"Status"`
	Data   struct {
		CheckoutID          wireText   `json:"CheckoutId"`
		SalesInvoiceID      wireText   `json:"SalesInvoiceId"`
		ClientReference     wireText   `json:"ClientReference"`
		Status              wireText   `json:"Status"`
		Amount              wireAmount `json:"Amount"`
		CustomerPhoneNumber wireText   `json:"CustomerPhoneNumber"`
		PaymentDetails      struct {
			MobileMoneyNumber wireText `json:"MobileMoneyNumber"`
			PaymentType       wireText `json:"PaymentType"`
			Channel           wireText `json:"Channel"`
		} `json:"PaymentDetails"`
		Description wireText `json:"Description"`
	} `json:"Data"`
}

// checkoutStates are the provider's words for a checkout's state, folded to lower case;
// any other word is pending, never a success.
var checkoutStates = map[string]PaymentStatus{
	"success": PaymentStatusSucceeded, "successful": PaymentStatusSucceeded, "paid": PaymentStatusSucceeded,
	"succeeded": PaymentStatusSucceeded,
	"failed":    PaymentStatusFailed, "failure": PaymentStatusFailed, "declined": PaymentStatusFailed,
	"cancelled": PaymentStatusFailed, "canceled": PaymentStatusFailed, "expired": PaymentStatusFailed,
}

// checkoutMethods are the provider's payment types, folded to lower case.
var checkoutMethods = map[string]PaymentMethod{
	"mobilemoney": PaymentMethodMobileMoney, "card": PaymentMethodCard, "banktransfer": PaymentMethodBankTransfer,
}

// event converts the provider's webhook into a CheckoutEvent. The state is the data's
// Status, else the envelope's; the reference is CheckoutId, the checkout session's
// reference, which Payments.Get confirms it with.
func (w *checkoutWebhookWire) event() parsedEvent {
	d := &w.Data
	word := strings.ToLower(strings.TrimSpace(firstText(d.Status, w.Status)))
	status, ok := checkoutStates[word]
	if !ok {
		status = PaymentStatusPending
	}
	method := checkoutMethods[strings.ToLower(strings.TrimSpace(string(d.PaymentDetails.PaymentType)))]
	return &CheckoutEvent{
		Event: EventKindPaymentSucceeded,
		Data: Payment{
			ID: string(d.SalesInvoiceID), Reference: string(d.CheckoutID), Status: status, Method: method,
			Amount: d.Amount.minorOr0(majorUnits), Description: string(d.Description),
			Customer:          PaymentCustomer{Phone: string(d.CustomerPhoneNumber)},
			MobileMoneyDetail: MobileMoneyDetail{Network: string(d.PaymentDetails.Channel), Phone: string(d.PaymentDetails.MobileMoneyNumber)},
		},
		ClientReference:   string(d.ClientReference),
		ResponseCode:      w.code(),
		byClientReference: true,
	}
}

func (e *CheckoutEvent) missing() string { return firstMissing("data.reference", e.Reference()) }

func (e *SubscriptionTrialEvent) missing() string { return firstMissing("data.id", e.Data.ID) }

func (c *TransactionCallback) missing() string {
	return firstMissing("ResponseCode", string(c.ResponseCode), "Data.ClientReference", c.Data.ClientReference)
}

func (c *PayoutCallback) missing() string {
	return firstMissing("ResponseCode", string(c.ResponseCode), "Data.ClientReference", c.Data.ClientReference)
}

func (c *MandateCallback) missing() string {
	return firstMissing("PreapprovalStatus", string(c.PreapprovalStatus), "ClientReferenceId", c.ClientReferenceID)
}

// firstMissing takes pairs of field name and value and returns the name of the first
// empty value, or "".
func firstMissing(pairs ...string) string {
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] == "" {
			return pairs[i]
		}
	}
	return ""
}

// Keys whose presence tells the shapes of the service's events apart. JSON keys match
// case-insensitively, as encoding/json matches them to fields.
type shapeKey uint16

const (
	keyEvent shapeKey = 1 << iota
	keyData
	keyResponseCode
	keyMessage
	keyPreapprovalStatus
	// Keys inside data: a payout's …
	keyAmountDebited
	keyRecipientName
	keyMeta
	// … and a transaction's.
	keyAmountAfterCharges
	keyAmountCharged
	keyPaymentDate
	keyOrderID
	// … and the provider's checkout webhook's.
	keyCheckoutID
)

const (
	payoutKeys      = keyAmountDebited | keyRecipientName | keyMeta
	transactionKeys = keyAmountAfterCharges | keyAmountCharged | keyPaymentDate | keyOrderID
)

type namedKey struct {
	name string
	key  shapeKey
}

var (
	topLevelKeys = []namedKey{
		{"ResponseCode", keyResponseCode}, {"Message", keyMessage}, {"PreapprovalStatus", keyPreapprovalStatus},
	}
	dataKeys = []namedKey{
		{"AmountDebited", keyAmountDebited}, {"RecipientName", keyRecipientName}, {"Meta", keyMeta},
		{"AmountAfterCharges", keyAmountAfterCharges}, {"AmountCharged", keyAmountCharged},
		{"PaymentDate", keyPaymentDate}, {"OrderId", keyOrderID}, {"CheckoutId", keyCheckoutID},
	}
)

func lookupKey(keys []namedKey, name []byte) shapeKey {
	for _, k := range keys {
		if len(k.name) == len(name) && bytes.EqualFold(name, []byte(k.name)) {
			return k.key
		}
	}
	return 0
}

// shape is what a quick scan of a body learns before the one full decode: which telling
// keys appear at the top level and inside data, and the name of a webhook event.
type shape struct {
	keys  shapeKey
	event []byte // the raw string value of "event"
}

// newForm returns an empty form of the event the shape belongs to.
func (sh shape) newForm() (eventForm, error) {
	has := func(k shapeKey) bool { return sh.keys&k == k }
	switch {
	case has(keyEvent):
		switch string(sh.event) {
		case string(EventKindPaymentSucceeded):
			return new(CheckoutEvent), nil
		case string(EventKindSubscriptionTrial):
			return new(SubscriptionTrialEvent), nil
		}
		return nil, fmt.Errorf("unknown event %q", sh.event)
	case has(keyPreapprovalStatus):
		return new(MandateCallback), nil
	case has(keyResponseCode | keyData):
		payout, transaction := sh.keys&payoutKeys != 0, sh.keys&transactionKeys != 0
		switch {
		case has(keyCheckoutID) && !payout && !transaction:
			return new(checkoutWebhookWire), nil
		case payout && !transaction:
			return new(PayoutCallback), nil
		case transaction && !payout, !payout && !transaction && has(keyMessage):
			return new(TransactionCallback), nil
		}
		return nil, errors.New("a callback whose Data is neither a transaction nor a payout")
	}
	return nil, errors.New("not the shape of any event")
}

// scanShape walks the top-level object of b, the canonical form of a body (readInbound),
// and the object under its data key, without decoding values: the keys and the event
// name it compares are spelled as they read. It only has to be good enough to choose a type: json.Unmarshal
// validates everything afterwards. It never panics and always advances, whatever b is.
func scanShape(b []byte) (shape, error) {
	var sh shape
	sc := &shapeScanner{b: b}
	if !sc.consume('{') {
		return sh, errors.New("not a JSON object")
	}
	err := sc.object(func(key []byte) error {
		switch {
		case bytes.EqualFold(key, []byte("event")):
			sh.keys |= keyEvent
			if sc.peek() == '"' {
				v, err := sc.str()
				sh.event = v
				return err
			}
		case bytes.EqualFold(key, []byte("data")):
			sh.keys |= keyData
			if sc.consume('{') {
				return sc.object(func(key []byte) error {
					sh.keys |= lookupKey(dataKeys, key)
					return sc.skipValue()
				})
			}
		default:
			sh.keys |= lookupKey(topLevelKeys, key)
		}
		return sc.skipValue()
	})
	return sh, err
}

var errTruncated = errors.New("truncated or malformed JSON")

// shapeScanner reads just enough JSON structure to list an object's keys.
type shapeScanner struct {
	b   []byte
	pos int
}

func (s *shapeScanner) skipSpace() {
	for s.pos < len(s.b) {
		switch s.b[s.pos] {
		case ' ', '\t', '\r', '\n':
			s.pos++
		default:
			return
		}
	}
}

// peek returns the next byte that is not white space, or 0 at the end.
func (s *shapeScanner) peek() byte {
	s.skipSpace()
	if s.pos < len(s.b) {
		return s.b[s.pos]
	}
	return 0
}

// consume skips white space and c, reporting whether c was there.
func (s *shapeScanner) consume(c byte) bool {
	if s.peek() == c {
		s.pos++
		return true
	}
	return false
}

// object reads the members of an object whose '{' is consumed, calling member with each
// key; member must consume the value.
func (s *shapeScanner) object(member func(key []byte) error) error {
	if s.consume('}') {
		return nil
	}
	for {
		if s.peek() != '"' {
			return errTruncated
		}
		key, err := s.str()
		if err != nil {
			return err
		}
		if !s.consume(':') {
			return errTruncated
		}
		s.skipSpace()
		if err := member(key); err != nil {
			return err
		}
		if s.consume(',') {
			continue
		}
		if s.consume('}') {
			return nil
		}
		return errTruncated
	}
}

// str reads a string at s.pos and returns its raw contents, escapes left as they are.
func (s *shapeScanner) str() ([]byte, error) {
	start := s.pos + 1
	for i := start; i < len(s.b); i++ {
		switch s.b[i] {
		case '\\':
			i++
		case '"':
			s.pos = i + 1
			return s.b[start:i], nil
		}
	}
	return nil, errTruncated
}

// skipValue moves past one value of any type.
func (s *shapeScanner) skipValue() error {
	switch s.peek() {
	case '"':
		_, err := s.str()
		return err
	case '{', '[':
		depth := 0
		for s.pos < len(s.b) {
			switch s.b[s.pos] {
			case '"':
				if _, err := s.str(); err != nil {
					return err
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					s.pos++
					return nil
				}
			}
			s.pos++
		}
		return errTruncated
	}
	start := s.pos
	for s.pos < len(s.b) && !endsLiteral(s.b[s.pos]) {
		s.pos++
	}
	if s.pos == start {
		return errTruncated
	}
	return nil
}

// endsLiteral reports whether c ends a number, true, false or null.
func endsLiteral(c byte) bool {
	switch c {
	case ',', '}', ']', ' ', '\t', '\r', '\n':
		return true
	}
	return false
}
