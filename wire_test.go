package billing

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/big"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The provider's send and send-to-bank status checks answer the word "success" for the
// request, whatever became of the transfer: the word is no failure, and no success of
// the transaction either.
func TestResponseCodeSuccessWord(t *testing.T) {
	for code, failure := range map[ResponseCode]bool{
		"success": false, "Success": false, "SUCCESS": false,
		CodeSuccess: false, CodeAccepted: false, CodePreapprovalOK: false, "": false,
		CodeFailed: true, CodeInsufficientBalance: true, "failed": true, "successful-ish": true,
	} {
		assert.Equal(t, failure, code.IsFailure(), "%q", code)
	}
	assert.NotEqual(t, CodeSuccess, ResponseCode("success"), "the word must not read as the transaction's 0000")
}

// providerFixtures returns the provider's recorded payloads by file name.
func providerFixtures(t testing.TB) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join("testdata", "provider"))
	require.NoError(t, err)
	out := map[string][]byte{}
	for _, e := range entries {
		if filepath.Ext(e.Name()) == ".json" {
			out[e.Name()] = fixture(t, filepath.Join("provider", e.Name()))
		}
	}
	require.NotEmpty(t, out)
	return out
}

// wireField is one scalar field of a fixture, with its JSON literal as written.
type wireField struct {
	path    string // file:Key.Key
	key     string
	literal json.RawMessage
}

// wireFields returns every scalar field of body, walking nested objects.
func wireFields(t testing.TB, path string, body json.RawMessage) []wireField {
	t.Helper()
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(body, &obj); err != nil {
		return nil // not an object: data: true, a string, a number
	}
	var out []wireField
	for key, raw := range obj {
		p := path + "." + key
		if bytes.HasPrefix(raw, []byte("{")) {
			out = append(out, wireFields(t, p, raw)...)
			continue
		}
		out = append(out, wireField{path: p, key: key, literal: raw})
	}
	return out
}

func isAmountKey(key string) bool {
	k := strings.ToLower(key)
	return strings.Contains(k, "amount") || strings.Contains(k, "charge") || strings.Contains(k, "fee")
}

func isTimeKey(key string) bool {
	k := strings.ToLower(key)
	return strings.Contains(k, "date") || k == "createdat"
}

// Every amount the provider writes is major units (cedis), integers included: each
// literal found in its payloads is read exactly, and none escapes the table.
func TestWireAmountReadsEveryProviderAmount(t *testing.T) {
	want := map[string]int64{
		"0.0": 0, "0.010": 1, "0.02": 2, "0.05": 5, "0.08": 8, "0.1": 10, "0.5": 50, "0.8": 80,
		"0.85": 85, "1": 100, "1.01": 101, "10": 1000, "10.0": 1000, "10.1": 1010,
	}
	seen := map[string]bool{}
	for name, body := range providerFixtures(t) {
		for _, f := range wireFields(t, name, body) {
			if !isAmountKey(f.key) {
				continue
			}
			lit := string(f.literal)
			exp, ok := want[lit]
			if !assert.True(t, ok, "%s: amount %s is not in the table", f.path, lit) {
				continue
			}
			seen[lit] = true
			var a wireAmount
			require.NoError(t, json.Unmarshal(f.literal, &a), f.path)
			got, err := a.minor(majorUnits)
			require.NoError(t, err, f.path)
			assert.Equal(t, exp, got, "%s: %s", f.path, lit)
		}
	}
	for lit := range want {
		assert.True(t, seen[lit], "%s is in the table but in no fixture", lit)
	}
}

