package sandbox

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// checkoutRecordKeys are the keys of a checkout payment record (SPEC
// "Checkout payment record").
var checkoutRecordKeys = sortedKeys(`id reference status environment method amount currency fee net description metadata
	failureCode failureMessage paidAt createdAt updatedAt customer refunds checkoutUrl mobileMoneyDetail cardDetail`)

// createCheckout creates a session and returns its record as raw JSON.
func createCheckout(tb testing.TB, s *Server, body string) map[string]json.RawMessage {
	tb.Helper()
	env := answer(tb, serve(tb, s, http.MethodPost, "/v1/payments", basicHeader, body), http.StatusCreated)
	assert.Equal(tb, "true", string(env["success"]))
	return object(tb, env["data"])
}

func TestCreateCheckoutAnswersAPendingRecord(t *testing.T) {
	s := newTestServer(t, Config{})
	p := createCheckout(t, s, `{"amount":5000,"currency":"usd","description":"Two tickets",
		"customer":{"name":"Ada","email":"ada@example.com","phone":"+233241234567"},"metadata":{"orderId":"o-1","clientReference":"order1"}}`)
	assert.Equal(t, checkoutRecordKeys, keys(t, mustJSON(t, p)))
	reference := str(t, p["reference"])
	assert.Regexp(t, `^pay_[0-9a-f]{24}$`, str(t, p["id"]))
	assert.Regexp(t, `^[0-9a-f]{24}$`, reference)
	assert.Equal(t, "http://example.com/checkout/"+reference, str(t, p["checkoutUrl"]), "the base URL of the request's host")
	assert.Equal(t, `"PENDING"`, string(p["status"]))
	assert.Equal(t, `"TEST"`, string(p["environment"]))
	assert.Equal(t, "5000", string(p["amount"]))
	assert.Equal(t, `"USD"`, string(p["currency"]))
	assert.Equal(t, "0", string(p["fee"]), "no fee until paid")
	assert.Equal(t, "0", string(p["net"]))
	assert.Equal(t, `"Two tickets"`, string(p["description"]))
	assert.JSONEq(t, `{"orderId":"o-1","clientReference":"order1"}`, string(p["metadata"]))
	assert.Equal(t, "[]", string(p["refunds"]))
	for _, name := range []string{"method", "failureCode", "failureMessage", "paidAt", "mobileMoneyDetail", "cardDetail"} {
		assert.Equal(t, "null", string(p[name]), name)
	}
	assert.Equal(t, `"2025-01-02T03:04:05.000Z"`, string(p["createdAt"]))

	customer := object(t, p["customer"])
	assert.Equal(t, sortedKeys("id name email phone"), keys(t, p["customer"]))
	assert.Equal(t, `"+233241234567"`, string(customer["phone"]))
	linked := serve(t, s, http.MethodGet, "/v1/customers/"+str(t, customer["id"]), basicHeader, nil)
	assert.Equal(t, "ada@example.com", decode[customerJSON](t, linked, http.StatusOK).Data.Email, "the payer became a customer")
	again := createCheckout(t, s, `{"amount":100,"customer":{"name":"Ada L","email":"ADA@example.com"}}`)
	assert.Equal(t, str(t, customer["id"]), str(t, object(t, again["customer"])["id"]), "linked by email, case-insensitively")

	minimal := createCheckout(t, s, `{"amount":1}`)
	assert.Equal(t, `"GHS"`, string(minimal["currency"]))
	assert.Equal(t, "null", string(minimal["customer"]))
	assert.Equal(t, "null", string(minimal["description"]))
	assert.Equal(t, "{}", string(minimal["metadata"]))

	assert.Len(t, s.Movements(reference), 1, "a session counts under its reference")
	assert.Len(t, s.Movements("order1"), 1, "and under metadata.clientReference")
}

