package sandbox

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sendBody is a valid send request.
func sendBody(phone, reference, callbackURL string, amount string) string {
	return `{"amount":` + amount + `,"phone":"` + phone + `","provider":"TELECEL","name":"Kofi","description":"Refund",
		"callbackUrl":"` + callbackURL + `","metadata":{"clientReference":"` + reference + `"}}`
}

const bankPath = "/v1/merchants/2020202/send/bank/gh/300302"

// bankBody is a valid send-to-bank request with the raw Amount text given.
func bankBody(amount, account, reference, callbackURL string) string {
	return `{"Amount":` + amount + `,"PrimaryCallbackUrl":"` + callbackURL + `","Description":"Supplier","BankAccountNumber":"` + account + `",
		"ClientReference":"` + reference + `","BankAccountName":"Ama Mensah","RecipientPhoneNumber":"233241234567","BankName":"GCB"}`
}

func TestSendIsAcceptedDebitedThenPaid(t *testing.T) {
	callbacks := newCallbackReceiver(t)
	s := newTestServer(t, Config{})
	rec := serve(t, s, http.MethodPost, "/v1/payments/send", basicHeader, sendBody("+233201234567", "snd1", callbacks, "5000"))
	body := answer(t, rec, http.StatusOK)
	assert.Equal(t, sortedKeys("success responseCode data"), keys(t, rec.Body.Bytes()))
	assert.Equal(t, `"0001"`, string(body["responseCode"]))
	assert.Equal(t, sortedKeys("id reference status amount fee currency phone name createdAt"), keys(t, body["data"]))
	data := object(t, body["data"])
	assert.Equal(t, `"PROCESSING"`, string(data["status"]))
	assert.Equal(t, `"snd1"`, string(data["reference"]))
	assert.Equal(t, "100", string(data["fee"]), "1% of 5000 is 50: the minimum of 100 applies")
	assert.Equal(t, `"Kofi"`, string(data["name"]))
	assert.Equal(t, DefaultDisbursementBalance-5100, s.DisbursementBalance(), "amount plus fee debited on acceptance")

	pending := serve(t, s, http.MethodGet, "/v1/payments/snd1", basicHeader, nil)
	st := answer(t, pending, http.StatusOK)
	assert.Equal(t, sortedKeys("ResponseCode data"), keys(t, pending.Body.Bytes()))
	assert.Equal(t, `"0001"`, string(st["ResponseCode"]))
	assert.Equal(t, sortedKeys(`TransactionId networkTransactionId Amount Fees ClientReference Channel CustomerNumber transactionStatus
		CreatedAt`), keys(t, st["data"]))
	stData := object(t, st["data"])
	assert.Equal(t, `"pending"`, string(stData["transactionStatus"]))
	assert.Equal(t, "null", string(stData["networkTransactionId"]))
	assert.Equal(t, "5000", string(stData["Amount"]), "minor units")
	assert.Equal(t, "100", string(stData["Fees"]))
	assert.Equal(t, `"vodafone-gh"`, string(stData["Channel"]))
	assert.Equal(t, `"233201234567"`, string(stData["CustomerNumber"]))
	assert.Equal(t, `"2025-01-02 03:04:05"`, string(stData["CreatedAt"]))

	s.Advance(0)
	done := object(t, answer(t, serve(t, s, http.MethodGet, "/v1/payments/snd1", basicHeader, nil), http.StatusOK)["data"])
	assert.Equal(t, `"success"`, string(done["transactionStatus"]))
	assert.Regexp(t, `^"[0-9]{11}"$`, string(done["networkTransactionId"]))

	got := deliveredTo(s, callbacks)
	require.Len(t, got, 1)
	assert.Equal(t, sortedKeys("ResponseCode Data"), keys(t, got[0]))
	cb := object(t, got[0])
	assert.Equal(t, `"0000"`, string(cb["ResponseCode"]))
	assert.Equal(t, sortedKeys(`AmountDebited TransactionId ExternalTransactionId Description ClientReference Amount Charges Meta
		RecipientName`), keys(t, cb["Data"]))
	cbData := object(t, cb["Data"])
	assert.Equal(t, "51.00", string(cbData["AmountDebited"]))
	assert.Equal(t, "50.00", string(cbData["Amount"]))
	assert.Equal(t, "1.00", string(cbData["Charges"]))
	assert.Equal(t, `"Kofi"`, string(cbData["RecipientName"]))
	assert.Equal(t, string(done["networkTransactionId"]), string(cbData["ExternalTransactionId"]))
	assert.Equal(t, DefaultDisbursementBalance-5100, s.DisbursementBalance())
}

