package sandbox

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	mtnDebit      = "mtn-gh-direct-debit"
	vodafoneDebit = "vodafone-gh-direct-debit"
)

func mandateBody(reference, msisdn, channel, callbackURL string) string {
	return `{"clientReferenceId":"` + reference + `","customerMsisdn":"` + msisdn + `","channel":"` + channel + `","callbackUrl":"` + callbackURL + `"}`
}

// createMandate creates a mandate and returns the data of the answer.
func createMandate(tb testing.TB, s *Server, reference, msisdn, channel, callbackURL string) map[string]json.RawMessage {
	tb.Helper()
	rec := serve(tb, s, http.MethodPost, "/v1/mandates", basicHeader, mandateBody(reference, msisdn, channel, callbackURL))
	body := answer(tb, rec, http.StatusOK)
	assert.Equal(tb, sortedKeys("message responseCode data"), keys(tb, rec.Body.Bytes()))
	assert.Equal(tb, `"2000"`, string(body["responseCode"]))
	return object(tb, body["data"])
}

// approvedMandate creates a USSD mandate for msisdn and lets it be approved.
func approvedMandate(tb testing.TB, s *Server, reference, msisdn string) {
	tb.Helper()
	createMandate(tb, s, reference, msisdn, mtnDebit, "http://127.0.0.1:1/mandates")
	s.Advance(s.cfg.ResolveAfter)
	require.Equal(tb, `"APPROVED"`, string(mandateStatusData(tb, s, reference)["preapprovalStatus"]))
}

func mandateStatusData(tb testing.TB, s *Server, reference string) map[string]json.RawMessage {
	tb.Helper()
	rec := serve(tb, s, http.MethodGet, "/v1/mandates/preapproval/"+reference+"/status", basicHeader, nil)
	body := answer(tb, rec, http.StatusOK)
	assert.Equal(tb, `"2000"`, string(body["responseCode"]))
	return object(tb, body["data"])
}

func TestUSSDMandateIsApprovedOnItsOwn(t *testing.T) {
	callbacks := newCallbackReceiver(t)
	s := newTestServer(t, Config{ResolveAfter: 20 * time.Second})
	m := createMandate(t, s, "mand1", "233241230000", mtnDebit, callbacks)
	assert.Equal(t, sortedKeys("servicePreApprovalId clientReferenceId verificationType otpPrefix preapprovalStatus"), keys(t, mustJSON(t, m)))
	assert.Regexp(t, `^"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"$`, string(m["servicePreApprovalId"]))
	assert.Equal(t, `"USSD"`, string(m["verificationType"]))
	assert.Equal(t, "null", string(m["otpPrefix"]))
	assert.Equal(t, `"PENDING"`, string(m["preapprovalStatus"]))
	assert.Len(t, s.Movements("mand1"), 1, "a mandate creation is recorded")

	st := mandateStatusData(t, s, "mand1")
	assert.Equal(t, sortedKeys("servicePreApprovalId clientReferenceId customerMsisdn channel verificationType preapprovalStatus createdAt"), keys(t, mustJSON(t, st)))
	assert.Equal(t, `"PENDING"`, string(st["preapprovalStatus"]))
	assert.Equal(t, `"`+mtnDebit+`"`, string(st["channel"]))
	assert.Equal(t, `"233241230000"`, string(st["customerMsisdn"]))
	assert.Equal(t, `"2025-01-02T03:04:05.000Z"`, string(st["createdAt"]))

	s.Advance(19 * time.Second)
	assert.Empty(t, deliveredTo(s, callbacks))
	s.Advance(time.Second)
	assert.Equal(t, `"APPROVED"`, string(mandateStatusData(t, s, "mand1")["preapprovalStatus"]))
	got := deliveredTo(s, callbacks)
	require.Len(t, got, 1)
	assert.Equal(t, sortedKeys("CustomerMsisdn VerificationType PreapprovalStatus ServicePreapprovalId ClientReferenceId CreatedAt"), keys(t, got[0]))
	cb := object(t, got[0])
	assert.Equal(t, `"APPROVED"`, string(cb["PreapprovalStatus"]))
	assert.Equal(t, `"USSD"`, string(cb["VerificationType"]))
	assert.Equal(t, `"233241230000"`, string(cb["CustomerMsisdn"]))
	assert.Equal(t, string(m["servicePreApprovalId"]), string(cb["ServicePreapprovalId"]))
	assert.Equal(t, `"mand1"`, string(cb["ClientReferenceId"]))
	assert.Equal(t, `"2025-01-02T03:04:25.000Z"`, string(cb["CreatedAt"]))
}

