package sandbox

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sdkStart is the web SDK's start body for a session of amount named by
// clientReference, with the public key and callback URL given.
func sdkStart(amount, clientReference, publicKey, callbackURL string) string {
	return `{"purchaseInfo":{"amount":` + amount + `,"purchaseDescription":"Bread","customerPhoneNumber":"233241234567",
		"clientReference":"` + clientReference + `"},"config":{"publicKey":"` + publicKey + `","branding":"enabled","callbackUrl":"` + callbackURL + `"}}`
}

func TestWebSDKFindsTheSessionTheBackendCreated(t *testing.T) {
	s := newTestServer(t, Config{})
	byReference := str(t, createCheckout(t, s, `{"amount":5000}`)["reference"])
	rec := serve(t, s, http.MethodPost, "/sdk/sessions", "", sdkStart("5000", byReference, DefaultPublicKey, "https://shop.example.com/cb"))
	assert.Equal(t, "*", rec.Header().Get("Access-Control-Allow-Origin"), "merchant pages of any origin call it")
	data := answer(t, rec, http.StatusOK)["data"]
	assert.JSONEq(t, `{"reference":"`+byReference+`","checkoutUrl":"http://example.com/checkout/`+byReference+`","status":"PENDING",
		"amount":5000,"currency":"GHS","fee":98,"net":4902}`, string(data))

	// By metadata.clientReference: the newest PENDING session created with it.
	older := str(t, createCheckout(t, s, `{"amount":700,"metadata":{"clientReference":"order9"}}`)["reference"])
	newer := str(t, createCheckout(t, s, `{"amount":700,"metadata":{"clientReference":"order9"}}`)["reference"])
	require.NoError(t, s.CompleteCheckout(newer, "CARD", "failed"))
	rec = serve(t, s, http.MethodPost, "/sdk/sessions", "", sdkStart("700", "order9", DefaultPublicKey, "https://shop.example.com/cb"))
	assert.Equal(t, older, str(t, object(t, answer(t, rec, http.StatusOK)["data"])["reference"]))
}

func TestWebSDKPreflight(t *testing.T) {
	s := newTestServer(t, Config{})
	rec := serve(t, s, http.MethodOptions, "/sdk/sessions", "", nil)
	assert.Equal(t, http.StatusNoContent, rec.Code)
	assert.Equal(t, "*", rec.Header().Get("Access-Control-Allow-Origin"))
	assert.Equal(t, "POST", rec.Header().Get("Access-Control-Allow-Methods"))
	assert.Equal(t, "Content-Type", rec.Header().Get("Access-Control-Allow-Headers"))
}

