package sandbox

import (
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"strings"
)

// checkoutPageRoutes serve what a payer's browser opens: the hosted checkout
// page at each session's checkoutUrl, its assets, and the web SDK
// (checkout_sdk.go). None of them takes credentials.
func checkoutPageRoutes(s *Server) []route {
	return []route{
		{pattern: "GET /checkout/{reference}", auth: authPublic, handler: s.checkoutPage},
		{pattern: "POST /checkout/{reference}", auth: authPublic, handler: s.payOnCheckoutPage},
		{pattern: "GET /checkout/assets/{name}", auth: authPublic, handler: serveCheckoutAsset},
		{pattern: "GET /sdk/checkout.js", auth: authPublic, handler: serveWebSDK},
		{pattern: "POST /sdk/sessions", auth: authPublic, handler: s.startWebCheckout},
		{pattern: "OPTIONS /sdk/sessions", auth: authPublic, handler: allowWebSDKPreflight},
	}
}

// The networks the page offers for mobile money, with the names payers know.
var pageNetworks = []struct{ Code, Name string }{
	{"MTN", "MTN Mobile Money"},
	{"TELECEL", "Telecel Cash"},
	{"AIRTELTIGO", "AirtelTigo Money"},
}

// methodNames are the page's words for the checkout methods.
var methodNames = map[string]string{"CARD": "Card", "MOBILE_MONEY": "Mobile money", "BANK_TRANSFER": "Bank transfer"}

// testCard is the card number the page fills in, and the card of a session
// completed without one (the control, billingtest).
const testCard = "4242424242424242"

// payerChoice is what the payer chose: the method, the outcome, and the
// wallet or card paid with. The control and billingtest leave the details
// empty, and the sandbox's test wallet and card stand in.
type payerChoice struct {
	method, outcome string
	network, phone  string // MOBILE_MONEY: international digits
	cardNumber      string // CARD: digits only
}

// wallet is the mobileMoneyDetail of a session paid by mobile money: MTN and
// the customer's phone unless the payer chose others. s.mu must be held.
func (c payerChoice) wallet(p *checkoutPayment) *mobileMoneyDetail {
	network, phone := c.network, c.phone
	if network == "" {
		network = "MTN"
	}
	if phone == "" {
		phone = payerPhone(p.Customer)
	}
	return &mobileMoneyDetail{Network: network, Phone: phone, ExternalRef: p.movement.externalID}
}

// card is the cardDetail of a session paid by card: the brand read from the
// number's first digits, and its last four.
func (c payerChoice) card() *cardDetail {
	number := c.cardNumber
	if number == "" {
		number = testCard
	}
	brand := "UNKNOWN"
	switch {
	case number[0] == '4':
		brand = "VISA"
	case number[0] == '5' && '1' <= number[1] && number[1] <= '5', number[0] == '2' && '2' <= number[1] && number[1] <= '7':
		brand = "MASTERCARD"
	case number[0] == '3' && (number[1] == '4' || number[1] == '7'):
		brand = "AMEX"
	}
	return &cardDetail{Brand: brand, Last4: number[len(number)-4:]}
}

// formProblem is a field of the page's form the payer must correct.
type formProblem struct {
	Field, Message string
}

// readPayerChoice reads the page's form. A mobile-money wallet whose number
// is a failing test number (ending 0001 or 0003, DESIGN "Sandbox test
// numbers") is declined, as a wrong PIN would be; every other wallet, card
// authorization and simulated transfer succeeds unless the payer chose to
// simulate a decline.
func readPayerChoice(form url.Values) (payerChoice, *formProblem) {
	c := payerChoice{method: form.Get("method"), outcome: "succeeded"}
	switch c.method {
	case "CARD":
		c.cardNumber = digitsOnly(form.Get("cardNumber"))
		if n := len(c.cardNumber); n < 12 || n > 19 || !isDigits(c.cardNumber) {
			return c, &formProblem{"cardNumber", "Enter a card number of 12 to 19 digits."}
		}
		switch form.Get("outcome") {
		case "", "succeeded":
		case "failed":
			c.outcome = "failed"
		default:
			return c, &formProblem{"cardNumber", "Choose to pay or to simulate a decline."}
		}
	case "MOBILE_MONEY":
		c.network = form.Get("network")
		if !knownNetwork(c.network) {
			return c, &formProblem{"network", "Choose your mobile-money network."}
		}
		c.phone = strings.TrimPrefix(digitsOnly(form.Get("phone")), "+")
		if !isMSISDN(c.phone) {
			return c, &formProblem{"phone", "Enter your mobile-money number in international format, such as 233241234567."}
		}
		if pin := form.Get("pin"); len(pin) != 4 || !isDigits(pin) {
			return c, &formProblem{"pin", "Enter your 4-digit PIN."}
		}
		if o := collectionOutcomes.of(c.phone); o.refuse != "" || o.code != CodeSuccess {
			c.outcome = "failed"
		}
	case "BANK_TRANSFER":
	default:
		return c, &formProblem{"method", "Choose a payment method."}
	}
	return c, nil
}

