package sandbox

import (
	"net/http"
	"strings"
)

// The provider's paths that serve more than one operation (REQUESTS.md in
// provider-wire/): its receive path also takes the direct-debit charge, told
// apart by Channel; its transaction status answers for receives, charges and
// checkouts alike, by clientReference.
const (
	providerCollectPath = "POST /merchantaccount/merchants/{POS}/receive/mobilemoney"
	providerStatusPath  = "GET /transactions/{POS}/status"
)

// specBody is the route table's note for a provider path whose body is the spec's.
const specBody = "the spec's"

// receiveChannels are the provider's receive channels and the networks they
// are: the send channels, read the other way.
var receiveChannels = map[string]string{"mtn-gh": "MTN", "vodafone-gh": "TELECEL", "tigo-gh": "AIRTELTIGO"}

var receiveChannelNames = []string{"mtn-gh", "vodafone-gh", "tigo-gh"}

// providerCollect serves the provider's receive path: a direct-debit Channel
// makes it a direct-debit charge, any other a receive.
func (s *Server) providerCollect(w http.ResponseWriter, r *http.Request) {
	f, err := decodeFields(r)
	if err != nil {
		writeError(w, err)
		return
	}
	if channel, _ := f.optionalString("Channel"); strings.HasSuffix(channel, "-direct-debit") {
		s.charge(w, f)
		return
	}
	req := readProviderMobileMoney(f, "CustomerMsisdn", "CustomerName", "")
	if err := f.err(); err != nil {
		writeError(w, err)
		return
	}
	s.acceptReceive(w, req.mobileMoneyRequest, familyPascal)
}

// providerMobileMoney is a receive or send as the provider's body gives it.
type providerMobileMoney struct {
	mobileMoneyRequest
	name string // CustomerName or RecipientName; "" when not given
}

// readProviderMobileMoney reads the provider's receive or send body: the
// wallet under msisdnKey, the name under nameKey, the Channel, Amount in
// cedis with up to two decimals (10, 10.5, 0.8), PrimaryCallbackUrl,
// Description and ClientReference; CustomerEmail, the name and
// secondaryURLKey (when not "") are optional and may be sent empty.
func readProviderMobileMoney(f *fields, msisdnKey, nameKey, secondaryURLKey string) providerMobileMoney {
	optional := []string{nameKey, "CustomerEmail"}
	if secondaryURLKey != "" {
		optional = append(optional, secondaryURLKey)
	}
	f.dropBlank(optional...)
	f.require(msisdnKey, "Channel", "Amount", "Description", "ClientReference")
	var req providerMobileMoney
	req.currency = defaultCurrency
	req.phone, _ = f.msisdn(msisdnKey)
	channel, _ := f.enum("Channel", receiveChannelNames...)
	req.provider = receiveChannels[channel]
	req.amount, _ = f.decimalAmount("Amount", false)
	req.callbackURL = primaryCallbackURL(f, "PrimaryCallbackUrl", "PrimaryCallbackURL")
	if secondaryURLKey != "" {
		_, _ = f.callbackURL(secondaryURLKey)
	}
	req.description, _ = f.description("Description")
	req.clientReference, _ = f.stringWhere("ClientReference", movementReferenceRule, isMovementReference)
	req.name, _ = f.optionalString(nameKey)
	_, _ = f.email("CustomerEmail")
	return req
}

// providerSend serves the provider's send: paid to RecipientName, or to the
// number when no name is given.
func (s *Server) providerSend(w http.ResponseWriter, r *http.Request) {
	f, err := decodeFields(r)
	if err != nil {
		writeError(w, err)
		return
	}
	req := readProviderMobileMoney(f, "RecipientMsisdn", "RecipientName", "SecondaryCallbackUrl")
	if err := f.err(); err != nil {
		writeError(w, err)
		return
	}
	s.acceptSend(w, req.mobileMoneyRequest, firstNonEmpty(req.name, req.phone), familyPascal)
}

// providerPayoutStatus serves the provider's one payout status check: a
// send-to-bank or a send, found by clientReference, serviceTransactionId or
// networkTransactionId (all that are given must match).
func (s *Server) providerPayoutStatus(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	reference, serviceID, networkID := q.Get("clientReference"), q.Get("serviceTransactionId"), q.Get("networkTransactionId")
	if reference == "" && serviceID == "" && networkID == "" {
		writeError(w, validationError("clientReference", "clientReference, serviceTransactionId or networkTransactionId is required"))
		return
	}
	s.mu.Lock()
	var body any
	if p := findPayout(s.payouts.banks, reference, serviceID, networkID); p != nil {
		body = s.shapes.bankStatus(p)
	} else if p := findPayout(s.payouts.sends, reference, serviceID, networkID); p != nil {
		body = s.shapes.sendStatus(p)
	}
	s.mu.Unlock()
	if body == nil {
		writeError(w, notFoundError("payout", firstNonEmpty(reference, serviceID, networkID)))
		return
	}
	writeJSON(w, http.StatusOK, body)
}

