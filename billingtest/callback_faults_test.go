package billingtest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	billing "github.com/billingsdk/billing-go"
)

func TestInjectCallbackFault(t *testing.T) {
	var received atomic.Int64
	receiver := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { received.Add(1) }))
	defer receiver.Close()
	s := NewServer(t, WithManualClock())
	c := s.Client()
	receive := func(ref string) {
		t.Helper()
		_, err := c.Payments.Receive(context.Background(), &billing.ReceiveParams{
			Amount: 1000, Phone: "233241234567", Provider: billing.ProviderMTN, Description: "Order",
			ClientReference: ref, CallbackURL: receiver.URL,
		})
		require.NoError(t, err)
	}

	s.InjectCallbackFault(CallbackFault{Kind: CallbackDropped, Reference: "dropped1"})
	s.InjectCallbackFault(CallbackFault{Kind: CallbackDuplicated, Reference: "twice1"})
	s.InjectCallbackFault(CallbackFault{Kind: CallbackDelayed, Reference: "late1", Delay: 10 * time.Minute})
	s.InjectCallbackFault(CallbackFault{Kind: CallbackForgedFailure, Reference: "forged1"})
	s.InjectCallbackFault(CallbackFault{Kind: CallbackForgedAmount, Reference: "forged2"})
	receive("dropped1")
	receive("twice1")
	receive("late1")
	receive("forged1")
	receive("forged2")
	s.Advance(0)
	assert.EqualValues(t, 6, received.Load(), "none for dropped1, two for twice1, none yet for late1, a forgery and the genuine one for forged1 and forged2")
	s.Advance(10 * time.Minute)
	assert.EqualValues(t, 7, received.Load())
	assert.Equal(t, 5, s.CallbackFaultsFired())
	for _, ref := range []string{"forged1", "forged2"} {
		st, err := c.Payments.ReceiveStatus(context.Background(), ref)
		require.NoError(t, err)
		assert.True(t, st.Succeeded(), "a forgery changes nothing the service holds")
		assert.EqualValues(t, 1000, st.Amount)
	}

	st, err := c.Payments.ReceiveStatus(context.Background(), "dropped1")
	require.NoError(t, err)
	assert.True(t, st.Succeeded(), "a dropped callback moves money all the same")
}

func TestInjectCallbackFaultPanicsOnAnUnknownKind(t *testing.T) {
	s := NewServer(t, WithManualClock())
	assert.PanicsWithValue(t, `billingtest: sandbox: unknown callback fault kind "lose": use contradict, delay, drop, duplicate, forge-amount, forge-failure, stale`, func() {
		s.InjectCallbackFault(CallbackFault{Kind: "lose"})
	})
}

// CallbackFault.Reference is the merchant's client reference on both wires: a
// checkout webhook is picked by the session's ClientReference, and by its
// service reference only through ServiceReference.
func TestCallbackFaultReferenceIsTheClientReferenceOnBothWires(t *testing.T) {
	for _, wire := range Wires() {
		t.Run(string(wire), func(t *testing.T) {
			var received atomic.Int64
			hooks := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { received.Add(1) }))
			defer hooks.Close()
			s := NewServer(t, WithManualClock(), WithWire(wire), WithWebhookURL(hooks.URL))
			c := s.Client()
			open := func(ref string) *billing.Payment {
				t.Helper()
				p, err := c.Payments.CreateCheckout(context.Background(), &billing.CheckoutParams{Amount: 5000, Description: "Order", ClientReference: ref})
				require.NoError(t, err)
				return p
			}
			byClient, byService, untouched := open("order1"), open("order2"), open("order3")
			s.InjectCallbackFault(CallbackFault{Kind: CallbackDropped, Reference: "order1"})
			s.InjectCallbackFault(CallbackFault{Kind: CallbackDropped, Reference: byService.Reference})
			s.InjectCallbackFault(CallbackFault{Kind: CallbackDropped, ServiceReference: byService.Reference})
			for _, p := range []*billing.Payment{byClient, byService, untouched} {
				require.NoError(t, s.CompleteCheckout(p.Reference, "CARD", "succeeded"))
			}
			s.Advance(0)
			assert.EqualValues(t, 1, received.Load(), "only order3's webhook arrives")
			assert.Equal(t, 2, s.CallbackFaultsFired(), "the service reference under Reference matches nothing")

			// The session is found by the merchant's reference too.
			p, err := c.Payments.Get(context.Background(), "order1")
			require.NoError(t, err)
			assert.Equal(t, byClient.Reference, p.Reference)
		})
	}
	s := NewServer(t)
	assert.Panics(t, func() {
		s.InjectCallbackFault(CallbackFault{Kind: CallbackDropped, Reference: "a", ServiceReference: "b"})
	})
}

func TestWithCheckoutLifetime(t *testing.T) {
	s := NewServer(t, WithManualClock(), WithCheckoutLifetime(time.Hour))
	c := s.Client()
	p, err := c.Payments.CreateCheckout(context.Background(), &billing.CheckoutParams{Amount: 5000, Description: "Order"})
	require.NoError(t, err)
	s.Advance(time.Hour)
	got, err := c.Payments.Get(context.Background(), p.Reference)
	require.NoError(t, err)
	assert.Equal(t, billing.PaymentStatusFailed, got.Status)
	assert.Equal(t, "expired", got.FailureCode)
	assert.Empty(t, s.Deliveries(), "no webhook for an unpaid session")

	_, err = Start(WithCheckoutLifetime(-time.Second))
	assert.ErrorContains(t, err, "must not be negative")
}
