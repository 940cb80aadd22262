package sandbox

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// On the provider's wire the verify-OTP path takes the provider's name of the mandate's
// id, hubtelPreApprovalId, as its clients send it; the spec's path keeps
// servicePreApprovalId on both wires.
func TestProviderVerifyOTPTakesTheProvidersName(t *testing.T) {
	callbacks := newCallbackReceiver(t)
	s := newProviderServer(t, Config{})
	const msisdn = "233201234567"
	providerPath := "/api/v2/merchant/" + DefaultSalesAccount + "/preapproval/verifyotp"
	created := serve(t, s, http.MethodPost, "/api/v2/merchant/"+DefaultSalesAccount+"/preapproval/initiate", basicHeader,
		mandateBody("votp1", msisdn, vodafoneDebit, callbacks+"/votp1"))
	require.Equal(t, http.StatusOK, created.Code, created.Body.String())
	data := dataOf(t, created.Body.Bytes(), "data")
	require.NotContains(t, data, "servicePreApprovalId", "the provider's answer names the id its own way")
	id := str(t, data["hubtelPreApprovalId"])
	otp := s.SMS(msisdn)[0]
	verify := func(key string) string {
		return `{"customerMsisdn":"` + msisdn + `","` + key + `":"` + id + `","clientReferenceId":"votp1","otpCode":"` + otp + `"}`
	}

	requireError(t, serve(t, s, http.MethodPost, providerPath, basicHeader, verify("servicePreApprovalId")),
		http.StatusBadRequest, CodeValidation, "hubtelPreApprovalId", "hubtelPreApprovalId is required")
	rec := serve(t, s, http.MethodPost, providerPath, basicHeader, verify("hubtelPreApprovalId"))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	assert.Equal(t, id, str(t, dataOf(t, rec.Body.Bytes(), "data")["hubtelPreApprovalId"]))
	rec = serve(t, s, http.MethodPost, "/v1/mandates/verifyotp", basicHeader, verify("servicePreApprovalId"))
	require.Equal(t, http.StatusOK, rec.Code, "the spec's path reads the spec's name on the provider's wire too: %s", rec.Body)

	s.Advance(time.Second)
	bodies := deliveredTo(s, callbacks+"/votp1")
	require.Len(t, bodies, 1)
	cb := object(t, bodies[0])
	assert.Equal(t, `"`+id+`"`, string(cb["HubtelPreapprovalId"]))
	assert.Equal(t, callbackRefs{client: "votp1", service: id}, callbackReferences(bodies[0]),
		"a callback fault armed by the mandate's id finds the provider's callback")
}