// Every timestamp the provider writes (7 fractional digits, or YYYY-MM-DD HH:MM:SS) is
// read to the instant, in UTC.
func TestWireTimeReadsEveryProviderTimestamp(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339Nano, s)
		require.NoError(t, err)
		return v
	}
	want := map[string]time.Time{
		`"2021-08-23 11:31:06"`:          at("2021-08-23T11:31:06Z"),
		`"2022-08-23 11:31:06"`:          at("2022-08-23T11:31:06Z"),
		`"2024-08-01 08:30:53"`:          at("2024-08-01T08:30:53Z"),
		`"2022-11-14T21:08:16.7533466Z"`: at("2022-11-14T21:08:16.753346600Z"),
		`"2023-08-11T18:18:55.6439374Z"`: at("2023-08-11T18:18:55.643937400Z"),
		`"2024-04-25T21:45:48.4740964Z"`: at("2024-04-25T21:45:48.474096400Z"),
		`"2024-05-14T00:44:57.5142719Z"`: at("2024-05-14T00:44:57.514271900Z"),
	}
	seen := map[string]bool{}
	for name, body := range providerFixtures(t) {
		for _, f := range wireFields(t, name, body) {
			if !isTimeKey(f.key) {
				continue
			}
			lit := string(f.literal)
			exp, ok := want[lit]
			if !assert.True(t, ok, "%s: timestamp %s is not in the table", f.path, lit) {
				continue
			}
			seen[lit] = true
			var v wireTime
			require.NoError(t, json.Unmarshal(f.literal, &v), f.path)
			got, err := v.get()
			require.NoError(t, err, f.path)
			assert.True(t, exp.Equal(got), "%s: %s read as %s", f.path, lit, got)
			assert.Equal(t, time.UTC, got.Location(), f.path)
		}
	}
	for lit := range want {
		assert.True(t, seen[lit], "%s is in the table but in no fixture", lit)
	}
}

func TestWireAmountLiterals(t *testing.T) {
	const bad = math.MinInt64 // marks a literal that must be an error of its field
	cases := []struct {
		literal      string
		minor, major int64 // read on a minor-unit field, on a major-unit field
	}{
		// The spec's integers and the provider's decimals.
		{`2500`, 2500, 250000},
		{`0`, 0, 0},
		{`10`, 10, 1000},
		{`0.8`, 80, 80},
		{`0.010`, 1, 1},
		{`0.1`, 10, 10},
		{`10.0`, 1000, 1000},
		// Numeric strings are major units on every field.
		{`"12.50"`, 1250, 1250},
		{`"10"`, 1000, 1000},
		{`" 12.50 "`, 1250, 1250},
		{`"\t7.5\n"`, 750, 750},
		{`"12 .50"`, bad, bad},
		{`"1 000"`, bad, bad},
		{`"1,000.00"`, bad, bad},
		{`"007.50"`, 750, 750},
		// Negative amounts are read as written; what they mean is the caller's to judge.
		{`-5`, -5, -500},
		{`-0.5`, -50, -50},
		{`"-12.50"`, -1250, -1250},
		// Exponents come from float encoders, which write major units.
		{`1e2`, 10000, 10000},
		{`1E2`, 10000, 10000},
		{`1.5e1`, 1500, 1500},
		{`2.5E-1`, 25, 25},
		{`1e-2`, 1, 1},
		{`1e+0`, 100, 100},
		{`0e999`, 0, 0},
		{`1e-3`, bad, bad},
		{`1e17`, bad, bad},
		{`1e400`, bad, bad},
		{`1e-400`, bad, bad},
		{`1e99999999999999999999`, bad, bad},
		{`1e-99999999999999999999`, bad, bad},
		// More decimals than minor units hold: exact when the extra digits are zeros.
		{`12.5000`, 1250, 1250},
		{`"1.000000"`, 100, 100},
		{`0.001`, bad, bad},
		{`0.0100001`, bad, bad},
		{`0.30000000000000004`, bad, bad},
		// Huge values.
		{`9223372036854775807`, math.MaxInt64, bad},
		{`-9223372036854775807`, -math.MaxInt64, bad},
		{`9223372036854775808`, bad, bad},
		{`92233720368547757.99`, 9223372036854775799, 9223372036854775799},
		{`100000000000000000.00`, bad, bad},
		{`"` + strings.Repeat("1", 100) + `"`, bad, bad},
		// Garbage.
		{`"abc"`, bad, bad},
		{`"0x10"`, bad, bad},
		{`"+5"`, bad, bad},
		{`"NaN"`, bad, bad},
		{`"Infinity"`, bad, bad},
		{`"5."`, bad, bad},
		{`".5"`, bad, bad},
		{`"1e"`, bad, bad},
		{`"1e5e5"`, bad, bad},
		{`true`, bad, bad},
		{`{}`, bad, bad},
		{`[1]`, bad, bad},
	}
	for _, tc := range cases {
		var a wireAmount
		require.NoError(t, json.Unmarshal([]byte(tc.literal), &a), "decoding never fails: %s", tc.literal)
		assert.True(t, a.present(), tc.literal)
		for unit, want := range map[amountUnit]int64{minorUnits: tc.minor, majorUnits: tc.major} {
			got, err := a.minor(unit)
			if want == bad {
				assert.Error(t, err, "%s in unit %d read as %d", tc.literal, unit, got)
				continue
			}
			if assert.NoError(t, err, "%s in unit %d", tc.literal, unit) {
				assert.Equal(t, want, got, "%s in unit %d", tc.literal, unit)
			}
		}
	}
}

