package billing

import (
	"encoding/hex"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file is how the scrubber reads a text: it decodes it first (percent escapes, also
// doubled, JSON escapes, fullwidth and other Unicode forms of digits and ASCII), so that a
// number, an email address or a secret is found however the text spelled it, and masks
// the span of the original text each one came from.

// What the scrubber masks, besides the secrets it was given.
type detect uint8

const (
	detectPersonal    detect = 1 << iota // phone and account numbers, email addresses
	detectCredentials                    // URL userinfo, credentials written after their name
	detectAll         = detectPersonal | detectCredentials
)

// scrubWith returns text with every form of the secrets, and what the detectors find,
// masked in the original text. Text in which nothing is found is returned as it is,
// without allocating when it needs no decoding.
func scrubWith(text string, secrets []secretForm, what detect) string {
	v := decodeView(text)
	var edits []edit
	for _, secret := range secrets {
		edits = v.findSecret(edits, secret.text, secret.with)
	}
	if what&detectCredentials != 0 {
		edits = v.userinfo(edits)
		edits = v.credentials(edits)
	}
	if what&detectPersonal != 0 {
		edits = v.emails(edits)
		edits = v.numbers(edits)
	}
	return v.apply(edits)
}

// An edit replaces the original text's bytes [start, end) with with.
type edit struct {
	start, end int
	with       string
}

// view is a text decoded for the detectors, with where each of its bytes came from.
type view struct {
	orig string // the text as given
	text string // decoded
	offs []int  // offs[i]: where in orig text[i] came from; offs[len(text)] = len(orig). nil: text is orig
}

// span returns the original span the decoded bytes [a, b) came from: from the start of
// the unit (an escape, a rune) that wrote byte a to the end of the one that wrote b-1.
func (v *view) span(a, b int) (int, int) {
	if v.offs == nil {
		return a, b
	}
	last := v.offs[b-1]
	for b < len(v.text) && v.offs[b] == last {
		b++
	}
	return v.offs[a], v.offs[b]
}

// plain reports whether the decoded byte i is written as it is in the original text.
func (v *view) plain(i int) bool {
	if v.offs == nil {
		return true
	}
	o := v.offs[i]
	return v.orig[o] == v.text[i] && (i+1 == len(v.text) || v.offs[i+1] == o+1)
}

// add appends the edit of the decoded bytes [a, b).
func (v *view) add(edits []edit, a, b int, with string) []edit {
	s, e := v.span(a, b)
	return append(edits, edit{s, e, with})
}

// maxDecodePasses bounds how many layers of escapes the scrubber peels: a number
// percent-encoded twice ("%252B233…") or a JSON escape inside a JSON string.
const maxDecodePasses = 4

// decodeView decodes text until a pass changes nothing, at most maxDecodePasses times.
func decodeView(text string) view {
	v := view{orig: text, text: text}
	if !needsDecoding(text) {
		return v
	}
	for range maxDecodePasses {
		t, offs, changed := decodeOnce(v.text)
		if !changed {
			break
		}
		if v.offs != nil {
			for i, o := range offs {
				offs[i] = v.offs[o]
			}
		}
		v.text, v.offs = t, offs
	}
	return v
}

// needsDecoding reports whether text holds an escape or a byte beyond ASCII.
func needsDecoding(text string) bool {
	for i := 0; i < len(text); i++ {
		if c := text[i]; c == '%' || c == '\\' || c >= utf8.RuneSelf {
			return true
		}
	}
	return false
}

// decodeOnce peels one layer: %XX, JSON's \uXXXX (surrogate pairs too) and \", \\, \/,
// and writes each fullwidth ASCII character, and each decimal digit of any script, as
// its ASCII form. offs says where each output byte came from (with len(s) at the end).
func decodeOnce(s string) (string, []int, bool) {
	var b []byte
	var offs []int
	changed := false
	put := func(from int, p ...byte) {
		for _, c := range p {
			b = append(b, c)
			offs = append(offs, from)
		}
	}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			x, _ := hex.DecodeString(s[i+1 : i+3])
			put(i, x[0])
			i += 3
			changed = true
			continue
		case c == '\\' && i+1 < len(s):
			if r, n := jsonEscape(s[i:]); n > 0 {
				var u [utf8.UTFMax]byte
				put(i, u[:utf8.EncodeRune(u[:], r)]...)
				i += n
				changed = true
				continue
			}
		case c >= utf8.RuneSelf:
			r, n := utf8.DecodeRuneInString(s[i:])
			if a, ok := asciiForm(r); ok {
				put(i, a)
				i += n
				changed = true
				continue
			}
			for k := range n {
				put(i+k, s[i+k])
			}
			i += n
			continue
		}
		put(i, c)
		i++
	}
	if !changed {
		return s, nil, false
	}
	offs = append(offs, len(s))
	return string(b), offs, true
}

