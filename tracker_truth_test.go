package billing

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// settledNow returns the settled outcome of key, or nil.
func settledNow(t *testing.T, tr *Tracker, kind Kind, ref string) *Outcome {
	t.Helper()
	key, err := keyOf(kind, ref)
	require.NoError(t, err)
	e, err := tr.store.Get(context.Background(), key)
	require.NoError(t, err)
	if e.Final == nil {
		return nil
	}
	return settledOutcome(e.Final, kind)
}

// A reference tracked as one kind is confirmed only by that kind's status check: a
// debit that failed is not reported succeeded from a receive's status under the same
// reference, nor a bank transfer never sent from a send's status.
func TestTheTrackedKindDecides(t *testing.T) {
	tr, mock, _ := newTestTracker(t, TrackerOptions{})
	// A receive of the same reference was paid; the debit failed.
	mock.RegisterResponder(http.MethodGet, mockBaseURL+"/v1/payments/shared1", fixtureAbout(t, http.StatusOK, "confirm/receive_status_order1042.json", "shared1"))
	mock.RegisterResponder(http.MethodGet, mockBaseURL+"/v1/payments/direct-debit/status/shared1", fixtureAbout(t, http.StatusOK, "payments/receive_status_failed.json", "shared1"))
	require.NoError(t, tr.Track(context.Background(), KindDirectDebit, "shared1"))
	success := []byte(`{"ResponseCode":"0000","Message":"success","Data":{"ClientReference":"shared1","Amount":50.00,"PaymentDate":"x"}}`)
	assert.Equal(t, http.StatusForbidden, post(t, tr.Handler(), success).Code, "the debit's status check says failed")
	assert.Nil(t, settledNow(t, tr, KindDirectDebit, "shared1"))
	assert.Zero(t, mock.GetCallCountInfo()["GET "+mockBaseURL+"/v1/payments/shared1"], "the receive's status check is not asked")

	// A bank transfer tracked but never sent; a send of that reference was paid.
	mock.RegisterResponder(http.MethodGet, mockBaseURL+"/v1/payments/bank1", fixtureAbout(t, http.StatusOK, "confirm/send_status_refund1042.json", "bank1"))
	require.NoError(t, tr.Track(context.Background(), KindBankTransfer, "bank1"))
	paid := []byte(`{"ResponseCode":"0000","Data":{"ClientReference":"bank1","AmountDebited":150,"RecipientName":"x"}}`)
	assert.Equal(t, http.StatusForbidden, post(t, tr.Handler(), paid).Code, "no bank transfer is known by the reference")
	assert.Nil(t, settledNow(t, tr, KindBankTransfer, "bank1"))
	assert.Zero(t, mock.GetCallCountInfo()["GET "+mockBaseURL+"/v1/payments/bank1"])
}

