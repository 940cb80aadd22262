package billing

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"time"
)

// PaymentsService takes money in: hosted checkout sessions and the mobile-money prompt.
type PaymentsService service

// Provider is a mobile-money network of direct receive and direct send.
type Provider string

// The mobile-money providers. MPESA receives but does not send.
const (
	ProviderMTN        Provider = "MTN"
	ProviderTelecel    Provider = "TELECEL"
	ProviderAirtelTigo Provider = "AIRTELTIGO"
	ProviderMPESA      Provider = "MPESA"
)

var (
	receiveProviders = []Provider{ProviderMTN, ProviderTelecel, ProviderAirtelTigo, ProviderMPESA}
	sendProviders    = []Provider{ProviderMTN, ProviderTelecel, ProviderAirtelTigo}
)

// PaymentStatus is the state of a checkout payment.
type PaymentStatus string

// The checkout payment states. A session starts PENDING and ends SUCCEEDED when the payer
// pays, or FAILED when the card or mobile-money payment is declined.
const (
	PaymentStatusPending   PaymentStatus = "PENDING"
	PaymentStatusSucceeded PaymentStatus = "SUCCEEDED"
	PaymentStatusFailed    PaymentStatus = "FAILED"
)

// PaymentMethod is how a checkout payment was paid.
type PaymentMethod string

// The payment methods of the hosted checkout page.
const (
	PaymentMethodMobileMoney  PaymentMethod = "MOBILE_MONEY"
	PaymentMethodCard         PaymentMethod = "CARD"
	PaymentMethodBankTransfer PaymentMethod = "BANK_TRANSFER"
)

// PaymentEnvironment says whether a payment is real money (LIVE) or test mode (TEST).
type PaymentEnvironment string

// The environments of a payment.
const (
	PaymentEnvironmentLive PaymentEnvironment = "LIVE"
	PaymentEnvironmentTest PaymentEnvironment = "TEST"
)

// Payment is a checkout payment record: created PENDING with the CheckoutURL to send the
// payer to, then resolved with the method, fee, net and payment details.
type Payment struct {
	ID          string             `json:"id"`
	Reference   string             `json:"reference"`
	Status      PaymentStatus      `json:"status"`
	Environment PaymentEnvironment `json:"environment,omitempty"`
	// Method is empty until the payment is made.
	Method PaymentMethod `json:"method,omitempty"`
	// Amount is in minor units (5000 is 50.00).
	Amount   int64  `json:"amount"`
	Currency string `json:"currency"`
	// Fee is the platform fee and Net the amount minus the fee, in minor units.
	Fee         int64    `json:"fee"`
	Net         int64    `json:"net"`
	Description string   `json:"description,omitempty"`
	Metadata    Metadata `json:"metadata,omitempty"`
	// FailureCode and FailureMessage say why a FAILED payment failed.
	FailureCode    string          `json:"failureCode,omitempty"`
	FailureMessage string          `json:"failureMessage,omitempty"`
	PaidAt         time.Time       `json:"paidAt,omitzero"`
	CreatedAt      time.Time       `json:"createdAt,omitzero"`
	UpdatedAt      time.Time       `json:"updatedAt,omitzero"`
	Customer       PaymentCustomer `json:"customer,omitzero"`
	// Refunds are kept as the service sent them: the spec does not show their fields.
	Refunds []json.RawMessage `json:"refunds,omitempty"`
	// CheckoutURL is where to send the payer, on a new session.
	CheckoutURL string `json:"checkoutUrl,omitempty"`
	// MobileMoneyDetail is set after a mobile-money payment, CardDetail after a card one.
	MobileMoneyDetail MobileMoneyDetail `json:"mobileMoneyDetail,omitzero"`
	CardDetail        CardDetail        `json:"cardDetail,omitzero"`
}

// IsPending reports whether the payer has not paid yet.
func (p *Payment) IsPending() bool { return p.Status == PaymentStatusPending }

// IsFinal reports whether the payment has its final state, SUCCEEDED or FAILED.
func (p *Payment) IsFinal() bool {
	return p.Status == PaymentStatusSucceeded || p.Status == PaymentStatusFailed
}

