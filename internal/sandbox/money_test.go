package sandbox

import (
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newCallbackReceiver serves 200 to every callback; the sandbox's Deliveries
// record what it was sent.
func newCallbackReceiver(tb testing.TB) string {
	tb.Helper()
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	tb.Cleanup(rcv.Close)
	return rcv.URL
}

// object decodes a JSON object keeping its values raw, so a test sees the
// exact keys and the exact text of numbers.
func object(tb testing.TB, raw []byte) map[string]json.RawMessage {
	tb.Helper()
	var m map[string]json.RawMessage
	require.NoError(tb, json.Unmarshal(raw, &m), "body: %s", raw)
	return m
}

// keys returns the keys of a JSON object, sorted.
func keys(tb testing.TB, raw []byte) []string {
	tb.Helper()
	return slices.Sorted(maps.Keys(object(tb, raw)))
}

// sortedKeys sorts a literal list of expected keys.
func sortedKeys(names string) []string {
	k := strings.Fields(names)
	slices.Sort(k)
	return k
}

// answer checks the status and returns the body as a raw object.
func answer(tb testing.TB, rec *httptest.ResponseRecorder, status int) map[string]json.RawMessage {
	tb.Helper()
	require.Equal(tb, status, rec.Code, "body: %s", rec.Body)
	require.Equal(tb, "application/json", rec.Header().Get("Content-Type"))
	return object(tb, rec.Body.Bytes())
}

// str decodes a raw JSON string.
func str(tb testing.TB, raw json.RawMessage) string {
	tb.Helper()
	var s string
	require.NoError(tb, json.Unmarshal(raw, &s), "value: %s", raw)
	return s
}

// deliveredTo returns the bodies posted to url so far, oldest first.
func deliveredTo(s *Server, url string) []json.RawMessage {
	var bodies []json.RawMessage
	for _, d := range s.Deliveries() {
		if d.URL == url {
			bodies = append(bodies, d.Body)
		}
	}
	return bodies
}

// requireRefusal checks an answer in a payment flow's own envelope: status,
// response code and a piece of the message, with no data.
func requireRefusal(tb testing.TB, rec *httptest.ResponseRecorder, status int, codeKey, code, messageKey, message string) {
	tb.Helper()
	body := answer(tb, rec, status)
	assert.Equal(tb, code, str(tb, body[codeKey]), "body: %s", rec.Body)
	assert.Contains(tb, str(tb, body[messageKey]), message)
	assert.Equal(tb, "null", string(body[dataKey(codeKey)]))
}

func dataKey(codeKey string) string {
	if codeKey == "ResponseCode" {
		return "Data"
	}
	return "data"
}

func TestPercentFeeRoundsHalfUp(t *testing.T) {
	for _, tc := range []struct{ amount, basisPoints, want int64 }{
		{5000, 195, 98}, // 97.5 rounds up
		{1000, 195, 20}, // 19.5 rounds up
		{100, 195, 2},   // 1.95
		{1, 195, 0},     // 0.0195
		{5000, 100, 50},
		{50, 100, 1}, // 0.5 rounds up
		{49, 100, 0},
		{maxAmount, 195, maxAmount / 10_000 * 195},
	} {
		assert.Equal(t, tc.want, percentFee(tc.amount, tc.basisPoints), "%d at %d bp", tc.amount, tc.basisPoints)
	}
}

func TestDecimalWritesTwoDecimals(t *testing.T) {
	for n, want := range map[int64]string{0: "0.00", 5: "0.05", 1050: "10.50", 100_000_000: "1000000.00", -250: "-2.50"} {
		b, err := json.Marshal(decimal(n))
		require.NoError(t, err)
		assert.Equal(t, want, string(b))
	}
}

func TestDecimalAmountReadsTheRawText(t *testing.T) {
	for _, tc := range []struct {
		raw        string
		exactlyTwo bool
		want       int64 // 0: refused
	}{
		{"10.10", true, 1010}, {"0.01", true, 1}, {"999999999999.99", true, 99_999_999_999_999},
		{"10.1", true, 0}, {"10", true, 0}, {"10.100", true, 0}, {`"10.10"`, true, 0}, {"1e1", true, 0},
		{"-10.00", true, 0}, {"0.00", true, 0}, {"1000000000000.00", true, 0}, {"null", true, 0},
		{"10", false, 1000}, {"10.5", false, 1050}, {"10.05", false, 1005}, {"0.5", false, 50},
		{"10.123", false, 0}, {"0", false, 0}, {"true", false, 0},
	} {
		f, err := parseFields([]byte(`{"Amount":` + tc.raw + `}`))
		require.NoError(t, err)
		got, ok := f.decimalAmount("Amount", tc.exactlyTwo)
		if tc.want == 0 {
			assert.False(t, ok && f.err() == nil, "%s (exactly two: %v) must be refused", tc.raw, tc.exactlyTwo)
			continue
		}
		assert.True(t, ok, tc.raw)
		assert.NoError(t, f.err(), tc.raw)
		assert.Equal(t, tc.want, got, tc.raw)
	}
}

func TestTestNumbersUseTheLastFourDigits(t *testing.T) {
	assert.Equal(t, outcome{code: CodeFailed}, collectionOutcomes.of("233240000001"))
	assert.Equal(t, outcome{refuse: CodeNotRegistered}, sendOutcomes.of("233240000003"))
	assert.Equal(t, outcome{code: CodeSuccess}, collectionOutcomes.of("233240000005"))
	assert.Equal(t, outcome{code: CodeSuccess}, bankOutcomes.of("01"), "a number shorter than four digits")
	assert.Equal(t, outcome{code: CodeFailed}, bankOutcomes.of("0001"))
}

func TestLedgerRefusesADuplicateAndCountsEveryReference(t *testing.T) {
	l := newLedger(10_000)
	m := &movement{Movement: Movement{Kind: string(kindSend), ClientReference: "ref1", Amount: 4_000, Fee: 100}, payout: true}
	require.NoError(t, l.checkNew(kindSend, "ref1"))
	o := outcome{code: CodeSuccess}
	require.NoError(t, l.accept(m, &o, testStart))
	assert.Equal(t, int64(5_900), l.balance, "amount plus fee debited at acceptance")

	var r *refusal
	require.ErrorAs(t, l.checkNew(kindSend, "ref1"), &r)
	assert.Equal(t, CodeFailed, r.code)
	assert.Equal(t, http.StatusOK, r.status)
	assert.NoError(t, l.checkNew(kindReceive, "ref1"), "another operation may use the reference")

	big := &movement{Movement: Movement{Kind: string(kindSend), ClientReference: "ref2", Amount: 6_000, Fee: 100}, payout: true}
	o2 := outcome{code: CodeSuccess}
	require.NoError(t, l.accept(big, &o2, testStart, "order7"))
	assert.Equal(t, outcome{code: CodeInsufficientBalance}, o2, "above the balance: accepted, failing with 4075")
	assert.Equal(t, int64(5_900), l.balance, "not debited")
	assert.Len(t, l.byRef["order7"], 1)

	assert.True(t, l.settle(m, CodeFailed, testStart))
	assert.Equal(t, int64(10_000), l.balance, "a failed payout is credited back")
	assert.False(t, l.settle(m, CodeSuccess, testStart), "a final movement stays final")
	assert.Equal(t, StateFailed, m.State)
}

// serveRequest sends a prepared request to h in-process.
func serveRequest(h http.Handler, req *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// A receive or a send takes a reference with hyphens and underscores, as the provider
// does; a checkout's metadata reference keeps the spec's letters and digits.
func TestMobileMoneyReferencesTakeHyphensAndUnderscores(t *testing.T) {
	for _, ref := range []string{"ORDER-2291-A", "order_2291"} {
		f := &fields{}
		got, ok := metadataReference(f, map[string]any{"clientReference": ref}, isMovementReference)
		if !ok || got != ref || f.err() != nil {
			t.Errorf("%s: refused (%v)", ref, f.err())
		}
		f = &fields{}
		if _, ok := metadataReference(f, map[string]any{"clientReference": ref}, isClientReference); ok || f.err() == nil {
			t.Errorf("%s: a checkout reference took it", ref)
		}
	}
	f := &fields{}
	if _, ok := metadataReference(f, map[string]any{"clientReference": "order.1"}, isMovementReference); ok || f.err() == nil {
		t.Error("order.1 was taken")
	}
}
