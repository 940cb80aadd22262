package billing

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"
)

// EventKind says which payload of SPEC "Events" an Event is.
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

// CheckoutEvent is the checkout webhook payment.succeeded (SPEC "Checkout and dashboard
// webhook"), sent to the webhook URL registered in the dashboard when a checkout payment
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
	// payment details. Amounts are integer minor units (5000 is 50.00).
	Data Payment `json:"data"`
}

// Kind returns EventKindPaymentSucceeded.
func (*CheckoutEvent) Kind() EventKind { return EventKindPaymentSucceeded }

// Reference returns the checkout payment's reference.
func (e *CheckoutEvent) Reference() string { return e.Data.Reference }

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

// Code returns "": the checkout webhook carries no response code.
func (*CheckoutEvent) Code() ResponseCode { return "" }

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
// client-SDK payment (SPEC "Transaction callbacks for receive, debit and SDK payments").
// ResponseCode 0000 means the money moved; 2001 (or another code) means it failed.
type TransactionCallback struct {
	ResponseCode ResponseCode `json:"ResponseCode"`
	// Message is "success" or "failed".
	Message string                  `json:"Message"`
	Data    TransactionCallbackData `json:"Data"`
}

// TransactionCallbackData is the transaction a TransactionCallback reports. Amounts are
// decimals in major units on the wire (Amount 0 on some failures).
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

// Kind returns EventKindTransaction.
func (*TransactionCallback) Kind() EventKind { return EventKindTransaction }

// Reference returns the merchant's client reference.
func (c *TransactionCallback) Reference() string { return c.Data.ClientReference }

// State reports the outcome the response code describes.
func (c *TransactionCallback) State() EventState { return codeState(c.ResponseCode) }

// Code returns the callback's response code.
func (c *TransactionCallback) Code() ResponseCode { return c.ResponseCode }

// PayoutCallback is the callback of a direct send or a send-to-bank (SPEC "Send and
// send-to-bank callbacks"). ResponseCode 0000 means the money arrived; any other code
// (2001, 4075, …) means the payout failed and the disbursement account was not charged.
type PayoutCallback struct {
	ResponseCode ResponseCode       `json:"ResponseCode"`
	Data         PayoutCallbackData `json:"Data"`
}

// PayoutCallbackData is the payout a PayoutCallback reports. Amounts are decimals in
// major units on the wire.
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

// Kind returns EventKindPayout.
func (*PayoutCallback) Kind() EventKind { return EventKindPayout }

// Reference returns the merchant's client reference.
func (c *PayoutCallback) Reference() string { return c.Data.ClientReference }

// State reports the outcome the response code describes.
func (c *PayoutCallback) State() EventState { return codeState(c.ResponseCode) }

// Code returns the callback's response code.
func (c *PayoutCallback) Code() ResponseCode { return c.ResponseCode }

// MandateCallback is sent when the customer authorises a direct-debit mandate (SPEC
// "Mandate callback"), to the callbackUrl given at initiation or reactivation.
type MandateCallback struct {
	CustomerMsisdn   string           `json:"CustomerMsisdn"`
	VerificationType VerificationType `json:"VerificationType"`
	// PreapprovalStatus is APPROVED once authorised; the spec also names ACTIVE.
	PreapprovalStatus    MandateStatus `json:"PreapprovalStatus"`
	ServicePreapprovalID string        `json:"ServicePreapprovalId"`
	ClientReferenceID    string        `json:"ClientReferenceId"`
	// CreatedAt is kept as the service wrote it; the spec does not fix its format.
	CreatedAt string `json:"CreatedAt"`
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
// recognises every payload of SPEC "Events" by its shape: the checkout payment.succeeded
// webhook (with or without id, environment and createdAt), the customer.subscription.trial
// webhook, the transaction callbacks of receive, direct debit and SDK payments, the send
// and send-to-bank callbacks, and the mandate callback.
//
// Anything else, and a payload without the fields that identify it (its reference, and
// the response code of a transaction or payout callback), is an error matching
// ErrInvalidEvent. ParseEvent never panics, whatever the input.
func ParseEvent(body []byte) (Event, error) {
	sh, err := scanShape(body)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidEvent, err)
	}
	ev, err := sh.newEvent()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidEvent, err)
	}
	if err := json.Unmarshal(body, ev); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrInvalidEvent, ev.Kind(), err)
	}
	if missing := ev.missing(); missing != "" {
		return nil, fmt.Errorf("%w: %s without %s", ErrInvalidEvent, ev.Kind(), missing)
	}
	return ev, nil
}

// parsedEvent is an Event that can say which identifying field it lacks after decoding.
type parsedEvent interface {
	Event
	missing() string
}

func (e *CheckoutEvent) missing() string { return firstMissing("data.reference", e.Data.Reference) }

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

