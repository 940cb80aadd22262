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
	"sync/atomic"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeClock is a Clock that moves only when the test advances it, so minutes of waiting
// take no time. waitTimers lets the test wait, without sleeping, until the code under
// test has started waiting.
type fakeClock struct {
	mu      sync.Mutex
	cond    *sync.Cond
	now     time.Time
	timers  []fakeTimer
	created int
	waits   []time.Duration // every duration asked of After, in order
}

type fakeTimer struct {
	at time.Time
	ch chan time.Time
}

func newFakeClock() *fakeClock {
	c := &fakeClock{now: time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)}
	c.cond = sync.NewCond(&c.mu)
	return c
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	c.created++
	c.waits = append(c.waits, d)
	if d <= 0 {
		ch <- c.now
	} else {
		c.timers = append(c.timers, fakeTimer{at: c.now.Add(d), ch: ch})
	}
	c.cond.Broadcast()
	return ch
}

// Advance moves the clock and fires the timers that came due.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	keep := c.timers[:0]
	for _, tm := range c.timers {
		if tm.at.After(c.now) {
			keep = append(keep, tm)
			continue
		}
		tm.ch <- c.now
	}
	c.timers = keep
}

// wakeAll fires every pending timer without moving the time, as a clock whose time
// jumps may.
func (c *fakeClock) wakeAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, tm := range c.timers {
		tm.ch <- c.now
	}
	c.timers = nil
}

// waitTimers blocks until After has been called n times in all.
func (c *fakeClock) waitTimers(n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.created < n {
		c.cond.Wait()
	}
}

func (c *fakeClock) asked() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.waits...)
}

type awaitResult struct {
	outcome *Outcome
	err     error
}

// awaitAsync runs Await in a goroutine and returns the channel of its result. A
// reference not tracked yet is adopted first, as a merchant does with Track for a
// movement sent with the Client's own calls.
func awaitAsync(ctx context.Context, tr *Tracker, kind Kind, ref string) <-chan awaitResult {
	if key, err := keyOf(kind, ref); err == nil {
		if e, err := tr.store.Get(ctx, key); err == nil && !e.Tracked {
			if _, done, _ := awaitAnswer(e, kind, ref); !done {
				_, _, _ = tr.track(ctx, kind, ref, Money{}, false)
			}
		}
	}
	ch := make(chan awaitResult, 1)
	go func() {
		o, err := tr.Await(ctx, kind, ref)
		ch <- awaitResult{o, err}
	}()
	return ch
}

func newTestTracker(t *testing.T, opts TrackerOptions) (*Tracker, *httpmock.MockTransport, *fakeClock) {
	t.Helper()
	c, mock := newMockClient(t, WithDisbursementAccount("2020202"))
	knowsNothingElse(t, mock)
	clock := newFakeClock()
	opts.Clock = clock
	if opts.CallbackURL == "" {
		opts.CallbackURL = "https://shop.example.com/callbacks"
	}
	return NewTracker(c, opts), mock, clock
}

// knowsNothingElse makes the mock answer 404, as the service does, every status check
// of a reference the test registered no answer for: an untracked callback is confirmed
// only when exactly one kind knows its reference, so the other kinds are asked too.
func knowsNothingElse(t *testing.T, mock *httpmock.MockTransport) {
	mock.RegisterNoResponder(fixtureResponder(t, http.StatusNotFound, "payments/status_not_found.json"))
}

