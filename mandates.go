package billing

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"time"
)

// MandatesService sets up direct-debit mandates and charges under them.
type MandatesService service

// DirectDebitChannel is a mobile-money network that supports direct debit.
type DirectDebitChannel string

// The direct-debit channels. MTN verifies a mandate by a USSD prompt on the customer's
// phone; Vodafone by a one-time passcode sent by SMS and submitted with VerifyOTP.
const (
	DirectDebitChannelMTN      DirectDebitChannel = "mtn-gh-direct-debit"
	DirectDebitChannelVodafone DirectDebitChannel = "vodafone-gh-direct-debit"
)

var directDebitChannels = []DirectDebitChannel{DirectDebitChannelMTN, DirectDebitChannelVodafone}

// VerificationType is how the customer approves a mandate.
type VerificationType string

// The verification types of a mandate.
const (
	VerificationTypeUSSD VerificationType = "USSD"
	VerificationTypeOTP  VerificationType = "OTP"
)

// MandateStatus is the state of a mandate.
type MandateStatus string

// The mandate states: PENDING until the customer approves, APPROVED once charges are
// allowed, CANCELLED after Cancel (Reactivate asks for approval again). The spec also
// names ACTIVE as a notified status of an approved mandate; it counts as approved.
const (
	MandateStatusPending   MandateStatus = "PENDING"
	MandateStatusApproved  MandateStatus = "APPROVED"
	MandateStatusActive    MandateStatus = "ACTIVE"
	MandateStatusCancelled MandateStatus = "CANCELLED"
	// MandateStatusFailed: the customer refused or did not approve in time (the
	// provider's status; the spec names none for it). Nothing can be charged.
	MandateStatusFailed MandateStatus = "FAILED"
)

// Mandate is a direct-debit pre-approval. Each call fills the fields its answer carries:
// Status returns them all.
type Mandate struct {
	// ServicePreApprovalID is the service's id of the mandate: servicePreApprovalId on
	// the spec's wire, hubtelPreApprovalId (in any casing) on the provider's; either is
	// read here.
	ServicePreApprovalID string             `json:"servicePreApprovalId"`
	ClientReferenceID    string             `json:"clientReferenceId,omitempty"`
	CustomerMSISDN       string             `json:"customerMsisdn,omitempty"`
	Channel              DirectDebitChannel `json:"channel,omitempty"`
	VerificationType     VerificationType   `json:"verificationType,omitempty"`
	// OTPPrefix is the four letters that start the passcode the customer receives by
	// SMS; empty for USSD.
	OTPPrefix         string        `json:"otpPrefix,omitempty"`
	PreapprovalStatus MandateStatus `json:"preapprovalStatus"`
	CreatedAt         time.Time     `json:"createdAt,omitzero"`
}

// UnmarshalJSON reads the mandate in either casing, its status in any casing (FAILED
// included) and createdAt in ISO 8601 or "YYYY-MM-DD HH:MM:SS" UTC. A field it cannot
// read is left empty; the status beside it is still read.
func (m *Mandate) UnmarshalJSON(b []byte) error {
	return unmarshalWire[mandateWire](b, m)
}

func (m *Mandate) fromWire(w *mandateWire) {
	*m = Mandate{
		ServicePreApprovalID: w.id(), ClientReferenceID: string(w.ClientReferenceID),
		CustomerMSISDN: string(w.CustomerMSISDN), Channel: DirectDebitChannel(w.Channel),
		VerificationType: w.verification(), OTPPrefix: string(w.OTPPrefix), PreapprovalStatus: w.status(),
		CreatedAt: readTime(w.CreatedAt).at,
	}
}

// IsPending reports whether the mandate waits for the customer's approval.
func (m *Mandate) IsPending() bool { return m.PreapprovalStatus == MandateStatusPending }

// IsFinal reports whether the approval request has ended: approved, cancelled or failed.
func (m *Mandate) IsFinal() bool {
	return m.Succeeded() || m.PreapprovalStatus == MandateStatusCancelled || m.PreapprovalStatus == MandateStatusFailed
}

// Succeeded reports whether the mandate is approved (APPROVED or ACTIVE), so it can be
// charged.
func (m *Mandate) Succeeded() bool {
	return m.PreapprovalStatus == MandateStatusApproved || m.PreapprovalStatus == MandateStatusActive
}

// MandateCreateParams asks a customer to approve a direct-debit mandate. Every field is
// required.
type MandateCreateParams struct {
	// ClientReferenceID is the merchant's reference of the mandate, of
	// 1-36 characters: letters and digits only. It is the key of Status.
	ClientReferenceID string `json:"clientReferenceId"`
	// CustomerMSISDN is the customer's wallet number in international form; it is
	// normalised to digits without plus ("233241234567").
	CustomerMSISDN string             `json:"customerMsisdn"`
	Channel        DirectDebitChannel `json:"channel"`
	// CallbackURL receives the mandate callback once the customer approves.
	CallbackURL string `json:"callbackUrl"`
}

