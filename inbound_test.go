package billing

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// processingData is the data of an answer that says the movement is under way.
const processingData = `"data":{"id":"tx_1","reference":"ref_1","status":"PROCESSING","amount":2500,"fee":0,"currency":"GHS"}`

// spellingContradictions are answers that write one field twice, disagreeing: a failure
// in one spelling, an acceptance in the other. encoding/json keeps the last of two
// casings and wireCode prefers responseCode, so before the inbound gate each read as
// whichever spelling won.
var spellingContradictions = map[string]string{
	"responseCode 2001 beside code 0001":         `{"responseCode":"2001","code":"0001","message":"m",` + processingData + `}`,
	"ResponseCode 0001 beside responseCode 2001": `{"ResponseCode":"0001","responseCode":"2001","message":"m",` + processingData + `}`,
	"success true beside Success false":          `{"success":true,"responseCode":"0001","Success":false,` + processingData + `}`,
	"responseCode written twice":                 `{"responseCode":"0001","responseCode":"2001",` + processingData + `}`,
}

// TestContradictorySpellingsAreOutcomeUnknown answers each of the six money calls with
// a body that says "accepted" in one spelling of a field and "refused" in another. The
// money may have moved: the caller is told ErrOutcomeUnknown, never "nothing moved".
func TestContradictorySpellingsAreOutcomeUnknown(t *testing.T) {
	for name, mc := range moneyCalls {
		for contradiction, body := range spellingContradictions {
			t.Run(name+"/"+contradiction, func(t *testing.T) {
				c, mock := newMockClient(t, WithDisbursementAccount("2020202"))
				mock.RegisterResponder(mc.method, mc.url, httpmock.NewStringResponder(http.StatusOK, body))
				err := mc.call(c)
				require.ErrorIs(t, err, ErrOutcomeUnknown)
				require.ErrorIs(t, err, ErrContradiction)
				var unknown *OutcomeUnknownError
				require.ErrorAs(t, err, &unknown)
				assert.Equal(t, mc.ref, unknown.ClientReference)
				assert.Equal(t, 1, mock.GetTotalCallCount())
			})
		}
	}
}

// TestTrackerSendNotFailedByContradiction: Tracker.Send answered with a contradiction
// leaves the payout pending for its status check; it is never settled failed, which
// would invite paying it again.
func TestTrackerSendNotFailedByContradiction(t *testing.T) {
	for contradiction, body := range spellingContradictions {
		t.Run(contradiction, func(t *testing.T) {
			tr, mock, _ := newTestTracker(t, TrackerOptions{})
			mock.RegisterResponder(http.MethodPost, mockBaseURL+"/v1/payments/send", httpmock.NewStringResponder(http.StatusOK, body))
			_, err := tr.Send(ctx(), validSend())
			require.ErrorIs(t, err, ErrOutcomeUnknown)
			key, _ := keyOf(KindSend, validSend().ClientReference)
			e, err := tr.store.Get(ctx(), key)
			require.NoError(t, err)
			assert.True(t, e.Tracked)
			assert.Nil(t, e.Final, "nothing is settled on a contradiction")
		})
	}
}

// TestContradictoryCallbackRefused: a callback that writes its code twice, disagreeing,
// is refused 403 and reaches no merchant code.
func TestContradictoryCallbackRefused(t *testing.T) {
	body := `{"ResponseCode":"2001","responseCode":"0000","Message":"failed","Data":{"Amount":25,"ClientReference":"rcv1","TransactionId":"t1","AmountAfterCharges":25}}`
	_, err := ParseEvent([]byte(body))
	require.ErrorIs(t, err, ErrContradiction)
	require.ErrorIs(t, err, ErrInvalidEvent)
	called := false
	h := NewWebhookHandler(func(context.Context, Event) error { called = true; return nil })
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body)))
	assert.Equal(t, http.StatusForbidden, rec.Code)
	assert.False(t, called)
}

// jsonNode is a JSON value kept in the order written, so that a test can add members to
// any object of a fixture and write it back; scalars are kept as written.
type jsonNode struct {
	object  bool
	array   bool
	members []jsonMember
	items   []*jsonNode
	raw     []byte
}

type jsonMember struct {
	key   string
	value *jsonNode
}

