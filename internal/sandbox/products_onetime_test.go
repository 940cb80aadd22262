package sandbox

import (
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// priceRequestSamples holds, for every field a price request may carry, a value valid
// on a recurring price. Fields of the price record the sandbox sets itself are listed
// apart; the test fails when the record gains a field that is in neither.
var (
	priceRequestSamples = map[string]any{
		"unitAmount": 5000, "currency": "GHS", "nickname": "Monthly", "scheme": "PER_UNIT", "isRecurring": true,
		"interval": "MONTH", "intervalCount": 3, "trialPeriodDays": 14, "metadata": map[string]any{"plan": "pro"},
	}
	priceSetBySandbox = map[string]bool{"id": true, "active": true, "createdAt": true}
)

// Every request field of a price, tried on a one-time and on a recurring price: the
// one-time price refuses each recurring-only field (the table createPrice reads) with
// HTTP 400, code 4000 and the field, and writes nothing; anything else is accepted.
func TestOneTimePriceRefusesRecurringOnlyFields(t *testing.T) {
	s := newTestServer(t, Config{})
	p := createProduct(t, s, map[string]any{"name": "Pro"})
	recurringOnly := map[string]bool{}
	for _, f := range recurringOnlyPriceFields {
		recurringOnly[f.name] = true
	}
	record := reflect.TypeFor[price]()
	for i := range record.NumField() {
		name, _, _ := strings.Cut(record.Field(i).Tag.Get("json"), ",")
		if name == "" || name == "-" || priceSetBySandbox[name] {
			continue
		}
		sample, ok := priceRequestSamples[name]
		require.True(t, ok, "the price field %q has no sample in priceRequestSamples", name)
		if name == "isRecurring" {
			continue // the price type itself
		}
		for _, recurring := range []bool{false, true} {
			body := map[string]any{"unitAmount": 100}
			if recurring {
				body["isRecurring"], body["interval"] = true, "DAY"
			}
			body[name] = sample
			before := priceCount(s)
			rec := serve(t, s, http.MethodPost, "/v1/products/"+p.ID+"/prices", basicHeader, body)
			if recurring || !recurringOnly[name] {
				assert.Equal(t, http.StatusCreated, rec.Code, "%s on a price with isRecurring %v: %s", name, recurring, rec.Body)
				continue
			}
			requireError(t, rec, http.StatusBadRequest, CodeValidation, name, name+" is only for a recurring price")
			assert.Equal(t, before, priceCount(s), "a refused price is not written")
		}
	}
	assert.Len(t, recurringOnly, 3, "interval, intervalCount and trialPeriodDays")
}

// A one-time price shows no interval and no trial, and the interval count every price
// shows (1): sending exactly those is accepted.
func TestOneTimePriceTakesWhatItShows(t *testing.T) {
	s := newTestServer(t, Config{})
	p := createProduct(t, s, map[string]any{"name": "Pro"})
	for _, body := range []string{
		`{"unitAmount":1,"interval":null,"trialPeriodDays":null}`,
		`{"unitAmount":1,"isRecurring":false,"intervalCount":1,"trialPeriodDays":0}`,
	} {
		pr := createPrice(t, s, p.ID, body)
		assert.Nil(t, pr.Interval, body)
		assert.Equal(t, int64(1), pr.IntervalCount, body)
		assert.False(t, pr.IsRecurring, body)
	}
	// The report's case: a one-time price with a monthly interval and a trial.
	requireError(t, serve(t, s, http.MethodPost, "/v1/products/"+p.ID+"/prices", basicHeader,
		`{"unitAmount":1,"interval":"MONTH","trialPeriodDays":7}`), http.StatusBadRequest, CodeValidation, "interval", "one-time price")
}