func mustJSON(tb testing.TB, v any) []byte {
	tb.Helper()
	b, err := json.Marshal(v)
	require.NoError(tb, err)
	return b
}

func TestCreateCheckoutRules(t *testing.T) {
	s := newTestServer(t, Config{})
	long := strings.Repeat("é", 256)
	for _, tc := range []struct{ name, body, field, message string }{
		{"amount missing", `{}`, "amount", "amount is required"},
		{"amount decimal", `{"amount":10.5}`, "amount", "positive integer"},
		{"amount string", `{"amount":"5000"}`, "amount", "positive integer"},
		{"amount zero", `{"amount":0}`, "amount", "positive integer"},
		{"amount negative", `{"amount":-5}`, "amount", "positive integer"},
		{"amount too large", `{"amount":100000000000001}`, "amount", "at most"},
		{"currency", `{"amount":1,"currency":"cedi"}`, "currency", "ISO 4217"},
		{"description too long", `{"amount":1,"description":"` + long + `"}`, "description", "at most 255"},
		{"customer not an object", `{"amount":1,"customer":"ada"}`, "customer", "must be an object"},
		{"customer without email", `{"amount":1,"customer":{"name":"Ada"}}`, "customer.email", "customer.email is required"},
		{"customer without name", `{"amount":1,"customer":{"email":"a@example.com"}}`, "customer.name", "customer.name is required"},
		{"customer email shape", `{"amount":1,"customer":{"name":"A","email":"nope"}}`, "customer.email", "email address"},
		{"customer phone shape", `{"amount":1,"customer":{"name":"A","email":"a@example.com","phone":"024 123"}}`, "customer.phone", "international"},
		{"metadata nested", `{"amount":1,"metadata":{"a":{"b":1}}}`, "metadata", "flat"},
		{"not an object", `[1]`, "", "JSON object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			requireError(t, serve(t, s, http.MethodPost, "/v1/payments", basicHeader, tc.body), http.StatusBadRequest, CodeValidation, tc.field, tc.message)
		})
	}
	assert.Zero(t, s.payments.checkouts.len(), "nothing was created")
	assert.Zero(t, s.customers.table.len(), "no payer became a customer")
	ok := serve(t, s, http.MethodPost, "/v1/payments", basicHeader, `{"amount":1,"description":"`+strings.Repeat("é", 255)+`"}`)
	assert.Equal(t, http.StatusCreated, ok.Code, "255 characters are allowed: %s", ok.Body)
}

func TestMoneyEndpointsTakeBasicCredentialsOnly(t *testing.T) {
	s := newTestServer(t, Config{})
	for _, target := range []string{
		"POST /v1/payments", "GET /v1/payments/x", "POST /v1/payments/receive", "POST /v1/payments/send",
		"POST /v1/merchants/2020202/send/bank/gh/300302", "GET /v1/merchants/2020202/transactions/status",
		"POST /v1/mandates", "POST /v1/mandates/verifyotp", "GET /v1/mandates/preapproval/x/status",
		"GET /v1/mandates/preapproval/233/cancel", "POST /v1/mandates/preapproval/reactivate",
		"POST /v1/payments/direct-debit", "GET /v1/payments/direct-debit/status/x",
	} {
		method, path, _ := strings.Cut(target, " ")
		requireError(t, serve(t, s, method, path, secretHeader, `{}`), http.StatusUnauthorized, CodeKeysMismatch, "", "Basic client credentials")
	}
}