// The error of an unreadable amount says why, naming the literal.
func TestWireAmountErrorsSayWhy(t *testing.T) {
	for literal, why := range map[string]error{
		`0.001`: errAmountNotExact, `1e-3`: errAmountNotExact, `"0.125"`: errAmountNotExact,
		`9223372036854775808`: errAmountRange, `1e17`: errAmountRange, `1e400`: errAmountRange,
		`"abc"`: errDecimalSyntax, `true`: errDecimalSyntax, `"1e"`: errDecimalSyntax,
	} {
		var a wireAmount
		require.NoError(t, json.Unmarshal([]byte(literal), &a))
		_, err := a.minor(minorUnits)
		assert.ErrorIs(t, err, why, literal)
		if err != nil {
			assert.Contains(t, err.Error(), literal)
		}
	}
}

func TestWireAmountAbsent(t *testing.T) {
	var v struct{ A, B, C wireAmount }
	require.NoError(t, json.Unmarshal([]byte(`{"A": null, "B": "", "X": 1}`), &v))
	for _, a := range []wireAmount{v.A, v.B, v.C} {
		assert.False(t, a.present())
		_, err := a.minor(minorUnits)
		assert.ErrorIs(t, err, errAmountAbsent)
	}
}

func TestWireAmountNeedsAUnitForIntegers(t *testing.T) {
	var a wireAmount
	require.NoError(t, json.Unmarshal([]byte(`10`), &a))
	_, err := a.minor(0)
	assert.Error(t, err, "a field whose unit nobody declared must not guess")
}

// One field the SDK cannot read is an error of that field: the rest of the object, the
// state fields above all, is still read.
func TestWireFieldErrorsKeepTheObject(t *testing.T) {
	var v struct {
		Amount, Fees, Charges wireAmount
		CreatedAt, Date       wireTime
		TransactionStatus     string
		wireCode
	}
	body := `{"ResponseCode": "success", "Amount": 0.001, "Fees": "abc", "Charges": {"x": 1},
		"CreatedAt": 5, "Date": "yesterday", "transactionStatus": "failed"}`
	require.NoError(t, json.Unmarshal([]byte(body), &v))
	assert.Equal(t, "failed", v.TransactionStatus)
	assert.Equal(t, ResponseCode("success"), v.code())
	for name, a := range map[string]wireAmount{"Amount": v.Amount, "Fees": v.Fees, "Charges": v.Charges} {
		_, err := a.minor(majorUnits)
		assert.Error(t, err, name)
		assert.NotErrorIs(t, err, errAmountAbsent, name)
	}
	for name, w := range map[string]wireTime{"CreatedAt": v.CreatedAt, "Date": v.Date} {
		got, err := w.get()
		assert.Error(t, err, name)
		assert.True(t, got.IsZero(), name)
	}
}

