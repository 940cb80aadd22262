package billing_test

import (
	"bytes"
	"context"
	"encoding/json"
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
// sandbox that posts its webhooks there in wire's shapes. It returns the endpoint's URL
// last.
func newWebhookSandbox(t *testing.T, wire billingtest.Wire) (*billingtest.Server, *billing.Client, *webhookInbox, string) {
	t.Helper()
	in := &webhookInbox{}
	mux := http.NewServeMux()
	endpoint := httptest.NewServer(mux)
	t.Cleanup(endpoint.Close)
	srv := billingtest.NewServer(t, billingtest.WithManualClock(), billingtest.WithWire(wire), billingtest.WithWebhookURL(endpoint.URL+"/webhooks"))
	c := srv.Client()
	mux.Handle("/webhooks", billing.NewWebhookHandler(in.handle, billing.WithStatusCheckConfirmation(c)))
	return srv, c, in, endpoint.URL + "/webhooks"
}

func TestWebhookHandlerTakesTheSandboxCheckoutWebhookAndItsRetries(t *testing.T) {
	onEachWire(t, testCheckoutWebhookAndItsRetries)
}

func testCheckoutWebhookAndItsRetries(t *testing.T, wire billingtest.Wire) {
	srv, c, in, _ := newWebhookSandbox(t, wire)
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
	assert.Equal(t, int64(5000), ev.Data.Amount, "50.00 in minor units on either wire")
	if wire == billingtest.WireSpec {
		assert.Empty(t, ev.ID, "the event id is the sender's word: the confirmed event is the service's payment alone")
		assert.Equal(t, billing.PaymentMethodMobileMoney, ev.Data.Method)
		assert.Equal(t, ev.Data.Amount-ev.Data.Fee, ev.Data.Net)
		assert.NotEmpty(t, ev.Data.MobileMoneyDetail.ExternalRef)
	} else {
		assert.Equal(t, session.ID, ev.Data.ID, "the provider's SalesInvoiceId")
		assert.NotEmpty(t, ev.Data.MobileMoneyDetail.Phone, "the wallet that paid")
	}

	var statuses []int
	for _, d := range srv.Deliveries() {
		statuses = append(statuses, d.Status)
	}
	assert.Equal(t, []int{http.StatusInternalServerError, http.StatusOK}, statuses)
}

func TestWebhookHandlerTakesTheSandboxTrialEvent(t *testing.T) {
	srv, c, in, _ := newWebhookSandbox(t, billingtest.WireSpec)
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
	if u, unconfirmed := got[0].(*billing.UnconfirmedEvent); unconfirmed {
		// Under confirmation the notice, which no status check confirms, arrives
		// marked unconfirmed, its claim inside.
		ev, ok = u.Claim.(*billing.SubscriptionTrialEvent)
	}
	require.True(t, ok, "%T", got[0])
	assert.Equal(t, sub.ID, ev.Reference())
	assert.Equal(t, billing.SubscriptionStatusTrialing, ev.Data.Status)
	assert.Equal(t, cust.ID, ev.Data.CustomerID)
	assert.Equal(t, sub.TrialEnd, ev.Data.TrialEnd)
}

func TestWebhookHandlerRefusesAForgedCheckoutWebhook(t *testing.T) {
	onEachWire(t, testForgedCheckoutWebhook)
}

func testForgedCheckoutWebhook(t *testing.T, wire billingtest.Wire) {
	srv, c, in, endpoint := newWebhookSandbox(t, wire)
	session, err := c.Payments.CreateCheckout(context.Background(), &billing.CheckoutParams{Amount: 12000})
	require.NoError(t, err)
	forged := `{"event":"payment.succeeded","data":{"reference":"` + session.Reference + `","status":"SUCCEEDED","amount":12000}}`
	if wire == billingtest.WireProvider {
		forged = `{"ResponseCode":"0000","Status":"Success","Data":{"CheckoutId":"` + session.Reference +
			`","SalesInvoiceId":"` + session.ID + `","ClientReference":"` + session.Reference + `","Status":"Success","Amount":120.00}}`
	}

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

// forgeClaim changes what a genuine callback or webhook claims, keeping its shape: its
// amount becomes 1 (0.01 or 1.00, by the wire's unit, either way not what moved), or, in
// a mandate's, the approval status turns over.
func forgeClaim(t *testing.T, body []byte) []byte {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var top map[string]any
	require.NoError(t, dec.Decode(&top), "body: %s", body)
	objects := []map[string]any{top}
	for k, v := range top {
		if data, ok := v.(map[string]any); ok && strings.EqualFold(k, "data") {
			objects = append(objects, data)
		}
	}
	forged := false
	for _, obj := range objects {
		for k, v := range obj {
			switch {
			case strings.EqualFold(k, "amount"):
				obj[k], forged = json.Number("1"), true
			case strings.EqualFold(k, "preapprovalStatus"):
				obj[k], forged = "APPROVED", true
				if v == "APPROVED" {
					obj[k] = "FAILED"
				}
			}
		}
	}
	require.True(t, forged, "nothing to forge in %s", body)
	out, err := json.Marshal(top)
	require.NoError(t, err)
	return out
}

// genuineCallback starts tc on the sandbox of wire, its callback going to a sink, and
// returns the merchant, whose Tracker tracks the movement, and the one callback the
// sandbox posted for it.
func genuineCallback(t *testing.T, wire billingtest.Wire, tc trackedMovement, ref string) (*trackedMerchant, json.RawMessage) {
	t.Helper()
	srv := billingtest.NewServer(t, billingtest.WithManualClock(), billingtest.WithWire(wire))
	c := srv.Client()
	m := &trackedMerchant{srv: srv, client: c, callbackURL: callbackSink(t) + "/callbacks",
		tracker: billing.NewTracker(c, billing.TrackerOptions{Clock: srv.Clock()})}
	tc.start(t, m, ref)
	srv.Advance(time.Second)
	bodies := deliveredTo(srv, m.callbackURL)
	require.Len(t, bodies, 1)
	return m, bodies[0]
}

// postTo posts body to h and returns the status it answered.
func postTo(h http.Handler, body []byte) int {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/callbacks", bytes.NewReader(body)))
	return rec.Code
}

// TestWebhookHandlerConfirmsGenuineCallbacksAndRefusesForgedOnes posts to the
// confirming handler the callback the sandbox sent for every kind of money movement, a
// success and a failure of each, on each wire: the genuine one is taken, and the same
// with its amount changed (a mandate's, its status) is refused with 403 and never reaches
// the merchant's function.
func TestWebhookHandlerConfirmsGenuineCallbacksAndRefusesForgedOnes(t *testing.T) {
	for _, wire := range billingtest.Wires() {
		t.Run(string(wire), func(t *testing.T) {
			for _, tc := range trackedMovements {
				t.Run(tc.name, func(t *testing.T) {
					m, body := genuineCallback(t, wire, tc, "hook1")
					in := &webhookInbox{}
					h := billing.NewWebhookHandler(in.handle, billing.WithStatusCheckConfirmation(m.client))
					if !tc.succeeded && failureUnconfirmable(wire, tc.kind) {
						// Unpaid under 0000 neither confirms nor contradicts a failure.
						assert.Equal(t, http.StatusServiceUnavailable, postTo(h, forgeClaim(t, body)), "forged")
						assert.Equal(t, http.StatusServiceUnavailable, postTo(h, body), "genuine")
						assert.Empty(t, in.received())
						return
					}
					assert.Equal(t, http.StatusForbidden, postTo(h, forgeClaim(t, body)), "forged")
					assert.Empty(t, in.received())

					assert.Equal(t, http.StatusOK, postTo(h, body), "genuine: %s", body)
					got := in.received()
					require.Len(t, got, 1)
					assert.Equal(t, "hook1", got[0].Reference())
					want := billing.EventFailed
					if tc.succeeded {
						want = billing.EventSucceeded
					}
					assert.Equal(t, want, got[0].State())
				})
			}
		})
	}
}

// TestWebhookHandlerRefusesACheckoutWebhookWithAnotherAmount changes the amount of the
// genuine checkout webhook on each wire: the confirming handler refuses it with 403.
func TestWebhookHandlerRefusesACheckoutWebhookWithAnotherAmount(t *testing.T) {
	for _, wire := range billingtest.Wires() {
		t.Run(string(wire), func(t *testing.T) {
			sink := callbackSink(t)
			srv := billingtest.NewServer(t, billingtest.WithManualClock(), billingtest.WithWire(wire), billingtest.WithWebhookURL(sink))
			c := srv.Client()
			session, err := c.Payments.CreateCheckout(context.Background(), &billing.CheckoutParams{Amount: 5000, Description: "Two tickets"})
			require.NoError(t, err)
			require.NoError(t, srv.CompleteCheckout(session.Reference, "MOBILE_MONEY", "succeeded"))
			srv.Advance(0)
			hooks := deliveredTo(srv, sink)
			require.Len(t, hooks, 1)

			in := &webhookInbox{}
			h := billing.NewWebhookHandler(in.handle, billing.WithStatusCheckConfirmation(c))
			assert.Equal(t, http.StatusForbidden, postTo(h, forgeClaim(t, hooks[0])))
			assert.Empty(t, in.received())
			assert.Equal(t, http.StatusOK, postTo(h, hooks[0]))
			require.Len(t, in.received(), 1)
			assert.Equal(t, session.Reference, in.received()[0].Reference())
		})
	}
}
