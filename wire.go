package billing

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// This file holds the tolerant readers every wire struct uses for the fields the two
// wires write differently (DESIGN "Two wires"): amounts, timestamps and response codes.
// Each reads what either wire sends and records a value it cannot read on the value
// itself, never failing the decode of the enclosing struct: encoding/json abandons the
// whole body when one field's UnmarshalJSON fails, and one unreadable field must not
// hide the state fields beside it.

// amountUnit is what a plain JSON integer means on an amount field. A fraction, an
// exponent or a numeric string means major units on every field, whatever its unit.
//
// The rule, per field:
//   - minorUnits where the service's reference says integer minor units: the checkout record and event,
//     the receive and send answers and their status checks (2500 is 25.00);
//   - majorUnits where the spec writes decimals: callbacks, direct debit, send-to-bank
//     (10 is 10.00), and every field of the provider's wire.
//
// Keys alone cannot tell the wires apart: the receive status check is the same
// lower-camel object on both, with amount 2500 (minor units) on the spec's wire and 0.1
// (cedis) on the provider's. The spec refuses decimals on minor-unit objects, so one
// amount written with a fraction shows the whole object is in major units: objectUnit
// applies that to its siblings, so amount 1 beside charges 0.02 is 1.00. A body that
// marks the provider's wire decides too: a send status check whose code is the word
// "success" (ResponseCode.isSuccessWord; the spec's says 0000) is in cedis throughout,
// and so is a receive or debit status check whose currencyCode is null (the provider's
// way; the spec always names the currency). Otherwise an object of whole numbers only
// is read as the spec says.
type amountUnit uint8

const (
	minorUnits amountUnit = iota + 1 // a plain integer is minor units
	majorUnits                       // every number is major units
)

// objectUnit returns the unit in which to read the plain integers of one object whose
// amount fields are declared in unit declared: major units as soon as one of them is
// written in major units (see amountUnit).
func objectUnit(declared amountUnit, amounts ...wireAmount) amountUnit {
	for _, a := range amounts {
		if a.form == amountMajor {
			return majorUnits
		}
	}
	return declared
}

// amountForm says how an amount was written.
type amountForm uint8

const (
	amountAbsent  amountForm = iota // missing, null or ""
	amountInteger                   // a plain JSON integer: its unit is the field's
	amountMajor                     // a fraction, an exponent or a numeric string: major units
	amountInvalid                   // unreadable, or not exact in minor units
)

// maxAmountLiteral bounds the text of an amount the reader looks at; anything longer is
// no amount either wire sends.
const maxAmountLiteral = 64

var (
	errAmountAbsent   = errors.New("billing: amount absent")
	errAmountRange    = errors.New("out of range")
	errAmountNotExact = errors.New("finer than a minor unit")
)

// wireAmount is an amount field as either wire writes it: 2500, 0.8, 0.010, "12.50",
// null. Decoding never fails; minor gives the value in minor units, or the field's own
// error. Floats never carry it: the literal's digits are read exactly.
type wireAmount struct {
	form  amountForm
	value int64 // amountInteger: as written; amountMajor: already in minor units
	err   error // amountInvalid: why
}

// UnmarshalJSON reads a JSON number, a numeric string or null. Anything else is recorded
// as invalid on the value, not returned, so the rest of the object is still read.
func (a *wireAmount) UnmarshalJSON(b []byte) error {
	*a = readAmount(b)
	return nil
}

func readAmount(b []byte) wireAmount {
	b = bytes.TrimSpace(b)
	if len(b) > maxAmountLiteral {
		return wireAmount{form: amountInvalid, err: fmt.Errorf("billing: amount %s…: longer than %d characters", b[:16], maxAmountLiteral)}
	}
	s := string(b)
	switch {
	case s == "null", s == "":
		return wireAmount{}
	case s[0] == '"':
		text, err := unquote(b)
		if err != nil {
			return invalidAmount(s, errDecimalSyntax)
		}
		text = strings.TrimSpace(text)
		if text == "" {
			return wireAmount{}
		}
		v, err := majorToMinor(text)
		if err != nil {
			return invalidAmount(s, err)
		}
		return wireAmount{form: amountMajor, value: v}
	case s[0] != '-' && (s[0] < '0' || s[0] > '9'):
		return invalidAmount(s, errDecimalSyntax)
	case !strings.ContainsAny(s, ".eE"):
		v, err := strconv.ParseInt(s, 10, 64)
		if errors.Is(err, strconv.ErrRange) {
			return invalidAmount(s, errAmountRange)
		} else if err != nil {
			return invalidAmount(s, errDecimalSyntax)
		}
		return wireAmount{form: amountInteger, value: v}
	}
	v, err := majorToMinor(s)
	if err != nil {
		return invalidAmount(s, err)
	}
	return wireAmount{form: amountMajor, value: v}
}

