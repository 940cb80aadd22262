package billing_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"

	billing "github.com/billingsdk/billing-go"
)

func TestMoneyString(t *testing.T) {
	for _, tc := range []struct {
		amount   int64
		currency string
		want     string
	}{
		{100000000, "GHS", "GHS 1,000,000.00"},
		{2500, "GHS", "GHS 25.00"},
		{2475, "ghs", "GHS 24.75"},
		{5, "GHS", "GHS 0.05"},
		{0, "GHS", "GHS 0.00"},
		{-2500, "GHS", "GHS -25.00"},
		{-5, "NGN", "NGN -0.05"},
		{99999, "KES", "KES 999.99"},
		{100000, "USD", "USD 1,000.00"},
		{123456789, "EUR", "EUR 1,234,567.89"},
		{5000, "XOF", "XOF 5,000"},
		{1000000, "XAF", "XAF 1,000,000"},
		{-999, "UGX", "UGX -999"},
		{123456, "JPY", "JPY 123,456"},
		{0, "JPY", "JPY 0"},
		{1250, "KWD", "KWD 1.250"},
		{1234567, "BHD", "BHD 1,234.567"},
		{7, "KWD", "KWD 0.007"},
		{12345, "CLF", "CLF 1.2345"},
		{150, "ZZZ", "ZZZ 1.50"}, // unknown: two decimals
		{150, "", "1.50"},        // no currency: the amount alone
		{math.MaxInt64, "GHS", "GHS 92,233,720,368,547,758.07"},
		{math.MinInt64, "GHS", "GHS -92,233,720,368,547,758.08"},
		{math.MinInt64, "JPY", "JPY -9,223,372,036,854,775,808"},
	} {
		m := billing.Money{Amount: tc.amount, Currency: tc.currency}
		assert.Equal(t, tc.want, m.String(), "%d %s", tc.amount, tc.currency)
		assert.Equal(t, tc.want, fmt.Sprint(m), "fmt uses String")
		assert.Equal(t, tc.want, fmt.Sprint(&m), "and so does a pointer")
	}
}

// DecimalAmount keeps its wire form (two decimals, no grouping) and shares the formatter.
func TestDecimalAmountDisplaysAsMoney(t *testing.T) {
	a := billing.DecimalAmount(123456789)
	assert.Equal(t, "1234567.89", a.String())
	assert.Equal(t, "GHS 1,234,567.89", a.Money("GHS").String())
	assert.Equal(t, "-0.05", billing.DecimalAmount(-5).String())
	assert.Equal(t, "92233720368547758.07", billing.DecimalAmount(math.MaxInt64).String())
	assert.Equal(t, "-92233720368547758.08", billing.DecimalAmount(math.MinInt64).String())
}