func TestTrackerReturnsAtOnceWhenTheCallbackArrives(t *testing.T) {
	tr, mock, clock := newTestTracker(t, TrackerOptions{})
	registerStatus(t, mock, "/v1/payments/order1042", "confirm/receive_status_order1042.json")
	result := awaitAsync(context.Background(), tr, KindReceive, "order1042")
	clock.waitTimers(1)
	assert.Equal(t, []time.Duration{5 * time.Minute}, clock.asked(), "the callback wait defaults to the spec's five minutes")

	assert.Equal(t, http.StatusOK, post(t, tr.Handler(), fixture(t, "events/transaction_success.json")).Code)
	r := <-result
	require.NoError(t, r.err)
	o := r.outcome
	assert.True(t, o.Succeeded())
	assert.True(t, o.IsFinal())
	assert.Equal(t, KindReceive, o.Kind)
	assert.Equal(t, SourceCallback, o.Source)
	assert.Equal(t, CodeSuccess, o.Code)
	assert.Equal(t, "7fd01221faeb41469e4b0d1d1c6e5c3e", o.TransactionID)
	assert.Equal(t, "51234567890", o.ExternalTransactionID)
	assert.Equal(t, int64(5000), o.Amount)
	assert.Equal(t, int64(50), o.Charges)
	assert.IsType(t, &TransactionCallback{}, o.Event)
	assert.Equal(t, clock.Now(), o.At)
	assert.Equal(t, 1, mock.GetTotalCallCount(), "one status check confirms the callback; no polling")
}

func TestTrackerKeepsACallbackThatArrivesBeforeAwait(t *testing.T) {
	tr, mock, _ := newTestTracker(t, TrackerOptions{})
	registerStatus(t, mock, "/v1/payments/payout4075", "confirm/send_status_payout4075.json")
	h := tr.Handler()
	assert.Equal(t, http.StatusOK, post(t, h, fixture(t, "events/send_failed_4075.json")).Code)
	o, err := tr.Await(context.Background(), KindSend, "payout4075")
	require.NoError(t, err)
	assert.True(t, o.Failed())
	assert.Equal(t, CodeInsufficientBalance, o.Code)
	assert.Equal(t, KindSend, o.Kind)
	assert.Empty(t, o.ExternalTransactionID)

	// The same payout callback shape resolves a bank transfer too.
	registerStatus(t, mock, "/v1/payments/supplier88", "404")
	registerStatus(t, mock, "/v1/merchants/2020202/transactions/status", "confirm/bank_status_supplier88.json")
	assert.Equal(t, http.StatusOK, post(t, h, fixture(t, "events/send_to_bank_success.json")).Code)
	o, err = tr.Await(context.Background(), KindBankTransfer, "supplier88")
	require.NoError(t, err)
	assert.True(t, o.Succeeded())
	assert.Equal(t, int64(100000), o.Amount)
	// An untracked callback is confirmed only when exactly one kind knows its reference:
	// both kinds of its shape are asked.
	assert.Equal(t, 4, mock.GetTotalCallCount(), "the confirmations only: the Awaits needed no status check")
}

func TestTrackerFallsBackToTheStatusCheckAfterTheWait(t *testing.T) {
	tr, mock, clock := newTestTracker(t, TrackerOptions{})
	mock.RegisterResponder(http.MethodGet, mockBaseURL+"/v1/payments/rcv1044", fixtureAsked(t, http.StatusOK, "payments/receive_status_paid.json"))

	result := awaitAsync(context.Background(), tr, KindReceive, "rcv1044")
	clock.waitTimers(1)
	clock.Advance(5*time.Minute - time.Second)
	assert.Zero(t, mock.GetTotalCallCount(), "not before five minutes")
	clock.Advance(time.Second)

	r := <-result
	require.NoError(t, r.err)
	assert.True(t, r.outcome.Succeeded())
	assert.Equal(t, SourceStatusCheck, r.outcome.Source)
	assert.Equal(t, CodeSuccess, r.outcome.Code)
	assert.Equal(t, "rcv_6a2f9e1c", r.outcome.TransactionID)
	assert.Equal(t, "MM2501011200", r.outcome.ExternalTransactionID)
	assert.Equal(t, int64(2500), r.outcome.Amount)
	assert.Equal(t, int64(25), r.outcome.Charges)
	assert.Nil(t, r.outcome.Event)
	assert.Equal(t, 1, mock.GetTotalCallCount())

	// Remembered: a later Await answers at once, without another status check.
	o, err := tr.Await(context.Background(), KindReceive, "rcv1044")
	require.NoError(t, err)
	assert.True(t, o.Succeeded())
	assert.Equal(t, 1, mock.GetTotalCallCount())
}