func TestSendFeeIsOnePercentAboveTheMinimum(t *testing.T) {
	s := newTestServer(t, Config{})
	data := object(t, answer(t, serve(t, s, http.MethodPost, "/v1/payments/send", basicHeader, sendBody("233201234567", "fee1", "http://127.0.0.1:1/x", "123450")), 200)["data"])
	assert.Equal(t, "1235", string(data["fee"]), "1% of 123450 is 1234.5, rounded half up")
}

func TestSendTestNumbers(t *testing.T) {
	for _, tc := range []struct {
		phone, code, status string
		callbacks           int
		balanceAfter        int64
	}{
		{"233200000001", "2001", "failed", 1, DefaultDisbursementBalance},
		{"233200000002", "0000", "success", 0, DefaultDisbursementBalance - 10100},
		{"233200000004", "4075", "failed", 1, DefaultDisbursementBalance},
	} {
		t.Run(tc.phone, func(t *testing.T) {
			callbacks := newCallbackReceiver(t)
			s := newTestServer(t, Config{})
			answer(t, serve(t, s, http.MethodPost, "/v1/payments/send", basicHeader, sendBody(tc.phone, "s"+tc.phone, callbacks, "10000")), 200)
			assert.Equal(t, DefaultDisbursementBalance-10100, s.DisbursementBalance(), "debited on acceptance")
			s.Advance(0)
			st := answer(t, serve(t, s, http.MethodGet, "/v1/payments/s"+tc.phone, basicHeader, nil), http.StatusOK)
			assert.Equal(t, `"`+tc.code+`"`, string(st["ResponseCode"]))
			data := object(t, st["data"])
			assert.Equal(t, `"`+tc.status+`"`, string(data["transactionStatus"]))
			got := deliveredTo(s, callbacks)
			require.Len(t, got, tc.callbacks)
			if tc.callbacks > 0 && tc.code != CodeSuccess {
				cb := object(t, got[0])
				assert.Equal(t, `"`+tc.code+`"`, string(cb["ResponseCode"]))
				cbData := object(t, cb["Data"])
				assert.Equal(t, "null", string(cbData["ExternalTransactionId"]))
				assert.Equal(t, "null", string(cbData["RecipientName"]))
				assert.Equal(t, "0.00", string(cbData["AmountDebited"]))
			}
			assert.Equal(t, tc.balanceAfter, s.DisbursementBalance(), "a failed payout is credited back")
		})
	}
}

func TestSendNotRegisteredAtOnce(t *testing.T) {
	s := newTestServer(t, Config{})
	rec := serve(t, s, http.MethodPost, "/v1/payments/send", basicHeader, sendBody("233200000003", "nr1", "http://127.0.0.1:1/x", "5000"))
	requireRefusal(t, rec, http.StatusBadRequest, "responseCode", CodeNotRegistered, "message", "not registered")
	assert.Empty(t, s.Movements("nr1"))
	assert.Equal(t, DefaultDisbursementBalance, s.DisbursementBalance())
}

func TestSendAboveTheBalanceFailsByCallback(t *testing.T) {
	callbacks := newCallbackReceiver(t)
	s := newTestServer(t, Config{DisbursementBalance: 5_000})
	answer(t, serve(t, s, http.MethodPost, "/v1/payments/send", basicHeader, sendBody("233201234567", "big1", callbacks, "4901")), 200)
	assert.Equal(t, int64(5_000), s.DisbursementBalance(), "4901 plus the 100 fee is more than 5000: not debited")
	s.Advance(0)
	got := deliveredTo(s, callbacks)
	require.Len(t, got, 1)
	assert.Equal(t, `"4075"`, string(object(t, got[0])["ResponseCode"]))
	assert.Equal(t, int64(5_000), s.DisbursementBalance())
	assert.Equal(t, StateFailed, s.Movements("big1")[0].State)

	answer(t, serve(t, s, http.MethodPost, "/v1/payments/send", basicHeader, sendBody("233201234567", "fits1", callbacks, "4900")), 200)
	assert.Zero(t, s.DisbursementBalance(), "exactly the balance is allowed")
}

