package billing

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// reconcileAll reconciles every movement the test tracker started.
func reconcileAll(t *testing.T, tr *Tracker, clock *fakeClock) Reconciliation {
	t.Helper()
	r, err := tr.Reconcile(ctx(), clock.Now().Add(-24*time.Hour), clock.Now().Add(24*time.Hour))
	require.NoError(t, err)
	return r
}

// contradictedRefs are the references r lists as contradicted.
func contradictedRefs(r Reconciliation) []string {
	var refs []string
	for _, c := range r.Contradicted {
		refs = append(refs, c.Key.ClientReference)
	}
	return refs
}

// TestReconcileListsAContradictedCallback: a callback the status check contradicts (a
// forged failure of a payout that succeeded, a forged success of one that failed) is
// refused and settles nothing, and Reconcile lists the movement, pending or settled
// later by the truth without disagreement, with what the callback claimed. The truth
// settles the movement as it would have, one outcome to report.
func TestReconcileListsAContradictedCallback(t *testing.T) {
	callback := func(code, txID, ref string) string {
		return `{"ResponseCode":"` + code + `","Data":{"AmountDebited":0,"TransactionId":"` + txID + `","ClientReference":"` + ref +
			`","Amount":150.00,"Charges":1.50,"RecipientName":null}}`
	}
	for name, tt := range map[string]struct {
		status, ref, forged, genuine string
		claimed, truth               EventState
	}{
		"forged failure of a paid payout": {"payouts/send_status_success.json", "refund1040",
			callback("4075", "snd_9d3e7a1b", "refund1040"), callback("0000", "snd_9d3e7a1b", "refund1040"), EventFailed, EventSucceeded},
		"forged success of a failed payout": {"payouts/send_status_failed.json", "refund1041",
			callback("0000", "snd_2b8c4f6e", "refund1041"), callback("4075", "snd_2b8c4f6e", "refund1041"), EventSucceeded, EventFailed},
	} {
		t.Run(name, func(t *testing.T) {
			tr, mock, clock := newTestTracker(t, TrackerOptions{OnOutcome: func(context.Context, *Outcome) error { return nil }})
			registerStatus(t, mock, "/v1/payments/"+tt.ref, tt.status)
			require.NoError(t, tr.TrackAmount(ctx(), KindSend, tt.ref, Money{Amount: 15000}))
			h := tr.Handler()

			require.Equal(t, http.StatusForbidden, post(t, h, []byte(tt.forged)).Code)
			assert.Nil(t, settledNow(t, tr, KindSend, tt.ref), "the forged callback settled nothing")
			r := reconcileAll(t, tr, clock)
			require.Len(t, r.Contradicted, 1, "the contradicted callback is listed while the payout is pending")
			c := r.Contradicted[0]
			assert.Equal(t, movementKey{Callback: EventKindPayout, ClientReference: tt.ref}.kit(), c.Key)
			assert.Equal(t, string(tt.claimed), c.Claimed)
			assert.JSONEq(t, tt.forged, string(c.Body), "the forged body is kept for audit")
			assert.Equal(t, 1, c.Count)
			assert.Equal(t, clock.Now(), c.At)

			clock.Advance(time.Minute)
			require.Equal(t, http.StatusForbidden, post(t, h, []byte(tt.forged)).Code, "again")
			r = reconcileAll(t, tr, clock)
			require.Len(t, r.Contradicted, 1)
			assert.Equal(t, 2, r.Contradicted[0].Count)
			assert.Equal(t, clock.Now(), r.Contradicted[0].LastAt)
			assert.True(t, r.Contradicted[0].At.Before(r.Contradicted[0].LastAt))

			require.Equal(t, http.StatusOK, post(t, h, []byte(tt.genuine)).Code, "the genuine callback settles it")
			o := settledNow(t, tr, KindSend, tt.ref)
			require.NotNil(t, o)
			assert.Equal(t, tt.truth, o.State, "settled by the truth, never by the forgery")
			r = reconcileAll(t, tr, clock)
			assert.Empty(t, r.Disagreed, "the store's outcome never met the forgery")
			assert.Equal(t, []string{tt.ref}, contradictedRefs(r), "still listed once settled")

			unreported, err := tr.Store().ClaimUnreported(ctx(), "test", clock.Now(), clock.Now().Add(time.Minute), 10)
			require.NoError(t, err)
			require.Len(t, unreported, 1, "one outcome to report")
			assert.Equal(t, string(tt.truth), unreported[0].Outcome.State)
		})
	}
}

