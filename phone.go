package billing

import (
	"fmt"
	"strings"
)

// NormalizePhone returns a phone number in international form, digits only, country code
// first: "+233 24 123 4567", "00233241234567" and "233-24-123-4567" all give
// "233241234567". Spaces, hyphens, dots and parentheses are dropped. A local number
// ("0241234567", or "24 123 4567" without its trunk 0) is refused, because the country it
// belongs to cannot be known. A number of a country the mobile-money providers serve
// (phoneCountries: Ghana, Kenya) must have that country's length, and no trunk 0 after
// the country code ("+233 024 123 4567" is refused); any other number must have 7 to 15
// digits with its country code, and not as many as a provider country's national number.
func NormalizePhone(phone string) (string, error) {
	return normalizePhone("phone", phone)
}

// phoneCountry is the numbering of one country the providers serve: its calling code and
// the length of its national significant number (the digits after the code, without the
// trunk 0 written at home).
type phoneCountry struct {
	name     string
	code     string
	national int
	example  string // a number in international form, for the refusal's rule
}

// phoneCountries are the countries of the mobile-money providers: MTN, Telecel and
// AirtelTigo in Ghana, M-PESA in Kenya. A country the providers add is a row here.
var phoneCountries = []phoneCountry{
	{name: "Ghana", code: "233", national: 9, example: "233241234567"},
	{name: "Kenya", code: "254", national: 9, example: "254712345678"},
}

// The bounds of a number of any other country, with its country code: E.164 allows 15
// digits, and the shortest numbers in use have 7 (Niue: +683 4002). A number exactly as
// long as a provider country's national number is that country's local number written
// without its trunk 0 ("24 123 4567" would otherwise go out as +241, Gabon): it is
// refused, and with it the rare numbers of that length elsewhere (the Faroes, Greenland).
const (
	minOtherPhone = 7
	maxPhone      = 15
)

func normalizePhone(field, phone string) (string, error) {
	s := strings.TrimSpace(phone)
	hadPlus := strings.HasPrefix(s, "+")
	s = strings.TrimPrefix(s, "+")
	digits := s // a number written as digits only is its own digits
	if !isDigits(s) {
		var b strings.Builder
		b.Grow(len(s))
		for _, r := range s {
			switch {
			case r >= '0' && r <= '9':
				b.WriteRune(r)
			case r == ' ' || r == '-' || r == '.' || r == '(' || r == ')':
			default:
				return "", invalid(field, "must be a phone number in international form, like 233241234567")
			}
		}
		digits = b.String()
	}
	if !hadPlus && strings.HasPrefix(digits, "00") {
		digits = digits[2:] // the international call prefix
	}
	if strings.HasPrefix(digits, "0") {
		return "", invalid(field, "looks like a local number: send it in international form with the country code, like 233241234567 for 024 123 4567 in Ghana")
	}
	for _, c := range phoneCountries {
		national, ok := strings.CutPrefix(digits, c.code)
		if !ok {
			continue
		}
		if strings.HasPrefix(national, "0") {
			return "", invalid(field, fmt.Sprintf("has the trunk 0 after the country code %s (%s): drop it, like %s", c.code, c.name, c.example))
		}
		if len(national) != c.national {
			return "", invalid(field, fmt.Sprintf("a %s number has %d digits after the country code %s, like %s", c.name, c.national, c.code, c.example))
		}
		return digits, nil
	}
	for _, c := range phoneCountries {
		if len(digits) == c.national {
			return "", invalid(field, fmt.Sprintf("has %d digits, as a national number of %s has without its country code and trunk 0: send it in international form, like %s", c.national, c.name, c.example))
		}
	}
	if len(digits) < minOtherPhone || len(digits) > maxPhone {
		return "", invalid(field, fmt.Sprintf("must have %d to %d digits in international form, country code first, like 233241234567", minOtherPhone, maxPhone))
	}
	return digits, nil
}
