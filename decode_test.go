package billing

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// decodeAgreement checks decodeJSON against json.Unmarshal for one type.
type decodeAgreement interface {
	agree(t testing.TB, body []byte)
	name() string
}

type agreeOf[T any] struct{}

func (agreeOf[T]) name() string { return fmt.Sprintf("%T", *new(T)) }

// agree decodes body into a T both ways: both must fail or both succeed with the same
// value, and a failure must say the same.
func (agreeOf[T]) agree(t testing.TB, body []byte) {
	t.Helper()
	var fast, slow T
	errFast := decodeJSON(body, &fast)
	errSlow := json.Unmarshal(body, &slow)
	if (errFast == nil) != (errSlow == nil) || (errSlow != nil && errFast.Error() != errSlow.Error()) {
		t.Fatalf("%T from %q: decodeJSON says %v, json.Unmarshal %v", fast, body, errFast, errSlow)
	}
	if errSlow == nil && !reflect.DeepEqual(fast, slow) {
		t.Fatalf("%T from %q:\ndecodeJSON     %#v\njson.Unmarshal %#v", fast, body, fast, slow)
	}
}

// wireAgreements are the wire forms the results read themselves through
// (unmarshalWire); TestDecodeAgreementsListEveryWireForm keeps the list whole.
var wireAgreements = []decodeAgreement{
	agreeOf[acceptedWire]{}, agreeOf[payoutStatusWire]{}, agreeOf[transactionWire]{}, agreeOf[payoutWire]{},
	agreeOf[mandateWire]{}, agreeOf[collectionStatusWire]{},
}

// decodeAgreements are every type the pipeline decodes a body into: each result type of
// envelopeRoundTrips and each wire form of statusRoundTrips, bare and in its envelope,
// and the wire forms.
func decodeAgreements() []decodeAgreement {
	var all []decodeAgreement
	for _, rt := range envelopeRoundTrips {
		all = append(all, rt.(interface{ agreements() []decodeAgreement }).agreements()...)
	}
	for _, rt := range statusRoundTrips {
		all = append(all, rt.(interface{ agreements() []decodeAgreement }).agreements()...)
	}
	return append(all, wireAgreements...)
}

func (roundTripOf[T]) agreements() []decodeAgreement {
	return []decodeAgreement{agreeOf[T]{}, agreeOf[envelope[T]]{}}
}

func (statusRoundTrip[T, W, PT]) agreements() []decodeAgreement {
	return []decodeAgreement{agreeOf[W]{}, agreeOf[envelope[W]]{}}
}

// Every wire form a result reads itself through is among wireAgreements: a form added
// later is checked at once.
func TestDecodeAgreementsListEveryWireForm(t *testing.T) {
	listed := map[string]bool{}
	for _, a := range wireAgreements {
		listed[strings.TrimPrefix(a.name(), "billing.")] = true
	}
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	use := regexp.MustCompile(`unmarshalWire\[(\w+)`)
	found := 0
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		src, err := os.ReadFile(file)
		require.NoError(t, err)
		for _, m := range use.FindAllSubmatch(src, -1) {
			if name := string(m[1]); name != "W" {
				found++
				require.True(t, listed[name], "%s reads through %s, which wireAgreements does not list", file, name)
			}
		}
	}
	require.NotZero(t, found)
}

// decodeValues are what a value is swapped for: every kind of JSON value, strings that
// need unescaping or replacing, numbers of every form, and nesting.
var decodeValues = []string{
	`null`, `true`, `false`, `0`, `-12`, `3.25`, `1e3`, `12345678901234567890`, `""`, `"x"`,
	`"caf\u00e9 \"q\""`, "\"\xff\xfe\"", `"2025-01-15T10:22:33Z"`, `"1.50"`, `{}`, `[]`,
	`{"a":[1,{"b":null}],"c":"d"}`, `[1,"a",null,{}]`,
}

// decodeMutations returns body and, for each key it holds, the body with that key's
// value swapped for each of decodeValues, the key written in other cases and with an
// escape, and the member written twice; then the body cut short, padded and trailed.
func decodeMutations(body []byte) [][]byte {
	out := [][]byte{body}
	keys := regexp.MustCompile(`"([A-Za-z_][A-Za-z0-9_]*)"\s*:\s*`)
	for _, m := range keys.FindAllSubmatchIndex(body, -1) {
		keyStart, keyEnd, valueStart := m[2], m[3], m[1]
		valueEnd, ok := scanValue(body, valueStart, 0)
		if !ok {
			continue
		}
		key := string(body[keyStart:keyEnd])
		with := func(parts ...string) []byte {
			return []byte(string(body[:keyStart-1]) + strings.Join(parts, "") + string(body[valueEnd:]))
		}
		value := string(body[valueStart:valueEnd])
		for _, v := range decodeValues {
			out = append(out, with(`"`, key, `":`, v))
		}
		out = append(out,
			with(`"`, strings.ToUpper(key), `":`, value),
			with(`"`, strings.ToLower(key), `":`, value),
			with(`"\u00`, fmt.Sprintf("%x", key[0]), key[1:], `":`, value),
			with(`"`, key, `":`, value, `,"`, key, `":`, value),
			with(`"`, key, `" : `, value, " "),
		)
	}
	for _, cut := range []int{1, len(body) / 3, len(body) / 2, len(body) - 1} {
		if cut > 0 && cut < len(body) {
			out = append(out, body[:cut])
		}
	}
	return append(out, append([]byte(" \n\t"), body...), append(slices.Clone(body), " x"...), append(slices.Clone(body), '}'))
}

