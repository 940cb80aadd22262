// Package scrubcorpus plants secrets and personal data, in every encoding a text can
// carry them in, for the tests that prove the scrubber's gate holds (DESIGN "One gate per
// boundary"): no sink of the SDK (errors under every verb, logs, an Observer), of package
// otelbilling (spans), of the billing command (its output) or of an operator's view
// prints one of them.
//
// A test draws Credentials for the Client under test and Plants from a seeded rand, puts
// each Plant's Text where a producer writes text (a service's error message, a path, a
// query, a flag), collects what every sink printed, and asks Leaked which plants it
// shows. Leaked reads the output as the scrubber reads text, decoded, but with code of
// its own, so that a decoding the scrubber lacks shows as a leak rather than hiding one.
//
// The tables (Kinds, Encodings, Countries, EmailDomains) are the corpus: a kind, an
// encoding or a country added to them reaches every test that draws from it.
package scrubcorpus

import (
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Kind is what a Plant holds.
type Kind string

// The kinds of planted values.
const (
	Secret  Kind = "secret"  // a credential of the Client under test
	Basic   Kind = "basic"   // the client id and secret joined as HTTP Basic joins them
	MSISDN  Kind = "msisdn"  // a phone number, in one of a country's written forms
	Account Kind = "account" // a bank account number
	Email   Kind = "email"   // an email address, with tags, dots and Unicode domains
)

// Kinds lists every Kind, in the order Plants draws them.
var Kinds = []Kind{Secret, Basic, MSISDN, Account, Email}

// Encoding is how a Plant's value is written in its Text.
type Encoding string

// The encodings a value is planted in.
const (
	Raw           Encoding = "raw"            // as it is
	Percent       Encoding = "percent"        // every byte but letters and digits as %XX
	PercentLower  Encoding = "percent-lower"  // every byte as %xx, in lower-case hex, digits too
	DoublePercent Encoding = "double-percent" // Percent, then its '%' escaped again: %252B
	Plus          Encoding = "plus"           // a query value: spaces as '+', the rest as url.QueryEscape
	JSONEscape    Encoding = "json-escape"    // every character as JSON's \uXXXX
	Base64Basic   Encoding = "base64-basic"   // base64 (standard, URL, padded or not): Basic only
	Fullwidth     Encoding = "fullwidth"      // every ASCII character as its fullwidth form: ２３３, ＠
)

// Encodings lists every Encoding. Base64Basic applies to the Basic kind alone.
var Encodings = []Encoding{Raw, Percent, PercentLower, DoublePercent, Plus, JSONEscape, Base64Basic, Fullwidth}

// Country is a numbering phone numbers are written in: its calling code and the length
// of its national number. The SDK's own phone table (billing's phoneCountries) must be
// a subset of Countries: a test of the billing package holds them together.
type Country struct {
	Code     string
	National int
}

// Countries are the numberings MSISDNs are planted in: those of the mobile-money
// providers, and one of the rest of the world.
var Countries = []Country{{Code: "233", National: 9}, {Code: "254", National: 9}, {Code: "44", National: 10}}

// phoneForms write a country code and a national number as people and systems write a
// phone number: international with '+', with 00, bare, grouped by spaces, dots or
// hyphens, and local with the trunk 0.
var phoneForms = []func(code, n string) string{
	func(code, n string) string { return "+" + code + n },
	func(code, n string) string { return "00" + code + n },
	func(code, n string) string { return code + n },
	func(code, n string) string { return "+" + code + " " + n[:2] + " " + n[2:5] + " " + n[5:] },
	func(code, n string) string { return code + "-" + n[:2] + "-" + n[2:5] + "-" + n[5:] },
	func(code, n string) string { return code + "." + n[:2] + "." + n[2:5] + "." + n[5:] },
	func(code, n string) string { return "0" + n },
	func(code, n string) string { return "tel:+" + code + n },
}

// EmailDomains are the domains planted addresses are at: ASCII, Unicode (written as
// such, not in punycode), and several labels deep.
var EmailDomains = []string{"example.com", "bücher.example", "例え.jp", "mail.example.co.uk", "пример.рф"}

// Credentials are the secrets the Client under test holds.
type Credentials struct {
	ClientID, ClientSecret, SecretKey, SessionToken string
}

// NewCredentials returns distinct credentials drawn from r, shaped as the service's are.
func NewCredentials(r *rand.Rand) Credentials {
	return Credentials{
		ClientID:     "cid" + token(r, 12),
		ClientSecret: "cs-" + token(r, 6) + "/" + token(r, 6) + "+" + token(r, 4),
		SecretKey:    "sk_live_" + token(r, 20),
		SessionToken: "sess_" + token(r, 16),
	}
}

// All returns the credentials, the empty ones left out.
func (c Credentials) All() []string {
	var all []string
	for _, v := range []string{c.ClientID, c.ClientSecret, c.SecretKey, c.SessionToken} {
		if v != "" {
			all = append(all, v)
		}
	}
	return all
}

// A Plant is one value planted in a text.
type Plant struct {
	Kind     Kind
	Encoding Encoding
	// Value is the value as a person or the Client holds it.
	Value string
	// Text is Value written in Encoding: what a producer puts in a message, a path, a
	// query or a flag.
	Text string
}

func (p Plant) String() string { return fmt.Sprintf("%s/%s %q", p.Kind, p.Encoding, p.Text) }

// Plants returns n plants drawn from r. The first len(Kinds)×len(Encodings) of them (as
// many as n allows) are every kind in every encoding it can take, in turn; the rest are
// drawn at random.
func Plants(r *rand.Rand, creds Credentials, n int) []Plant {
	var all []Plant
	for _, k := range Kinds {
		for _, e := range Encodings {
			if applies(k, e) {
				all = append(all, plant(r, creds, k, e))
			}
		}
	}
	for len(all) < n {
		k := Kinds[r.IntN(len(Kinds))]
		e := Encodings[r.IntN(len(Encodings))]
		if applies(k, e) {
			all = append(all, plant(r, creds, k, e))
		}
	}
	return all[:n]
}

// applies reports whether kind k is planted in encoding e: base64 is how Basic writes
// its pair, and nothing else.
func applies(k Kind, e Encoding) bool { return e != Base64Basic || k == Basic }

func plant(r *rand.Rand, creds Credentials, k Kind, e Encoding) Plant {
	p := Plant{Kind: k, Encoding: e}
	switch k {
	case Secret:
		all := creds.All()
		p.Value = all[r.IntN(len(all))]
	case Basic:
		p.Value = creds.ClientID + ":" + creds.ClientSecret
	case MSISDN:
		c := Countries[r.IntN(len(Countries))]
		n := strconv.Itoa(2+r.IntN(8)) + digits(r, c.National-1)
		p.Value = phoneForms[r.IntN(len(phoneForms))](c.Code, n)
	case Account:
		a := strconv.Itoa(1+r.IntN(9)) + digits(r, 9+r.IntN(7))
		if r.IntN(2) == 0 {
			var g []string
			for len(a) > 4 {
				g, a = append(g, a[:4]), a[4:]
			}
			a = strings.Join(append(g, a), " ")
		}
		p.Value = a
	case Email:
		local := letters(r, 4) + "." + letters(r, 6)
		switch r.IntN(3) {
		case 0:
			local += "+" + letters(r, 3)
		case 1:
			local = strings.ToUpper(local[:1]) + local[1:] + "." + letters(r, 2)
		}
		p.Value = local + "@" + EmailDomains[r.IntN(len(EmailDomains))]
	}
	p.Text = Encode(r, p.Value, e)
	return p
}

// Encode writes v in e. r picks among a Base64Basic's alphabets and paddings.
func Encode(r *rand.Rand, v string, e Encoding) string {
	switch e {
	case Percent:
		return percent(v, false, true)
	case PercentLower:
		return percent(v, true, false)
	case DoublePercent:
		return strings.ReplaceAll(percent(v, false, true), "%", "%25")
	case Plus:
		return url.QueryEscape(v)
	case JSONEscape:
		var b strings.Builder
		for _, u := range utf16.Encode([]rune(v)) {
			fmt.Fprintf(&b, `\u%04x`, u)
		}
		return b.String()
	case Base64Basic:
		encs := []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding}
		return encs[r.IntN(len(encs))].EncodeToString([]byte(v))
	case Fullwidth:
		var b strings.Builder
		for _, c := range v {
			if c > ' ' && c < 0x7f {
				c += 0xff01 - '!'
			}
			b.WriteRune(c)
		}
		return b.String()
	}
	return v
}

