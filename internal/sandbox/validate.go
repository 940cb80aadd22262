package sandbox

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/mail"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// maxBodyBytes caps a request body; a larger one is refused with HTTP 413.
const maxBodyBytes = 1 << 20

// fields is a request body decoded as a JSON object, kept raw so each field
// can be checked against the spec's exact rules (an integer written 10.5 or
// "10" is refused, null differs from absent). Its getters return the value and
// whether the field was given and valid; the first rule broken is remembered
// and reported by err, so a handler reads every field and then checks once.
type fields struct {
	raw   map[string]json.RawMessage
	first *apiError
}

// decodeFields reads the body of r as a JSON object. It refuses a body over
// 1 MiB, malformed JSON and any JSON value other than an object.
func decodeFields(r *http.Request) (*fields, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes+1))
	if err != nil {
		return nil, validationError("", "request body could not be read: %v", err)
	}
	if len(body) > maxBodyBytes {
		return nil, &apiError{status: http.StatusRequestEntityTooLarge, code: CodeValidation, message: "request body must not exceed 1 MiB"}
	}
	return parseFields(body)
}

func parseFields(body []byte) (*fields, error) {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, validationError("", "request body must be a JSON object")
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &raw); err != nil {
		return nil, validationError("", "request body is not valid JSON: %v", err)
	}
	return &fields{raw: raw}, nil
}

// dropBlank forgets the optional fields named that were sent as an empty or
// blank string: clients of the provider send optional fields empty
// ("RecipientPhoneNumber": ""), meaning not given.
func (f *fields) dropBlank(names ...string) {
	for _, name := range names {
		var s string
		if raw, ok := f.raw[name]; ok && json.Unmarshal(raw, &s) == nil && strings.TrimSpace(s) == "" {
			delete(f.raw, name)
		}
	}
}

// fail records a broken rule unless an earlier one was recorded.
func (f *fields) fail(field, format string, args ...any) {
	if f.first == nil {
		f.first = validationError(field, format, args...)
	}
}

// err reports the first rule broken, or nil.
func (f *fields) err() error {
	if f.first == nil {
		return nil
	}
	return f.first
}

// has reports whether the body names the field, even as null.
func (f *fields) has(name string) bool {
	_, ok := f.raw[name]
	return ok
}

// value returns the raw JSON of a field given with a value other than null.
func (f *fields) value(name string) (json.RawMessage, bool) {
	raw, ok := f.raw[name]
	if !ok || isNull(raw) {
		return nil, false
	}
	return raw, true
}

func isNull(raw json.RawMessage) bool { return string(raw) == "null" }

// require checks that each field is given, not null and, for a string, not
// blank: "email is required".
func (f *fields) require(names ...string) {
	for _, name := range names {
		raw, ok := f.value(name)
		var s string
		if ok && json.Unmarshal(raw, &s) == nil && strings.TrimSpace(s) == "" {
			ok = false
		}
		if !ok {
			f.fail(name, "%s is required", name)
		}
	}
}

// optionalString returns a string field; absent and null give ok false.
func (f *fields) optionalString(name string) (string, bool) {
	raw, ok := f.value(name)
	if !ok {
		return "", false
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		f.fail(name, "%s must be a string", name)
		return "", false
	}
	return s, true
}

// requiredString returns a string field that must be given and not blank.
func (f *fields) requiredString(name string) string {
	f.require(name)
	s, _ := f.optionalString(name)
	return s
}

// nonEmptyString returns an optional string field that, when named, must not
// be null or blank: a name sent on update.
func (f *fields) nonEmptyString(name string) (string, bool) {
	raw, present := f.raw[name]
	if !present {
		return "", false
	}
	s, ok := f.optionalString(name)
	if isNull(raw) || ok && strings.TrimSpace(s) == "" {
		f.fail(name, "%s must not be empty", name)
		return "", false
	}
	return s, ok
}

// stringWhere returns a string field that passes valid; otherwise it records
// "<name> must be <rule>".
func (f *fields) stringWhere(name, rule string, valid func(string) bool) (string, bool) {
	s, ok := f.optionalString(name)
	if ok && !valid(s) {
		f.fail(name, "%s must be %s", name, rule)
		return "", false
	}
	return s, ok
}

// enum returns a string field that is one of allowed, compared exactly.
func (f *fields) enum(name string, allowed ...string) (string, bool) {
	return f.stringWhere(name, "one of "+strings.Join(allowed, ", "), func(s string) bool {
		return slices.Contains(allowed, s)
	})
}

// email returns a string field shaped like an email address (local@domain.tld).
func (f *fields) email(name string) (string, bool) {
	return f.stringWhere(name, "an email address", isEmail)
}

// phone returns a string field in international format: an optional +, then
// 7 to 15 digits, e.g. +233241234567 or 233241234567.
func (f *fields) phone(name string) (string, bool) {
	return f.stringWhere(name, "an international phone number: an optional + then 7 to 15 digits, country code first (not a local number starting with 0)", isPhone)
}

// currency returns a 3-letter ISO 4217 code, upper-cased: the spec takes
// currencies case-insensitively.
func (f *fields) currency(name string) (string, bool) {
	s, ok := f.stringWhere(name, "a 3-letter ISO 4217 currency code", isCurrency)
	return strings.ToUpper(s), ok
}