func invalidAmount(literal string, err error) wireAmount {
	return wireAmount{form: amountInvalid, err: fmt.Errorf("billing: amount %s: %w", literal, err)}
}

// majorToMinor converts a decimal in major units, such as "0.010", "-12.50" or "1.5e1",
// to minor units exactly. It brings the text to the plain form "W.FF" (the exponent
// applied by moving the point, zeros that change nothing dropped) and leaves the rest to
// the one parser of two-decimal amounts, ParseDecimalAmount.
func majorToMinor(s string) (int64, error) {
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	mantissa, exp := s, ""
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mantissa, exp = s[:i], s[i+1:]
		if exp == "" {
			return 0, errDecimalSyntax
		}
	}
	whole, frac, hasDot := strings.Cut(mantissa, ".")
	if whole == "" || !allDigits(whole) || !allDigits(frac) || (hasDot && frac == "") {
		return 0, errDecimalSyntax
	}
	shift := 0
	if exp != "" {
		var err error
		if shift, err = strconv.Atoi(exp); err != nil && !errors.Is(err, strconv.ErrRange) {
			return 0, errDecimalSyntax
		}
	}
	all := whole + frac
	digits := strings.TrimLeft(all, "0")
	if digits == "" {
		return 0, nil
	}
	// point is where the decimal point falls in digits, which starts at the first
	// significant digit; trailing zeros do not move it.
	switch {
	case shift > 40:
		return 0, errAmountRange
	case shift < -40:
		return 0, errAmountNotExact
	}
	point := len(whole) - (len(all) - len(digits)) + shift
	digits = strings.TrimRight(digits, "0")
	switch {
	case len(digits)-point > 2:
		return 0, errAmountNotExact
	case point > 19:
		return 0, errAmountRange
	}
	var text string
	switch {
	case point <= 0:
		text = "0." + strings.Repeat("0", -point) + digits
	case point >= len(digits):
		text = digits + strings.Repeat("0", point-len(digits))
	default:
		text = digits[:point] + "." + digits[point:]
	}
	v, err := ParseDecimalAmount(sign + text)
	if err != nil {
		return 0, errAmountRange // the text is well formed and exact: only its size is left
	}
	return int64(v), nil
}

// minor returns the amount in minor units, reading a plain integer in unit u (see
// amountUnit). An absent amount returns errAmountAbsent; an unreadable one its own error.
func (a wireAmount) minor(u amountUnit) (int64, error) {
	switch a.form {
	case amountAbsent:
		return 0, errAmountAbsent
	case amountInvalid:
		return 0, a.err
	case amountMajor:
		return a.value, nil
	}
	switch u {
	case minorUnits:
		return a.value, nil
	case majorUnits:
		if a.value > math.MaxInt64/100 || a.value < math.MinInt64/100 {
			return 0, fmt.Errorf("billing: amount %d: %w", a.value, errAmountRange)
		}
		return a.value * 100, nil
	}
	return 0, fmt.Errorf("billing: amount %d: no unit declared for its field", a.value)
}

// present reports whether the field carried an amount, readable or not.
func (a wireAmount) present() bool { return a.form != amountAbsent }

// MarshalJSON writes the amount back in the form it was read: a plain integer as
// written, any other number in major units with two decimals, null when absent. An
// unreadable amount is not written: there is nothing exact to write.
func (a wireAmount) MarshalJSON() ([]byte, error) {
	switch a.form {
	case amountAbsent:
		return []byte("null"), nil
	case amountInteger:
		return strconv.AppendInt(nil, a.value, 10), nil
	case amountMajor:
		return DecimalAmount(a.value).MarshalJSON()
	}
	return nil, a.err
}

// wireTime is a timestamp field as either wire writes it: ISO 8601 with 0 to 9
// fractional digits, with or without a zone (none means UTC), or "YYYY-MM-DD HH:MM:SS"
// in UTC (the send and send-to-bank status checks). Decoding never fails: null, "" and a
// missing field are the zero time, and an unreadable value is recorded on the value.
type wireTime struct {
	at  time.Time
	err error
}

// wireTimeLayouts are tried in turn. A layout without a fraction still reads one:
// time.Parse accepts fractional seconds after the seconds field.
var wireTimeLayouts = [...]string{
	"2006-01-02T15:04:05Z07:00",
	"2006-01-02T15:04:05",
	time.DateTime,
	"2006-01-02 15:04:05Z07:00",
}

