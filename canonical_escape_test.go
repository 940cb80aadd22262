package billing

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"sync"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// The generative test of the canonical form (DESIGN "One gate per boundary", inbound
// reader): every recorded body under testdata, callbacks and webhooks of both wires
// first among them, re-spelled with JSON escapes in its keys and string values, is the
// same event to the SDK and gets the same HTTP answer as the plain body.
//
// CI escapes, in every fixture, every rune of every string at once, the first rune of
// each string alone, and escapeSamplesDefault runes picked at random by a seed it prints.
// BILLING_ESCAPE_SAMPLES=all escapes every rune of every string, one at a time;
// BILLING_ESCAPE_SAMPLES=n picks n; BILLING_ESCAPE_SEED picks another sample.

const escapeSamplesDefault = 24

// escapeUnit is one character of a string's contents as written: a rune the
// re-speller may escape, or an escape already there, kept as it is.
type escapeUnit struct {
	from, to int // in the body
	r        rune
	escaped  bool // already an escape (or text that is no UTF-8): kept as written
}

// escapeUnits lists the characters of every string, keys and values, of body, valid
// JSON, string by string.
func escapeUnits(body []byte) [][]escapeUnit {
	var out [][]escapeUnit
	for i := 0; i < len(body); i++ {
		if body[i] != '"' {
			continue
		}
		var units []escapeUnit
		j := i + 1
		for j < len(body) && body[j] != '"' {
			switch {
			case body[j] == '\\':
				n := 2
				if j+1 < len(body) && body[j+1] == 'u' {
					n = 6
				}
				units = append(units, escapeUnit{from: j, to: j + n, escaped: true})
				j += n
			default:
				r, size := utf8.DecodeRune(body[j:])
				units = append(units, escapeUnit{from: j, to: j + size, r: r, escaped: r == utf8.RuneError && size == 1})
				j += size
			}
		}
		out = append(out, units)
		i = j
	}
	return out
}

// escapeForms are the ways JSON writes a rune as an escape: \u with lower-case or
// upper-case hex (a surrogate pair beyond the BMP), or, for the solidus, \/.
const escapeForms = 3

func appendEscaped(out []byte, r rune, form int) []byte {
	if form == 2 && r == '/' {
		return append(out, `\/`...)
	}
	format := `\u%04x`
	if form == 1 {
		format = `\u%04X`
	}
	if r > 0xFFFF {
		hi, lo := utf16.EncodeRune(r)
		return fmt.Appendf(fmt.Appendf(out, format, hi), format, lo)
	}
	return fmt.Appendf(out, format, r)
}

// respell returns body with the units picked (by their start) written as escapes in
// the form given.
func respell(body []byte, picked map[int]int, units [][]escapeUnit) []byte {
	out := make([]byte, 0, len(body)+8*len(picked))
	last := 0
	for _, str := range units {
		for _, u := range str {
			form, ok := picked[u.from]
			if !ok || u.escaped {
				continue
			}
			out = appendEscaped(append(out, body[last:u.from]...), u.r, form)
			last = u.to
		}
	}
	return append(out, body[last:]...)
}

// escapeVariant is a body re-spelled, named for a failure message.
type escapeVariant struct {
	how  string
	body []byte
}

// escapeVariants re-spells body: every rune at once, each string's first rune alone,
// and samples more (every rune, one at a time, when samples < 0).
func escapeVariants(body []byte, rng *rand.Rand, samples int) []escapeVariant {
	units := escapeUnits(body)
	var out []escapeVariant
	add := func(how string, picked map[int]int) {
		if len(picked) > 0 {
			out = append(out, escapeVariant{how, respell(body, picked, units)})
		}
	}
	all := map[int]int{}
	var escapable []escapeUnit
	for s, str := range units {
		for i, u := range str {
			if u.escaped {
				continue
			}
			all[u.from] = (s + i) % escapeForms
			escapable = append(escapable, u)
			if i == 0 {
				add(fmt.Sprintf("string %d, its first rune", s), map[int]int{u.from: s % escapeForms})
			}
		}
	}
	add("every rune", all)
	switch {
	case samples < 0:
		for i, u := range escapable {
			add(fmt.Sprintf("the rune at %d", u.from), map[int]int{u.from: i % escapeForms})
		}
	case len(escapable) > 0:
		for range samples {
			picked := map[int]int{}
			for range 1 + rng.IntN(3) {
				picked[escapable[rng.IntN(len(escapable))].from] = rng.IntN(escapeForms)
			}
			add(fmt.Sprintf("runes %v", picked), picked)
		}
	}
	return out
}

// escapeBudget reads the sample size and seed from the environment.
func escapeBudget(t *testing.T) (samples int, seed uint64) {
	t.Helper()
	samples = escapeSamplesDefault
	switch v := os.Getenv("BILLING_ESCAPE_SAMPLES"); v {
	case "":
	case "all":
		samples = -1
	default:
		n, err := strconv.Atoi(v)
		require.NoError(t, err, "BILLING_ESCAPE_SAMPLES")
		samples = n
	}
	seed = 1
	if v := os.Getenv("BILLING_ESCAPE_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		require.NoError(t, err, "BILLING_ESCAPE_SEED")
		seed = n
	}
	return samples, seed
}

// eventAnswer is what the SDK makes of one delivered body: ParseEvent's and the gate's
// reading, and the answers and events of a handler that confirms nothing and of one
// that confirms with the status checks.
type eventAnswer struct {
	event                  Event
	errClass               string
	plainCode, plainEvent  any
	confirmCode, confirmEv any
}

// answerer delivers bodies to both handlers, one at a time.
type answerer struct {
	mu        sync.Mutex
	last      Event
	plain     http.Handler
	confirmed http.Handler
}