func TestCompleteCheckoutByMobileMoney(t *testing.T) {
	hooks := newCallbackReceiver(t)
	s := newTestServer(t, Config{WebhookURL: hooks})
	p := createCheckout(t, s, `{"amount":5000,"description":"Tickets","customer":{"name":"Ada","email":"ada@example.com","phone":"+233241234567"},"metadata":{"orderId":"o-1"}}`)
	reference := str(t, p["reference"])
	s.Advance(time.Minute)

	rec := serve(t, s, http.MethodPost, "/sandbox/payments/"+reference+"/complete", secretHeader, `{"method":"MOBILE_MONEY","outcome":"succeeded"}`)
	paid := object(t, answer(t, rec, http.StatusOK)["data"])
	assert.Equal(t, `"SUCCEEDED"`, string(paid["status"]))
	assert.Equal(t, `"MOBILE_MONEY"`, string(paid["method"]))
	assert.Equal(t, "98", string(paid["fee"]), "1.95% of 5000 is 97.5, rounded half up")
	assert.Equal(t, "4902", string(paid["net"]))
	assert.Equal(t, `"2025-01-02T03:05:05.000Z"`, string(paid["paidAt"]))
	assert.Equal(t, `"2025-01-02T03:05:05.000Z"`, string(paid["updatedAt"]))
	detail := object(t, paid["mobileMoneyDetail"])
	assert.Equal(t, sortedKeys("network phone externalRef"), keys(t, paid["mobileMoneyDetail"]))
	assert.Equal(t, `"233241234567"`, string(detail["phone"]))
	assert.Regexp(t, `^"[0-9]{11}"$`, string(detail["externalRef"]))
	assert.Equal(t, "null", string(paid["cardDetail"]))

	status := answer(t, serve(t, s, http.MethodGet, "/v1/payments/"+reference, basicHeader, nil), http.StatusOK)
	assert.Equal(t, sortedKeys("success data"), keys(t, mustJSON(t, status)))
	assert.JSONEq(t, string(mustJSON(t, paid)), string(status["data"]), "the status path answers the same record")

	s.Advance(0)
	hooksGot := deliveredTo(s, hooks)
	require.Len(t, hooksGot, 1)
	event := object(t, hooksGot[0])
	assert.Equal(t, sortedKeys("id event environment createdAt data"), keys(t, hooksGot[0]))
	assert.Regexp(t, `^"evt_[0-9a-f]{24}"$`, string(event["id"]))
	assert.Equal(t, `"payment.succeeded"`, string(event["event"]))
	assert.Equal(t, `"TEST"`, string(event["environment"]))
	assert.Equal(t, sortedKeys(`id reference status environment method amount currency fee net description metadata paidAt
		customer mobileMoneyDetail`), keys(t, event["data"]))
	data := object(t, event["data"])
	assert.Equal(t, `"SUCCEEDED"`, string(data["status"]))
	assert.Equal(t, "98", string(data["fee"]))
	assert.JSONEq(t, `{"orderId":"o-1"}`, string(data["metadata"]))

	movements := s.Movements(reference)
	require.Len(t, movements, 1)
	assert.Equal(t, StateSucceeded, movements[0].State)
	assert.Equal(t, int64(98), movements[0].Fee)

	requireError(t, serve(t, s, http.MethodPost, "/sandbox/payments/"+reference+"/complete", secretHeader, `{"method":"CARD","outcome":"succeeded"}`),
		http.StatusConflict, CodeConflict, "", "only a PENDING session")
}

func TestCompleteCheckoutByCardAndBankTransfer(t *testing.T) {
	s := newTestServer(t, Config{})
	card := str(t, createCheckout(t, s, `{"amount":1000}`)["reference"])
	require.NoError(t, s.CompleteCheckout(card, "CARD", "succeeded"))
	rec := answer(t, serve(t, s, http.MethodGet, "/v1/payments/"+card, basicHeader, nil), http.StatusOK)
	paid := object(t, rec["data"])
	assert.JSONEq(t, `{"brand":"VISA","last4":"4242"}`, string(paid["cardDetail"]))
	assert.Equal(t, "null", string(paid["mobileMoneyDetail"]))
	assert.Equal(t, "20", string(paid["fee"]), "1.95% of 1000 is 19.5, rounded half up")

	bank := str(t, createCheckout(t, s, `{"amount":1000}`)["reference"])
	require.NoError(t, s.CompleteCheckout(bank, "BANK_TRANSFER", "succeeded"))
	paid = object(t, answer(t, serve(t, s, http.MethodGet, "/v1/payments/"+bank, basicHeader, nil), http.StatusOK)["data"])
	assert.Equal(t, `"BANK_TRANSFER"`, string(paid["method"]))
	assert.Equal(t, "null", string(paid["cardDetail"]))
	assert.Equal(t, "null", string(paid["mobileMoneyDetail"]))
	s.Advance(0)
	assert.Empty(t, s.Deliveries(), "no webhook URL, no webhook")
}