// Succeeded reports whether the payment was paid: fulfil the order.
func (p *Payment) Succeeded() bool { return p.Status == PaymentStatusSucceeded }

// PaymentCustomer is the payer of a checkout payment.
type PaymentCustomer struct {
	ID    string `json:"id,omitempty"`
	Name  string `json:"name,omitempty"`
	Email string `json:"email,omitempty"`
	Phone string `json:"phone,omitempty"`
}

// MobileMoneyDetail describes the wallet a checkout payment was paid from.
type MobileMoneyDetail struct {
	Network     string `json:"network,omitempty"`
	Phone       string `json:"phone,omitempty"`
	ExternalRef string `json:"externalRef,omitempty"`
}

// CardDetail describes the card a checkout payment was paid with.
type CardDetail struct {
	Brand string `json:"brand,omitempty"`
	Last4 string `json:"last4,omitempty"`
}

// CheckoutCustomer names the payer of a checkout session. Name and Email are required
// when a customer is given.
type CheckoutCustomer struct {
	Name  string `json:"name"`
	Email string `json:"email"`
	// Phone is optional; it is normalised to international form ("233241234567").
	Phone string `json:"phone,omitempty"`
}

// CheckoutParams creates a hosted checkout session. Amount is required.
type CheckoutParams struct {
	// Amount in minor units (5000 is 50.00), positive.
	Amount int64 `json:"amount"`
	// Currency is an ISO 4217 code; the service defaults it to GHS.
	Currency string `json:"currency,omitempty"`
	// Description is shown to the payer; at most 255 characters.
	Description string `json:"description,omitempty"`
	// Customer is optional but recommended.
	Customer CheckoutCustomer `json:"customer,omitzero"`
	Metadata Metadata         `json:"metadata,omitzero"`
	// ClientReference is an optional merchant reference for the session, of
	// 1-36 characters: letters, digits, '-' and '_'. It is sent as
	// metadata.clientReference and named in ErrOutcomeUnknown.
	ClientReference string `json:"-"`
	// ReturnURL is where the payer is sent back after paying, sent as metadata.returnUrl.
	ReturnURL string `json:"-"`
}

func (p *CheckoutParams) validate() error {
	if p == nil {
		return invalid("params", "are required")
	}
	errs := []error{
		positiveAmount("amount", p.Amount),
		currencyCode("currency", p.Currency),
		maxLength("description", p.Description, 255),
		p.Metadata.validate("metadata"),
		referenceCheckout.optional("ClientReference", p.ClientReference),
		metadataKey(p.Metadata, "clientReference", p.ClientReference, "ClientReference"),
		p.Metadata.referenceString("metadata.clientReference", "clientReference", referenceCheckout.optional),
		absoluteURL("ReturnURL", p.ReturnURL),
		metadataKey(p.Metadata, "returnUrl", p.ReturnURL, "ReturnURL"),
	}
	if p.Customer != (CheckoutCustomer{}) {
		errs = append(errs,
			required("customer.name", p.Customer.Name),
			required("customer.email", p.Customer.Email),
			emailShape("customer.email", p.Customer.Email),
		)
	}
	return firstError(errs...)
}

// CreateCheckout creates a hosted checkout session and returns the PENDING payment with
// the CheckoutURL to send the payer to (redirect, iframe or modal). The outcome arrives by
// the payment.succeeded webhook, or through Get.
//
// It is a money movement: it is never re-sent once it may have reached the service, and
// an ambiguous failure returns an error matching ErrOutcomeUnknown. A session that nobody
// was sent to moves no money, so after such an error create a new one.
func (s *PaymentsService) CreateCheckout(ctx context.Context, p *CheckoutParams) (*Payment, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	body := *p
	body.Currency = strings.ToUpper(body.Currency)
	if err := optionalPhone("customer.phone", &body.Customer.Phone); err != nil {
		return nil, err
	}
	body.Metadata = withMetadata(p.Metadata, "clientReference", p.ClientReference)
	body.Metadata = withMetadata(body.Metadata, "returnUrl", p.ReturnURL)
	return send[Payment](ctx, s.client, epCheckoutCreate.movement(p.ClientReference, &body))
}

