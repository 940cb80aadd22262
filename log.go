package billing

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// logResult writes one line per call. It names the method, the path with numbers
// masked (phone and account numbers appear in some paths), the status, response code,
// attempts and duration; never headers, bodies or credentials.
func (c *Client) logResult(ctx context.Context, o *op, st *attemptState, res *response, h *envelopeHeader, err error, took time.Duration) {
	level := slog.LevelDebug
	switch {
	case errors.Is(err, ErrOutcomeUnknown), err != nil && !res.done:
		level = slog.LevelWarn
	case err != nil:
		level = slog.LevelInfo
	}
	if !c.logger.Enabled(ctx, level) {
		return
	}
	attrs := []slog.Attr{
		slog.String("method", o.method),
		slog.String("path", c.scrub.Text(o.path)), // the Client's secrets first, then numbers
		slog.Int("attempts", st.attempts),
		slog.Duration("took", took),
	}
	if res.done {
		attrs = append(attrs, slog.Int("status", res.status))
	}
	if code := h.code(); code != "" {
		attrs = append(attrs, slog.String("code", string(code)))
	}
	if o.clientReference != "" {
		attrs = append(attrs, slog.String("clientReference", o.clientReference))
	}
	if err != nil {
		attrs = append(attrs, slog.String("error", err.Error()))
	}
	c.logger.LogAttrs(ctx, level, "billing request", attrs...)
}

// maskNumbers masks what names a person in text bound for logs and error strings: every
// number of seven or more digits but its last three (MSISDNs and account numbers in
// paths, transport errors and the service's messages), and every email address but the
// first character of its local part ("a***@example.com").
//
// A number may be written in groups joined by separators: spaces of any kind (NBSP,
// NNBSP, thin and other Unicode spaces), zero-width characters, dots, hyphens and dashes,
// underscores and plus signs (a space in a query), up to three of them between two
// groups ("+233 55 777 1234", "233.55.777.1234", "233_557_771_234", "233+55+777+1234");
// its digits are counted together. The text is read decoded (scrub_detect.go), so an
// escape before or inside a number does not hide it ("%2B233…", "２３３…"). Letters after
// it do not hide it ("9988776655443X"). An ISO date (2025-01-15) and a dotted IPv4
// address before a port are not numbers. A run joined to letters or an underscore before it is part
// of an id or a reference ("cus_01H…", "ref0001234567") and stays as it is, unless the
// letters before it, or before an underscore, name a number ("msisdn233…",
// "msisdn_233…", "ACC998…", "customerMsisdn233…"). Digits that are part of an
// identifier made of random hex digits, a reference or a UUID, stay too (hexIdentifierAt).
func maskNumbers(s string) string { return scrubWith(s, nil, detectPersonal) }

// separatorLen returns the length in bytes of the separator that starts s[i:], or 0:
// a Unicode space or zero-width character, a dot, an underscore, or a hyphen or dash.
func separatorLen(s string, i int) int {
	if i >= len(s) {
		return 0
	}
	switch s[i] {
	case ' ', '.', '-', '_', '+', '\t':
		return 1
	}
	if s[i] < utf8.RuneSelf {
		return 0
	}
	r, w := utf8.DecodeRuneInString(s[i:])
	switch {
	case unicode.IsSpace(r), unicode.Is(unicode.Zs, r), unicode.Is(unicode.Pd, r):
		return w
	case r == '\u200b', r == '\u200c', r == '\u200d', r == '\u2060', r == '\ufeff', r == '\u2212':
		return w // zero-width characters, and the minus sign
	}
	return 0
}

// ipv4 reports whether s is a dotted IPv4 address. Only one followed by a port is kept
// as written, as transport errors write it ("dial tcp 192.168.100.200:443"): a number
// written in dots may look like an address too.
func ipv4(s string) bool {
	groups := strings.Split(s, ".")
	if len(groups) != 4 {
		return false
	}
	for _, g := range groups {
		if len(g) < 1 || len(g) > 3 || !isDigits(g) {
			return false
		}
		if n, _ := strconv.Atoi(g); n > 255 {
			return false
		}
	}
	return true
}

// maskEmails masks the local part of every email address in s but its first character:
// "ama.mensah@example.com" becomes "a***@example.com" (see view.emails).
func maskEmails(s string) string {
	v := decodeView(s)
	return v.apply(v.emails(nil))
}

// numberLabels are words that, written right before a digit run, say it is a phone or
// account number.
var numberLabels = []string{"msisdn", "phone", "mobile", "tel", "momo", "wallet", "acc", "acct", "account", "iban", "card", "number", "num", "no", "nr"}