func parseNode(t testing.TB, body []byte) *jsonNode {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	n, err := readNode(dec)
	require.NoError(t, err)
	return n
}

func readNode(dec *json.Decoder) (*jsonNode, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch v := tok.(type) {
	case json.Delim:
		n := &jsonNode{object: v == '{', array: v == '['}
		for dec.More() {
			if n.object {
				key, err := dec.Token()
				if err != nil {
					return nil, err
				}
				child, err := readNode(dec)
				if err != nil {
					return nil, err
				}
				n.members = append(n.members, jsonMember{key.(string), child})
			} else {
				child, err := readNode(dec)
				if err != nil {
					return nil, err
				}
				n.items = append(n.items, child)
			}
		}
		_, err := dec.Token()
		return n, err
	case json.Number:
		return &jsonNode{raw: []byte(v)}, nil
	default:
		raw, _ := json.Marshal(v)
		return &jsonNode{raw: raw}, nil
	}
}

func (n *jsonNode) write(w *bytes.Buffer) {
	switch {
	case n.object:
		w.WriteByte('{')
		for i, m := range n.members {
			if i > 0 {
				w.WriteByte(',')
			}
			k, _ := json.Marshal(m.key)
			w.Write(k)
			w.WriteByte(':')
			m.value.write(w)
		}
		w.WriteByte('}')
	case n.array:
		w.WriteByte('[')
		for i, it := range n.items {
			if i > 0 {
				w.WriteByte(',')
			}
			it.write(w)
		}
		w.WriteByte(']')
	default:
		w.Write(n.raw)
	}
}

func (n *jsonNode) bytes() []byte {
	var b bytes.Buffer
	n.write(&b)
	return b.Bytes()
}

// memberSite is one member of one object of a body: where a spelling can be added.
type memberSite struct {
	object *jsonNode
	index  int
	path   string
}

// sites lists every member of every object in n, depth first.
func (n *jsonNode) sites(path string) []memberSite {
	var out []memberSite
	for i, m := range n.members {
		p := path + "." + m.key
		out = append(out, memberSite{n, i, p})
		out = append(out, m.value.sites(p)...)
	}
	for i, it := range n.items {
		out = append(out, it.sites(fmt.Sprintf("%s[%d]", path, i))...)
	}
	return out
}

// otherValue returns a value that disagrees with n: another string, another number,
// the other boolean, or a value of another type.
func otherValue(n *jsonNode) *jsonNode {
	switch {
	case n.object, n.array:
		return &jsonNode{raw: []byte(`"contradiction"`)}
	case len(n.raw) > 0 && n.raw[0] == '"':
		var s string
		_ = json.Unmarshal(n.raw, &s)
		raw, _ := json.Marshal(s + "X")
		return &jsonNode{raw: raw}
	case string(n.raw) == "true":
		return &jsonNode{raw: []byte("false")}
	case string(n.raw) == "false":
		return &jsonNode{raw: []byte("true")}
	case string(n.raw) == "null":
		return &jsonNode{raw: []byte(`"0001"`)}
	}
	if string(n.raw) == "0" || string(n.raw) == "-0" {
		return &jsonNode{raw: []byte("1")}
	}
	return &jsonNode{raw: append(append([]byte(nil), n.raw...), '1')} // 25 -> 251, 0.5 -> 0.51
}

// respellings are the other spellings of the key at path that the tolerant readers
// take for it: the key itself, its case flipped, and the other keys of its alias group
// where that group is read (the top level, or the top-level data).
func respellings(path, key string) map[string]string {
	out := map[string]string{"same key": key}
	if flipped := flipCase(key); flipped != key {
		out["case flipped"] = flipped
	}
	scope := scopeOther
	switch parent := strings.TrimSuffix(path, "."+key); {
	case parent == "":
		scope = scopeRoot
	case strings.EqualFold(parent, ".data"):
		scope = scopeData
	}
	for _, group := range fieldAliases {
		if group.scope != scope {
			continue
		}
		for i, name := range group.names {
			if strings.EqualFold(name, key) {
				out["alias "+group.names[1-i]] = group.names[1-i]
			}
		}
	}
	return out
}

