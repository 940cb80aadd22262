package sandbox

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Response codes of the payment flows (SPEC "Errors"). CodeValidation and
// CodeKeysMismatch live in respond.go with the rest of the error body.
const (
	CodeSuccess             = "0000" // final success: fulfil the order
	CodeAccepted            = "0001" // accepted; the final state follows
	CodePreapprovalOK       = "2000" // mandate action completed
	CodeFailed              = "2001" // failed, or a duplicate client reference
	CodeNotRegistered       = "3050" // number not registered for payouts
	CodeDeclined            = "4070" // declined by the gateway
	CodeInsufficientBalance = "4075" // disbursement balance too low
	CodePreapprovalFailed   = "4204" // mandate request failed
)

// maxAmount bounds every amount at 10^14 minor units (a trillion GHS), so fee
// arithmetic never overflows.
const maxAmount int64 = 100_000_000_000_000

// Fees of the sandbox's schedule (docs/sandbox.md "Fees and the disbursement
// balance"), in basis points of the amount or in minor units, rounded half up
// to the minor unit.
const (
	checkoutFeeBasisPoints = 195 // 1.95% of a paid checkout
	receiveFeeBasisPoints  = 100 // 1% of a receive
	sendFeeBasisPoints     = 100 // 1% of a send ...
	sendFeeMinimum         = 100 // ... and at least 1.00
	flatCharge             = 100 // 1.00 on each send-to-bank and direct-debit charge
)

// percentFee returns basisPoints of amount, rounded half up to the minor unit.
func percentFee(amount, basisPoints int64) int64 {
	return (amount*basisPoints + 5_000) / 10_000
}

// movementKind names the operation that recorded a movement.
type movementKind string

const (
	kindCheckout     movementKind = "checkout"
	kindReceive      movementKind = "receive"
	kindSend         movementKind = "send"
	kindBankTransfer movementKind = "send-to-bank"
	kindDirectDebit  movementKind = "direct-debit"
	kindMandate      movementKind = "mandate"
)

// States of a movement.
const (
	StatePending   = "pending"
	StateSucceeded = "succeeded"
	StateFailed    = "failed"
)

// Movement is the sandbox's record of one accepted money movement: what the
// reliability tests compare with what a client believes happened.
type Movement struct {
	// Kind is the operation: checkout, receive, send, send-to-bank,
	// direct-debit or mandate.
	Kind string
	// ClientReference is the merchant's reference (a checkout's own reference).
	ClientReference string
	// TransactionID is the service's id of the movement.
	TransactionID string
	// State is pending, succeeded or failed.
	State string
	// ResponseCode is 0001 while pending, then 0000 or the failure code.
	ResponseCode string
	// Amount and Fee are in minor units.
	Amount, Fee int64
	// CreatedAt is when it was accepted; ResolvedAt when it became final
	// (zero while pending).
	CreatedAt, ResolvedAt time.Time
}

// movement is a Movement with what the sandbox needs to finish it.
type movement struct {
	Movement
	externalID  string // the network's reference, set on success
	payout      bool   // paid out of the disbursement balance
	debited     bool   // amount plus fee are off the balance now
	callbackURL string
	// callback builds the body posted to callbackURL when the movement
	// becomes final; it runs under s.mu. nil sends nothing.
	callback func() any
}

// finish makes m final with code at now; CodeSuccess succeeds, anything else fails.
func (m *movement) finish(code string, now time.Time) {
	m.ResponseCode, m.ResolvedAt, m.externalID = code, now, newExternalID()
	if code == CodeSuccess {
		m.State = StateSucceeded
		return
	}
	m.State = StateFailed
}

// externalRef is the network's reference as the spec shows it: null until the
// movement succeeds. The network answers a failure with a reference too
// (externalID), which the provider's collection callbacks carry.
func (m *movement) externalRef() *string {
	if m.State != StateSucceeded {
		return nil
	}
	ref := m.externalID
	return &ref
}

type movementKey struct {
	kind      movementKind
	reference string
}

