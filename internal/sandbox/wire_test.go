package sandbox

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// providerFixtures holds the provider's documented payloads (README there).
const providerFixtures = "testdata/provider"

// newProviderServer returns a sandbox answering on the provider's wire.
func newProviderServer(tb testing.TB, cfg Config) *Server {
	tb.Helper()
	cfg.Wire = WireProvider
	return newTestServer(tb, cfg)
}

// decodeAny decodes JSON keeping numbers as their text.
func decodeAny(tb testing.TB, raw []byte) any {
	tb.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	require.NoError(tb, dec.Decode(&v), "body: %s", raw)
	return v
}

// jsonType names the JSON type of a value decoded by decodeAny.
func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	default:
		return "object"
	}
}

// shapeDiff lists where got differs from want in its keys (recursively, with
// their exact casing) or in the JSON type of a value, one line per difference.
func shapeDiff(want, got any, path string) []string {
	if jsonType(want) != jsonType(got) {
		return []string{fmt.Sprintf("%s: %s in the fixture, %s in the sandbox", path, jsonType(want), jsonType(got))}
	}
	var diffs []string
	switch w := want.(type) {
	case map[string]any:
		g := got.(map[string]any)
		for key, value := range w {
			if other, ok := g[key]; ok {
				diffs = append(diffs, shapeDiff(value, other, path+"."+key)...)
			} else {
				diffs = append(diffs, fmt.Sprintf("%s.%s: missing from the sandbox", path, key))
			}
		}
		for key := range g {
			if _, ok := w[key]; !ok {
				diffs = append(diffs, fmt.Sprintf("%s.%s: not in the fixture", path, key))
			}
		}
	case []any:
		g := got.([]any)
		for i := range min(len(w), len(g)) {
			diffs = append(diffs, shapeDiff(w[i], g[i], fmt.Sprintf("%s[%d]", path, i))...)
		}
	}
	sort.Strings(diffs)
	return diffs
}

// requireShapeOf checks that got has the keys and value types of the fixture.
func requireShapeOf(tb testing.TB, fixture string, got []byte) {
	tb.Helper()
	want, err := os.ReadFile(filepath.Join(providerFixtures, fixture))
	require.NoError(tb, err)
	diffs := shapeDiff(decodeAny(tb, want), decodeAny(tb, got), "$")
	require.Empty(tb, diffs, "the sandbox's answer differs in shape from %s:\n%s\nsandbox: %s", fixture, strings.Join(diffs, "\n"), got)
}

func TestShapeDiffFindsEveryDifference(t *testing.T) {
	want := decodeAny(t, []byte(`{"A":1,"b":{"C":"x","d":null},"e":[{"f":true}]}`))
	assert.Empty(t, shapeDiff(want, decodeAny(t, []byte(`{"A":2.5,"b":{"C":"y","d":null},"e":[{"f":false}]}`)), "$"))
	got := decodeAny(t, []byte(`{"a":1,"b":{"C":3,"d":"x"},"e":[{"f":"no"}],"g":0}`))
	assert.Equal(t, []string{
		"$.A: missing from the sandbox",
		"$.a: not in the fixture",
		"$.b.C: string in the fixture, number in the sandbox",
		"$.b.d: null in the fixture, string in the sandbox",
		"$.e[0].f: boolean in the fixture, string in the sandbox",
		"$.g: not in the fixture",
	}, shapeDiff(want, got, "$"))
}

