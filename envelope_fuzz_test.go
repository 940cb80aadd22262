package billing

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// FuzzEnvelope feeds the pipeline's decoder (response.read into envelope[T]) every
// recorded fixture, the provider's under testdata/provider included, and what the fuzzer
// makes of them, for every result type the SDK decodes and every status check's wire
// form. Nothing may panic; a body that is refused is refused as unreadable; an error
// body is kept for the *APIError; and a body accepted as success must re-encode to JSON
// that decodes, again as success, to the same value: nothing accepted is silently
// changed on the way through.
func FuzzEnvelope(f *testing.F) {
	for _, fx := range testdataFixtures(f) {
		f.Add(fx.body)
	}
	f.Add([]byte(`{"success":true,"data":null}`))
	f.Add([]byte(`{"Success":true,"DATA":{"id":"cust_1"},"data":{"id":"cust_2"}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, rt := range envelopeRoundTrips {
			rt.check(t, body)
		}
		for _, rt := range statusRoundTrips {
			rt.check(t, body)
		}
	})
}

// envelopeRoundTrips are the result types the service's answers are decoded into, one
// per response shape of the SDK.
var envelopeRoundTrips = []envelopeRoundTrip{
	roundTripOf[Customer]{}, roundTripOf[Page[CustomerSummary]]{},
	roundTripOf[Product]{}, roundTripOf[Page[ProductSummary]]{}, roundTripOf[Price]{}, roundTripOf[ArchivedPrice]{},
	roundTripOf[Subscription]{}, roundTripOf[SubscriptionState]{},
	roundTripOf[CreditWallet]{}, roundTripOf[CreditChange]{}, roundTripOf[Page[CreditTransaction]]{},
	roundTripOf[Meter]{}, roundTripOf[MeterEvent]{}, roundTripOf[Page[MeterEvent]]{},
	roundTripOf[License]{},
	roundTripOf[Payment]{}, roundTripOf[DirectReceive]{}, roundTripOf[ReceiveTransaction]{},
	roundTripOf[DirectSend]{}, roundTripOf[SendTransaction]{},
	roundTripOf[BankTransfer]{}, roundTripOf[BankTransferTransaction]{},
	roundTripOf[Mandate]{}, roundTripOf[DirectDebit]{}, roundTripOf[DirectDebitTransaction]{},
}

// statusRoundTrips are the status checks as statusCheck reads them, on either wire: the
// wire form under the envelope's code (the provider's word "success" among them),
// converted into the result.
var statusRoundTrips = []envelopeRoundTrip{
	statusRoundTrip[ReceiveTransaction, collectionStatusWire, *ReceiveTransaction]{},
	statusRoundTrip[DirectDebitTransaction, collectionStatusWire, *DirectDebitTransaction]{},
	statusRoundTrip[SendTransaction, payoutStatusWire, *SendTransaction]{},
	statusRoundTrip[BankTransferTransaction, payoutStatusWire, *BankTransferTransaction]{},
}

type statusRoundTrip[T, W any, PT interface {
	*T
	fromStatus(w *W, r StatusResponse)
}] struct{}

// check converts an accepted body as the status check does; the result, in minor units
// whatever the wire, must re-encode to JSON that reads back to the same result.
func (statusRoundTrip[T, W, PT]) check(t *testing.T, body []byte) {
	t.Helper()
	env, ok := readEnvelope[W](t, http.StatusOK, body)
	if !ok {
		return
	}
	result := PT(new(T))
	result.fromStatus(&env.Data, StatusResponse{ResponseCode: env.code(), Message: env.Message})
	first, err := json.Marshal(result)
	if err != nil {
		t.Fatalf("%T: %q was read but does not encode: %v", result, body, err)
	}
	again := PT(new(T))
	if err := json.Unmarshal(first, again); err != nil {
		t.Fatalf("%T: %q was read as %s, which does not decode: %v", result, body, first, err)
	}
	second, err := json.Marshal(again)
	if err != nil || !bytes.Equal(first, second) {
		t.Fatalf("%T: %q was read as\n%s\nwhich decodes to\n%s (%v)", result, body, first, second, err)
	}
}

type envelopeRoundTrip interface {
	check(t *testing.T, body []byte)
}

type roundTripOf[T any] struct{}

func (roundTripOf[T]) check(t *testing.T, body []byte) {
	t.Helper()
	readEnvelope[T](t, http.StatusBadRequest, body) // an error body never panics either
	env, ok := readEnvelope[T](t, http.StatusOK, body)
	if !ok {
		return
	}
	first, err := json.Marshal(env)
	if err != nil {
		t.Fatalf("%T: %q was accepted but does not encode: %v", env, body, err)
	}
	again, ok := readEnvelope[T](t, http.StatusOK, first)
	if !ok {
		t.Fatalf("%T: %q was accepted, but its encoding %s is not", env, body, first)
	}
	second, err := json.Marshal(again)
	if err != nil || !bytes.Equal(first, second) {
		t.Fatalf("%T: %q was accepted as\n%s\nwhich decodes to\n%s (%v)", env, body, first, second, err)
	}
}

// readEnvelope runs body through the pipeline's decoder under status and checks what
// it may do with it. It returns the envelope when the body is a success.
func readEnvelope[T any](t *testing.T, status int, body []byte) (*envelope[T], bool) {
	t.Helper()
	env := new(envelope[T])
	var res response
	err := res.read(&http.Response{
		StatusCode:    status,
		Body:          io.NopCloser(bytes.NewReader(body)),
		ContentLength: int64(len(body)),
	}, env)
	if !res.done || res.status != status {
		t.Fatalf("read left done=%v status=%d for HTTP %d", res.done, res.status, status)
	}
	if status < 200 || status > 299 {
		if err != nil && !errors.Is(err, ErrContradiction) {
			t.Fatalf("an error body is kept, never refused but for a contradiction: %v", err)
		}
		if !bytes.Equal(res.body, body[:min(len(body), maxErrorBodyBytes)]) {
			t.Fatalf("the error body was not kept as sent: %q", res.body)
		}
		return nil, false
	}
	if err != nil {
		if !errors.Is(err, errUnreadableBody) {
			t.Fatalf("refusal %v does not match errUnreadableBody", err)
		}
		return nil, false
	}
	if env.header().failed() {
		if !bytes.Equal(res.body, body) {
			t.Fatalf("a 2xx body reporting failure was not kept for the error: %q", res.body)
		}
		return nil, false
	}
	return env, true
}

// fixtureFile is a recorded body under testdata.
type fixtureFile struct {
	name string // relative to testdata, e.g. "payments/receive_accepted.json"
	body []byte
}

// testdataFixtures returns every JSON fixture under testdata, in name order: the seed
// corpus of the fuzz tests, so each starts from every shape the service is known to send.
func testdataFixtures(tb testing.TB) []fixtureFile {
	tb.Helper()
	var out []fixtureFile
	err := filepath.WalkDir("testdata", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) != ".json" {
			return err
		}
		name := filepath.ToSlash(strings.TrimPrefix(path, "testdata"+string(filepath.Separator)))
		out = append(out, fixtureFile{name: name, body: fixture(tb, name)})
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	if len(out) == 0 {
		tb.Fatal("no fixtures under testdata")
	}
	return out
}

// fixtureLeaves returns, sorted and without repeats, the text of every scalar value in
// the fixtures whose key keep accepts: strings unquoted, numbers as written.
func fixtureLeaves(tb testing.TB, keep func(key string, value any) bool) []string {
	tb.Helper()
	seen := map[string]bool{}
	var walk func(key string, v any)
	walk = func(key string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, inner := range x {
				walk(k, inner)
			}
		case []any:
			for _, inner := range x {
				walk(key, inner)
			}
		case string:
			if keep(key, x) {
				seen[x] = true
			}
		case json.Number:
			if keep(key, x) {
				seen[x.String()] = true
			}
		}
	}
	for _, fx := range testdataFixtures(tb) {
		dec := json.NewDecoder(bytes.NewReader(fx.body))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			tb.Fatalf("%s: %v", fx.name, err)
		}
		walk("", v)
	}
	out := make([]string, 0, len(seen))
	for s := range seen {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// fixtureAmounts returns every number written in the fixtures, and every string under
// an amount-like key: seeds for FuzzDecimalAmount.
func fixtureAmounts(tb testing.TB) []string {
	return fixtureLeaves(tb, func(key string, v any) bool {
		if _, ok := v.(json.Number); ok {
			return true
		}
		k := strings.ToLower(key)
		return strings.Contains(k, "amount") || strings.Contains(k, "charge") || strings.Contains(k, "fee")
	})
}

// fixturePhones returns every phone number and MSISDN in the fixtures: seeds for
// FuzzNormalizePhone.
func fixturePhones(tb testing.TB) []string {
	return fixtureLeaves(tb, func(key string, v any) bool {
		k := strings.ToLower(key)
		_, isString := v.(string)
		return isString && (strings.Contains(k, "phone") || strings.Contains(k, "msisdn") || k == "customernumber")
	})
}