func (p *MandateCreateParams) validate() error {
	if p == nil {
		return invalid("params", "are required")
	}
	return firstError(
		referenceMandate.required("clientReferenceId", p.ClientReferenceID),
		required("customerMsisdn", p.CustomerMSISDN),
		requiredOneOf("channel", p.Channel, directDebitChannels...),
		requiredURL("callbackUrl", p.CallbackURL),
	)
}

// Create asks the customer to approve a mandate and returns it PENDING. For
// VerificationTypeOTP, the customer receives a passcode by SMS that starts with the
// returned OTPPrefix: submit it with VerifyOTP. For USSD, the customer approves on the
// phone. Either way the approval arrives at CallbackURL, or through Status.
//
// It is never re-sent once it may have reached the service: an ambiguous failure returns
// an error matching ErrOutcomeUnknown that carries the client reference; Status resolves it.
func (s *MandatesService) Create(ctx context.Context, p *MandateCreateParams) (*Mandate, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	body := *p
	if err := internationalDigits("customerMsisdn", &body.CustomerMSISDN); err != nil {
		return nil, err
	}
	return send[Mandate](ctx, s.client, epMandateCreate.movement(p.ClientReferenceID, &body))
}

// MandateVerifyOTPParams submits the passcode the customer received by SMS. Every field is
// required.
type MandateVerifyOTPParams struct {
	CustomerMSISDN       string `json:"customerMsisdn"`
	ServicePreApprovalID string `json:"servicePreApprovalId"`
	// ClientReferenceID is the mandate's, as given to Create: of
	// 1-36 characters: letters and digits only.
	ClientReferenceID string `json:"clientReferenceId"`
	// OTPCode is the four-letter prefix, a hyphen and the four digits: "ABCD-1234". The
	// letters are sent in upper case, however they were typed.
	OTPCode string `json:"otpCode"`
}

func (p *MandateVerifyOTPParams) validate() error {
	if p == nil {
		return invalid("params", "are required")
	}
	return firstError(
		required("customerMsisdn", p.CustomerMSISDN),
		required("servicePreApprovalId", p.ServicePreApprovalID),
		referenceMandate.required("clientReferenceId", p.ClientReferenceID),
		otpShape("otpCode", p.OTPCode),
	)
}

// otpShape checks the passcode form the service takes: four letters, a hyphen, 4 digits.
func otpShape(field, v string) error {
	ok := len(v) == 9 && isLetters(v[:4]) && v[4] == '-' && allDigits(v[5:])
	if !ok {
		return invalid(field, "must be the four-letter prefix, a hyphen and the 4 digits, like ABCD-1234")
	}
	return nil
}

// VerifyOTP submits the passcode of an OTP mandate. The mandate stays PENDING in the
// answer; the approval follows by callback (or Status). A wrong code is an *APIError with
// code 4204 (CodePreapprovalFailed).
func (s *MandatesService) VerifyOTP(ctx context.Context, p *MandateVerifyOTPParams) (*Mandate, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	body := *p
	if err := internationalDigits("customerMsisdn", &body.CustomerMSISDN); err != nil {
		return nil, err
	}
	body.OTPCode = strings.ToUpper(body.OTPCode) // the service's prefixes are capitals
	return send[Mandate](ctx, s.client, epMandateVerifyOTP.op(&body))
}

// Status returns a mandate by its client reference, with every field.
func (s *MandatesService) Status(ctx context.Context, clientReferenceID string) (*Mandate, error) {
	return send[Mandate](ctx, s.client, epMandateStatus.op(nil, seg("clientReferenceId", clientReferenceID)))
}

// Cancel cancels the mandate of a customer's number and returns it CANCELLED; it can no
// longer be charged until Reactivate. ErrNotFound means the number has no mandate to
// cancel. The provider answers a cancel with data true and no mandate: Cancel then
// returns a Mandate holding the number and CANCELLED; data false is an *APIError.
func (s *MandatesService) Cancel(ctx context.Context, customerMSISDN string) (*Mandate, error) {
	if err := required("customerMsisdn", customerMSISDN); err != nil {
		return nil, err
	}
	msisdn, err := normalizePhone("customerMsisdn", customerMSISDN)
	if err != nil {
		return nil, err
	}
	o := epMandateCancel.op(nil, seg("customerMsisdn", msisdn))
	env := new(envelope[cancelAnswer])
	if err := s.client.do(ctx, o, env); err != nil {
		return nil, err
	}
	switch done := env.Data.done; {
	case done == nil:
		return &env.Data.mandate, nil
	case *done:
		return &Mandate{CustomerMSISDN: msisdn, PreapprovalStatus: MandateStatusCancelled}, nil
	}
	message := env.Message
	if message == "" {
		message = "the service answered data false: the mandate was not cancelled"
	}
	return nil, &APIError{StatusCode: http.StatusOK, Code: env.code(), Message: message, Method: o.method, Path: maskNumbers(o.path), scrub: s.client.scrub}
}

