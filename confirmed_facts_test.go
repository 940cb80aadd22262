package billing

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// checkoutRecordBody is the service's record of a checkout session ref_X, created for the
// merchant's order7, in status with failureCode.
func checkoutRecordBody(status PaymentStatus, failureCode string) string {
	return `{"success":true,"data":{"id":"pay_1","reference":"ref_X","status":"` + string(status) + `","amount":5000,"currency":"GHS",` +
		`"failureCode":"` + failureCode + `","metadata":{"clientReference":"order7"}}}`
}

// checkoutClaims are the shapes a webhook about session ref_X (order7) can take on
// either wire, claiming success or a pending state.
var checkoutClaims = map[string]string{
	"spec, full":         `{"id":"evt_1","event":"payment.succeeded","data":{"reference":"ref_X","status":"SUCCEEDED","amount":5000,"currency":"GHS"}}`,
	"spec, minimal":      `{"event":"payment.succeeded","data":{"reference":"ref_X","status":"SUCCEEDED"}}`,
	"spec, pending":      `{"event":"payment.succeeded","data":{"reference":"ref_X","status":"PENDING"}}`,
	"provider":           `{"ResponseCode":"0000","Status":"Success","Data":{"CheckoutId":"ref_X","ClientReference":"order7","Status":"Success","Amount":50}}`,
	"provider, pending":  `{"ResponseCode":"0001","Status":"Pending","Data":{"CheckoutId":"ref_X","ClientReference":"order7","Status":"Pending"}}`,
	"provider, no state": `{"ResponseCode":"0000","Data":{"CheckoutId":"ref_X","ClientReference":"order7"}}`,
}

// eventLog records what merchant code received.
type eventLog struct {
	mu     sync.Mutex
	events []Event
}

func (l *eventLog) handle(_ context.Context, ev Event) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, ev)
	return nil
}

func (l *eventLog) all() []Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Event(nil), l.events...)
}

// checkoutHandlers are the handlers that confirm a checkout webhook and give it to
// merchant code: NewWebhookHandler with each dedupe, and Tracker.Handler's event
// function for a session no Tracker tracks.
func checkoutHandlers(t *testing.T, record string) map[string]func(*eventLog) http.Handler {
	t.Helper()
	client := func() *Client {
		c, mock := newMockClient(t)
		for _, ref := range []string{"ref_X", "order7"} {
			mock.RegisterResponder(http.MethodGet, mockBaseURL+"/v1/payments/"+ref, httpmock.NewStringResponder(http.StatusOK, record))
		}
		return c
	}
	return map[string]func(*eventLog) http.Handler{
		"WithDedupe": func(l *eventLog) http.Handler {
			return NewWebhookHandler(l.handle, WithStatusCheckConfirmation(client()), WithDedupe(0))
		},
		"WithDedupeStore": func(l *eventLog) http.Handler {
			return NewWebhookHandler(l.handle, WithStatusCheckConfirmation(client()), WithDedupeStore(NewMemoryStore(0)))
		},
		"Tracker.Handler": func(l *eventLog) http.Handler {
			return NewTracker(client(), TrackerOptions{Clock: newFakeClock()}).Handler(WithEventHandler(l.handle))
		},
	}
}

// TestCheckoutEventTypedByConfirmedState: whatever a webhook claims, merchant code
// receives the checkout in a type of the state the service holds: a FAILED or expired
// session is a *CheckoutFailedEvent, never payment.succeeded.
func TestCheckoutEventTypedByConfirmedState(t *testing.T) {
	for _, tt := range []struct {
		status      PaymentStatus
		failureCode string
		want        EventKind
		state       EventState
	}{
		{PaymentStatusSucceeded, "", EventKindPaymentSucceeded, EventSucceeded},
		{PaymentStatusFailed, "", EventKindPaymentFailed, EventFailed},
		{PaymentStatusFailed, "expired", EventKindPaymentFailed, EventExpired},
		{PaymentStatusPending, "", EventKindPaymentPending, EventPending},
	} {
		for handler, newHandler := range checkoutHandlers(t, checkoutRecordBody(tt.status, tt.failureCode)) {
			for shape, claim := range checkoutClaims {
				var l eventLog
				code := post(t, newHandler(&l), []byte(claim)).Code
				for _, ev := range l.all() {
					assert.Equal(t, tt.want, ev.Kind(), "%s %s %s %s", tt.status, tt.failureCode, handler, shape)
					assert.Equal(t, tt.state, ev.State(), "%s %s %s %s", tt.status, tt.failureCode, handler, shape)
					if ev.Kind() == EventKindPaymentSucceeded {
						co, ok := ev.(*CheckoutEvent)
						require.True(t, ok)
						assert.Equal(t, PaymentStatusSucceeded, co.Data.Status)
					}
				}
				if code != http.StatusOK {
					assert.Empty(t, l.all(), "refused %d, yet merchant code was called", code)
				}
			}
		}
	}
}

