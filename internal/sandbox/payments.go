package sandbox

import (
	"cmp"
	"net/http"
	"slices"
	"strings"
	"time"
)

// Checkout payment statuses. The spec shows PENDING and SUCCEEDED and names
// no other; FAILED is the sandbox's name for a declined session and for one
// that expired unpaid (docs/sandbox.md "Decisions: the whole service").
const (
	checkoutPending   = "PENDING"
	checkoutSucceeded = "SUCCEEDED"
	checkoutFailed    = "FAILED"
)

// DefaultCheckoutLifetime is how long a checkout session stays payable when
// Config.CheckoutLifetime is zero.
const DefaultCheckoutLifetime = 24 * time.Hour

// The failure of a session the payer left unpaid until it expired.
const (
	checkoutExpiredCode    = "expired"
	checkoutExpiredMessage = "the session expired before the payer completed it"
)

// Checkout payment methods, as the hosted page offers them.
var checkoutMethods = []string{"CARD", "MOBILE_MONEY", "BANK_TRANSFER"}

// failureCodes name a declined checkout session by the method tried.
var failureCodes = map[string][2]string{
	"CARD":          {"card_declined", "the card was declined"},
	"MOBILE_MONEY":  {"mobile_money_failed", "the mobile-money payment was not approved"},
	"BANK_TRANSFER": {"bank_transfer_failed", "the bank transfer did not arrive"},
}

// receiveProviders are the networks of direct receive (SPEC "Direct receive").
var receiveProviders = []string{"MTN", "TELECEL", "AIRTELTIGO", "MPESA"}

// checkoutPayment is a checkout payment record as the wire shows it (SPEC
// "Checkout payment record"); its embedded paymentSummary is what the
// payment.succeeded webhook carries.
type checkoutPayment struct {
	paymentSummary
	FailureCode    *string     `json:"failureCode"`
	FailureMessage *string     `json:"failureMessage"`
	CreatedAt      timestamp   `json:"createdAt"`
	UpdatedAt      timestamp   `json:"updatedAt"`
	Refunds        []struct{}  `json:"refunds"`
	CheckoutURL    string      `json:"checkoutUrl"`
	CardDetail     *cardDetail `json:"cardDetail"`

	movement *movement
	sdk      *webStart // the web SDK's latest start, if it started the session
	// webhookURL receives this session's webhook: the callbackUrl of the
	// provider's checkout initiate; empty means Config.WebhookURL.
	webhookURL string
}

// clientReference is the merchant's reference of the session:
// metadata.clientReference, or the session's own reference without one.
func (p *checkoutPayment) clientReference() string {
	if ref, _ := p.Metadata["clientReference"].(string); ref != "" {
		return ref
	}
	return p.Reference
}

// paymentSummary holds the fields of the record that the webhook's data
// repeats (SPEC "Checkout and dashboard webhook").
type paymentSummary struct {
	ID                string             `json:"id"`
	Reference         string             `json:"reference"`
	Status            string             `json:"status"`
	Environment       string             `json:"environment"`
	Method            *string            `json:"method"`
	Amount            int64              `json:"amount"`
	Currency          string             `json:"currency"`
	Fee               int64              `json:"fee"`
	Net               int64              `json:"net"`
	Description       *string            `json:"description"`
	Metadata          map[string]any     `json:"metadata"`
	PaidAt            *timestamp         `json:"paidAt"`
	Customer          *paymentCustomer   `json:"customer"`
	MobileMoneyDetail *mobileMoneyDetail `json:"mobileMoneyDetail"`
}

type paymentCustomer struct {
	ID    string  `json:"id"`
	Name  string  `json:"name"`
	Email string  `json:"email"`
	Phone *string `json:"phone"`
}

type mobileMoneyDetail struct {
	Network     string `json:"network"`
	Phone       string `json:"phone"`
	ExternalRef string `json:"externalRef"`
}