func TestSendRulesAndDuplicates(t *testing.T) {
	s := newTestServer(t, Config{})
	requireError(t, serve(t, s, http.MethodPost, "/v1/payments/send", basicHeader,
		strings.Replace(sendBody("233201234567", "r1", "http://x.example/cb", "100"), "TELECEL", "MPESA", 1)),
		http.StatusBadRequest, CodeValidation, "provider", "one of MTN, TELECEL, AIRTELTIGO")
	requireError(t, serve(t, s, http.MethodPost, "/v1/payments/send", basicHeader,
		strings.Replace(sendBody("233201234567", "r1", "http://x.example/cb", "100"), `"name":"Kofi",`, "", 1)),
		http.StatusBadRequest, CodeValidation, "name", "name is required")
	requireError(t, serve(t, s, http.MethodPost, "/v1/payments/send", basicHeader, sendBody("233201234567", "r1", "http://x.example/cb", "1.5")),
		http.StatusBadRequest, CodeValidation, "amount", "positive integer")
	assert.Empty(t, s.Movements("r1"))
	assert.Equal(t, DefaultDisbursementBalance, s.DisbursementBalance())

	answer(t, serve(t, s, http.MethodPost, "/v1/payments/send", basicHeader, sendBody("233201234567", "r1", "http://x.example/cb", "100")), 200)
	rec := serve(t, s, http.MethodPost, "/v1/payments/send", basicHeader, sendBody("233201234567", "r1", "http://x.example/cb", "100"))
	requireRefusal(t, rec, http.StatusOK, "responseCode", CodeFailed, "message", "duplicate")
	assert.Len(t, s.Movements("r1"), 1)
	assert.Equal(t, DefaultDisbursementBalance-200, s.DisbursementBalance(), "debited once")

	answer(t, serve(t, s, http.MethodPost, "/v1/payments/receive", basicHeader, receiveBody("233201234567", "r1", "http://x.example/cb")), 200)
	assert.Len(t, s.Movements("r1"), 2, "a receive may reuse a send's reference; both count")
	st := answer(t, serve(t, s, http.MethodGet, "/v1/payments/r1", basicHeader, nil), http.StatusOK)
	assert.Contains(t, st, "responseCode", "the receive comes first on the shared status path")

	req := request(t, http.MethodPost, "/v1/payments/send", basicHeader, sendBody("233201234567", "ip1", "http://x.example/cb", "100"))
	req.RemoteAddr = "[2001:db8::1]:5000"
	requireError(t, serveRequest(s, req), http.StatusForbidden, CodeIPNotAllowed, "", "allowlist")
	assert.Empty(t, s.Movements("ip1"))
}

func TestSendToBankIsAcceptedThenPaid(t *testing.T) {
	callbacks := newCallbackReceiver(t)
	s := newTestServer(t, Config{ResolveAfter: 2 * time.Minute})
	rec := serve(t, s, http.MethodPost, bankPath, basicHeader, bankBody("250.00", "1234567890", "bank1", callbacks))
	body := answer(t, rec, http.StatusOK)
	assert.Equal(t, sortedKeys("ResponseCode Data"), keys(t, rec.Body.Bytes()))
	assert.Equal(t, `"0001"`, string(body["ResponseCode"]))
	assert.Equal(t, sortedKeys(`AmountDebited TransactionId Description ClientReference ExternalTransactionId Amount Charges Meta
		RecipientName`), keys(t, body["Data"]))
	data := object(t, body["Data"])
	assert.Equal(t, "251.00", string(data["AmountDebited"]))
	assert.Equal(t, "250.00", string(data["Amount"]))
	assert.Equal(t, "1.00", string(data["Charges"]))
	assert.Equal(t, "null", string(data["ExternalTransactionId"]))
	assert.Equal(t, `"Ama Mensah"`, string(data["RecipientName"]))
	assert.Equal(t, DefaultDisbursementBalance-25_100, s.DisbursementBalance())

	status := func(query string) map[string]any {
		rec := serve(t, s, http.MethodGet, "/v1/merchants/2020202/transactions/status?"+query, basicHeader, nil)
		body := answer(t, rec, http.StatusOK)
		assert.Equal(t, sortedKeys("ResponseCode Data"), keys(t, rec.Body.Bytes()))
		assert.Equal(t, sortedKeys(`TransactionId networkTransactionId Amount fees ClientReference Channel CustomerNumber Description
			transactionStatus CreatedAt`), keys(t, body["Data"]))
		d := object(t, body["Data"])
		return map[string]any{"code": str(t, body["ResponseCode"]), "status": str(t, d["transactionStatus"]), "amount": string(d["Amount"]),
			"fees": string(d["fees"]), "channel": str(t, d["Channel"]), "number": str(t, d["CustomerNumber"]), "created": str(t, d["CreatedAt"]),
			"id": str(t, d["TransactionId"]), "network": string(d["networkTransactionId"])}
	}
	pending := status("clientReference=bank1")
	assert.Equal(t, map[string]any{"code": "0001", "status": "pending", "amount": "250.00", "fees": "1.00", "channel": "gip-gh",
		"number": "1234567890", "created": "2025-01-02 03:04:05", "id": str(t, data["TransactionId"]), "network": "null"}, pending)

	s.Advance(2 * time.Minute)
	done := status("serviceTransactionId=" + str(t, data["TransactionId"]))
	assert.Equal(t, "0000", done["code"])
	assert.Equal(t, "success", done["status"])
	network := strings.Trim(done["network"].(string), `"`)
	assert.Equal(t, done, status("networkTransactionId="+network))
	assert.Equal(t, done, status("clientReference=bank1&serviceTransactionId="+str(t, data["TransactionId"])))

	got := deliveredTo(s, callbacks)
	require.Len(t, got, 1)
	cb := object(t, got[0])
	assert.Equal(t, `"0000"`, string(cb["ResponseCode"]))
	cbData := object(t, cb["Data"])
	assert.Equal(t, "251.00", string(cbData["AmountDebited"]))
	assert.Equal(t, `"`+network+`"`, string(cbData["ExternalTransactionId"]))
	assert.Equal(t, `"Ama Mensah"`, string(cbData["RecipientName"]))
}

