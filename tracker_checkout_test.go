package billing

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/billingsdk/billing-go/storekit"
	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// checkoutService is a hand-written checkout service on one wire: sessions created by
// POST /v1/payments, read by GET /v1/payments/{reference} (on the provider's wire by
// the client reference too), paid by the test, announced by the webhook of its wire.
type checkoutService struct {
	t        *testing.T
	provider bool

	mu       sync.Mutex
	sessions map[string]map[string]any // by reference
	loseNext bool                      // create the next session, then lose the answer
}

func newCheckoutService(t *testing.T, mock *httpmock.MockTransport, provider bool) *checkoutService {
	s := &checkoutService{t: t, provider: provider, sessions: map[string]map[string]any{}}
	mock.RegisterResponder(http.MethodPost, mockBaseURL+"/v1/payments", s.create)
	mock.RegisterRegexpResponder(http.MethodGet, regexp.MustCompile(`/v1/payments/([\w-]+)$`), s.get)
	return s
}

func (s *checkoutService) create(r *http.Request) (*http.Response, error) {
	var body struct {
		Amount   int64          `json:"amount"`
		Currency string         `json:"currency"`
		Metadata map[string]any `json:"metadata"`
	}
	require.NoError(s.t, json.NewDecoder(r.Body).Decode(&body))
	s.mu.Lock()
	defer s.mu.Unlock()
	ref := fmt.Sprintf("chk_%d", len(s.sessions)+1)
	p := map[string]any{"id": "pay_" + ref, "reference": ref, "status": "PENDING", "amount": body.Amount,
		"currency": strings.ToUpper(body.Currency), "metadata": body.Metadata, "checkoutUrl": "https://checkout.test/" + ref}
	s.sessions[ref] = p
	if s.loseNext {
		s.loseNext = false
		return httpmock.NewStringResponse(http.StatusBadGateway, "bad gateway"), nil
	}
	return httpmock.NewJsonResponse(http.StatusOK, map[string]any{"success": true, "data": p})
}

func (s *checkoutService) get(r *http.Request) (*http.Response, error) {
	ref := httpmock.MustGetSubmatch(r, 1)
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.sessions[ref]
	if p == nil && s.provider {
		for _, q := range s.sessions {
			if q["metadata"].(map[string]any)["clientReference"] == ref {
				p = q
			}
		}
	}
	if p == nil {
		return httpmock.NewStringResponse(http.StatusNotFound, `{"success":false,"message":"not found","code":"4040"}`), nil
	}
	return httpmock.NewJsonResponse(http.StatusOK, map[string]any{"success": true, "data": p})
}

// pay marks the session paid and returns its webhook.
func (s *checkoutService) pay(ref string) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.sessions[ref]
	p["status"], p["fee"] = "SUCCEEDED", int64(98)
	return s.webhook(p)
}

func (s *checkoutService) webhook(p map[string]any) []byte {
	var b []byte
	var err error
	if s.provider {
		b, err = json.Marshal(map[string]any{"ResponseCode": "0000", "Status": "Success", "Data": map[string]any{
			"CheckoutId": p["reference"], "SalesInvoiceId": p["id"], "ClientReference": p["metadata"].(map[string]any)["clientReference"],
			"Status": "Success", "Amount": float64(p["amount"].(int64)) / 100, "CustomerPhoneNumber": "233241234567"}})
	} else {
		b, err = json.Marshal(map[string]any{"id": "evt_1", "event": "payment.succeeded", "data": p})
	}
	require.NoError(s.t, err)
	return b
}

// checkoutTracker is a Tracker on a checkout service of one wire, with a manual clock.
func checkoutTracker(t *testing.T, provider bool, opts TrackerOptions) (*Tracker, *checkoutService, *fakeClock, *httpmock.MockTransport) {
	tr, mock, clock := newTestTracker(t, opts)
	return tr, newCheckoutService(t, mock, provider), clock, mock
}

// runDue does what Run does for the movements due now: asks their status checks and
// settles or reschedules them.
func runDue(t *testing.T, tr *Tracker) {
	t.Helper()
	now := tr.opts.Clock.Now()
	due, err := tr.store.ClaimDue(context.Background(), tr.opts.Owner, now, now.Add(tr.opts.Lease), storekit.MaxClaim)
	require.NoError(t, err)
	for _, m := range due {
		tr.check(context.Background(), m, nil, 0)
	}
}