// timeLayoutsFor returns the layouts of wireTimeLayouts that may read s, the likelier
// first, so that a time is not first tried, and its error built, in layouts it cannot
// be in: every layout writes its date in ten characters and then T or a space, and a
// time with a zone ends in Z or has a sign after its seconds. A layout left out would
// have failed; one put first would have failed or been the one that reads s, as the
// layouts of one separator never read the same text.
func timeLayoutsFor(s string) []string {
	if len(s) <= 10 || (s[10] != 'T' && s[10] != ' ') {
		return nil
	}
	sep, zone := 0, 0
	if s[10] == ' ' {
		sep = 1
	}
	if strings.HasSuffix(s, "Z") || len(s) > 19 && strings.ContainsAny(s[19:], "+-") {
		zone = 1
	}
	return timeLayoutOrders[sep][zone]
}

// timeLayoutOrders are wireTimeLayouts by separator (T, space) and zone (none, one).
var timeLayoutOrders = [2][2][]string{
	{{wireTimeLayouts[1], wireTimeLayouts[0]}, {wireTimeLayouts[0], wireTimeLayouts[1]}},
	{{wireTimeLayouts[2], wireTimeLayouts[3]}, {wireTimeLayouts[3], wireTimeLayouts[2]}},
}

// maxTimeLiteral bounds the text of a timestamp: the longest layout with nine
// fractional digits and a zone is 35 characters.
const maxTimeLiteral = 40

// UnmarshalJSON reads a JSON string or null; anything else is recorded as invalid.
func (t *wireTime) UnmarshalJSON(b []byte) error {
	*t = readTime(b)
	return nil
}

func readTime(b []byte) wireTime {
	b = bytes.TrimSpace(b)
	if string(b) == "null" {
		return wireTime{}
	}
	if len(b) > maxTimeLiteral+2 {
		return wireTime{err: fmt.Errorf("billing: timestamp %s…: longer than %d characters", b[:16], maxTimeLiteral)}
	}
	s, err := unquote(b)
	if err != nil {
		return wireTime{err: fmt.Errorf("billing: timestamp %s is not a string", b)}
	}
	if s = strings.TrimSpace(s); s == "" {
		return wireTime{}
	}
	if v, ok := plainDateTime(s); ok {
		return wireTime{at: v}
	}
	for _, layout := range timeLayoutsFor(s) {
		if v, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			if v = v.UTC(); v.Year() < 0 || v.Year() > 9999 {
				break // a zone offset pushed it outside the years RFC 3339 can write
			}
			return wireTime{at: v}
		}
	}
	return wireTime{err: fmt.Errorf("billing: timestamp %q is not ISO 8601 or YYYY-MM-DD HH:MM:SS in years 0 to 9999", s)}
}

// plainDateTime reads s when it is exactly "YYYY-MM-DD HH:MM:SS" or "YYYY-MM-DDTHH:MM:SS"
// and a valid time, as time.ParseInLocation reads it in UTC (time.DateTime, or
// wireTimeLayouts' T form without a zone), digit by digit: the status checks' answers
// write their times so. ok is false for any other text, which the layouts then read or
// refuse.
func plainDateTime(s string) (_ time.Time, ok bool) {
	if len(s) != 19 || s[4] != '-' || s[7] != '-' || (s[10] != ' ' && s[10] != 'T') || s[13] != ':' || s[16] != ':' {
		return time.Time{}, false
	}
	number := func(from, to int) int {
		n := 0
		for _, c := range []byte(s[from:to]) {
			if c < '0' || c > '9' {
				return -1
			}
			n = n*10 + int(c-'0')
		}
		return n
	}
	year, month, day := number(0, 4), number(5, 7), number(8, 10)
	hour, minute, sec := number(11, 13), number(14, 16), number(17, 19)
	if year < 0 || month < 1 || month > 12 || day < 1 || day > daysIn(month, year) ||
		hour < 0 || hour > 23 || minute < 0 || minute > 59 || sec < 0 || sec > 59 {
		return time.Time{}, false
	}
	return time.Date(year, time.Month(month), day, hour, minute, sec, 0, time.UTC), true
}