// TestOneConfirmedFactReachesMerchantCodeOnce delivers one paid checkout in every claim
// shape, and a receive callback claiming success and then pending: each handler passes
// each confirmed fact to merchant code once, whatever the claims looked like.
func TestOneConfirmedFactReachesMerchantCodeOnce(t *testing.T) {
	for handler, newHandler := range checkoutHandlers(t, checkoutRecordBody(PaymentStatusSucceeded, "")) {
		var l eventLog
		h := newHandler(&l)
		for _, shape := range []string{"spec, full", "spec, minimal", "spec, pending", "provider", "provider, pending", "provider, no state", "spec, full"} {
			assert.Equal(t, http.StatusOK, post(t, h, []byte(checkoutClaims[shape])).Code, "%s %s", handler, shape)
		}
		assert.Len(t, l.all(), 1, "%s: one paid checkout reaches merchant code once", handler)
	}

	success := fixture(t, "events/transaction_success.json")
	pending := []byte(strings.Replace(string(success), `"ResponseCode": "0000"`, `"ResponseCode": "0001"`, 1))
	for name, dedupe := range map[string]WebhookOption{"WithDedupe": WithDedupe(0), "WithDedupeStore": WithDedupeStore(NewMemoryStore(0))} {
		h, rec, mock, _ := confirmingHandler(t, dedupe)
		mock.RegisterResponder(http.MethodGet, mockBaseURL+"/v1/payments/order1042", fixtureResponder(t, http.StatusOK, "confirm/receive_status_order1042.json"))
		for _, body := range [][]byte{success, pending, success} {
			assert.Equal(t, http.StatusOK, post(t, h, body).Code, name)
		}
		assert.Equal(t, int64(1), rec.calls.Load(), "%s: a paid receive reaches merchant code once, whatever state its copies claim", name)
	}
}

// TestUnknownEventKindReachesTheEventFunction: a kind the SDK does not know settles
// nothing; it reaches the event function as an *UnconfirmedEvent with its kind and raw
// body, and is answered 200 once handled (500 when the function fails).
func TestUnknownEventKindReachesTheEventFunction(t *testing.T) {
	body := []byte(`{"id":"evt_9","event":"invoice.created","data":{"id":"inv_1"}}`)
	c, mock := newMockClient(t)
	knowsNothingElse(t, mock)
	var l eventLog
	for name, h := range map[string]http.Handler{
		"NewWebhookHandler":  NewWebhookHandler(l.handle),
		"confirming handler": NewWebhookHandler(l.handle, WithStatusCheckConfirmation(c), WithDedupe(0)),
		"Tracker.Handler":    NewTracker(c, TrackerOptions{Clock: newFakeClock()}).Handler(WithEventHandler(l.handle)),
	} {
		before := len(l.all())
		require.Equal(t, http.StatusOK, post(t, h, body).Code, name)
		require.Equal(t, http.StatusOK, post(t, h, body).Code, name)
		got := l.all()[before:]
		require.Len(t, got, 2, "%s: an unconfirmed event has no fact to dedupe it by", name)
		u, ok := got[0].(*UnconfirmedEvent)
		require.True(t, ok, "%s: %T", name, got[0])
		assert.True(t, u.Unconfirmed)
		assert.Equal(t, EventKindUnconfirmed, u.Kind())
		assert.Equal(t, EventKind("invoice.created"), u.ClaimedKind)
		assert.Equal(t, body, u.Body)
		assert.Nil(t, u.Claim)
	}
	failing := NewWebhookHandler(func(context.Context, Event) error { return assert.AnError })
	assert.Equal(t, http.StatusInternalServerError, post(t, failing, body).Code)
}