// runFor advances the clock by d in steps, doing Run's work at each.
func runFor(t *testing.T, tr *Tracker, clock *fakeClock, d, step time.Duration) {
	for end := clock.Now().Add(d); clock.Now().Before(end); {
		clock.Advance(step)
		runDue(t, tr)
	}
}

func checkoutParams(ref string) *CheckoutParams {
	return &CheckoutParams{Amount: 5000, Currency: "GHS", Description: "Order " + ref, ClientReference: ref}
}

func eachCheckoutWire(t *testing.T, fn func(t *testing.T, provider bool)) {
	for _, provider := range []bool{false, true} {
		name := "spec"
		if provider {
			name = "provider"
		}
		t.Run(name, func(t *testing.T) { fn(t, provider) })
	}
}

// A paid checkout is settled by its webhook, once confirmed by Payments.Get; merchant
// code gets the payment the service holds.
func TestCheckoutPaidIsSettledByItsWebhook(t *testing.T) {
	eachCheckoutWire(t, func(t *testing.T, provider bool) {
		tr, svc, _, _ := checkoutTracker(t, provider, TrackerOptions{})
		pay, err := tr.CreateCheckout(context.Background(), checkoutParams("order1"))
		require.NoError(t, err)
		e, err := tr.store.Get(context.Background(), mustKey(t, KindCheckout, "order1"))
		require.NoError(t, err)
		assert.Equal(t, pay.Reference, e.Movement.ServiceReference, "the session's reference is recorded")
		assert.Equal(t, int64(5000), e.Movement.Amount)

		hook := svc.pay(pay.Reference)
		h := tr.Handler(WithDedupe(0))
		for range 3 {
			assert.Equal(t, http.StatusOK, post(t, h, hook).Code)
		}
		o, err := tr.Await(context.Background(), KindCheckout, "order1")
		require.NoError(t, err)
		assert.True(t, o.Succeeded(), "state %s", o.State)
		assert.Equal(t, SourceCallback, o.Source)
		assert.Equal(t, pay.Reference, o.ServiceReference)
		assert.Equal(t, int64(98), o.Charges)
		ev, ok := o.Event.(*CheckoutEvent)
		require.True(t, ok, "%T", o.Event)
		assert.Equal(t, pay.Reference, ev.Data.Reference)
		assert.Equal(t, PaymentStatusSucceeded, ev.Data.Status)
		assert.Empty(t, ev.ID)
	})
}

// With no webhook, Run asks Payments.Get after CallbackWait, with backoff, and settles
// the paid session.
func TestCheckoutPaidIsSettledByTheStatusCheckWhenTheWebhookIsDropped(t *testing.T) {
	eachCheckoutWire(t, func(t *testing.T, provider bool) {
		tr, svc, clock, mock := checkoutTracker(t, provider, TrackerOptions{})
		pay, err := tr.CreateCheckout(context.Background(), checkoutParams("order2"))
		require.NoError(t, err)
		runFor(t, tr, clock, 4*time.Minute, time.Minute)
		assert.Equal(t, 1, mock.GetTotalCallCount(), "no status check before CallbackWait")
		runFor(t, tr, clock, 10*time.Minute, time.Minute)
		assert.Nil(t, settledNow(t, tr, KindCheckout, "order2"), "unpaid yet")
		svc.pay(pay.Reference) // its webhook is lost
		runFor(t, tr, clock, 10*time.Minute, time.Minute)
		o := settledNow(t, tr, KindCheckout, "order2")
		require.NotNil(t, o)
		assert.True(t, o.Succeeded())
		assert.Equal(t, SourceStatusCheck, o.Source)
	})
}

// A session still unpaid CheckoutExpiry after creation settles expired: the payer left.
func TestCheckoutAbandonedSettlesExpired(t *testing.T) {
	eachCheckoutWire(t, func(t *testing.T, provider bool) {
		tr, _, clock, _ := checkoutTracker(t, provider, TrackerOptions{CheckoutExpiry: 2 * time.Hour})
		_, err := tr.CreateCheckout(context.Background(), checkoutParams("order3"))
		require.NoError(t, err)
		runFor(t, tr, clock, 2*time.Hour-time.Minute, time.Minute)
		assert.Nil(t, settledNow(t, tr, KindCheckout, "order3"), "not before the expiry")
		runFor(t, tr, clock, 5*time.Minute, time.Minute)
		o := settledNow(t, tr, KindCheckout, "order3")
		require.NotNil(t, o)
		assert.True(t, o.Expired(), "state %s", o.State)
		assert.True(t, o.IsFinal())
		assert.False(t, o.Failed())
	})
	// The default is the service's 24 hours.
	assert.Equal(t, 24*time.Hour, TrackerOptions{}.withDefaults().CheckoutExpiry)
}

