package billing

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/billingsdk/billing-go/storekit"
	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Each status check that leaves a movement unsettled, and each failed report, is kept
// with what it answered or why it failed, scrubbed, for the operator's timeline: a
// pending answer, a check that got no answer, the check that settles (the settlement
// itself), then an OnOutcome that failed with a customer's email in its error.
func TestEveryUnsuccessfulTryIsKeptForTheOperator(t *testing.T) {
	onOutcome := errors.New("ledger refused the payout for ama.mensah@example.com")
	tr, mock, clock := newTestTracker(t, TrackerOptions{OnOutcome: func(context.Context, *Outcome) error { return onOutcome }})
	require.NoError(t, tr.Track(ctx(), KindSend, "refund1040"))
	key, err := keyOf(KindSend, "refund1040")
	require.NoError(t, err)
	check := func() {
		t.Helper()
		clock.Advance(time.Hour)
		due, err := tr.store.ClaimDue(ctx(), tr.opts.Owner, clock.Now(), clock.Now().Add(time.Minute), runBatch)
		require.NoError(t, err)
		require.Len(t, due, 1)
		tr.check(ctx(), due[0], nil, 0)
	}
	registerStatus(t, mock, "/v1/payments/refund1040", "payouts/send_status_pending.json")
	check()
	firstAt := clock.Now()
	mock.RegisterResponder(http.MethodGet, mockBaseURL+"/v1/payments/refund1040", httpmock.NewStringResponder(http.StatusBadGateway, "upstream gone"))
	check()
	registerStatus(t, mock, "/v1/payments/refund1040", "payouts/send_status_success.json")
	check()
	require.NotNil(t, settledNow(t, tr, KindSend, "refund1040"))

	now := clock.Now()
	ss, err := tr.store.ClaimUnreported(ctx(), tr.opts.Owner, now, now.Add(time.Minute), 10)
	require.NoError(t, err)
	require.Len(t, ss, 1)
	require.True(t, tr.report(ctx(), newReporter(1, time.Minute), &ss[0], &reportClaim{until: now.Add(time.Minute), lost: make(chan struct{})},
		func() { t.Error("a call that returned was given up on") }))

	in, err := tr.Inspect(ctx(), key.kit())
	require.NoError(t, err)
	require.Len(t, in.Attempts, 3, "%+v", in.Attempts)
	checked, noAnswer, report := in.Attempts[0], in.Attempts[1], in.Attempts[2]
	assert.Equal(t, storekit.Attempt{Key: key.kit(), What: storekit.AttemptStatusCheck, N: 1, At: firstAt, Owner: tr.opts.Owner, Answer: "pending"}, checked)
	assert.Equal(t, 2, noAnswer.N)
	assert.Empty(t, noAnswer.Answer)
	assert.Contains(t, noAnswer.Error, "502")
	assert.Equal(t, storekit.AttemptReport, report.What)
	assert.Equal(t, 1, report.N)
	assert.Contains(t, report.Error, "ledger refused the payout")
	assert.NotContains(t, report.Error, "ama.mensah", "a report's error is kept scrubbed")
	assert.Equal(t, 2, in.Entry.Movement.Checks)
	assert.Equal(t, 1, in.Entry.Final.ReportAttempts)
}

// A store without the log keeps the counts, and the Tracker works on it as before.
func TestATrackerOnAStoreWithoutTheAttemptLogKeepsCounts(t *testing.T) {
	store := countsOnly{NewMemoryStore(0)}
	_, isLog := storekit.Store(store).(storekit.AttemptLog)
	require.False(t, isLog)
	tr, mock, clock := newTestTracker(t, TrackerOptions{Store: store})
	require.NoError(t, tr.Track(ctx(), KindSend, "refund1040"))
	registerStatus(t, mock, "/v1/payments/refund1040", "payouts/send_status_pending.json")
	clock.Advance(time.Hour)
	due, err := tr.store.ClaimDue(ctx(), tr.opts.Owner, clock.Now(), clock.Now().Add(time.Minute), runBatch)
	require.NoError(t, err)
	require.Len(t, due, 1)
	tr.check(ctx(), due[0], nil, 0)
	e, err := store.Get(ctx(), due[0].Key().kit())
	require.NoError(t, err)
	assert.Equal(t, 1, e.Movement.Checks)
	in, err := tr.Inspect(ctx(), due[0].Key().kit())
	require.NoError(t, err)
	assert.Empty(t, in.Attempts)
}

// countsOnly is a store that is no storekit.AttemptLog.
type countsOnly struct{ storekit.Store }

// The error kept is cut to its bound whatever the answer's size.
func TestAKeptErrorIsBounded(t *testing.T) {
	got := storekit.TrimAttemptError(strings.Repeat("ü", storekit.MaxAttemptError))
	assert.LessOrEqual(t, len(got), storekit.MaxAttemptError)
	assert.True(t, strings.HasSuffix(got, "…"))
	assert.True(t, strings.HasPrefix(strings.Repeat("ü", storekit.MaxAttemptError), strings.TrimSuffix(got, "…")))
}