// ledger is the one record of money in the sandbox: every accepted movement
// by kind and client reference (a reference is used once per operation),
// every movement counted under each reference it was recorded under, and the
// disbursement balance. Guarded by the Server's mu.
type ledger struct {
	byKey   map[movementKey]*movement
	byRef   map[string][]*movement
	balance int64 // minor units
}

func newLedger(balance int64) ledger {
	return ledger{byKey: map[movementKey]*movement{}, byRef: map[string][]*movement{}, balance: balance}
}

// checkNew refuses a client reference the operation has already used: the
// spec's 2001, under HTTP 200, with nothing moved.
func (l *ledger) checkNew(kind movementKind, reference string) error {
	if _, used := l.byKey[movementKey{kind, reference}]; used {
		return &refusal{status: http.StatusOK, code: CodeFailed,
			message: fmt.Sprintf("duplicate client reference %q: a %s with it was already accepted; nothing was moved", reference, kind)}
	}
	return nil
}

// accept records m as accepted at now, unless o refuses it at once. A payout
// is debited its amount plus fee; when the balance is short it is accepted
// undebited and o becomes a failure with 4075. alsoUnder names references
// besides m's own to count it under. Call checkNew first.
func (l *ledger) accept(m *movement, o *outcome, now time.Time, alsoUnder ...string) error {
	if o.refuse != "" {
		return &refusal{status: http.StatusBadRequest, code: o.refuse, message: refusalMessages[o.refuse]}
	}
	if m.payout {
		if total := m.Amount + m.Fee; total > l.balance {
			*o = outcome{code: CodeInsufficientBalance}
		} else {
			l.balance -= total
			m.debited = true
		}
	}
	m.State, m.ResponseCode, m.CreatedAt = StatePending, CodeAccepted, now
	l.byKey[movementKey{movementKind(m.Kind), m.ClientReference}] = m
	for _, ref := range append([]string{m.ClientReference}, alsoUnder...) {
		if ref != "" {
			l.byRef[ref] = append(l.byRef[ref], m)
		}
	}
	return nil
}

// settle makes m final with code unless it already is, crediting a failed
// payout back. It reports whether m changed.
func (l *ledger) settle(m *movement, code string, now time.Time) bool {
	if m.State != StatePending {
		return false
	}
	m.finish(code, now)
	if m.State == StateFailed && m.debited {
		l.balance += m.Amount + m.Fee
		m.debited = false
	}
	return true
}

// Movements returns every money movement accepted under clientReference, by
// any operation, oldest first. A checkout session counts under its reference
// and under metadata.clientReference when that is given.
func (s *Server) Movements(clientReference string) []Movement {
	s.mu.Lock()
	defer s.mu.Unlock()
	found := s.money.byRef[clientReference]
	views := make([]Movement, len(found))
	for i, m := range found {
		views[i] = m.Movement
	}
	return views
}

// DisbursementBalance returns the balance of the disbursement account in
// minor units: payouts take amount plus fee when accepted and give it back
// when they fail.
func (s *Server) DisbursementBalance() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.money.balance
}

// outcome is how the sandbox answers a movement, chosen by a test number.
type outcome struct {
	refuse  string        // a response code refusing the request at once; nothing moves
	code    string        // the final response code: CodeSuccess or a failure
	silent  bool          // no callback: only the status check tells the final state
	pending time.Duration // the least time it stays pending
}

// refusalMessages explain the codes that refuse a request at once.
var refusalMessages = map[string]string{
	CodeDeclined:      "declined by the gateway (sandbox test number ending 0003)",
	CodeNotRegistered: "the mobile number is not registered for mobile-money payouts (sandbox test number ending 0003)",
}

// testNumbers maps the last four digits of a phone number, MSISDN or bank
// account number to an outcome (DESIGN "Sandbox test numbers"); any other
// number succeeds.
type testNumbers map[string]outcome

func (t testNumbers) of(number string) outcome {
	if o, ok := t[number[max(len(number)-4, 0):]]; ok {
		return o
	}
	return outcome{code: CodeSuccess}
}