// The receive status check is the same object on both wires: whole numbers in minor
// units on the spec's, decimals in cedis on the provider's. One fraction among an
// object's amounts puts all of them in major units.
func TestObjectUnit(t *testing.T) {
	read := func(body string) (amount, charges, after wireAmount) {
		var v struct{ Amount, Charges, AmountAfterCharges wireAmount }
		require.NoError(t, json.Unmarshal([]byte(body), &v))
		return v.Amount, v.Charges, v.AmountAfterCharges
	}
	minorOf := func(u amountUnit, amounts ...wireAmount) []int64 {
		var out []int64
		for _, a := range amounts {
			v, err := a.minor(objectUnit(u, amounts...))
			require.NoError(t, err)
			out = append(out, v)
		}
		return out
	}

	specBody := fixture(t, "payments/receive_status_paid.json")
	var spec struct{ Data json.RawMessage }
	require.NoError(t, json.Unmarshal(specBody, &spec))
	a, c, x := read(string(spec.Data))
	assert.Equal(t, []int64{2500, 25, 2475}, minorOf(minorUnits, a, c, x), "the spec's integers stay minor units")

	var provider struct{ Data json.RawMessage }
	require.NoError(t, json.Unmarshal(providerFixtures(t)["receive_status_paid_doc.json"], &provider))
	a, c, x = read(string(provider.Data))
	assert.Equal(t, []int64{10, 2, 8}, minorOf(minorUnits, a, c, x))

	a, c, x = read(`{"amount": 1, "charges": 0.02, "amountAfterCharges": 0.98}`)
	assert.Equal(t, []int64{100, 2, 98}, minorOf(minorUnits, a, c, x), "1 beside 0.02 is one cedi")
	a, c, x = read(`{"amount": 1, "charges": "0", "amountAfterCharges": 1}`)
	assert.Equal(t, []int64{100, 0, 100}, minorOf(minorUnits, a, c, x), "a numeric string is major units too")
	a, c, x = read(`{"amount": 10, "charges": 1, "amountAfterCharges": 9}`)
	assert.Equal(t, []int64{1000, 100, 900}, minorOf(majorUnits, a, c, x))

	var bank struct {
		Data struct{ Amount, Fees wireAmount }
	}
	require.NoError(t, json.Unmarshal(providerFixtures(t)["bank_status_success.json"], &bank))
	assert.Equal(t, []int64{100, 101}, minorOf(minorUnits, bank.Data.Amount, bank.Data.Fees))
}

func TestWireTimeLiterals(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339Nano, s)
		require.NoError(t, err)
		return v
	}
	for literal, want := range map[string]time.Time{
		`"2025-01-01T10:15:29Z"`:                at("2025-01-01T10:15:29Z"),
		`"2025-01-01T10:15:29.4Z"`:              at("2025-01-01T10:15:29.4Z"),
		`"2025-01-01T10:15:29.412Z"`:            at("2025-01-01T10:15:29.412Z"),
		`"2025-01-01T10:15:29.4120000Z"`:        at("2025-01-01T10:15:29.412Z"),
		`"2025-01-01T10:15:29.123456789Z"`:      at("2025-01-01T10:15:29.123456789Z"),
		`"2025-01-01T10:15:29.123456789+02:00"`: at("2025-01-01T08:15:29.123456789Z"),
		`"2025-01-01T10:15:29-05:30"`:           at("2025-01-01T15:45:29Z"),
		`"2025-01-01T10:15:29"`:                 at("2025-01-01T10:15:29Z"),
		`"2025-01-01T10:15:29.5142719"`:         at("2025-01-01T10:15:29.5142719Z"),
		`"2025-01-01 13:00:00"`:                 at("2025-01-01T13:00:00Z"),
		`"2025-01-01 13:00:00.25"`:              at("2025-01-01T13:00:00.25Z"),
		`"2025-01-01 13:00:00+01:00"`:           at("2025-01-01T12:00:00Z"),
		`" 2025-01-01 13:00:00 "`:               at("2025-01-01T13:00:00Z"),
		`null`:                                  {},
		`""`:                                    {},
	} {
		var v wireTime
		require.NoError(t, json.Unmarshal([]byte(literal), &v), literal)
		got, err := v.get()
		require.NoError(t, err, literal)
		assert.True(t, want.Equal(got), "%s read as %s", literal, got)
		if !got.IsZero() {
			assert.Equal(t, time.UTC, got.Location(), literal)
		}
	}
	for _, literal := range []string{
		`"2025-13-01T00:00:00Z"`, `"2025-01-01"`, `"01/02/2025 10:00"`, `"yesterday"`, `"2025-01-01T10:15:29+25:00"`,
		`"0000-01-01T00:00:00+01:00"`, `"2025-01-01T10:15:29.` + strings.Repeat("1", 60) + `Z"`,
		`1735725329`, `true`, `{}`, `["2025-01-01T10:15:29Z"]`,
	} {
		var v wireTime
		require.NoError(t, json.Unmarshal([]byte(literal), &v), "decoding never fails: %s", literal)
		got, err := v.get()
		assert.Error(t, err, literal)
		assert.True(t, got.IsZero(), literal)
		_, err = json.Marshal(v)
		assert.Error(t, err, "an unreadable time is not written back: %s", literal)
	}

	var v struct{ CreatedAt wireTime }
	require.NoError(t, json.Unmarshal([]byte(`{}`), &v))
	got, err := v.CreatedAt.get()
	assert.NoError(t, err)
	assert.True(t, got.IsZero(), "missing is the zero time")
}

