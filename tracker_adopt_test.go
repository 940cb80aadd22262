package billing_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
	"github.com/billingsdk/billing-go/storekit"
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

// A Tracker's send helper never sends a movement under a reference that holds an outcome
// already: it is another movement's (this one has not been sent), so nothing is tracked
// or sent, and that outcome is never reported as the new movement's.
func TestASendUnderAReferenceWithAnOutcomeIsRefusedUntracked(t *testing.T) {
	onEachWire(t, func(t *testing.T, wire billingtest.Wire) {
		srv := billingtest.NewServer(t, billingtest.WithManualClock(), billingtest.WithWire(wire))
		c := srv.Client()
		var reported []*billing.Outcome
		tr := billing.NewTracker(c, billing.TrackerOptions{Clock: srv.Clock(),
			OnOutcome: func(_ context.Context, o *billing.Outcome) error { reported = append(reported, o); return nil }})
		h := httptest.NewServer(tr.Handler())
		t.Cleanup(h.Close)
		ctx := context.Background()
		// An untracked payout under ref1, its callback settling the reference.
		_, err := c.Payouts.Send(ctx, &billing.SendParams{Amount: 7300, Phone: "233241234567", Provider: billing.ProviderMTN,
			Description: "first", ClientReference: "ref1", CallbackURL: h.URL})
		require.NoError(t, err)
		srv.Advance(time.Second)
		e, err := tr.Store().Get(ctx, storekit.MovementKey{Callback: storekit.CallbackPayout, ClientReference: "ref1"})
		require.NoError(t, err)
		require.NotNil(t, e.Final, "the callback settled the untracked reference")

		_, err = tr.Send(ctx, &billing.SendParams{Amount: 5200, Phone: "233241234567", Provider: billing.ProviderMTN,
			Description: "second", ClientReference: "ref1", CallbackURL: h.URL})
		require.ErrorIs(t, err, billing.ErrAlreadyTracked)
		assert.Equal(t, 1, srv.Movements("ref1"), "nothing was sent")
		e, err = tr.Store().Get(ctx, storekit.MovementKey{Callback: storekit.CallbackPayout, ClientReference: "ref1"})
		require.NoError(t, err)
		assert.False(t, e.Tracked, "nothing was tracked")
		assert.Empty(t, reported, "the other movement's outcome is reported as no order's")
	})
}