func TestTrackerTrackStartsTheWait(t *testing.T) {
	tr, mock, clock := newTestTracker(t, TrackerOptions{})
	mock.RegisterResponder(http.MethodGet, mockBaseURL+"/v1/payments/rcv1044", fixtureAsked(t, http.StatusOK, "payments/receive_status_paid.json"))
	require.NoError(t, tr.Track(context.Background(), KindReceive, "rcv1044"))
	clock.Advance(5 * time.Minute)

	o, err := tr.Await(context.Background(), KindReceive, "rcv1044")
	require.NoError(t, err)
	assert.True(t, o.Succeeded())
	assert.Equal(t, SourceStatusCheck, o.Source, "five minutes have passed since Track: no more waiting")
	assert.Empty(t, clock.asked())

	require.NoError(t, tr.Track(context.Background(), KindReceive, "rcv1044"), "tracking a known reference changes nothing")
	var ve *ValidationError
	require.ErrorAs(t, tr.Track(context.Background(), Kind("refund"), "r1"), &ve)
	assert.Equal(t, "kind", ve.Field)
	require.ErrorAs(t, tr.Track(context.Background(), KindSend, ""), &ve)
	assert.Equal(t, "clientReference", ve.Field)
	assert.Equal(t, 1, mock.GetTotalCallCount())
}

func TestTrackerReadsTheTimeAgainWhenWokenEarly(t *testing.T) {
	tr, mock, clock := newTestTracker(t, TrackerOptions{})
	mock.RegisterResponder(http.MethodGet, mockBaseURL+"/v1/payments/rcv1044", fixtureAsked(t, http.StatusOK, "payments/receive_status_paid.json"))
	result := awaitAsync(context.Background(), tr, KindReceive, "rcv1044")
	clock.waitTimers(1)
	clock.wakeAll() // an early wake
	clock.waitTimers(2)
	assert.Zero(t, mock.GetTotalCallCount(), "an early wake is not the end of the wait")
	assert.Equal(t, []time.Duration{5 * time.Minute, 5 * time.Minute}, clock.asked())
	clock.Advance(5 * time.Minute)
	r := <-result
	require.NoError(t, r.err)
	assert.True(t, r.outcome.Succeeded())
}

func TestTrackerPollsWithBackoffUntilAFinalState(t *testing.T) {
	tr, mock, clock := newTestTracker(t, TrackerOptions{PollInterval: 10 * time.Second, MaxPollInterval: 30 * time.Second})
	answers := []string{"payouts/send_status_pending.json", "payouts/send_status_pending.json", "payouts/send_status_pending.json", "payouts/send_status_failed.json"}
	var calls int
	mock.RegisterResponder(http.MethodGet, mockBaseURL+"/v1/payments/refund1040", func(r *http.Request) (*http.Response, error) {
		calls++
		return fixtureAsked(t, http.StatusOK, answers[calls-1])(r)
	})

	result := awaitAsync(context.Background(), tr, KindSend, "refund1040")
	for i := 1; i <= len(answers); i++ {
		clock.waitTimers(i)
		clock.Advance(5 * time.Minute) // past any pause
	}
	r := <-result
	require.NoError(t, r.err)
	assert.True(t, r.outcome.Failed())
	assert.Equal(t, SourceStatusCheck, r.outcome.Source)
	assert.Equal(t, len(answers), calls)

	waits := clock.asked()
	require.Len(t, waits, len(answers))
	assert.Equal(t, 5*time.Minute, waits[0])
	// Pauses double from 10s up to 30s, each spread over its last quarter.
	for i, want := range []time.Duration{10 * time.Second, 20 * time.Second, 30 * time.Second} {
		assert.LessOrEqual(t, waits[i+1], want)
		assert.GreaterOrEqual(t, waits[i+1], want*3/4)
	}
}