func TestCompleteCheckoutFailure(t *testing.T) {
	hooks := newCallbackReceiver(t)
	s := newTestServer(t, Config{WebhookURL: hooks})
	for method, code := range map[string]string{"CARD": "card_declined", "MOBILE_MONEY": "mobile_money_failed", "BANK_TRANSFER": "bank_transfer_failed"} {
		reference := str(t, createCheckout(t, s, `{"amount":1000}`)["reference"])
		rec := serve(t, s, http.MethodPost, "/sandbox/payments/"+reference+"/complete", basicHeader, `{"method":"`+method+`","outcome":"failed"}`)
		failed := object(t, answer(t, rec, http.StatusOK)["data"])
		assert.Equal(t, `"FAILED"`, string(failed["status"]))
		assert.Equal(t, `"`+code+`"`, string(failed["failureCode"]))
		assert.NotEqual(t, "null", string(failed["failureMessage"]))
		assert.Equal(t, "null", string(failed["method"]), "null until paid")
		assert.Equal(t, "null", string(failed["paidAt"]))
		assert.Equal(t, "0", string(failed["fee"]))
		assert.Equal(t, StateFailed, s.Movements(reference)[0].State)
		assert.Error(t, s.CompleteCheckout(reference, "CARD", "succeeded"), "a failed session stays failed")
	}
	s.Advance(0)
	assert.Empty(t, deliveredTo(s, hooks), "no webhook for a failure")
}

func TestCompleteCheckoutRules(t *testing.T) {
	s := newTestServer(t, Config{})
	reference := str(t, createCheckout(t, s, `{"amount":1000}`)["reference"])
	path := "/sandbox/payments/" + reference + "/complete"
	requireError(t, serve(t, s, http.MethodPost, path, basicHeader, `{"method":"CASH","outcome":"succeeded"}`), 400, CodeValidation, "method", "one of CARD, MOBILE_MONEY, BANK_TRANSFER")
	requireError(t, serve(t, s, http.MethodPost, path, basicHeader, `{"method":"CARD","outcome":"ok"}`), 400, CodeValidation, "outcome", "one of succeeded, failed")
	requireError(t, serve(t, s, http.MethodPost, path, basicHeader, `{"method":"CARD"}`), 400, CodeValidation, "outcome", "outcome is required")
	requireError(t, serve(t, s, http.MethodPost, "/sandbox/payments/nope/complete", basicHeader, `{"method":"CARD","outcome":"failed"}`), 404, CodeNotFound, "", "nope")
	requireError(t, serve(t, s, http.MethodPost, path, "", `{"method":"CARD","outcome":"failed"}`), 401, CodeKeysMismatch, "", "missing credentials")
	assert.Error(t, s.CompleteCheckout(reference, "CASH", "succeeded"))
	assert.Error(t, s.CompleteCheckout(reference, "CARD", "maybe"))
	assert.Equal(t, StatePending, s.Movements(reference)[0].State, "nothing changed")
}

