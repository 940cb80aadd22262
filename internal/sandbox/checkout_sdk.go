package sandbox

import (
	"crypto/sha256"
	"embed"
	"encoding/json"
	"net/http"
	"slices"
)

// checkoutAssets are the hosted page's template, stylesheet and script, and
// the web SDK: everything a payer's browser loads comes from the sandbox.
//
//go:embed checkout
var checkoutAssets embed.FS

// pageAssets are the files the page links to, with their content types.
var pageAssets = map[string]string{
	"checkout.css": "text/css; charset=utf-8",
	"checkout.js":  "text/javascript; charset=utf-8",
}

func serveCheckoutAsset(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	kind, ok := pageAssets[name]
	if !ok {
		writeError(w, notFoundError("checkout asset", name))
		return
	}
	serveAsset(w, "checkout/"+name, kind)
}

// serveWebSDK serves the web SDK script merchant pages include.
func serveWebSDK(w http.ResponseWriter, _ *http.Request) {
	serveAsset(w, "checkout/sdk.js", "text/javascript; charset=utf-8")
}

func serveAsset(w http.ResponseWriter, path, contentType string) {
	body, err := checkoutAssets.ReadFile(path)
	if err != nil {
		writeError(w, err) // embedded at build time: a missing file is a bug
		return
	}
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Content-Type-Options", "nosniff")
	allowAnyOrigin(h)
	_, _ = w.Write(body)
}

// allowAnyOrigin lets scripts on any merchant page read the answer: the web
// SDK's calls carry no cookies or secrets, only the public key.
func allowAnyOrigin(h http.Header) { h.Set("Access-Control-Allow-Origin", "*") }

// allowWebSDKPreflight answers the browser's CORS preflight of POST /sdk/sessions.
func allowWebSDKPreflight(w http.ResponseWriter, _ *http.Request) {
	h := w.Header()
	allowAnyOrigin(h)
	h.Set("Access-Control-Allow-Methods", "POST")
	h.Set("Access-Control-Allow-Headers", "Content-Type")
	h.Set("Access-Control-Max-Age", "600")
	w.WriteHeader(http.StatusNoContent)
}

// webCheckoutSession is the answer to the web SDK's start: the checkout page
// to load for the session, and what the payment will charge.
type webCheckoutSession struct {
	Reference   string `json:"reference"`
	CheckoutURL string `json:"checkoutUrl"`
	Status      string `json:"status"`
	Amount      int64  `json:"amount"`
	Currency    string `json:"currency"`
	Fee         int64  `json:"fee"`
	Net         int64  `json:"net"`
}

// startWebCheckout is how the web SDK, running in the payer's browser, finds
// the session the merchant's backend created: POST /sdk/sessions with the
// SDK's own {purchaseInfo, config} (SPEC "Client checkout SDKs"). The public
// key must be the sandbox's; purchaseInfo.clientReference names the session
// (its reference, or the metadata.clientReference it was created with), and
// purchaseInfo.amount must be the session's. config.callbackUrl then receives
// the session's transaction callback when the payer completes it.
func (s *Server) startWebCheckout(w http.ResponseWriter, r *http.Request) {
	allowAnyOrigin(w.Header())
	f, err := decodeFields(r)
	if err != nil {
		writeError(w, err)
		return
	}
	// The config first, so a missing public key is the error a merchant sees.
	f.require("config")
	config := nestedFields(f, "config")
	config.require("publicKey", "callbackUrl")
	publicKey, _ := config.optionalString("publicKey")
	callbackURL, _ := config.callbackURL("callbackUrl")
	config.enum("branding", "enabled", "disabled")
	liftNested(f, "config", config)
	f.require("purchaseInfo")
	info := nestedFields(f, "purchaseInfo")
	info.require("amount", "purchaseDescription", "customerPhoneNumber", "clientReference")
	amount, _ := info.minorAmount("amount")
	description, _ := info.description("purchaseDescription")
	info.phone("customerPhoneNumber")
	clientReference, _ := info.stringWhere("clientReference", movementReferenceRule, isMovementReference)
	liftNested(f, "purchaseInfo", info)
	if err := f.err(); err != nil {
		writeError(w, err)
		return
	}
	if !secretMatches(publicKey, sha256.Sum256([]byte(s.cfg.PublicKey))) {
		writeError(w, &apiError{status: http.StatusUnauthorized, code: CodeKeysMismatch,
			message: "invalid public key: config.publicKey must be the account's public key, such as " + DefaultPublicKey + " in the sandbox"})
		return
	}

	s.mu.Lock()
	p, err := s.webCheckoutOf(clientReference, amount)
	var session webCheckoutSession
	if err == nil {
		p.movement.callbackURL = callbackURL
		p.sdk = &webStart{ClientReference: clientReference, Description: description}
		s.bindSDKCallback(p)
		session = webCheckoutSession{Reference: p.Reference, CheckoutURL: baseURL(r) + "/checkout/" + p.Reference, Status: p.Status,
			Amount: p.Amount, Currency: p.Currency, Fee: percentFee(p.Amount, checkoutFeeBasisPoints)}
		session.Net = session.Amount - session.Fee
	}
	s.mu.Unlock()
	writeResult(w, http.StatusOK, session, err)
}