// digitsOnly drops the spaces and hyphens payers type between digit groups,
// keeping a leading plus; anything else stays and fails the digit checks.
func digitsOnly(s string) string {
	return strings.NewReplacer(" ", "", "-", "").Replace(strings.TrimSpace(s))
}

func isDigits(s string) bool { return s != "" && strings.Trim(s, "0123456789") == "" }

func knownNetwork(code string) bool {
	for _, n := range pageNetworks {
		if n.Code == code {
			return true
		}
	}
	return false
}

// checkoutPage shows a session: the form while it is PENDING, its outcome after.
func (s *Server) checkoutPage(w http.ResponseWriter, r *http.Request) {
	s.renderCheckoutPage(w, r.PathValue("reference"), http.StatusOK, checkoutForm{})
}

// payOnCheckoutPage completes the session as the payer chose, through the
// same path as the control, then shows the outcome (POST, redirect, GET, so a
// reload does not post again). A form to correct is shown again with the
// problem; a session already final just shows its outcome.
func (s *Server) payOnCheckoutPage(w http.ResponseWriter, r *http.Request) {
	reference := r.PathValue("reference")
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		s.renderCheckoutPage(w, reference, http.StatusBadRequest, checkoutForm{Problem: &formProblem{"method", "The form could not be read; try again."}})
		return
	}
	choice, problem := readPayerChoice(r.PostForm)
	if problem != nil {
		form := checkoutForm{Method: choice.method, Network: choice.network, Phone: r.PostForm.Get("phone"),
			CardNumber: r.PostForm.Get("cardNumber"), Problem: problem}
		s.renderCheckoutPage(w, reference, http.StatusBadRequest, form)
		return
	}
	var e *apiError
	if err := s.settleCheckout(reference, choice); err != nil && !(errors.As(err, &e) && e.status == http.StatusConflict) {
		s.renderCheckoutPage(w, reference, http.StatusNotFound, checkoutForm{})
		return
	}
	http.Redirect(w, r, "/checkout/"+url.PathEscape(reference), http.StatusSeeOther)
}

// checkoutForm is what the payer sent, shown again with the problem to fix.
// The PIN is never shown again.
type checkoutForm struct {
	Method, Network, Phone, CardNumber string
	Problem                            *formProblem
}

// checkoutPageView is what the page template shows.
type checkoutPageView struct {
	Merchant  string
	Reference string
	Found     bool
	Status    string
	Amount    string // "GHS 50.00"
	// Description is the session's, if it has one.
	Description string
	// ReturnURL is where to send the payer once the session is final:
	// metadata.returnUrl, when it is an absolute http(s) URL, with the outcome.
	ReturnURL string
	Form      checkoutForm
	Networks  []struct{ Code, Name string }
	// Paid says how a SUCCEEDED session was paid; Failure why a FAILED one failed.
	Paid, Failure string
	// State is what the page's script needs, as JSON.
	State checkoutPageState
}

// checkoutPageState is the page script's input: enough to post the
// session's events to an embedding page, or to send a payer who opened it
// directly back to returnUrl.
type checkoutPageState struct {
	Reference string `json:"reference"`
	Status    string `json:"status"`
	ReturnURL string `json:"returnUrl,omitempty"`
	// Method is the method to show first; ProblemField the field to fix.
	Method       string `json:"method,omitempty"`
	ProblemField string `json:"problemField,omitempty"`
	// Fees are posted to the parent while the session is PENDING.
	Fees *checkoutFees `json:"fees,omitempty"`
	// Event and Result are posted to the parent once the session is final.
	Event  string          `json:"event,omitempty"`
	Result *checkoutResult `json:"result,omitempty"`
}

// checkoutFees is the fee the payer's payment will carry (the sandbox's
// checkout fee, the same for every method).
type checkoutFees struct {
	Amount   int64  `json:"amount"`
	Fee      int64  `json:"fee"`
	Net      int64  `json:"net"`
	Currency string `json:"currency"`
}

// checkoutResult is the data of the payment.succeeded and payment.failed
// messages the page posts to an embedding page: what the page itself shows,
// never the customer or metadata, since any page may frame a checkout URL.
type checkoutResult struct {
	ID                string             `json:"id"`
	Reference         string             `json:"reference"`
	Status            string             `json:"status"`
	Method            *string            `json:"method"`
	Amount            int64              `json:"amount"`
	Currency          string             `json:"currency"`
	Fee               int64              `json:"fee"`
	Net               int64              `json:"net"`
	PaidAt            *timestamp         `json:"paidAt,omitempty"`
	FailureCode       *string            `json:"failureCode,omitempty"`
	FailureMessage    *string            `json:"failureMessage,omitempty"`
	MobileMoneyDetail *mobileMoneyDetail `json:"mobileMoneyDetail,omitempty"`
	CardDetail        *cardDetail        `json:"cardDetail,omitempty"`
}