var (
	// collectionOutcomes serve direct receive and the direct-debit charge.
	collectionOutcomes = testNumbers{
		"0001": {code: CodeFailed},
		"0002": {code: CodeSuccess, silent: true},
		"0003": {refuse: CodeDeclined},
		"0004": {code: CodeSuccess, pending: 10 * time.Minute},
	}
	sendOutcomes = testNumbers{
		"0001": {code: CodeFailed},
		"0002": {code: CodeSuccess, silent: true},
		"0003": {refuse: CodeNotRegistered},
		"0004": {code: CodeInsufficientBalance},
	}
	// bankOutcomes are keyed by the bank account number: 0001 fails the name check.
	bankOutcomes = testNumbers{"0001": {code: CodeFailed}}
)

// resolveLater makes m final as o says once it has been pending for
// ResolveAfter (or o's own pending time, if longer), then posts its callback.
func (s *Server) resolveLater(m *movement, o outcome) {
	if m.callback != nil {
		s.forgeWhilePending(callbackRefs{client: m.ClientReference, service: m.TransactionID}, m.callbackURL, func() any {
			s.mu.Lock()
			defer s.mu.Unlock()
			return s.failureCallbackOf(m)
		})
	}
	s.scheduleJob(m.CreatedAt.Add(max(s.cfg.ResolveAfter, o.pending)),
		resolveMovementJob{Kind: m.Kind, Reference: m.ClientReference, Code: o.code, Silent: o.silent})
}

// refusal is a payment-flow failure answered in the operation's own envelope
// with a response code, rather than in the error body.
type refusal struct {
	status  int
	code    string
	message string
}

func (r *refusal) Error() string { return r.message }

func preapprovalFailed(format string, args ...any) *refusal {
	return &refusal{status: http.StatusBadRequest, code: CodePreapprovalFailed, message: fmt.Sprintf(format, args...)}
}

// envelopeFamily is the shape of an operation's answers. A message is
// written when one is given.
type envelopeFamily int

const (
	familySuccess envelopeFamily = iota // {success, message, responseCode, data}: receive, send
	familyCamel                         // {message, responseCode, data}: mandates, collection status checks
	familyPascal                        // {Message, ResponseCode, Data}: send-to-bank, direct debit
)

// camelBody is the lower-camel envelope of receive, send and mandates.
type camelBody struct {
	Success      *bool  `json:"success,omitempty"`
	Message      string `json:"message,omitempty"`
	ResponseCode string `json:"responseCode"`
	Data         any    `json:"data"`
}

// pascalBody is the Pascal-case envelope of send-to-bank and direct debit.
type pascalBody struct {
	Message      string `json:"Message,omitempty"`
	ResponseCode string `json:"ResponseCode"`
	Data         any    `json:"Data"`
}

// writeFlow answers in the family's envelope (flowBody).
func writeFlow(w http.ResponseWriter, family envelopeFamily, status int, code, message string, data any) {
	writeJSON(w, status, flowBody(family, code, message, data))
}

// writeMoneyError answers a refusal in the family's envelope and any other
// error in the error body.
func writeMoneyError(w http.ResponseWriter, family envelopeFamily, err error) {
	var r *refusal
	if errors.As(err, &r) {
		writeFlow(w, family, r.status, r.code, r.message, nil)
		return
	}
	writeError(w, err)
}

// decimal is an amount in minor units written on the wire in major units
// with exactly two decimals: 5000 is 50.00.
type decimal int64

// String writes the amount in major units with two decimals.
func (d decimal) String() string {
	sign, n := "", int64(d)
	if n < 0 {
		sign, n = "-", -n
	}
	return fmt.Sprintf("%s%d.%02d", sign, n/100, n%100)
}

// MarshalJSON writes the amount as a JSON number with two decimals.
func (d decimal) MarshalJSON() ([]byte, error) { return []byte(d.String()), nil }

// plainTime is a moment written "2006-01-02 15:04:05" in UTC: the form of the
// send and send-to-bank status checks (SPEC "Conventions").
type plainTime struct{ time.Time }

// MarshalJSON writes the moment without zone or fraction.
func (t plainTime) MarshalJSON() ([]byte, error) {
	return []byte(`"` + t.UTC().Format(time.DateTime) + `"`), nil
}

var (
	exactlyTwoDecimals = regexp.MustCompile(`^(0|[1-9][0-9]{0,11})\.[0-9]{2}$`)
	atMostTwoDecimals  = regexp.MustCompile(`^(0|[1-9][0-9]{0,11})(\.[0-9]{1,2})?$`)
)

