package billing

import (
	"strconv"
	"strings"
)

// Money is an amount in a currency's minor units, for showing to people. Every amount
// the SDK returns is an int64 of minor units (or a [DecimalAmount], which holds them
// too); pair it with its currency to print it:
//
//	fmt.Println(billing.Money{Amount: pay.Net, Currency: pay.Currency}) // GHS 49.02
//
// Money only displays: the SDK never computes with it, and never with floats.
type Money struct {
	// Amount is in the currency's minor units: 2500 is 25.00 GHS, 2500 XOF, 2.500 KWD.
	Amount int64
	// Currency is the ISO 4217 code, such as "GHS". Case does not matter.
	Currency string
}

// String writes the currency code, a space, then the amount with the currency's ISO 4217
// decimal places and a comma between groups of three digits: "GHS 1,000,000.00",
// "GHS -25.00", "XOF 5,000", "KWD 1.250". A currency the SDK does not know gets two
// decimals; without a currency the amount is written alone.
func (m Money) String() string {
	code := strings.ToUpper(m.Currency)
	b := make([]byte, 0, len(code)+32)
	if code != "" {
		b = append(b, code...)
		b = append(b, ' ')
	}
	return string(appendMinorUnits(b, m.Amount, currencyDecimals(code), ','))
}

// currencyDecimals returns the ISO 4217 minor unit of a currency code: how many decimal
// places its amounts have. Codes missing from the table have two, as most currencies do.
func currencyDecimals(code string) int {
	if d, ok := minorUnitExceptions[code]; ok {
		return d
	}
	return 2
}

// minorUnitExceptions lists the ISO 4217 currencies whose minor unit is not two decimal
// places; every other code (GHS, NGN, KES, ZAR, USD, EUR, GBP, ...) has two.
var minorUnitExceptions = map[string]int{
	// No minor unit.
	"BIF": 0, "CLP": 0, "DJF": 0, "GNF": 0, "ISK": 0, "JPY": 0, "KMF": 0, "KRW": 0,
	"PYG": 0, "RWF": 0, "UGX": 0, "UYI": 0, "VND": 0, "VUV": 0, "XAF": 0, "XOF": 0,
	"XPF": 0,
	// Thousandths.
	"BHD": 3, "IQD": 3, "JOD": 3, "KWD": 3, "LYD": 3, "OMR": 3, "TND": 3,
	// Ten-thousandths.
	"CLF": 4, "UYW": 4,
}

// appendMinorUnits appends v minor units as a decimal with the given number of places,
// and a separator between groups of three whole digits unless sep is 0. It is the one
// formatter of amounts: DecimalAmount writes the wire form with it (two places, no
// grouping), Money the form people read.
func appendMinorUnits(b []byte, v int64, places int, sep byte) []byte {
	u := uint64(v)
	if v < 0 {
		b = append(b, '-')
		u = uint64(-(v + 1)) + 1 // safe for math.MinInt64
	}
	var scale uint64 = 1
	for range places {
		scale *= 10
	}
	whole, frac := u/scale, u%scale
	if sep == 0 {
		b = strconv.AppendUint(b, whole, 10)
	} else {
		var digits [20]byte
		w := strconv.AppendUint(digits[:0], whole, 10)
		for i, d := range w {
			if i > 0 && (len(w)-i)%3 == 0 {
				b = append(b, sep)
			}
			b = append(b, d)
		}
	}
	if places == 0 {
		return b
	}
	b = append(b, '.')
	for scale /= 10; scale > 0; scale /= 10 {
		b = append(b, byte('0'+frac/scale%10))
	}
	return b
}
