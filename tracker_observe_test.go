package billing

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// trackerRecorder writes each TrackerObserver event as a line. While an outcome settles
// it reads the Tracker's Stats, which must not deadlock.
type trackerRecorder struct {
	mu      sync.Mutex
	events  []string
	tracker *Tracker
}

func (r *trackerRecorder) add(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, fmt.Sprintf(format, args...))
}

func (r *trackerRecorder) CallbackReceived(_ context.Context, ev Event) {
	r.add("callback %s %s %s", ev.Kind(), ev.Reference(), ev.State())
}

func (r *trackerRecorder) StatusChecked(_ context.Context, kind Kind, ref string, o *Outcome, err error) {
	if err != nil {
		r.add("status check %s %s error", kind, ref)
		return
	}
	r.add("status check %s %s %s", kind, ref, o.State)
}

func (r *trackerRecorder) OutcomeSettled(_ context.Context, o *Outcome) {
	r.add("settled %q %s %s by %s; pending %d", o.Kind, o.ClientReference, o.State, o.Source, r.stats().Pending)
}

func (r *trackerRecorder) stats() TrackerStats {
	s, err := r.tracker.Stats(context.Background())
	if err != nil {
		panic(err)
	}
	return s
}

func (r *trackerRecorder) recorded() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.events...)
}

func TestTrackerObserverIsToldOfCallbacksStatusChecksAndSettlements(t *testing.T) {
	rec := &trackerRecorder{}
	tr, mock, clock := newTestTracker(t, TrackerOptions{Observer: rec, PollInterval: 10 * time.Second})
	rec.tracker = tr
	answers := []string{"payouts/send_status_pending.json", "payouts/send_status_failed.json"}
	var calls int
	mock.RegisterResponder(http.MethodGet, mockBaseURL+"/v1/payments/refund1040", func(r *http.Request) (*http.Response, error) {
		answer := answers[min(calls, len(answers)-1)]
		calls++
		return fixtureAsked(t, http.StatusOK, answer)(r)
	})
	mock.RegisterResponder(http.MethodGet, mockBaseURL+"/v1/payments/rcv_missing", fixtureResponder(t, http.StatusUnauthorized, "errors/unauthorized.json"))

	// A callback settles a movement before anyone awaits it; its duplicate is deduplicated.
	registerStatus(t, mock, "/v1/payments/order1042", "confirm/receive_status_order1042.json")
	require.Equal(t, http.StatusOK, post(t, tr.Handler(), fixture(t, "events/transaction_success.json")).Code)
	require.Equal(t, http.StatusOK, post(t, tr.Handler(), fixture(t, "events/transaction_success.json")).Code)
	// No callback: the status check says pending, then failed.
	result := awaitAsync(context.Background(), tr, KindSend, "refund1040")
	clock.waitTimers(1)
	clock.Advance(5 * time.Minute)
	clock.waitTimers(2)
	clock.Advance(10 * time.Second)
	r := <-result
	require.NoError(t, r.err)
	require.True(t, r.outcome.Failed())
	// A status check the service refuses.
	require.NoError(t, tr.Track(context.Background(), KindReceive, "rcv_missing"))
	clock.Advance(5 * time.Minute)
	_, err := tr.Await(context.Background(), KindReceive, "rcv_missing")
	require.ErrorIs(t, err, ErrUnauthorized)

	assert.Equal(t, []string{
		`callback transaction order1042 succeeded`,
		`settled "receive" order1042 succeeded by callback; pending 0`, // the kind the status check confirmed
		// The duplicate is answered by the handler's dedupe: it reaches no Tracker.
		`status check send refund1040 pending`,
		`status check send refund1040 failed`,
		`settled "send" refund1040 failed by status_check; pending 0`,
		`status check receive rcv_missing error`,
	}, rec.recorded())
}

func TestTrackerStatsCountPendingMovementsAndTheAgeOfTheOldest(t *testing.T) {
	tr, mock, clock := newTestTracker(t, TrackerOptions{})
	registerStatus(t, mock, "/v1/payments/order1042", "confirm/receive_status_order1042.json")
	registerStatus(t, mock, "/v1/payments/payout2001", "confirm/send_status_payout2001.json")
	assert.Equal(t, TrackerStats{}, stats(t, tr))

	require.NoError(t, tr.Track(context.Background(), KindReceive, "order1042"))
	clock.Advance(3 * time.Minute)
	require.NoError(t, tr.Track(context.Background(), KindSend, "payout2001"))
	clock.Advance(time.Minute)
	assert.Equal(t, TrackerStats{Pending: 2, OldestPendingAge: 4 * time.Minute}, stats(t, tr))

	post(t, tr.Handler(), fixture(t, "events/transaction_success.json")) // settles order1042
	assert.Equal(t, TrackerStats{Pending: 1, OldestPendingAge: time.Minute}, stats(t, tr))
	post(t, tr.Handler(), fixture(t, "events/send_failed_2001.json")) // settles payout2001
	assert.Equal(t, TrackerStats{}, stats(t, tr))
}

func BenchmarkTrackerStats(b *testing.B) {
	c, err := NewClient(WithBaseURL("https://api.example.com"), WithClientCredentials("id", "secret"))
	require.NoError(b, err)
	tr := NewTracker(c, TrackerOptions{Clock: newFakeClock()})
	for i := range DefaultMaxTracked {
		require.NoError(b, tr.Track(context.Background(), KindReceive, fmt.Sprintf("order%06d", i)))
	}
	b.ReportAllocs()
	for b.Loop() {
		if s, err := tr.Stats(context.Background()); err != nil || s.Pending != DefaultMaxTracked {
			b.Fatal("lost a movement")
		}
	}
}

func stats(t *testing.T, tr *Tracker) TrackerStats {
	t.Helper()
	s, err := tr.Stats(context.Background())
	require.NoError(t, err)
	return s
}
