package sandbox

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mustFields parses body, which must be a JSON object.
func mustFields(t *testing.T, body string) *fields {
	t.Helper()
	f, err := parseFields([]byte(body))
	require.NoError(t, err)
	return f
}

// requireRule checks that err is the validation error of field with message.
func requireRule(t *testing.T, err error, field, message string) {
	t.Helper()
	var e *apiError
	require.True(t, errors.As(err, &e), "want a validation error, got %v", err)
	assert.Equal(t, http.StatusBadRequest, e.status)
	assert.Equal(t, CodeValidation, e.code)
	assert.Equal(t, field, e.field)
	assert.Equal(t, message, e.message)
}

func TestDecodeFieldsRefusesWhatIsNotAnObject(t *testing.T) {
	for _, tc := range []struct{ body, message string }{
		{"", "request body must be a JSON object"},
		{"   ", "request body must be a JSON object"},
		{"[]", "request body must be a JSON object"},
		{`"text"`, "request body must be a JSON object"},
		{"null", "request body must be a JSON object"},
		{"42", "request body must be a JSON object"},
		{"{", "request body is not valid JSON"},
		{`{"a":1} {"b":2}`, "request body is not valid JSON"},
		{`{"a":}`, "request body is not valid JSON"},
	} {
		t.Run(tc.body, func(t *testing.T) {
			_, err := decodeFields(request(t, http.MethodPost, "/", "", tc.body))
			var e *apiError
			require.True(t, errors.As(err, &e))
			assert.Equal(t, http.StatusBadRequest, e.status)
			assert.Equal(t, CodeValidation, e.code)
			assert.Contains(t, e.message, tc.message)
		})
	}
	t.Run("over 1 MiB", func(t *testing.T) {
		body := `{"a":"` + strings.Repeat("x", maxBodyBytes) + `"}`
		_, err := decodeFields(request(t, http.MethodPost, "/", "", body))
		var e *apiError
		require.True(t, errors.As(err, &e))
		assert.Equal(t, http.StatusRequestEntityTooLarge, e.status)
		assert.Equal(t, "request body must not exceed 1 MiB", e.message)
	})
	t.Run("exactly 1 MiB", func(t *testing.T) {
		body := `{"a":"` + strings.Repeat("x", maxBodyBytes-8) + `"}`
		f, err := decodeFields(request(t, http.MethodPost, "/", "", body))
		require.NoError(t, err)
		assert.True(t, f.has("a"))
	})
}

func TestRequire(t *testing.T) {
	for _, body := range []string{`{}`, `{"email":null}`, `{"email":""}`, `{"email":"  "}`} {
		f := mustFields(t, body)
		f.require("email")
		requireRule(t, f.err(), "email", "email is required")
	}
	f := mustFields(t, `{"email":"a@b.co","amount":0,"flag":false}`)
	f.require("email", "amount", "flag")
	assert.NoError(t, f.err(), "zero and false are values")
}

func TestFirstErrorWins(t *testing.T) {
	f := mustFields(t, `{"a":1,"b":2}`)
	_, _ = f.optionalString("a")
	_, _ = f.optionalString("b")
	requireRule(t, f.err(), "a", "a must be a string")
}

func TestStrings(t *testing.T) {
	f := mustFields(t, `{"s":"text","n":5,"blank":" ","null":null}`)
	s, ok := f.optionalString("s")
	assert.True(t, ok)
	assert.Equal(t, "text", s)
	_, ok = f.optionalString("absent")
	assert.False(t, ok)
	_, ok = f.optionalString("null")
	assert.False(t, ok, "null reads as absent")
	assert.NoError(t, f.err())
	assert.Equal(t, "text", f.requiredString("s"))

	_, ok = f.optionalString("n")
	assert.False(t, ok)
	requireRule(t, f.err(), "n", "n must be a string")

	for _, body := range []string{`{"name":null}`, `{"name":" "}`} {
		f := mustFields(t, body)
		_, ok := f.nonEmptyString("name")
		assert.False(t, ok)
		requireRule(t, f.err(), "name", "name must not be empty")
	}
	f = mustFields(t, `{"name":"Ada"}`)
	name, ok := f.nonEmptyString("name")
	assert.Equal(t, "Ada", name)
	assert.True(t, ok)
	_, ok = f.nonEmptyString("other")
	assert.False(t, ok)
	assert.NoError(t, f.err())
}

