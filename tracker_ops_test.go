package billing

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/billingsdk/billing-go/storekit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// payoutCallback is a payout callback for ref with the given response code.
func payoutCallback(code, ref string) []byte {
	return []byte(`{"ResponseCode":"` + code + `","Data":{"AmountDebited":0,"TransactionId":"snd_9d3e7a1b","ClientReference":"` + ref +
		`","Amount":150.00,"Charges":1.50,"RecipientName":null}}`)
}

func auditsOf(t *testing.T, tr *Tracker, kind Kind, ref string) []storekit.AuditRecord {
	t.Helper()
	key, err := keyOf(kind, ref)
	require.NoError(t, err)
	as, err := tr.store.operatorStore().Audits(ctx(), key)
	require.NoError(t, err)
	return as
}

func TestRecheckSettlesByTheNormalRulesAndIsAudited(t *testing.T) {
	tr, mock, clock := newTestTracker(t, TrackerOptions{OnOutcome: func(context.Context, *Outcome) error { return nil }})
	registerStatus(t, mock, "/v1/payments/refund1040", "payouts/send_status_success.json")
	require.NoError(t, tr.TrackAmount(ctx(), KindSend, "refund1040", Money{Amount: 15000}))

	r, err := tr.Recheck(ctx(), "ops@example.com", "", KindSend, "refund1040")
	require.NoError(t, err)
	assert.Equal(t, "pending", r.Before)
	assert.Equal(t, "succeeded", r.After)
	require.NotNil(t, r.Outcome)
	assert.Equal(t, SourceStatusCheck, r.Outcome.Source)
	o := settledNow(t, tr, KindSend, "refund1040")
	require.NotNil(t, o)
	assert.Equal(t, EventSucceeded, o.State)

	as := auditsOf(t, tr, KindSend, "refund1040")
	require.Len(t, as, 1)
	assert.Equal(t, storekit.AuditRecord{Key: storekit.MovementKey{Callback: "payout", ClientReference: "refund1040"}, Action: "recheck",
		Actor: "ops@example.com", At: clock.Now(), Before: "pending", After: "succeeded", OutcomeID: o.ID}, as[0])

	_, err = tr.Recheck(ctx(), "ops@example.com", "", KindSend, "refund1040")
	assert.ErrorIs(t, err, ErrAlreadySettled)
	_, err = tr.Recheck(ctx(), "ops@example.com", "", KindSend, "never1")
	assert.ErrorIs(t, err, ErrNotTracked)
	_, err = tr.Recheck(ctx(), " ", "", KindSend, "refund1040")
	var v *ValidationError
	require.ErrorAs(t, err, &v)
	assert.Equal(t, "actor", v.Field)
	assert.Len(t, auditsOf(t, tr, KindSend, "refund1040"), 1, "a refusal is not audited as an action")
}

func TestRecheckOfAPendingAnswerChangesNothing(t *testing.T) {
	tr, mock, _ := newTestTracker(t, TrackerOptions{})
	registerStatus(t, mock, "/v1/payments/refund1040", "payouts/send_status_pending.json")
	require.NoError(t, tr.Track(ctx(), KindSend, "refund1040"))
	r, err := tr.Recheck(ctx(), "ops", "", KindSend, "refund1040")
	require.NoError(t, err)
	assert.Equal(t, "pending", r.After)
	assert.Nil(t, settledNow(t, tr, KindSend, "refund1040"))
}

func TestRecheckAllIsBoundedAndCountsFirst(t *testing.T) {
	tr, mock, _ := newTestTracker(t, TrackerOptions{})
	registerStatus(t, mock, "/v1/payments/refund1040", "payouts/send_status_success.json")
	registerStatus(t, mock, "/v1/payments/refund1041", "payouts/send_status_pending.json")
	refs := []MovementRef{{KindSend, "refund1040"}, {KindSend, "refund1041"}}
	for _, r := range refs {
		require.NoError(t, tr.Track(ctx(), r.Kind, r.ClientReference))
	}
	dry, err := tr.RecheckAll(ctx(), "ops", "", refs, true)
	require.NoError(t, err)
	assert.Len(t, dry, 2)
	assert.Nil(t, settledNow(t, tr, KindSend, "refund1040"), "a dry run checks nothing")
	assert.Empty(t, auditsOf(t, tr, KindSend, "refund1040"))

	done, err := tr.RecheckAll(ctx(), "ops", "", refs, false)
	require.NoError(t, err)
	assert.Len(t, done, 2)
	assert.NotNil(t, settledNow(t, tr, KindSend, "refund1040"))

	_, err = tr.RecheckAll(ctx(), "ops", "", make([]MovementRef, MaxBulkRecheck+1), true)
	var v *ValidationError
	require.ErrorAs(t, err, &v)
}