// Get returns the checkout payment with the given reference: its status and, once paid,
// the method, fee, net, paidAt and payment details.
func (s *PaymentsService) Get(ctx context.Context, reference string) (*Payment, error) {
	return send[Payment](ctx, s.client, epPaymentGet.op(nil, seg("reference", reference)))
}

// ReceiveParams prompts a customer to approve a mobile-money debit on their phone.
// Amount, Phone, Provider, Description and ClientReference are required.
type ReceiveParams struct {
	// Amount in minor units, positive.
	Amount int64 `json:"amount"`
	// Currency is an ISO 4217 code; the service defaults it to GHS.
	Currency string `json:"currency,omitempty"`
	// Phone is the wallet to debit, in international form; it is normalised
	// ("+233 24 123 4567" is sent as "233241234567").
	Phone    string   `json:"phone"`
	Provider Provider `json:"provider"`
	// Description is shown on the handset; at most 255 characters.
	Description string   `json:"description"`
	CustomerID  string   `json:"customerId,omitempty"`
	Metadata    Metadata `json:"metadata,omitzero"`
	// ClientReference is the merchant's unique reference, of
	// 1-36 characters: letters, digits, '-' and '_'. It is sent as
	// metadata.clientReference. It is the key of the status check, and the only way to
	// resolve an unknown outcome, so it is required.
	ClientReference string `json:"-"`
	// CallbackURL receives the final state (the spec's "callback URL given in the
	// request"); it is sent as callbackUrl.
	CallbackURL string `json:"callbackUrl,omitempty"`
}

func (p *ReceiveParams) validate() error {
	if p == nil {
		return invalid("params", "are required")
	}
	return mobileMoney{p.Amount, p.Currency, p.Phone, p.Provider, p.Description, p.ClientReference, p.CallbackURL, p.Metadata}.
		validate(referenceReceive, receiveProviders)
}

// mobileMoney is what a receive and a send share, validated by one set of rules.
type mobileMoney struct {
	amount          int64
	currency        string
	phone           string
	provider        Provider
	description     string
	clientReference string
	callbackURL     string
	metadata        Metadata
}

func (m mobileMoney) validate(ref reference, providers []Provider) error {
	return firstError(
		positiveAmount("amount", m.amount),
		currencyCode("currency", m.currency),
		required("phone", m.phone),
		requiredOneOf("provider", m.provider, providers...),
		required("description", m.description),
		maxLength("description", m.description, 255),
		ref.required("ClientReference", m.clientReference),
		absoluteURL("callbackUrl", m.callbackURL),
		m.metadata.validate("metadata"),
		metadataKey(m.metadata, "clientReference", m.clientReference, "ClientReference"),
	)
}

// DirectReceive is the service's acceptance of a mobile-money prompt: the final state
// arrives by callback or through ReceiveStatus. Status is PROCESSING on the spec's
// wire; the provider's acceptance carries no status (its code 0001 says the same), and
// names the transaction by its TransactionId (ID) and ClientReference (Reference).
type DirectReceive struct {
	ID        string `json:"id"`
	Reference string `json:"reference"`
	Status    string `json:"status"`
	// Amount is in minor units (2500 is 25.00), whichever unit the wire used.
	Amount      int64     `json:"amount"`
	Currency    string    `json:"currency"`
	Phone       string    `json:"phone"`
	Provider    Provider  `json:"provider"`
	Description string    `json:"description"`
	CreatedAt   time.Time `json:"createdAt,omitzero"`
}

// UnmarshalJSON reads the acceptance on either wire: the spec's, in minor units, or the
// provider's, in cedis (Amount 0.8 is 80). A field it cannot read is left empty.
func (r *DirectReceive) UnmarshalJSON(b []byte) error {
	return unmarshalWire[acceptedWire](b, r)
}

func (r *DirectReceive) fromWire(w *acceptedWire) {
	a := w.read()
	*r = DirectReceive{
		ID: a.id, Reference: a.reference, Status: a.status, Amount: a.amount, Currency: a.currency, Phone: a.phone,
		Provider: Provider(a.provider), Description: a.description, CreatedAt: a.createdAt,
	}
}