func TestTrackerGivesUpWithoutInventingAFailure(t *testing.T) {
	tr, mock, clock := newTestTracker(t, TrackerOptions{PollInterval: time.Minute, MaxPollInterval: time.Minute, GiveUpAfter: 3 * time.Minute})
	mock.RegisterResponder(http.MethodGet, mockBaseURL+"/v1/payments/rcv1044", fixtureAsked(t, http.StatusOK, "payments/receive_status_pending.json"))

	result := awaitAsync(context.Background(), tr, KindReceive, "rcv1044")
	clock.waitTimers(1)
	clock.Advance(5 * time.Minute)
	for i := 2; i <= 4; i++ { // polls at 6, 7 and 8 minutes; 8 is the limit
		clock.waitTimers(i)
		clock.Advance(time.Minute)
	}
	r := <-result
	require.ErrorIs(t, r.err, ErrStillPending)
	require.NotNil(t, r.outcome)
	assert.True(t, r.outcome.IsPending())
	assert.False(t, r.outcome.Failed(), "pending stays pending")
	assert.Equal(t, CodeAccepted, r.outcome.Code)
	assert.Equal(t, SourceStatusCheck, r.outcome.Source)
	assert.Equal(t, "rcv_6a2f9e1c", r.outcome.TransactionID, "what the status check said is kept")
	assert.Equal(t, 4, mock.GetTotalCallCount(), "at 5, 6, 7 and 8 minutes")
}