// decodeJSON agrees with json.Unmarshal on every recorded body and mutations of it, for
// every type the pipeline decodes into. Each fixture's mutations are taken one in
// BILLING_DECODE_STRIDE (default 8, a different one for each fixture); 1 takes them
// all, about 40,000 bodies.
func TestDecodeJSONAgreesWithEncodingJSON(t *testing.T) {
	stride := 8
	if s := os.Getenv("BILLING_DECODE_STRIDE"); s != "" {
		n, err := strconv.Atoi(s)
		require.NoError(t, err, "BILLING_DECODE_STRIDE")
		stride = max(n, 1)
	}
	agreements := decodeAgreements()
	bodies := 0
	for i, fx := range testdataFixtures(t) {
		for j, body := range decodeMutations(fx.body) {
			if j != 0 && (i+j)%stride != 0 {
				continue
			}
			bodies++
			for _, a := range agreements {
				a.agree(t, body)
			}
		}
	}
	t.Logf("%d bodies (one mutation in %d), each into %d types", bodies, stride, len(agreements))
}

// FuzzDecodeJSONAgreesWithEncodingJSON: whatever the bytes, decodeJSON returns what
// json.Unmarshal returns, for every type the pipeline decodes into.
func FuzzDecodeJSONAgreesWithEncodingJSON(f *testing.F) {
	for _, fx := range testdataFixtures(f) {
		f.Add(fx.body)
	}
	f.Add([]byte(`{"success":true,"data":{"Id":"a","ID":"b","id":"c"}}`))
	agreements := decodeAgreements()
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, a := range agreements {
			a.agree(t, body)
		}
	})
}

// The plans read what encoding/json reads: promoted fields of embedded structs, tags,
// case-insensitive keys with the exact name first, and a struct whose fields the rules
// leave in doubt is read by json.Unmarshal whole.
func TestDecodePlans(t *testing.T) {
	type inner struct {
		Code string `json:"code"`
	}
	type outer struct {
		inner
		Name  string `json:"name"`
		NAME  string
		Count int64  `json:"count"`
		Flag  *bool  `json:"flag"`
		Skip  string `json:"-"`
		Raw   json.RawMessage
		Tags  []string          `json:"tags"`
		Meta  map[string]string `json:"meta"`
	}
	p := planOf(reflect.TypeFor[outer]())
	require.NotNil(t, p)
	var names []string
	for _, f := range p.fields {
		names = append(names, f.name)
	}
	require.Equal(t, []string{"code", "name", "NAME", "count", "flag", "Raw", "tags", "meta"}, names)
	for _, body := range []string{
		`{"CODE":"c","name":"n","NAME":"N","Name":"x","count":-3,"flag":true,"Skip":"s","raw":{"a":1},"tags":["a"],"meta":{"k":"v"}}`,
		`{"Count":1.5}`, `{"flag":"yes"}`, `{"tags":{}}`, `{"name":"a\u00e9"}`, `null`, `[]`,
	} {
		agreeOf[outer]{}.agree(t, []byte(body))
	}

	type withMetadata struct {
		Metadata Metadata `json:"metadata"`
	}
	require.Equal(t, planAnyMap, planOf(reflect.TypeFor[withMetadata]()).fields[0].plan.kind)
	for _, body := range []string{
		`{"metadata":{"a":1,"b":"x","c":null,"d":true,"e":-0.5e2,"a":2}}`, `{"metadata":{"big":1e400}}`,
		`{"metadata":{"n":{"x":1}}}`, `{"metadata":{"k\u00e9":"v"}}`, `{"metadata":{"k":"v\n"}}`, `{"metadata":null}`,
		`{"metadata":[]}`, `{"metadata":"x"}`, `{"metadata":{}}`,
	} {
		agreeOf[withMetadata]{}.agree(t, []byte(body))
	}

	type conflict struct {
		inner
		Code string `json:"code"`
	}
	require.Nil(t, planOf(reflect.TypeFor[conflict]()), "a name claimed twice is json.Unmarshal's to settle")
	agreeOf[conflict]{}.agree(t, []byte(`{"code":"x"}`))
	type quoted struct {
		N int64 `json:"n,string"`
	}
	require.Nil(t, planOf(reflect.TypeFor[quoted]()))
	agreeOf[quoted]{}.agree(t, []byte(`{"n":"12"}`))
}

// The status check's body, read into its envelope, costs one pass: no more allocations
// than its result holds.
func BenchmarkDecodeStatusBody(b *testing.B) {
	body := fixture(b, "provider/send_status_success.json")
	b.Run("decodeJSON", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			var env envelope[SendTransaction]
			if err := decodeJSON(body, &env); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			var env envelope[SendTransaction]
			if err := json.Unmarshal(body, &env); err != nil {
				b.Fatal(err)
			}
		}
	})
}
