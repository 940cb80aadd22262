package sandbox

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// postCheckoutForm sends the page's form for the session reference, as a browser would.
func postCheckoutForm(tb testing.TB, s *Server, reference string, form url.Values) *httptest.ResponseRecorder {
	tb.Helper()
	req := request(tb, http.MethodPost, "/checkout/"+reference, "", form.Encode())
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	return rec
}

var pageStatePattern = regexp.MustCompile(`<script type="application/json" id="checkout-state">(.*?)</script>`)

// pageState returns the page script's input embedded in a checkout page.
func pageState(tb testing.TB, page string) map[string]json.RawMessage {
	tb.Helper()
	m := pageStatePattern.FindStringSubmatch(page)
	require.NotNil(tb, m, "page: %s", page)
	return object(tb, []byte(m[1]))
}

// checkoutRecord reads a session through the status path.
func checkoutRecord(tb testing.TB, s *Server, reference string) map[string]json.RawMessage {
	tb.Helper()
	return object(tb, answer(tb, serve(tb, s, http.MethodGet, "/v1/payments/"+reference, basicHeader, nil), http.StatusOK)["data"])
}

func TestCheckoutPageShowsThePendingSession(t *testing.T) {
	s := newTestServer(t, Config{MerchantName: "Kofi's Bakery"})
	reference := str(t, createCheckout(t, s, `{"amount":5050,"description":"Bread <and> butter",
		"customer":{"name":"Ada","email":"ada@example.com","phone":"+233241234567"}}`)["reference"])
	rec := serve(t, s, http.MethodGet, "/checkout/"+reference, "", nil)
	require.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, "no-store", rec.Header().Get("Cache-Control"))
	csp := rec.Header().Get("Content-Security-Policy")
	for _, directive := range []string{"default-src 'none'", "script-src 'self'", "style-src 'self'", "form-action 'self'", "frame-ancestors *"} {
		assert.Contains(t, csp, directive, "only the sandbox's own assets; any page may embed it")
	}
	page := rec.Body.String()
	assert.Contains(t, page, "Kofi&#39;s Bakery", "the merchant")
	assert.Contains(t, page, "<h1 id=\"title\">Pay GHS 50.50</h1>")
	assert.Contains(t, page, "Bread &lt;and&gt; butter")
	assert.Contains(t, page, `value="233241234567"`, "the customer's phone is the suggested wallet")
	for _, id := range []string{"cardNumber", "network", "phone", "pin"} {
		assert.Contains(t, page, `<label for="`+id+`">`, "every field has a label")
	}
	for _, src := range regexp.MustCompile(`\s(?:src|href|action)="([^"]*)"`).FindAllStringSubmatch(page, -1) {
		assert.True(t, strings.HasPrefix(src[1], "/"), "%s is the sandbox's own", src[1])
	}

	state := pageState(t, page)
	assert.Equal(t, sortedKeys("reference status method fees"), keys(t, mustJSON(t, state)))
	assert.Equal(t, `"PENDING"`, string(state["status"]))
	assert.JSONEq(t, `{"amount":5050,"fee":98,"net":4952,"currency":"GHS"}`, string(state["fees"]))
}

func TestCheckoutPageOfAnUnknownSession(t *testing.T) {
	s := newTestServer(t, Config{})
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		rec := postCheckoutForm(t, s, "nope", url.Values{"method": {"BANK_TRANSFER"}})
		if method == http.MethodGet {
			rec = serve(t, s, method, "/checkout/nope", "", nil)
		}
		assert.Equal(t, http.StatusNotFound, rec.Code, method)
		assert.Contains(t, rec.Body.String(), "No checkout session has the reference nope", method)
		assert.NotContains(t, rec.Body.String(), "checkout-state", method)
	}
}