func TestSendToBankStatusRules(t *testing.T) {
	s := newTestServer(t, Config{})
	answer(t, serve(t, s, http.MethodPost, bankPath, basicHeader, bankBody("10.00", "1234567890", "bank1", "http://x.example/cb")), 200)
	requireError(t, serve(t, s, http.MethodGet, "/v1/merchants/2020202/transactions/status", basicHeader, nil), 400, CodeValidation, "clientReference", "is required")
	requireError(t, serve(t, s, http.MethodGet, "/v1/merchants/2020202/transactions/status?clientReference=nope", basicHeader, nil), 404, CodeNotFound, "", "nope")
	requireError(t, serve(t, s, http.MethodGet, "/v1/merchants/2020202/transactions/status?clientReference=bank1&serviceTransactionId=other", basicHeader, nil), 404, CodeNotFound, "", "bank1")
	requireError(t, serve(t, s, http.MethodGet, "/v1/merchants/999/transactions/status?clientReference=bank1", basicHeader, nil), 404, CodeNotFound, "", "disbursement account")
	requireError(t, serve(t, s, http.MethodGet, "/v1/payments/bank1", basicHeader, nil), 404, CodeNotFound, "", "bank1")
}

func TestSendToBankOutcomes(t *testing.T) {
	t.Run("name check fails", func(t *testing.T) {
		callbacks := newCallbackReceiver(t)
		s := newTestServer(t, Config{})
		answer(t, serve(t, s, http.MethodPost, bankPath, basicHeader, bankBody("10.00", "9900010001", "nc1", callbacks)), 200)
		s.Advance(0)
		got := deliveredTo(s, callbacks)
		require.Len(t, got, 1)
		cb := object(t, got[0])
		assert.Equal(t, `"2001"`, string(cb["ResponseCode"]))
		assert.Equal(t, "null", string(object(t, cb["Data"])["RecipientName"]))
		assert.Equal(t, DefaultDisbursementBalance, s.DisbursementBalance(), "credited back")
		st := answer(t, serve(t, s, http.MethodGet, "/v1/merchants/2020202/transactions/status?clientReference=nc1", basicHeader, nil), 200)
		assert.Equal(t, `"2001"`, string(st["ResponseCode"]))
		assert.Equal(t, `"failed"`, string(object(t, st["Data"])["transactionStatus"]))
	})
	t.Run("above the balance", func(t *testing.T) {
		callbacks := newCallbackReceiver(t)
		s := newTestServer(t, Config{})
		answer(t, serve(t, s, http.MethodPost, bankPath, basicHeader, bankBody("1000000.00", "1234567890", "big1", callbacks)), 200)
		assert.Equal(t, DefaultDisbursementBalance, s.DisbursementBalance(), "1,000,000.00 plus 1.00 is over the balance")
		s.Advance(0)
		got := deliveredTo(s, callbacks)
		require.Len(t, got, 1)
		cb := object(t, got[0])
		assert.Equal(t, `"4075"`, string(cb["ResponseCode"]))
		cbData := object(t, cb["Data"])
		assert.Equal(t, "null", string(cbData["ExternalTransactionId"]))
		assert.Equal(t, "null", string(cbData["RecipientName"]))
		assert.Equal(t, DefaultDisbursementBalance, s.DisbursementBalance())
		answer(t, serve(t, s, http.MethodPost, bankPath, basicHeader, bankBody("999999.00", "1234567890", "fits1", callbacks)), 200)
		assert.Zero(t, s.DisbursementBalance(), "999,999.00 plus 1.00 is exactly the balance")
	})
	t.Run("no account name and the other spelling", func(t *testing.T) {
		callbacks := newCallbackReceiver(t)
		s := newTestServer(t, Config{})
		body := `{"Amount":5.00,"PrimaryCallbackURL":"` + callbacks + `","Description":"d","BankAccountNumber":"123","ClientReference":"x1"}`
		data := object(t, answer(t, serve(t, s, http.MethodPost, bankPath, basicHeader, body), 200)["Data"])
		assert.Equal(t, "null", string(data["RecipientName"]))
		s.Advance(0)
		got := deliveredTo(s, callbacks)
		require.Len(t, got, 1, "PrimaryCallbackURL is read too")
		assert.Equal(t, `"SANDBOX ACCOUNT HOLDER"`, string(object(t, object(t, got[0])["Data"])["RecipientName"]))
	})
}