func TestWireTimeWritesWhatItRead(t *testing.T) {
	var v wireTime
	require.NoError(t, json.Unmarshal([]byte(`"2024-08-01 08:30:53"`), &v))
	b, err := json.Marshal(v)
	require.NoError(t, err)
	assert.Equal(t, `"2024-08-01T08:30:53Z"`, string(b))
	b, err = json.Marshal(wireTime{})
	require.NoError(t, err)
	assert.Equal(t, `null`, string(b))
}

// The code is read under responseCode, ResponseCode or code, whichever the body uses.
func TestWireCodeReadsEveryProviderCode(t *testing.T) {
	fixtures := providerFixtures(t)
	for name, want := range map[string]ResponseCode{
		"receive_initiate_response_doc.json": CodeAccepted,
		"receive_callback_failed_doc.json":   CodeFailed,
		"receive_status_paid_doc.json":       CodeSuccess,
		"send_callback_failed_4075.json":     CodeInsufficientBalance,
		"send_status_success.json":           "success",
		"bank_status_failed.json":            "success",
		"preapproval_status.json":            CodePreapprovalOK, // under "code"
		"preapproval_cancel.json":            CodePreapprovalOK,
		"checkout_webhook.json":              CodeSuccess,
		"preapproval_callback_failed.json":   "", // a mandate callback carries no code
	} {
		var v struct{ wireCode }
		require.NoError(t, json.Unmarshal(fixtures[name], &v), name)
		assert.Equal(t, want, v.code(), name)
	}

	var both struct{ wireCode }
	require.NoError(t, json.Unmarshal([]byte(`{"code": "2001", "responseCode": "0000"}`), &both))
	assert.Equal(t, CodeSuccess, both.code(), "responseCode comes first")
}

// The provider's send-to-bank status answers "success" for a failed transfer: the
// request is no failure, and the state is read from transactionStatus.
func TestProviderStatusSuccessWordWithFailedTransfer(t *testing.T) {
	var v struct {
		wireCode
		Data struct {
			Amount, Fees      wireAmount
			TransactionStatus PayoutStatus
			CreatedAt         wireTime
		}
	}
	require.NoError(t, json.Unmarshal(providerFixtures(t)["bank_status_failed.json"], &v))
	assert.False(t, v.code().IsFailure())
	assert.NotEqual(t, CodeSuccess, v.code())
	assert.Equal(t, PayoutStatusFailed, v.Data.TransactionStatus)
	amount, err := v.Data.Amount.minor(majorUnits)
	require.NoError(t, err)
	fees, err := v.Data.Fees.minor(majorUnits) // written "fees"
	require.NoError(t, err)
	assert.Equal(t, []int64{1000, 10}, []int64{amount, fees})
	created, err := v.Data.CreatedAt.get()
	require.NoError(t, err)
	assert.Equal(t, time.Date(2024, 8, 1, 8, 30, 53, 0, time.UTC), created)
}