func TestNullable(t *testing.T) {
	f := mustFields(t, `{"phone":"+233241234567","description":null}`)
	phone := nullableField(f, "phone", f.phone)
	assert.Equal(t, nullable[string]{set: true, value: "+233241234567"}, phone)
	assert.Equal(t, nullable[string]{null: true}, nullableField(f, "description", f.optionalString))
	assert.Equal(t, nullable[string]{}, nullableField(f, "externalId", f.optionalString))
	require.NoError(t, f.err())

	old := "old"
	dst := &old
	nullableField(f, "externalId", f.optionalString).applyTo(&dst)
	assert.Equal(t, "old", *dst, "absent leaves the value")
	phone.applyTo(&dst)
	assert.Equal(t, "+233241234567", *dst, "a value replaces it")
	nullableField(f, "description", f.optionalString).applyTo(&dst)
	assert.Nil(t, dst, "null clears it")

	bad := mustFields(t, `{"phone":"0241"}`)
	assert.Equal(t, nullable[string]{}, nullableField(bad, "phone", bad.phone))
	requireRule(t, bad.err(), "phone", "phone must be an international phone number: an optional + then 7 to 15 digits, country code first (not a local number starting with 0)")
}

func TestIntegers(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		want int64
		ok   bool
	}{
		{"10", 10, true},
		{"-3", -3, true},
		{"0", 0, true},
		{"9223372036854775807", 9223372036854775807, true},
		{"9223372036854775808", 0, false},
		{"10.5", 0, false},
		{"10.0", 0, false},
		{"1e3", 0, false},
		{`"10"`, 0, false},
		{"true", 0, false},
	} {
		t.Run(tc.raw, func(t *testing.T) {
			f := mustFields(t, `{"n":`+tc.raw+`}`)
			n, ok := f.integer("n")
			assert.Equal(t, tc.ok, ok)
			assert.Equal(t, tc.want, n)
			if !tc.ok {
				requireRule(t, f.err(), "n", "n must be an integer")
			}
		})
	}

	for _, raw := range []string{"-", "", "1-2"} {
		_, err := parseStrictInteger(json.RawMessage(raw))
		assert.Error(t, err, raw)
	}

	f := mustFields(t, `{"zero":0,"neg":-1,"ten":10,"half":0.5}`)
	for _, name := range []string{"zero", "neg", "half"} {
		g := mustFields(t, `{"zero":0,"neg":-1,"half":0.5}`)
		_, ok := g.positiveInteger(name)
		assert.False(t, ok)
		requireRule(t, g.err(), name, name+" must be a positive integer")
	}
	n, ok := f.positiveInteger("ten")
	assert.Equal(t, int64(10), n)
	assert.True(t, ok)
	_, ok = f.positiveInteger("absent")
	assert.False(t, ok)
	assert.NoError(t, f.err())

	n, ok = f.integerRange("ten", 1, 10)
	assert.Equal(t, int64(10), n)
	assert.True(t, ok)
	_, ok = f.integerRange("ten", 1, 9)
	assert.False(t, ok)
	requireRule(t, f.err(), "ten", "ten must be an integer from 1 to 9")
}

func TestBoolean(t *testing.T) {
	f := mustFields(t, `{"yes":true,"no":false,"text":"true"}`)
	b, ok := f.boolean("yes")
	assert.True(t, b && ok)
	b, ok = f.boolean("no")
	assert.True(t, !b && ok)
	_, ok = f.boolean("absent")
	assert.False(t, ok)
	assert.NoError(t, f.err())
	_, ok = f.boolean("text")
	assert.False(t, ok)
	requireRule(t, f.err(), "text", "text must be a boolean")
}

func TestEnum(t *testing.T) {
	f := mustFields(t, `{"status":"ACTIVE","lower":"active"}`)
	v, ok := f.enum("status", customerStatuses...)
	assert.Equal(t, "ACTIVE", v)
	assert.True(t, ok)
	_, ok = f.enum("lower", customerStatuses...)
	assert.False(t, ok)
	requireRule(t, f.err(), "lower", "lower must be one of ACTIVE, INACTIVE, BLOCKED")
}

