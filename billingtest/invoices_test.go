package billingtest

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	billing "github.com/billingsdk/billing-go"
)

// Invoices mirrors the control GET /sandbox/subscriptions/{id}/invoices: the same
// invoices, field by field, and nothing for an unknown subscription (404 over HTTP).
func TestInvoicesMirrorTheControl(t *testing.T) {
	srv := NewServer(t, WithManualClock())
	c := srv.Client()
	ctx := context.Background()
	cust, err := c.Customers.Create(ctx, &billing.CustomerCreateParams{Email: "kofi@example.com", Name: "Kofi"})
	require.NoError(t, err)
	product, err := c.Products.Create(ctx, &billing.ProductCreateParams{Name: "Pro"})
	require.NoError(t, err)
	price, err := c.Products.CreatePrice(ctx, product.ID, &billing.PriceCreateParams{UnitAmount: 2500, IsRecurring: true, Interval: billing.PriceIntervalWeek})
	require.NoError(t, err)
	sub, err := c.Subscriptions.Create(ctx, &billing.SubscriptionCreateParams{CustomerID: cust.ID, PriceID: price.ID})
	require.NoError(t, err)
	srv.Advance(7 * 24 * time.Hour)

	invoices := srv.Invoices(sub.ID)
	require.Len(t, invoices, 2)
	status, body := call(t, srv, http.MethodGet, "/sandbox/subscriptions/"+sub.ID+"/invoices", "")
	require.Equal(t, http.StatusOK, status)
	wire, ok := body["data"].([]any)
	require.True(t, ok, "%v", body)
	require.Len(t, wire, len(invoices))
	for i, inv := range invoices {
		w := wire[i].(map[string]any)
		assert.Equal(t, inv.ID, w["id"])
		assert.Equal(t, sub.ID, w["subscriptionId"])
		assert.Equal(t, cust.ID, w["customerId"])
		assert.Equal(t, price.ID, w["priceId"])
		assert.EqualValues(t, inv.Amount, w["amount"])
		assert.Equal(t, inv.Currency, w["currency"])
		assert.Equal(t, inv.PeriodStart.Format("2006-01-02T15:04:05.000Z"), w["periodStart"])
		assert.Equal(t, inv.PeriodEnd.Format("2006-01-02T15:04:05.000Z"), w["periodEnd"])
		assert.Equal(t, inv.BillingReason, w["billingReason"])
		assert.Equal(t, "PAID", w["status"])
	}
	assert.Equal(t, sub.CurrentPeriodEnd, invoices[0].PeriodEnd, "the first invoice bills the first period")
	assert.Equal(t, []string{"CREATE", "RENEWAL"}, []string{invoices[0].BillingReason, invoices[1].BillingReason})

	assert.Nil(t, srv.Invoices("sub_missing"))
	status, _ = call(t, srv, http.MethodGet, "/sandbox/subscriptions/sub_missing/invoices", "")
	assert.Equal(t, http.StatusNotFound, status)
}