// A resolve is a compare-and-set: it settles a pending movement once, with its reason
// audited, and never overrides a settled one. A genuine callback that disagrees later
// is recorded as a contradiction and never reported.
func TestResolveNeverOverridesAndALaterCallbackIsAContradiction(t *testing.T) {
	var reports atomic.Int32
	tr, mock, clock := newTestTracker(t, TrackerOptions{OnOutcome: func(context.Context, *Outcome) error { reports.Add(1); return nil }})
	registerStatus(t, mock, "/v1/payments/refund1040", "payouts/send_status_success.json")
	require.NoError(t, tr.TrackAmount(ctx(), KindSend, "refund1040", Money{Amount: 15000}))

	_, err := tr.Resolve(ctx(), "ops", "", KindSend, "refund1040", EventFailed)
	var v *ValidationError
	require.ErrorAs(t, err, &v, "a resolve needs a reason")
	assert.Equal(t, "reason", v.Field)
	_, err = tr.Resolve(ctx(), "ops", "lost", KindSend, "refund1040", EventPending)
	require.ErrorAs(t, err, &v, "to a final state only")

	r, err := tr.Resolve(ctx(), "ops", "the service lost it after a restart", KindSend, "refund1040", EventFailed)
	require.NoError(t, err)
	assert.Equal(t, "pending", r.Before)
	assert.Equal(t, "failed", r.After)
	o := settledNow(t, tr, KindSend, "refund1040")
	require.NotNil(t, o)
	assert.Equal(t, SourceOperator, o.Source)
	assert.Equal(t, EventFailed, o.State)

	_, err = tr.Resolve(ctx(), "ops", "again", KindSend, "refund1040", EventSucceeded)
	assert.ErrorIs(t, err, ErrAlreadySettled)

	clock.Advance(time.Minute)
	w := post(t, tr.Handler(), payoutCallback("0000", "refund1040"))
	assert.Less(t, w.Code, 500)
	o = settledNow(t, tr, KindSend, "refund1040")
	assert.Equal(t, EventFailed, o.State, "the operator's outcome stands")
	key, _ := keyOf(KindSend, "refund1040")
	c, err := tr.kitInspector().Contradiction(ctx(), key.kit())
	require.NoError(t, err)
	require.NotNil(t, c, "the disagreeing callback is recorded")
	assert.Equal(t, "succeeded", c.Claimed)
	r2 := reconcileAll(t, tr, clock)
	require.Len(t, r2.Disagreed, 1)

	as := auditsOf(t, tr, KindSend, "refund1040")
	require.Len(t, as, 1)
	assert.Equal(t, "the service lost it after a restart", as[0].Reason)
	assert.Equal(t, o.ID, as[0].OutcomeID)
}

// sharedStoreTracker is a Tracker on store with the mock and clock of another test
// tracker's client, reporting to onOutcome.
func sharedStoreTrackers(t *testing.T, onOutcome func(context.Context, *Outcome) error) (a, b *Tracker, clock *fakeClock, mockReg func(path, fixture string)) {
	store := NewMemoryStore(0)
	a, mock, clock := newTestTracker(t, TrackerOptions{Store: store, Owner: "a", OnOutcome: onOutcome})
	b = NewTracker(a.client, TrackerOptions{Store: store, Owner: "b", Clock: clock, OnOutcome: onOutcome, CallbackURL: "https://shop.example.com/callbacks"})
	return a, b, clock, func(path, fixture string) { registerStatus(t, mock, path, fixture) }
}