// decimalAmount returns a positive amount written as a JSON number with
// exactly two decimals (send-to-bank) or at most two (direct debit), in minor
// units. The raw text decides: 10.1 is refused where two decimals are due,
// and a string, an exponent or a third decimal always.
func (f *fields) decimalAmount(name string, exactlyTwo bool) (int64, bool) {
	raw, ok := f.value(name)
	if !ok {
		return 0, false
	}
	shape, rule := atMostTwoDecimals, "a positive number with at most two decimal places, such as 10.5"
	if exactlyTwo {
		shape, rule = exactlyTwoDecimals, "a positive number with exactly two decimal places, such as 10.50"
	}
	text := string(raw)
	if !shape.MatchString(text) {
		f.fail(name, "%s must be %s", name, rule)
		return 0, false
	}
	whole, fraction, _ := strings.Cut(text, ".")
	major, _ := strconv.ParseInt(whole, 10, 64) // at most 12 digits: it fits
	minor, _ := strconv.ParseInt((fraction + "00")[:2], 10, 64)
	amount := major*100 + minor
	if amount <= 0 || amount > maxAmount {
		f.fail(name, "%s must be %s, greater than zero and at most %d.00", name, rule, maxAmount/100)
		return 0, false
	}
	return amount, true
}

// minorAmount returns a positive integer amount in minor units (SPEC
// "Conventions": decimals are refused).
func (f *fields) minorAmount(name string) (int64, bool) {
	return f.integerWhere(name, fmt.Sprintf("a positive integer in minor units (5000 means 50.00), at most %d", maxAmount),
		func(n int64) bool { return n > 0 && n <= maxAmount })
}

// clientReference returns a merchant reference: 1 to 36 letters and digits
// (SPEC "Limits").
func (f *fields) clientReference(name string) (string, bool) {
	return f.stringWhere(name, "1 to 36 letters and digits", isClientReference)
}

// description returns a description of at most 255 characters.
func (f *fields) description(name string) (string, bool) {
	return f.stringWhere(name, "at most 255 characters", func(s string) bool { return len([]rune(s)) <= 255 })
}

// callbackURL returns an absolute http or https URL.
func (f *fields) callbackURL(name string) (string, bool) {
	return f.stringWhere(name, "an absolute http or https URL", isAbsoluteURL)
}

// msisdn returns an international number without a plus: 7 to 15 digits
// (SPEC "Direct debit mandates").
func (f *fields) msisdn(name string) (string, bool) {
	return f.stringWhere(name, "an international number without +: 7 to 15 digits, e.g. 233241234567", isMSISDN)
}

// movementReferenceRule says isMovementReference in words.
const movementReferenceRule = "1 to 36 letters, digits, hyphens and underscores"