func TestCheckoutPagePaysByCard(t *testing.T) {
	hooks := newCallbackReceiver(t)
	s := newTestServer(t, Config{WebhookURL: hooks})
	reference := str(t, createCheckout(t, s, `{"amount":5000,"metadata":{"returnUrl":"https://shop.example.com/done?order=7"}}`)["reference"])

	rec := postCheckoutForm(t, s, reference, url.Values{"method": {"CARD"}, "cardNumber": {"5555 5555 5555 4444"}, "outcome": {"succeeded"}})
	require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
	assert.Equal(t, "/checkout/"+reference, rec.Header().Get("Location"), "POST, redirect, GET: a reload does not pay twice")

	paid := checkoutRecord(t, s, reference)
	assert.Equal(t, `"SUCCEEDED"`, string(paid["status"]))
	assert.Equal(t, `"CARD"`, string(paid["method"]))
	assert.JSONEq(t, `{"brand":"MASTERCARD","last4":"4444"}`, string(paid["cardDetail"]))
	s.Advance(0)
	require.Len(t, deliveredTo(s, hooks), 1, "the webhook, as for the control")

	page := serve(t, s, http.MethodGet, "/checkout/"+reference, "", nil).Body.String()
	assert.Contains(t, page, "Payment received")
	assert.Contains(t, page, "GHS 50.00 paid by Card (MASTERCARD ending 4444).")
	returnURL := "https://shop.example.com/done?order=7&reference=" + reference + "&status=SUCCEEDED"
	state := pageState(t, page)
	assert.Equal(t, returnURL, str(t, state["returnUrl"]), "the payer goes back with the outcome")
	assert.Contains(t, page, `href="`+strings.ReplaceAll(returnURL, "&", "&amp;")+`"`, "and can follow the link without the script")
	assert.Equal(t, `"payment.succeeded"`, string(state["event"]))
	result := state["result"]
	assert.Equal(t, sortedKeys("id reference status method amount currency fee net paidAt cardDetail"), keys(t, result),
		"what the page shows: never the customer or metadata")
	assert.Equal(t, string(paid["paidAt"]), string(object(t, result)["paidAt"]))
	assert.Equal(t, "98", string(object(t, result)["fee"]))

	again := postCheckoutForm(t, s, reference, url.Values{"method": {"CARD"}, "cardNumber": {"4242424242424242"}, "outcome": {"failed"}})
	assert.Equal(t, http.StatusSeeOther, again.Code, "a second post only shows the outcome")
	assert.Equal(t, `"SUCCEEDED"`, string(checkoutRecord(t, s, reference)["status"]))
}

func TestCheckoutPageDeclinesACard(t *testing.T) {
	hooks := newCallbackReceiver(t)
	s := newTestServer(t, Config{WebhookURL: hooks})
	reference := str(t, createCheckout(t, s, `{"amount":5000}`)["reference"])
	rec := postCheckoutForm(t, s, reference, url.Values{"method": {"CARD"}, "cardNumber": {"4242424242424242"}, "outcome": {"failed"}})
	require.Equal(t, http.StatusSeeOther, rec.Code)

	failed := checkoutRecord(t, s, reference)
	assert.Equal(t, `"FAILED"`, string(failed["status"]))
	assert.Equal(t, `"card_declined"`, string(failed["failureCode"]))
	page := serve(t, s, http.MethodGet, "/checkout/"+reference, "", nil).Body.String()
	assert.Contains(t, page, "Payment declined")
	assert.Contains(t, page, "The card was declined. Nothing was charged.")
	assert.NotContains(t, page, "Return to", "no returnUrl, no link")
	state := pageState(t, page)
	assert.Equal(t, `"payment.failed"`, string(state["event"]))
	assert.JSONEq(t, `"card_declined"`, string(object(t, state["result"])["failureCode"]))
	s.Advance(0)
	assert.Empty(t, deliveredTo(s, hooks))
}