// Two instances sharing a store: one resolves a movement by hand while a late genuine
// callback lands on the other. Whichever is first, the movement is reported once;
// when the resolve is first, the callback is one recorded contradiction.
func TestResolveRacesALateCallbackOnTwoInstances(t *testing.T) {
	resolvedFirst := 0
	defer func() { t.Logf("the resolve came first in %d of 20 rounds", resolvedFirst) }()
	for i := range 20 {
		var mu sync.Mutex
		var reported []string
		a, b, clock, register := sharedStoreTrackers(t, func(_ context.Context, o *Outcome) error {
			mu.Lock()
			defer mu.Unlock()
			reported = append(reported, o.ID)
			return nil
		})
		register("/v1/payments/refund1040", "payouts/send_status_success.json")
		require.NoError(t, a.TrackAmount(ctx(), KindSend, "refund1040", Money{Amount: 15000}))

		var wg sync.WaitGroup
		var resolveErr error
		var code int
		wg.Add(2)
		go func() {
			defer wg.Done()
			_, resolveErr = a.Resolve(ctx(), "ops", "service has no record", KindSend, "refund1040", EventFailed)
		}()
		go func() { defer wg.Done(); code = post(t, b.Handler(), payoutCallback("0000", "refund1040")).Code }()
		wg.Wait()
		require.Less(t, code, 500, "round %d", i)

		runCtx, stop := context.WithCancel(ctx())
		ran := make(chan error, 2)
		go func() { ran <- a.Run(runCtx) }()
		go func() { ran <- b.Run(runCtx) }()
		require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(reported) > 0 }, 5*time.Second, time.Millisecond)
		stop()
		<-ran
		<-ran
		clock.Advance(time.Hour)
		left, err := a.store.ClaimUnreported(ctx(), "probe", clock.Now(), clock.Now().Add(time.Minute), 10)
		require.NoError(t, err)
		assert.Empty(t, left, "nothing is left to report")
		mu.Lock()
		assert.Len(t, reported, 1, "round %d: reported once", i)
		mu.Unlock()

		key, _ := keyOf(KindSend, "refund1040")
		c, err := a.kitInspector().Contradiction(ctx(), key.kit())
		require.NoError(t, err)
		o := settledNow(t, a, KindSend, "refund1040")
		if resolveErr == nil {
			resolvedFirst++
			assert.Equal(t, SourceOperator, o.Source)
			require.NotNil(t, c, "round %d: the late callback is a recorded contradiction", i)
			assert.Equal(t, 1, c.Count)
		} else {
			require.ErrorIs(t, resolveErr, ErrAlreadySettled)
			assert.Equal(t, EventSucceeded, o.State)
			assert.Nil(t, c)
		}
	}
}

func TestReportAgainReportsTheSameOutcomeOnceMore(t *testing.T) {
	var mu sync.Mutex
	var ids []string
	tr, mock, clock := newTestTracker(t, TrackerOptions{OnOutcome: func(_ context.Context, o *Outcome) error {
		mu.Lock()
		defer mu.Unlock()
		ids = append(ids, o.ID)
		return nil
	}})
	registerStatus(t, mock, "/v1/payments/refund1040", "payouts/send_status_success.json")
	require.NoError(t, tr.Track(ctx(), KindSend, "refund1040"))
	_, err := tr.ReportAgain(ctx(), "ops", "", KindSend, "refund1040")
	assert.ErrorIs(t, err, ErrNotSettled, "nothing to report yet")
	_, err = tr.Recheck(ctx(), "ops", "", KindSend, "refund1040")
	require.NoError(t, err)
	_, err = tr.ReportAgain(ctx(), "ops", "", KindSend, "refund1040")
	assert.ErrorIs(t, err, ErrNotSettled, "not reported yet: Run will")

	runOnce := func(want int) {
		runCtx, stop := context.WithCancel(ctx())
		done := make(chan error, 1)
		go func() { done <- tr.Run(runCtx) }()
		require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(ids) == want }, 5*time.Second, time.Millisecond)
		stop()
		<-done
	}
	runOnce(1)
	require.Eventually(t, func() bool {
		e, _ := tr.store.Get(ctx(), movementKey{EventKindPayout, "refund1040"})
		return !e.Final.ReportedAt.IsZero()
	}, 5*time.Second, time.Millisecond)
	clock.Advance(time.Second)
	r, err := tr.ReportAgain(ctx(), "ops", "the order system lost it", KindSend, "refund1040")
	require.NoError(t, err)
	assert.Equal(t, "succeeded", r.After)
	runOnce(2)
	mu.Lock()
	assert.Equal(t, ids[0], ids[1], "under the same Outcome.ID")
	mu.Unlock()
	as := auditsOf(t, tr, KindSend, "refund1040")
	require.Len(t, as, 2)
	assert.Equal(t, "report_again", as[1].Action)
}

