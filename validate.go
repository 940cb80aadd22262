package billing

import (
	"fmt"
	"math"
	"strings"

	"github.com/billingsdk/billing-go/storekit"
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

// maxClientReference is the longest merchant reference the service takes.
const maxClientReference = storekit.MaxClientReference

// maxServiceReference bounds a reference the service itself hands out (a checkout
// payment's reference): generous, yet short enough that no forged value costs much.
const maxServiceReference = storekit.MaxServiceReference

// reference names a merchant reference the params of a money movement carry.
type reference string

// The merchant references, one for each money movement.
const (
	referenceReceive      reference = "receive"
	referenceSend         reference = "send"
	referenceCheckout     reference = "checkout"
	referenceBankTransfer reference = "send-to-bank"
	referenceDirectDebit  reference = "direct-debit"
	referenceMandate      reference = "mandate"
)

// referenceRule is what a merchant reference may be made of: 1 to maxClientReference
// ASCII letters and digits, and hyphens and underscores too when punct is set.
type referenceRule struct{ punct bool }

// String is the rule as the docs write it; the field docs and the README's table of
// references say exactly this.
func (r referenceRule) String() string {
	if r.punct {
		return fmt.Sprintf("1-%d characters: letters, digits, '-' and '_'", maxClientReference)
	}
	return fmt.Sprintf("1-%d characters: letters and digits only", maxClientReference)
}

// referenceRules is the rule of every merchant reference, one row a reference. Receive,
// send and checkout take hyphens and underscores (merchants write ORDER-2291-A and
// ord_123, and the provider takes them); the bank, debit and mandate endpoints take
// letters and digits only.
var referenceRules = map[reference]referenceRule{
	referenceReceive:      {punct: true},
	referenceSend:         {punct: true},
	referenceCheckout:     {punct: true},
	referenceBankTransfer: {punct: false},
	referenceDirectDebit:  {punct: false},
	referenceMandate:      {punct: false},
}

// required checks the reference r of a movement whose status check it keys: present and
// obeying its rule.
func (r reference) required(field, v string) error {
	if v == "" {
		return invalid(field, "is required: it is the key of the status check")
	}
	return r.optional(field, v)
}

// optional checks the reference r where the service makes it optional: empty passes.
func (r reference) optional(field, v string) error {
	rule := referenceRules[r]
	if v == "" {
		return nil
	}
	if len(v) > maxClientReference || !referenceChars(v, rule.punct) {
		return invalid(field, "must be "+rule.String())
	}
	return nil
}

// referenceChars reports whether v is made of ASCII letters and digits, and also hyphens
// and underscores when punct is set.
func referenceChars(v string, punct bool) bool {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if (c >= '0' && c <= '9') || (c|0x20 >= 'a' && c|0x20 <= 'z') || (punct && (c == '-' || c == '_')) {
			continue
		}
		return false
	}
	return true
}

// lookupReference checks a reference a status check puts in its path or query: present,
// at most max characters, and made of letters, digits, hyphens and underscores only. A
// dot, a slash or a percent sign would make the path name another endpoint. It takes
// every reference of referenceRules, so one made under any of them can be looked up.
func lookupReference(field, v string, max int) error {
	if v == "" {
		return invalid(field, "is required")
	}
	return referenceShape(field, v, max, true)
}

// referenceShape checks an optional path segment: at most max characters, letters and
// digits, and also hyphens and underscores when punct is set.
func referenceShape(field, v string, max int, punct bool) error {
	if len(v) > max {
		return invalid(field, fmt.Sprintf("must be at most %d characters", max))
	}
	if referenceChars(v, punct) {
		return nil
	}
	if punct {
		return invalid(field, "must be letters, digits, hyphens and underscores only")
	}
	return invalid(field, "must be letters and digits only")
}
