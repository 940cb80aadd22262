package sandbox

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// documentedRequest is one row of REQUESTS.md: an operation of the provider,
// its method and path, and the answers it documents (sample files, or an
// inline sample).
type documentedRequest struct {
	operation, method, path string
	answers                 []string // sample file names
	inlineAnswer            string   // an answer written in the row itself, "…" for each value
}

var (
	backticked = regexp.MustCompile("`([^`]+)`")
	methodPath = regexp.MustCompile(`^(GET|POST) ` + "`" + `([^` + "`" + `]+)` + "`")
)

// documentedRequests reads the table of REQUESTS.md. A row whose path says
// "the same path as receive" takes the receive's.
func documentedRequests(t *testing.T) []documentedRequest {
	t.Helper()
	text, err := os.ReadFile(filepath.Join(providerFixtures, "REQUESTS.md"))
	require.NoError(t, err)
	var rows []documentedRequest
	for _, line := range strings.Split(string(text), "\n") {
		cells := strings.Split(line, "|")
		if len(cells) != 6 || strings.HasPrefix(strings.TrimSpace(cells[1]), "---") || strings.TrimSpace(cells[1]) == "Operation" {
			continue
		}
		row := documentedRequest{operation: strings.TrimSpace(cells[1])}
		if m := methodPath.FindStringSubmatch(strings.TrimSpace(cells[2])); m != nil {
			row.method, row.path = m[1], m[2]
		} else {
			require.Contains(t, cells[2], "the same path as receive", row.operation)
			require.NotEmpty(t, rows)
			row.method, row.path = rows[0].method, rows[0].path
		}
		for _, m := range backticked.FindAllStringSubmatch(cells[4], -1) {
			name := m[1]
			if !strings.HasSuffix(name, ".json") {
				continue
			}
			// "`bank_status_success.json` / `_failed.json`" also names bank_status_failed.json.
			if strings.HasPrefix(name, "_") {
				require.NotEmpty(t, row.answers, "%s: %s follows no full name", row.operation, name)
				previous := row.answers[len(row.answers)-1]
				name = previous[:strings.LastIndex(previous, "_")] + name
			}
			row.answers = append(row.answers, name)
		}
		if i := strings.Index(cells[4], "`{"); i >= 0 {
			row.inlineAnswer = strings.Trim(backticked.FindString(cells[4][i:]), "`")
		}
		rows = append(rows, row)
	}
	require.Len(t, rows, 12, "REQUESTS.md lists twelve operations")
	return rows
}

// providerCall is one request a client of the provider sends, as documented.
type providerCall struct {
	query  string // appended to the documented path, after its "=…"
	params map[string]string
	body   string // exactly as sent
	answer string // the sample the answer must match
}

func TestDocumentedRequestsTable(t *testing.T) {
	byName := map[string]documentedRequest{}
	for _, row := range documentedRequests(t) {
		byName[row.operation] = row
	}
	assert.Equal(t, []string{"bank_status_success.json", "bank_status_failed.json"}, byName["Payout status (send and send-to-bank)"].answers[1:])
	assert.Equal(t, []string{"preapproval_initiate_ussd.json", "preapproval_initiate_otp.json"}, byName["Pre-approval initiate"].answers)
	assert.Equal(t, byName["Direct receive"].path, byName["Direct debit charge"].path)
	assert.NotEmpty(t, byName["Checkout initiate"].inlineAnswer)
}

