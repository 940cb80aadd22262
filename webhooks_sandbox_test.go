package billing_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
)

// webhookInbox is a merchant's webhook endpoint: the handler, and the events its function
// was given. While failing is set, the function fails, so the sender must deliver again.
type webhookInbox struct {
	mu      sync.Mutex
	events  []billing.Event
	failing bool
}

func (in *webhookInbox) handle(_ context.Context, ev billing.Event) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.failing {
		return errors.New("the order database is down")
	}
	in.events = append(in.events, ev)
	return nil
}

func (in *webhookInbox) received() []billing.Event {
	in.mu.Lock()
	defer in.mu.Unlock()
	return append([]billing.Event(nil), in.events...)
}

func (in *webhookInbox) setFailing(v bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.failing = v
}

// newWebhookSandbox starts a merchant webhook endpoint that confirms successes, and a
// sandbox that posts its webhooks there. It returns the endpoint's URL last.
func newWebhookSandbox(t *testing.T) (*billingtest.Server, *billing.Client, *webhookInbox, string) {
	t.Helper()
	in := &webhookInbox{}
	mux := http.NewServeMux()
	endpoint := httptest.NewServer(mux)
	t.Cleanup(endpoint.Close)
	srv := billingtest.NewServer(t, billingtest.WithManualClock(), billingtest.WithWebhookURL(endpoint.URL+"/webhooks"))
	c := srv.Client()
	mux.Handle("/webhooks", billing.NewWebhookHandler(in.handle, billing.WithStatusCheckConfirmation(c)))
	return srv, c, in, endpoint.URL + "/webhooks"
}

func TestWebhookHandlerTakesTheSandboxCheckoutWebhookAndItsRetries(t *testing.T) {
	srv, c, in, _ := newWebhookSandbox(t)
	ctx := context.Background()
	session, err := c.Payments.CreateCheckout(ctx, &billing.CheckoutParams{Amount: 5000, Description: "Two tickets"})
	require.NoError(t, err)

	in.setFailing(true)
	require.NoError(t, srv.CompleteCheckout(session.Reference, "MOBILE_MONEY", "succeeded"))
	srv.Advance(0)
	assert.Empty(t, in.received(), "the first delivery failed in the merchant's code")

	in.setFailing(false)
	srv.Advance(30 * time.Second) // the sandbox's first redelivery
	got := in.received()
	require.Len(t, got, 1)
	ev, ok := got[0].(*billing.CheckoutEvent)
	require.True(t, ok, "%T", got[0])
	assert.Equal(t, billing.EventKindPaymentSucceeded, ev.Kind())
	assert.Equal(t, session.Reference, ev.Reference())
	assert.Equal(t, billing.EventSucceeded, ev.State())
	assert.Regexp(t, `^evt_`, ev.ID, "the sandbox sends the variant with an id")
	assert.Equal(t, int64(5000), ev.Data.Amount)
	assert.Equal(t, billing.PaymentMethodMobileMoney, ev.Data.Method)
	assert.Equal(t, ev.Data.Amount-ev.Data.Fee, ev.Data.Net)
	assert.NotEmpty(t, ev.Data.MobileMoneyDetail.ExternalRef)

	var statuses []int
	for _, d := range srv.Deliveries() {
		statuses = append(statuses, d.Status)
	}
	assert.Equal(t, []int{http.StatusInternalServerError, http.StatusOK}, statuses)
}

func TestWebhookHandlerTakesTheSandboxTrialEvent(t *testing.T) {
	srv, c, in, _ := newWebhookSandbox(t)
	ctx := context.Background()
	cust, err := c.Customers.Create(ctx, &billing.CustomerCreateParams{Email: "trial@example.com", Name: "Esi Owusu"})
	require.NoError(t, err)
	product, err := c.Products.Create(ctx, &billing.ProductCreateParams{Name: "Pro plan"})
	require.NoError(t, err)
	price, err := c.Products.CreatePrice(ctx, product.ID, &billing.PriceCreateParams{
		UnitAmount: 9900, IsRecurring: true, Interval: billing.PriceIntervalMonth,
	})
	require.NoError(t, err)
	sub, err := c.Subscriptions.Create(ctx, &billing.SubscriptionCreateParams{
		CustomerID: cust.ID, PriceID: price.ID, TrialDays: billing.Value(14),
	})
	require.NoError(t, err)
	srv.Advance(0)

	got := in.received()
	require.Len(t, got, 1)
	ev, ok := got[0].(*billing.SubscriptionTrialEvent)
	require.True(t, ok, "%T", got[0])
	assert.Equal(t, sub.ID, ev.Reference())
	assert.Equal(t, billing.SubscriptionStatusTrialing, ev.Data.Status)
	assert.Equal(t, cust.ID, ev.Data.CustomerID)
	assert.Equal(t, sub.TrialEnd, ev.Data.TrialEnd)
}

func TestWebhookHandlerRefusesAForgedCheckoutWebhook(t *testing.T) {
	srv, c, in, endpoint := newWebhookSandbox(t)
	session, err := c.Payments.CreateCheckout(context.Background(), &billing.CheckoutParams{Amount: 12000})
	require.NoError(t, err)
	forged := `{"event":"payment.succeeded","data":{"reference":"` + session.Reference + `","status":"SUCCEEDED","amount":12000}}`

	resp, err := http.Post(endpoint, "application/json", strings.NewReader(forged))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "the session is still PENDING")

	require.NoError(t, srv.CompleteCheckout(session.Reference, "CARD", "failed"))
	resp, err = http.Post(endpoint, "application/json", strings.NewReader(forged))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusForbidden, resp.StatusCode, "the session failed")
	srv.Advance(time.Hour)
	assert.Empty(t, in.received(), "no webhook for a failed session, and the forged ones were refused")
}