func TestCheckoutPagePaysByMobileMoney(t *testing.T) {
	s := newTestServer(t, Config{})
	for _, tc := range []struct {
		phone, wantStatus, wantPhone string
	}{
		{"+233 20 123 4567", "SUCCEEDED", "233201234567"},
		{"233200000004", "SUCCEEDED", "233200000004"}, // pending for a while in receive; the page's payer waits it out
		{"233200000001", "FAILED", ""},                // wrong PIN
		{"233200000003", "FAILED", ""},                // declined
	} {
		reference := str(t, createCheckout(t, s, `{"amount":5000}`)["reference"])
		rec := postCheckoutForm(t, s, reference, url.Values{"method": {"MOBILE_MONEY"}, "network": {"TELECEL"}, "phone": {tc.phone}, "pin": {"1234"}})
		require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
		record := checkoutRecord(t, s, reference)
		assert.Equal(t, `"`+tc.wantStatus+`"`, string(record["status"]), tc.phone)
		if tc.wantStatus == "FAILED" {
			assert.Equal(t, `"mobile_money_failed"`, string(record["failureCode"]), tc.phone)
			continue
		}
		detail := object(t, record["mobileMoneyDetail"])
		assert.Equal(t, `"TELECEL"`, string(detail["network"]), "the network the payer chose")
		assert.Equal(t, `"`+tc.wantPhone+`"`, string(detail["phone"]), "the wallet the payer typed")
		assert.Regexp(t, `^"[0-9]{11}"$`, string(detail["externalRef"]))
	}
}

func TestCheckoutPageSimulatesABankTransfer(t *testing.T) {
	s := newTestServer(t, Config{})
	reference := str(t, createCheckout(t, s, `{"amount":5000}`)["reference"])
	require.Equal(t, http.StatusSeeOther, postCheckoutForm(t, s, reference, url.Values{"method": {"BANK_TRANSFER"}}).Code)
	record := checkoutRecord(t, s, reference)
	assert.Equal(t, `"BANK_TRANSFER"`, string(record["method"]))
	assert.Equal(t, `"SUCCEEDED"`, string(record["status"]))
}

func TestCheckoutPageAsksToCorrectTheForm(t *testing.T) {
	hooks := newCallbackReceiver(t)
	s := newTestServer(t, Config{WebhookURL: hooks})
	reference := str(t, createCheckout(t, s, `{"amount":5000}`)["reference"])
	momo := func(network, phone, pin string) url.Values {
		return url.Values{"method": {"MOBILE_MONEY"}, "network": {network}, "phone": {phone}, "pin": {pin}}
	}
	for _, tc := range []struct {
		form           url.Values
		field, message string
	}{
		{url.Values{"method": {"CASH"}}, "method", "Choose a payment method."},
		{url.Values{}, "method", "Choose a payment method."},
		{url.Values{"method": {"CARD"}, "cardNumber": {"4242"}}, "cardNumber", "12 to 19 digits"},
		{url.Values{"method": {"CARD"}, "cardNumber": {"4242 4242 4242 424x"}}, "cardNumber", "12 to 19 digits"},
		{url.Values{"method": {"CARD"}, "cardNumber": {"4242424242424242"}, "outcome": {"maybe"}}, "cardNumber", "pay or to simulate a decline"},
		{momo("MPESA", "233241234567", "1234"), "network", "Choose your mobile-money network."},
		{momo("MTN", "0241234567", "1234"), "phone", "international format"},
		{momo("MTN", "", "1234"), "phone", "international format"},
		{momo("MTN", "233241234567", ""), "pin", "4-digit PIN"},
		{momo("MTN", "233241234567", "12a4"), "pin", "4-digit PIN"},
	} {
		rec := postCheckoutForm(t, s, reference, tc.form)
		require.Equal(t, http.StatusBadRequest, rec.Code, "%v", tc.form)
		page := rec.Body.String()
		assert.Contains(t, page, `role="alert"`, "%v", tc.form)
		assert.Contains(t, page, `<a href="#`+tc.field+`">`, "%v: the summary links to the field", tc.form)
		assert.Contains(t, page, tc.message, "%v", tc.form)
		assert.NotContains(t, page, `value="1234"`, "the PIN is never shown again")
		if tc.field != "method" {
			assert.Regexp(t, `id="`+tc.field+`"[^>]*aria-invalid="true"`, page, "%v", tc.form)
		}
		assert.Equal(t, `"`+tc.field+`"`, string(pageState(t, page)["problemField"]), "%v", tc.form)
	}
	kept := postCheckoutForm(t, s, reference, momo("AIRTELTIGO", "233 27 000 0009", "1"))
	assert.Contains(t, kept.Body.String(), `value="233 27 000 0009"`, "what the payer typed stays")
	assert.Contains(t, kept.Body.String(), `<option value="AIRTELTIGO" selected>`)
	assert.Equal(t, `"MOBILE_MONEY"`, string(pageState(t, kept.Body.String())["method"]), "the method tried is shown first")

	assert.Equal(t, `"PENDING"`, string(checkoutRecord(t, s, reference)["status"]), "nothing changed")
	assert.Equal(t, StatePending, s.Movements(reference)[0].State)
	s.Advance(0)
	assert.Empty(t, s.Deliveries())
}