// providerFlow drives a provider-wire sandbox through the money flows and
// returns each answer, callback and webhook by the name of the fixture
// showing its situation.
func providerFlow(t *testing.T) map[string][]byte {
	t.Helper()
	got := map[string][]byte{}
	body := func(rec interface{ Result() *http.Response }, name string) {
		res := rec.Result()
		require.Equal(t, http.StatusOK, res.StatusCode, name)
		var buf bytes.Buffer
		_, _ = buf.ReadFrom(res.Body)
		got[name] = buf.Bytes()
	}
	callback := func(s *Server, url, name string) {
		bodies := deliveredTo(s, url)
		require.Len(t, bodies, 1, name)
		got[name] = bodies[0]
	}
	callbacks := newCallbackReceiver(t)
	settle := func(s *Server) { s.Advance(time.Second) }

	// Direct receive: paid from a Telecel (Vodafone Cash) wallet, as the fixture's
	// outcome message says, and failed (wrong PIN).
	s := newProviderServer(t, Config{})
	telecel := strings.Replace(receiveBody("233201234567", "rcvok", callbacks+"/rcvok"), `"provider":"MTN"`, `"provider":"TELECEL"`, 1)
	body(serve(t, s, http.MethodPost, "/v1/payments/receive", basicHeader, telecel), "receive_initiate_response_doc.json")
	serve(t, s, http.MethodPost, "/v1/payments/receive", basicHeader, receiveBody("233241230001", "rcvko", callbacks+"/rcvko"))
	settle(s)
	callback(s, callbacks+"/rcvok", "receive_callback_success_doc.json")
	callback(s, callbacks+"/rcvko", "receive_callback_failed_doc.json")
	body(serve(t, s, http.MethodGet, "/v1/payments/rcvok", basicHeader, nil), "receive_status_paid_doc.json")
	body(serve(t, s, http.MethodGet, "/v1/payments/rcvko", basicHeader, nil), "receive_status_unpaid_doc.json")

	// Direct send: paid, and failed for the disbursement balance (0004).
	body(serve(t, s, http.MethodPost, "/v1/payments/send", basicHeader, sendBody("233201234567", "sndok", callbacks+"/sndok", "80")), "send_initiate_response.json")
	serve(t, s, http.MethodPost, "/v1/payments/send", basicHeader, sendBody("233201230004", "sndko", callbacks+"/sndko", "80"))
	settle(s)
	callback(s, callbacks+"/sndok", "send_callback_success.json")
	callback(s, callbacks+"/sndko", "send_callback_failed_4075.json")
	body(serve(t, s, http.MethodGet, "/v1/payments/sndok", basicHeader, nil), "send_status_success.json")

	// Send-to-bank: paid, and failed for the disbursement balance.
	bank := func(amount, reference string) string {
		return `{"Amount":` + amount + `,"PrimaryCallbackUrl":"` + callbacks + "/" + reference + `","Description":"Supplier",
			"BankAccountNumber":"1234567890","ClientReference":"` + reference + `"}`
	}
	poor := newProviderServer(t, Config{DisbursementBalance: 1_000})
	body(serve(t, poor, http.MethodPost, bankPath, basicHeader, bank("5.00", "bankok")), "bank_initiate_response.json")
	serve(t, poor, http.MethodPost, bankPath, basicHeader, bank("10.00", "bankko"))
	settle(poor)
	callback(poor, callbacks+"/bankok", "bank_callback_success.json")
	callback(poor, callbacks+"/bankko", "bank_callback_failed_4075.json")
	body(serve(t, poor, http.MethodGet, "/v1/merchants/2020202/transactions/status?clientReference=bankok", basicHeader, nil), "bank_status_success.json")
	body(serve(t, poor, http.MethodGet, "/v1/merchants/2020202/transactions/status?clientReference=bankko", basicHeader, nil), "bank_status_failed.json")

	// Mandates: by USSD (approved, and refused by 0009), by OTP, then
	// cancelled and reactivated.
	body(serve(t, s, http.MethodPost, "/v1/mandates", basicHeader, mandateBody("mussd", "233241234567", mtnDebit, callbacks+"/mussd")), "preapproval_initiate_ussd.json")
	serve(t, s, http.MethodPost, "/v1/mandates", basicHeader, mandateBody("mfail", "233241230009", mtnDebit, callbacks+"/mfail"))
	rec := serve(t, s, http.MethodPost, "/v1/mandates", basicHeader, mandateBody("motp", "233201234567", vodafoneDebit, callbacks+"/motp"))
	body(rec, "preapproval_initiate_otp.json")
	id := str(t, object(t, object(t, got["preapproval_initiate_otp.json"])["data"])["hubtelPreApprovalId"])
	body(serve(t, s, http.MethodPost, "/v1/mandates/verifyotp", basicHeader,
		`{"customerMsisdn":"233201234567","servicePreApprovalId":"`+id+`","clientReferenceId":"motp","otpCode":"`+s.SMS("233201234567")[0]+`"}`),
		"preapproval_verifyotp.json")
	settle(s)
	// Direct debit under the approved OTP (Vodafone) mandate: paid.
	body(serve(t, s, http.MethodPost, "/v1/payments/direct-debit", basicHeader, debitBody("233201234567", vodafoneDebit, "20.00", "ddok", callbacks+"/ddok")),
		"directdebit_charge_response.json")
	settle(s)
	callback(s, callbacks+"/mussd", "preapproval_callback_approved.json")
	callback(s, callbacks+"/mfail", "preapproval_callback_failed.json")
	body(serve(t, s, http.MethodGet, "/v1/mandates/preapproval/mussd/status", basicHeader, nil), "preapproval_status.json")
	body(serve(t, s, http.MethodGet, "/v1/mandates/preapproval/233201234567/cancel", basicHeader, nil), "preapproval_cancel.json")
	body(serve(t, s, http.MethodPost, "/v1/mandates/preapproval/reactivate", basicHeader,
		`{"customerMsisdn":"233201234567","callbackUrl":"`+callbacks+`/motp2"}`), "preapproval_reactivate.json")

	// Direct debit failed (0001) under an approved USSD mandate.
	serve(t, s, http.MethodPost, "/v1/mandates", basicHeader, mandateBody("mfailing", "233241230001", mtnDebit, callbacks+"/mfailing"))
	settle(s)
	serve(t, s, http.MethodPost, "/v1/payments/direct-debit", basicHeader, debitBody("233241230001", mtnDebit, "20.00", "ddko", callbacks+"/ddko"))
	settle(s)
	callback(s, callbacks+"/ddok", "directdebit_callback_success.json")
	callback(s, callbacks+"/ddko", "directdebit_callback_failed.json")
	body(serve(t, s, http.MethodGet, "/v1/payments/direct-debit/status/ddok", basicHeader, nil), "directdebit_status_paid.json")

	// The checkout webhook of a session paid by mobile money.
	hooked := newProviderServer(t, Config{WebhookURL: callbacks + "/hook"})
	created := answer(t, serve(t, hooked, http.MethodPost, "/v1/payments", basicHeader,
		`{"amount":50,"description":"Order 7","metadata":{"clientReference":"Kaks545253"}}`), http.StatusCreated)
	require.NoError(t, hooked.CompleteCheckout(str(t, object(t, created["data"])["reference"]), "MOBILE_MONEY", "succeeded"))
	settle(hooked)
	callback(hooked, callbacks+"/hook", "checkout_webhook.json")
	return got
}