func TestCheckoutPageNamesTheAmountAndDescription(t *testing.T) {
	s := newTestServer(t, Config{})
	reference := str(t, createCheckout(t, s, `{"amount":5050,"description":"<b>Tickets</b> & more"}`)["reference"])
	rec := serve(t, s, http.MethodGet, "/checkout/"+reference, "", nil)
	require.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, "text/html; charset=utf-8", rec.Header().Get("Content-Type"))
	page := rec.Body.String()
	assert.Contains(t, page, "Pay GHS 50.50")
	assert.Contains(t, page, "&lt;b&gt;Tickets&lt;/b&gt; &amp; more", "the description is escaped")
	assert.Contains(t, page, "Status: PENDING")

	missing := serve(t, s, http.MethodGet, "/checkout/nope", "", nil)
	assert.Equal(t, http.StatusNotFound, missing.Code)
	assert.Contains(t, missing.Body.String(), "Checkout not found")
}

// receiveBody is a valid receive request with the phone and client reference given.
func receiveBody(phone, reference, callbackURL string) string {
	return `{"amount":5000,"currency":"ghs","phone":"` + phone + `","provider":"MTN","description":"Order 7",
		"callbackUrl":"` + callbackURL + `","metadata":{"clientReference":"` + reference + `","orderId":"7"}}`
}

func TestReceiveIsAcceptedThenPaid(t *testing.T) {
	callbacks := newCallbackReceiver(t)
	s := newTestServer(t, Config{ResolveAfter: 30 * time.Second})
	rec := serve(t, s, http.MethodPost, "/v1/payments/receive", basicHeader, receiveBody("+233241234567", "rcv1", callbacks))
	body := answer(t, rec, http.StatusOK)
	assert.Equal(t, sortedKeys("success message responseCode data"), keys(t, rec.Body.Bytes()))
	assert.Equal(t, "true", string(body["success"]))
	assert.Equal(t, `"0001"`, string(body["responseCode"]))
	assert.Equal(t, sortedKeys("id reference status amount currency phone provider description createdAt"), keys(t, body["data"]))
	data := object(t, body["data"])
	assert.Regexp(t, `^"pay_[0-9a-f]{24}"$`, string(data["id"]))
	assert.Equal(t, `"rcv1"`, string(data["reference"]))
	assert.Equal(t, `"PROCESSING"`, string(data["status"]))
	assert.Equal(t, "5000", string(data["amount"]))
	assert.Equal(t, `"GHS"`, string(data["currency"]))
	assert.Equal(t, `"233241234567"`, string(data["phone"]))
	assert.Equal(t, `"MTN"`, string(data["provider"]))

	pending := answer(t, serve(t, s, http.MethodGet, "/v1/payments/rcv1", basicHeader, nil), http.StatusOK)
	assert.Equal(t, sortedKeys("message responseCode data"), keys(t, mustJSON(t, pending)))
	assert.Equal(t, `"0001"`, string(pending["responseCode"]))
	assert.Equal(t, sortedKeys(`date status transactionId externalTransactionId paymentMethod clientReference currencyCode amount
		charges amountAfterCharges isFulfilled`), keys(t, pending["data"]))
	st := object(t, pending["data"])
	assert.Equal(t, `"Unpaid"`, string(st["status"]))
	assert.Equal(t, "null", string(st["isFulfilled"]))
	assert.Equal(t, "null", string(st["externalTransactionId"]))
	assert.Equal(t, "5000", string(st["amount"]), "minor units")
	assert.Equal(t, "50", string(st["charges"]), "1% of the amount")
	assert.Equal(t, "4950", string(st["amountAfterCharges"]))
	assert.Equal(t, `"2025-01-02T03:04:05.000Z"`, string(st["date"]))

	s.Advance(29 * time.Second)
	assert.Empty(t, s.Deliveries(), "pending until ResolveAfter")
	s.Advance(time.Second)
	paid := object(t, answer(t, serve(t, s, http.MethodGet, "/v1/payments/rcv1", basicHeader, nil), http.StatusOK)["data"])
	assert.Equal(t, `"Paid"`, string(paid["status"]))
	assert.Equal(t, "true", string(paid["isFulfilled"]))
	assert.Regexp(t, `^"[0-9]{11}"$`, string(paid["externalTransactionId"]))

	got := deliveredTo(s, callbacks)
	require.Len(t, got, 1)
	assert.Equal(t, sortedKeys("ResponseCode Message Data"), keys(t, got[0]))
	cb := object(t, got[0])
	assert.Equal(t, `"0000"`, string(cb["ResponseCode"]))
	assert.Equal(t, `"success"`, string(cb["Message"]))
	assert.Equal(t, sortedKeys(`Amount Charges AmountAfterCharges Description ClientReference TransactionId ExternalTransactionId
		AmountCharged OrderId PaymentDate`), keys(t, cb["Data"]))
	cbData := object(t, cb["Data"])
	assert.Equal(t, "50.00", string(cbData["Amount"]), "callbacks carry major units")
	assert.Equal(t, "0.50", string(cbData["Charges"]))
	assert.Equal(t, "49.50", string(cbData["AmountAfterCharges"]))
	assert.Equal(t, "50.00", string(cbData["AmountCharged"]))
	assert.Equal(t, `"rcv1"`, string(cbData["ClientReference"]))
	assert.Equal(t, string(paid["transactionId"]), string(cbData["TransactionId"]))
	assert.Equal(t, string(paid["externalTransactionId"]), string(cbData["ExternalTransactionId"]))
	assert.Equal(t, string(data["id"]), string(cbData["OrderId"]))
	assert.Equal(t, `"2025-01-02T03:04:35.000Z"`, string(cbData["PaymentDate"]))
	require.Len(t, s.Movements("rcv1"), 1)
	assert.Equal(t, StateSucceeded, s.Movements("rcv1")[0].State)
}