// percent escapes every byte of v, or every byte but ASCII letters and digits.
func percent(v string, lower, keepAlnum bool) string {
	const upperHex, lowerHex = "0123456789ABCDEF", "0123456789abcdef"
	hex := upperHex
	if lower {
		hex = lowerHex
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		if keepAlnum && (c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

// Leaked returns the plants out shows: a secret anywhere in it, decoded or written in
// one of its encodings; of a number, any digit but its last three, in one run of digits
// and separators; of an email address, its local part past the first character.
func Leaked(out string, plants []Plant) []Plant {
	decoded := Decode(out)
	runs := digitRuns(decoded)
	var leaked []Plant
	for _, p := range plants {
		if shows(out, decoded, runs, p) {
			leaked = append(leaked, p)
		}
	}
	return leaked
}

func shows(out, decoded string, runs []string, p Plant) bool {
	switch p.Kind {
	case Secret, Basic:
		if strings.Contains(decoded, p.Value) || strings.Contains(out, p.Value) {
			return true
		}
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
			if strings.Contains(out, enc.EncodeToString([]byte(p.Value))) {
				return true
			}
		}
		if p.Kind == Basic {
			id, secret, _ := strings.Cut(p.Value, ":")
			return strings.Contains(decoded, id) || strings.Contains(decoded, secret)
		}
	case MSISDN, Account:
		d := onlyDigits(p.Value)
		hidden := d[:len(d)-3]
		for _, run := range runs {
			if strings.Contains(run, hidden) {
				return true
			}
		}
	case Email:
		local, _, _ := strings.Cut(p.Value, "@")
		_, first := utf8.DecodeRuneInString(local)
		return strings.Contains(decoded, local[first:])
	}
	return false
}

// Decode reads text as a reader of logs could: percent escapes (also doubled), '+' as
// written, JSON's \uXXXX, \" and \\, and fullwidth characters and digits of any script
// as ASCII, layer after layer, as many layers as the scrubber peels (DecodeLayers).
func Decode(text string) string {
	for range DecodeLayers {
		next := decodeOnce(text)
		if next == text {
			break
		}
		text = next
	}
	return text
}

// DecodeLayers is how many layers of escapes the scrubber reads through: a text escaped
// deeper is not read as what it escapes, by the scrubber or by Decode.
const DecodeLayers = 4

func decodeOnce(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		switch c := s[i]; {
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			n, _ := strconv.ParseUint(s[i+1:i+3], 16, 8)
			b.WriteByte(byte(n))
			i += 3
		case c == '\\' && i+5 < len(s) && s[i+1] == 'u' && allHex(s[i+2:i+6]):
			u, _ := strconv.ParseUint(s[i+2:i+6], 16, 16)
			units := []uint16{uint16(u)}
			i += 6
			if utf16.IsSurrogate(rune(u)) && i+5 < len(s) && s[i] == '\\' && s[i+1] == 'u' && allHex(s[i+2:i+6]) {
				lo, _ := strconv.ParseUint(s[i+2:i+6], 16, 16)
				units = append(units, uint16(lo))
				i += 6
			}
			b.WriteString(string(utf16.Decode(units)))
		case c == '\\' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\' || s[i+1] == '/'):
			b.WriteByte(s[i+1])
			i += 2
		case c >= utf8.RuneSelf:
			r, n := utf8.DecodeRuneInString(s[i:])
			switch {
			case r >= 0xff01 && r <= 0xff5e:
				b.WriteByte(byte(r - 0xff01 + '!'))
			case unicode.IsDigit(r):
				b.WriteByte(byte('0' + digitOf(r)))
			default:
				b.WriteString(s[i : i+n])
			}
			i += n
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}

func digitOf(r rune) int {
	for _, rg := range unicode.Nd.R16 {
		if r >= rune(rg.Lo) && r <= rune(rg.Hi) {
			return int(r-rune(rg.Lo)) % 10
		}
	}
	for _, rg := range unicode.Nd.R32 {
		if r >= rune(rg.Lo) && r <= rune(rg.Hi) {
			return int(r-rune(rg.Lo)) % 10
		}
	}
	return 0
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

func allHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isHex(s[i]) {
			return false
		}
	}
	return true
}

// digitRuns returns the digits of every run of digits and the separators a number is
// written with (spaces, dots, hyphens, '+', parentheses) in s.
func digitRuns(s string) []string {
	var runs []string
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			runs = append(runs, cur.String())
			cur.Reset()
		}
	}
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			cur.WriteRune(r)
		case strings.ContainsRune(" .-+()_", r), unicode.IsSpace(r):
		default:
			flush()
		}
	}
	flush()
	return runs
}

func onlyDigits(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func digits(r *rand.Rand, n int) string {
	var b strings.Builder
	for range n {
		b.WriteByte(byte('0' + r.IntN(10)))
	}
	return b.String()
}

func letters(r *rand.Rand, n int) string {
	var b strings.Builder
	for range n {
		b.WriteByte(byte('a' + r.IntN(26)))
	}
	return b.String()
}

func token(r *rand.Rand, n int) string {
	const alphabet = "abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"
	var b strings.Builder
	for range n {
		b.WriteByte(alphabet[r.IntN(len(alphabet))])
	}
	return b.String()
}