// cancelAnswer is the data of a cancel: the cancelled mandate on the spec's wire, a
// boolean on the provider's (true: cancelled).
type cancelAnswer struct {
	mandate Mandate
	done    *bool
}

// UnmarshalJSON reads a boolean or a mandate.
func (a *cancelAnswer) UnmarshalJSON(b []byte) error {
	switch t := string(bytes.TrimSpace(b)); t {
	case "true", "false":
		done := t == "true"
		a.done = &done
		return nil
	}
	return a.mandate.UnmarshalJSON(b)
}

// MandateReactivateParams asks again for the approval of a customer's cancelled mandate.
// Both fields are required.
type MandateReactivateParams struct {
	CustomerMSISDN string `json:"customerMsisdn"`
	// CallbackURL receives the mandate callback of the new approval.
	CallbackURL string `json:"callbackUrl"`
}

func (p *MandateReactivateParams) validate() error {
	if p == nil {
		return invalid("params", "are required")
	}
	return firstError(required("customerMsisdn", p.CustomerMSISDN), requiredURL("callbackUrl", p.CallbackURL))
}

// Reactivate asks the customer to approve their cancelled mandate again and returns it
// PENDING. An OTP mandate gets a fresh passcode by SMS (submit it with VerifyOTP); the
// approval arrives at the new CallbackURL.
func (s *MandatesService) Reactivate(ctx context.Context, p *MandateReactivateParams) (*Mandate, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	body := *p
	if err := internationalDigits("customerMsisdn", &body.CustomerMSISDN); err != nil {
		return nil, err
	}
	return send[Mandate](ctx, s.client, epMandateReactivate.op(&body))
}

// DirectDebitParams charges a customer's wallet under an approved mandate. Every field
// but CustomerName and CustomerEmail is required.
type DirectDebitParams struct {
	// CustomerMSISDN is normalised to international digits without plus.
	CustomerMSISDN string             `json:"CustomerMsisdn"`
	Channel        DirectDebitChannel `json:"Channel"`
	// Amount is sent with two decimals (DecimalAmount(1050) is 10.50).
	Amount DecimalAmount `json:"Amount"`
	// PrimaryCallbackURL receives the transaction callback with the final state.
	PrimaryCallbackURL string `json:"PrimaryCallbackURL"`
	// Description is shown on the customer's statement; at most 255 characters.
	Description string `json:"Description"`
	// ClientReference is the merchant's unique reference, of
	// 1-36 characters: letters and digits only. It is the key of ChargeStatus.
	ClientReference string `json:"ClientReference"`
	CustomerName    string `json:"CustomerName,omitempty"`
	CustomerEmail   string `json:"CustomerEmail,omitempty"`
}

func (p *DirectDebitParams) validate() error {
	if p == nil {
		return invalid("params", "are required")
	}
	return firstError(
		required("CustomerMsisdn", p.CustomerMSISDN),
		requiredOneOf("Channel", p.Channel, directDebitChannels...),
		positiveDecimal("Amount", p.Amount),
		requiredURL("PrimaryCallbackURL", p.PrimaryCallbackURL),
		required("Description", p.Description),
		maxLength("Description", p.Description, 255),
		referenceDirectDebit.required("ClientReference", p.ClientReference),
		emailShape("CustomerEmail", p.CustomerEmail),
	)
}

// DirectDebit is the service's acceptance of a direct-debit charge. Amounts hold minor
// units (DecimalAmount(4999) is 49.99), read from the decimals of either wire.
type DirectDebit struct {
	TransactionID      string        `json:"TransactionId"`
	Description        string        `json:"Description,omitempty"`
	ClientReference    string        `json:"ClientReference"`
	Amount             DecimalAmount `json:"Amount"`
	Charges            DecimalAmount `json:"Charges"`
	AmountAfterCharges DecimalAmount `json:"AmountAfterCharges"`
	AmountCharged      DecimalAmount `json:"AmountCharged"`
	DeliveryFee        DecimalAmount `json:"DeliveryFee"`
}

// UnmarshalJSON reads the acceptance, its amounts in major units on both wires. A field
// it cannot read is left empty.
func (d *DirectDebit) UnmarshalJSON(b []byte) error {
	return unmarshalWire[transactionWire](b, d)
}

