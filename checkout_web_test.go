package billing

import (
	"bytes"
	"encoding/json"
	"html/template"
	"net/http"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// createdSession decodes the recorded answer of a new checkout session.
func createdSession(t *testing.T) *Payment {
	t.Helper()
	c, mock := newMockClient(t)
	mock.RegisterResponder(http.MethodGet, mockBaseURL+"/v1/payments/chk_7Qw2Zp9Lx4", fixtureResponder(t, 200, "payments/checkout_created.json"))
	pay, err := c.Payments.Get(ctx(), "chk_7Qw2Zp9Lx4")
	require.NoError(t, err)
	return pay
}

var shopParams = WebCheckoutParams{PublicKey: "pk_test_shop", CallbackURL: "https://shop.example.com/hooks/checkout", Branding: WebCheckoutBrandingDisabled}

func TestNewWebCheckoutGivesThePageWhatTheWebSDKTakes(t *testing.T) {
	params := shopParams
	web, err := NewWebCheckout(createdSession(t), &params)
	require.NoError(t, err)
	encoded, err := json.Marshal(web)
	require.NoError(t, err)
	assert.JSONEq(t, string(fixture(t, "webcheckout/web_checkout.json")), string(encoded))
	assert.NotContains(t, string(encoded), "client-secret")

	var decoded WebCheckout
	require.NoError(t, json.Unmarshal(fixture(t, "webcheckout/web_checkout.json"), &decoded))
	assert.Equal(t, *web, decoded)
}

func TestNewWebCheckoutNamesASessionWithoutClientReferenceByItsReference(t *testing.T) {
	pay := createdSession(t)
	delete(pay.Metadata, "clientReference")
	params := shopParams
	params.Branding = ""
	web, err := NewWebCheckout(pay, &params)
	require.NoError(t, err)
	assert.Equal(t, "chk_7Qw2Zp9Lx4", web.PurchaseInfo.ClientReference)
	encoded, err := json.Marshal(web.Config)
	require.NoError(t, err)
	assert.JSONEq(t, `{"publicKey":"pk_test_shop","callbackUrl":"https://shop.example.com/hooks/checkout"}`, string(encoded),
		"an empty branding is left to the service")
}

// TestWebCheckoutRendersSafelyIntoAPage shows the intended use: html/template writes the
// value as JSON inside a script element, escaped so page text cannot end the script.
func TestWebCheckoutRendersSafelyIntoAPage(t *testing.T) {
	pay := createdSession(t)
	pay.Description = `</script><script>alert("x")</script>`
	params := shopParams
	web, err := NewWebCheckout(pay, &params)
	require.NoError(t, err)
	page := template.Must(template.New("page").Parse(`<script src="{{.ScriptURL}}"></script><script>const checkout = {{.}};</script>`))
	var out bytes.Buffer
	require.NoError(t, page.Execute(&out, web))
	assert.Contains(t, out.String(), `<script src="https://checkout.billing.test/sdk/checkout.js"></script>`)
	script := regexp.MustCompile(`const checkout = (.*);</script>$`).FindStringSubmatch(out.String())
	require.NotNil(t, script, out.String())
	assert.NotContains(t, script[1], "</script>")
	var back WebCheckout
	require.NoError(t, json.Unmarshal([]byte(script[1]), &back))
	assert.Equal(t, pay.Description, back.PurchaseInfo.PurchaseDescription)
}

func TestNewWebCheckoutRefusals(t *testing.T) {
	for name, tc := range map[string]struct {
		change func(p *Payment, params *WebCheckoutParams)
		field  string
	}{
		"paid session":      {func(p *Payment, _ *WebCheckoutParams) { p.Status = PaymentStatusSucceeded }, "payment.status"},
		"no reference":      {func(p *Payment, _ *WebCheckoutParams) { p.Reference = "" }, "payment.reference"},
		"no checkout URL":   {func(p *Payment, _ *WebCheckoutParams) { p.CheckoutURL = "" }, "payment.checkoutUrl"},
		"no description":    {func(p *Payment, _ *WebCheckoutParams) { p.Description = " " }, "payment.description"},
		"no customer phone": {func(p *Payment, _ *WebCheckoutParams) { p.Customer = PaymentCustomer{} }, "payment.customer.phone"},
		"no public key":     {func(_ *Payment, w *WebCheckoutParams) { w.PublicKey = "" }, "publicKey"},
		"the secret key":    {func(_ *Payment, w *WebCheckoutParams) { w.PublicKey = "sk_test_sandbox" }, "publicKey"},
		"no callback URL":   {func(_ *Payment, w *WebCheckoutParams) { w.CallbackURL = "" }, "callbackUrl"},
		"relative callback": {func(_ *Payment, w *WebCheckoutParams) { w.CallbackURL = "/hooks" }, "callbackUrl"},
		"unknown branding":  {func(_ *Payment, w *WebCheckoutParams) { w.Branding = "on" }, "branding"},
	} {
		t.Run(name, func(t *testing.T) {
			pay, params := createdSession(t), shopParams
			tc.change(pay, &params)
			web, err := NewWebCheckout(pay, &params)
			var v *ValidationError
			require.ErrorAs(t, err, &v)
			assert.Equal(t, tc.field, v.Field)
			assert.NotEmpty(t, v.Rule)
			assert.Nil(t, web)
		})
	}
	params := shopParams
	_, err := NewWebCheckout(nil, &params)
	var v *ValidationError
	require.ErrorAs(t, err, &v)
	assert.Equal(t, "payment", v.Field)
	_, err = NewWebCheckout(createdSession(t), nil)
	require.ErrorAs(t, err, &v)
	assert.Equal(t, "params", v.Field)
}