// webCheckoutOf finds the PENDING session clientReference names: the session
// with that reference, else the newest PENDING one created with it as
// metadata.clientReference. Its amount must be amount. s.mu must be held.
func (s *Server) webCheckoutOf(clientReference string, amount int64) (*checkoutPayment, error) {
	p, found := s.payments.checkouts.get(clientReference)
	if !found {
		for _, m := range slices.Backward(s.money.byRef[clientReference]) {
			q, ok := s.payments.checkouts.get(m.ClientReference)
			if !ok || m.Kind != string(kindCheckout) {
				continue
			}
			if !found || q.Status == checkoutPending && p.Status != checkoutPending {
				p, found = q, true
			}
		}
	}
	switch {
	case !found:
		return nil, &apiError{status: http.StatusNotFound, code: CodeNotFound,
			message: "no checkout session has the reference or metadata.clientReference " + clientReference + ": create it first on the backend (POST /v1/payments)"}
	case p.Status != checkoutPending:
		return nil, conflictError("checkout session %s is %s; only a PENDING session can be paid", p.Reference, p.Status)
	case p.Amount != amount:
		return nil, validationError("purchaseInfo.amount", "purchaseInfo.amount %d differs from the amount %d of the session the backend created", amount, p.Amount)
	}
	return p, nil
}

// webStart is what the web SDK's latest start of a session named: the
// merchant's clientReference and the purchase's description.
type webStart struct {
	ClientReference string `json:"clientReference"`
	Description     string `json:"description"`
}

// bindSDKCallback makes the session's movement's callbackURL receive its
// transaction callback (SPEC "Transaction callbacks for receive, debit and
// SDK payments") under the clientReference of p.sdk, the latest start.
// s.mu must be held.
func (s *Server) bindSDKCallback(p *checkoutPayment) {
	start := *p.sdk
	if p.Description != nil {
		start.Description = *p.Description
	}
	m, orderID := p.movement, p.ID
	m.callback = func() any {
		return s.shapes.transactionCallback(m, start.ClientReference, start.Description, orderID, p.paidThrough())
	}
}

// sdkCallback returns where to post the transaction callback of a session
// the web SDK started, and the body, once the session is final; an empty URL
// when no SDK started it. s.mu must be held.
func sdkCallback(m *movement) (string, any) {
	if m.callback == nil {
		return "", nil
	}
	return m.callbackURL, m.callback()
}

// nestedFields returns the object field name of f as fields of its own; a
// field that is absent or not an object gives empty fields (and, when it is
// not an object, a problem recorded on f).
func nestedFields(f *fields, name string) *fields {
	raw, ok := f.value(name)
	if !ok {
		return &fields{raw: map[string]json.RawMessage{}}
	}
	inner, err := parseFields(raw)
	if err != nil {
		f.fail(name, "%s must be an object", name)
		return &fields{raw: map[string]json.RawMessage{}}
	}
	return inner
}

// liftNested records the first problem of inner on f, named under name:
// "purchaseInfo.amount is required".
func liftNested(f *fields, name string, inner *fields) {
	if inner.first != nil {
		f.fail(name+"."+inner.first.field, "%s.%s", name, inner.first.message)
	}
}