// Every request of the provider's documents, sent byte for byte as a client of
// the provider sends it (only the host changed), is served by the sandbox on
// the provider's wire and answered in the shape of its documented sample, key
// by key and type by type.
func TestProviderRequestsAsDocumented(t *testing.T) {
	callbacks := newCallbackReceiver(t)
	s := newProviderServer(t, Config{})
	pos, prepaid := DefaultSalesAccount, DefaultDisbursementAccount
	cb := callbacks + "/cb"

	rows := documentedRequests(t)
	send := func(row documentedRequest, call providerCall) []byte {
		t.Helper()
		path := strings.NewReplacer("{POS}", pos, "{prepaid}", prepaid).Replace(row.path)
		for name, value := range call.params {
			path = strings.ReplaceAll(path, "{"+name+"}", value)
		}
		path = strings.TrimSuffix(path, "…") + call.query
		require.NotContains(t, path, "{", "%s: a path parameter left unfilled", row.operation)
		var body any
		if call.body != "" {
			body = call.body
		}
		rec := serve(t, s, row.method, path, basicHeader, body)
		require.Equal(t, http.StatusOK, rec.Code, "%s %s: %s", row.method, path, rec.Body)
		return rec.Body.Bytes()
	}
	check := func(row documentedRequest, call providerCall) {
		t.Helper()
		got := send(row, call)
		if call.answer == "inline" {
			sample := strings.ReplaceAll(row.inlineAnswer, "…", `""`)
			diffs := shapeDiff(decodeAny(t, []byte(sample)), decodeAny(t, got), "$")
			require.Empty(t, diffs, "%s: the answer differs from the documented one:\n%s\nsandbox: %s", row.operation, strings.Join(diffs, "\n"), got)
			return
		}
		require.Contains(t, row.answers, call.answer, "%s documents its answer in %v", row.operation, row.answers)
		requireShapeOf(t, call.answer, got)
	}
	row := func(operation string) documentedRequest {
		for _, r := range rows {
			if r.operation == operation {
				return r
			}
		}
		t.Fatalf("REQUESTS.md has no operation %q", operation)
		return documentedRequest{}
	}
	driven := map[string]bool{}
	do := func(operation string, call providerCall) {
		t.Helper()
		driven[operation] = true
		check(row(operation), call)
	}

	// Pre-approvals: by USSD, approved on its own; by OTP, approved after the code.
	do("Pre-approval initiate", providerCall{answer: "preapproval_initiate_ussd.json",
		body: `{"clientReferenceId":"3jL2KlUy3vt21debitC","customerMsisdn":"233200010000","channel":"mtn-gh-direct-debit","callbackUrl":"` + cb + `"}`})
	initiated := send(row("Pre-approval initiate"), providerCall{
		body: `{"clientReferenceId":"3jL2KlUy3vt21debitD","customerMsisdn":"233201234567","channel":"vodafone-gh-direct-debit","callbackUrl":"` + cb + `"}`})
	requireShapeOf(t, "preapproval_initiate_otp.json", initiated)
	id := str(t, dataOf(t, initiated, "data")["hubtelPreApprovalId"])
	do("Pre-approval verify OTP", providerCall{answer: "preapproval_verifyotp.json",
		body: `{"customerMsisdn":"233201234567","hubtelPreApprovalId":"` + id + `","clientReferenceId":"3jL2KlUy3vt21debitD","otpCode":"` + s.SMS("233201234567")[0] + `"}`})
	s.Advance(time.Second)
	do("Pre-approval status", providerCall{params: map[string]string{"clientReferenceId": "3jL2KlUy3vt21debitC"}, answer: "preapproval_status.json"})

	// Receive: one paid, one still pending (0004), with the documented Amount 0.8.
	receive := func(msisdn, reference string) string {
		return `{"CustomerName":"Joe Doe","CustomerMsisdn":"` + msisdn + `","CustomerEmail":"","Channel":"mtn-gh","Amount":0.8,` +
			`"PrimaryCallbackUrl":"` + cb + `","Description":"Union Dues","ClientReference":"` + reference + `"}`
	}
	do("Direct receive", providerCall{body: receive("233241234567", "ORDER-2291-A"), answer: "receive_initiate_response_doc.json"})
	send(row("Direct receive"), providerCall{body: receive("233241230004", "ORDER-2292-A")})
	// Direct debit under the approved USSD mandate, on the receive's path.
	do("Direct debit charge", providerCall{answer: "directdebit_charge_response.json",
		body: `{"CustomerName":"","CustomerMsisdn":"233200010000","CustomerEmail":"","Channel":"mtn-gh-direct-debit","Amount":10.5,` +
			`"PrimaryCallbackUrl":"` + cb + `","Description":"Union Dues","ClientReference":"3jL2KlUy3vt216789"}`})
	// Checkout initiate, then its status by the merchant's client reference.
	do("Checkout initiate", providerCall{answer: "inline",
		body: `{"totalAmount":1.5,"description":"Book Shop Checkout","callbackUrl":"` + cb + `","returnUrl":"https://shop.example/done",` +
			`"cancellationUrl":"https://shop.example/cancel","merchantAccountNumber":"` + pos + `","clientReference":"Kaks545253"}`})
	// Send and send-to-bank, with optional fields sent empty.
	do("Direct send", providerCall{answer: "send_initiate_response.json",
		body: `{"RecipientName":"Joe Doe","RecipientMsisdn":"233200010000","CustomerEmail":"","Channel":"vodafone-gh","Amount":0.8,` +
			`"PrimaryCallbackUrl":"` + cb + `","SecondaryCallbackUrl":"","Description":"Salary","ClientReference":"pay101"}`})
	bank := func(amount, account, reference string) string {
		return `{"Amount":` + amount + `,"PrimaryCallbackUrl":"` + cb + `","Description":"TestSendToBankDeposit","BankAccountNumber":"` + account +
			`","ClientReference":"` + reference + `","BankAccountName":"Joe Doe","RecipientPhoneNumber":"","BankName":"","BankBranch":"","BankBranchCode":""}`
	}
	do("Send-to-bank", providerCall{params: map[string]string{"bankCode": "300302"}, body: bank("0.8", "1234567890", "sendToBank101"),
		answer: "bank_initiate_response.json"})
	send(row("Send-to-bank"), providerCall{params: map[string]string{"bankCode": "300302"}, body: bank("10", "1234560001", "sendtoBankTestcollins1")})
	send(row("Send-to-bank"), providerCall{params: map[string]string{"bankCode": "300302"}, body: bank("10.5", "1234567891", "sendToBank102")})
	s.Advance(time.Second)

	status := "Transaction status (receive, direct debit, checkout)"
	do(status, providerCall{query: "ORDER-2291-A", answer: "receive_status_paid_doc.json"})
	do(status, providerCall{query: "ORDER-2292-A", answer: "receive_status_unpaid_doc.json"})
	do(status, providerCall{query: "3jL2KlUy3vt216789", answer: "receive_status_paid_doc.json"})
	do(status, providerCall{query: "Kaks545253", answer: "receive_status_unpaid_doc.json"})
	payouts := "Payout status (send and send-to-bank)"
	do(payouts, providerCall{query: "pay101", answer: "send_status_success.json"})
	do(payouts, providerCall{query: "sendToBank101", answer: "bank_status_success.json"})
	do(payouts, providerCall{query: "sendtoBankTestcollins1", answer: "bank_status_failed.json"})

	do("Pre-approval cancel", providerCall{params: map[string]string{"customerMsisdn": "233201234567"}, answer: "preapproval_cancel.json"})
	do("Pre-approval reactivate", providerCall{answer: "preapproval_reactivate.json",
		body: `{"customerMsisdn":"233201234567","callbackUrl":"` + cb + `"}`})

	for _, r := range rows {
		assert.True(t, driven[r.operation], "REQUESTS.md's %q is not driven through the sandbox", r.operation)
	}
}