func flipCase(s string) string {
	r := []rune(s)
	for i, c := range r {
		if unicode.IsUpper(c) {
			r[i] = unicode.ToLower(c)
		} else {
			r[i] = unicode.ToUpper(c)
		}
	}
	return string(r)
}

// respelledBody returns body with a member added after site: spelled as spelling, with
// value.
func respelledBody(root *jsonNode, site memberSite, spelling string, value *jsonNode) []byte {
	saved := site.object.members
	added := append(append(append([]jsonMember(nil), saved[:site.index+1]...), jsonMember{spelling, value}), saved[site.index+1:]...)
	site.object.members = added
	defer func() { site.object.members = saved }()
	return root.bytes()
}

// inboundFixtures returns every recorded body under testdata, both wires, the provider's
// documented payloads included (testdata/provider holds them as documented).
func inboundFixtures(t testing.TB) []fixtureFile {
	return testdataFixtures(t)
}

// providerWireDir holds the provider's documented payloads beside the spec.

// spellingWant is what a respelled body must read as.
type spellingWant uint8

const (
	spellingContradicts spellingWant = iota // a value that disagrees: a contradiction
	spellingAgrees                          // the same value again: read as recorded
	spellingFillsAlias                      // an alias beside an empty spelling: no contradiction
)

// forEachSpelling calls fn for every member of every object of every fixture, with the
// body that adds beside it each spelling the readers take for its key, once with a value
// that disagrees and once with the same value written again. It returns the count.
func forEachSpelling(t *testing.T, fixtures []fixtureFile, fn func(t *testing.T, fx fixtureFile, desc string, body []byte, want spellingWant)) int {
	cases := 0
	for _, fx := range fixtures {
		root := parseNode(t, fx.body)
		for _, site := range root.sites("") {
			m := site.object.members[site.index]
			for how, spelling := range respellings(site.path, m.key) {
				for _, agree := range []bool{false, true} {
					value := otherValue(m.value)
					if agree {
						value = m.value
					}
					want := spellingContradicts
					switch {
					case agree:
						want = spellingAgrees
					case strings.HasPrefix(how, "alias") && (isEmptyValue(m.value.raw) || isEmptyValue(value.raw)):
						// The alias readers read the first spelling holding a value.
						want = spellingFillsAlias
					}
					body := respelledBody(root, site, spelling, value)
					desc := fmt.Sprintf("%s %s (%s %q, agree=%v): %s", fx.name, site.path, how, spelling, agree, body)
					fn(t, fx, desc, body, want)
					cases++
				}
			}
		}
	}
	return cases
}

// TestInboundGateEverySpelling is the gate's generative test: every key of every
// fixture, written again in each spelling the tolerant readers fold into it, with a
// value that disagrees (a contradiction) and with its own value (harmless).
func TestInboundGateEverySpelling(t *testing.T) {
	fixtures := inboundFixtures(t)
	for _, fx := range fixtures {
		require.NoError(t, inboundVerdict(fx.body), "%s passes the gate as recorded", fx.name)
	}
	cases := forEachSpelling(t, fixtures, func(t *testing.T, fx fixtureFile, desc string, body []byte, want spellingWant) {
		err := inboundVerdict(body)
		if want != spellingContradicts {
			if err != nil {
				t.Fatalf("%s: %v", desc, err)
			}
		} else if !errors.Is(err, ErrContradiction) {
			t.Fatalf("%s: %v, want a contradiction", desc, err)
		}
	})
	t.Logf("%d spellings of %d fixtures checked", cases, len(fixtures))
}

