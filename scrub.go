package billing

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"reflect"
	"sort"
	"strings"
)

// This file is the scrubber: the one gate between what the SDK knows and what it tells
// an observer (DESIGN "One gate per boundary"). Every error string, log record, Observer
// callback and span attribute leaves through it, so none carries a phone number or
// MSISDN, an account number, an email address, the userinfo of a URL, a credential
// written after Basic, Bearer or a key named like a secret, or one of the Client's own
// credentials in any encoding. How it reads a text (decoded, masking the original span)
// is scrub_detect.go.

// Scrub returns text as the SDK lets it reach a log, an error string or a trace: the
// userinfo of every URL in it replaced, every credential written after "Basic",
// "Bearer", "Authorization" or a key naming a secret, token or password redacted (after
// "Basic", "Bearer" or a name and a colon, only a value that looks like a credential: the
// words "Basic client credentials" stay), every number of seven or more digits masked but
// its last three, and every email address masked but the first character of its local
// part. It reads the text decoded (percent escapes, also doubled, JSON escapes, fullwidth
// and other Unicode digits), so "msisdn=%2B233241239876" and "ama%2Bvip%40example.com"
// are found, and masks the text as written. It knows no secret by its value: a Client's
// Scrubber does. Package otelbilling passes every text it puts on a span through the
// Client's; an Observer of one's own may do the same.
func Scrub(text string) string { return scrubText(text) }

// scrubText is Scrub.
func scrubText(s string) string { return scrubWith(s, nil, detectAll) }

// Scrubber masks the secrets it was given (every encoding) and personal data in text.
//
// A Scrubber knows its secrets: it removes each by exact match, written as given,
// percent-encoded (upper- and lower-case hex, as a path or a query writes it),
// JSON-escaped, and in base64 (standard and URL alphabets, with and without padding),
// the base64 of each pair joined by a colon as HTTP Basic writes a client id and secret
// included; a secret made of digits (a disbursement account) is masked as a number is,
// its last three digits kept. After the secrets it masks what Scrub masks: phone and account numbers,
// email addresses, URL userinfo and credentials written after a credential's name. A
// Client has one that knows the credentials it was given (Client.Scrubber); a program
// that prints what the SDK tells it (a command line, an operator's page) makes one from
// the secrets it holds. A Scrubber is safe for concurrent use.
type Scrubber struct {
	// forms is every form of every secret, longest first, so that a secret written
	// inside a longer one is replaced with it.
	forms []secretForm
}

// secretForm is one way a secret is written, and what replaces it: "[redacted]", or for
// a secret made of digits (an account number) the digits masked but the last three, as
// any number is, so that its owner still knows which one it was.
type secretForm struct {
	text, with string
}

// NewScrubber returns a Scrubber that removes secrets, in every encoding they can take,
// from the text it scrubs; empty secrets are ignored.
func NewScrubber(secrets ...string) *Scrubber {
	s := &Scrubber{}
	var given []string
	for _, v := range secrets {
		if v != "" {
			given = append(given, v)
		}
	}
	seen := map[string]bool{}
	add := func(with string, forms ...string) {
		for _, f := range forms {
			if f != "" && !seen[f] {
				seen[f] = true
				s.forms = append(s.forms, secretForm{f, with})
			}
		}
	}
	for _, v := range given {
		with := redacted
		if isDigits(v) {
			with = maskedDigits(v)
		}
		add(with, secretForms(v)...)
		add(redacted, base64Forms(v)...)
		for _, w := range given {
			if w != v {
				add(redacted, base64Forms(v+":"+w)...) // HTTP Basic: client id and secret
			}
		}
	}
	sort.SliceStable(s.forms, func(i, j int) bool { return len(s.forms[i].text) > len(s.forms[j].text) })
	return s
}

// maskedDigits returns a number as the scrubber masks one: its last three digits of seven
// or more, none of a shorter one.
func maskedDigits(v string) string {
	keep := 0
	if len(v) >= 7 {
		keep = 3
	}
	return strings.Repeat("*", len(v)-keep) + v[len(v)-keep:]
}