func TestWebSDKStartRules(t *testing.T) {
	s := newTestServer(t, Config{PublicKey: "pk_test_shop"})
	pending := str(t, createCheckout(t, s, `{"amount":5000}`)["reference"])
	paid := str(t, createCheckout(t, s, `{"amount":5000}`)["reference"])
	require.NoError(t, s.CompleteCheckout(paid, "BANK_TRANSFER", "succeeded"))
	valid := sdkStart("5000", pending, "pk_test_shop", "https://shop.example.com/cb")
	without := func(field string) string {
		return strings.Replace(valid, `"`+field+`":`, `"unused`+field+`":`, 1)
	}
	for _, tc := range []struct {
		body          string
		status        int
		code, field   string
		message, name string
	}{
		{without("config"), 400, CodeValidation, "config", "config is required", "no config"},
		{without("publicKey"), 400, CodeValidation, "config.publicKey", "config.publicKey is required", "no public key, even with nothing else"},
		{`{"config":{"callbackUrl":"https://x.example"}}`, 400, CodeValidation, "config.publicKey", "config.publicKey is required", "the public key is named first"},
		{sdkStart("5000", pending, DefaultPublicKey, "https://shop.example.com/cb"), 401, CodeKeysMismatch, "", "invalid public key", "another sandbox's key"},
		{sdkStart("5000", pending, "pk_test_shop", "/cb"), 400, CodeValidation, "config.callbackUrl", "absolute http or https URL", "relative callback"},
		{strings.Replace(valid, `"enabled"`, `"on"`, 1), 400, CodeValidation, "config.branding", "enabled, disabled", "branding"},
		{`{"config":{"publicKey":"pk_test_shop","callbackUrl":"https://x.example"}}`, 400, CodeValidation, "purchaseInfo", "purchaseInfo is required", "no purchase"},
		{`{"config":"pk_test_shop","purchaseInfo":{}}`, 400, CodeValidation, "config", "config must be an object", "config not an object"},
		{without("customerPhoneNumber"), 400, CodeValidation, "purchaseInfo.customerPhoneNumber", "purchaseInfo.customerPhoneNumber is required", "no phone"},
		{sdkStart("50.5", pending, "pk_test_shop", "https://x.example"), 400, CodeValidation, "purchaseInfo.amount", "positive integer in minor units", "decimal amount"},
		{sdkStart("4999", pending, "pk_test_shop", "https://x.example"), 400, CodeValidation, "purchaseInfo.amount", "differs from the amount 5000", "another amount"},
		{sdkStart("5000", "order.1", "pk_test_shop", "https://x.example"), 400, CodeValidation, "purchaseInfo.clientReference", "letters, digits, hyphens and underscores", "bad reference"},
		{sdkStart("5000", "unknown1", "pk_test_shop", "https://x.example"), 404, CodeNotFound, "", "create it first on the backend", "no session"},
		{sdkStart("5000", paid, "pk_test_shop", "https://x.example"), 409, CodeConflict, "", "is SUCCEEDED", "paid already"},
	} {
		rec := serve(t, s, http.MethodPost, "/sdk/sessions", "", tc.body)
		assert.Equal(t, "*", rec.Header().Get("Access-Control-Allow-Origin"), tc.name)
		requireError(t, rec, tc.status, tc.code, tc.field, tc.message)
	}
	s.Advance(0)
	require.NoError(t, s.CompleteCheckout(pending, "CARD", "succeeded"))
	s.Advance(0)
	assert.Empty(t, s.Deliveries(), "no refused start bound a callback")
}

func TestWebSDKSessionCallsBackToTheCallbackURL(t *testing.T) {
	callbacks := newCallbackReceiver(t)
	s := newTestServer(t, Config{})
	paid := str(t, createCheckout(t, s, `{"amount":5000,"description":"Two loaves","metadata":{"clientReference":"order11"}}`)["reference"])
	answer(t, serve(t, s, http.MethodPost, "/sdk/sessions", "", sdkStart("5000", "order11", DefaultPublicKey, callbacks)), http.StatusOK)
	require.NoError(t, s.settleCheckout(paid, payerChoice{method: "MOBILE_MONEY", outcome: "succeeded", network: "MTN", phone: "233241234567"}))

	declined := str(t, createCheckout(t, s, `{"amount":1000}`)["reference"])
	answer(t, serve(t, s, http.MethodPost, "/sdk/sessions", "", sdkStart("1000", declined, DefaultPublicKey, callbacks)), http.StatusOK)
	require.NoError(t, s.CompleteCheckout(declined, "CARD", "failed"))
	s.Advance(0)

	got := deliveredTo(s, callbacks)
	require.Len(t, got, 2)
	success := object(t, got[0])
	assert.Equal(t, `"0000"`, string(success["ResponseCode"]))
	assert.Equal(t, `"success"`, string(success["Message"]))
	data := object(t, success["Data"])
	assert.Equal(t, `"order11"`, string(data["ClientReference"]), "the merchant's reference")
	assert.Equal(t, "50.00", string(data["Amount"]))
	assert.Equal(t, "0.98", string(data["Charges"]))
	assert.Equal(t, "49.02", string(data["AmountAfterCharges"]))
	assert.Equal(t, `"Two loaves"`, string(data["Description"]), "the session's description")
	assert.Equal(t, string(checkoutRecord(t, s, paid)["mobileMoneyDetail"]), `{"network":"MTN","phone":"233241234567","externalRef":`+string(data["ExternalTransactionId"])+`}`)

	failure := object(t, got[1])
	assert.Equal(t, `"2001"`, string(failure["ResponseCode"]))
	assert.Equal(t, `"`+declined+`"`, string(object(t, failure["Data"])["ClientReference"]))
	assert.Equal(t, `"Bread"`, string(object(t, failure["Data"])["Description"]), "purchaseDescription when the session has none")
}
