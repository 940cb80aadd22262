package billing

import (
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/billingsdk/billing-go/storekit"
)

// This file is the path builder: the one gate every caller-supplied string passes on its
// way into a request's path or query (DESIGN "One gate per boundary"). A path value
// becomes exactly one segment of the endpoint's template, and nothing a proxy, CDN or
// router could normalise into another route gets through: ".", "..", an empty value,
// a slash or backslash, a percent sign, '?', '#', white space, control characters,
// invalid UTF-8, and every non-ASCII character (U+FF0E and U+2024 read as dots after
// Unicode normalisation). Each refusal is a *ValidationError naming the field, returned
// before the call is observed or a byte is sent. No service checks its ids on its own.

// pathValue is one caller-supplied string bound for a path segment, with the field a
// refusal names. Its rule is the field's row of valueRules.
type pathValue struct {
	field string
	value string
}

// seg names v, the value of field, as the next segment of an endpoint's path.
func seg(field, v string) pathValue { return pathValue{field: field, value: v} }

// valueRule is what one kind of path or query value may be made of.
type valueRule struct {
	max int // the longest value, in bytes
	// idChars admits the characters an id may hold; nil admits any text (a query value).
	idChars func(c byte) bool
	// says is the rule as a refusal writes it.
	says string
}

// maxIDLength bounds an id of the service's (a customer, product, price, meter or
// subscription id): far beyond any id it hands out, small enough that a forged one
// costs nothing.
const maxIDLength = 255

// maxQueryValue bounds one query value (a list filter such as an email).
const maxQueryValue = 1024

// unreserved reports whether c is an unreserved character of RFC 3986 (letters, digits,
// '-', '.', '_' and '~'): a character that no escaping, unescaping or normalisation
// changes, so a value made of them is its own escaped form.
func unreserved(c byte) bool {
	return isLetter(c) || isDigit(c) || c == '-' || c == '.' || c == '_' || c == '~'
}

// referenceByte reports whether c may appear in a merchant reference looked up by path:
// letters, digits, hyphens and underscores (referenceRules).
func referenceByte(c byte) bool { return storekit.ReferenceByte(c) }

// accountByte reports whether c may appear in an account number: letters and digits.
func accountByte(c byte) bool { return isLetter(c) || isDigit(c) }

// The rules of path and query values.
var (
	idRule = valueRule{max: maxIDLength, idChars: unreserved,
		says: "must be one path segment: letters, digits, '-', '.', '_' or '~', not only dots"}
	clientReferenceRule = valueRule{max: maxClientReference, idChars: referenceByte,
		says: "must be letters, digits, hyphens and underscores only"}
	serviceReferenceRule = valueRule{max: maxServiceReference, idChars: referenceByte,
		says: "must be letters, digits, hyphens and underscores only"}
	accountRule = valueRule{max: maxClientReference, idChars: accountByte,
		says: "must be letters and digits only"}
	queryRule = valueRule{max: maxQueryValue,
		says: "must be valid UTF-8 without control characters"}
)

// valueRules is the rule of each field whose values are narrower than an id, by the
// field's name in paths and queries alike. Every other path value is an id (idRule),
// every other query value text (queryRule). A status check's reference obeys the rule
// every merchant reference is made under, so one made under any of them can be looked up.
var valueRules = map[string]*valueRule{
	"clientReference":     &clientReferenceRule,
	"clientReferenceId":   &clientReferenceRule,
	"reference":           &serviceReferenceRule,
	"disbursementAccount": &accountRule,
}

// pathRule is the rule of a path value of field.
func pathRule(field string) *valueRule {
	if r, ok := valueRules[field]; ok {
		return r
	}
	return &idRule
}

// check refuses v as a value of field under rule r.
func (r *valueRule) check(field, v string) error {
	if r.idChars == nil {
		return checkText(field, v, r.max)
	}
	if v == "" {
		return invalid(field, "is required")
	}
	if len(v) > r.max {
		return invalid(field, fmt.Sprintf("must be at most %d characters", r.max))
	}
	dots := true
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !r.idChars(c) || !unreserved(c) {
			return invalid(field, r.says)
		}
		dots = dots && c == '.'
	}
	if dots {
		// "." and ".." are dot segments (RFC 3986 5.2.4) every normalising proxy
		// removes with the segment before them; a run of more dots some servers
		// trim to nothing.
		return invalid(field, r.says)
	}
	return nil
}

// checkText refuses a query value that is not valid UTF-8, holds a control character
// (C0, DEL or C1) or is longer than max bytes. Encoded by url.Values it is always one
// value, whatever else it holds.
func checkText(field, v string, max int) error {
	if len(v) > max {
		return invalid(field, fmt.Sprintf("must be at most %d bytes", max))
	}
	for i := 0; i < len(v); {
		c := v[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				return invalid(field, queryRule.says)
			}
			i++
			continue
		}
		r, w := utf8.DecodeRuneInString(v[i:])
		if r == utf8.RuneError && w == 1 || (r >= 0x80 && r <= 0x9f) {
			return invalid(field, queryRule.says)
		}
		i += w
	}
	return nil
}

// fill returns the endpoint's path with args in its template's segments, in order, or
// the *ValidationError of the first value its rule refuses. A count of args that does
// not match the template is a bug of the SDK, and panics.
func (e *endpoint) fill(args []pathValue) (string, error) {
	if len(args) == 0 && strings.IndexByte(e.path, '{') < 0 {
		return e.path, nil
	}
	var b strings.Builder
	b.Grow(len(e.path) + 16*len(args))
	rest := e.path
	for _, a := range args {
		open := strings.IndexByte(rest, '{')
		end := strings.IndexByte(rest, '}')
		if open < 0 || end < open {
			panic("billing: more path arguments than segments in " + e.path)
		}
		if err := pathRule(a.field).check(a.field, a.value); err != nil {
			return "", err
		}
		b.WriteString(rest[:open])
		b.WriteString(a.value) // unreserved characters only: its own escaped form
		rest = rest[end+1:]
	}
	if strings.IndexByte(rest, '{') >= 0 {
		panic("billing: fewer path arguments than segments in " + e.path)
	}
	b.WriteString(rest)
	return b.String(), nil
}

// encodeQuery encodes v as a query string after checking each value under its key's
// rule: the field's row of valueRules, else queryRule.
func encodeQuery(v url.Values) (string, error) {
	for key, values := range v {
		r, ok := valueRules[key]
		for _, x := range values {
			var err error
			if ok {
				err = r.check(key, x)
			} else {
				err = checkText(key, x, maxQueryValue)
			}
			if err != nil {
				return "", err
			}
		}
	}
	return v.Encode(), nil
}