func isHex(c byte) bool { return isDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'f') }

// asciiForm returns the ASCII character a Unicode form stands for: a decimal digit of any
// script ('５', '٥', '५'), a fullwidth ASCII character ('＠', 'Ａ'), the small commercial at.
func asciiForm(r rune) (byte, bool) {
	switch {
	case r >= 0xff01 && r <= 0xff5e:
		return byte(r - 0xff01 + '!'), true
	case r == 0xfe6b:
		return '@', true
	case r == 0x3000:
		return ' ', true
	case unicode.IsDigit(r):
		if d := digitValue(r); d >= 0 {
			return byte('0' + d), true
		}
	}
	return 0, false
}

// digitValue returns the value of a decimal digit rune: the Nd ranges are runs of ten
// digits from a zero.
func digitValue(r rune) int {
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
	return -1
}

// apply returns the original text with the edits made.
func (v *view) apply(edits []edit) string {
	if len(edits) == 0 {
		return v.orig
	}
	sort.SliceStable(edits, func(i, j int) bool {
		if edits[i].start != edits[j].start {
			return edits[i].start < edits[j].start
		}
		return edits[i].end > edits[j].end
	})
	// Overlapping edits merge: the first one's replacement stands for their union, so
	// that a value two detectors see in part is hidden whole.
	kept := edits[:1]
	for _, e := range edits[1:] {
		if k := &kept[len(kept)-1]; e.start < k.end {
			k.end = max(k.end, e.end)
			continue
		}
		kept = append(kept, e)
	}
	var b strings.Builder
	b.Grow(len(v.orig))
	last := 0
	for _, e := range kept {
		b.WriteString(v.orig[last:e.start])
		b.WriteString(e.with)
		last = e.end
	}
	b.WriteString(v.orig[last:])
	return b.String()
}

// findSecret adds an edit replacing secret with with for every place it is written in
// the original text or the decoded one. A secret shorter than shortSecret is found only where it stands
// apart from letters and digits, so that a short client id leaves the words holding it.
func (v *view) findSecret(edits []edit, secret, with string) []edit {
	edits = findIn(v.orig, secret, func(a, b int) edit { return edit{a, b, with} }, edits)
	if v.offs != nil {
		edits = findIn(v.text, secret, func(a, b int) edit {
			s, e := v.span(a, b)
			return edit{s, e, with}
		}, edits)
	}
	return edits
}

// shortSecret is the length below which a secret is matched as a whole word only.
const shortSecret = 8

func findIn(text, secret string, mk func(a, b int) edit, edits []edit) []edit {
	for from := 0; ; {
		i := strings.Index(text[from:], secret)
		if i < 0 {
			return edits
		}
		a, b := from+i, from+i+len(secret)
		from = a + 1
		if len(secret) < shortSecret && ((a > 0 && isAlnum(text[a-1])) || (b < len(text) && isAlnum(text[b]))) {
			continue
		}
		edits = append(edits, mk(a, b))
		from = b
	}
}