func TestSendToBankRules(t *testing.T) {
	s := newTestServer(t, Config{})
	valid := bankBody("10.00", "1234567890", "ok1", "http://x.example/cb")
	for _, tc := range []struct{ name, path, body, field, message string }{
		{"Amount one decimal", bankPath, bankBody("10.1", "1234567890", "r1", "http://x.example/cb"), "Amount", "exactly two decimal places"},
		{"Amount integer", bankPath, bankBody("10", "1234567890", "r1", "http://x.example/cb"), "Amount", "exactly two decimal places"},
		{"Amount three decimals", bankPath, bankBody("10.100", "1234567890", "r1", "http://x.example/cb"), "Amount", "exactly two decimal places"},
		{"Amount string", bankPath, bankBody(`"10.10"`, "1234567890", "r1", "http://x.example/cb"), "Amount", "exactly two decimal places"},
		{"Amount zero", bankPath, bankBody("0.00", "1234567890", "r1", "http://x.example/cb"), "Amount", "greater than zero"},
		{"Amount missing", bankPath, strings.Replace(valid, `"Amount":10.00,`, "", 1), "Amount", "Amount is required"},
		{"callback missing", bankPath, strings.Replace(valid, `"PrimaryCallbackUrl":"http://x.example/cb",`, "", 1), "PrimaryCallbackUrl", "PrimaryCallbackUrl is required"},
		{"callback relative", bankPath, bankBody("10.00", "1234567890", "r1", "cb"), "PrimaryCallbackUrl", "absolute"},
		{"account missing", bankPath, bankBody("10.00", "", "r1", "http://x.example/cb"), "BankAccountNumber", "is required"},
		{"reference missing", bankPath, bankBody("10.00", "1", "", "http://x.example/cb"), "ClientReference", "is required"},
		{"reference shape", bankPath, bankBody("10.00", "1", "a_b", "http://x.example/cb"), "ClientReference", "letters and digits"},
		{"recipient phone with plus", bankPath, strings.Replace(valid, `"233241234567"`, `"+233241234567"`, 1), "RecipientPhoneNumber", "without +"},
		{"bank code unknown", "/v1/merchants/2020202/send/bank/gh/300301", valid, "bankCode", "not an accepted bank code"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			requireError(t, serve(t, s, http.MethodPost, tc.path, basicHeader, tc.body), http.StatusBadRequest, CodeValidation, tc.field, tc.message)
		})
	}
	requireError(t, serve(t, s, http.MethodPost, "/v1/merchants/111/send/bank/gh/300302", basicHeader, valid), http.StatusNotFound, CodeNotFound, "", "disbursement account")
	assert.Empty(t, s.Movements("r1"))
	assert.Empty(t, s.Movements("ok1"))
	assert.Equal(t, DefaultDisbursementBalance, s.DisbursementBalance(), "nothing moved")

	answer(t, serve(t, s, http.MethodPost, bankPath, basicHeader, valid), 200)
	rec := serve(t, s, http.MethodPost, "/v1/merchants/2020202/send/bank/gh/300362", basicHeader, valid)
	requireRefusal(t, rec, http.StatusOK, "ResponseCode", CodeFailed, "Message", "duplicate")
	assert.Len(t, s.Movements("ok1"), 1)
	assert.Equal(t, DefaultDisbursementBalance-1_100, s.DisbursementBalance(), "debited once")
}
