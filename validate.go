package billing

import (
	"fmt"
	"math"
	"strings"
)

// Metadata is a flat set of key-value pairs stored with a resource. Values are strings,
// numbers, booleans or nil; nested objects and arrays are refused by the service and so
// by the SDK.
type Metadata map[string]any

// validate checks that m is flat.
func (m Metadata) validate(field string) error {
	for k, v := range m {
		if k == "" {
			return invalid(field, "keys must not be empty")
		}
		switch x := v.(type) {
		case nil, string, bool, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		case float32:
			if !finite(float64(x)) {
				return invalid(field+"."+k, "must be a finite number")
			}
		case float64:
			if !finite(x) {
				return invalid(field+"."+k, "must be a finite number")
			}
		default:
			return invalid(field+"."+k, fmt.Sprintf("metadata is flat: values are strings, numbers, booleans or null, not %T", v))
		}
	}
	return nil
}

// finite reports whether x is a number JSON can carry: not NaN, not infinite.
func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// referenceString checks the client reference a metadata map carries under key, as the
// wire will carry it: a string obeying rule. A missing key passes.
func (m Metadata) referenceString(field, key string, rule func(field, v string) error) error {
	x, ok := m[key]
	if !ok {
		return nil
	}
	v, isString := x.(string)
	if !isString {
		return invalid(field, fmt.Sprintf("must be a string, not %T", x))
	}
	return rule(field, v)
}

// firstError returns the first non-nil error. Params validators list their rules with it.
func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func required(field, v string) error {
	if strings.TrimSpace(v) == "" {
		return invalid(field, "is required")
	}
	return nil
}

// notBlank checks an optional string that, when given, must say something: empty passes
// (the field is left out), white space alone does not.
func notBlank(field, v string) error {
	if v != "" && strings.TrimSpace(v) == "" {
		return invalid(field, "must not be blank: leave it empty to leave it out")
	}
	return nil
}

func maxLength(field, v string, n int) error {
	if len([]rune(v)) > n {
		return invalid(field, fmt.Sprintf("must be at most %d characters", n))
	}
	return nil
}

// oneOf checks an optional enum value: empty passes, anything else must be listed.
func oneOf[T ~string](field string, v T, allowed ...T) error {
	if v == "" {
		return nil
	}
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	names := make([]string, len(allowed))
	for i, a := range allowed {
		names[i] = string(a)
	}
	return invalid(field, "must be one of "+strings.Join(names, ", "))
}

// emailShape checks the rough shape of an address: one @, a local part, and a domain
// with a dot. The service has the final word.
func emailShape(field, v string) error {
	if v == "" {
		return nil
	}
	local, domain, ok := strings.Cut(v, "@")
	if !ok || local == "" || strings.ContainsAny(v, " \t\r\n<>") || strings.Contains(domain, "@") ||
		!strings.Contains(domain, ".") || strings.HasPrefix(domain, ".") || strings.HasSuffix(domain, ".") {
		return invalid(field, "must be an email address like name@example.com")
	}
	return nil
}
