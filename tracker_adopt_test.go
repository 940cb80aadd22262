package billing_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
)

// TestTrackNeverAdoptsAnotherMovementsOutcome: a callback of a movement sent outside the
// Tracker settles its reference before any Track; a movement of another kind tracked
// later under that reference and callback shape is not that movement, so the outcome
// settled before must never be reported as its own.
func TestTrackNeverAdoptsAnotherMovementsOutcome(t *testing.T) {
	onEachWire(t, func(t *testing.T, wire billingtest.Wire) {
		m := newTrackedMerchant(t, billingtest.WithWire(wire))
		ctx := context.Background()
		// A receive made by hand, its callback to the Tracker's endpoint.
		_, err := m.client.Payments.Receive(ctx, &billing.ReceiveParams{Amount: 5000, Phone: "233241234567",
			Provider: billing.ProviderMTN, Description: "By hand", ClientReference: "shared1", CallbackURL: m.callbackURL})
		require.NoError(t, err)
		m.srv.Advance(time.Minute) // the receive succeeds and calls back

		mandateApproved(t, m.srv, m.client, "233241234567", "mandateshared1")
		_, err = m.tracker.Charge(ctx, &billing.DirectDebitParams{CustomerMSISDN: "233241234567", Channel: billing.DirectDebitChannelMTN,
			Amount: 4999, PrimaryCallbackURL: m.callbackURL, Description: "Plan", ClientReference: "shared1"})
		if errors.Is(err, billing.ErrAlreadyTracked) {
			return // refused: the reference already has a movement of this shape
		}
		require.NoError(t, err)
		done, cancel := context.WithCancel(ctx)
		cancel()
		o, _ := m.tracker.Await(done, billing.KindDirectDebit, "shared1")
		require.NotNil(t, o)
		assert.False(t, o.IsFinal() && o.Amount == 5000,
			"the charge was told the receive's outcome: %s of %d (%s)", o.State, o.Amount, o.Source)
	})
}