type cardDetail struct {
	Brand string `json:"brand"`
	Last4 string `json:"last4"`
}

// receipt is an accepted direct receive.
type receipt struct {
	ID          string
	Currency    string
	Phone       string
	Provider    string
	Description string
	movement    *movement
}

// bindReceiveCallback has rec's movement call back as a transaction.
func (s *Server) bindReceiveCallback(rec *receipt) {
	m := rec.movement
	m.callback = func() any {
		return s.shapes.transactionCallback(m, m.ClientReference, rec.Description, rec.ID, rec.Provider)
	}
}

// receiveView is the data of the receive response (SPEC "Direct receive").
type receiveView struct {
	ID          string    `json:"id"`
	Reference   string    `json:"reference"`
	Status      string    `json:"status"` // always PROCESSING
	Amount      int64     `json:"amount"`
	Currency    string    `json:"currency"`
	Phone       string    `json:"phone"`
	Provider    string    `json:"provider"`
	Description string    `json:"description"`
	CreatedAt   timestamp `json:"createdAt"`
}

func (r *receipt) view() receiveView {
	m := r.movement
	return receiveView{ID: r.ID, Reference: m.ClientReference, Status: "PROCESSING", Amount: m.Amount,
		Currency: r.Currency, Phone: r.Phone, Provider: r.Provider, Description: r.Description, CreatedAt: timestamp{m.CreatedAt}}
}

// paymentStore holds checkout sessions by reference and receives by client reference.
type paymentStore struct {
	checkouts table[checkoutPayment]
	receives  map[string]*receipt
}

func paymentRoutes(s *Server) []route {
	return []route{
		{pattern: "POST /v1/payments", auth: authBasic, handler: s.createCheckout,
			provider: wirePath{pattern: "POST /items/initiate", handler: s.providerCheckout,
				body: "totalAmount (cedis), description, callbackUrl (receives the webhook), returnUrl, cancellationUrl, merchantAccountNumber, clientReference"}},
		{pattern: "GET /v1/payments/{reference}", auth: authBasic, handler: s.paymentStatus,
			provider: wirePath{pattern: providerStatusPath, handler: s.providerTransactionStatus,
				body: "query clientReference: a receive, a direct-debit charge or a checkout's clientReference; 0000 with status Paid or Unpaid"}},
		{pattern: "POST /v1/payments/receive", auth: authBasic, scope: ScopeMobileMoneyReceiveDirect, ipAllowlist: true, handler: s.receive,
			provider: wirePath{pattern: providerCollectPath, handler: s.providerCollect,
				body: "CustomerName, CustomerMsisdn, CustomerEmail, Channel mtn-gh, vodafone-gh or tigo-gh, Amount (cedis), PrimaryCallbackUrl, Description, ClientReference"}},
	}
}

func (s *Server) createCheckout(w http.ResponseWriter, r *http.Request) {
	f, err := decodeFields(r)
	if err != nil {
		writeError(w, err)
		return
	}
	f.require("amount")
	p := newCheckout()
	p.Amount, _ = f.minorAmount("amount")
	if c, ok := f.currency("currency"); ok {
		p.Currency = c
	}
	nullableField(f, "description", f.description).applyTo(&p.Description)
	if m, _ := f.metadata("metadata"); m != nil {
		p.Metadata = m
	}
	// The reference the session is counted and found under (by the web SDK too).
	metadataReference(f, p.Metadata, isMovementReference)
	payer := checkoutPayer(f)
	if err := f.err(); err != nil {
		writeError(w, err)
		return
	}
	writeData(w, http.StatusCreated, s.openCheckout(r, p, payer))
}

// newCheckout returns a session not yet opened: PENDING, in the default
// currency, with empty metadata.
func newCheckout() *checkoutPayment {
	return &checkoutPayment{paymentSummary: paymentSummary{Status: checkoutPending, Environment: "TEST", Currency: defaultCurrency,
		Metadata: map[string]any{}}, Refunds: []struct{}{}}
}