func TestOTPMandateIsApprovedAfterTheRightCode(t *testing.T) {
	callbacks := newCallbackReceiver(t)
	s := newTestServer(t, Config{})
	m := createMandate(t, s, "mand2", "233201230000", vodafoneDebit, callbacks)
	assert.Equal(t, `"OTP"`, string(m["verificationType"]))
	prefix := str(t, m["otpPrefix"])
	assert.Regexp(t, `^[A-Z]{4}$`, prefix)

	rec := serve(t, s, http.MethodGet, "/sandbox/sms?msisdn=%2B233201230000", secretHeader, nil)
	var sms []struct{ Message, SentAt string }
	require.NoError(t, json.Unmarshal(answer(t, rec, http.StatusOK)["data"], &sms))
	require.Len(t, sms, 1)
	otp := sms[0].Message
	assert.Regexp(t, `^`+prefix+`-[0-9]{4}$`, otp, "the SMS is the code alone")
	assert.Equal(t, "2025-01-02T03:04:05.000Z", sms[0].SentAt)
	assert.Equal(t, []string{otp}, s.SMS("233201230000"))

	id := str(t, m["servicePreApprovalId"])
	verify := func(code string) *httptest.ResponseRecorder {
		return serve(t, s, http.MethodPost, "/v1/mandates/verifyotp", basicHeader,
			`{"customerMsisdn":"233201230000","servicePreApprovalId":"`+id+`","clientReferenceId":"mand2","otpCode":"`+code+`"}`)
	}
	wrong := "ZZZZ-0000"
	if otp == wrong {
		wrong = "ZZZZ-0001"
	}
	requireRefusal(t, verify(wrong), http.StatusBadRequest, "responseCode", CodePreapprovalFailed, "message", "OTP is wrong")
	requireError(t, verify("ABCD1234"), http.StatusBadRequest, CodeValidation, "otpCode", "four letters, a hyphen and four digits")
	s.Advance(time.Hour)
	assert.Empty(t, deliveredTo(s, callbacks), "no approval without the right code")

	rec = verify(otp)
	body := answer(t, rec, http.StatusOK)
	assert.Equal(t, `"2000"`, string(body["responseCode"]))
	assert.JSONEq(t, `{"servicePreApprovalId":"`+id+`","preapprovalStatus":"PENDING"}`, string(body["data"]))
	assert.Equal(t, http.StatusOK, verify(otp).Code, "verifying again is harmless")
	s.Advance(0)
	assert.Equal(t, `"APPROVED"`, string(mandateStatusData(t, s, "mand2")["preapprovalStatus"]))
	got := deliveredTo(s, callbacks)
	require.Len(t, got, 1, "one approval, one callback")
	assert.Equal(t, `"OTP"`, string(object(t, got[0])["VerificationType"]))
	requireRefusal(t, verify(otp), http.StatusBadRequest, "responseCode", CodePreapprovalFailed, "message", "APPROVED")
}

func TestVerifyOTPRules(t *testing.T) {
	s := newTestServer(t, Config{})
	ussd := createMandate(t, s, "ussd1", "233241230000", mtnDebit, "http://x.example/cb")
	otp := createMandate(t, s, "otp1", "233201230000", vodafoneDebit, "http://x.example/cb")
	body := func(msisdn, id, reference string) string {
		return `{"customerMsisdn":"` + msisdn + `","servicePreApprovalId":"` + id + `","clientReferenceId":"` + reference + `","otpCode":"ABCD-1234"}`
	}
	requireError(t, serve(t, s, http.MethodPost, "/v1/mandates/verifyotp", basicHeader, `{"customerMsisdn":"233201230000"}`), 400, CodeValidation, "servicePreApprovalId", "is required")
	requireError(t, serve(t, s, http.MethodPost, "/v1/mandates/verifyotp", basicHeader, body("233201230000", "nope", "otp1")), 404, CodeNotFound, "", "nope")
	requireRefusal(t, serve(t, s, http.MethodPost, "/v1/mandates/verifyotp", basicHeader, body("233201239999", str(t, otp["servicePreApprovalId"]), "otp1")),
		400, "responseCode", CodePreapprovalFailed, "message", "do not match")
	requireRefusal(t, serve(t, s, http.MethodPost, "/v1/mandates/verifyotp", basicHeader, body("233241230000", str(t, ussd["servicePreApprovalId"]), "ussd1")),
		400, "responseCode", CodePreapprovalFailed, "message", "USSD")
}