// A creation whose answer was lost stays unknown until its webhook, or until the give-up
// limit, when it is reported unknown, never failed.
func TestCheckoutWhoseCreationWasLost(t *testing.T) {
	eachCheckoutWire(t, func(t *testing.T, provider bool) {
		t.Run("reported unknown", func(t *testing.T) {
			tr, svc, clock, _ := checkoutTracker(t, provider, TrackerOptions{CheckoutExpiry: time.Hour})
			svc.loseNext = true
			_, err := tr.CreateCheckout(context.Background(), checkoutParams("order4"))
			require.ErrorIs(t, err, ErrOutcomeUnknown)
			svc.mu.Lock()
			delete(svc.sessions, "chk_1") // the service never made it
			svc.mu.Unlock()
			runFor(t, tr, clock, time.Hour+5*time.Minute, time.Minute)
			o := settledNow(t, tr, KindCheckout, "order4")
			require.NotNil(t, o)
			assert.True(t, o.Unknown(), "state %s", o.State)
			assert.False(t, o.Failed())
		})
		t.Run("its webhook settles it", func(t *testing.T) {
			tr, svc, _, _ := checkoutTracker(t, provider, TrackerOptions{})
			svc.loseNext = true
			_, err := tr.CreateCheckout(context.Background(), checkoutParams("order5"))
			require.ErrorIs(t, err, ErrOutcomeUnknown)
			assert.Equal(t, http.StatusOK, post(t, tr.Handler(), svc.pay("chk_1")).Code)
			o := settledNow(t, tr, KindCheckout, "order5")
			require.NotNil(t, o)
			assert.True(t, o.Succeeded())
		})
	})
}

// A webhook naming a cheap paid checkout with another order's reference settles neither.
func TestCheckoutForgedWebhookForAnotherOrderIsRefused(t *testing.T) {
	eachCheckoutWire(t, func(t *testing.T, provider bool) {
		tr, svc, _, _ := checkoutTracker(t, provider, TrackerOptions{})
		cheap, err := tr.CreateCheckout(context.Background(), &CheckoutParams{Amount: 100, Currency: "GHS", ClientReference: "cheap1"})
		require.NoError(t, err)
		_, err = tr.CreateCheckout(context.Background(), checkoutParams("dear1"))
		require.NoError(t, err)
		hook := svc.pay(cheap.Reference)
		var forged []byte
		if provider {
			forged = bytes.Replace(hook, []byte(`"cheap1"`), []byte(`"dear1"`), 1)
		} else {
			var doc map[string]any
			require.NoError(t, json.Unmarshal(hook, &doc))
			doc["clientReference"], doc["environment"] = "dear1", "LIVE"
			doc["data"].(map[string]any)["metadata"] = map[string]any{"clientReference": "dear1"}
			forged, _ = json.Marshal(doc)
		}
		assert.Equal(t, http.StatusForbidden, post(t, tr.Handler(), forged).Code)
		assert.Nil(t, settledNow(t, tr, KindCheckout, "dear1"), "the dear order is unpaid")
		assert.Equal(t, http.StatusOK, post(t, tr.Handler(), hook).Code)
		o := settledNow(t, tr, KindCheckout, "cheap1")
		require.NotNil(t, o)
		assert.True(t, o.Succeeded())
		assert.Nil(t, settledNow(t, tr, KindCheckout, "dear1"))
	})
}

// A checkout paid for another amount than asked is mismatched, never a plain success.
func TestCheckoutPaidForAnotherAmountIsMismatched(t *testing.T) {
	tr, svc, _, _ := checkoutTracker(t, false, TrackerOptions{})
	pay, err := tr.CreateCheckout(context.Background(), checkoutParams("order6"))
	require.NoError(t, err)
	svc.mu.Lock()
	svc.sessions[pay.Reference]["amount"] = int64(100)
	svc.mu.Unlock()
	assert.Equal(t, http.StatusOK, post(t, tr.Handler(), svc.pay(pay.Reference)).Code)
	o := settledNow(t, tr, KindCheckout, "order6")
	require.NotNil(t, o)
	assert.True(t, o.Mismatched(), "state %s", o.State)
}