func TestReceiveTestNumbers(t *testing.T) {
	for _, tc := range []struct {
		phone          string
		code, status   string
		callbacks      int
		pendingAtLeast time.Duration
	}{
		{"233240000005", "0000", "Paid", 1, 0},
		{"233240000001", "2001", "Unpaid", 1, 0},
		{"233240000002", "0000", "Paid", 0, 0},
		{"233240000004", "0000", "Paid", 1, 10 * time.Minute},
	} {
		t.Run(tc.phone, func(t *testing.T) {
			callbacks := newCallbackReceiver(t)
			s := newTestServer(t, Config{})
			answer(t, serve(t, s, http.MethodPost, "/v1/payments/receive", basicHeader, receiveBody(tc.phone, "ref"+tc.phone, callbacks)), http.StatusOK)
			if tc.pendingAtLeast > 0 {
				s.Advance(tc.pendingAtLeast - time.Second)
				st := answer(t, serve(t, s, http.MethodGet, "/v1/payments/ref"+tc.phone, basicHeader, nil), http.StatusOK)
				assert.Equal(t, `"0001"`, string(st["responseCode"]), "still pending")
			}
			s.Advance(tc.pendingAtLeast)
			st := answer(t, serve(t, s, http.MethodGet, "/v1/payments/ref"+tc.phone, basicHeader, nil), http.StatusOK)
			assert.Equal(t, `"`+tc.code+`"`, string(st["responseCode"]))
			data := object(t, st["data"])
			assert.Equal(t, `"`+tc.status+`"`, string(data["status"]))
			got := deliveredTo(s, callbacks)
			require.Len(t, got, tc.callbacks)
			if tc.code == CodeFailed {
				assert.Equal(t, "null", string(data["isFulfilled"]))
				assert.Equal(t, "0", string(data["charges"]), "nothing charged")
				cb := object(t, got[0])
				assert.Equal(t, `"2001"`, string(cb["ResponseCode"]))
				assert.Equal(t, `"failed"`, string(cb["Message"]))
				cbData := object(t, cb["Data"])
				assert.Equal(t, "null", string(cbData["ExternalTransactionId"]))
				assert.Equal(t, "null", string(cbData["PaymentDate"]))
				assert.Equal(t, "0.00", string(cbData["AmountCharged"]))
			}
			assert.Len(t, s.Movements("ref"+tc.phone), 1)
		})
	}
}