func TestCheckoutPageIgnoresAReturnURLThatIsNotAWebAddress(t *testing.T) {
	s := newTestServer(t, Config{})
	reference := str(t, createCheckout(t, s, `{"amount":5000,"metadata":{"returnUrl":"javascript:alert(1)"}}`)["reference"])
	require.NoError(t, s.CompleteCheckout(reference, "BANK_TRANSFER", "succeeded"))
	page := serve(t, s, http.MethodGet, "/checkout/"+reference, "", nil).Body.String()
	assert.NotContains(t, page, "javascript:")
	assert.NotContains(t, pageState(t, page), "returnUrl")
}

func TestCheckoutPageAssets(t *testing.T) {
	s := newTestServer(t, Config{})
	for path, contentType := range map[string]string{
		"/checkout/assets/checkout.css": "text/css; charset=utf-8",
		"/checkout/assets/checkout.js":  "text/javascript; charset=utf-8",
		"/sdk/checkout.js":              "text/javascript; charset=utf-8",
	} {
		rec := serve(t, s, http.MethodGet, path, "", nil)
		require.Equal(t, http.StatusOK, rec.Code, path)
		assert.Equal(t, contentType, rec.Header().Get("Content-Type"), path)
		assert.Equal(t, "nosniff", rec.Header().Get("X-Content-Type-Options"), path)
		assert.NotEmpty(t, rec.Body.String(), path)
		assert.NotRegexp(t, `https?://`, rec.Body.String(), "%s loads nothing from other hosts", path)
	}
	requireError(t, serve(t, s, http.MethodGet, "/checkout/assets/page.html", "", nil), http.StatusNotFound, CodeNotFound, "", "page.html")
}

func TestPayerChoiceDetails(t *testing.T) {
	for number, want := range map[string]cardDetail{
		"":                 {Brand: "VISA", Last4: "4242"}, // the control: the test card
		"4000056655665556": {Brand: "VISA", Last4: "5556"},
		"5105105105105100": {Brand: "MASTERCARD", Last4: "5100"},
		"2223003122003222": {Brand: "MASTERCARD", Last4: "3222"},
		"378282246310005":  {Brand: "AMEX", Last4: "0005"},
		"6011111111111117": {Brand: "UNKNOWN", Last4: "1117"},
	} {
		assert.Equal(t, want, *payerChoice{cardNumber: number}.card(), number)
	}
	p := &checkoutPayment{movement: &movement{externalID: "12345678901"}}
	assert.Equal(t, mobileMoneyDetail{Network: "MTN", Phone: "233240000000", ExternalRef: "12345678901"}, *payerChoice{}.wallet(p),
		"the control: MTN and the sandbox's test wallet")
}

func BenchmarkCheckoutPage(b *testing.B) {
	s := newTestServer(b, Config{})
	reference := str(b, createCheckout(b, s, `{"amount":5000,"description":"Bread","customer":{"name":"Ada","email":"ada@example.com","phone":"+233241234567"}}`)["reference"])
	benchmarkRequests(b, s, http.StatusOK, func() *http.Request {
		return httptest.NewRequest(http.MethodGet, "/checkout/"+reference, nil)
	})
}

func BenchmarkWebSDKStart(b *testing.B) {
	s := newTestServer(b, Config{})
	reference := str(b, createCheckout(b, s, `{"amount":5000}`)["reference"])
	body := sdkStart("5000", reference, DefaultPublicKey, "https://shop.example.com/cb")
	benchmarkRequests(b, s, http.StatusOK, func() *http.Request {
		return httptest.NewRequest(http.MethodPost, "/sdk/sessions", strings.NewReader(body))
	})
}