func TestTrackerAwaitEndsWithItsContext(t *testing.T) {
	tr, mock, clock := newTestTracker(t, TrackerOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	result := awaitAsync(ctx, tr, KindMandate, "mandate2001")
	clock.waitTimers(1)
	cancel()
	r := <-result
	assert.ErrorIs(t, r.err, ErrStillPending)
	assert.ErrorIs(t, r.err, context.Canceled)
	assert.True(t, r.outcome.IsPending())
	assert.Empty(t, r.outcome.Source, "nothing was learned")

	// A second Await keeps the first one's start: the status check comes five minutes
	// after the first Await, not the second.
	mock.RegisterResponder(http.MethodGet, mockBaseURL+"/v1/mandates/preapproval/mandate2001/status", fixtureAsked(t, http.StatusOK, "mandates/status_approved.json"))
	clock.Advance(4 * time.Minute)
	result = awaitAsync(context.Background(), tr, KindMandate, "mandate2001")
	clock.waitTimers(2)
	assert.Equal(t, time.Minute, clock.asked()[1])
	clock.Advance(time.Minute)
	r = <-result
	require.NoError(t, r.err)
	assert.True(t, r.outcome.Succeeded())
	assert.Equal(t, "pre_8c2e5a1f9b", r.outcome.TransactionID)
	assert.Empty(t, r.outcome.Code)
}

func TestTrackerNeverDowngradesASuccess(t *testing.T) {
	var logs bytes.Buffer
	tr, mock, _ := newTestTracker(t, TrackerOptions{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	h := tr.Handler()
	registerStatus(t, mock, "/v1/payments/order1042", "confirm/receive_status_order1042.json")
	success := fixture(t, "events/transaction_success.json")
	late := []byte(`{"ResponseCode":"2001","Message":"failed","Data":{"ClientReference":"order1042","Amount":0,"PaymentDate":"x"}}`)

	assert.Equal(t, http.StatusOK, post(t, h, success).Code)
	assert.Equal(t, http.StatusOK, post(t, h, success).Code) // a duplicate
	assert.Equal(t, http.StatusForbidden, post(t, h, late).Code, "out of order, or forged: the status check says paid")
	o, err := tr.Await(context.Background(), KindReceive, "order1042")
	require.NoError(t, err)
	assert.True(t, o.Succeeded())
	assert.Equal(t, int64(5000), o.Amount)

	// Even a failure the status check confirms later (the service changed its mind)
	// does not undo a success.
	mock.RegisterResponder(http.MethodGet, mockBaseURL+"/v1/payments/order1042", fixtureAsked(t, http.StatusOK, "payments/receive_status_failed.json"))
	assert.Equal(t, http.StatusOK, post(t, h, late).Code)
	o, err = tr.Await(context.Background(), KindReceive, "order1042")
	require.NoError(t, err)
	assert.True(t, o.Succeeded())
	assert.Contains(t, logs.String(), "a later failed does not replace the settled succeeded")

	// A failure followed by a success: the success stands.
	registerStatus(t, mock, "/v1/payments/payout2001", "confirm/send_status_payout2001.json")
	assert.Equal(t, http.StatusOK, post(t, h, fixture(t, "events/send_failed_2001.json")).Code)
	o, err = tr.Await(context.Background(), KindSend, "payout2001")
	require.NoError(t, err)
	assert.True(t, o.Failed())
	registerStatus(t, mock, "/v1/payments/payout2001", "payouts/send_status_success.json")
	recovered := []byte(`{"ResponseCode":"0000","Data":{"ClientReference":"payout2001","AmountDebited":21}}`)
	assert.Equal(t, http.StatusOK, post(t, h, recovered).Code)
	o, err = tr.Await(context.Background(), KindSend, "payout2001")
	require.NoError(t, err)
	assert.True(t, o.Succeeded())

	// A pending callback and other events change nothing.
	calls := mock.GetTotalCallCount()
	require.NoError(t, tr.Deliver(context.Background(), mustParse(t, []byte(`{"ResponseCode":"0001","Message":"pending","Data":{"ClientReference":"order1042","PaymentDate":"x"}}`))))
	require.NoError(t, tr.Deliver(context.Background(), mustParse(t, fixture(t, "events/subscription_trial.json"))))
	o, err = tr.Await(context.Background(), KindReceive, "order1042")
	require.NoError(t, err)
	assert.True(t, o.Succeeded())
	assert.Equal(t, calls, mock.GetTotalCallCount())
}

func TestTrackerAStatusCheckFailureAfterACallbackSuccessChangesNothing(t *testing.T) {
	tr, mock, clock := newTestTracker(t, TrackerOptions{})
	h := tr.Handler()
	var calls atomic.Int32
	mock.RegisterResponder(http.MethodGet, mockBaseURL+"/v1/payments/rcv1045", func(r *http.Request) (*http.Response, error) {
		if calls.Add(1) > 1 {
			return fixtureAsked(t, http.StatusOK, "payments/receive_status_paid.json")(r) // the confirmation
		}
		// The success callback lands, and is confirmed, while the status check is in
		// flight; the status check then answers what it read before.
		ok := `{"ResponseCode":"0000","Message":"success","Data":{"ClientReference":"rcv1045","Amount":25,"PaymentDate":"x"}}`
		assert.Equal(t, http.StatusOK, post(t, h, []byte(ok)).Code)
		return fixtureAsked(t, http.StatusOK, "payments/receive_status_failed.json")(r)
	})
	result := awaitAsync(context.Background(), tr, KindReceive, "rcv1045")
	clock.waitTimers(1)
	clock.Advance(5 * time.Minute)
	r := <-result
	require.NoError(t, r.err)
	assert.True(t, r.outcome.Succeeded())
	assert.Equal(t, SourceCallback, r.outcome.Source)
}

func TestTrackerStatusChecksOfEveryKind(t *testing.T) {
	tests := []struct {
		kind             Kind
		ref, path, fixt  string
		state            EventState
		code             ResponseCode
		transactionID    string
		amount, charges  int64
		externalID       string
		bankAccountQuery bool
	}{
		{KindReceive, "rcv1045", "/v1/payments/rcv1045", "payments/receive_status_failed.json", EventFailed, CodeFailed, "rcv_6a2f9e1d", 2500, 25, "", false},
		{KindSend, "refund1040", "/v1/payments/refund1040", "payouts/send_status_success.json", EventSucceeded, CodeSuccess, "snd_9d3e7a1b", 15000, 150, "VF2501011300", false},
		{KindBankTransfer, "supplier88", "/v1/merchants/2020202/transactions/status", "payouts/bank_status_success.json", EventSucceeded, CodeSuccess, "", 0, 0, "", true},
		{KindDirectDebit, "debit2025feb", "/v1/payments/direct-debit/status/debit2025feb", "mandates/charge_status_paid.json", EventSucceeded, CodeSuccess, "ddc_7b2e9f4a", 4999, 100, "VF2501011600", false},
		{KindMandate, "mandate2001", "/v1/mandates/preapproval/mandate2001/status", "mandates/status_approved.json", EventSucceeded, "", "pre_8c2e5a1f9b", 0, 0, "", false},
	}
	for _, tt := range tests {
		t.Run(string(tt.kind), func(t *testing.T) {
			c, mock := newMockClient(t, WithDisbursementAccount("2020202"))
			mock.RegisterResponder(http.MethodGet, mockBaseURL+tt.path, func(r *http.Request) (*http.Response, error) {
				if tt.bankAccountQuery {
					assert.Equal(t, tt.ref, r.URL.Query().Get("clientReference"))
				}
				return fixtureAsked(t, http.StatusOK, tt.fixt)(r)
			})
			o, err := statusOutcome(context.Background(), c, tt.kind, tt.ref)
			require.NoError(t, err)
			assert.Equal(t, tt.state, o.State)
			assert.Equal(t, tt.code, o.Code)
			assert.Equal(t, SourceStatusCheck, o.Source)
			if tt.transactionID != "" {
				assert.Equal(t, tt.transactionID, o.TransactionID)
				assert.Equal(t, tt.amount, o.Amount)
				assert.Equal(t, tt.charges, o.Charges)
				assert.Equal(t, tt.externalID, o.ExternalTransactionID)
			}
		})
	}
}

func TestTrackerStatusCheckErrors(t *testing.T) {
	tr, mock, clock := newTestTracker(t, TrackerOptions{PollInterval: time.Minute})
	// 404 first (the receive may not be recorded yet), then 500, then the answer.
	answers := []func(*http.Request) (*http.Response, error){
		fixtureResponder(t, http.StatusNotFound, "payments/status_not_found.json"),
		httpmock.NewStringResponder(http.StatusInternalServerError, `{"success":false,"message":"down"}`),
		fixtureAsked(t, http.StatusOK, "payments/receive_status_paid.json"),
	}
	var calls int
	mock.RegisterResponder(http.MethodGet, mockBaseURL+"/v1/payments/rcv1044", func(r *http.Request) (*http.Response, error) {
		calls++
		return answers[calls-1](r)
	})
	result := awaitAsync(context.Background(), tr, KindReceive, "rcv1044")
	for i := 1; i <= 3; i++ {
		clock.waitTimers(i)
		clock.Advance(5 * time.Minute)
	}
	r := <-result
	require.NoError(t, r.err)
	assert.True(t, r.outcome.Succeeded())
	assert.Equal(t, 3, calls)

	// A refusal of the credentials ends the Await: polling again cannot help.
	mock.RegisterResponder(http.MethodGet, mockBaseURL+"/v1/payments/refused1", httpmock.NewStringResponder(http.StatusUnauthorized, `{"success":false,"message":"bad key","code":"4101"}`))
	result = awaitAsync(context.Background(), tr, KindReceive, "refused1")
	clock.waitTimers(4)
	clock.Advance(5 * time.Minute)
	r = <-result
	assert.ErrorIs(t, r.err, ErrUnauthorized)
	assert.True(t, r.outcome.IsPending())

	// A bank transfer without a disbursement account cannot be checked at all.
	c, _ := newMockClient(t)
	clock2 := newFakeClock()
	noAccount := NewTracker(c, TrackerOptions{Clock: clock2})
	result = awaitAsync(context.Background(), noAccount, KindBankTransfer, "supplier88")
	clock2.waitTimers(1)
	clock2.Advance(5 * time.Minute)
	r = <-result
	var ve *ValidationError
	require.ErrorAs(t, r.err, &ve)
	assert.Equal(t, "disbursementAccount", ve.Field)
}

func TestTrackerResolvesAnOutcomeUnknown(t *testing.T) {
	tr, mock, clock := newTestTracker(t, TrackerOptions{})
	mock.RegisterResponder(http.MethodPost, mockBaseURL+"/v1/payments/receive", httpmock.NewStringResponder(http.StatusBadGateway, `{"success":false,"message":"upstream"}`))
	mock.RegisterResponder(http.MethodGet, mockBaseURL+"/v1/payments/rcv1044", fixtureAsked(t, http.StatusOK, "payments/receive_status_paid.json"))

	_, err := tr.client.Payments.Receive(context.Background(), &ReceiveParams{
		Amount: 2500, Phone: "233241234567", Provider: ProviderMTN, Description: "Order 1044", ClientReference: "rcv1044",
	})
	require.ErrorIs(t, err, ErrOutcomeUnknown)
	var unknown *OutcomeUnknownError
	require.ErrorAs(t, err, &unknown)

	result := awaitAsync(context.Background(), tr, KindReceive, unknown.ClientReference)
	clock.waitTimers(1)
	clock.Advance(5 * time.Minute)
	r := <-result
	require.NoError(t, r.err)
	assert.True(t, r.outcome.Succeeded(), "the receive did go through")
	assert.Equal(t, SourceStatusCheck, r.outcome.Source)
	assert.Equal(t, 1, mock.GetCallCountInfo()["POST "+mockBaseURL+"/v1/payments/receive"], "never re-sent")
}

func TestTrackerRefusesBadInputWithoutARequest(t *testing.T) {
	tr, mock, _ := newTestTracker(t, TrackerOptions{})
	var ve *ValidationError
	_, err := tr.Await(context.Background(), Kind("refund"), "ref1")
	require.ErrorAs(t, err, &ve)
	assert.Equal(t, "kind", ve.Field)
	_, err = tr.Await(context.Background(), KindReceive, " ")
	require.ErrorAs(t, err, &ve)
	assert.Equal(t, "clientReference", ve.Field)
	assert.Zero(t, mock.GetTotalCallCount())
}

func TestTrackerHandlerFeedsTheTracker(t *testing.T) {
	tr, mock, clock := newTestTracker(t, TrackerOptions{})
	registerStatus(t, mock, "/v1/payments/debitMarch2025", "404")
	registerStatus(t, mock, "/v1/payments/direct-debit/status/debitMarch2025", "confirm/charge_status_debitMarch2025.json")
	h := tr.Handler(WithDedupe(0))
	result := awaitAsync(context.Background(), tr, KindDirectDebit, "debitMarch2025")
	clock.waitTimers(1)
	assert.Equal(t, http.StatusOK, post(t, h, fixture(t, "events/direct_debit_success.json")).Code)
	r := <-result
	require.NoError(t, r.err)
	assert.True(t, r.outcome.Succeeded())
	assert.Equal(t, int64(5050), r.outcome.Amount)
	assert.Equal(t, http.StatusBadRequest, post(t, h, []byte(`{}`)).Code)
}

func TestTrackerThousandConcurrentAwaits(t *testing.T) {
	tr, mock, clock := newTestTracker(t, TrackerOptions{})
	template := string(fixture(t, "payments/receive_status_paid.json"))
	mock.RegisterRegexpResponder(http.MethodGet, regexp.MustCompile(`/v1/payments/(ref\d+)$`), func(r *http.Request) (*http.Response, error) {
		ref := httpmock.MustGetSubmatch(r, 1)
		body := regexp.MustCompile(`"clientReference": "\w+"`).ReplaceAllString(template, `"clientReference": "`+ref+`"`)
		return httpmock.NewStringResponse(http.StatusOK, body), nil
	})

	const n = 1000
	results := make([]<-chan awaitResult, n)
	for i := range n {
		results[i] = awaitAsync(context.Background(), tr, KindReceive, fmt.Sprintf("ref%d", i))
	}
	clock.waitTimers(n)
	// Half are resolved by callbacks, delivered concurrently; the rest by the status check.
	h := tr.Handler()
	var wg sync.WaitGroup
	for i := 0; i < n; i += 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := fmt.Sprintf(`{"ResponseCode":"0000","Message":"success","Data":{"ClientReference":"ref%d","Amount":25,"PaymentDate":"x"}}`, i)
			assert.Equal(t, http.StatusOK, post(t, h, []byte(body)).Code)
		}()
	}
	wg.Wait()
	clock.Advance(5 * time.Minute)
	for i, ch := range results {
		r := <-ch
		require.NoError(t, r.err)
		require.True(t, r.outcome.Succeeded())
		assert.Equal(t, fmt.Sprintf("ref%d", i), r.outcome.ClientReference)
		want := SourceStatusCheck
		if i%2 == 0 {
			want = SourceCallback
		}
		assert.Equal(t, want, r.outcome.Source, "ref%d", i)
	}
	assert.Equal(t, n, mock.GetTotalCallCount(), "one status check a movement: the callback's confirmation, or the poll")
}

func TestTrackerMemoryIsBounded(t *testing.T) {
	tr, mock, clock := newTestTracker(t, TrackerOptions{MaxTracked: 100, Retention: time.Hour})
	mock.RegisterRegexpResponder(http.MethodGet, regexp.MustCompile(`/v1/payments/\w+$`), fixtureAsked(t, http.StatusOK, "payments/receive_status_paid.json"))
	held := func() int {
		n, _ := tr.Store().(interface{ Held() (int, int) }).Held()
		return n
	}
	has := func(ref string) bool {
		e, err := tr.store.Get(context.Background(), movementKey{Callback: EventKindTransaction, ClientReference: ref})
		require.NoError(t, err)
		return e.Final != nil
	}
	deliver := func(ref string) {
		ev, err := ParseEvent([]byte(`{"ResponseCode":"0000","Message":"success","Data":{"ClientReference":"` + ref + `","PaymentDate":"x"}}`))
		require.NoError(t, err)
		require.NoError(t, tr.Deliver(context.Background(), ev))
	}
	for i := range 1000 {
		deliver(fmt.Sprintf("cap%d", i))
	}
	assert.Equal(t, 100, held(), "capped")
	assert.True(t, has("cap999"), "the newest are kept")
	assert.False(t, has("cap0"), "the oldest are forgotten")

	clock.Advance(time.Hour + time.Second)
	deliver("fresh")
	assert.Equal(t, 1, held(), "resolved entries are forgotten after the retention window")

	// A movement being awaited is never forgotten, however full the store is.
	result := awaitAsync(context.Background(), tr, KindReceive, "awaited")
	clock.waitTimers(1)
	for i := range 500 {
		deliver(fmt.Sprintf("more%d", i))
	}
	deliver("awaited")
	r := <-result
	require.NoError(t, r.err)
	assert.True(t, r.outcome.Succeeded())
	assert.LessOrEqual(t, held(), 100)
}

// A reference no movement can have (too long, a character no client reference takes)
// is refused by Track and Await, and a callback carrying one is dropped: it costs no
// memory and no status check.
func TestTrackerRefusesImpossibleReferences(t *testing.T) {
	tr, mock, _ := newTestTracker(t, TrackerOptions{})
	for _, ref := range []string{strings.Repeat("r", 1<<20), "../v1/payouts", "a b", strings.Repeat("a", 37)} {
		var v *ValidationError
		require.ErrorAs(t, tr.Track(context.Background(), KindSend, ref), &v)
		_, err := tr.Await(context.Background(), KindSend, ref)
		require.ErrorAs(t, err, &v)
		body, err := json.Marshal(map[string]any{"ResponseCode": "0000", "Data": map[string]any{"ClientReference": ref, "AmountDebited": 1}})
		require.NoError(t, err)
		require.ErrorAs(t, tr.Deliver(context.Background(), mustParse(t, body)), &v)
	}
	n, _, err := tr.store.Pending(context.Background())
	require.NoError(t, err)
	assert.Zero(t, n)

	assert.Zero(t, mock.GetTotalCallCount())
}
