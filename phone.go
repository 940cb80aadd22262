package billing

import "strings"

// NormalizePhone returns a phone number in international form, digits only, country code
// first: "+233 24 123 4567", "00233241234567" and "233-24-123-4567" all give
// "233241234567". Spaces, hyphens, dots and parentheses are dropped. A local number
// ("0241234567") is refused, because the country it belongs to cannot be known.
func NormalizePhone(phone string) (string, error) {
	return normalizePhone("phone", phone)
}

func normalizePhone(field, phone string) (string, error) {
	s := strings.TrimSpace(phone)
	hadPlus := strings.HasPrefix(s, "+")
	s = strings.TrimPrefix(s, "+")
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
	digits := b.String()
	if !hadPlus && strings.HasPrefix(digits, "00") {
		digits = digits[2:] // the international call prefix
	}
	if strings.HasPrefix(digits, "0") {
		return "", invalid(field, "looks like a local number: send it in international form with the country code, like 233241234567 for 024 123 4567 in Ghana")
	}
	// E.164 allows up to 15 digits; the shortest numbers in use have 7 (Niue: +683 4002).
	if len(digits) < 7 || len(digits) > 15 {
		return "", invalid(field, "must have 7 to 15 digits in international form, like 233241234567")
	}
	return digits, nil
}
