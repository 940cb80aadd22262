package billing

import (
	"net/http"
	"strings"
	"testing"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDefaultCurrencyIsCompared: a receive or checkout tracked without a currency is in
// GHS, the spec's default, and a status check that reports it paid in another currency
// is a mismatch, never a plain success.
func TestDefaultCurrencyIsCompared(t *testing.T) {
	for _, currency := range []string{"", "ghs", "GHS"} {
		tr, mock, _ := newTestTracker(t, TrackerOptions{})
		xof := strings.Replace(string(fixture(t, "confirm/receive_status_order1042.json")), `"GHS"`, `"XOF"`, 1)
		mock.RegisterResponder(http.MethodGet, mockBaseURL+"/v1/payments/order1042", httpmock.NewStringResponder(http.StatusOK, xof))
		require.NoError(t, tr.TrackAmount(ctx(), KindReceive, "order1042", Money{Amount: 5000, Currency: currency}))
		require.Equal(t, http.StatusOK, post(t, tr.Handler(), fixture(t, "events/transaction_success.json")).Code)
		o := settledNow(t, tr, KindReceive, "order1042")
		require.NotNil(t, o)
		assert.Equal(t, EventMismatched, o.State, "tracked in %q, paid in XOF", currency)
		key, _ := keyOf(KindReceive, "order1042")
		e, err := tr.store.Get(ctx(), key)
		require.NoError(t, err)
		assert.Equal(t, "GHS", e.Movement.Currency, "the default is stored as the fact it is")
	}
}

// TestMandateFailedWithCodeIsFinal: a mandate status check that answers FAILED beside
// the documented failure code 4204 is final: the mandate failed. Before, the code made
// the answer an error and the mandate stayed pending for ever.
func TestMandateFailedWithCodeIsFinal(t *testing.T) {
	c, mock := newMockClient(t)
	mock.RegisterResponder(http.MethodGet, mockBaseURL+"/v1/mandates/preapproval/mandate7/status", httpmock.NewStringResponder(http.StatusOK,
		`{"message":"Preapproval failed","code":"4204","data":{"clientReferenceId":"mandate7","preapprovalStatus":"FAILED","servicePreApprovalId":"sp1"}}`))
	o, err := movementStatus(ctx(), c, movement{Kind: KindMandate, ClientReference: "mandate7"})
	require.NoError(t, err)
	assert.Equal(t, EventFailed, o.State)
	assert.True(t, o.IsFinal())
}

// TestPaidAmountZeroIsAMismatch: a paid status check whose amount is present and
// differs from the one tracked, zero included, is a mismatch; only an absent amount is
// not named.
func TestPaidAmountZeroIsAMismatch(t *testing.T) {
	paid := string(fixture(t, "confirm/receive_status_order1042.json"))
	for name, tt := range map[string]struct {
		body string
		want EventState
	}{
		"amount 0":       {strings.Replace(paid, `"amount": 5000`, `"amount": 0`, 1), EventMismatched},
		"amount absent":  {strings.Replace(paid, `"amount": 5000,`, ``, 1), EventSucceeded},
		"amount null":    {strings.Replace(paid, `"amount": 5000`, `"amount": null`, 1), EventSucceeded},
		"amount as paid": {paid, EventSucceeded},
	} {
		tr, mock, _ := newTestTracker(t, TrackerOptions{})
		mock.RegisterResponder(http.MethodGet, mockBaseURL+"/v1/payments/order1042", httpmock.NewStringResponder(http.StatusOK, tt.body))
		require.NoError(t, tr.TrackAmount(ctx(), KindReceive, "order1042", Money{Amount: 5000, Currency: "GHS"}))
		require.Equal(t, http.StatusOK, post(t, tr.Handler(), fixture(t, "events/transaction_success.json")).Code, name)
		o := settledNow(t, tr, KindReceive, "order1042")
		require.NotNil(t, o, name)
		assert.Equal(t, tt.want, o.State, name)
	}
}

// TestForgedCallbackDoesNotPinAnUnsentMovement: a forged callback for a guessable
// reference, refused while its movement is tracked but not yet sent, leaves nothing
// that keeps the movement: when its request then surely never leaves, the movement is
// released, not left pending for ever.
func TestForgedCallbackDoesNotPinAnUnsentMovement(t *testing.T) {
	tr, _, _ := newTestTracker(t, TrackerOptions{})
	forged := []byte(`{"ResponseCode":"2001","Data":{"AmountDebited":0,"TransactionId":"t1","ClientReference":"snd1","Amount":10,"Charges":0,"RecipientName":null}}`)
	h := tr.Handler()
	_, err := trackThenSend(ctx(), tr, KindSend, "snd1", Money{Amount: 1000}, func() (*DirectSend, error) {
		code := post(t, h, forged).Code
		assert.Equal(t, http.StatusForbidden, code, "no status check knows a payout that was never sent")
		return nil, ErrNotSent
	})
	require.ErrorIs(t, err, ErrNotSent)
	key, _ := keyOf(KindSend, "snd1")
	e, err := tr.store.Get(ctx(), key)
	require.NoError(t, err)
	assert.False(t, e.Tracked, "the movement that never left is released")
	assert.Nil(t, e.Final)
}