// Every provider payload passes the SDK's response decoder as a success when its data
// is taken raw: the mandate cancel's data: true among them, which the cancel call reads
// from a json.RawMessage.
func TestProviderPayloadsPassTheResponseDecoder(t *testing.T) {
	// The callbacks that report a failure by their code; the failed send-to-bank status
	// says "success" and the failed mandate callback carries no code.
	failures := map[string]bool{
		"receive_callback_failed_doc.json": true, "directdebit_callback_failed.json": true,
		"send_callback_failed_4075.json": true, "bank_callback_failed_4075.json": true,
	}
	for name, body := range providerFixtures(t) {
		env := new(envelope[json.RawMessage])
		var res response
		err := res.read(&http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(bytes.NewReader(body))}, env)
		require.NoError(t, err, name)
		assert.Equal(t, failures[name], env.header().failed(), name)
	}
	env := new(envelope[json.RawMessage])
	require.NoError(t, json.Unmarshal(providerFixtures(t)["preapproval_cancel.json"], env))
	assert.Equal(t, CodePreapprovalOK, env.code())
	assert.JSONEq(t, `true`, string(env.Data))
}

// jsonNumber is the JSON number grammar: the literals the big.Rat oracle may judge.
var jsonNumber = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?([0-9]+))?$`)

// FuzzWireAmount decodes any literal as an amount field: decoding never fails or
// panics, never costs the enclosing object its other fields, agrees with exact rational
// arithmetic, and a readable amount re-encodes to one that reads the same.
func FuzzWireAmount(f *testing.F) {
	for _, seed := range fixtureAmounts(f) {
		f.Add(seed)
		f.Add(strconv.Quote(seed))
	}
	for _, seed := range []string{
		`0.010`, `1e2`, `-2.5E-1`, `"12.50"`, `" 7 "`, `null`, `""`, `true`, `{}`, `9223372036854775807`,
		`92233720368547757.99`, `9227000000000000000`, `1e-400`, `0e999`, `"\u0031.5"`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, literal string) {
		var a wireAmount
		if err := a.UnmarshalJSON([]byte(literal)); err != nil {
			t.Fatalf("%q: decoding failed: %v", literal, err)
		}

		wrapped := []byte(`{"a":` + literal + `,"b":"kept"}`)
		if json.Valid(wrapped) {
			var v struct {
				A wireAmount `json:"a"`
				B string     `json:"b"`
			}
			if err := json.Unmarshal(wrapped, &v); err != nil || v.B != "kept" {
				t.Fatalf("%q: the enclosing object was lost: %v", literal, err)
			}
			if v.A.form != a.form || v.A.value != a.value {
				t.Fatalf("%q: read as %+v in an object, %+v alone", literal, v.A, a)
			}
		}

		checkAgainstRationals(t, literal, a)

		if a.form == amountInvalid {
			if _, err := json.Marshal(a); err == nil {
				t.Fatalf("%q: an unreadable amount was written back", literal)
			}
			return
		}
		b, err := json.Marshal(a)
		if err != nil {
			t.Fatalf("%q: read as %+v but does not encode: %v", literal, a, err)
		}
		var again wireAmount
		if err := json.Unmarshal(b, &again); err != nil || again != a {
			t.Fatalf("%q: read as %+v, written %s, read back as %+v (%v)", literal, a, b, again, err)
		}
		for _, u := range []amountUnit{minorUnits, majorUnits} {
			v1, err1 := a.minor(u)
			v2, err2 := again.minor(u)
			if v1 != v2 || (err1 == nil) != (err2 == nil) {
				t.Fatalf("%q in unit %d: %d (%v), after a round trip %d (%v)", literal, u, v1, err1, v2, err2)
			}
		}
	})
}

// checkAgainstRationals compares what the reader made of a JSON number (or a numeric
// string holding one) with exact rational arithmetic.
func checkAgainstRationals(t *testing.T, literal string, a wireAmount) {
	text := strings.TrimSpace(literal)
	quoted := strings.HasPrefix(text, `"`)
	if quoted {
		if err := json.Unmarshal([]byte(text), &text); err != nil {
			return
		}
		text = strings.TrimSpace(text)
	}
	m := jsonNumber.FindStringSubmatch(text)
	if m == nil || len(literal) > maxAmountLiteral {
		return
	}
	if exp, err := strconv.Atoi(m[4]); m[4] != "" && (err != nil || exp > 50) {
		return // big.Rat would spend its time on digits no amount has
	}
	r, ok := new(big.Rat).SetString(text)
	if !ok {
		t.Fatalf("%q: the oracle cannot read %q", literal, text)
	}
	integer := !quoted && m[2] == "" && m[3] == ""
	if integer {
		want, err := strconv.ParseInt(text, 10, 64)
		if got, gotErr := a.minor(minorUnits); (err == nil) != (gotErr == nil) || (err == nil && got != want) {
			t.Fatalf("%q: integer read as %d (%v), exactly %d (%v)", literal, got, gotErr, want, err)
		}
	}
	cents := new(big.Rat).Mul(r, big.NewRat(100, 1))
	got, err := a.minor(majorUnits)
	switch {
	case !cents.IsInt():
		if err == nil {
			t.Fatalf("%q is %s minor units, not whole, yet read as %d", literal, cents.RatString(), got)
		}
	case err == nil:
		if cents.Num().Cmp(big.NewInt(got)) != 0 {
			t.Fatalf("%q is %s minor units, read as %d", literal, cents.RatString(), got)
		}
	case cents.Num().CmpAbs(big.NewInt(9e18)) < 0:
		t.Fatalf("%q is %s minor units, which int64 holds, yet refused: %v", literal, cents.RatString(), err)
	}
}