func TestTimestamp(t *testing.T) {
	f := mustFields(t, `{"utc":"2025-01-31T09:30:00Z","offset":"2025-01-31T10:30:00.250+01:00","date":"2025-01-31","num":5}`)
	v, ok := f.timestamp("utc")
	assert.True(t, ok)
	assert.True(t, v.Equal(time.Date(2025, 1, 31, 9, 30, 0, 0, time.UTC)))
	v, ok = f.timestamp("offset")
	assert.True(t, ok)
	assert.True(t, v.Equal(time.Date(2025, 1, 31, 9, 30, 0, 250e6, time.UTC)))
	assert.NoError(t, f.err())
	_, ok = f.timestamp("date")
	assert.False(t, ok)
	requireRule(t, f.err(), "date", "date must be an RFC 3339 timestamp such as 2025-01-31T09:30:00Z")
}

func TestShapes(t *testing.T) {
	for _, tc := range []struct {
		value string
		email bool
		phone bool
		code  bool
	}{
		{"ada@example.com", true, false, false},
		{"ada.lovelace+billing@mail.example.co.uk", true, false, false},
		{"ada@example", false, false, false},
		{"Ada <ada@example.com>", false, false, false},
		{"ada example.com", false, false, false},
		{"@example.com", false, false, false},
		{"+233241234567", false, true, false},
		{"233241234567", false, true, false},
		{"1234567", false, true, false},
		{"123456", false, false, false},
		{"0241234567", false, false, false},
		{"+0241234567", false, false, false},
		{"+1234567890123456", false, false, false},
		{"+233 24 123", false, false, false},
		{"ghs", false, false, true},
		{"USD", false, false, true},
		{"US", false, false, false},
		{"US1", false, false, false},
	} {
		assert.Equal(t, tc.email, isEmail(tc.value), "email %q", tc.value)
		assert.Equal(t, tc.phone, isPhone(tc.value), "phone %q", tc.value)
		assert.Equal(t, tc.code, isCurrency(tc.value), "currency %q", tc.value)
	}

	f := mustFields(t, `{"currency":"ghs","email":"nope"}`)
	c, ok := f.currency("currency")
	assert.Equal(t, "GHS", c, "currencies are upper-cased")
	assert.True(t, ok)
	_, ok = f.email("email")
	assert.False(t, ok)
	requireRule(t, f.err(), "email", "email must be an email address")
}

func TestMetadata(t *testing.T) {
	f := mustFields(t, `{"m":{"orderId":"A1","count":12345678901234567890,"ratio":0.5,"gift":true,"note":null},"cleared":null}`)
	m, ok := f.metadata("m")
	require.True(t, ok)
	assert.Equal(t, map[string]any{"orderId": "A1", "count": json.Number("12345678901234567890"), "ratio": json.Number("0.5"), "gift": true, "note": nil}, m)
	m, ok = f.metadata("cleared")
	assert.True(t, ok, "null is given")
	assert.Nil(t, m)
	_, ok = f.metadata("absent")
	assert.False(t, ok)
	require.NoError(t, f.err())

	for _, tc := range []struct{ raw, message string }{
		{`{"a":{"b":1}}`, `m must be flat: the value of "a" is an object or array`},
		{`{"z":1,"a":[1]}`, `m must be flat: the value of "a" is an object or array`},
		{`[1]`, "m must be an object"},
		{`"text"`, "m must be an object"},
	} {
		f := mustFields(t, `{"m":`+tc.raw+`}`)
		_, ok := f.metadata("m")
		assert.False(t, ok)
		requireRule(t, f.err(), "m", tc.message)
	}
}

func TestQueryEnum(t *testing.T) {
	v, err := queryEnum(url.Values{"status": {"BLOCKED"}}, "status", customerStatuses...)
	assert.NoError(t, err)
	assert.Equal(t, "BLOCKED", v)
	v, err = queryEnum(url.Values{}, "status", customerStatuses...)
	assert.NoError(t, err)
	assert.Empty(t, v)
	_, err = queryEnum(url.Values{"status": {""}}, "status", customerStatuses...)
	requireRule(t, err, "status", "status must be one of ACTIVE, INACTIVE, BLOCKED")
}