// An untracked callback is confirmed only when exactly one kind knows its reference;
// when both kinds of its shape do, it is ambiguous: refused and logged.
func TestAnUntrackedCallbackTwoKindsKnowIsRefused(t *testing.T) {
	var logs bytes.Buffer
	tr, mock, _ := newTestTracker(t, TrackerOptions{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	mock.RegisterResponder(http.MethodGet, mockBaseURL+"/v1/payments/both1", fixtureAbout(t, http.StatusOK, "confirm/receive_status_order1042.json", "both1"))
	mock.RegisterResponder(http.MethodGet, mockBaseURL+"/v1/payments/direct-debit/status/both1", fixtureAbout(t, http.StatusOK, "confirm/receive_status_order1042.json", "both1"))
	success := []byte(`{"ResponseCode":"0000","Message":"success","Data":{"ClientReference":"both1","Amount":50.00,"PaymentDate":"x"}}`)
	assert.Equal(t, http.StatusForbidden, post(t, tr.Handler(), success).Code)
	assert.Contains(t, logs.String(), "ambiguous")
	assert.Nil(t, settledNow(t, tr, KindReceive, "both1"))
}

// A status check whose answer names another client reference is no answer: the
// movement stays pending, by Await and by Run alike, and a callback is not confirmed.
func TestAnAnswerAboutAnotherReferenceIsNoAnswer(t *testing.T) {
	tr, mock, clock := newTestTracker(t, TrackerOptions{GiveUpAfter: time.Minute})
	mock.RegisterResponder(http.MethodGet, mockBaseURL+"/v1/payments/mine1", fixtureAbout(t, http.StatusOK, "confirm/receive_status_order1042.json", "theirs1"))
	result := awaitAsync(context.Background(), tr, KindReceive, "mine1")
	for r := (awaitResult{}); ; {
		clock.waitTimers(1)
		clock.Advance(time.Minute)
		select {
		case r = <-result:
			require.ErrorIs(t, r.err, ErrStillPending)
			assert.ErrorIs(t, r.err, errAnsweredOther)
			assert.True(t, r.outcome.IsPending())
			assert.Nil(t, settledNow(t, tr, KindReceive, "mine1"))
			success := []byte(`{"ResponseCode":"0000","Message":"success","Data":{"ClientReference":"mine1","Amount":50.00,"PaymentDate":"x"}}`)
			assert.Equal(t, http.StatusServiceUnavailable, post(t, tr.Handler(), success).Code, "not confirmed: ask again later")
			assert.Nil(t, settledNow(t, tr, KindReceive, "mine1"))
			return
		default:
		}
	}
}

// A success of another amount or currency than the one asked is never a plain success.
func TestASuccessOfAnotherAmountIsMismatched(t *testing.T) {
	for _, asked := range []Money{{Amount: 4000, Currency: "GHS"}, {Amount: 5000, Currency: "NGN"}} {
		t.Run(asked.String(), func(t *testing.T) {
			var logs bytes.Buffer
			tr, mock, _ := newTestTracker(t, TrackerOptions{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			registerStatus(t, mock, "/v1/payments/order1042", "confirm/receive_status_order1042.json") // 50.00 GHS paid
			require.NoError(t, tr.TrackAmount(context.Background(), KindReceive, "order1042", asked))
			assert.Equal(t, http.StatusOK, post(t, tr.Handler(), fixture(t, "events/transaction_success.json")).Code)
			o, err := tr.Await(context.Background(), KindReceive, "order1042")
			require.NoError(t, err)
			assert.True(t, o.Mismatched(), "state %s", o.State)
			assert.False(t, o.Succeeded())
			assert.True(t, o.IsFinal())
			assert.Equal(t, int64(5000), o.Amount, "what moved")
			assert.Contains(t, logs.String(), "not as asked")
		})
	}
	t.Run("as asked", func(t *testing.T) {
		tr, mock, _ := newTestTracker(t, TrackerOptions{})
		registerStatus(t, mock, "/v1/payments/order1042", "confirm/receive_status_order1042.json")
		require.NoError(t, tr.TrackAmount(context.Background(), KindReceive, "order1042", Money{Amount: 5000, Currency: "ghs"}))
		assert.Equal(t, http.StatusOK, post(t, tr.Handler(), fixture(t, "events/transaction_success.json")).Code)
		o, err := tr.Await(context.Background(), KindReceive, "order1042")
		require.NoError(t, err)
		assert.True(t, o.Succeeded())
	})
}

// Deliveries of one confirmed event are one event to merchant code, whatever code each
// sender wrote: a forged failure code per delivery does not call it again.
func TestDedupeKeysAreConfirmedFacts(t *testing.T) {
	h, rec, mock, _ := confirmingHandler(t, WithDedupe(0))
	registerStatus(t, mock, "/v1/payments/payout4075", "confirm/send_status_payout4075.json")
	for _, code := range []ResponseCode{"4075", "2001", "4070", "5000", "3050"} {
		body := bytes.Replace(fixture(t, "events/send_failed_4075.json"), []byte(`"4075"`), []byte(`"`+code+`"`), 1)
		assert.Equal(t, http.StatusOK, post(t, h, body).Code, code)
	}
	assert.EqualValues(t, 1, rec.calls.Load(), "one failure, one call")

	// Five deliveries of one paid checkout, each with another code: one call.
	h, rec, mock, _ = confirmingHandler(t, WithDedupe(0))
	registerStatus(t, mock, "/v1/payments/ref_7Q2K9XW4LM", "confirm/checkout_get_ref_7Q2K9XW4LM.json")
	for i := range 5 {
		var body []byte
		if i%2 == 0 {
			body = fixture(t, "events/payment_succeeded.json")
		} else {
			body = bytes.Replace(fixture(t, "events/payment_succeeded.json"), []byte(`"event"`), []byte(`"responseCode":"000`+fmt.Sprint(i)+`","event"`), 1)
		}
		assert.Equal(t, http.StatusOK, post(t, h, body).Code)
	}
	assert.EqualValues(t, 1, rec.calls.Load(), "one payment, one call")
}

// A reference reused for a new movement, which the service refused as a duplicate,
// is not settled by a replay of the old movement's success: a refusal of the request
// stands, and a success of another amount than asked is mismatched.
func TestAReplayedOldSuccessDoesNotSettleAReusedReference(t *testing.T) {
	params := func() *ReceiveParams {
		return &ReceiveParams{Amount: 100, Currency: "GHS", Phone: "233241234567", Provider: ProviderMTN, Description: "Order 2",
			ClientReference: "order1042", CallbackURL: "https://shop.example.com/cb"}
	}
	t.Run("refused as a duplicate", func(t *testing.T) {
		tr, mock, _ := newTestTracker(t, TrackerOptions{})
		mock.RegisterResponder(http.MethodPost, mockBaseURL+"/v1/payments/receive", fixtureResponder(t, http.StatusBadRequest, "payments/receive_duplicate.json"))
		registerStatus(t, mock, "/v1/payments/order1042", "confirm/receive_status_order1042.json") // the old movement: 50.00 paid
		_, err := tr.Receive(context.Background(), params())
		require.Error(t, err)
		assert.NotErrorIs(t, err, ErrOutcomeUnknown)
		// The old movement's callback arrives again.
		post(t, tr.Handler(), fixture(t, "events/transaction_success.json"))
		o, err := tr.Await(context.Background(), KindReceive, "order1042")
		require.NoError(t, err)
		assert.True(t, o.Failed(), "the new movement was refused; state %s", o.State)
		assert.Equal(t, SourceRequest, o.Source)
	})
	t.Run("unknown after a refused re-send", func(t *testing.T) {
		tr, mock, _ := newTestTracker(t, TrackerOptions{})
		mock.RegisterResponder(http.MethodPost, mockBaseURL+"/v1/payments/receive", httpmock.NewStringResponder(http.StatusBadGateway, `bad gateway`))
		registerStatus(t, mock, "/v1/payments/order1042", "confirm/receive_status_order1042.json")
		_, err := tr.Receive(context.Background(), params())
		require.ErrorIs(t, err, ErrOutcomeUnknown)
		assert.Equal(t, http.StatusOK, post(t, tr.Handler(), fixture(t, "events/transaction_success.json")).Code)
		o, err := tr.Await(context.Background(), KindReceive, "order1042")
		require.NoError(t, err)
		assert.True(t, o.Mismatched(), "50.00 moved where 1.00 was asked: state %s", o.State)
	})
}

// A send that surely never left releases its movement: not pending, not overdue, its
// reference usable again.
func TestASendThatNeverLeftReleasesItsMovement(t *testing.T) {
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(fixture(t, "payments/receive_accepted.json"))
	}))
	defer srv.Close()
	c, err := NewClient(WithBaseURL(srv.URL), WithClientCredentials("client-id", "client-secret"), WithRetry(1, 0, 0))
	require.NoError(t, err)
	clock := newFakeClock()
	tr := NewTracker(c, TrackerOptions{Clock: clock})
	p := &ReceiveParams{Amount: 2500, Phone: "233241234567", Provider: ProviderMTN, Description: "Order 1044",
		ClientReference: "rcv1044", CallbackURL: "https://shop.example.com/cb"}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := clock.Now()
	_, err = tr.Receive(ctx, p)
	require.ErrorIs(t, err, context.Canceled)
	assert.NotErrorIs(t, err, ErrOutcomeUnknown)
	assert.Zero(t, requests.Load(), "nothing was sent")

	stats, err := tr.Stats(context.Background())
	require.NoError(t, err)
	assert.Zero(t, stats.Pending)
	clock.Advance(time.Hour)
	r, err := tr.Reconcile(context.Background(), start.Add(-time.Minute), clock.Now())
	require.NoError(t, err)
	assert.Empty(t, r.Overdue)
	_, err = tr.Receive(context.Background(), p)
	require.NoError(t, err, "the reference is usable again")
	assert.EqualValues(t, 1, requests.Load())
}

// Each state answers exactly one of the helpers; every final state is final.
func TestOutcomeStateHelpers(t *testing.T) {
	for _, s := range []EventState{EventSucceeded, EventFailed, EventMismatched, EventExpired, EventUnknown, EventPending} {
		o := &Outcome{State: s}
		got := map[string]bool{"succeeded": o.Succeeded(), "failed": o.Failed(), "mismatched": o.Mismatched(),
			"expired": o.Expired(), "unknown": o.Unknown(), "pending": o.IsPending()}
		for name, v := range got {
			assert.Equal(t, name == string(s), v, "%s answers %s", s, name)
		}
		assert.Equal(t, s != EventPending, o.IsFinal(), s)
	}
}
