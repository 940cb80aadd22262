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
	receive("dropped1")
	receive("twice1")
	receive("late1")
	s.Advance(0)
	assert.EqualValues(t, 2, received.Load(), "none for dropped1, two for twice1, none yet for late1")
	s.Advance(10 * time.Minute)
	assert.EqualValues(t, 3, received.Load())
	assert.Equal(t, 3, s.CallbackFaultsFired())

	st, err := c.Payments.ReceiveStatus(context.Background(), "dropped1")
	require.NoError(t, err)
	assert.True(t, st.Succeeded(), "a dropped callback moves money all the same")
}

func TestInjectCallbackFaultPanicsOnAnUnknownKind(t *testing.T) {
	s := NewServer(t, WithManualClock())
	assert.PanicsWithValue(t, `billingtest: sandbox: unknown callback fault kind "lose": use contradict, delay, drop, duplicate, stale`, func() {
		s.InjectCallbackFault(CallbackFault{Kind: "lose"})
	})
}