func TestReceiveDeclinedAtOnce(t *testing.T) {
	s := newTestServer(t, Config{})
	rec := serve(t, s, http.MethodPost, "/v1/payments/receive", basicHeader, receiveBody("233240000003", "declined1", "http://127.0.0.1:1/cb"))
	requireRefusal(t, rec, http.StatusBadRequest, "responseCode", CodeDeclined, "message", "declined")
	assert.Equal(t, "false", string(answer(t, rec, 400)["success"]))
	assert.Empty(t, s.Movements("declined1"), "nothing moved")
	requireError(t, serve(t, s, http.MethodGet, "/v1/payments/declined1", basicHeader, nil), http.StatusNotFound, CodeNotFound, "", "declined1")
}

func TestReceiveDuplicateClientReferenceMovesNothing(t *testing.T) {
	s := newTestServer(t, Config{})
	answer(t, serve(t, s, http.MethodPost, "/v1/payments/receive", basicHeader, receiveBody("233241234567", "dup1", "http://127.0.0.1:1/cb")), http.StatusOK)
	rec := serve(t, s, http.MethodPost, "/v1/payments/receive", basicHeader, receiveBody("233241234567", "dup1", "http://127.0.0.1:1/cb"))
	requireRefusal(t, rec, http.StatusOK, "responseCode", CodeFailed, "message", "duplicate")
	assert.Equal(t, "false", string(answer(t, rec, http.StatusOK)["success"]))
	assert.Len(t, s.Movements("dup1"), 1)
}

func TestReceiveWithoutClientReferenceGetsOne(t *testing.T) {
	s := newTestServer(t, Config{})
	body := `{"amount":100,"phone":"233241234567","provider":"MPESA","description":"d"}`
	data := object(t, answer(t, serve(t, s, http.MethodPost, "/v1/payments/receive", basicHeader, body), http.StatusOK)["data"])
	reference := str(t, data["reference"])
	assert.Regexp(t, `^[0-9a-f]{24}$`, reference)
	assert.Equal(t, http.StatusOK, serve(t, s, http.MethodGet, "/v1/payments/"+reference, basicHeader, nil).Code)
}

func TestReceiveRules(t *testing.T) {
	s := newTestServer(t, Config{})
	valid := map[string]any{"amount": 100, "phone": "233241234567", "provider": "MTN", "description": "d",
		"metadata": map[string]any{"clientReference": "r1"}}
	for _, tc := range []struct {
		name    string
		change  map[string]any
		field   string
		message string
	}{
		{"amount missing", map[string]any{"amount": nil}, "amount", "amount is required"},
		{"amount decimal", map[string]any{"amount": 10.5}, "amount", "positive integer"},
		{"amount zero", map[string]any{"amount": 0}, "amount", "positive integer"},
		{"phone missing", map[string]any{"phone": nil}, "phone", "phone is required"},
		{"phone local", map[string]any{"phone": "0241234567x"}, "phone", "international"},
		{"provider missing", map[string]any{"provider": nil}, "provider", "provider is required"},
		{"provider unknown", map[string]any{"provider": "VODAFONE"}, "provider", "one of MTN, TELECEL, AIRTELTIGO, MPESA"},
		{"provider lower case", map[string]any{"provider": "mtn"}, "provider", "one of"},
		{"description missing", map[string]any{"description": ""}, "description", "description is required"},
		{"description too long", map[string]any{"description": strings.Repeat("x", 256)}, "description", "at most 255"},
		{"currency", map[string]any{"currency": "GH"}, "currency", "ISO 4217"},
		{"callback relative", map[string]any{"callbackUrl": "/cb"}, "callbackUrl", "absolute http or https URL"},
		{"reference too long", map[string]any{"metadata": map[string]any{"clientReference": strings.Repeat("a", 37)}}, "metadata.clientReference", "1 to 36 letters, digits, hyphens and underscores"},
		{"reference dot", map[string]any{"metadata": map[string]any{"clientReference": "a.1"}}, "metadata.clientReference", "letters, digits, hyphens and underscores"},
		{"reference number", map[string]any{"metadata": map[string]any{"clientReference": 12}}, "metadata.clientReference", "letters, digits, hyphens and underscores"},
		{"customer unknown", map[string]any{"customerId": "cust_nope"}, "customerId", "names no customer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := map[string]any{}
			for k, v := range valid {
				body[k] = v
			}
			for k, v := range tc.change {
				body[k] = v
			}
			requireError(t, serve(t, s, http.MethodPost, "/v1/payments/receive", basicHeader, body), http.StatusBadRequest, CodeValidation, tc.field, tc.message)
		})
	}
	assert.Empty(t, s.Movements("r1"), "nothing moved")
	assert.Empty(t, s.payments.receives)
}