func TestReleaseForgetsOnlyAMovementNeverSent(t *testing.T) {
	tr, mock, _ := newTestTracker(t, TrackerOptions{})
	registerStatus(t, mock, "/v1/payments/refund1041", "payouts/send_status_success.json")
	require.NoError(t, tr.Track(ctx(), KindSend, "refund1040"))
	require.NoError(t, tr.Track(ctx(), KindSend, "refund1041"))

	_, err := tr.Release(ctx(), "ops", "", KindSend, "refund1040")
	var v *ValidationError
	require.ErrorAs(t, err, &v, "a release needs a reason")
	r, err := tr.Release(ctx(), "ops", "the send failed before connecting", KindSend, "refund1040")
	require.NoError(t, err)
	assert.Equal(t, "released", r.After)
	e, err := tr.store.Get(ctx(), movementKey{EventKindPayout, "refund1040"})
	require.NoError(t, err)
	assert.False(t, e.Tracked)
	as := auditsOf(t, tr, KindSend, "refund1040")
	require.Len(t, as, 1, "the audit outlives the movement")
	assert.Equal(t, "release", as[0].Action)

	_, err = tr.Recheck(ctx(), "ops", "", KindSend, "refund1041")
	require.NoError(t, err)
	_, err = tr.Release(ctx(), "ops", "mistake", KindSend, "refund1041")
	assert.ErrorIs(t, err, ErrAlreadySettled)
}

// plainStore is a Store with nothing but the interface's methods.
type plainStore struct{ storekit.Store }

func TestActionsNeedAStoreThatAudits(t *testing.T) {
	tr, _, _ := newTestTracker(t, TrackerOptions{Store: plainStore{NewMemoryStore(0)}})
	require.NoError(t, tr.Track(ctx(), KindSend, "refund1040"))
	for name, act := range map[string]func() error{
		"recheck":      func() error { _, err := tr.Recheck(ctx(), "ops", "r", KindSend, "refund1040"); return err },
		"resolve":      func() error { _, err := tr.Resolve(ctx(), "ops", "r", KindSend, "refund1040", EventFailed); return err },
		"release":      func() error { _, err := tr.Release(ctx(), "ops", "r", KindSend, "refund1040"); return err },
		"report again": func() error { _, err := tr.ReportAgain(ctx(), "ops", "r", KindSend, "refund1040"); return err },
	} {
		assert.True(t, errors.Is(act(), ErrActionUnsupported), name)
	}
	_ = http.StatusOK
}

// kitInspector is the store under the Tracker's bounds, as an Inspector.
func (t *Tracker) kitInspector() storekit.Inspector {
	return unbounded(t.kit).(storekit.Inspector)
}

// actionRecorder is a TrackerObserver that hears of operators' actions.
type actionRecorder struct {
	mu      sync.Mutex
	actions []ActionResult
	errs    []error
}

func (*actionRecorder) CallbackReceived(context.Context, Event)                      {}
func (*actionRecorder) StatusChecked(context.Context, Kind, string, *Outcome, error) {}
func (*actionRecorder) OutcomeSettled(context.Context, *Outcome)                     {}
func (a *actionRecorder) OperatorActed(_ context.Context, r ActionResult, err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.actions, a.errs = append(a.actions, r), append(a.errs, err)
}

func TestAnObserverHearsOfEveryActionAndRefusal(t *testing.T) {
	obs := &actionRecorder{}
	tr, _, _ := newTestTracker(t, TrackerOptions{Observer: obs})
	require.NoError(t, tr.Track(ctx(), KindSend, "refund1040"))
	_, err := tr.Resolve(ctx(), "ops", "lost", KindSend, "refund1040", EventFailed)
	require.NoError(t, err)
	_, err = tr.Release(ctx(), "ops", "mistake", KindSend, "refund1040")
	require.ErrorIs(t, err, ErrAlreadySettled)
	require.Len(t, obs.actions, 2)
	assert.Equal(t, ActionResolve, obs.actions[0].Action)
	assert.NoError(t, obs.errs[0])
	assert.Equal(t, ActionRelease, obs.actions[1].Action)
	assert.ErrorIs(t, obs.errs[1], ErrAlreadySettled)
}

func TestReleaseRefusesAMovementWithACallback(t *testing.T) {
	tr, _, clock := newTestTracker(t, TrackerOptions{})
	require.NoError(t, tr.Track(ctx(), KindSend, "refund1040"))
	key := movementKey{EventKindPayout, "refund1040"}
	_, err := tr.store.BeginCallback(ctx(), callbackRecord{Key: key, DedupeKey: "d", Body: payoutCallback("0000", "refund1040"), At: clock.Now()}, "o", clock.Now().Add(time.Minute))
	require.NoError(t, err)
	_, err = tr.Release(ctx(), "ops", "never sent", KindSend, "refund1040")
	require.ErrorIs(t, err, ErrNotReleasable, "a callback came: its request left")
	e, err := tr.store.Get(ctx(), key)
	require.NoError(t, err)
	assert.True(t, e.Tracked, "it stays tracked")
	assert.Empty(t, auditsOf(t, tr, KindSend, "refund1040"), "a refusal is not audited as an action")
}

