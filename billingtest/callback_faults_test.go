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