// TestInboundGateMatchesEncodingJSON: the gate takes for one field exactly the keys
// encoding/json matches to one struct field, folded runes and escapes included.
func TestInboundGateMatchesEncodingJSON(t *testing.T) {
	for _, tt := range []struct {
		body          string
		contradiction bool
	}{
		{`{"kind":"a","\u212aind":"b"}`, true}, // KELVIN SIGN folds to k
		{`{"class":"a","claſs":"b"}`, true},    // LONG S folds to s
		{`{"respons\u0065Code":"0000","responseCode":"2001"}`, true},
		{`{"respons\u0065Code":"0000","responseCode":"0000"}`, false},
		{`{"a":"\u0041","a":"A"}`, false},
		{`{"a":{"x":1, "y":[1,2]},"A":{"x":1,"y":[1, 2]}}`, false},
		{`{"a":{"x":1},"A":{"x":2}}`, true},
		{`{"a":1,"b":1}`, false},
		{`{"a":{"code":"1"},"code":"2"}`, false}, // different objects
		{`[{"id":"1"},{"ID":"2"}]`, false},
	} {
		err := inboundVerdict([]byte(tt.body))
		if tt.contradiction {
			assert.ErrorIs(t, err, ErrContradiction, tt.body)
		} else {
			assert.NoError(t, err, tt.body)
		}
	}
	// A large object is indexed, not compared pairwise: contradictions are still found.
	var b strings.Builder
	b.WriteString(`{`)
	for i := range 100 {
		fmt.Fprintf(&b, `"k%d":%d,`, i, i)
	}
	b.WriteString(`"K7":8}`)
	assert.ErrorIs(t, inboundVerdict([]byte(b.String())), ErrContradiction)
	assert.NoError(t, inboundVerdict([]byte(strings.Replace(b.String(), `"K7":8`, `"K7":7`, 1))))
}

// TestMoneyAnswerEverySpelling answers each money call with its own acceptance on both
// wires, every key of it written again in each spelling: disagreeing, the answer is
// ErrOutcomeUnknown (the money may have moved); agreeing, it reads as the recorded one.
func TestMoneyAnswerEverySpelling(t *testing.T) {
	var fixtures []fixtureFile
	owner := map[string]string{}
	for name, files := range moneyAcceptances {
		for _, file := range files {
			fixtures = append(fixtures, fixtureFile{name: file, body: fixture(t, file)})
			owner[file] = name
		}
	}
	c, mock := newMockClient(t, WithDisbursementAccount("2020202"))
	var answer []byte
	for _, mc := range moneyCalls {
		mock.RegisterResponder(mc.method, mc.url, func(*http.Request) (*http.Response, error) {
			return httpmock.NewBytesResponse(http.StatusOK, answer), nil
		})
	}
	recorded := map[string]error{}
	for _, fx := range fixtures {
		answer = fx.body
		recorded[fx.name] = moneyCalls[owner[fx.name]].call(c)
		require.NoError(t, recorded[fx.name], "%s accepts %s", owner[fx.name], fx.name)
	}
	cases := forEachSpelling(t, fixtures, func(t *testing.T, fx fixtureFile, desc string, body []byte, want spellingWant) {
		answer = body
		err := moneyCalls[owner[fx.name]].call(c)
		switch {
		case want == spellingAgrees && err != nil:
			t.Fatalf("%s: %v", desc, err)
		case want == spellingFillsAlias && errors.Is(err, ErrContradiction):
			t.Fatalf("%s: %v", desc, err)
		case want == spellingContradicts && (!errors.Is(err, ErrOutcomeUnknown) || !errors.Is(err, ErrContradiction)):
			t.Fatalf("%s: %v, want ErrOutcomeUnknown for a contradiction", desc, err)
		}
	})
	t.Logf("%d spellings of %d money answers checked", cases, len(fixtures))
}

// moneyAcceptances are the acceptances of the six money calls on both wires.
var moneyAcceptances = map[string][]string{
	"checkout":     {"payments/checkout_created.json"},
	"receive":      {"payments/receive_accepted.json", "provider/receive_initiate_response_doc.json"},
	"send":         {"payouts/send_accepted.json", "provider/send_initiate_response.json"},
	"send to bank": {"payouts/bank_accepted.json", "provider/bank_initiate_response.json"},
	"mandate":      {"mandates/create_ussd.json", "mandates/create_otp.json", "provider/preapproval_initiate_ussd.json", "provider/preapproval_initiate_otp.json"},
	"direct debit": {"mandates/charge_accepted.json", "provider/directdebit_charge_response.json"},
}