// readTime tries only the layouts a timestamp's shape allows, and reads every text as
// trying each layout in turn does: the product of dates, separators, clocks, fractions,
// zones and trailing text, each quoted as the wire writes it.
func TestWireTimeLayoutsChosenByShapeReadAsEveryLayout(t *testing.T) {
	byEveryLayout := func(s string) (time.Time, bool) {
		for _, layout := range wireTimeLayouts {
			if v, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
				if v = v.UTC(); v.Year() < 0 || v.Year() > 9999 {
					return time.Time{}, false
				}
				return v, true
			}
		}
		return time.Time{}, false
	}
	dates := []string{"2025-01-01", "0000-01-01", "9999-12-31", "2025-13-01", "2025-1-01", "25-01-01"}
	seps := []string{"T", " ", "t", "_", ""}
	clocks := []string{"10:15:29", "23:59:60", "1:15:29", "10:15", ""}
	fractions := []string{"", ".4", ".123456789", ",5", "."}
	zones := []string{"", "Z", "z", "+02:00", "-05:30", "+25:00", "+0200", " +01:00", "-", "+"}
	tails := []string{"", " ", "x", "Z"}
	cases := 0
	for _, d := range dates {
		for _, sep := range seps {
			for _, c := range clocks {
				for _, f := range fractions {
					for _, z := range zones {
						for _, tail := range tails {
							s := d + sep + c + f + z + tail
							cases++
							got := readTime([]byte(`"` + s + `"`))
							want, ok := byEveryLayout(strings.TrimSpace(s))
							if strings.TrimSpace(s) == "" {
								continue
							}
							if ok != (got.err == nil) || !want.Equal(got.at) {
								t.Fatalf("%q read as %v, %v; each layout in turn reads %v, %v", s, got.at, got.err, want, ok)
							}
						}
					}
				}
			}
		}
	}
	// The plain shape the status checks write, with every field at random, in and out of
	// its range (the 29th of February of leap and common years, the 31st of short
	// months, hour 24, second 60), and a character not a digit anywhere.
	seed := uint64(41)
	r := rand.New(rand.NewPCG(seed, seed))
	for range 300_000 {
		b := []byte(fmt.Sprintf("%04d-%02d-%02d%c%02d:%02d:%02d", r.IntN(10000), r.IntN(14), r.IntN(33),
			" T"[r.IntN(2)], r.IntN(26), r.IntN(62), r.IntN(62)))
		if r.IntN(8) == 0 {
			const other = "/ :-T+x\x00"
			b[r.IntN(len(b))] = other[r.IntN(len(other))]
		}
		s := string(b)
		cases++
		got := readTime([]byte(`"` + s + `"`))
		want, ok := byEveryLayout(s)
		if ok != (got.err == nil) || !want.Equal(got.at) || got.at.Location() != time.UTC {
			t.Fatalf("%q read as %v, %v; each layout in turn reads %v, %v", s, got.at, got.err, want, ok)
		}
	}
	t.Logf("%d timestamps (seed %d)", cases, seed)
}