func TestCreateMandateRules(t *testing.T) {
	s := newTestServer(t, Config{})
	for _, tc := range []struct{ name, body, field, message string }{
		{"reference missing", mandateBody("", "233241230000", mtnDebit, "http://x.example/cb"), "clientReferenceId", "is required"},
		{"reference shape", mandateBody("a b", "233241230000", mtnDebit, "http://x.example/cb"), "clientReferenceId", "letters and digits"},
		{"msisdn with plus", mandateBody("r1", "+233241230000", mtnDebit, "http://x.example/cb"), "customerMsisdn", "without +"},
		{"msisdn local", mandateBody("r1", "0241230000x", mtnDebit, "http://x.example/cb"), "customerMsisdn", "without +"},
		{"channel unknown", mandateBody("r1", "233241230000", "mtn-gh", "http://x.example/cb"), "channel", "one of mtn-gh-direct-debit, vodafone-gh-direct-debit"},
		{"callback missing", mandateBody("r1", "233241230000", mtnDebit, ""), "callbackUrl", "is required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			requireError(t, serve(t, s, http.MethodPost, "/v1/mandates", basicHeader, tc.body), http.StatusBadRequest, CodeValidation, tc.field, tc.message)
		})
	}
	assert.Empty(t, s.Movements("r1"))

	createMandate(t, s, "r1", "233241230000", mtnDebit, "http://x.example/cb")
	requireRefusal(t, serve(t, s, http.MethodPost, "/v1/mandates", basicHeader, mandateBody("r1", "233241239999", mtnDebit, "http://x.example/cb")),
		http.StatusOK, "responseCode", CodeFailed, "message", "duplicate")
	requireRefusal(t, serve(t, s, http.MethodPost, "/v1/mandates", basicHeader, mandateBody("r2", "233241230000", mtnDebit, "http://x.example/cb")),
		http.StatusBadRequest, "responseCode", CodePreapprovalFailed, "message", "already has a pending or approved mandate")
	createMandate(t, s, "r3", "233241230000", vodafoneDebit, "http://x.example/cb")
	assert.Len(t, s.Movements("r1"), 1)
	assert.Empty(t, s.Movements("r2"))
	requireError(t, serve(t, s, http.MethodGet, "/v1/mandates/preapproval/nope/status", basicHeader, nil), 404, CodeNotFound, "", "nope")
}