// TestEventEverySpelling delivers every callback and webhook fixture of both wires with
// every key written again in each spelling: disagreeing, ParseEvent refuses it as a
// contradiction and the handler answers 403 without calling merchant code; agreeing, it
// parses as the recorded one.
func TestEventEverySpelling(t *testing.T) {
	var fixtures []fixtureFile
	recorded := map[string]Event{}
	for _, fx := range inboundFixtures(t) {
		if ev, err := ParseEvent(fx.body); err == nil {
			fixtures = append(fixtures, fx)
			recorded[fx.name] = ev
		}
	}
	require.NotEmpty(t, fixtures)
	calls := 0
	h := NewWebhookHandler(func(context.Context, Event) error { calls++; return nil })
	cases := forEachSpelling(t, fixtures, func(t *testing.T, fx fixtureFile, desc string, body []byte, want spellingWant) {
		ev, err := ParseEvent(body)
		if want == spellingFillsAlias {
			if errors.Is(err, ErrContradiction) {
				t.Fatalf("%s: %v", desc, err)
			}
			return
		}
		if want == spellingAgrees {
			if err != nil {
				t.Fatalf("%s: %v", desc, err)
			}
			want := recorded[fx.name]
			if ev.Kind() != want.Kind() || ev.Reference() != want.Reference() || ev.State() != want.State() || ev.Code() != want.Code() {
				t.Fatalf("%s: read as %s %s %s %s", desc, ev.Kind(), ev.Reference(), ev.State(), ev.Code())
			}
			return
		}
		if !errors.Is(err, ErrContradiction) {
			t.Fatalf("%s: %v, want a contradiction", desc, err)
		}
		before := calls
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body)))
		if rec.Code != http.StatusForbidden || calls != before {
			t.Fatalf("%s: answered %d, merchant code called %d times", desc, rec.Code, calls-before)
		}
	})
	t.Logf("%d spellings of %d event fixtures checked", cases, len(fixtures))
}