func isAlnum(c byte) bool { return isLetter(c) || isDigit(c) }

// redacted replaces a secret.
const redacted = "[redacted]"

// userinfo masks the userinfo of every URL ("scheme://user:pass@host") with "***". A URL
// runs from its "//" to the first white space or quote; its userinfo, to the last '@' in
// it, so that a password holding '/', '?', '#' or '@' is hidden whole. An '@' in a URL's
// path or query hides more than the userinfo, never less.
func (v *view) userinfo(edits []edit) []edit {
	s := v.text
	if !strings.Contains(s, "@") || !strings.Contains(s, "//") {
		return edits
	}
	for i := 0; i+1 < len(s); i++ {
		if s[i] != '/' || s[i+1] != '/' {
			continue
		}
		start := i + 2
		end := start
		for end < len(s) && !urlStop(s[end]) {
			end++
		}
		// An escaped '@' in a URL written plainly is part of its path or query ("?email=
		// ama%40example.com"); in a URL escaped whole (a redirect in a query) it ends
		// the userinfo as a plain one does.
		escaped := !v.plain(i)
		for at := end - 1; at > start; at-- {
			if s[at] == '@' && (escaped || v.plain(at)) {
				edits = v.add(edits, start, at, "***")
				break
			}
		}
		i = end - 1
	}
	return edits
}

// urlStop reports whether c ends a URL written in text.
func urlStop(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '"' || c == '\'' || c == '<' || c == '>' || c == '`'
}

// credentialWords are the words after which text may carry a credential: the schemes of
// the Authorization header, and the names of secrets in key=value, key: value and JSON
// text (secrecyByName's credentials).
var credentialWords = []string{"basic", "bearer", "authorization", "secret", "token", "password", "passwd", "otpcode", "apikey", "api_key"}

// credentials masks the value written after a credential word: after "Basic" or
// "Bearer" and a space, and after a secret's name and ':' in prose, a value that looks
// like a credential (credentialShaped); after a name and '=' (a query, a form) or a
// quoted value (JSON), any value. A credential word alone is a word: "takes Basic client
// credentials or a Bearer API key" is help, and stays.
func (v *view) credentials(edits []edit) []edit {
	s := v.text
	for i := 0; i < len(s); i++ {
		c := s[i] | 0x20
		if c != 'b' && c != 'a' && c != 's' && c != 't' && c != 'p' && c != 'o' {
			continue
		}
		for _, w := range credentialWords {
			if !hasPrefixFold(s[i:], w) || (i > 0 && isLetter(s[i-1]) && w != "secret" && w != "token" && w != "password") {
				continue
			}
			scheme := credentialScheme(w)
			at, assigned := valueAfter(s, i+len(w), scheme)
			if at < 0 {
				continue
			}
			if w == "authorization" { // its value is a scheme and a credential
				for _, sc := range []string{"basic ", "bearer "} {
					if hasPrefixFold(s[at:], sc) {
						at += len(sc)
						for at < len(s) && s[at] == ' ' {
							at++
						}
					}
				}
			}
			if at < len(s) && s[at] == '[' { // a list: every element is a secret
				edits, i = v.listElements(edits, at), at
				break
			}
			end := at
			for end < len(s) && credentialByte(s[end]) {
				end++
			}
			minLen := 1
			if scheme {
				minLen = 8
			}
			if end == at || (!assigned && !credentialShaped(s[at:end], minLen)) {
				continue
			}
			edits = v.add(edits, at, end, redacted)
			i = end - 1
			break
		}
	}
	return edits
}

// credentialScheme reports whether the credential word w is an Authorization scheme,
// whose credential follows it after a space rather than after '=' or ':'.
func credentialScheme(w string) bool { return w == "basic" || w == "bearer" }