// isMovementReference is the client reference rule of receive, send and
// checkout: the provider takes hyphens and underscores there (ORDER-2291-A),
// and merchants use them. Send-to-bank, direct debit and mandates take
// isClientReference.
func isMovementReference(s string) bool {
	if s == "" || len(s) > 36 {
		return false
	}
	for _, r := range s {
		if !('0' <= r && r <= '9' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

func isClientReference(s string) bool {
	if s == "" || len(s) > 36 {
		return false
	}
	for _, r := range s {
		if !('0' <= r && r <= '9' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z') {
			return false
		}
	}
	return true
}

func isAbsoluteURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

func isMSISDN(s string) bool { return !strings.HasPrefix(s, "+") && isPhone(s) }

// mobileMoneyRequest is the body shared by direct receive and direct send.
type mobileMoneyRequest struct {
	amount          int64
	currency        string
	phone           string // digits only, international
	provider        string
	description     string
	customerID      string
	callbackURL     string
	clientReference string // metadata.clientReference, or generated
	metadata        map[string]any
}

// readMobileMoney reads the fields of receive and send (SPEC "Direct
// receive", "Direct send"); providers are those the operation takes.
func readMobileMoney(f *fields, providers ...string) mobileMoneyRequest {
	f.require("amount", "phone", "provider", "description")
	var req mobileMoneyRequest
	req.amount, _ = f.minorAmount("amount")
	req.currency = defaultCurrency
	if c, ok := f.currency("currency"); ok {
		req.currency = c
	}
	phone, _ := f.phone("phone")
	req.phone = strings.TrimPrefix(phone, "+")
	req.provider, _ = f.enum("provider", providers...)
	req.description, _ = f.description("description")
	req.customerID, _ = f.optionalString("customerId")
	req.callbackURL, _ = f.callbackURL("callbackUrl")
	req.metadata, _ = f.metadata("metadata")
	req.clientReference = newReference()
	if ref, given := metadataReference(f, req.metadata, isMovementReference); given {
		req.clientReference = ref
	}
	return req
}

// metadataReference returns metadata.clientReference, the merchant reference of the
// operations that carry theirs in metadata (checkout, receive, send). When given it must
// pass valid: 1 to 36 letters and digits (SPEC "Limits"), with hyphens and underscores
// too on receive and send.
func metadataReference(f *fields, metadata map[string]any, valid func(string) bool) (string, bool) {
	raw, given := metadata["clientReference"]
	if !given {
		return "", false
	}
	ref, ok := raw.(string)
	if !ok || !valid(ref) {
		rule := "1 to 36 letters and digits"
		if valid("a-b_c") {
			rule = movementReferenceRule
		}
		f.fail("metadata.clientReference", "metadata.clientReference must be %s", rule)
		return "", false
	}
	return ref, true
}

// checkCustomer refuses a customerId that names no customer; s.mu must be held.
func (s *Server) checkCustomer(id string) error {
	if _, ok := s.customers.table.get(id); id != "" && !ok {
		return validationError("customerId", "customerId %q names no customer", id)
	}
	return nil
}

// collectionStatus is the data of the receive and direct-debit status
// checks; the amounts are written by the wire and the operation (receive:
// minor units on the spec's wire).
type collectionStatus struct {
	Date                  string  `json:"date"`
	Status                string  `json:"status"` // Paid or Unpaid
	TransactionID         string  `json:"transactionId"`
	ExternalTransactionID *string `json:"externalTransactionId"`
	PaymentMethod         string  `json:"paymentMethod"`
	ClientReference       string  `json:"clientReference"`
	CurrencyCode          *string `json:"currencyCode"`
	Amount                number  `json:"amount"`
	Charges               number  `json:"charges"`
	AmountAfterCharges    number  `json:"amountAfterCharges"`
	IsFulfilled           *bool   `json:"isFulfilled"` // true when paid, else null
}

// collectionStatusOf describes m as the status check sees it: the response
// code, the message and the data. A failed collection charged nothing.
func collectionStatusOf(m *movement, currency, method string, amount func(int64) number) (string, string, collectionStatus) {
	charges := m.Fee
	if m.State == StateFailed {
		charges = 0
	}
	st := collectionStatus{
		Date: specTime(m.CreatedAt), Status: "Unpaid", TransactionID: m.TransactionID,
		ExternalTransactionID: m.externalRef(), PaymentMethod: method, ClientReference: m.ClientReference,
		CurrencyCode: &currency, Amount: amount(m.Amount), Charges: amount(charges), AmountAfterCharges: amount(0),
	}
	switch m.State {
	case StateSucceeded:
		paid := true
		st.Status, st.IsFulfilled, st.AmountAfterCharges = "Paid", &paid, amount(m.Amount-m.Fee)
		return CodeSuccess, "the transaction was paid", st
	case StateFailed:
		return m.ResponseCode, "the transaction failed", st
	default:
		st.AmountAfterCharges = amount(m.Amount - m.Fee)
		return CodeAccepted, "the transaction is pending", st
	}
}

// specCollectionStatus is the spec's receive and direct-debit status check.
func specCollectionStatus(m *movement, currency, method string, amount func(int64) number) any {
	code, message, data := collectionStatusOf(m, currency, method, amount)
	return flowBody(familyCamel, code, message, data)
}

// transactionCallback is the callback of receive, direct debit and web SDK
// payments (SPEC "Transaction callbacks"), amounts in major units.
type transactionCallback struct {
	ResponseCode string                  `json:"ResponseCode"`
	Message      string                  `json:"Message"`
	Data         transactionCallbackData `json:"Data"`
}

type transactionCallbackData struct {
	Amount                number  `json:"Amount"`
	Charges               number  `json:"Charges"`
	AmountAfterCharges    number  `json:"AmountAfterCharges"`
	Description           string  `json:"Description"`
	ClientReference       string  `json:"ClientReference"`
	TransactionID         string  `json:"TransactionId"`
	ExternalTransactionID *string `json:"ExternalTransactionId"`
	AmountCharged         number  `json:"AmountCharged"`
	OrderID               string  `json:"OrderId"`
	PaymentDate           *string `json:"PaymentDate"`
}

// transactionCallbackOf is the callback of a final collection: on failure
// nothing was charged and, on the spec's wire, there is no payment date.
// s.mu must be held.
func transactionCallbackOf(m *movement, clientReference, description, orderID string, amount func(int64) number) transactionCallback {
	cb := transactionCallback{ResponseCode: m.ResponseCode, Message: "failed", Data: transactionCallbackData{
		Amount: amount(m.Amount), Charges: amount(0), AmountAfterCharges: amount(0), Description: description,
		ClientReference: clientReference, TransactionID: m.TransactionID, ExternalTransactionID: m.externalRef(),
		AmountCharged: amount(0), OrderID: orderID,
	}}
	if m.State == StateSucceeded {
		paid := specTime(m.ResolvedAt)
		cb.Message = "success"
		cb.Data.Charges, cb.Data.AmountAfterCharges, cb.Data.AmountCharged = amount(m.Fee), amount(m.Amount-m.Fee), amount(m.Amount)
		cb.Data.PaymentDate = &paid
	}
	return cb
}

func specTransactionCallback(m *movement, clientReference, description, orderID, _ string) any {
	return transactionCallbackOf(m, clientReference, description, orderID, twoDecimals)
}

// payoutCallback is the callback of send and send-to-bank (SPEC "Send and
// send-to-bank callbacks"), amounts in major units.
type payoutCallback struct {
	ResponseCode string     `json:"ResponseCode"`
	Data         payoutData `json:"Data"`
}

// payoutData is a payout as its callback and the send-to-bank answer show it.
type payoutData struct {
	AmountDebited         number  `json:"AmountDebited"`
	TransactionID         string  `json:"TransactionId"`
	ExternalTransactionID *string `json:"ExternalTransactionId"`
	Description           string  `json:"Description"`
	ClientReference       string  `json:"ClientReference"`
	Amount                number  `json:"Amount"`
	Charges               number  `json:"Charges"`
	Meta                  any     `json:"Meta"`
	RecipientName         *string `json:"RecipientName"`
}

// payoutCallbackOf is the callback of a final payout: a failed one debited
// nothing and names no recipient. s.mu must be held.
func payoutCallbackOf(m *movement, description, recipient string, amount, fee func(int64) number) payoutCallback {
	cb := payoutCallback{ResponseCode: m.ResponseCode, Data: payoutData{
		AmountDebited: amount(0), TransactionID: m.TransactionID, ExternalTransactionID: m.externalRef(), Description: description,
		ClientReference: m.ClientReference, Amount: amount(m.Amount), Charges: fee(m.Fee),
	}}
	if m.State == StateSucceeded {
		cb.Data.AmountDebited, cb.Data.RecipientName = amount(m.Amount+m.Fee), &recipient
	}
	return cb
}

// payoutStatus is the response code and transactionStatus of a payout's
// status check.
func payoutStatus(m *movement) (code, status string) {
	switch m.State {
	case StateSucceeded:
		return CodeSuccess, "success"
	case StateFailed:
		return m.ResponseCode, "failed"
	default:
		return CodeAccepted, "pending"
	}
}

// newReference returns a service reference: 24 hex digits, alphanumeric so
// it fits the status path and the client-reference rule alike.
func newReference() string { return newID("") }

// newExternalID returns a network's transaction reference: 11 digits.
func newExternalID() string {
	return strconv.FormatInt(10_000_000_000+randomBelow(90_000_000_000), 10)
}