func TestCancelAndReactivateMandate(t *testing.T) {
	first, second := newCallbackReceiver(t), newCallbackReceiver(t)
	s := newTestServer(t, Config{})
	m := createMandate(t, s, "mand3", "233201230000", vodafoneDebit, first)
	id := str(t, m["servicePreApprovalId"])
	verifyOTP(t, s, "233201230000", id, "mand3")
	s.Advance(0)
	require.Len(t, deliveredTo(s, first), 1)

	rec := serve(t, s, http.MethodGet, "/v1/mandates/preapproval/233201230000/cancel", basicHeader, nil)
	body := answer(t, rec, http.StatusOK)
	assert.Equal(t, `"2000"`, string(body["responseCode"]))
	assert.JSONEq(t, `{"servicePreApprovalId":"`+id+`","clientReferenceId":"mand3","customerMsisdn":"233201230000","preapprovalStatus":"CANCELLED"}`, string(body["data"]))
	assert.Equal(t, `"CANCELLED"`, string(mandateStatusData(t, s, "mand3")["preapprovalStatus"]))
	requireError(t, serve(t, s, http.MethodGet, "/v1/mandates/preapproval/233201230000/cancel", basicHeader, nil), 404, CodeNotFound, "", "233201230000")

	requireRefusal(t, serve(t, s, http.MethodPost, "/v1/payments/direct-debit", basicHeader, debitBody("233201230000", vodafoneDebit, "10.00", "c1", "http://x.example/cb")),
		http.StatusBadRequest, "ResponseCode", CodePreapprovalFailed, "Message", "no approved mandate")
	assert.Empty(t, s.Movements("c1"), "a cancelled mandate cannot be charged")

	rec = serve(t, s, http.MethodPost, "/v1/mandates/preapproval/reactivate", basicHeader, `{"customerMsisdn":"233201230000","callbackUrl":"`+second+`"}`)
	body = answer(t, rec, http.StatusOK)
	assert.Equal(t, `"2000"`, string(body["responseCode"]))
	assert.Equal(t, sortedKeys("servicePreApprovalId clientReferenceId customerMsisdn verificationType otpPrefix preapprovalStatus"), keys(t, body["data"]))
	data := object(t, body["data"])
	assert.Equal(t, `"PENDING"`, string(data["preapprovalStatus"]))
	assert.Equal(t, `"`+id+`"`, string(data["servicePreApprovalId"]))
	sms := s.SMS("233201230000")
	require.Len(t, sms, 2, "a fresh OTP")
	assert.Regexp(t, "^"+str(t, data["otpPrefix"])+"-", sms[0], "newest first")

	requireRefusal(t, serve(t, s, http.MethodPost, "/v1/mandates/preapproval/reactivate", basicHeader, `{"customerMsisdn":"233201230000","callbackUrl":"`+second+`"}`),
		http.StatusBadRequest, "responseCode", CodePreapprovalFailed, "message", "only a cancelled mandate")
	requireError(t, serve(t, s, http.MethodPost, "/v1/mandates/preapproval/reactivate", basicHeader, `{"customerMsisdn":"233209999999","callbackUrl":"`+second+`"}`),
		404, CodeNotFound, "", "233209999999")
	requireError(t, serve(t, s, http.MethodPost, "/v1/mandates/preapproval/reactivate", basicHeader, `{"customerMsisdn":"233201230000"}`),
		400, CodeValidation, "callbackUrl", "is required")

	verifyOTP(t, s, "233201230000", id, "mand3")
	s.Advance(0)
	assert.Len(t, deliveredTo(s, first), 1, "the old URL hears nothing more")
	require.Len(t, deliveredTo(s, second), 1, "the approval goes to the new URL")
	assert.Equal(t, `"APPROVED"`, string(mandateStatusData(t, s, "mand3")["preapprovalStatus"]))
	answer(t, serve(t, s, http.MethodPost, "/v1/payments/direct-debit", basicHeader, debitBody("233201230000", vodafoneDebit, "10.00", "c1", "http://x.example/cb")), http.StatusOK)
}

func TestCancelBeforeApprovalStopsIt(t *testing.T) {
	callbacks := newCallbackReceiver(t)
	s := newTestServer(t, Config{ResolveAfter: time.Minute})
	createMandate(t, s, "mand4", "233241230000", mtnDebit, callbacks)
	answer(t, serve(t, s, http.MethodGet, "/v1/mandates/preapproval/233241230000/cancel", basicHeader, nil), http.StatusOK)
	s.Advance(time.Hour)
	assert.Empty(t, deliveredTo(s, callbacks))
	assert.Equal(t, `"CANCELLED"`, string(mandateStatusData(t, s, "mand4")["preapprovalStatus"]))
	assert.Equal(t, StateFailed, s.Movements("mand4")[0].State)

	answer(t, serve(t, s, http.MethodPost, "/v1/mandates/preapproval/reactivate", basicHeader, `{"customerMsisdn":"233241230000","callbackUrl":"`+callbacks+`"}`), http.StatusOK)
	s.Advance(time.Minute)
	assert.Len(t, deliveredTo(s, callbacks), 1, "a reactivated USSD mandate is approved on its own")
}

// verifyOTP submits the newest OTP sent to msisdn.
func verifyOTP(tb testing.TB, s *Server, msisdn, id, reference string) {
	tb.Helper()
	sms := s.SMS(msisdn)
	require.NotEmpty(tb, sms)
	answer(tb, serve(tb, s, http.MethodPost, "/v1/mandates/verifyotp", basicHeader,
		`{"customerMsisdn":"`+msisdn+`","servicePreApprovalId":"`+id+`","clientReferenceId":"`+reference+`","otpCode":"`+sms[0]+`"}`), http.StatusOK)
}