// Every action on a movement in every state an operator meets it in: it is taken, or
// refused with its typed error, and only a taken action is audited, once.
func TestEveryActionInEveryState(t *testing.T) {
	type setup func(t *testing.T, tr *Tracker, clock *fakeClock)
	settle := func(reported bool) setup {
		return func(t *testing.T, tr *Tracker, clock *fakeClock) {
			require.NoError(t, tr.Track(ctx(), KindSend, "refund1040"))
			s, err := tr.settle(ctx(), movementKey{EventKindPayout, "refund1040"},
				Outcome{Kind: KindSend, ClientReference: "refund1040", State: EventSucceeded, Source: SourceStatusCheck, At: clock.Now()}, nil)
			require.NoError(t, err)
			if reported {
				require.NoError(t, tr.store.MarkReported(ctx(), s.ID, clock.Now()))
			}
		}
	}
	states := map[string]setup{
		"not tracked": func(*testing.T, *Tracker, *fakeClock) {},
		"untracked money": func(t *testing.T, tr *Tracker, clock *fakeClock) {
			_, err := tr.settle(ctx(), movementKey{EventKindPayout, "refund1040"},
				Outcome{Kind: KindSend, ClientReference: "refund1040", State: EventSucceeded, Source: SourceStatusCheck, At: clock.Now()}, nil)
			require.NoError(t, err)
		},
		"pending": func(t *testing.T, tr *Tracker, _ *fakeClock) {
			require.NoError(t, tr.Track(ctx(), KindSend, "refund1040"))
		},
		"overdue": func(t *testing.T, tr *Tracker, clock *fakeClock) {
			require.NoError(t, tr.Track(ctx(), KindSend, "refund1040"))
			clock.Advance(10 * time.Minute)
		},
		"settled, unreported": settle(false),
		"settled, reported":   settle(true),
	}
	// want is the error each action meets in each state; nil when it is taken.
	want := map[string]map[Action]error{
		"not tracked":         {ActionRecheck: ErrNotTracked, ActionReportAgain: ErrNotTracked, ActionResolve: ErrNotTracked, ActionRelease: ErrNotTracked},
		"untracked money":     {ActionRecheck: ErrNotTracked, ActionReportAgain: ErrNotTracked, ActionResolve: ErrNotTracked, ActionRelease: ErrNotTracked},
		"pending":             {ActionRecheck: nil, ActionReportAgain: ErrNotSettled, ActionResolve: nil, ActionRelease: nil},
		"overdue":             {ActionRecheck: nil, ActionReportAgain: ErrNotSettled, ActionResolve: nil, ActionRelease: nil},
		"settled, unreported": {ActionRecheck: ErrAlreadySettled, ActionReportAgain: ErrNotSettled, ActionResolve: ErrAlreadySettled, ActionRelease: ErrAlreadySettled},
		"settled, reported":   {ActionRecheck: ErrAlreadySettled, ActionReportAgain: nil, ActionResolve: ErrAlreadySettled, ActionRelease: ErrAlreadySettled},
	}
	act := map[Action]func(tr *Tracker) (ActionResult, error){
		ActionRecheck: func(tr *Tracker) (ActionResult, error) {
			return tr.Recheck(ctx(), "ops", "why", KindSend, "refund1040")
		},
		ActionReportAgain: func(tr *Tracker) (ActionResult, error) {
			return tr.ReportAgain(ctx(), "ops", "why", KindSend, "refund1040")
		},
		ActionResolve: func(tr *Tracker) (ActionResult, error) {
			return tr.Resolve(ctx(), "ops", "why", KindSend, "refund1040", EventFailed)
		},
		ActionRelease: func(tr *Tracker) (ActionResult, error) {
			return tr.Release(ctx(), "ops", "why", KindSend, "refund1040")
		},
	}
	for name, prepare := range states {
		for action, do := range act {
			t.Run(name+"/"+string(action), func(t *testing.T) {
				tr, mock, clock := newTestTracker(t, TrackerOptions{OnOutcome: func(context.Context, *Outcome) error { return nil }})
				registerStatus(t, mock, "/v1/payments/refund1040", "payouts/send_status_pending.json")
				prepare(t, tr, clock)
				_, err := do(tr)
				audits := auditsOf(t, tr, KindSend, "refund1040")
				if w := want[name][action]; w != nil {
					require.ErrorIs(t, err, w)
					assert.Empty(t, audits, "a refusal is not audited as an action")
					return
				}
				require.NoError(t, err)
				require.Len(t, audits, 1)
				assert.Equal(t, string(action), audits[0].Action)
				assert.Equal(t, "why", audits[0].Reason)
			})
		}
	}
}