// Keys whose presence tells the shapes of SPEC "Events" apart. JSON keys match
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
		{"PaymentDate", keyPaymentDate}, {"OrderId", keyOrderID},
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

// newEvent returns an empty event of the type the shape belongs to.
func (sh shape) newEvent() (parsedEvent, error) {
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
		case payout && !transaction:
			return new(PayoutCallback), nil
		case transaction && !payout, !payout && !transaction && has(keyMessage):
			return new(TransactionCallback), nil
		}
		return nil, errors.New("a callback whose Data is neither a transaction nor a payout")
	}
	return nil, errors.New("not the shape of any event")
}

// scanShape walks the top-level object of b, and the object under its data key, without
// decoding values. It only has to be good enough to choose a type: json.Unmarshal
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

// MaxEventBytes is the largest webhook or callback body the handler reads; a larger one
// is answered 413.
const MaxEventBytes = 1 << 20

// DefaultDedupeSize is how many handled events WithDedupe remembers when given n <= 0.
const DefaultDedupeSize = 10_000

// WebhookOption configures NewWebhookHandler.
type WebhookOption func(*webhookHandler)

// WithDedupe makes the handler answer 200 to a redelivery of an event it has already
// handled, without calling the function again. Events are the same when their kind,
// reference, state and response code are, so a later different state of the same
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
			h.logger = l
		}
	}
}

// WithStatusCheckConfirmation makes the handler confirm every event that claims a final
// state, success or failure, against the matching status check through c before the
// function sees it. The spec names no signature scheme, so nothing else proves that a
// callback came from the service: a forged success could ship an unpaid order, and a
// forged failure could make a merchant pay a payout twice.
//
// A transaction callback is checked with Payments.ReceiveStatus (then
// Mandates.ChargeStatus when the service does not know the reference), a payout callback
// with Payouts.SendStatus (then Payouts.BankTransferStatus), a mandate callback with
// Mandates.Status, and a checkout event with Payments.Get. The function then receives the
// status check's truth: the event with the state, code, amounts and ids the status check
// reported (for a checkout event, the payment Payments.Get returned).
//
// An event the status check contradicts is refused with 403: it says another final
// state, no status check knows the reference, or the event's amount, currency, metadata
// or transaction id differs from the service's. One it cannot confirm yet (the status
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
// fn may be called concurrently. Redeliveries reach fn again unless WithDedupe is given.
//
// The handler keeps no clock of its own while it reads: serve it from an http.Server with
// a ReadTimeout (and ReadHeaderTimeout), which bounds a sender that trickles its body.
func NewWebhookHandler(fn func(context.Context, Event) error, opts ...WebhookOption) http.Handler {
	h := &webhookHandler{fn: fn, logger: slog.New(slog.DiscardHandler)}
	for _, opt := range opts {
		opt(h)
	}
	return h
}

type webhookHandler struct {
	fn        func(context.Context, Event) error
	seen      *seenSet // nil without WithDedupe
	confirmer *Client  // nil without WithStatusCheckConfirmation
	logger    *slog.Logger
}

func (h *webhookHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "webhooks are delivered with POST", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxEventBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			http.Error(w, "body larger than 1 MiB", http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "reading the body failed", http.StatusBadRequest)
		return
	}
	ev, err := ParseEvent(body)
	if err != nil {
		h.logger.LogAttrs(r.Context(), slog.LevelWarn, "billing webhook refused", slog.String("error", err.Error()))
		refuse(w, http.StatusBadRequest)
		return
	}
	ctx := r.Context()
	held, ok := h.hold(ctx, w, ev, nil)
	if !ok {
		return
	}
	handled := false
	defer func() { h.release(held, handled) }()
	if h.confirmer != nil {
		conf := confirmEvent(ctx, h.confirmer, ev)
		if conf.status != http.StatusOK {
			h.logger.LogAttrs(ctx, slog.LevelWarn, refusedClaimLog[ev.State()],
				append(eventAttrs(ev), slog.Int("status", conf.status), slog.String("reason", conf.reason))...)
			refuse(w, conf.status)
			return
		}
		ctx, ev = withConfirmedOutcome(ctx, conf.outcome), conf.truth
		// The truth may differ from the claim (another code): a copy of it handled
		// already is a duplicate too.
		if held, ok = h.hold(ctx, w, ev, held); !ok {
			return
		}
	}
	if err := h.call(ctx, ev); err != nil {
		h.logger.LogAttrs(ctx, slog.LevelWarn, "billing webhook handler failed",
			append(eventAttrs(ev), slog.String("error", err.Error()))...)
		http.Error(w, "the event was not handled; deliver it again", http.StatusInternalServerError)
		return
	}
	handled = true
	writeReceived(w)
}