func (d *DirectDebit) fromWire(w *transactionWire) {
	t := w.read()
	*d = DirectDebit{
		TransactionID: t.transactionID, Description: t.description, ClientReference: t.clientReference,
		Amount: DecimalAmount(t.amount), Charges: DecimalAmount(t.charges), AmountAfterCharges: DecimalAmount(t.amountAfterCharges),
		AmountCharged: DecimalAmount(t.amountCharged), DeliveryFee: DecimalAmount(t.deliveryFee),
	}
}

// Charge debits a customer's wallet under their APPROVED mandate on the channel, with no
// PIN or passcode asked of the customer. The answer only says the charge was accepted;
// the final state arrives at PrimaryCallbackURL, or through ChargeStatus. Without an
// approved mandate it fails with code 4204 (CodePreapprovalFailed) and nothing moves.
//
// It is never re-sent once it may have reached the service: an ambiguous failure returns
// an error matching ErrOutcomeUnknown that carries the client reference.
func (s *MandatesService) Charge(ctx context.Context, p *DirectDebitParams) (*DirectDebit, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	body := *p
	if err := internationalDigits("CustomerMsisdn", &body.CustomerMSISDN); err != nil {
		return nil, err
	}
	return send[DirectDebit](ctx, s.client, epDirectDebit.movement(p.ClientReference, &body))
}

// DirectDebitTransaction is the status check of a direct-debit charge: the receive status
// shape with decimal amounts. Amount, Charges and AmountAfterCharges hold minor units
// (DecimalAmount(4999) is 49.99). ResponseCode describes the transaction: 0000 with Paid
// when paid, 0001 while pending, a failure code such as 2001 once it failed.
type DirectDebitTransaction struct {
	StatusResponse

	Date                  time.Time        `json:"date,omitzero"`
	Status                CollectionStatus `json:"status"`
	TransactionID         string           `json:"transactionId"`
	ExternalTransactionID string           `json:"externalTransactionId,omitempty"`
	PaymentMethod         string           `json:"paymentMethod,omitempty"`
	ClientReference       string           `json:"clientReference"`
	CurrencyCode          string           `json:"currencyCode,omitempty"`
	Amount                DecimalAmount    `json:"amount"`
	Charges               DecimalAmount    `json:"charges"`
	AmountAfterCharges    DecimalAmount    `json:"amountAfterCharges"`
	IsFulfilled           bool             `json:"isFulfilled"`

	// amountNamed: the answer carried an amount field (0 included).
	amountNamed bool
}

// UnmarshalJSON reads the transaction on either wire: decimal amounts, the date in ISO
// 8601 or "YYYY-MM-DD HH:MM:SS" UTC, nulls as empty. A field it cannot read is left
// empty; the state fields beside it are still read.
func (t *DirectDebitTransaction) UnmarshalJSON(b []byte) error {
	return unmarshalWire[collectionStatusWire](b, t)
}

func (t *DirectDebitTransaction) fromWire(w *collectionStatusWire) { t.fromStatus(w, t.StatusResponse) }

func (t *DirectDebitTransaction) fromStatus(w *collectionStatusWire, r StatusResponse) {
	c := w.read(majorUnits)
	*t = DirectDebitTransaction{
		StatusResponse: r, Date: c.date, Status: c.status, TransactionID: c.transactionID,
		ExternalTransactionID: c.externalTransactionID, PaymentMethod: c.paymentMethod, ClientReference: c.clientReference,
		CurrencyCode: c.currency, Amount: DecimalAmount(c.amount), Charges: DecimalAmount(c.charges),
		AmountAfterCharges: DecimalAmount(c.amountAfterCharges), IsFulfilled: c.isFulfilled, amountNamed: c.amountNamed,
	}
}

// Succeeded reports whether the charge was paid.
func (t *DirectDebitTransaction) Succeeded() bool { return t.Status == CollectionStatusPaid }

// IsFinal reports whether the charge has its final state: paid, or unpaid under a failure
// code. Unpaid under 0000, 0001 or 0005 (final state unknown) is still pending.
func (t *DirectDebitTransaction) IsFinal() bool { return collectionFinal(t.Status, t.ResponseCode) }

// IsPending reports whether the final state is still to come.
func (t *DirectDebitTransaction) IsPending() bool { return !t.IsFinal() }

// ChargeStatus asks for the state of a direct-debit charge by its client reference: the
// fallback when no callback has arrived five minutes after Charge, and the way to resolve
// ErrOutcomeUnknown. ErrNotFound means the service never recorded the charge.
//
// A failed charge is a result here, not an error: check IsFinal and Succeeded.
func (s *MandatesService) ChargeStatus(ctx context.Context, clientReference string) (*DirectDebitTransaction, error) {
	return statusCheck[DirectDebitTransaction, collectionStatusWire](ctx, s.client, epDirectDebitStatus.op(nil, seg("clientReference", clientReference)))
}