// openCheckout records the session p, read from either wire's request, and
// arranges its expiry; it returns the record as created.
func (s *Server) openCheckout(r *http.Request, p *checkoutPayment, payer *customer) checkoutPayment {
	p.ID, p.Reference = newID("pay_"), newReference()
	p.CheckoutURL = baseURL(r) + "/checkout/" + p.Reference
	p.movement = &movement{Movement: Movement{Kind: string(kindCheckout), ClientReference: p.Reference, TransactionID: p.ID, Amount: p.Amount}}
	alsoUnder, _ := p.Metadata["clientReference"].(string)
	if payer != nil {
		_, _ = s.insertCustomer(payer) // a conflict means the customer exists: the payer is linked to it
	}

	s.mu.Lock()
	p.Customer = s.linkCustomer(payer)
	p.CreatedAt = timestamp{s.Now()}
	p.UpdatedAt = p.CreatedAt
	_ = s.money.accept(p.movement, &outcome{}, p.CreatedAt.Time, alsoUnder) // no refusal, no payout: it cannot fail
	s.payments.checkouts.insert(p.Reference, p)
	created := *p
	s.scheduleJob(created.CreatedAt.Add(s.checkoutLifetime()), expireCheckoutJob{Reference: p.Reference})
	s.mu.Unlock()
	return created
}

// checkoutLifetime is how long a session stays payable.
func (s *Server) checkoutLifetime() time.Duration {
	if s.cfg.CheckoutLifetime > 0 {
		return s.cfg.CheckoutLifetime
	}
	return DefaultCheckoutLifetime
}

// expireCheckout ends a session still PENDING at the end of its lifetime:
// FAILED with failure code expired. No webhook is sent (nothing was paid); a
// web SDK that started it receives the failure callback, as on a decline.
func (s *Server) expireCheckout(reference string) {
	s.mu.Lock()
	p, ok := s.payments.checkouts.get(reference)
	if !ok || p.Status != checkoutPending {
		s.mu.Unlock()
		return
	}
	now := s.Now()
	code, message := checkoutExpiredCode, checkoutExpiredMessage
	p.Status, p.UpdatedAt = checkoutFailed, timestamp{now}
	p.FailureCode, p.FailureMessage = &code, &message
	s.money.settle(p.movement, CodeFailed, now)
	target, body := sdkCallback(p.movement)
	s.mu.Unlock()
	s.deliver(target, body)
}

// checkoutPayer reads the optional customer object: name and email required
// when it is given, phone optional (SPEC "Hosted checkout").
func checkoutPayer(f *fields) *customer {
	raw, ok := f.value("customer")
	if !ok {
		return nil
	}
	inner, err := parseFields(raw)
	if err != nil {
		f.fail("customer", "customer must be an object")
		return nil
	}
	inner.require("name", "email")
	c := &customer{Status: "ACTIVE", Currency: defaultCurrency}
	c.Name, _ = inner.optionalString("name")
	c.Email, _ = inner.email("email")
	nullableField(inner, "phone", inner.phone).applyTo(&c.Phone)
	if inner.first != nil {
		f.fail("customer."+inner.first.field, "customer.%s", inner.first.message)
		return nil
	}
	c.emailKey = strings.ToLower(c.Email)
	return c
}

// linkCustomer returns the payer as the record shows it, linked to the
// business's customer with that email. s.mu must be held.
func (s *Server) linkCustomer(payer *customer) *paymentCustomer {
	if payer == nil {
		return nil
	}
	return &paymentCustomer{ID: s.customers.byEmail[payer.emailKey], Name: payer.Name, Email: payer.Email, Phone: payer.Phone}
}