// daysIn is the number of days of month in year, in the proleptic Gregorian calendar
// time.Parse checks a day against.
func daysIn(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// get returns the time in UTC: the zero time when the field was absent, and the
// field's own error when it could not be read.
func (t wireTime) get() (time.Time, error) { return t.at, t.err }

// MarshalJSON writes the time as RFC 3339 with its fraction, null when absent. An
// unreadable time is not written.
func (t wireTime) MarshalJSON() ([]byte, error) {
	if t.err != nil {
		return nil, t.err
	}
	if t.at.IsZero() {
		return []byte("null"), nil
	}
	return t.at.MarshalJSON()
}

// wireCode is the response code of a body, under whichever key carries it:
// responseCode (ResponseCode too: encoding/json matches keys case-insensitively) or
// code (the provider's mandate status check). Embed it in a wire struct and call code.
type wireCode struct {
	ResponseCode ResponseCode `json:"responseCode"`
	Code         ResponseCode `json:"code"`
}

// code returns the body's response code as sent, responseCode first. The word
// "success" of the send and send-to-bank status checks is returned as it is: it is no
// failure (IsFailure) and no CodeSuccess either, so the transaction's state is read
// from transactionStatus, as the spec says.
func (w wireCode) code() ResponseCode {
	if w.ResponseCode != "" {
		return w.ResponseCode
	}
	return w.Code
}

// wirePreApprovalID is a mandate's id under whichever key carries it: the spec's
// servicePreApprovalId, or the provider's own, its brand in the name:
// hubtelPreApprovalId in the initiate, verify-OTP and reactivate answers,
// hubtelPreapprovalId in the status answer, HubtelPreapprovalId in the callback
// (encoding/json matches keys case-insensitively, so each field reads every casing of
// its name). The two keys are aliases of one field, as responseCode and code are
// (wireCode): both present with values that disagree is a contradiction, never a
// choice. Embed it in a wire struct and call id.
type wirePreApprovalID struct {
	ServicePreApprovalID wireText `json:"servicePreApprovalId"`
	HubtelPreApprovalID  wireText `json:"hubtelPreApprovalId"`
}

// id returns the mandate's id as sent, the spec's spelling first.
func (w wirePreApprovalID) id() string {
	if w.ServicePreApprovalID != "" {
		return string(w.ServicePreApprovalID)
	}
	return string(w.HubtelPreApprovalID)
}

// wireNullableText is a wireText that also remembers whether the field was written as
// JSON null, which the provider does where the spec always writes a value.
type wireNullableText struct {
	text wireText
	null bool
}

// UnmarshalJSON reads null, or a wireText.
func (t *wireNullableText) UnmarshalJSON(b []byte) error {
	t.null = string(bytes.TrimSpace(b)) == "null"
	return t.text.UnmarshalJSON(b)
}

// wireText is a text field as either wire writes it: a string, or a number where an id
// was written as one (its digits are kept as written). null, and a value of any other
// type, read as "": an id the SDK cannot read is an absent id, never a failed decode of
// the object that holds the state.
type wireText string

// UnmarshalJSON reads a string or a number; anything else reads as "".
func (t *wireText) UnmarshalJSON(b []byte) error {
	*t = ""
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return nil
	}
	switch c := b[0]; {
	case c == '"':
		if len(b) >= 2 && bytes.IndexByte(b, '\\') < 0 && utf8.Valid(b) {
			*t = wireText(b[1 : len(b)-1]) // the common case: nothing to unescape or replace
			return nil
		}
		var s string
		if json.Unmarshal(b, &s) == nil {
			*t = wireText(s)
		}
	case c == '-' || (c >= '0' && c <= '9'):
		*t = wireText(b)
	}
	return nil
}

// wireValue is a field of any other type, read when it holds a T and left at the zero T
// when it holds anything else, so that one field of the wrong type never costs the
// object its other fields.
type wireValue[T any] struct{ v T }

// UnmarshalJSON reads a T, or leaves the zero T.
func (w *wireValue[T]) UnmarshalJSON(b []byte) error {
	var v T
	if json.Unmarshal(b, &v) == nil {
		w.v = v
	} else {
		w.v = *new(T)
	}
	return nil
}

// minorOr0 returns the amount in minor units read in unit u, or 0 when it is absent or
// unreadable: the result types hold no per-field error, and an amount the SDK cannot
// read is no amount, never a reason to lose the state beside it.
func (a wireAmount) minorOr0(u amountUnit) int64 {
	v, err := a.minor(u)
	if err != nil {
		return 0
	}
	return v
}

// foldedOneOf returns the constant among known that s equals, ignoring case and
// surrounding space, or s as written when none does: the provider writes states in
// its own casing ("Success", "PAID").
func foldedOneOf[T ~string](s wireText, known ...T) T {
	trimmed := strings.TrimSpace(string(s))
	for _, k := range known {
		if strings.EqualFold(trimmed, string(k)) {
			return k
		}
	}
	return T(s)
}
