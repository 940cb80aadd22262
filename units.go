package billing

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// Every amount field of the SDK holds minor units: Amount 50 is GHS 0.50, not GHS 50.
// These constructors write the unit where the amount is written, so that a reader of
//
//	Amount: billing.GHS(50)
//
// sees fifty cedis, and a reader of
//
//	Amount: billing.Minor(4999)
//
// sees that 4999 was meant as pesewas. They compute in integers only.

// GHS returns whole Ghana cedis in minor units (pesewas): billing.GHS(50) is 5000,
// GHS 50.00. For an amount with pesewas, add them: billing.GHS(49) + billing.Minor(99)
// is GHS 49.99.
//
// GHS panics when the amount does not fit in an int64 of pesewas (more than 92
// quadrillion cedis), as a constant that large in code is a mistake; an amount typed by
// a person goes through [ParseMajor], which returns an error instead.
func GHS(cedis int64) int64 {
	v, err := scaleMajor(cedis, currencyDecimals("GHS"))
	if err != nil {
		panic(fmt.Sprintf("billing.GHS(%d): %v", cedis, err))
	}
	return v
}

// Minor returns units unchanged. It marks an amount already in minor units, so that
// Amount: billing.Minor(4999) cannot be read as 4,999 cedis.
func Minor(units int64) int64 { return units }

// ParseMajor reads an amount written in major units, as a person types it ("50",
// "49.99"; "1,000.50" is refused: no separators), and returns it in the currency's minor
// units by ISO 4217: ParseMajor("GHS", "49.99") is 4999, ParseMajor("XOF", "5000") is
// 5000, ParseMajor("KWD", "1.250") is 1250. More decimals than the currency has are
// refused unless they are zeros; nothing is ever rounded. The error is a
// *ValidationError naming field "amount".
func ParseMajor(currency, text string) (int64, error) {
	places := currencyDecimals(strings.ToUpper(currency))
	v, err := parseMinorUnits(text, places)
	if err != nil {
		rule := "is not an amount in major units, such as 49.99"
		switch {
		case errors.Is(err, errAmountRange):
			rule = "is out of range"
		case errors.Is(err, errAmountNotExact):
			rule = fmt.Sprintf("has more than the %d decimals of %s", places, strings.ToUpper(currency))
		}
		return 0, &ValidationError{Field: "amount", Rule: fmt.Sprintf("%q %s", text, rule)}
	}
	return v, nil
}

// parseMinorUnits reads a plain decimal ("49.99", "-3", "1.250") with at most places
// significant decimals into minor units, exactly: errDecimalSyntax for what is not such a
// decimal (a sign other than a leading "-", a leading zero, a separator, an exponent),
// errAmountNotExact for more significant decimals, errAmountRange past int64.
func parseMinorUnits(s string, places int) (int64, error) {
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	whole, frac, hasDot := strings.Cut(s, ".")
	if whole == "" || !allDigits(whole) || (hasDot && (frac == "" || !allDigits(frac))) {
		return 0, errDecimalSyntax
	}
	if len(whole) > 1 && whole[0] == '0' {
		return 0, errDecimalSyntax
	}
	if len(frac) > places {
		if strings.Trim(frac[places:], "0") != "" {
			return 0, errAmountNotExact
		}
		frac = frac[:places]
	}
	frac += strings.Repeat("0", places-len(frac))
	// Accumulate as a negative number, whose range is one wider, so that the most negative
	// amount reads back too.
	var v int64
	for _, c := range whole + frac {
		d := int64(c - '0')
		if v < (math.MinInt64+d)/10 {
			return 0, errAmountRange
		}
		v = v*10 - d
	}
	if !neg {
		if v == math.MinInt64 {
			return 0, errAmountRange
		}
		v = -v
	}
	return v, nil
}

// scaleMajor returns units whole units of a currency with the given decimal places in
// minor units, or an error when that overflows int64.
func scaleMajor(units int64, places int) (int64, error) {
	scale := int64(1)
	for range places {
		scale *= 10
	}
	if units > math.MaxInt64/scale || units < math.MinInt64/scale {
		return 0, fmt.Errorf("%d major units do not fit in int64 minor units", units)
	}
	return units * scale, nil
}