func debitBody(msisdn, channel, amount, reference, callbackURL string) string {
	return `{"CustomerMsisdn":"` + msisdn + `","Channel":"` + channel + `","Amount":` + amount + `,"PrimaryCallbackURL":"` + callbackURL + `",
		"Description":"Monthly plan","ClientReference":"` + reference + `","CustomerName":"Ama","CustomerEmail":"ama@example.com"}`
}

func TestDirectDebitIsAcceptedThenPaid(t *testing.T) {
	callbacks := newCallbackReceiver(t)
	s := newTestServer(t, Config{ResolveAfter: 5 * time.Second})
	approvedMandate(t, s, "mand5", "233241230000")

	rec := serve(t, s, http.MethodPost, "/v1/payments/direct-debit", basicHeader, debitBody("233241230000", mtnDebit, "25.5", "dd1", callbacks))
	body := answer(t, rec, http.StatusOK)
	assert.Equal(t, sortedKeys("Message ResponseCode Data"), keys(t, rec.Body.Bytes()))
	assert.Equal(t, `"0001"`, string(body["ResponseCode"]))
	assert.Equal(t, sortedKeys("TransactionId Description ClientReference Amount Charges AmountAfterCharges AmountCharged DeliveryFee"), keys(t, body["Data"]))
	data := object(t, body["Data"])
	assert.Equal(t, "25.50", string(data["Amount"]))
	assert.Equal(t, "1.00", string(data["Charges"]))
	assert.Equal(t, "24.50", string(data["AmountAfterCharges"]))
	assert.Equal(t, "25.50", string(data["AmountCharged"]))
	assert.Equal(t, "0.00", string(data["DeliveryFee"]))
	assert.Equal(t, DefaultDisbursementBalance, s.DisbursementBalance(), "a collection does not touch the disbursement account")

	status := func() map[string]json.RawMessage {
		rec := serve(t, s, http.MethodGet, "/v1/payments/direct-debit/status/dd1", basicHeader, nil)
		body := answer(t, rec, http.StatusOK)
		assert.Equal(t, sortedKeys("message responseCode data"), keys(t, rec.Body.Bytes()))
		return body
	}
	pending := status()
	assert.Equal(t, `"0001"`, string(pending["responseCode"]))
	st := object(t, pending["data"])
	assert.Equal(t, `"Unpaid"`, string(st["status"]))
	assert.Equal(t, "25.50", string(st["amount"]), "major units")
	assert.Equal(t, "1.00", string(st["charges"]))
	assert.Equal(t, `"DIRECT_DEBIT"`, string(st["paymentMethod"]))

	s.Advance(5 * time.Second)
	paid := status()
	assert.Equal(t, `"0000"`, string(paid["responseCode"]))
	st = object(t, paid["data"])
	assert.Equal(t, `"Paid"`, string(st["status"]))
	assert.Equal(t, "true", string(st["isFulfilled"]))
	assert.Equal(t, "24.50", string(st["amountAfterCharges"]))

	got := deliveredTo(s, callbacks)
	require.Len(t, got, 1)
	cb := object(t, got[0])
	assert.Equal(t, `"0000"`, string(cb["ResponseCode"]))
	cbData := object(t, cb["Data"])
	assert.Equal(t, "25.50", string(cbData["Amount"]))
	assert.Equal(t, `"dd1"`, string(cbData["ClientReference"]))
	assert.Equal(t, string(data["TransactionId"]), string(cbData["TransactionId"]))
}