// listElements hides each element of the list that starts at s[at] ('['), a JSON array
// or a list in prose, up to its ']': the characters inside a quoted element, or an
// unquoted one whole, so that the list keeps its shape.
func (v *view) listElements(edits []edit, at int) []edit {
	s := v.text
	for j := at + 1; j < len(s) && s[j] != ']'; {
		switch c := s[j]; {
		case c == ' ' || c == ',' || c == '\t' || c == '\n':
			j++
		case c == '"' || c == '\'':
			k := j + 1
			for k < len(s) && s[k] != c {
				if s[k] == '\\' {
					k++
				}
				k++
			}
			k = min(k, len(s))
			if k > j+1 {
				edits = v.add(edits, j+1, k, redacted)
			}
			j = k + 1
		default:
			k := j
			for k < len(s) && credentialByte(s[k]) && s[k] != '[' {
				k++
			}
			if k == j {
				return edits
			}
			edits = v.add(edits, j, k, redacted)
			j = k
		}
	}
	return edits
}

// hasPrefixFold reports whether s starts with the lower-case ASCII word w, in any case.
func hasPrefixFold(s, w string) bool {
	if len(s) < len(w) {
		return false
	}
	for i := 0; i < len(w); i++ {
		if s[i]|0x20 != w[i] && s[i] != w[i] {
			return false
		}
	}
	return true
}

// valueAfter returns where the value after a credential word ending at i starts, or -1
// when none follows, and whether it is assigned ('=', or a quoted value): for a scheme,
// after one or more spaces; for a key, after the rest of its name, an optional closing
// quote, '=' or ':', and optional spaces and quote.
func valueAfter(s string, i int, scheme bool) (int, bool) {
	if scheme {
		j := i
		for j < len(s) && s[j] == ' ' {
			j++
		}
		if j == i {
			return -1, false
		}
		return j, false
	}
	for i < len(s) && (isLetter(s[i]) || isDigit(s[i]) || s[i] == '_' || s[i] == '-') {
		i++
	}
	if i < len(s) && (s[i] == '"' || s[i] == '\'') {
		i++
	}
	for i < len(s) && s[i] == ' ' {
		i++
	}
	if i >= len(s) || (s[i] != '=' && s[i] != ':') {
		return -1, false
	}
	assigned := s[i] == '='
	i++
	for i < len(s) && (s[i] == ' ' || s[i] == '"' || s[i] == '\'') {
		assigned = assigned || s[i] != ' '
		i++
	}
	return i, assigned
}

// credentialByte reports whether c may be part of a credential: anything but white
// space, quotes and the separators of a list or a query.
func credentialByte(c byte) bool {
	return c > ' ' && c != '"' && c != '\'' && c != ',' && c != ';' && c != '&' && c != '}' && c != ')' && c != ']'
}

// credentialShaped reports whether v, written after a credential's name in prose, looks
// like a credential rather than a word: minLen characters or more, holding a digit or a
// symbol, or letters in mixed case past the first, or twenty-four letters or more.
// "client", "API", "credentials", "WithSecretKey." are words; "sk_live_4242",
// "hunter2", "Y2lkOnNlY3JldA==" are not. After "Basic" and "Bearer" a credential has
// eight characters at least; after a secret's name and a colon, any.
func credentialShaped(v string, minLen int) bool {
	v = strings.TrimRight(v, ".:!?")
	if len(v) < minLen || v == "" {
		return false
	}
	if len(v) >= 24 {
		return true
	}
	upper := 0
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case isUpper(c):
			if i > 0 {
				upper++
			}
		case c >= 'a' && c <= 'z':
		default:
			return true
		}
	}
	// A word in capitals ("UNAUTHORIZED") is a word; so is one with capitals where its
	// parts start ("WithSecretKey"): a credential mixes case more often than that.
	return upper > 0 && upper < len(v)-1 && upper*3 > len(v)
}