// providerTransactionStatus serves the provider's transaction status check
// of receives, direct-debit charges and checkouts, by the merchant's
// clientReference. Whatever the state it answers 0000: the state is in
// data.status, Paid or Unpaid.
func (s *Server) providerTransactionStatus(w http.ResponseWriter, r *http.Request) {
	reference := r.URL.Query().Get("clientReference")
	if reference == "" {
		writeError(w, validationError("clientReference", "clientReference is required"))
		return
	}
	s.mu.Lock()
	var body any
	if rec, ok := s.payments.receives[reference]; ok {
		body = s.shapes.receiveStatus(rec)
	} else if c, ok := s.mandates.charges[reference]; ok {
		body = s.shapes.chargeStatus(c)
	} else if p := s.checkoutOfClient(reference); p != nil {
		body = providerCheckoutStatus(p)
	}
	s.mu.Unlock()
	if body == nil {
		writeError(w, notFoundError("transaction", reference))
		return
	}
	writeJSON(w, http.StatusOK, body)
}

// checkoutOfClient returns the checkout session whose client reference is
// reference: metadata.clientReference, or the session's own reference when it
// was created without one. s.mu must be held.
func (s *Server) checkoutOfClient(reference string) *checkoutPayment {
	if p := s.checkoutByClientReference(reference); p != nil {
		return p
	}
	if p, ok := s.payments.checkouts.get(reference); ok && p.clientReference() == reference {
		return p
	}
	return nil
}

// providerCheckoutStatus is a checkout session in the provider's transaction
// status: the receive's shape, naming the merchant's clientReference and how
// the payer paid.
func providerCheckoutStatus(p *checkoutPayment) any {
	method := "mobilemoney"
	if p.Method != nil {
		method = strings.ToLower(strings.ReplaceAll(*p.Method, "_", ""))
	}
	return providerStatusOf(p.movement, p.clientReference(), method)
}

// providerCheckout serves the provider's checkout initiate: a session of
// totalAmount cedis whose webhook goes to callbackUrl, answered
// {responseCode 0000, status Success, data: {checkoutUrl, checkoutId,
// clientReference}}.
func (s *Server) providerCheckout(w http.ResponseWriter, r *http.Request) {
	f, err := decodeFields(r)
	if err != nil {
		writeError(w, err)
		return
	}
	f.dropBlank("returnUrl", "cancellationUrl")
	f.require("totalAmount", "description", "callbackUrl", "merchantAccountNumber", "clientReference")
	p := newCheckout()
	p.Amount, _ = f.decimalAmount("totalAmount", false)
	description, _ := f.description("description")
	p.Description = &description
	p.webhookURL, _ = f.callbackURL("callbackUrl")
	reference, _ := f.stringWhere("clientReference", movementReferenceRule, isMovementReference)
	p.Metadata["clientReference"] = reference
	for _, key := range []string{"returnUrl", "cancellationUrl"} {
		if u, ok := f.callbackURL(key); ok {
			p.Metadata[key] = u
		}
	}
	if account, ok := f.optionalString("merchantAccountNumber"); ok && account != s.cfg.SalesAccount {
		f.fail("merchantAccountNumber", "merchantAccountNumber %q is not the business's sales account", account)
	}
	if err := f.err(); err != nil {
		writeError(w, err)
		return
	}
	created := s.openCheckout(r, p, nil)
	writeJSON(w, http.StatusOK, providerCheckoutInitiated{ResponseCode: CodeSuccess, Status: "Success", Data: providerCheckoutSession{
		CheckoutURL: created.CheckoutURL, CheckoutID: created.Reference, ClientReference: reference}})
}

// providerCheckoutInitiated is the provider's answer to a checkout initiate.
type providerCheckoutInitiated struct {
	ResponseCode string                  `json:"responseCode"`
	Status       string                  `json:"status"`
	Data         providerCheckoutSession `json:"data"`
}

type providerCheckoutSession struct {
	CheckoutURL     string `json:"checkoutUrl"`
	CheckoutID      string `json:"checkoutId"`
	ClientReference string `json:"clientReference"`
}