// Receive prompts the customer's phone to approve a mobile-money debit. The answer only
// says the prompt was accepted; the final state arrives at CallbackURL, or through
// ReceiveStatus with the client reference.
//
// It is never re-sent once it may have reached the service: an ambiguous failure returns
// an error matching ErrOutcomeUnknown that carries the client reference.
func (s *PaymentsService) Receive(ctx context.Context, p *ReceiveParams) (*DirectReceive, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	body := *p
	body.Currency = strings.ToUpper(body.Currency)
	if err := internationalDigits("phone", &body.Phone); err != nil {
		return nil, err
	}
	body.Metadata = withMetadata(p.Metadata, "clientReference", p.ClientReference)
	return send[DirectReceive](ctx, s.client, epReceive.movement(p.ClientReference, &body))
}

// CollectionStatus is the state of a receive or a direct-debit charge in its status check.
type CollectionStatus string

// The collection states. Unpaid alone does not say final: see ReceiveTransaction.IsFinal.
const (
	CollectionStatusPaid   CollectionStatus = "Paid"
	CollectionStatusUnpaid CollectionStatus = "Unpaid"
)

// ReceiveTransaction is the status check of a mobile-money receive. ResponseCode describes
// the transaction: 0000 with Paid when paid, 0001 while pending, a failure code such as
// 2001 once it failed.
type ReceiveTransaction struct {
	StatusResponse

	Date   time.Time        `json:"date,omitzero"`
	Status CollectionStatus `json:"status"`
	// TransactionID is the service's id; ExternalTransactionID the network's, empty
	// while unpaid.
	TransactionID         string `json:"transactionId"`
	ExternalTransactionID string `json:"externalTransactionId,omitempty"`
	PaymentMethod         string `json:"paymentMethod,omitempty"`
	ClientReference       string `json:"clientReference"`
	CurrencyCode          string `json:"currencyCode,omitempty"`
	// Amount, Charges and AmountAfterCharges are in minor units (2500 is 25.00),
	// whichever unit the wire used: the provider's 0.1 cedi is 10. An amount the SDK
	// cannot read is 0.
	Amount             int64 `json:"amount"`
	Charges            int64 `json:"charges"`
	AmountAfterCharges int64 `json:"amountAfterCharges"`
	// IsFulfilled is true once paid; the provider leaves it null (false) even then.
	IsFulfilled bool `json:"isFulfilled"`

	// amountNamed: the answer carried an amount field (0 included).
	amountNamed bool
}

// UnmarshalJSON reads the transaction on either wire: amounts in minor units or in
// cedis, the date in ISO 8601 or "YYYY-MM-DD HH:MM:SS" UTC, nulls as empty. A field it
// cannot read is left empty; the state fields beside it are still read.
func (t *ReceiveTransaction) UnmarshalJSON(b []byte) error {
	return unmarshalWire[collectionStatusWire](b, t)
}

func (t *ReceiveTransaction) fromWire(w *collectionStatusWire) { t.fromStatus(w, t.StatusResponse) }

func (t *ReceiveTransaction) fromStatus(w *collectionStatusWire, r StatusResponse) {
	c := w.read(minorUnits)
	*t = ReceiveTransaction{
		StatusResponse: r, Date: c.date, Status: c.status, TransactionID: c.transactionID,
		ExternalTransactionID: c.externalTransactionID, PaymentMethod: c.paymentMethod, ClientReference: c.clientReference,
		CurrencyCode: c.currency, Amount: c.amount, Charges: c.charges, AmountAfterCharges: c.amountAfterCharges,
		IsFulfilled: c.isFulfilled, amountNamed: c.amountNamed,
	}
}

// Succeeded reports whether the customer paid: fulfil the order.
func (t *ReceiveTransaction) Succeeded() bool { return t.Status == CollectionStatusPaid }

// IsFinal reports whether the transaction has its final state: paid, or unpaid under a
// failure code. Unpaid under 0000, 0001 or 0005 (final state unknown) is still pending.
func (t *ReceiveTransaction) IsFinal() bool {
	return collectionFinal(t.Status, t.ResponseCode)
}

// IsPending reports whether the final state is still to come.
func (t *ReceiveTransaction) IsPending() bool { return !t.IsFinal() }

// collectionFinal: 0005 says the service could not reach the network, so the final state
// is unknown; it is no failure of the transaction.
func collectionFinal(status CollectionStatus, code ResponseCode) bool {
	return status == CollectionStatusPaid || (status == CollectionStatusUnpaid && code.IsFailure() && code != CodeConnectionError)
}

