package billing_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
)

// checkoutShop is a merchant whose Tracker handler is the sandbox's webhook URL (unless
// the webhook is left out), with Run going on the sandbox's clock.
func checkoutShop(t *testing.T, wire billingtest.Wire, webhook bool) (*billingtest.Server, *billing.Tracker) {
	t.Helper()
	mux := http.NewServeMux()
	endpoint := httptest.NewServer(mux)
	t.Cleanup(endpoint.Close)
	opts := []billingtest.Option{billingtest.WithManualClock(), billingtest.WithWire(wire)}
	if webhook {
		opts = append(opts, billingtest.WithWebhookURL(endpoint.URL+"/webhooks"))
	}
	srv := billingtest.NewServer(t, opts...)
	tr := billing.NewTracker(srv.Client(), billing.TrackerOptions{Clock: srv.Clock()})
	mux.Handle("/webhooks", tr.Handler())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = tr.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return srv, tr
}

// A checkout paid on the sandbox is settled by its webhook on either wire, or by
// Payments.Get when no webhook comes; merchant code gets the service's payment.
func TestCheckoutTrackedOnTheSandbox(t *testing.T) {
	onEachWire(t, func(t *testing.T, wire billingtest.Wire) {
		for _, webhook := range []bool{true, false} {
			name := map[bool]string{true: "by its webhook", false: "by Payments.Get"}[webhook]
			t.Run(name, func(t *testing.T) {
				srv, tr := checkoutShop(t, wire, webhook)
				pay, err := tr.CreateCheckout(context.Background(), &billing.CheckoutParams{
					Amount: 5000, Currency: "GHS", Description: "Order 1042", ClientReference: "order1042"})
				require.NoError(t, err)
				require.NoError(t, srv.CompleteCheckout(pay.Reference, "MOBILE_MONEY", "succeeded"))
				srv.Advance(0)
				if !webhook {
					srv.Advance(6 * time.Minute) // Run asks Payments.Get once CallbackWait has passed
				}
				o := awaitOutcome(t, tr, billing.KindCheckout, "order1042")
				assert.True(t, o.Succeeded(), "state %s", o.State)
				want := map[bool]billing.OutcomeSource{true: billing.SourceCallback, false: billing.SourceStatusCheck}[webhook]
				assert.Equal(t, want, o.Source)
				assert.Equal(t, int64(5000), o.Amount)
				assert.Equal(t, pay.Reference, o.ServiceReference)
				if webhook {
					ev, ok := o.Event.(*billing.CheckoutEvent)
					require.True(t, ok, "%T", o.Event)
					assert.Equal(t, pay.Reference, ev.Data.Reference)
					assert.Empty(t, ev.ClientReference, "nothing of the webhook")
				}
			})
		}
	})
}

// A session left unpaid on the sandbox settles expired a day later, on either wire.
func TestCheckoutAbandonedOnTheSandboxExpires(t *testing.T) {
	onEachWire(t, func(t *testing.T, wire billingtest.Wire) {
		srv, tr := checkoutShop(t, wire, true)
		_, err := tr.CreateCheckout(context.Background(), &billing.CheckoutParams{
			Amount: 5000, Currency: "GHS", Description: "Order 1043", ClientReference: "order1043"})
		require.NoError(t, err)
		srv.Advance(24*time.Hour + time.Minute)
		o := awaitOutcome(t, tr, billing.KindCheckout, "order1043")
		assert.True(t, o.Expired(), "state %s", o.State)
		assert.Equal(t, billing.SourceStatusCheck, o.Source)
	})
}