// secretForms returns v as text may carry it: as given, percent-encoded as a query value
// and as a path segment (in upper- and lower-case hex), and JSON-escaped.
func secretForms(v string) []string {
	forms := []string{v, url.QueryEscape(v), url.PathEscape(v)}
	for _, f := range forms[1:] {
		forms = append(forms, lowerHex(f))
	}
	if j, err := json.Marshal(v); err == nil {
		forms = append(forms, string(j[1:len(j)-1]))
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) == nil {
		j := strings.TrimSpace(b.String())
		forms = append(forms, j[1:len(j)-1])
	}
	return forms
}

// base64Forms returns v in base64: standard and URL alphabets, padded and not.
func base64Forms(v string) []string {
	return []string{
		base64.StdEncoding.EncodeToString([]byte(v)), base64.RawStdEncoding.EncodeToString([]byte(v)),
		base64.URLEncoding.EncodeToString([]byte(v)), base64.RawURLEncoding.EncodeToString([]byte(v)),
	}
}

// lowerHex returns s with the hex digits of its percent escapes in lower case.
func lowerHex(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	b := []byte(s)
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '%' {
			b[i+1], b[i+2] = lowerASCII(b[i+1]), lowerASCII(b[i+2])
		}
	}
	return string(b)
}

func lowerASCII(c byte) byte {
	if isUpper(c) {
		return c + 'a' - 'A'
	}
	return c
}

// Text returns text scrubbed: every form of every secret of s replaced with "[redacted]",
// then what Scrub masks masked. A nil *Scrubber knows no secrets: it scrubs personal
// data and credential-shaped text only.
func (s *Scrubber) Text(text string) string {
	if s == nil {
		return scrubWith(text, nil, detectAll)
	}
	return scrubWith(text, s.forms, detectAll)
}

// Error returns err as an observer may see it: its text scrubbed (Text) under every
// verb of fmt, its chain intact for errors.Is, and errors.As of an error struct in it
// finding a scrubbed copy of that struct. nil stays nil. The transport's *url.Error in
// it already carries the scrubbed URL: see scrubURL.
func (s *Scrubber) Error(err error) error {
	if err == nil {
		return nil
	}
	if se, ok := err.(*scrubbedError); ok && se.s == s {
		return se
	}
	return &scrubbedError{text: s.Text(err.Error()), err: err, s: s}
}

// scrubbedError is an error whose text was scrubbed: it prints that text under every
// verb (%#v too, which would otherwise print the fields of the error inside), and
// unwraps to the error it was made from, for errors.Is. errors.As of an *APIError or an
// *OutcomeUnknownError finds a scrubbed copy (As), so an observer that reads their
// fields reads no more than their text tells.
type scrubbedError struct {
	text string
	err  error
	s    *Scrubber
}

func (e *scrubbedError) Error() string { return e.text }
func (e *scrubbedError) Unwrap() error { return e.err }

// As sets target to a scrubbed copy of the first error in the chain of target's type,
// when that type is a struct or a pointer to one (*APIError, *OutcomeUnknownError,
// *ValidationError, *url.Error, and any added later): see scrubFields. It reports false
// for other targets, which errors.As then looks for further down the chain.
func (e *scrubbedError) As(target any) bool {
	tv := reflect.ValueOf(target)
	if tv.Kind() != reflect.Pointer || tv.IsNil() {
		return false
	}
	want := tv.Type().Elem()
	st := want
	if st.Kind() == reflect.Pointer {
		st = st.Elem()
	}
	if st.Kind() != reflect.Struct {
		return false
	}
	found := reflect.New(want)
	if !errors.As(e.err, found.Interface()) {
		return false
	}
	orig := found.Elem()
	if want.Kind() == reflect.Pointer {
		if orig.IsNil() {
			return false
		}
		orig = orig.Elem()
	}
	c := reflect.New(st)
	c.Elem().Set(orig)
	e.s.scrubFields(c.Elem())
	if want.Kind() == reflect.Pointer {
		tv.Elem().Set(c)
	} else {
		tv.Elem().Set(c.Elem())
	}
	return true
}