func TestProviderWireAnswersInTheProvidersShapes(t *testing.T) {
	got := providerFlow(t)
	fixtures, err := filepath.Glob(filepath.Join(providerFixtures, "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, fixtures)
	for _, path := range fixtures {
		name := filepath.Base(path)
		t.Run(strings.TrimSuffix(name, ".json"), func(t *testing.T) {
			answer, ok := got[name]
			require.True(t, ok, "no situation of the sandbox is compared with %s", name)
			requireShapeOf(t, name, answer)
		})
	}
	assert.Len(t, got, len(fixtures), "every situation has its fixture")
}

// Every callback and webhook of the provider's wire describes its outcome in
// Data.Description as the provider's sample of the same situation does, word for
// word: the wallet's payment approved, FAILED, the payout made, insufficient
// prepaid balance, never the merchant's own description of the request.
func TestProviderCallbacksDescribeTheOutcomeAsTheProviderDoes(t *testing.T) {
	got := providerFlow(t)
	fixtures, err := filepath.Glob(filepath.Join(providerFixtures, "*.json"))
	require.NoError(t, err)
	compared := 0
	for _, path := range fixtures {
		name := filepath.Base(path)
		if !strings.Contains(name, "_callback_") && !strings.Contains(name, "_webhook") {
			continue // an answer: its Description is the merchant's, as the provider's samples show
		}
		raw, err := os.ReadFile(path)
		require.NoError(t, err)
		want := object(t, raw)
		if _, ok := want["Data"]; !ok {
			continue // the mandate callback has no Data and no Description
		}
		wantDescription, ok := object(t, want["Data"])["Description"]
		require.True(t, ok, "%s has a Description", name)
		require.Contains(t, got, name)
		assert.Equal(t, string(wantDescription), string(dataOf(t, got[name], "Data")["Description"]), name)
		compared++
	}
	assert.Equal(t, 9, compared, "receive, debit, send and bank callbacks, each paid and failed, and the checkout webhook")
}

// minorUnitsOf reads a JSON number of major units exactly as minor units,
// refusing a fraction finer than a minor unit.
func minorUnitsOf(tb testing.TB, raw json.RawMessage) int64 {
	tb.Helper()
	text := string(raw)
	whole, fraction, _ := strings.Cut(text, ".")
	require.LessOrEqual(tb, len(strings.TrimRight(fraction, "0")), 2, "%s has a fraction finer than a minor unit", text)
	major, err := strconv.ParseInt(whole, 10, 64)
	require.NoError(tb, err, "amount %s", text)
	minor, err := strconv.ParseInt((fraction + "00")[:2], 10, 64)
	require.NoError(tb, err, "amount %s", text)
	return major*100 + minor
}

// dataOf returns the object under key of a raw JSON object.
func dataOf(tb testing.TB, raw []byte, key string) map[string]json.RawMessage {
	tb.Helper()
	return object(tb, object(tb, raw)[key])
}

func TestProviderWireAmountsAreCedisOfTheMinorUnits(t *testing.T) {
	got := providerFlow(t)
	amounts := func(name, key string, want map[string]int64) {
		t.Helper()
		data := dataOf(t, got[name], key)
		for field, minor := range want {
			assert.Equal(t, minor, minorUnitsOf(t, data[field]), "%s %s: %s", name, field, data[field])
		}
	}
	// A receive of 5000 minor units pays a 1% fee.
	amounts("receive_initiate_response_doc.json", "Data", map[string]int64{"Amount": 5000, "Charges": 50, "AmountAfterCharges": 4950, "AmountCharged": 5000, "DeliveryFee": 0})
	amounts("receive_callback_success_doc.json", "Data", map[string]int64{"Amount": 5000, "Charges": 50, "AmountAfterCharges": 4950, "AmountCharged": 5000})
	amounts("receive_status_paid_doc.json", "data", map[string]int64{"amount": 5000, "charges": 50, "amountAfterCharges": 4950})
	// A send of 80 minor units pays the 100 minimum fee.
	amounts("send_initiate_response.json", "Data", map[string]int64{"Amount": 80, "Charges": 100, "AmountDebited": 180})
	amounts("send_callback_success.json", "Data", map[string]int64{"Amount": 80, "Charges": 100, "AmountDebited": 180})
	amounts("send_status_success.json", "Data", map[string]int64{"Amount": 80, "Fees": 100})
	amounts("bank_initiate_response.json", "Data", map[string]int64{"Amount": 500, "Charges": 100, "AmountDebited": 600})
	amounts("bank_status_success.json", "Data", map[string]int64{"Amount": 500, "Fees": 100})
	amounts("bank_status_failed.json", "Data", map[string]int64{"Amount": 1000, "fees": 100})
	amounts("directdebit_charge_response.json", "Data", map[string]int64{"Amount": 2000, "Charges": 100, "AmountAfterCharges": 1900})
	amounts("directdebit_status_paid.json", "data", map[string]int64{"amount": 2000, "charges": 100, "amountAfterCharges": 1900})
	amounts("checkout_webhook.json", "Data", map[string]int64{"Amount": 50})

	// The numbers are written as the provider writes them, never with a float's noise.
	assert.Equal(t, "0.8", string(dataOf(t, got["send_initiate_response.json"], "Data")["Amount"]))
	assert.Equal(t, "1.000", string(dataOf(t, got["send_callback_success.json"], "Data")["Charges"]))
	assert.Equal(t, "50", string(dataOf(t, got["receive_initiate_response_doc.json"], "Data")["Amount"]))
	assert.Equal(t, "0.5", string(dataOf(t, got["receive_initiate_response_doc.json"], "Data")["Charges"]))
	assert.Equal(t, "0.5", string(dataOf(t, got["checkout_webhook.json"], "Data")["Amount"]))
}

func TestCedisWriteMinorUnitsExactly(t *testing.T) {
	for minor, want := range map[int64]string{0: "0", 1: "0.01", 5: "0.05", 10: "0.1", 80: "0.8", 85: "0.85", 100: "1", 1000: "10",
		1010: "10.1", 123456789: "1234567.89", maxAmount: "1000000000000"} {
		assert.Equal(t, number(want), cedis(minor), "%d", minor)
		assert.Equal(t, minor, minorUnitsOf(t, json.RawMessage(cedis(minor))))
	}
	assert.Equal(t, number("0.010"), cedisMilli(1))
	assert.Equal(t, number("10.100"), cedisMilli(1010))
	_, err := json.Marshal(struct{ A number }{})
	assert.Error(t, err, "an amount left unwritten is an error, not an empty value")
}

func TestProviderWireWritesTheProvidersWords(t *testing.T) {
	got := providerFlow(t)
	data := func(name, key string) map[string]json.RawMessage { return dataOf(t, got[name], key) }

	// The send and send-to-bank status checks say "success" when they found
	// the payout; its state is in transactionStatus, failed ones too.
	for name, status := range map[string]string{"send_status_success.json": "success", "bank_status_success.json": "success", "bank_status_failed.json": "failed"} {
		assert.Equal(t, `"success"`, string(object(t, got[name])["ResponseCode"]), name)
		assert.Equal(t, `"`+status+`"`, string(data(name, "Data")["transactionStatus"]), name)
		assert.Regexp(t, `^"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d"$`, string(data(name, "Data")["CreatedAt"]), name)
	}
	// Callbacks and the collection status date their answers with 7 fractional digits.
	for name, date := range map[string]string{
		"receive_callback_success_doc.json": "PaymentDate", "receive_callback_failed_doc.json": "PaymentDate",
		"directdebit_callback_success.json": "PaymentDate", "receive_status_paid_doc.json": "date",
		"preapproval_status.json": "createdAt",
	} {
		key := "Data"
		if strings.Contains(name, "status") {
			key = "data"
		}
		assert.Regexp(t, `^"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{7}Z"$`, string(data(name, key)[date]), name)
	}
	for _, name := range []string{"preapproval_callback_approved.json", "preapproval_callback_failed.json"} {
		assert.Regexp(t, `^"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{7}Z"$`, string(object(t, got[name])["CreatedAt"]), name)
	}
	assert.Equal(t, `"APPROVED"`, string(object(t, got["preapproval_callback_approved.json"])["PreapprovalStatus"]))
	assert.Equal(t, `"FAILED"`, string(object(t, got["preapproval_callback_failed.json"])["PreapprovalStatus"]))
	assert.Equal(t, "true", string(object(t, got["preapproval_cancel.json"])["data"]))
	assert.Equal(t, `"2000"`, string(object(t, got["preapproval_status.json"])["code"]))
	assert.Equal(t, "null", string(data("preapproval_initiate_ussd.json", "data")["otpPrefix"]))
	assert.Regexp(t, `^"[A-Z]{4}"$`, string(data("preapproval_reactivate.json", "data")["otpPrefix"]))

	// The state is the sandbox's own on both wires: codes keep their meaning.
	assert.Equal(t, `"0000"`, string(object(t, got["receive_status_paid_doc.json"])["responseCode"]))
	assert.Equal(t, `"Paid"`, string(data("receive_status_paid_doc.json", "data")["status"]))
	// A receive not paid answers 0000 with Unpaid, as the provider's documents
	// show: never a failure code a merchant could take for the outcome.
	assert.Equal(t, `"0000"`, string(object(t, got["receive_status_unpaid_doc.json"])["responseCode"]))
	assert.Equal(t, `"Unpaid"`, string(data("receive_status_unpaid_doc.json", "data")["status"]))
	assert.Equal(t, `"4075"`, string(object(t, got["send_callback_failed_4075.json"])["ResponseCode"]))
	assert.Equal(t, `"2001"`, string(object(t, got["directdebit_callback_failed.json"])["ResponseCode"]))

	hook := object(t, got["checkout_webhook.json"])
	assert.Equal(t, `"0000"`, string(hook["ResponseCode"]))
	assert.Equal(t, `"Success"`, string(hook["Status"]))
	assert.Equal(t, `"Kaks545253"`, string(data("checkout_webhook.json", "Data")["ClientReference"]))
}

// Every money flow settles the same money on both wires: the wire changes the
// form of the answers, never the ledger.
func TestBothWiresMoveTheSameMoney(t *testing.T) {
	callbacks := newCallbackReceiver(t)
	balances := map[Wire]int64{}
	for _, wire := range []Wire{WireSpec, WireProvider} {
		s := newTestServer(t, Config{Wire: wire})
		serve(t, s, http.MethodPost, "/v1/payments/send", basicHeader, sendBody("233201234567", "snd", callbacks, "5000"))
		serve(t, s, http.MethodPost, "/v1/payments/send", basicHeader, sendBody("233201230004", "sndko", callbacks, "5000"))
		serve(t, s, http.MethodPost, bankPath, basicHeader, bankBody("10.00", "1234567890", "bank", callbacks))
		s.Advance(time.Second)
		balances[wire] = s.DisbursementBalance()
		for _, ref := range []string{"snd", "sndko", "bank"} {
			require.Len(t, s.Movements(ref), 1, "%s %s", wire, ref)
		}
		assert.Equal(t, StateFailed, s.Movements("sndko")[0].State, wire)
	}
	assert.Equal(t, balances[WireSpec], balances[WireProvider])
	assert.Equal(t, DefaultDisbursementBalance-5000-100-1000-100, balances[WireProvider])
}

func TestRefusalsAndErrorsKeepTheSpecsShapeOnTheProviderWire(t *testing.T) {
	s := newProviderServer(t, Config{})
	requireRefusal(t, serve(t, s, http.MethodPost, "/v1/payments/receive", basicHeader, receiveBody("233241230003", "declined", "http://127.0.0.1:1/cb")),
		http.StatusBadRequest, "responseCode", CodeDeclined, "message", "declined")
	requireError(t, serve(t, s, http.MethodGet, "/v1/payments/nothing", basicHeader, nil), http.StatusNotFound, CodeNotFound, "", "nothing")
	// Billing resources answer as the spec does.
	rec := serve(t, s, http.MethodPost, "/v1/customers", secretHeader, `{"name":"Ama","email":"ama@example.com"}`)
	answer(t, rec, http.StatusCreated)
	assert.Equal(t, sortedKeys("success data"), keys(t, rec.Body.Bytes()))
}

func TestWireIsChosenByName(t *testing.T) {
	for name, want := range map[string]Wire{"": WireSpec, "spec": WireSpec, "provider": WireProvider} {
		got, err := ParseWire(name)
		require.NoError(t, err, name)
		assert.Equal(t, want, got)
	}
	_, err := ParseWire("Provider")
	require.ErrorContains(t, err, `unknown wire "Provider": use spec or provider`)
	assert.Equal(t, WireSpec, newTestServer(t, Config{}).Config().Wire, "the spec's wire is the default")
	assert.PanicsWithValue(t, `sandbox: unknown wire "hubbub": use spec or provider`, func() { newTestServer(t, Config{Wire: "hubbub"}) })
	assert.Equal(t, []string{"spec", "provider"}, WireNames())
	for _, name := range WireNames() {
		assert.Contains(t, wires, Wire(name))
	}
	assert.True(t, slices.Equal(WireNames()[:1], []string{string(WireSpec)}), "the default first")
}

// The payout status checks answer "success" for every payout they find, on
// the provider's wire: pending and failed ones too.
func TestProviderPayoutStatusSaysSuccessWhateverTheState(t *testing.T) {
	s := newProviderServer(t, Config{ResolveAfter: time.Minute})
	serve(t, s, http.MethodPost, "/v1/payments/send", basicHeader, sendBody("233201230001", "sndwrong", "http://127.0.0.1:1/cb", "5000"))
	status := func() (string, string) {
		body := object(t, serve(t, s, http.MethodGet, "/v1/payments/sndwrong", basicHeader, nil).Body.Bytes())
		return string(body["ResponseCode"]), string(object(t, body["Data"])["transactionStatus"])
	}
	code, state := status()
	assert.Equal(t, []string{`"success"`, `"pending"`}, []string{code, state})
	s.Advance(time.Minute)
	code, state = status()
	assert.Equal(t, []string{`"success"`, `"failed"`}, []string{code, state})
	data := object(t, object(t, serve(t, s, http.MethodGet, "/v1/payments/sndwrong", basicHeader, nil).Body.Bytes())["Data"])
	assert.Equal(t, "null", string(data["networkTransactionId"]), "no network reference on a failed payout, as on the provider's failed transfer")
}

// Every network money moves through on the provider's wire has the provider's name of
// its wallet, so no callback describes an outcome with a bare network code.
func TestProviderNamesTheWalletOfEveryNetwork(t *testing.T) {
	networks := append(append([]string{}, receiveProviders...), sendProviders...)
	for _, network := range debitNetworks {
		networks = append(networks, network)
	}
	for _, network := range networks {
		name, ok := providerWallets[network]
		assert.True(t, ok, "the provider's name of the %s wallet", network)
		assert.NotEqual(t, network, name)
	}
	assert.Equal(t, "Vodafone cash payment has been made successfully",
		providerPayoutWords(&movement{Movement: Movement{Kind: string(kindSend), State: StateSucceeded}}, "TELECEL"))
	assert.Equal(t, "MTN mobile money payment has been made successfully",
		providerPayoutWords(&movement{Movement: Movement{Kind: string(kindSend), State: StateSucceeded}}, "MTN"))
	assert.Equal(t, providerFailed,
		providerPayoutWords(&movement{Movement: Movement{Kind: string(kindBankTransfer), State: StateFailed, ResponseCode: CodeFailed}}, ""),
		"a failed name check, whose words the provider does not show")
}