// numberLabelBefore reports whether the letters right before s[end], or right before an
// underscore there, end with a number label, in any case.
func numberLabelBefore(s string, end int) bool {
	if end > 0 && s[end-1] == '_' {
		end--
	}
	start := end
	for start > 0 && isLetter(s[start-1]) {
		start--
	}
	word := s[start:end]
	for _, label := range numberLabels {
		if len(word) < len(label) || !hasPrefixFold(word[len(word)-len(label):], label) {
			continue
		}
		// A long label names a number at the end of any word ("customerMsisdn"); a
		// short one only as the whole word or a camel-case part of it ("ACC",
		// "accountNo"), so that "piano1234567" or "hotel1234567" stays an id.
		at := end - len(label)
		if len(label) >= 5 || at == start || (isUpper(s[at]) && !isUpper(s[at-1])) {
			return true
		}
	}
	return false
}

func isUpper(b byte) bool { return b >= 'A' && b <= 'Z' }

// isoDate reports whether s is a date written YYYY-MM-DD.
func isoDate(s string) bool {
	return len(s) == 10 && s[4] == '-' && s[7] == '-' && isDigits(s[:4]) && isDigits(s[5:7]) && isDigits(s[8:])
}

func isLetter(b byte) bool { return (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') }

func isDigit(b byte) bool { return b >= '0' && b <= '9' }

func isWordByte(b byte) bool {
	return b == '_' || (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z')
}

// scrubURL scrubs the URL inside a transport error, which net/http writes into the
// error text, with s: the Client's secrets first (a session token or key in a query),
// then what Scrub masks. The retry policy calls it on the first sight of the error,
// before an Observer or a log is told of it. A URL it scrubbed already stays as it is.
func (s *Scrubber) scrubURL(err error) {
	var ue *url.Error
	if errors.As(err, &ue) {
		ue.URL = s.Text(ue.URL)
	}
}

// What a field holds that must never be printed in full, by its name: see fieldSecrecy.
type secrecy uint8

const (
	secrecyNone       secrecy = iota
	secrecyCredential         // a secret, token, password or one-time code: never printed
	secrecyNumber             // a phone, MSISDN or account number: its last three characters
	secrecyEmail              // an email address: a***@example.com
)

// secrecyByName is the one table of field names that hold a credential or a personal
// number: a field whose lower-cased name contains a key holds that kind of value.
var secrecyByName = []struct {
	key  string
	kind secrecy
}{
	{"secret", secrecyCredential}, {"token", secrecyCredential}, {"password", secrecyCredential},
	{"otpcode", secrecyCredential}, {"authorization", secrecyCredential},
	{"phone", secrecyNumber}, {"msisdn", secrecyNumber}, {"accountnumber", secrecyNumber},
	{"customernumber", secrecyNumber}, {"disbursementaccount", secrecyNumber},
	{"email", secrecyEmail},
}

// fieldSecrecy says what the field called name holds.
func fieldSecrecy(name string) secrecy {
	name = strings.ToLower(name)
	for _, s := range secrecyByName {
		if strings.Contains(name, s.key) {
			return s.kind
		}
	}
	return secrecyNone
}

// redact returns what may be printed of v, a value of the given kind.
func redact(kind secrecy, v string) string {
	switch {
	case v == "" || kind == secrecyNone:
		return v
	case kind == secrecyCredential:
		return "[redacted]"
	case kind == secrecyEmail && strings.Contains(v, "@"):
		if masked := maskEmails(v); masked != v {
			return masked
		}
	}
	// A number, or an email the masking does not recognise: its last three
	// characters of seven or more, nothing of a shorter one.
	runes := []rune(v)
	keep := 0
	if len(runes) >= 7 && kind == secrecyNumber {
		keep = 3
	}
	for i := range runes[:len(runes)-keep] {
		runes[i] = '*'
	}
	return string(runes)
}

// formatRedacted prints v, a struct, as fmt prints a struct under verb and its flags,
// with each field that holds a credential or a personal number (fieldSecrecy) redacted.
// Every other field is printed by fmt under the same verb, so a nested value redacts
// itself. The types that hold such fields call it from their Format method, so %v, %+v,
// %#v, %s, %q and every other verb print them redacted.
func formatRedacted(f fmt.State, verb rune, v any) {
	rv := reflect.ValueOf(v)
	t := rv.Type()
	sharpV := verb == 'v' && f.Flag('#')
	names := sharpV || (verb == 'v' && f.Flag('+'))
	directive := fmt.FormatString(f, verb)
	var b strings.Builder
	if sharpV {
		b.WriteString(t.String())
	}
	b.WriteByte('{')
	for i := range t.NumField() {
		sf, fv := t.Field(i), rv.Field(i)
		if i > 0 {
			if sharpV {
				b.WriteString(", ")
			} else {
				b.WriteByte(' ')
			}
		}
		if names {
			b.WriteString(sf.Name)
			b.WriteByte(':')
		}
		kind := fieldSecrecy(sf.Name)
		switch {
		case !sf.IsExported():
			fmt.Fprintf(&b, directive, fv) // fmt prints what it holds, calling no method
		case kind != secrecyNone && fv.Kind() == reflect.String:
			fmt.Fprintf(&b, directive, redact(kind, fv.String()))
		case kind != secrecyNone:
			if n, ok := fv.Interface().(interface{ Get() (string, bool) }); ok {
				s, _ := n.Get()
				fmt.Fprintf(&b, directive, redact(kind, s))
				continue
			}
			fmt.Fprintf(&b, directive, "[redacted]")
		default:
			fmt.Fprintf(&b, directive, fv.Interface())
		}
	}
	b.WriteByte('}')
	_, _ = io.WriteString(f, b.String())
}

// redactedLogValue is the slog value of v, a struct formatRedacted prints: its %+v text.
func redactedLogValue(v any) slog.Value { return slog.StringValue(fmt.Sprintf("%+v", v)) }

// The types that hold a credential, a phone or account number or an email print them
// redacted under every fmt verb and in slog.

// Format prints the params with the email and phone redacted.
func (p CustomerCreateParams) Format(f fmt.State, verb rune) { formatRedacted(f, verb, p) }

// LogValue logs the params with the email and phone redacted.
func (p CustomerCreateParams) LogValue() slog.Value { return redactedLogValue(p) }

// Format prints the params with the phone redacted.
func (p CustomerUpdateParams) Format(f fmt.State, verb rune) { formatRedacted(f, verb, p) }

// LogValue logs the params with the phone redacted.
func (p CustomerUpdateParams) LogValue() slog.Value { return redactedLogValue(p) }

// Format prints the params with the email redacted.
func (p CustomerListParams) Format(f fmt.State, verb rune) { formatRedacted(f, verb, p) }

// LogValue logs the params with the email redacted.
func (p CustomerListParams) LogValue() slog.Value { return redactedLogValue(p) }

// Format prints the customer with the email and phone redacted.
func (c Customer) Format(f fmt.State, verb rune) { formatRedacted(f, verb, c) }

// LogValue logs the customer with the email and phone redacted.
func (c Customer) LogValue() slog.Value { return redactedLogValue(c) }

// Format prints the customer with the email and phone redacted.
func (c CustomerSummary) Format(f fmt.State, verb rune) { formatRedacted(f, verb, c) }

// LogValue logs the customer with the email and phone redacted.
func (c CustomerSummary) LogValue() slog.Value { return redactedLogValue(c) }

// Format prints the customer with the email redacted.
func (c LicenseCustomer) Format(f fmt.State, verb rune) { formatRedacted(f, verb, c) }

// LogValue logs the customer with the email redacted.
func (c LicenseCustomer) LogValue() slog.Value { return redactedLogValue(c) }

// Format prints the customer with the email and phone redacted.
func (c CheckoutCustomer) Format(f fmt.State, verb rune) { formatRedacted(f, verb, c) }

// LogValue logs the customer with the email and phone redacted.
func (c CheckoutCustomer) LogValue() slog.Value { return redactedLogValue(c) }

// Format prints the payer with the email and phone redacted.
func (c PaymentCustomer) Format(f fmt.State, verb rune) { formatRedacted(f, verb, c) }

// LogValue logs the payer with the email and phone redacted.
func (c PaymentCustomer) LogValue() slog.Value { return redactedLogValue(c) }

// Format prints the wallet with the phone redacted.
func (d MobileMoneyDetail) Format(f fmt.State, verb rune) { formatRedacted(f, verb, d) }

// LogValue logs the wallet with the phone redacted.
func (d MobileMoneyDetail) LogValue() slog.Value { return redactedLogValue(d) }

// Format prints the purchase with the phone redacted.
func (p WebPurchaseInfo) Format(f fmt.State, verb rune) { formatRedacted(f, verb, p) }

// LogValue logs the purchase with the phone redacted.
func (p WebPurchaseInfo) LogValue() slog.Value { return redactedLogValue(p) }

// Format prints the params with the phone redacted.
func (p ReceiveParams) Format(f fmt.State, verb rune) { formatRedacted(f, verb, p) }

// LogValue logs the params with the phone redacted.
func (p ReceiveParams) LogValue() slog.Value { return redactedLogValue(p) }

// Format prints the acceptance with the phone redacted.
func (r DirectReceive) Format(f fmt.State, verb rune) { formatRedacted(f, verb, r) }

// LogValue logs the acceptance with the phone redacted.
func (r DirectReceive) LogValue() slog.Value { return redactedLogValue(r) }

// Format prints the params with the phone redacted.
func (p SendParams) Format(f fmt.State, verb rune) { formatRedacted(f, verb, p) }

// LogValue logs the params with the phone redacted.
func (p SendParams) LogValue() slog.Value { return redactedLogValue(p) }

// Format prints the acceptance with the phone redacted.
func (r DirectSend) Format(f fmt.State, verb rune) { formatRedacted(f, verb, r) }

// LogValue logs the acceptance with the phone redacted.
func (r DirectSend) LogValue() slog.Value { return redactedLogValue(r) }

// Format prints the transaction with the customer's number redacted.
func (t SendTransaction) Format(f fmt.State, verb rune) { formatRedacted(f, verb, t) }

// LogValue logs the transaction with the customer's number redacted.
func (t SendTransaction) LogValue() slog.Value { return redactedLogValue(t) }

// Format prints the params with the account numbers and phone redacted.
func (p BankTransferParams) Format(f fmt.State, verb rune) { formatRedacted(f, verb, p) }

// LogValue logs the params with the account numbers and phone redacted.
func (p BankTransferParams) LogValue() slog.Value { return redactedLogValue(p) }

// Format prints the params with the account number redacted.
func (p BankTransferStatusParams) Format(f fmt.State, verb rune) { formatRedacted(f, verb, p) }

// LogValue logs the params with the account number redacted.
func (p BankTransferStatusParams) LogValue() slog.Value { return redactedLogValue(p) }

// Format prints the transaction with the customer's number redacted.
func (t BankTransferTransaction) Format(f fmt.State, verb rune) { formatRedacted(f, verb, t) }

// LogValue logs the transaction with the customer's number redacted.
func (t BankTransferTransaction) LogValue() slog.Value { return redactedLogValue(t) }

// Format prints the params with the MSISDN redacted.
func (p MandateCreateParams) Format(f fmt.State, verb rune) { formatRedacted(f, verb, p) }

// LogValue logs the params with the MSISDN redacted.
func (p MandateCreateParams) LogValue() slog.Value { return redactedLogValue(p) }

// Format prints the params with the MSISDN and the one-time code redacted.
func (p MandateVerifyOTPParams) Format(f fmt.State, verb rune) { formatRedacted(f, verb, p) }

// LogValue logs the params with the MSISDN and the one-time code redacted.
func (p MandateVerifyOTPParams) LogValue() slog.Value { return redactedLogValue(p) }

// Format prints the params with the MSISDN redacted.
func (p MandateReactivateParams) Format(f fmt.State, verb rune) { formatRedacted(f, verb, p) }

// LogValue logs the params with the MSISDN redacted.
func (p MandateReactivateParams) LogValue() slog.Value { return redactedLogValue(p) }

// Format prints the mandate with the MSISDN redacted.
func (m Mandate) Format(f fmt.State, verb rune) { formatRedacted(f, verb, m) }

// LogValue logs the mandate with the MSISDN redacted.
func (m Mandate) LogValue() slog.Value { return redactedLogValue(m) }

// Format prints the params with the MSISDN and email redacted.
func (p DirectDebitParams) Format(f fmt.State, verb rune) { formatRedacted(f, verb, p) }

// LogValue logs the params with the MSISDN and email redacted.
func (p DirectDebitParams) LogValue() slog.Value { return redactedLogValue(p) }

// Format prints the callback with the MSISDN redacted.
func (c MandateCallback) Format(f fmt.State, verb rune) { formatRedacted(f, verb, c) }

// LogValue logs the callback with the MSISDN redacted.
func (c MandateCallback) LogValue() slog.Value { return redactedLogValue(c) }

// Format prints the client without its credentials: its base URL and which kinds of
// credentials it holds, never their values, under every verb.
func (c Client) Format(f fmt.State, verb rune) {
	s := c.GoString()
	switch {
	case verb == 'q':
		s = strconv.Quote(s)
	case verb == 'v' && f.Flag('#'):
	default:
		s = strings.TrimPrefix(s, "billing.Client")
	}
	_, _ = io.WriteString(f, s)
}

// GoString describes the client without its credentials.
func (c Client) GoString() string {
	var held []string
	for _, cred := range []struct{ name, value string }{
		{"client credentials", c.basicAuth}, {"secret key", c.secretKeyAuth}, {"session token", c.sessionAuth},
	} {
		if cred.value != "" {
			held = append(held, cred.name)
		}
	}
	return fmt.Sprintf("billing.Client{BaseURL:%q, Credentials:%q, DisbursementAccount:%q}", c.base,
		strings.Join(held, ", ")+" (redacted)", redact(secrecyNumber, c.disbursementAccount))
}

// String describes the client without its credentials.
func (c Client) String() string { return strings.TrimPrefix(c.GoString(), "billing.Client") }

// LogValue logs the client without its credentials.
func (c Client) LogValue() slog.Value { return slog.StringValue(c.String()) }