// scrubFields scrubs, in place, every exported field of the struct v an observer could
// read text from: strings and byte slices as text, errors as scrubbed errors, an
// http.Header kept to its request id, nested structs alike. Any other map, slice,
// pointer or interface is cleared: what the scrubber cannot read, an observer does not
// get.
func (s *Scrubber) scrubFields(v reflect.Value) {
	for i := range v.NumField() {
		f := v.Field(i)
		if !f.CanSet() {
			continue
		}
		switch {
		case f.Type() == reflect.TypeOf(http.Header(nil)):
			var h http.Header
			if id := requestIDOf(f.Interface().(http.Header)); id != "" {
				h = http.Header{RequestIDHeader: {id}}
			}
			f.Set(reflect.ValueOf(h))
		case f.Type() == reflect.TypeOf((*error)(nil)).Elem():
			if err, _ := f.Interface().(error); err != nil {
				f.Set(reflect.ValueOf(s.Error(err)))
			}
		case f.Kind() == reflect.String:
			f.SetString(s.Text(f.String()))
		case f.Kind() == reflect.Slice && f.Type().Elem().Kind() == reflect.Uint8:
			if !f.IsNil() {
				f.SetBytes([]byte(s.Text(string(f.Bytes()))))
			}
		case f.Kind() == reflect.Struct:
			s.scrubFields(f)
		case f.Kind() == reflect.Map, f.Kind() == reflect.Slice, f.Kind() == reflect.Pointer, f.Kind() == reflect.Interface:
			f.SetZero()
		}
	}
}

// Format prints the scrubbed text: quoted under %q, as it is under every other verb.
func (e *scrubbedError) Format(f fmt.State, verb rune) {
	if verb == 'q' {
		fmt.Fprintf(f, "%q", e.text)
		return
	}
	_, _ = io.WriteString(f, e.text)
}

// GoString prints an *APIError under %#v without its Body, Header and unmasked Message,
// which fmt would otherwise print field by field.
func (e *APIError) GoString() string {
	return fmt.Sprintf("&billing.APIError{StatusCode:%d, Code:%q, Message:%q, Field:%q, Method:%q, Path:%q, RequestID:%q, Body:(%d bytes)}",
		e.StatusCode, e.scrub.Text(string(e.Code)), e.scrub.Text(e.Message), e.scrub.Text(e.Field), e.Method, e.scrub.Text(e.Path), e.scrub.Text(e.RequestID), len(e.Body))
}

// GoString prints an *OutcomeUnknownError under %#v with its cause as its scrubbed text.
func (e *OutcomeUnknownError) GoString() string {
	cause := ""
	if e.Err != nil {
		cause = e.scrub.Text(e.Err.Error())
	}
	return fmt.Sprintf("&billing.OutcomeUnknownError{ClientReference:%q, Method:%q, Path:%q, Err:%q, RequestID:%q}",
		e.scrub.Text(e.ClientReference), e.Method, e.scrub.Text(e.Path), cause, e.scrub.Text(e.RequestID))
}

// scrubHandler is a slog.Handler that scrubs every record before the handler it wraps
// sees it: the message, and every attribute's value, in groups too. A value that is not
// text (a number, a time, a bool) passes as it is; any other value is logged as its
// scrubbed text.
type scrubHandler struct {
	next  slog.Handler
	scrub *Scrubber
}

// scrubLogger returns l with every record scrubbed by s; nil stays nil.
func scrubLogger(l *slog.Logger, s *Scrubber) *slog.Logger {
	if l == nil {
		return nil
	}
	if h, ok := l.Handler().(*scrubHandler); ok && h.scrub == s {
		return l
	}
	return slog.New(&scrubHandler{next: l.Handler(), scrub: s})
}

func (h *scrubHandler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.next.Enabled(ctx, level)
}

func (h *scrubHandler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, h.scrub.Text(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.next.Handle(ctx, out)
}

func (h *scrubHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	scrubbed := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		scrubbed[i] = h.attr(a)
	}
	return &scrubHandler{next: h.next.WithAttrs(scrubbed), scrub: h.scrub}
}

func (h *scrubHandler) WithGroup(name string) slog.Handler {
	return &scrubHandler{next: h.next.WithGroup(name), scrub: h.scrub}
}

// attr returns a with its value scrubbed.
func (h *scrubHandler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, h.scrub.Text(v.String()))
	case slog.KindGroup:
		group := v.Group()
		scrubbed := make([]any, len(group))
		for i, g := range group {
			scrubbed[i] = h.attr(g)
		}
		return slog.Group(a.Key, scrubbed...)
	case slog.KindAny:
		x := v.Any()
		if err, ok := x.(error); ok {
			return slog.String(a.Key, h.scrub.Text(err.Error()))
		}
		return slog.String(a.Key, h.scrub.Text(fmt.Sprintf("%+v", x)))
	}
	return slog.Attr{Key: a.Key, Value: v}
}