// Events that settle no movement reach WithEventHandler's function: the trial webhook,
// a checkout webhook of a session no Tracker tracks (as the service's payment); without
// it they are answered 200 and logged at warning level.
func TestEventsThatSettleNothingReachTheEventHandler(t *testing.T) {
	eachCheckoutWire(t, func(t *testing.T, provider bool) {
		tr, svc, _, mock := checkoutTracker(t, provider, TrackerOptions{})
		// A session made without the Tracker.
		pay, err := tr.client.Payments.CreateCheckout(context.Background(), checkoutParams("untracked1"))
		require.NoError(t, err)
		untracked := svc.pay(pay.Reference)
		trial := fixture(t, "events/subscription_trial.json")

		var got []Event
		h := tr.Handler(WithEventHandler(func(_ context.Context, ev Event) error {
			got = append(got, ev)
			return nil
		}))
		assert.Equal(t, http.StatusOK, post(t, h, trial).Code)
		assert.Equal(t, http.StatusOK, post(t, h, untracked).Code)
		require.Len(t, got, 2)
		trialEvent, ok := got[0].(*UnconfirmedEvent)
		require.True(t, ok, "a trial notice no status check confirms arrives unconfirmed: %T", got[0])
		assert.Equal(t, EventKindUnconfirmed, trialEvent.Kind())
		assert.Equal(t, EventKindSubscriptionTrial, trialEvent.ClaimedKind)
		assert.IsType(t, &SubscriptionTrialEvent{}, trialEvent.Claim)
		co, ok := got[1].(*CheckoutEvent)
		require.True(t, ok, "%T", got[1])
		assert.Equal(t, pay.Reference, co.Data.Reference, "the service's payment")
		assert.Nil(t, settledNow(t, tr, KindCheckout, "untracked1"), "nothing tracked, nothing settled")

		// An error of the function is answered 500, so the sender delivers it again.
		fresh := NewTracker(tr.client, TrackerOptions{Clock: newFakeClock()}) // the first delivery was handled: a fresh store
		failing := fresh.Handler(WithEventHandler(func(context.Context, Event) error { return fmt.Errorf("down") }))
		assert.Equal(t, http.StatusInternalServerError, post(t, failing, fixture(t, "events/subscription_trial.json")).Code)

		// Without a function: answered 200 and logged.
		var logs bytes.Buffer
		tr2 := NewTracker(tr.client, TrackerOptions{Clock: newFakeClock(), Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		assert.Equal(t, http.StatusOK, post(t, tr2.Handler(), trial).Code)
		assert.Equal(t, http.StatusOK, post(t, tr2.Handler(), untracked).Code)
		assert.Contains(t, logs.String(), "level=WARN msg=\"billing webhook settles no movement; no WithEventHandler takes it\" kind=customer.subscription.trial")
		assert.Contains(t, logs.String(), "level=WARN msg=\"billing checkout webhook of a session no tracker tracks; no WithEventHandler takes it\" kind=payment.succeeded")
		_ = mock
	})
}

// Reconcile and Stats cover checkouts.
func TestCheckoutInStatsAndReconcile(t *testing.T) {
	tr, _, clock, _ := checkoutTracker(t, false, TrackerOptions{})
	start := clock.Now()
	_, err := tr.CreateCheckout(context.Background(), checkoutParams("order7"))
	require.NoError(t, err)
	stats, err := tr.Stats(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 1, stats.Pending)
	clock.Advance(10 * time.Minute)
	r, err := tr.Reconcile(context.Background(), start, clock.Now())
	require.NoError(t, err)
	require.Len(t, r.Overdue, 1)
	assert.Equal(t, string(KindCheckout), r.Overdue[0].Kind)

	_, err = tr.CreateCheckout(context.Background(), &CheckoutParams{Amount: 100})
	var ve *ValidationError
	require.ErrorAs(t, err, &ve, "a tracked checkout needs its client reference")
	assert.Equal(t, "ClientReference", ve.Field)
}

func mustKey(t *testing.T, kind Kind, ref string) movementKey {
	t.Helper()
	k, err := keyOf(kind, ref)
	require.NoError(t, err)
	return k
}