// timestamp returns an RFC 3339 time field.
func (f *fields) timestamp(name string) (time.Time, bool) {
	s, ok := f.optionalString(name)
	if !ok {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		f.fail(name, "%s must be an RFC 3339 timestamp such as 2025-01-31T09:30:00Z", name)
		return time.Time{}, false
	}
	return t, true
}

// integer returns a field written as a JSON integer: 10.5, 1e3 and "10" are refused.
func (f *fields) integer(name string) (int64, bool) {
	return f.integerWhere(name, "an integer", nil)
}

// positiveInteger returns an integer field greater than zero (amounts, SPEC "Limits").
func (f *fields) positiveInteger(name string) (int64, bool) {
	return f.integerWhere(name, "a positive integer", func(n int64) bool { return n > 0 })
}

// integerRange returns an integer field from lowest to highest inclusive.
func (f *fields) integerRange(name string, lowest, highest int64) (int64, bool) {
	return f.integerWhere(name, fmt.Sprintf("an integer from %d to %d", lowest, highest), func(n int64) bool {
		return n >= lowest && n <= highest
	})
}

func (f *fields) integerWhere(name, rule string, valid func(int64) bool) (int64, bool) {
	raw, ok := f.value(name)
	if !ok {
		return 0, false
	}
	n, err := parseStrictInteger(raw)
	if err != nil || valid != nil && !valid(n) {
		f.fail(name, "%s must be %s", name, rule)
		return 0, false
	}
	return n, true
}

// parseStrictInteger accepts only the digits of a JSON integer literal, with
// an optional minus sign, that fit an int64.
func parseStrictInteger(raw json.RawMessage) (int64, error) {
	digits := strings.TrimPrefix(string(raw), "-")
	if digits == "" || strings.Trim(digits, "0123456789") != "" {
		return 0, fmt.Errorf("not an integer literal: %s", raw)
	}
	return strconv.ParseInt(string(raw), 10, 64)
}

// boolean returns a field written as JSON true or false.
func (f *fields) boolean(name string) (bool, bool) {
	raw, ok := f.value(name)
	if !ok {
		return false, false
	}
	var b bool
	if err := json.Unmarshal(raw, &b); err != nil {
		f.fail(name, "%s must be a boolean", name)
		return false, false
	}
	return b, true
}

// metadata returns a flat key-value object (SPEC "Conventions"): keys are not
// empty, values are strings, numbers, booleans or null; a nested object or
// array is refused.
// Numbers keep their exact text. A field given as null returns nil and ok
// true, so an update can clear the metadata.
func (f *fields) metadata(name string) (map[string]any, bool) {
	raw, ok := f.raw[name]
	if !ok {
		return nil, false
	}
	if isNull(raw) {
		return nil, true
	}
	decoder := json.NewDecoder(bytes.NewReader(raw))
	decoder.UseNumber()
	var m map[string]any
	if err := decoder.Decode(&m); err != nil {
		f.fail(name, "%s must be an object", name)
		return nil, false
	}
	for _, key := range slices.Sorted(maps.Keys(m)) {
		if key == "" {
			f.fail(name, "%s keys must not be empty", name)
			return nil, false
		}
		switch m[key].(type) {
		case map[string]any, []any:
			f.fail(name, "%s must be flat: the value of %q is an object or array", name, key)
			return nil, false
		}
	}
	return m, true
}

// nullable is an optional field that the request may set to null, which
// differs from leaving it out (SPEC: "null clears it on update").
type nullable[T any] struct {
	set   bool // given with a valid value
	null  bool // given as JSON null
	value T
}

// nullableField reads a field with get, telling null from absent.
func nullableField[T any](f *fields, name string, get func(string) (T, bool)) nullable[T] {
	raw, ok := f.raw[name]
	if !ok {
		return nullable[T]{}
	}
	if isNull(raw) {
		return nullable[T]{null: true}
	}
	v, ok := get(name)
	return nullable[T]{set: ok, value: v}
}

// applyTo stores the field in *dst: nil for null, the value when set,
// nothing when the field was absent.
func (n nullable[T]) applyTo(dst **T) {
	switch {
	case n.null:
		*dst = nil
	case n.set:
		v := n.value
		*dst = &v
	}
}

// queryEnum returns the query parameter name, which when given must be one
// of allowed; "" when absent.
func queryEnum(q url.Values, name string, allowed ...string) (string, error) {
	v := q.Get(name)
	if q.Has(name) && !slices.Contains(allowed, v) {
		return "", validationError(name, "%s must be one of %s", name, strings.Join(allowed, ", "))
	}
	return v, nil
}

func isEmail(s string) bool {
	addr, err := mail.ParseAddress(s)
	if err != nil || addr.Address != s || addr.Name != "" {
		return false
	}
	_, domain, _ := strings.Cut(s, "@")
	return strings.Contains(strings.Trim(domain, "."), ".")
}

func isPhone(s string) bool {
	digits := strings.TrimPrefix(s, "+")
	// A country code never starts with 0: a leading 0 is a local number, whose country
	// cannot be known.
	return len(digits) >= 7 && len(digits) <= 15 && digits[0] != '0' && strings.Trim(digits, "0123456789") == ""
}

func isCurrency(s string) bool {
	return len(s) == 3 && strings.Trim(strings.ToUpper(s), "ABCDEFGHIJKLMNOPQRSTUVWXYZ") == ""
}