// TestDeliverRecordsAContradictedCallback: Deliver, fed a callback the status check
// contradicts, records it as the handler does; one the status check could not be asked
// about (a transport failure) or that it says is still pending is not recorded.
func TestDeliverRecordsAContradictedCallback(t *testing.T) {
	forged := []byte(`{"ResponseCode":"4075","Data":{"AmountDebited":0,"TransactionId":"snd_9d3e7a1b","ClientReference":"refund1040","Amount":150.00,"Charges":1.50,"RecipientName":null}}`)
	tr, mock, clock := newTestTracker(t, TrackerOptions{})
	require.NoError(t, tr.TrackAmount(ctx(), KindSend, "refund1040", Money{Amount: 15000}))

	mock.RegisterResponder(http.MethodGet, mockBaseURL+"/v1/payments/refund1040", httpmock.NewErrorResponder(errors.New("connection reset")))
	require.ErrorIs(t, tr.Deliver(ctx(), mustParse(t, forged)), ErrStillPending)
	registerStatus(t, mock, "/v1/payments/refund1040", "payouts/send_status_pending.json")
	require.ErrorIs(t, tr.Deliver(ctx(), mustParse(t, forged)), ErrStillPending)
	assert.Empty(t, reconcileAll(t, tr, clock).Contradicted, "nothing contradicted it")

	registerStatus(t, mock, "/v1/payments/refund1040", "payouts/send_status_success.json")
	require.ErrorIs(t, tr.Deliver(ctx(), mustParse(t, forged)), ErrUnconfirmed)
	r := reconcileAll(t, tr, clock)
	require.Len(t, r.Contradicted, 1)
	assert.Equal(t, string(EventFailed), r.Contradicted[0].Claimed)
	assert.NotEmpty(t, r.Contradicted[0].Body)
}

// TestAContradictedCallbackDoesNotPinAnUnsentMovement: a forged callback for a tracked
// movement whose request never left is contradicted (no status check knows the
// reference) and listed by Reconcile while the movement is tracked, and the movement is
// still released when its request surely never left.
func TestAContradictedCallbackDoesNotPinAnUnsentMovement(t *testing.T) {
	tr, _, clock := newTestTracker(t, TrackerOptions{})
	forged := []byte(`{"ResponseCode":"2001","Data":{"AmountDebited":0,"TransactionId":"t1","ClientReference":"snd1","Amount":10,"Charges":0,"RecipientName":null}}`)
	h := tr.Handler()
	var during Reconciliation
	_, err := trackThenSend(ctx(), tr, KindSend, "snd1", Money{Amount: 1000}, func() (*DirectSend, error) {
		require.Equal(t, http.StatusForbidden, post(t, h, forged).Code, "no status check knows a payout that was never sent")
		during = reconcileAll(t, tr, clock)
		return nil, ErrNotSent
	})
	require.ErrorIs(t, err, ErrNotSent)
	assert.Equal(t, []string{"snd1"}, contradictedRefs(during), "the forgery is listed while the movement is tracked")
	key, _ := keyOf(KindSend, "snd1")
	e, err := tr.store.Get(context.Background(), key)
	require.NoError(t, err)
	assert.False(t, e.Tracked, "the movement that never left is released all the same")
	assert.Empty(t, reconcileAll(t, tr, clock).Contradicted, "and its record went with it")
}