// The provider's answers tell the state in its own words: a receive not paid
// is 0000 with Unpaid, never a failure code; amounts written 10, 10.5 and 0.8
// move exactly those cedis.
func TestProviderRequestsMoveWhatTheySay(t *testing.T) {
	callbacks := newCallbackReceiver(t)
	s := newProviderServer(t, Config{ResolveAfter: time.Minute})
	collect := "/merchantaccount/merchants/" + DefaultSalesAccount + "/receive/mobilemoney"
	statusOf := func(reference string) (string, string) {
		body := serve(t, s, http.MethodGet, "/transactions/"+DefaultSalesAccount+"/status?clientReference="+reference, basicHeader, nil).Body.Bytes()
		return str(t, object(t, body)["responseCode"]), str(t, dataOf(t, body, "data")["status"])
	}
	for ref, msisdn := range map[string]string{"paid-1": "233241234567", "failed-1": "233241230001"} {
		rec := serve(t, s, http.MethodPost, collect, basicHeader, `{"CustomerMsisdn":"`+msisdn+`","Channel":"tigo-gh","Amount":10,`+
			`"PrimaryCallbackUrl":"`+callbacks+`","Description":"x","ClientReference":"`+ref+`"}`)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		code, state := statusOf(ref)
		assert.Equal(t, []string{CodeSuccess, "Unpaid"}, []string{code, state}, "pending")
	}
	s.Advance(time.Minute)
	code, state := statusOf("paid-1")
	assert.Equal(t, []string{CodeSuccess, "Paid"}, []string{code, state})
	code, state = statusOf("failed-1")
	assert.Equal(t, []string{CodeSuccess, "Unpaid"}, []string{code, state}, "failed: still 0000 Unpaid")
	assert.Equal(t, int64(1000), s.Movements("paid-1")[0].Amount)

	for amount, minor := range map[string]int64{"10": 1000, "10.5": 1050, "0.8": 80} {
		ref := "bank" + strings.ReplaceAll(amount, ".", "x")
		rec := serve(t, s, http.MethodPost, "/api/merchants/"+DefaultDisbursementAccount+"/send/bank/gh/300302", basicHeader,
			`{"Amount":`+amount+`,"PrimaryCallbackUrl":"`+callbacks+`","Description":"x","BankAccountNumber":"1234567890","ClientReference":"`+ref+`","RecipientPhoneNumber":""}`)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		assert.Equal(t, minor, s.Movements(ref)[0].Amount, amount)
	}
	// The spec's send-to-bank path still holds its Amount to two decimals.
	requireError(t, serve(t, s, http.MethodPost, bankPath, basicHeader, bankBody("10.5", "1234567890", "specbank", callbacks)),
		http.StatusBadRequest, CodeValidation, "Amount", "exactly two decimal places")

	// The accounts in the paths must be the business's.
	requireError(t, serve(t, s, http.MethodGet, "/transactions/999/status?clientReference=paid-1", basicHeader, nil),
		http.StatusNotFound, CodeNotFound, "", "sales account")
	requireError(t, serve(t, s, http.MethodGet, "/api/merchants/999/transactions/status?clientReference=paid-1", basicHeader, nil),
		http.StatusNotFound, CodeNotFound, "", "disbursement account")
	// A client reference that names nothing is 404 on both status paths.
	requireError(t, serve(t, s, http.MethodGet, "/transactions/"+DefaultSalesAccount+"/status?clientReference=nothing", basicHeader, nil),
		http.StatusNotFound, CodeNotFound, "", "nothing")
	// Basic credentials on every provider path.
	requireError(t, serve(t, s, http.MethodGet, "/transactions/"+DefaultSalesAccount+"/status?clientReference=paid-1", "", nil),
		http.StatusUnauthorized, CodeKeysMismatch, "", "missing credentials")
}

// The provider's paths are served only under its wire; the spec's under both.
func TestProviderPathsOnlyOnTheProvidersWire(t *testing.T) {
	spec := newTestServer(t, Config{})
	requireError(t, serve(t, spec, http.MethodPost, "/items/initiate", basicHeader, `{}`), http.StatusNotFound, CodeNotFound, "", "no route matches")
	provider := newProviderServer(t, Config{})
	rec := serve(t, provider, http.MethodPost, "/v1/payments", basicHeader, `{"amount":5000}`)
	assert.Equal(t, http.StatusCreated, rec.Code, "the spec's paths keep working on the provider's wire")
	var created struct {
		Data struct{ Reference string } `json:"data"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &created))
	assert.NotEmpty(t, created.Data.Reference)
}