// baseURL is the address the caller reached the sandbox at, for links back to it.
func baseURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// CompleteCheckout completes the PENDING checkout session reference (the
// session's reference, or the merchant's client reference it was created
// under: the newest such session) as the hosted page would: method is CARD, MOBILE_MONEY or BANK_TRANSFER, outcome
// succeeded or failed. Success sets method, fee, net and paidAt and sends the
// payment.succeeded webhook; failure sets FAILED with a failure code.
func (s *Server) CompleteCheckout(reference, method, outcome string) error {
	return s.settleCheckout(reference, payerChoice{method: method, outcome: outcome})
}

// settleCheckout is the one path that completes a checkout session, whoever
// pays: the control, billingtest or the hosted page (checkout_page.go),
// whose payer also chooses the wallet or card paid with.
func (s *Server) settleCheckout(reference string, c payerChoice) error {
	method, outcome := c.method, c.outcome
	if _, ok := failureCodes[method]; !ok {
		return validationError("method", "method must be one of %s", strings.Join(checkoutMethods, ", "))
	}
	if outcome != "succeeded" && outcome != "failed" {
		return validationError("outcome", "outcome must be one of succeeded, failed")
	}
	s.mu.Lock()
	p, ok := s.payments.checkouts.get(reference)
	if !ok {
		// The merchant's client reference names the session too: the newest created under it.
		if p = s.checkoutByClientReference(reference); p == nil {
			s.mu.Unlock()
			return notFoundError("checkout payment", reference)
		}
	}
	if p.Status != checkoutPending {
		s.mu.Unlock()
		return conflictError("checkout payment %s is %s; only a PENDING session can be completed", reference, p.Status)
	}
	now := s.Now()
	p.UpdatedAt = timestamp{now}
	if outcome == "failed" {
		p.Status = checkoutFailed
		code, message := failureCodes[method][0], failureCodes[method][1]
		p.FailureCode, p.FailureMessage = &code, &message
		s.money.settle(p.movement, CodeFailed, now)
		target, body := sdkCallback(p.movement)
		s.mu.Unlock()
		s.deliver(target, body)
		return nil
	}
	s.money.settle(p.movement, CodeSuccess, now)
	p.Status, p.Method, p.PaidAt = checkoutSucceeded, &method, &timestamp{now}
	p.Fee = percentFee(p.Amount, checkoutFeeBasisPoints)
	p.Net = p.Amount - p.Fee
	p.movement.Fee = p.Fee
	switch method {
	case "MOBILE_MONEY":
		p.MobileMoneyDetail = c.wallet(p)
	case "CARD":
		p.CardDetail = c.card()
	}
	event := s.shapes.checkoutWebhook(*p)
	target, body := sdkCallback(p.movement)
	webhookURL := cmp.Or(p.webhookURL, s.cfg.WebhookURL)
	s.mu.Unlock()
	s.deliver(webhookURL, event)
	s.deliver(target, body)
	return nil
}

// payerPhone is the number a mobile-money checkout was paid from: the
// customer's, or the sandbox's own test wallet.
func payerPhone(c *paymentCustomer) string {
	if c != nil && c.Phone != nil {
		return strings.TrimPrefix(*c.Phone, "+")
	}
	return "233240000000"
}

// webhookEvent is the checkout webhook, in its variant with id, environment
// and createdAt (SPEC "Checkout and dashboard webhook").
type webhookEvent struct {
	ID          string         `json:"id"`
	Event       string         `json:"event"`
	Environment string         `json:"environment"`
	CreatedAt   timestamp      `json:"createdAt"`
	Data        paymentSummary `json:"data"`
}

func paymentSucceeded(p checkoutPayment) any {
	return webhookEvent{ID: newID("evt_"), Event: "payment.succeeded", Environment: p.Environment, CreatedAt: *p.PaidAt, Data: p.paymentSummary}
}

func (s *Server) receive(w http.ResponseWriter, r *http.Request) {
	f, err := decodeFields(r)
	if err != nil {
		writeError(w, err)
		return
	}
	req := readMobileMoney(f, receiveProviders...)
	if err := f.err(); err != nil {
		writeError(w, err)
		return
	}
	s.acceptReceive(w, req, familySuccess)
}