func TestDirectDebitTestNumbers(t *testing.T) {
	for _, tc := range []struct {
		msisdn, code, status string
		callbacks            int
		pendingAtLeast       time.Duration
	}{
		{"233241230001", "2001", "Unpaid", 1, 0},
		{"233241230002", "0000", "Paid", 0, 0},
		{"233241230004", "0000", "Paid", 1, 10 * time.Minute},
	} {
		t.Run(tc.msisdn, func(t *testing.T) {
			callbacks := newCallbackReceiver(t)
			s := newTestServer(t, Config{})
			approvedMandate(t, s, "m"+tc.msisdn, tc.msisdn)
			answer(t, serve(t, s, http.MethodPost, "/v1/payments/direct-debit", basicHeader, debitBody(tc.msisdn, mtnDebit, "10", "d"+tc.msisdn, callbacks)), 200)
			if tc.pendingAtLeast > 0 {
				s.Advance(tc.pendingAtLeast - time.Second)
				assert.Empty(t, deliveredTo(s, callbacks))
			}
			s.Advance(tc.pendingAtLeast)
			st := answer(t, serve(t, s, http.MethodGet, "/v1/payments/direct-debit/status/d"+tc.msisdn, basicHeader, nil), 200)
			assert.Equal(t, `"`+tc.code+`"`, string(st["responseCode"]))
			assert.Equal(t, `"`+tc.status+`"`, string(object(t, st["data"])["status"]))
			assert.Len(t, deliveredTo(s, callbacks), tc.callbacks)
		})
	}
	t.Run("declined at once", func(t *testing.T) {
		s := newTestServer(t, Config{})
		approvedMandate(t, s, "m3", "233241230003")
		requireRefusal(t, serve(t, s, http.MethodPost, "/v1/payments/direct-debit", basicHeader, debitBody("233241230003", mtnDebit, "10", "d3", "http://x.example/cb")),
			http.StatusBadRequest, "ResponseCode", CodeDeclined, "Message", "declined")
		assert.Empty(t, s.Movements("d3"))
	})
}

func TestDirectDebitRules(t *testing.T) {
	s := newTestServer(t, Config{})
	requireRefusal(t, serve(t, s, http.MethodPost, "/v1/payments/direct-debit", basicHeader, debitBody("233241230000", mtnDebit, "10", "early", "http://x.example/cb")),
		http.StatusBadRequest, "ResponseCode", CodePreapprovalFailed, "Message", "no approved mandate")
	createMandate(t, s, "pend1", "233241230000", mtnDebit, "http://x.example/cb")
	requireRefusal(t, serve(t, s, http.MethodPost, "/v1/payments/direct-debit", basicHeader, debitBody("233241230000", mtnDebit, "10", "early", "http://x.example/cb")),
		http.StatusBadRequest, "ResponseCode", CodePreapprovalFailed, "Message", "no approved mandate")
	assert.Empty(t, s.Movements("early"), "a charge before approval moves nothing")
	s.Advance(0)
	requireRefusal(t, serve(t, s, http.MethodPost, "/v1/payments/direct-debit", basicHeader, debitBody("233241230000", vodafoneDebit, "10", "early", "http://x.example/cb")),
		http.StatusBadRequest, "ResponseCode", CodePreapprovalFailed, "Message", "no approved mandate on vodafone-gh-direct-debit")

	for _, tc := range []struct{ name, body, field, message string }{
		{"three decimals", debitBody("233241230000", mtnDebit, "10.123", "r1", "http://x.example/cb"), "Amount", "at most two decimal places"},
		{"string amount", debitBody("233241230000", mtnDebit, `"10"`, "r1", "http://x.example/cb"), "Amount", "at most two decimal places"},
		{"channel", debitBody("233241230000", "mtn-gh", "10", "r1", "http://x.example/cb"), "Channel", "one of"},
		{"msisdn plus", debitBody("+233241230000", mtnDebit, "10", "r1", "http://x.example/cb"), "CustomerMsisdn", "without +"},
		{"reference long", debitBody("233241230000", mtnDebit, "10", "r123456789012345678901234567890123456", "http://x.example/cb"), "ClientReference", "1 to 36"},
		{"callback missing", `{"CustomerMsisdn":"233241230000","Channel":"` + mtnDebit + `","Amount":10,"Description":"d","ClientReference":"r1"}`, "PrimaryCallbackURL", "is required"},
		{"email", `{"CustomerMsisdn":"233241230000","Channel":"` + mtnDebit + `","Amount":10,"PrimaryCallbackUrl":"http://x.example/cb","Description":"d","ClientReference":"r1","CustomerEmail":"x"}`, "CustomerEmail", "email"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			requireError(t, serve(t, s, http.MethodPost, "/v1/payments/direct-debit", basicHeader, tc.body), http.StatusBadRequest, CodeValidation, tc.field, tc.message)
		})
	}
	requireRefusal(t, serve(t, s, http.MethodPost, "/v1/payments/direct-debit", basicHeader, debitBody("233241230000", mtnDebit, "1.00", "r1", "http://x.example/cb")),
		http.StatusBadRequest, "ResponseCode", CodeDeclined, "Message", "declined")
	assert.Empty(t, s.Movements("r1"))

	answer(t, serve(t, s, http.MethodPost, "/v1/payments/direct-debit", basicHeader, debitBody("233241230000", mtnDebit, "1.01", "r1", "http://x.example/cb")), 200)
	requireRefusal(t, serve(t, s, http.MethodPost, "/v1/payments/direct-debit", basicHeader, debitBody("233241230000", mtnDebit, "5", "r1", "http://x.example/cb")),
		http.StatusOK, "ResponseCode", CodeFailed, "Message", "duplicate")
	assert.Len(t, s.Movements("r1"), 1)
	requireError(t, serve(t, s, http.MethodGet, "/v1/payments/direct-debit/status/nope", basicHeader, nil), 404, CodeNotFound, "", "nope")

	noScope := newTestServer(t, Config{Scopes: []string{}})
	requireError(t, serve(t, noScope, http.MethodPost, "/v1/payments/direct-debit", basicHeader, debitBody("233241230000", mtnDebit, "5", "r9", "http://x.example/cb")),
		http.StatusForbidden, CodeKeysMismatch, "", ScopeMobileMoneyReceiveDirect)
	req := request(t, http.MethodPost, "/v1/payments/direct-debit", basicHeader, debitBody("233241230000", mtnDebit, "5", "r9", "http://x.example/cb"))
	req.RemoteAddr = "198.51.100.7:1234"
	requireError(t, serveRequest(s, req), http.StatusForbidden, CodeIPNotAllowed, "", "allowlist")
	assert.Empty(t, s.Movements("r9"))
}