// emails masks the local part of every email address but its first character:
// "ama.mensah+vip@example.com" becomes "a***@example.com", "ama@bücher.example" and
// "ama@例え.jp" alike. The domain stays: it names a provider, not a person.
func (v *view) emails(edits []edit) []edit {
	s := v.text
	if !strings.Contains(s, "@") {
		return edits
	}
	last := 0
	for i := 0; i < len(s); i++ {
		if s[i] != '@' {
			continue
		}
		local := i
		for local > last {
			r, n := utf8.DecodeLastRuneInString(s[last:local])
			if !isEmailLocalRune(r) {
				break
			}
			local -= n
		}
		for local < i && (s[local] == '.' || s[local] == '+' || s[local] == '-') {
			local++ // a local part starts with a letter or digit
		}
		end := i + 1
		dot := false
		for end < len(s) {
			r, n := utf8.DecodeRuneInString(s[end:])
			if !isDomainRune(r) {
				break
			}
			if r == '.' || r == '。' {
				dot = true
			}
			end += n
		}
		for end > i+1 && (s[end-1] == '.' || s[end-1] == '-') {
			end-- // a sentence's full stop ends the address
		}
		if local == i || !dot || end == i+1 || s[i+1] == '.' {
			continue
		}
		if isExample(s, local, end) {
			last = end
			i = end - 1
			continue
		}
		_, first := utf8.DecodeRuneInString(s[local:])
		if local+first < i {
			edits = v.add(edits, local+first, i, "***")
		}
		last = end
		i = end - 1
	}
	return edits
}

// isEmailLocalRune reports whether r may be part of an email address's local part: the
// characters local parts are written with in practice, and letters of any script (the
// rarer ones RFC 5322 allows, =, &, ?, … mostly join an address to what precedes it in
// a query).
func isEmailLocalRune(r rune) bool {
	if r < utf8.RuneSelf {
		c := byte(r)
		return isLetter(c) || isDigit(c) || strings.IndexByte(".'+_-", c) >= 0
	}
	return unicode.IsLetter(r) || unicode.IsMark(r) || unicode.IsDigit(r)
}

// isDomainRune reports whether r may be part of a domain: letters and digits of any
// script (an internationalised domain: bücher.example, 例え.jp), dots and hyphens.
func isDomainRune(r rune) bool {
	if r < utf8.RuneSelf {
		c := byte(r)
		return isLetter(c) || isDigit(c) || c == '.' || c == '-'
	}
	return r == '。' || unicode.IsLetter(r) || unicode.IsMark(r) || unicode.IsDigit(r)
}

// numbers masks every number of seven or more digits but its last three (MSISDNs and
// account numbers in paths, transport errors and the service's messages): see
// maskNumbers for what counts as one.
func (v *view) numbers(edits []edit) []edit {
	s := v.text
	for i := 0; i < len(s); {
		if !isDigit(s[i]) {
			i++
			continue
		}
		start := i
		digits := 0
		for {
			for i < len(s) && isDigit(s[i]) {
				i++
				digits++
			}
			// Another group follows one to three separators.
			j := i
			for n := 0; n < 3; n++ {
				w := separatorLen(s, j)
				if w == 0 {
					break
				}
				j += w
			}
			// A date or the time of day is no number's first group: "2025-01-15 10:22",
			// "10:22:33.123456789"; and a date continues no number: "25.00  2025-01-15".
			if j > i && j < len(s) && isDigit(s[j]) && !isoDate(s[start:i]) && !isoDate(s[j:min(j+10, len(s))]) &&
				!(start > 1 && s[start-1] == ':' && isDigit(s[start-2])) && !hexIdentifierAt(s, j) {
				i = j
				continue
			}
			break
		}
		joinedBefore := start > 0 && isWordByte(s[start-1]) && !numberLabelBefore(s, start)
		if digits < 7 || joinedBefore || isoDate(s[start:i]) || (ipv4(s[start:i]) && i < len(s) && s[i] == ':') ||
			fractionOfSecond(s, start) || isExample(s, start, i) || hexIdentifierAt(s, start) {
			continue
		}
		for j, left := start, digits-3; left > 0; j++ {
			if isDigit(s[j]) {
				edits = v.add(edits, j, j+1, "*")
				left--
			}
		}
	}
	return edits
}