// acceptReceive starts a receive read from either wire's request; a refusal
// is answered in family's envelope.
func (s *Server) acceptReceive(w http.ResponseWriter, req mobileMoneyRequest, family envelopeFamily) {
	o := collectionOutcomes.of(req.phone)
	rec := &receipt{ID: newID("pay_"), Currency: req.currency, Phone: req.phone, Provider: req.provider, Description: req.description}
	m := &movement{Movement: Movement{Kind: string(kindReceive), ClientReference: req.clientReference, TransactionID: newReference(),
		Amount: req.amount, Fee: percentFee(req.amount, receiveFeeBasisPoints)}, callbackURL: req.callbackURL}
	rec.movement = m
	s.bindReceiveCallback(rec)

	s.mu.Lock()
	err := s.checkCustomer(req.customerID)
	if err == nil {
		err = s.money.checkNew(kindReceive, m.ClientReference)
	}
	if err == nil {
		err = s.money.accept(m, &o, s.Now())
	}
	if err == nil {
		s.payments.addReceipt(rec)
	}
	var answer any
	if err == nil {
		answer = s.shapes.receiveAccepted(rec)
	}
	s.mu.Unlock()
	if err != nil {
		writeMoneyError(w, family, err)
		return
	}
	s.resolveLater(m, o)
	writeJSON(w, http.StatusOK, answer)
}

// specReceiveAccepted is the spec's answer to a receive.
func specReceiveAccepted(rec *receipt) any {
	return flowBody(familySuccess, CodeAccepted, "the prompt was sent to the payer; the final state follows by callback", rec.view())
}

func (p *paymentStore) addReceipt(rec *receipt) {
	if p.receives == nil {
		p.receives = make(map[string]*receipt)
	}
	p.receives[rec.movement.ClientReference] = rec
}

// paymentStatus answers the one status path of checkout, receive and send
// (SPEC "Hosted checkout"): a checkout reference first, then a receive's
// client reference, then a send's, then a checkout's client reference, each
// in its own shape.
func (s *Server) paymentStatus(w http.ResponseWriter, r *http.Request) {
	reference := r.PathValue("reference")
	s.mu.Lock()
	answer := s.paymentStatusOf(reference)
	s.mu.Unlock()
	answer(w)
}

// paymentStatusOf finds reference and returns the answer describing it, to
// be written once s.mu, which must be held, is released.
func (s *Server) paymentStatusOf(reference string) func(http.ResponseWriter) {
	p, ok := s.payments.checkouts.get(reference)
	if ok {
		record := *p
		return func(w http.ResponseWriter) { writeData(w, http.StatusOK, record) }
	}
	if rec, ok := s.payments.receives[reference]; ok {
		body := s.shapes.receiveStatus(rec)
		return func(w http.ResponseWriter) { writeJSON(w, http.StatusOK, body) }
	}
	if p, ok := s.payouts.sends[reference]; ok {
		body := s.shapes.sendStatus(p)
		return func(w http.ResponseWriter) { writeJSON(w, http.StatusOK, body) }
	}
	if p := s.checkoutByClientReference(reference); p != nil {
		record := *p
		return func(w http.ResponseWriter) { writeData(w, http.StatusOK, record) }
	}
	return func(w http.ResponseWriter) { writeError(w, notFoundError("payment", reference)) }
}

// checkoutByClientReference returns the newest checkout session created with
// metadata.clientReference reference, or nil: how a merchant whose creation
// answer was lost finds its session. s.mu must be held.
func (s *Server) checkoutByClientReference(reference string) *checkoutPayment {
	for _, m := range slices.Backward(s.money.byRef[reference]) {
		if m.Kind != string(kindCheckout) || m.ClientReference == reference {
			continue
		}
		if p, ok := s.payments.checkouts.get(m.ClientReference); ok {
			return p
		}
	}
	return nil
}