func TestSMSControlRules(t *testing.T) {
	s := newTestServer(t, Config{})
	requireError(t, serve(t, s, http.MethodGet, "/sandbox/sms", basicHeader, nil), 400, CodeValidation, "msisdn", "international")
	requireError(t, serve(t, s, http.MethodGet, "/sandbox/sms?msisdn=233241230000", "", nil), 401, CodeKeysMismatch, "", "missing credentials")
	assert.Equal(t, "[]", string(answer(t, serve(t, s, http.MethodGet, "/sandbox/sms?msisdn=233241230000", basicHeader, nil), 200)["data"]))
	assert.Empty(t, s.SMS("233241230000"))
}

func TestMandateRefusedByTheCustomerFails(t *testing.T) {
	for _, channel := range []string{mtnDebit, vodafoneDebit} {
		t.Run(channel, func(t *testing.T) {
			callbacks := newCallbackReceiver(t)
			s := newTestServer(t, Config{})
			m := createMandate(t, s, "mrefused", "233241230009", channel, callbacks)
			if str(t, m["verificationType"]) == "OTP" {
				verifyOTP(t, s, "233241230009", str(t, m["servicePreApprovalId"]), "mrefused")
			}
			s.Advance(time.Second)

			assert.Equal(t, `"FAILED"`, string(mandateStatusData(t, s, "mrefused")["preapprovalStatus"]))
			got := deliveredTo(s, callbacks)
			require.Len(t, got, 1)
			assert.Equal(t, `"FAILED"`, string(object(t, got[0])["PreapprovalStatus"]))
			moved := s.Movements("mrefused")
			require.Len(t, moved, 1)
			assert.Equal(t, StateFailed, moved[0].State)
			assert.Equal(t, CodePreapprovalFailed, moved[0].ResponseCode)

			requireRefusal(t, serve(t, s, http.MethodPost, "/v1/payments/direct-debit", basicHeader,
				debitBody("233241230009", channel, "20.00", "ddrefused", callbacks)),
				http.StatusBadRequest, "ResponseCode", CodePreapprovalFailed, "Message", "no approved mandate")
			requireError(t, serve(t, s, http.MethodGet, "/v1/mandates/preapproval/233241230009/cancel", basicHeader, nil),
				http.StatusNotFound, CodeNotFound, "", "pending or approved mandate")
			// A failed mandate does not stand in the way of asking again.
			createMandate(t, s, "mretry", "233241230009", channel, callbacks)
		})
	}
}
