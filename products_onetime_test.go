package billing

import (
	"reflect"
	"strings"
	"testing"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// priceFieldSamples holds, for every field of PriceCreateParams, a value that is valid
// on a recurring price. The test below fails when a field is added without one, so a
// new recurring-only field cannot slip past the one-time rule untested.
var priceFieldSamples = map[string]any{
	"UnitAmount":      int64(5000),
	"Currency":        "GHS",
	"Nickname":        "Monthly",
	"Scheme":          PriceSchemePerUnit,
	"IsRecurring":     true,
	"Interval":        PriceIntervalMonth,
	"IntervalCount":   3,
	"TrialPeriodDays": 14,
	"Metadata":        Metadata{"plan": "pro"},
}

// Every field of a price is tried on both price types: a one-time price refuses each
// recurring-only field (the table the validation reads), before anything is sent; every
// other field, and every field on a recurring price, is accepted.
func TestPriceRecurringOnlyFieldsAreRefusedOnAOneTimePrice(t *testing.T) {
	recurringOnlyField := map[string]bool{}
	for _, f := range recurringOnly {
		recurringOnlyField[f.field] = true
	}
	typ := reflect.TypeFor[PriceCreateParams]()
	seen := map[string]bool{}
	for i := range typ.NumField() {
		field := typ.Field(i)
		sample, ok := priceFieldSamples[field.Name]
		require.True(t, ok, "PriceCreateParams.%s has no sample value in priceFieldSamples", field.Name)
		wire, _, _ := strings.Cut(field.Tag.Get("json"), ",")
		seen[wire] = true
		for _, recurring := range []bool{false, true} {
			p := PriceCreateParams{UnitAmount: 100}
			if recurring {
				p.IsRecurring, p.Interval = true, PriceIntervalDay
			}
			if field.Name == "IsRecurring" {
				continue // the price type itself, set above
			}
			reflect.ValueOf(&p).Elem().Field(i).Set(reflect.ValueOf(sample))
			err := p.validate()
			if recurring || !recurringOnlyField[wire] {
				assert.NoError(t, err, "%s on a price with isRecurring %v", wire, recurring)
				continue
			}
			var v *ValidationError
			require.ErrorAs(t, err, &v, "%s on a one-time price", wire)
			assert.Equal(t, wire, v.Field)
			assert.Contains(t, v.Rule, "recurring", "the rule says why: %s", v.Rule)
		}
	}
	for name := range recurringOnlyField {
		assert.True(t, seen[name], "recurringOnly names %q, which PriceCreateParams does not send", name)
	}
	assert.Len(t, recurringOnlyField, 3, "interval, intervalCount and trialPeriodDays")
}

// What a one-time price shows when nothing recurring is set stays accepted: an interval
// count of 1 (the count every price shows) and no trial.
func TestPriceOneTimeDefaultsStayAccepted(t *testing.T) {
	for _, p := range []PriceCreateParams{
		{UnitAmount: 100},
		{UnitAmount: 100, IntervalCount: 1},
		{UnitAmount: 100, TrialPeriodDays: 0},
	} {
		assert.NoError(t, p.validate(), "%+v", p)
	}
}

// CreatePrice refuses the one-time price with an interval before sending anything.
func TestCreatePriceRefusesAnIntervalOnAOneTimePriceBeforeSending(t *testing.T) {
	c, mock := newMockClient(t)
	mock.RegisterNoResponder(httpmock.NewStringResponder(500, "must not be called"))
	_, err := c.Products.CreatePrice(ctx(), "prod_1", &PriceCreateParams{UnitAmount: 5000, Interval: PriceIntervalMonth, TrialPeriodDays: 7})
	var v *ValidationError
	require.ErrorAs(t, err, &v)
	assert.Equal(t, "interval", v.Field)
	assert.Zero(t, mock.GetTotalCallCount())
}