// ReceiveStatus asks for the state of a receive by its client reference: the fallback
// when no callback has arrived five minutes after Receive, and the way to resolve
// ErrOutcomeUnknown. ErrNotFound means the service never recorded the receive.
//
// A failed transaction is a result here, not an error: check IsFinal and Succeeded.
func (s *PaymentsService) ReceiveStatus(ctx context.Context, clientReference string) (*ReceiveTransaction, error) {
	return statusCheck[ReceiveTransaction, collectionStatusWire](ctx, s.client, epReceiveStatus.op(nil, seg("clientReference", clientReference)))
}

// StatusResponse is what the envelope of a status check says about the transaction:
// its response code (0000 done, 0001 pending, a failure code once failed) and message.
// Every status-check result embeds it.
type StatusResponse struct {
	ResponseCode ResponseCode `json:"-"`
	Message      string       `json:"-"`
	// codeImplied: the service wrote no code for the transaction (the provider's word
	// "success" on a payout's status check), so ResponseCode is the one its state
	// implies and names no reason.
	codeImplied bool
}

// statusCheck runs the status check of a money movement and fills its result from the
// wire form W with what the envelope says. The response code describes the transaction,
// so it is part of the result, not an error.
func statusCheck[T, W any, PT interface {
	*T
	fromStatus(w *W, r StatusResponse)
}](ctx context.Context, c *Client, o *op) (*T, error) {
	env := new(envelope[W])
	if err := c.do(ctx, o, env); err != nil {
		return nil, err
	}
	t := new(T)
	PT(t).fromStatus(&env.Data, StatusResponse{ResponseCode: env.code(), Message: env.Message})
	return t, nil
}

// withMetadata returns m with key set to v, as a copy; the caller's map is never changed.
// An empty v leaves m as it is.
func withMetadata(m Metadata, key, v string) Metadata {
	if v == "" {
		return m
	}
	out := make(Metadata, len(m)+1)
	for k, x := range m {
		out[k] = x
	}
	out[key] = v
	return out
}

// metadataKey refuses a metadata key that contradicts the params field that sets it.
func metadataKey(m Metadata, key, v, fieldName string) error {
	x, ok := m[key]
	if !ok || v == "" || x == v {
		return nil
	}
	return invalid("metadata."+key, "contradicts "+fieldName+": set "+fieldName+" only")
}

func positiveAmount(field string, v int64) error {
	if v <= 0 {
		return invalid(field, "must be a positive integer in minor units (5000 is 50.00)")
	}
	return nil
}

func positiveDecimal(field string, v DecimalAmount) error {
	if v <= 0 {
		return invalid(field, "must be a positive amount (DecimalAmount(1050) is 10.50)")
	}
	return nil
}

// currencyCode checks an optional ISO 4217 code, in either case.
func currencyCode(field, v string) error {
	if v == "" {
		return nil
	}
	if len(v) != 3 || !isLetters(v) {
		return invalid(field, "must be a three-letter ISO 4217 code like GHS")
	}
	return nil
}

func isLetters(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i] | 0x20; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

// requiredOneOf checks a required enum value.
func requiredOneOf[T ~string](field string, v T, allowed ...T) error {
	if v == "" {
		return invalid(field, "is required")
	}
	return oneOf(field, v, allowed...)
}

// absoluteURL checks an optional http or https URL.
func absoluteURL(field, v string) error {
	if v == "" {
		return nil
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return invalid(field, "must be an absolute http or https URL")
	}
	return nil
}

func requiredURL(field, v string) error {
	return firstError(required(field, v), absoluteURL(field, v))
}

// optionalPhone normalises an optional phone number in place to its international digits.
func optionalPhone(field string, phone *string) error {
	if *phone == "" {
		return nil
	}
	return internationalDigits(field, phone)
}

// internationalDigits normalises a phone number in place to its international digits
// ("+233 24 123 4567" becomes "233241234567").
func internationalDigits(field string, phone *string) error {
	digits, err := normalizePhone(field, *phone)
	if err != nil {
		return err
	}
	*phone = digits
	return nil
}