func newAnswerer(t testing.TB, checks map[string]string) *answerer {
	a := &answerer{}
	record := func(_ context.Context, ev Event) error { a.last = ev; return nil }
	a.plain = NewWebhookHandler(record)
	c, mock := newMockClient(t, WithDisbursementAccount("2020202"))
	mock.RegisterNoResponder(fixtureResponder(t, http.StatusNotFound, "payments/status_not_found.json"))
	for path, name := range checks {
		mock.RegisterResponder(http.MethodGet, mockBaseURL+path, fixtureAsked(t, http.StatusOK, name))
	}
	a.confirmed = NewWebhookHandler(record, WithStatusCheckConfirmation(c))
	return a
}

func (a *answerer) answer(body []byte) eventAnswer {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out eventAnswer
	ev, err := readEvent(body)
	out.event, out.errClass = withoutBody(ev), errClass(err)
	deliver := func(h http.Handler) (int, any) {
		a.last = nil
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/webhooks", bytes.NewReader(body)))
		return rec.Code, withoutBody(a.last)
	}
	out.plainCode, out.plainEvent = deliver(a.plain)
	out.confirmCode, out.confirmEv = deliver(a.confirmed)
	return out
}

// withoutBody is ev with the body as it came set aside: an unconfirmed event keeps it
// for audit, and it is the one thing of a re-spelled body that is not the same.
func withoutBody(ev Event) Event {
	if u, ok := ev.(*UnconfirmedEvent); ok && u != nil {
		c := *u
		c.Body = nil
		return &c
	}
	return ev
}

func errClass(err error) string {
	switch {
	case err == nil:
		return "none"
	case errors.Is(err, ErrContradiction):
		return "contradiction"
	case errors.Is(err, ErrInvalidEvent):
		return "invalid event"
	}
	return "other: " + err.Error()
}

// statusChecksOf pairs a recorded callback with the status checks that confirm it.
func statusChecksOf(name string) map[string]string {
	for _, fc := range forgeCases {
		if fc.event == name {
			return fc.checks
		}
	}
	return nil
}

// TestEscapedSpellingsReadAsThePlainBody is the generative test: every fixture under
// testdata, listed from the directory, re-spelled with JSON escapes, is the same event
// and gets the same answers as the plain body.
func TestEscapedSpellingsReadAsThePlainBody(t *testing.T) {
	samples, seed := escapeBudget(t)
	rng := rand.New(rand.NewPCG(seed, 0))
	t.Logf("seed %d (BILLING_ESCAPE_SEED), %d samples a fixture (BILLING_ESCAPE_SAMPLES; all = every rune)", seed, samples)
	fixtures, events, variants := 0, 0, 0
	for _, fx := range testdataFixtures(t) {
		fixtures++
		a := newAnswerer(t, statusChecksOf(fx.name))
		want := a.answer(fx.body)
		if want.errClass == "none" {
			events++
		}
		for _, v := range escapeVariants(fx.body, rng, samples) {
			variants++
			got := a.answer(v.body)
			if !equalAnswers(want, got) {
				t.Fatalf("seed %d: %s with %s escaped:\n%s\nreads as %+v\nthe plain body as %+v", seed, fx.name, v.how, v.body, got, want)
			}
		}
	}
	t.Logf("%d re-spellings of %d fixtures (%d of them events) read as the plain body", variants, fixtures, events)
}

func equalAnswers(a, b eventAnswer) bool {
	return a.errClass == b.errClass && a.plainCode == b.plainCode && a.confirmCode == b.confirmCode &&
		equalJSONish(a.event, b.event) && equalJSONish(a.plainEvent, b.plainEvent) && equalJSONish(a.confirmEv, b.confirmEv)
}

// equalJSONish compares two events field by field, unexported fields included.
func equalJSONish(a, b any) bool {
	return fmt.Sprintf("%#v", deref(a)) == fmt.Sprintf("%#v", deref(b))
}

// deref follows the pointer of an event, so that %#v prints its fields.
func deref(v any) any {
	switch e := v.(type) {
	case *CheckoutEvent:
		return *e
	case *CheckoutFailedEvent:
		return *e
	case *CheckoutPendingEvent:
		return *e
	case *SubscriptionTrialEvent:
		return *e
	case *TransactionCallback:
		return *e
	case *PayoutCallback:
		return *e
	case *MandateCallback:
		return *e
	case *UnconfirmedEvent:
		c := *e
		c.Claim = nil
		return [2]any{c, deref(e.Claim)}
	}
	return v
}

// FuzzEscapedEvent: any body, with the runes of its strings the fuzzer picks written
// as JSON escapes, is the same event and gets the same answer as the body as it came.
// The seed corpus is every fixture under testdata.
func FuzzEscapedEvent(f *testing.F) {
	for i, fx := range testdataFixtures(f) {
		f.Add(fx.body, uint64(i))
	}
	a := newAnswerer(f, nil)
	f.Fuzz(func(t *testing.T, body []byte, pick uint64) {
		if !json.Valid(body) {
			return
		}
		units := escapeUnits(body)
		rng := rand.New(rand.NewPCG(pick, 0))
		picked := map[int]int{}
		for _, str := range units {
			for _, u := range str {
				if rng.IntN(2) == 0 {
					picked[u.from] = rng.IntN(escapeForms)
				}
			}
		}
		escaped := respell(body, picked, units)
		if len(escaped) > MaxEventBytes {
			return
		}
		want, got := a.answer(body), a.answer(escaped)
		if !equalAnswers(want, got) {
			t.Fatalf("%s\nreads as %+v\nbut %s\nas %+v", escaped, got, body, want)
		}
	})
}