func TestReceiveAccessChecks(t *testing.T) {
	body := receiveBody("233241234567", "acc1", "http://127.0.0.1:1/cb")
	noScope := newTestServer(t, Config{Scopes: []string{ScopeCustomersRead}})
	requireError(t, serve(t, noScope, http.MethodPost, "/v1/payments/receive", basicHeader, body), http.StatusForbidden, CodeKeysMismatch, "", ScopeMobileMoneyReceiveDirect)
	assert.Empty(t, noScope.Movements("acc1"))

	s := newTestServer(t, Config{})
	req := request(t, http.MethodPost, "/v1/payments/receive", basicHeader, body)
	req.RemoteAddr = "203.0.113.9:4000"
	rec := serveRequest(s, req)
	requireError(t, rec, http.StatusForbidden, CodeIPNotAllowed, "", "allowlist")
	assert.Empty(t, s.Movements("acc1"))

	req = request(t, http.MethodPost, "/v1/payments", basicHeader, `{"amount":1}`)
	req.RemoteAddr = "203.0.113.9:4000"
	assert.Equal(t, http.StatusCreated, serveRequest(s, req).Code, "checkout is not IP-restricted")
	req = request(t, http.MethodGet, "/v1/payments/acc1", basicHeader, nil)
	req.RemoteAddr = "203.0.113.9:4000"
	assert.Equal(t, http.StatusNotFound, serveRequest(s, req).Code, "nor is the status check")
}

func TestPaymentStatusOfAnUnknownReference(t *testing.T) {
	s := newTestServer(t, Config{})
	requireError(t, serve(t, s, http.MethodGet, "/v1/payments/nothing", basicHeader, nil), http.StatusNotFound, CodeNotFound, "", `payment "nothing" not found`)
}

func BenchmarkSandboxReceive(b *testing.B) {
	s := newTestServer(b, Config{})
	var n atomic.Int64
	benchmarkRequests(b, s, http.StatusOK, func() *http.Request {
		body := receiveBody("233241234567", "bench"+strconv.FormatInt(n.Add(1), 10), "http://127.0.0.1:1/cb")
		req := authorized(http.MethodPost, "/v1/payments/receive", strings.NewReader(body))
		req.RemoteAddr = "127.0.0.1:50000"
		return req
	})
}

func BenchmarkSandboxReceiveStatus(b *testing.B) {
	s := newTestServer(b, Config{})
	answer(b, serve(b, s, http.MethodPost, "/v1/payments/receive", basicHeader, receiveBody("233241234567", "bench1", "http://127.0.0.1:1/cb")), http.StatusOK)
	benchmarkRequests(b, s, http.StatusOK, func() *http.Request {
		return authorized(http.MethodGet, "/v1/payments/bench1", nil)
	})
}