// hold marks ev's dedupe key in flight and returns the keys held, or answers a duplicate
// (200 when handled already, 503 while a copy is in flight) and reports false. Without
// WithDedupe it holds nothing; a key this delivery holds already is not held again.
func (h *webhookHandler) hold(ctx context.Context, w http.ResponseWriter, ev Event, held []string) ([]string, bool) {
	if h.seen == nil {
		return nil, true
	}
	key := dedupeKey(ev)
	if slices.Contains(held, key) {
		return held, true
	}
	switch h.seen.begin(key) {
	case seenHandled:
		h.logger.LogAttrs(ctx, slog.LevelDebug, "billing webhook duplicate", eventAttrs(ev)...)
		writeReceived(w)
		return held, false
	case seenInFlight:
		// The first copy may still fail; answering "done" now would lose the event.
		h.logger.LogAttrs(ctx, slog.LevelDebug, "billing webhook duplicate of one in flight", eventAttrs(ev)...)
		refuse(w, http.StatusServiceUnavailable)
		return held, false
	}
	return append(held, key), true
}

// release ends the handling of the held keys, remembering them when handled.
func (h *webhookHandler) release(held []string, handled bool) {
	for _, key := range held {
		h.seen.end(key, handled)
	}
}

// call runs the merchant's function, turning a panic into an error so that the event is
// forgotten and delivered again rather than lost. http.ErrAbortHandler keeps its meaning.
func (h *webhookHandler) call(ctx context.Context, ev Event) (err error) {
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return h.fn(ctx, ev)
}

// refuse answers status with its fixed body; "retry later" says when.
func refuse(w http.ResponseWriter, status int) {
	if status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "60") // the status check, or the first copy, may be done by then
	}
	http.Error(w, refusalBodies[status], status)
}

// refusedClaimLog is the message logged when the status check does not confirm an event
// claiming a final state.
var refusedClaimLog = map[EventState]string{
	EventSucceeded: "billing webhook claiming success refused",
	EventFailed:    "billing webhook claiming failure refused",
}

// refusalBodies are the only words a refusal says to the sender, who is not
// authenticated: what to do next, never why in detail (the log has the detail, which may
// name internal addresses and errors).
var refusalBodies = map[int]string{
	http.StatusBadRequest:         "not a valid event",
	http.StatusForbidden:          "refused: the status check does not confirm this event",
	http.StatusServiceUnavailable: "not confirmed yet: deliver it again later",
}

func writeReceived(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"received":true}`)
}

// eventAttrs describe an event in a log line: kind, reference, state and code, never
// phone numbers.
func eventAttrs(ev Event) []slog.Attr {
	return []slog.Attr{
		slog.String("kind", string(ev.Kind())),
		slog.String("reference", ev.Reference()),
		slog.String("state", string(ev.State())),
		slog.String("code", string(ev.Code())),
	}
}

// dedupeKey identifies an event for deduplication: the same operation in the same state.
func dedupeKey(ev Event) string {
	return string(ev.Kind()) + "\x00" + ev.Reference() + "\x00" + string(ev.State()) + "\x00" + string(ev.Code())
}

// seenSet remembers the last n events handled, forgetting the oldest first, and the
// events being handled right now.
type seenSet struct {
	mu       sync.Mutex
	keys     map[string]uint64 // key -> the generation that recorded it
	inFlight map[string]struct{}
	ring     []seenEntry
	next     int
	gen      uint64
}

type seenEntry struct {
	key string
	gen uint64
}

// seenState is what a seenSet knows of a key.
type seenState uint8

const (
	seenNew      seenState = iota // never handled: begin marked it in flight
	seenInFlight                  // being handled by another delivery
	seenHandled                   // handled already
)

func newSeenSet(n int) *seenSet {
	return &seenSet{keys: make(map[string]uint64, n), inFlight: make(map[string]struct{}), ring: make([]seenEntry, n)}
}

// begin says what is known of key and, when it is new, marks it in flight: the caller
// must call end.
func (s *seenSet) begin(key string) seenState {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.keys[key]; ok {
		return seenHandled
	}
	if _, ok := s.inFlight[key]; ok {
		return seenInFlight
	}
	s.inFlight[key] = struct{}{}
	return seenNew
}

// end ends the handling begun for key, recording it when it was handled.
func (s *seenSet) end(key string, handled bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.inFlight, key)
	if handled {
		s.recordLocked(key)
	}
}

// recordLocked remembers key in the ring, pushing out the oldest.
func (s *seenSet) recordLocked(key string) {
	if _, ok := s.keys[key]; ok {
		return
	}
	old := s.ring[s.next]
	if g, ok := s.keys[old.key]; ok && g == old.gen {
		delete(s.keys, old.key)
	}
	s.gen++
	s.keys[key] = s.gen
	s.ring[s.next] = seenEntry{key: key, gen: s.gen}
	s.next = (s.next + 1) % len(s.ring)
}