// hexIdentifierAt reports whether the digit at s[k] is part of an identifier made of
// random hex digits, which names no person however many digits it begins with: a run of
// at least 16 hex digits of one case in which digits and letters take turns at least
// twice ("1234567649e5c2ac40e4a508", a reference), or a group of a UUID
// ("12345678-90ab-4cde-8f01-234567890abc"). A number followed by a few letters
// ("9988776655443X", "144100012345678abc") changes turns once and is still a number.
func hexIdentifierAt(s string, k int) bool {
	a, b := k, k
	for a > 0 && isAlnum(s[a-1]) {
		a--
	}
	for b < len(s) && isAlnum(s[b]) {
		b++
	}
	if b-a >= 16 && hexRun(s[a:b]) {
		turns := 0
		for i := a + 1; i < b; i++ {
			if isDigit(s[i]) != isDigit(s[i-1]) {
				turns++
			}
		}
		if turns >= 2 {
			return true
		}
	}
	// The run as each group of a UUID in turn: where the UUID would begin, and whether
	// the 36 bytes there are one.
	offset := 0
	for _, n := range uuidGroups {
		if b-a == n && a-offset >= 0 && uuidAt(s, a-offset) {
			return true
		}
		offset += n + 1
	}
	return false
}

// uuidGroups are the lengths of a UUID's groups, written apart by hyphens.
var uuidGroups = [...]int{8, 4, 4, 4, 12}

// uuidAt reports whether a UUID written in hex of one case begins at s[at], with no
// letter or digit right before or after it.
func uuidAt(s string, at int) bool {
	end := at + 36
	if end > len(s) || (at > 0 && isAlnum(s[at-1])) || (end < len(s) && isAlnum(s[end])) {
		return false
	}
	u, i := s[at:end], 0
	for g, n := range uuidGroups {
		if g > 0 {
			if u[i] != '-' {
				return false
			}
			i++
		}
		i += n
	}
	return hexRun(u)
}

// hexRun reports whether s is hex digits, and the hyphens between a UUID's groups, its
// letters all of one case.
func hexRun(s string) bool {
	lower, upper := false, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case isDigit(c), c == '-':
		case c >= 'a' && c <= 'f':
			lower = true
		case c >= 'A' && c <= 'F':
			upper = true
		default:
			return false
		}
	}
	return !(lower && upper)
}

// fractionOfSecond reports whether the digits at start follow a time's seconds and a
// dot: ":05.999999999".
func fractionOfSecond(s string, start int) bool {
	return start >= 4 && s[start-1] == '.' && isDigit(s[start-2]) && isDigit(s[start-3]) && s[start-4] == ':'
}

// exampleValues are the values the SDK's and the sandbox's help give as examples of what
// to write ("in international form, like 233241234567"). Written right after a word that
// introduces an example (exampleMarkers), one of them is help, not a person's data, and
// stays; anywhere else it is masked as any other.
var exampleValues = []string{"233241234567", "024 123 4567", "name@example.com"}

// exampleMarkers are the words that introduce an example, each with the space after it.
var exampleMarkers = []string{"like ", "such as ", "e.g. ", "for example ", "for "}

// isExample reports whether s[start:end] is one of exampleValues, written as an example.
func isExample(s string, start, end int) bool {
	for _, v := range exampleValues {
		if s[start:end] != v {
			continue
		}
		for _, m := range exampleMarkers {
			if strings.HasSuffix(s[:start], m) {
				return true
			}
		}
	}
	return false
}