// FuzzInboundGate: the gate reads exactly the bodies encoding/json reads, never panics,
// and finds a contradiction only where two spellings of one field disagree. The
// canonical form it returns is the same value to encoding/json, holds no escape but
// those JSON requires, and is its own canonical form.
func FuzzInboundGate(f *testing.F) {
	for _, fx := range inboundFixtures(f) {
		f.Add(fx.body)
	}
	for _, body := range spellingContradictions {
		f.Add([]byte(body))
	}
	f.Add([]byte(`{"\u0052esponseCode":"0000","a":"\ud83d\ude00\ud800\udc00x\udc00\/\u0000\"","b":["\u00e9\n"]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		canonical, err := readInbound(body)
		if err == nil {
			checkCanonical(t, body, canonical)
		}
		valid := json.Valid(body)
		switch {
		case errors.Is(err, ErrContradiction):
			if !valid {
				t.Fatalf("a contradiction in invalid JSON %q", body)
			}
		case err != nil && valid:
			t.Fatalf("valid JSON %q refused: %v", body, err)
		case err == nil && !valid:
			t.Fatalf("invalid JSON %q read", body)
		}
	})
}

// BenchmarkEnvelope measures the pipeline's read of a money answer (the inbound gate,
// then the decode into the envelope) beside a bare json.Unmarshal of the same body into
// the same envelope. x-unmarshal is the ratio of the two (the goal: at most 1.5).
func BenchmarkEnvelope(b *testing.B) {
	for _, tt := range []struct {
		file string
		into func() decodeTarget
	}{
		{"payments/receive_accepted.json", func() decodeTarget { return new(envelope[DirectReceive]) }},
		{"provider/receive_initiate_response_doc.json", func() decodeTarget { return new(envelope[DirectReceive]) }},
		{"payouts/send_status_success.json", func() decodeTarget { return new(envelope[payoutStatusWire]) }},
		{"provider/send_status_success.json", func() decodeTarget { return new(envelope[payoutStatusWire]) }},
		{"customers/customer.json", func() decodeTarget { return new(envelope[Customer]) }},
	} {
		body := fixture(b, tt.file)
		name := strings.ReplaceAll(strings.TrimSuffix(tt.file, ".json"), "/", "_")
		read := func() error {
			var res response
			return res.read(&http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body))},
				tt.into())
		}
		raw := func() error { return json.Unmarshal(body, tt.into()) }
		b.Run(name+"/impl=sdk", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := read(); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/impl=raw", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := raw(); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/ratio", func(b *testing.B) {
			benchRatio(b, read, raw)
		})
	}
}

// benchRatio runs sdk and raw interleaved in small batches, so that a busy machine
// slows both alike, and reports sdk's time over raw's.
func benchRatio(b *testing.B, sdk, raw func() error) {
	var a, r int64
	for b.Loop() {
		start := time.Now().UnixNano()
		for range 20 {
			_ = sdk()
		}
		mid := time.Now().UnixNano()
		for range 20 {
			_ = raw()
		}
		a, r = a+mid-start, r+time.Now().UnixNano()-mid
	}
	b.ReportMetric(float64(a)/float64(r), "x-unmarshal")
}

// BenchmarkInboundGate measures the gate alone on the bodies of BenchmarkEnvelope.
func BenchmarkInboundGate(b *testing.B) {
	for _, file := range []string{"payments/receive_accepted.json", "events/payment_succeeded.json", "customers/customer.json"} {
		benchGate(b, strings.ReplaceAll(strings.TrimSuffix(file, ".json"), "/", "_"), fixture(b, file))
	}
	// The customer with 24 members more than the SDK reads (35 in all): an object past
	// smallObject, indexed.
	benchGate(b, "customers_wide", wideCustomer(b, fixture(b, "customers/customer.json")))
}

func benchGate(b *testing.B, name string, body []byte) {
	b.Run(name, func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if err := inboundVerdict(body); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// statusAnswers are recorded status checks of every kind, both wires, with the movement
// each answers about.
var statusAnswers = map[string]movement{
	"confirm/receive_status_order1042.json":            {Kind: KindReceive, ClientReference: "order1042"},
	"confirm/charge_status_debitMarch2025.json":        {Kind: KindDirectDebit, ClientReference: "debitMarch2025"},
	"confirm/send_status_payout2001.json":              {Kind: KindSend, ClientReference: "payout2001"},
	"confirm/send_status_refund1042.json":              {Kind: KindSend, ClientReference: "refund1042"},
	"confirm/bank_status_supplier88.json":              {Kind: KindBankTransfer, ClientReference: "supplier88"},
	"confirm/mandate_status_mandate2025ama.json":       {Kind: KindMandate, ClientReference: "mandate2025ama"},
	"confirm/checkout_get_ref_7Q2K9XW4LM.json":         {Kind: KindCheckout, ClientReference: "order7", ServiceReference: "ref_7Q2K9XW4LM"},
	"provider/receive_status_paid_doc.json":            {Kind: KindReceive, ClientReference: "1sc2rc8nwmchngs9ds2f1dmn"},
	"provider/directdebit_status_paid.json":            {Kind: KindDirectDebit, ClientReference: "3jL2KlUy3vt21debitC"},
	"provider/send_status_success.json":                {Kind: KindSend, ClientReference: "pay101"},
	"provider/bank_status_success.json":                {Kind: KindBankTransfer, ClientReference: "sendToBank101"},
	"provider/preapproval_status.json":                 {Kind: KindMandate, ClientReference: "3jL2KlUy3vt21debitC"},
	"provider/receive_status_unpaid_doc.json":          {Kind: KindReceive, ClientReference: "1sc2rc8nwmchngs9ds2f1dmn"},
	"payments/checkout_paid_mobile_money.json":         {Kind: KindCheckout, ClientReference: "order7"},
	"payouts/bank_status_failed.json":                  {Kind: KindBankTransfer, ClientReference: "supplier88"},
	"mandates/charge_status_failed.json":               {Kind: KindDirectDebit, ClientReference: "debit1"},
	"payments/receive_status_unpaid_success_code.json": {Kind: KindReceive, ClientReference: "rcv1044"},
}

// TestStatusCheckEverySpelling answers the status check of every kind, on both wires,
// with every key of its recorded answer written again in each spelling: disagreeing,
// the status check is no answer (the movement stays as it was); agreeing, it reads as
// recorded.
func TestStatusCheckEverySpelling(t *testing.T) {
	c, mock := newMockClient(t, WithDisbursementAccount("2020202"))
	var answer []byte
	mock.RegisterNoResponder(func(*http.Request) (*http.Response, error) {
		return httpmock.NewBytesResponse(http.StatusOK, answer), nil
	})
	var fixtures []fixtureFile
	recorded := map[string]*Outcome{}
	for file, m := range statusAnswers {
		fx := fixtureFile{name: file, body: fixture(t, file)}
		answer = fx.body
		o, err := movementStatus(ctx(), c, m)
		if errors.Is(err, errAnsweredOther) {
			continue // names another reference than the one this table gives it
		}
		require.NoError(t, err, file)
		fixtures = append(fixtures, fx)
		recorded[file] = o
	}
	require.GreaterOrEqual(t, len(fixtures), 10)
	cases := forEachSpelling(t, fixtures, func(t *testing.T, fx fixtureFile, desc string, body []byte, want spellingWant) {
		answer = body
		o, err := movementStatus(ctx(), c, statusAnswers[fx.name])
		switch want {
		case spellingContradicts:
			if !errors.Is(err, ErrContradiction) {
				t.Fatalf("%s: %v (%v), want a contradiction", desc, o, err)
			}
		case spellingAgrees:
			if err != nil || o.State != recorded[fx.name].State {
				t.Fatalf("%s: %v (%v), want %s", desc, o, err, recorded[fx.name].State)
			}
		default:
			if errors.Is(err, ErrContradiction) {
				t.Fatalf("%s: %v", desc, err)
			}
		}
	})
	t.Logf("%d spellings of %d status checks checked", cases, len(fixtures))
}

// A mandate's id under the spec's key and the provider's, in an answer's data and at the
// top of the provider's callback: disagreeing, a contradiction; agreeing, harmless.
func TestInboundGateReadsThePreApprovalIDSpellingsAsOne(t *testing.T) {
	for _, body := range []string{
		`{"data":{"servicePreApprovalId":"pre_1","hubtelPreApprovalId":"pre_2"}}`,
		`{"Data":{"hubtelPreapprovalId":"pre_1","ServicePreApprovalId":"pre_2"}}`,
		`{"HubtelPreapprovalId":"pre_1","servicePreApprovalId":"pre_2"}`,
	} {
		require.ErrorIs(t, inboundVerdict([]byte(body)), ErrContradiction, body)
		agreeing := strings.ReplaceAll(body, "pre_2", "pre_1")
		require.NoError(t, inboundVerdict([]byte(agreeing)), agreeing)
	}
}

// gateErr is the inbound gate's verdict on body, its canonical form set aside.
func inboundVerdict(body []byte) error {
	_, err := readInbound(body)
	return err
}

// checkCanonical checks the canonical form of a body the gate read.
func checkCanonical(t *testing.T, body, canonical []byte) {
	t.Helper()
	decode := func(b []byte) any {
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("%q: %v", b, err)
		}
		return v
	}
	if want, got := decode(body), decode(canonical); !assert.ObjectsAreEqual(want, got) {
		t.Fatalf("%q reads as %#v, its canonical form %q as %#v", body, want, canonical, got)
	}
	for i := 0; i < len(canonical); i++ {
		if canonical[i] != '\\' {
			continue
		}
		i++
		switch canonical[i] {
		case '"', '\\', 'n', 'r', 't':
		case 'u':
			if c, _ := hex4(canonical[i+1 : i+5]); c >= 0x20 || c == '\n' || c == '\r' || c == '\t' {
				t.Fatalf("%q: the canonical form %q escapes %q", body, canonical, c)
			}
			i += 4
		default:
			t.Fatalf("%q: the canonical form %q keeps the escape \\%c", body, canonical, canonical[i])
		}
	}
	again, err := readInbound(canonical)
	if err != nil || !bytes.Equal(again, canonical) {
		t.Fatalf("%q: the canonical form %q reads again as %q (%v)", body, canonical, again, err)
	}
}

// The index of a wide object is used again for the next one: each object is checked
// against its own members only, whether the wide objects follow one another in an array
// or nest, and a disagreement in any of them is still found.
func TestInboundGateWideObjectsOneAfterAnotherAndNested(t *testing.T) {
	wide := func(extra string) string {
		var b strings.Builder
		b.WriteString(`{`)
		for i := range 2 * smallObject {
			fmt.Fprintf(&b, `"k%d":%d,`, i, i)
		}
		b.WriteString(extra)
		b.WriteString(`"last":0}`)
		return b.String()
	}
	page := `{"items":[` + wide("") + `,` + wide("") + `,` + wide("") + `]}`
	assert.NoError(t, inboundVerdict([]byte(page)), "the same keys in sibling objects are no contradiction")
	assert.ErrorIs(t, inboundVerdict([]byte(`{"items":[`+wide("")+`,`+wide("")+`,`+wide(`"K3":4,`)+`]}`)), ErrContradiction)
	assert.NoError(t, inboundVerdict([]byte(`{"items":[`+wide("")+`,`+wide("")+`,`+wide(`"K3":3,`)+`]}`)))

	nested := wide(`"inner":` + wide("") + `,`)
	assert.NoError(t, inboundVerdict([]byte(nested)), "an inner object's keys are its own")
	assert.ErrorIs(t, inboundVerdict([]byte(wide(`"inner":`+wide(`"k1":2,`)+`,`))), ErrContradiction, "inside the inner object")
	assert.ErrorIs(t, inboundVerdict([]byte(wide(`"inner":`+wide("")+`,"K5":6,`))), ErrContradiction, "in the outer object after the inner one ended")
	for range 3 { // with readers from the pool, whatever they read before
		assert.ErrorIs(t, inboundVerdict([]byte(wide(`"k7":8,`))), ErrContradiction)
		assert.NoError(t, inboundVerdict([]byte(page)))
	}
}

// The gate finds a contradiction in an object exactly when two of its members are one
// field (sameField: a casing, an escaped spelling or an alias of one another) with
// values that differ, whatever the shortcuts it takes before comparing two keys: random
// objects at the top level and under data, small and past smallObject, of keys drawn
// from every alias group's names, their casings, escaped spellings and keys of other
// lengths, each member compared by the reference with every other.
func TestInboundGateFindsEveryContradictionAPairwiseReadFinds(t *testing.T) {
	seed := uint64(42)
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, seed))
	var names []string
	for _, group := range fieldAliases {
		names = append(names, group.names[:]...)
	}
	names = append(names, "data", "amount", "Amount", "a", "ab", "abc", "status", "currency")
	spell := func(name string) string {
		b := []byte(name)
		for i := range b {
			if r.IntN(3) == 0 && b[i] >= 'a' && b[i] <= 'z' {
				b[i] -= 'a' - 'A'
			}
		}
		if r.IntN(6) == 0 { // an escaped spelling: no longer plain
			return fmt.Sprintf(`\u%04x`, b[0]) + string(b[1:])
		}
		return string(b)
	}
	for range 20_000 {
		n := 1 + r.IntN(3*smallObject/2)
		type member struct{ key, value string }
		members := make([]member, n)
		var obj strings.Builder
		obj.WriteString("{")
		for i := range members {
			members[i] = member{spell(names[r.IntN(len(names))]), []string{`"1"`, `"2"`, `1`}[r.IntN(3)]}
			if i > 0 {
				obj.WriteString(",")
			}
			fmt.Fprintf(&obj, `"%s":%s`, members[i].key, members[i].value)
		}
		obj.WriteString("}")
		for _, scope := range []inboundScope{scopeRoot, scopeData} {
			body := obj.String()
			if scope == scopeData {
				body = `{"data":` + body + `}`
			}
			want := false
			ms := make([]inboundMember, n)
			for i, m := range members {
				key := []byte(m.key)
				ms[i] = inboundMember{key: key, plain: !strings.Contains(m.key, `\`)}
				ms[i].alias = aliasOfReference(&ms[i], scope)
			}
			for i := range ms {
				for j := range i {
					if sameField(&ms[j], &ms[i]) && members[i].value != members[j].value {
						want = true
					}
				}
			}
			err := inboundVerdict([]byte(body))
			if got := errors.Is(err, ErrContradiction); got != want || (err != nil && !got) {
				t.Fatalf("%s: the gate says %v, comparing every pair finds a contradiction: %v", body, err, want)
			}
		}
	}
}

// aliasOfReference is aliasOf without its shortcut: every name of every group of the
// scope compared.
func aliasOfReference(m *inboundMember, scope inboundScope) int8 {
	for i := range fieldAliases {
		if fieldAliases[i].scope != scope {
			continue
		}
		for _, name := range fieldAliases[i].names {
			if keyIs(m, name) {
				return int8(i + 1)
			}
		}
	}
	return 0
}