// Names of the messages the page posts to an embedding page.
const (
	eventPaymentSucceeded = "payment.succeeded"
	eventPaymentFailed    = "payment.failed"
)

// renderCheckoutPage writes the page of the session reference with status
// (404 when there is no such session).
func (s *Server) renderCheckoutPage(w http.ResponseWriter, reference string, status int, form checkoutForm) {
	view := checkoutPageView{Merchant: s.cfg.MerchantName, Reference: reference, Form: form, Networks: pageNetworks}
	s.mu.Lock()
	p, found := s.payments.checkouts.get(reference)
	if found {
		view.describe(*p)
	}
	s.mu.Unlock()
	if !found {
		status = http.StatusNotFound
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	// Everything comes from the sandbox itself; any merchant page may embed it.
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "+
		"connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors *")
	w.WriteHeader(status)
	_ = checkoutPageTemplate.Execute(w, view)
}

// Invalid reports whether field is the one the payer must correct.
func (v checkoutPageView) Invalid(field string) bool {
	return v.Form.Problem != nil && v.Form.Problem.Field == field
}

// describe fills the view from a copy of the session.
func (v *checkoutPageView) describe(p checkoutPayment) {
	v.Found, v.Status = true, p.Status
	v.Amount = p.Currency + " " + decimal(p.Amount).String()
	if p.Description != nil {
		v.Description = *p.Description
	}
	if u, ok := p.Metadata["returnUrl"].(string); ok && isAbsoluteURL(u) && p.Status != checkoutPending {
		v.ReturnURL = returnTo(u, p.Reference, p.Status)
	}
	if v.Form.Phone == "" {
		v.Form.Phone = payerPhone(p.Customer)
	}
	if v.Form.CardNumber == "" {
		v.Form.CardNumber = "4242 4242 4242 4242"
	}
	if v.Form.Method == "" {
		v.Form.Method = "CARD"
	}
	v.State = checkoutPageState{Reference: p.Reference, Status: p.Status, ReturnURL: v.ReturnURL, Method: v.Form.Method}
	if v.Form.Problem != nil {
		v.State.ProblemField = v.Form.Problem.Field
	}
	result := &checkoutResult{ID: p.ID, Reference: p.Reference, Status: p.Status, Method: p.Method, Amount: p.Amount,
		Currency: p.Currency, Fee: p.Fee, Net: p.Net, PaidAt: p.PaidAt, FailureCode: p.FailureCode,
		FailureMessage: p.FailureMessage, MobileMoneyDetail: p.MobileMoneyDetail, CardDetail: p.CardDetail}
	switch p.Status {
	case checkoutSucceeded:
		v.State.Event, v.State.Result = eventPaymentSucceeded, result
		v.Paid = paidWith(p)
	case checkoutFailed:
		v.State.Event, v.State.Result = eventPaymentFailed, result
		v.Failure = strings.ToUpper((*p.FailureMessage)[:1]) + (*p.FailureMessage)[1:]
	default:
		fee := percentFee(p.Amount, checkoutFeeBasisPoints)
		v.State.Fees = &checkoutFees{Amount: p.Amount, Fee: fee, Net: p.Amount - fee, Currency: p.Currency}
	}
}

// returnTo is returnURL with the session's reference and final status added
// to its query, so the merchant's page knows which session to look up.
func returnTo(returnURL, reference, status string) string {
	u, _ := url.Parse(returnURL) // checked by isAbsoluteURL
	q := u.Query()
	q.Set("reference", reference)
	q.Set("status", status)
	u.RawQuery = q.Encode()
	return u.String()
}

// paidWith says in words how a session was paid: "Mobile money (MTN, 233241234567)".
func paidWith(p checkoutPayment) string {
	words := methodNames[*p.Method]
	switch {
	case p.MobileMoneyDetail != nil:
		words += " (" + p.MobileMoneyDetail.Network + ", " + p.MobileMoneyDetail.Phone + ")"
	case p.CardDetail != nil:
		words += " (" + p.CardDetail.Brand + " ending " + p.CardDetail.Last4 + ")"
	}
	return words
}

var checkoutPageTemplate = template.Must(template.New("page.html").Funcs(template.FuncMap{
	"methodName": func(code string) string { return methodNames[code] },
	"methods":    func() []string { return checkoutMethods },
}).ParseFS(checkoutAssets, "checkout/page.html"))
