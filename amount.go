package billing

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// DecimalAmount is money for the endpoints that speak decimals on the wire (direct debit
// and send-to-bank). It holds integer minor units, so 1050 is 10.50, and is written with
// exactly two decimals. Floats never carry money inside the SDK.
//
// Decoding is lenient (10, 10.5, "10.50" and 10.500 are all accepted); a value that
// cannot be held exactly in minor units, such as 10.555, is an error, never rounded.
type DecimalAmount int64

// String formats the amount with exactly two decimals: DecimalAmount(1050) is "10.50".
func (a DecimalAmount) String() string {
	var buf [24]byte
	return string(a.appendTo(buf[:0]))
}

func (a DecimalAmount) appendTo(b []byte) []byte {
	return appendMinorUnits(b, int64(a), 2, 0)
}

// Money returns the amount in currency for display: DecimalAmount(4999).Money("GHS")
// prints as "GHS 49.99". The endpoints that take a DecimalAmount all speak a currency of
// two decimal places.
func (a DecimalAmount) Money(currency string) Money {
	return Money{Amount: int64(a), Currency: currency}
}

// MarshalJSON writes the amount as a JSON number with exactly two decimals.
func (a DecimalAmount) MarshalJSON() ([]byte, error) {
	return a.appendTo(make([]byte, 0, 24)), nil
}

// UnmarshalJSON reads a JSON number or a numeric string.
func (a *DecimalAmount) UnmarshalJSON(b []byte) error {
	s := string(b)
	if s == "null" {
		return nil
	}
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		s = s[1 : len(s)-1]
	}
	v, err := ParseDecimalAmount(s)
	if err != nil {
		return err
	}
	*a = v
	return nil
}

var errDecimalSyntax = errors.New("not a decimal amount")

// ParseDecimalAmount reads a decimal amount such as "10.50", "10.5", "10" or "-3.00". More
// than two decimals are accepted only when the extra digits are zeros.
func ParseDecimalAmount(s string) (DecimalAmount, error) {
	orig := s
	neg := false
	if strings.HasPrefix(s, "-") {
		neg, s = true, s[1:]
	}
	whole, frac, hasDot := strings.Cut(s, ".")
	if whole == "" || !allDigits(whole) || (hasDot && (frac == "" || !allDigits(frac))) {
		return 0, fmt.Errorf("billing: %q: %w", orig, errDecimalSyntax)
	}
	if len(whole) > 1 && whole[0] == '0' {
		return 0, fmt.Errorf("billing: %q: %w (leading zero)", orig, errDecimalSyntax)
	}
	if len(frac) > 2 {
		if strings.Trim(frac[2:], "0") != "" {
			return 0, fmt.Errorf("billing: %q has more than two decimals", orig)
		}
		frac = frac[:2]
	}
	for len(frac) < 2 {
		frac += "0"
	}
	// The magnitude may reach MaxInt64, or MinInt64's one more when negative: exactly the
	// amounts String writes.
	limit := uint64(math.MaxInt64)
	if neg {
		limit++
	}
	units, err := strconv.ParseUint(whole, 10, 64)
	cents, _ := strconv.ParseUint(frac, 10, 64)
	if err != nil || units > (limit-cents)/100 {
		return 0, fmt.Errorf("billing: %q is out of range", orig)
	}
	magnitude := units*100 + cents
	if neg {
		return DecimalAmount(-int64(magnitude-1) - 1), nil // safe for MinInt64
	}
	return DecimalAmount(magnitude), nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
