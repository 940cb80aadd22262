package billing

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/billingsdk/billing-go/internal/goroutines"
	"github.com/billingsdk/billing-go/storekit"
)

// fakeDeadlines makes the deadlines of store and OnOutcome calls on a time of its own,
// which moves only when the test fires the next deadline: no test waits for real time.
type fakeDeadlines struct {
	mu   sync.Mutex
	cond *sync.Cond
	now  time.Duration
	live []fakeDeadline
}

type fakeDeadline struct {
	at     time.Duration
	ctx    context.Context
	cancel context.CancelFunc
}

func newFakeDeadlines() *fakeDeadlines {
	f := &fakeDeadlines{}
	f.cond = sync.NewCond(&f.mu)
	return f
}

// deadline is a deadlineFunc on f's time.
func (f *fakeDeadlines) deadline(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	cctx, cancel := context.WithCancel(ctx)
	f.mu.Lock()
	f.live = append(f.live, fakeDeadline{at: f.now + d, ctx: cctx, cancel: cancel})
	f.cond.Broadcast()
	f.mu.Unlock()
	return cctx, cancel
}

// elapsed is f's time.
func (f *fakeDeadlines) elapsed() time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// pruneLocked forgets the deadlines whose context ended otherwise.
func (f *fakeDeadlines) pruneLocked() {
	keep := f.live[:0]
	for _, d := range f.live {
		if d.ctx.Err() == nil {
			keep = append(keep, d)
		}
	}
	f.live = keep
}

// waitLive waits until n deadlines are pending.
func (f *fakeDeadlines) waitLive(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for f.pruneLocked(); len(f.live) < n; f.pruneLocked() {
		waitCond(f.cond) // a context cancelled elsewhere is noticed at the next wake
	}
}

// fire waits until n deadlines are pending, moves the time to the earliest and ends
// every deadline due then.
func (f *fakeDeadlines) fire(n int) {
	f.waitLive(n)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pruneLocked()
	next := f.live[0].at
	for _, d := range f.live {
		next = min(next, d.at)
	}
	f.now = max(f.now, next)
	for _, d := range f.live {
		if d.at <= f.now {
			d.cancel()
		}
	}
	f.pruneLocked()
}

// fireUntil ends each deadline as soon as it is pending, moving the time to it, until
// stop is closed; a safety net fails the test when stop is not closed within 10 seconds.
func (f *fakeDeadlines) fireUntil(t *testing.T, stop <-chan struct{}) {
	t.Helper()
	limit := time.Now().Add(10 * time.Second)
	f.mu.Lock()
	defer f.mu.Unlock()
	for {
		select {
		case <-stop:
			return
		default:
		}
		if time.Now().After(limit) {
			t.Error("not done within 10 seconds of firing every deadline as it came")
			return
		}
		if f.pruneLocked(); len(f.live) == 0 {
			waitCond(f.cond)
			continue
		}
		for _, d := range f.live {
			f.now = max(f.now, d.at)
			d.cancel()
		}
	}
}

// waitCond waits on c, woken at the latest after a millisecond, so that a deadline
// whose context a caller cancelled is pruned.
func waitCond(c *sync.Cond) {
	t := time.AfterFunc(time.Millisecond, c.Broadcast)
	c.Wait()
	t.Stop()
}

// hangStore is a Store whose every call blocks, deaf to its context, until the test
// ends, as a call on a connection whose other end is gone may. A store of another
// kind answers through open until calls start hanging.
type hangStore struct {
	open    storekit.Store
	hanging atomic.Bool
	release chan struct{}
	calls   chan string // the name of every call that hangs
	// heeds: a hanging call returns when its context ends instead, having sent the
	// goroutine it ran on to goroutines (a heedingStore).
	heeds      bool
	goroutines chan string
}

// heedingStore is a hangStore whose calls heed their context, and say so.
type heedingStore struct{ *hangStore }

func newHeedingStore(t *testing.T, open storekit.Store) heedingStore {
	h := newHangStore(t, open)
	h.heeds, h.goroutines = true, make(chan string, 1000)
	return heedingStore{h}
}

func (heedingStore) HeedsContext() bool { return true }

func newHangStore(t *testing.T, open storekit.Store) *hangStore {
	h := &hangStore{open: open, release: make(chan struct{}), calls: make(chan string, 1000)}
	t.Cleanup(func() { close(h.release) })
	return h
}

func (h *hangStore) hang(ctx context.Context, name string) bool {
	if !h.hanging.Load() {
		return false
	}
	h.calls <- name
	if h.heeds {
		h.goroutines <- goroutines.ID()
		<-ctx.Done()
		return true
	}
	<-h.release
	return true
}

var errReleased = errors.New("released at the end of the test")

func (h *hangStore) Track(ctx context.Context, m storekit.Movement) (storekit.Movement, bool, error) {
	if h.hang(ctx, "Track") {
		return storekit.Movement{}, false, errReleased
	}
	return h.open.Track(ctx, m)
}

func (h *hangStore) Get(ctx context.Context, key storekit.MovementKey) (storekit.Entry, error) {
	if h.hang(ctx, "Get") {
		return storekit.Entry{}, errReleased
	}
	return h.open.Get(ctx, key)
}

func (h *hangStore) Settle(ctx context.Context, key storekit.MovementKey, o storekit.Outcome, body []byte) (storekit.Settlement, bool, error) {
	if h.hang(ctx, "Settle") {
		return storekit.Settlement{}, false, errReleased
	}
	return h.open.Settle(ctx, key, o, body)
}

func (h *hangStore) BeginCallback(ctx context.Context, c storekit.Callback, owner string, leaseUntil time.Time) (storekit.CallbackClaim, error) {
	if h.hang(ctx, "BeginCallback") {
		return "", errReleased
	}
	return h.open.BeginCallback(ctx, c, owner, leaseUntil)
}

func (h *hangStore) FinishCallback(ctx context.Context, dedupeKey, owner string, handled bool, now time.Time) error {
	if h.hang(ctx, "FinishCallback") {
		return errReleased
	}
	return h.open.FinishCallback(ctx, dedupeKey, owner, handled, now)
}

func (h *hangStore) Callbacks(ctx context.Context, key storekit.MovementKey) ([]storekit.Callback, error) {
	if h.hang(ctx, "Callbacks") {
		return nil, errReleased
	}
	return h.open.Callbacks(ctx, key)
}

func (h *hangStore) ClaimDue(ctx context.Context, owner string, now, leaseUntil time.Time, limit int) ([]storekit.Movement, error) {
	if h.hang(ctx, "ClaimDue") {
		return nil, errReleased
	}
	return h.open.ClaimDue(ctx, owner, now, leaseUntil, limit)
}

func (h *hangStore) RenewClaim(ctx context.Context, key storekit.MovementKey, owner string, leaseUntil time.Time) error {
	if h.hang(ctx, "RenewClaim") {
		return errReleased
	}
	return h.open.RenewClaim(ctx, key, owner, leaseUntil)
}

func (h *hangStore) Reschedule(ctx context.Context, key storekit.MovementKey, owner string, next time.Time) error {
	if h.hang(ctx, "Reschedule") {
		return errReleased
	}
	return h.open.Reschedule(ctx, key, owner, next)
}

func (h *hangStore) ReleaseClaim(ctx context.Context, key storekit.MovementKey, owner string) error {
	if h.hang(ctx, "ReleaseClaim") {
		return errReleased
	}
	return h.open.ReleaseClaim(ctx, key, owner)
}

func (h *hangStore) ClaimUnreported(ctx context.Context, owner string, now, leaseUntil time.Time, limit int) ([]storekit.Settlement, error) {
	if h.hang(ctx, "ClaimUnreported") {
		return nil, errReleased
	}
	return h.open.ClaimUnreported(ctx, owner, now, leaseUntil, limit)
}

func (h *hangStore) MarkReported(ctx context.Context, id string, now time.Time) error {
	if h.hang(ctx, "MarkReported") {
		return errReleased
	}
	return h.open.MarkReported(ctx, id, now)
}

func (h *hangStore) RetryReport(ctx context.Context, id, owner string, at time.Time) error {
	if h.hang(ctx, "RetryReport") {
		return errReleased
	}
	return h.open.RetryReport(ctx, id, owner, at)
}

func (h *hangStore) Pending(ctx context.Context) (int, time.Time, error) {
	if h.hang(ctx, "Pending") {
		return 0, time.Time{}, errReleased
	}
	return h.open.Pending(ctx)
}

func (h *hangStore) Reconcile(ctx context.Context, from, to, now time.Time) (Reconciliation, error) {
	if h.hang(ctx, "Reconcile") {
		return Reconciliation{}, errReleased
	}
	return h.open.Reconcile(ctx, from, to, now)
}

func (h *hangStore) Purge(ctx context.Context, before time.Time) (int, error) {
	if h.hang(ctx, "Purge") {
		return 0, errReleased
	}
	return h.open.Purge(ctx, before)
}

func (h *hangStore) Release(ctx context.Context, key storekit.MovementKey, startedAt time.Time) (bool, error) {
	if h.hang(ctx, "Release") {
		return false, errReleased
	}
	return h.open.Release(ctx, key, startedAt)
}

func (h *hangStore) RecordReference(ctx context.Context, key storekit.MovementKey, serviceReference string) (storekit.Movement, error) {
	if h.hang(ctx, "RecordReference") {
		return storekit.Movement{}, errReleased
	}
	return h.open.RecordReference(ctx, key, serviceReference)
}

func (h *hangStore) RenewReport(ctx context.Context, id, owner string, leaseUntil time.Time) error {
	if h.hang(ctx, "RenewReport") {
		return errReleased
	}
	return h.open.(storekit.ReportLeaseRenewer).RenewReport(ctx, id, owner, leaseUntil)
}

// syncBuffer is a log destination safe for the Tracker's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// storeMethods are the methods of storekit.Store: a method added later is listed.
func storeMethods() []reflect.Method {
	methods := reflect.TypeFor[storekit.Store]()
	out := make([]reflect.Method, methods.NumMethod())
	for i := range out {
		out[i] = methods.Method(i)
	}
	return out
}

// zeroArgs are the arguments of a call of m: a live context, then zero values.
func zeroArgs(m reflect.Method) []reflect.Value {
	args := []reflect.Value{reflect.ValueOf(context.Background())}
	for j := 1; j < m.Type.NumIn(); j++ {
		args = append(args, reflect.Zero(m.Type.In(j)))
	}
	return args
}

// Every method of Store, called through a Tracker's store on a store that never
// answers, returns an error matching ErrStoreTimeout and context.DeadlineExceeded once
// its deadline passes, and logs a warning naming the call. A method added to Store and
// not bounded fails here.
func TestBoundedStoreBoundsEveryCall(t *testing.T) {
	hang := newHangStore(t, NewMemoryStore(0))
	hang.hanging.Store(true)
	var logs syncBuffer
	deadlines := newFakeDeadlines()
	tr := NewTracker(storeOnlyClient(t), TrackerOptions{Store: hang, Logger: slog.New(slog.NewTextHandler(&logs, nil)), deadline: deadlines.deadline})

	for _, m := range storeMethods() {
		t.Run(m.Name, func(t *testing.T) {
			args := zeroArgs(m)
			done := make(chan []reflect.Value, 1)
			go func() { done <- reflect.ValueOf(tr.Store()).MethodByName(m.Name).Call(args) }()
			require.Equal(t, m.Name, <-hang.calls, "the call reached the store")
			deadlines.fire(1)
			out := <-done
			err, _ := out[len(out)-1].Interface().(error)
			require.ErrorIs(t, err, ErrStoreTimeout)
			assert.ErrorIs(t, err, context.DeadlineExceeded)
			assert.Contains(t, err.Error(), m.Name)
			assert.Contains(t, logs.String(), "call="+m.Name+" timeout=10s", "a warning names the call")
		})
	}
	// The optional renewal of report claims is bounded alike.
	renew := renewReport(tr.Store())
	require.NotNil(t, renew)
	done := make(chan error, 1)
	go func() { done <- renew(context.Background(), "id", "owner", time.Now()) }()
	require.Equal(t, "RenewReport", <-hang.calls)
	deadlines.fire(1)
	require.ErrorIs(t, <-done, ErrStoreTimeout)
}

// A store that heeds its context (storekit.ContextHeeder) is called on the caller's
// goroutine, every method of Store alike, and its calls are bounded as any store's: at
// the deadline the call returns, with ErrStoreTimeout and a warning; when the caller
// gives up, with the store's answer and no warning; a panic is an error. No call is
// left behind.
func TestAStoreThatHeedsItsContextIsCalledOnTheCallersGoroutine(t *testing.T) {
	heed := newHeedingStore(t, NewMemoryStore(0))
	heed.hanging.Store(true)
	var logs syncBuffer
	deadlines := newFakeDeadlines()
	tr := NewTracker(storeOnlyClient(t), TrackerOptions{Store: heed, Logger: slog.New(slog.NewTextHandler(&logs, nil)), deadline: deadlines.deadline})
	require.True(t, tr.Store().(*boundedStore).heeds)

	for _, m := range storeMethods() {
		t.Run(m.Name, func(t *testing.T) {
			args := zeroArgs(m)
			caller := make(chan string, 1)
			done := make(chan []reflect.Value, 1)
			go func() {
				caller <- goroutines.ID()
				done <- reflect.ValueOf(tr.Store()).MethodByName(m.Name).Call(args)
			}()
			require.Equal(t, m.Name, <-heed.calls, "the call reached the store")
			require.Equal(t, <-caller, <-heed.goroutines, "on the caller's goroutine")
			deadlines.fire(1)
			out := <-done
			err, _ := out[len(out)-1].Interface().(error)
			require.ErrorIs(t, err, ErrStoreTimeout)
			assert.ErrorIs(t, err, context.DeadlineExceeded)
			assert.Contains(t, logs.String(), "call="+m.Name+" timeout=10s", "a warning names the call")
		})
	}
	assert.Zero(t, tr.Store().(*boundedStore).abandoned.Load(), "no call left behind")

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := gateOf(tr.Store()).Get(ctx, movementKey{}); done <- err }()
	<-heed.calls
	<-heed.goroutines
	cancel()
	err := <-done
	require.ErrorIs(t, err, errReleased, "the store's own answer")
	assert.NotErrorIs(t, err, ErrStoreTimeout, "the caller gave up, not the bound")

	panicky := NewTracker(storeOnlyClient(t), TrackerOptions{Store: heedingStore{&hangStore{open: panicStore{}, heeds: true}},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	_, _, err = panicky.Store().Pending(context.Background())
	require.Error(t, err, "a panic in the store is an error")
	assert.Contains(t, err.Error(), "panic")
}

// panicStore panics in every call.
type panicStore struct{ storekit.Store }

func (panicStore) Pending(context.Context) (int, time.Time, error) { panic("the store's bug") }

// A store call whose caller gives up returns at once with the caller's error, and no
// warning: the bound was not hit. Calls left running past their deadline are bounded in
// number: beyond maxAbandonedCalls, a call fails at once without reaching the store.
func TestBoundedStoreCallerCancelAndAbandonedCalls(t *testing.T) {
	hang := newHangStore(t, NewMemoryStore(0))
	hang.hanging.Store(true)
	var logs syncBuffer
	deadlines := newFakeDeadlines()
	tr := NewTracker(storeOnlyClient(t), TrackerOptions{Store: hang, Logger: slog.New(slog.NewTextHandler(&logs, nil)), deadline: deadlines.deadline})

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := gateOf(tr.Store()).Get(ctx, movementKey{}); done <- err }()
	<-hang.calls
	cancel()
	err := <-done
	require.ErrorIs(t, err, context.Canceled)
	assert.NotErrorIs(t, err, ErrStoreTimeout)
	assert.NotContains(t, logs.String(), "within its deadline")

	// One call abandoned above; fill up to the bound.
	for range maxAbandonedCalls - 1 {
		go func() { done <- tr.Store().MarkReported(context.Background(), "id", time.Now()) }()
		<-hang.calls
		deadlines.fire(1)
		require.ErrorIs(t, <-done, ErrStoreTimeout)
	}
	err = tr.Store().MarkReported(context.Background(), "id", time.Now())
	require.ErrorIs(t, err, ErrStoreTimeout)
	assert.Contains(t, err.Error(), "not tried")
	assert.Empty(t, hang.calls, "refused without reaching the store")
}

// A store call answered before its deadline is the store's answer, untouched, and a
// Tracker with its own in-memory store leaves it unwrapped.
func TestBoundedStorePassesAnswers(t *testing.T) {
	mem := NewMemoryStore(0)
	tr := NewTracker(storeOnlyClient(t), TrackerOptions{Store: mem})
	require.IsType(t, &boundedStore{}, tr.Store())
	assert.Same(t, mem, unbounded(tr.Store()))
	again := NewTracker(storeOnlyClient(t), TrackerOptions{Store: tr.Store(), StoreTimeout: time.Second})
	assert.Same(t, mem, again.Store().(*boundedStore).Store, "bounded once, with its own settings")
	assert.Equal(t, time.Second, again.Store().(*boundedStore).timeout)

	ctx := context.Background()
	m := movement{Kind: KindSend, ClientReference: "bounded1", StartedAt: time.Now(), Deadline: time.Now()}
	got, created, err := gateOf(tr.Store()).Track(ctx, m)
	require.NoError(t, err)
	assert.True(t, created)
	assert.Equal(t, "bounded1", got.ClientReference)
	_, created, err = gateOf(tr.Store()).Track(ctx, m)
	require.NoError(t, err)
	assert.False(t, created)
	_, _, err = gateOf(tr.Store()).Track(ctx, movement{})
	var ve *ValidationError
	assert.ErrorAs(t, err, &ve, "the store's own errors come back as they are")

	own := NewTracker(storeOnlyClient(t), TrackerOptions{})
	assert.NotContains(t, fmt.Sprintf("%T", own.Store()), "boundedStore", "nothing to bound in the process's memory")
}

// runCase is a Tracker whose store hangs once the test says so, with Run going.
type runCase struct {
	tr        *Tracker
	mock      *httpmock.MockTransport
	clock     *fakeClock
	hang      *hangStore
	deadlines *fakeDeadlines
	logs      *syncBuffer
	entered   chan struct{} // an OnOutcome call began
	cancel    context.CancelFunc
	done      chan error
}

func newRunCase(t *testing.T, opts TrackerOptions) *runCase {
	t.Helper()
	rc := &runCase{hang: newHangStore(t, NewMemoryStore(0)), deadlines: newFakeDeadlines(), logs: &syncBuffer{}}
	opts.Store, opts.deadline = rc.hang, rc.deadlines.deadline
	opts.Logger = slog.New(slog.NewTextHandler(rc.logs, nil))
	rc.tr, rc.mock, rc.clock = newTestTracker(t, opts)
	return rc
}

func (rc *runCase) run() {
	ctx, cancel := context.WithCancel(context.Background())
	rc.cancel, rc.done = cancel, make(chan error, 1)
	go func() { rc.done <- rc.tr.Run(ctx) }()
}

// stopWithin cancels Run, then, for each stage, waits until that many deadlines are
// pending and fires the earliest; Run must then return, no later than limit of deadline
// time after its context ended.
func (rc *runCase) stopWithin(t *testing.T, limit time.Duration, stages ...int) {
	t.Helper()
	start := rc.deadlines.elapsed()
	rc.cancel()
	for _, n := range stages {
		rc.deadlines.fire(n)
	}
	select {
	case err := <-rc.done:
		assert.ErrorIs(t, err, context.Canceled)
	case <-time.After(10 * time.Second): // a safety net only: it returns at once
		t.Fatal("Run did not return once its deadlines had passed")
	}
	took := rc.deadlines.elapsed() - start
	assert.LessOrEqual(t, took, limit)
	t.Logf("Run returned %s of deadline time after its context ended", took)
}

// Run returns within 15 seconds of its context ending while every store write hangs
// for good and OnOutcome ignores its context: the claims it still holds are given
// back, the report is counted failed, each under its own bound, side by side.
func TestRunReturnsInTimeWhenTheStoreHangs(t *testing.T) {
	for _, tc := range []struct {
		name   string
		setup  func(t *testing.T, rc *runCase) // until Run is in the middle of its work
		stages []int                           // the deadlines pending, stage by stage, once Run's context ended
	}{{
		name: "StatusChecksUnderWay",
		setup: func(t *testing.T, rc *runCase) {
			asked := make(chan struct{}, 100)
			rc.mock.RegisterResponder(http.MethodGet, `=~^`+mockBaseURL+`/v1/payments/`, func(r *http.Request) (*http.Response, error) {
				asked <- struct{}{}
				<-r.Context().Done()
				return nil, r.Context().Err()
			})
			for i := range 20 {
				require.NoError(t, rc.tr.Track(context.Background(), KindSend, fmt.Sprintf("hang%02d", i)))
			}
			rc.clock.Advance(DefaultCallbackWait)
			rc.run()
			for range 2 { // RunConcurrency: the rest wait their turn
				<-asked
			}
			rc.hang.hanging.Store(true)
		},
		// The two checks under way give their claims back, and so does Run for the 18
		// it did not start: all at once, each call bounded.
		stages: []int{20},
	}, {
		name: "OnOutcomeIgnoringItsContext",
		setup: func(t *testing.T, rc *runCase) {
			ctx := context.Background()
			// One report made at once first: Run then knows its calls are quick, and
			// claims more outcomes than it has calls.
			settle := func(ref string) movementKey {
				key, _ := keyOf(KindSend, ref)
				_, _, err := gateOf(rc.hang.open).Track(ctx, movement{Kind: KindSend, ClientReference: key.ClientReference, StartedAt: rc.clock.Now(), Deadline: rc.clock.Now()})
				require.NoError(t, err)
				_, _, err = gateOf(rc.hang.open).Settle(ctx, key, Outcome{State: EventSucceeded, Source: SourceCallback, At: rc.clock.Now()}, nil)
				require.NoError(t, err)
				return key
			}
			quick := settle("quick")
			rc.run()
			for e, _ := gateOf(rc.hang.open).Get(ctx, quick); e.Final.ReportedAt.IsZero(); e, _ = gateOf(rc.hang.open).Get(ctx, quick) {
				time.Sleep(time.Millisecond) // Run reports it on goroutines of its own
			}
			for i := range 3 {
				key, _ := keyOf(KindSend, fmt.Sprintf("report%d", i))
				_, _, err := gateOf(rc.hang.open).Track(ctx, movement{Kind: KindSend, ClientReference: key.ClientReference, StartedAt: rc.clock.Now(), Deadline: rc.clock.Now()})
				require.NoError(t, err)
				_, _, err = gateOf(rc.hang.open).Settle(ctx, key, Outcome{State: EventSucceeded, Source: SourceCallback, At: rc.clock.Now()}, nil)
				require.NoError(t, err)
			}
			rc.clock.Advance(DefaultRunInterval) // the next round
			// ReportConcurrency, RunConcurrency's by default: the third waits for a call.
			for range 2 {
				<-rc.entered
			}
			rc.hang.hanging.Store(true)
		},
		// The two calls get a grace to return while the third report, which never got a
		// slot, is given back; then the two failures are recorded.
		stages: []int{3, 3, 2},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			entered, forGood := make(chan struct{}, 10), make(chan struct{})
			t.Cleanup(func() { close(forGood) })
			rc := newRunCase(t, TrackerOptions{RunConcurrency: 2, OnOutcome: func(_ context.Context, o *Outcome) error {
				if strings.HasSuffix(o.ID, "/quick") {
					return nil
				}
				entered <- struct{}{}
				<-forGood // deaf to its context
				return nil
			}})
			rc.entered = entered
			tc.setup(t, rc)
			rc.stopWithin(t, 15*time.Second, tc.stages...)
			assert.Contains(t, rc.logs.String(), "a store call got no answer within its deadline")
		})
	}
}

// reportCase is Trackers sharing one in-memory store and one fake clock, each with Run
// going, and the OnOutcome calls they made, by Outcome.ID.
type reportCase struct {
	t      *testing.T
	store  storekit.Store
	clock  *fakeClock
	mock   *httpmock.MockTransport
	trs    []*Tracker
	mu     sync.Mutex
	calls  map[string]int
	called chan string
}

func newReportCase(t *testing.T, store storekit.Store, instances int, opts TrackerOptions, onOutcome func(ctx context.Context, o *Outcome) error) *reportCase {
	c, mock := newMockClient(t, WithDisbursementAccount("2020202"))
	rc := &reportCase{t: t, store: store, clock: newFakeClock(), mock: mock, calls: map[string]int{}, called: make(chan string, 1000)}
	for i := range instances {
		o := opts
		o.Store, o.Clock, o.Owner = store, rc.clock, fmt.Sprintf("instance%d", i)
		o.OnOutcome = func(ctx context.Context, out *Outcome) error {
			rc.mu.Lock()
			rc.calls[out.ID]++
			rc.mu.Unlock()
			rc.called <- out.ID
			return onOutcome(ctx, out)
		}
		tr := NewTracker(c, o)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- tr.Run(ctx) }()
		t.Cleanup(func() {
			cancel()
			assert.ErrorIs(t, <-done, context.Canceled)
		})
		rc.trs = append(rc.trs, tr)
	}
	return rc
}

// settled stores a success for ref, unreported.
func (rc *reportCase) settled(ref string) string {
	ctx := context.Background()
	key, _ := keyOf(KindSend, ref)
	now := rc.clock.Now()
	_, _, err := gateOf(unbounded(rc.store)).Track(ctx, movement{Kind: KindSend, ClientReference: ref, StartedAt: now, Deadline: now.Add(time.Hour)})
	require.NoError(rc.t, err)
	s, _, err := gateOf(unbounded(rc.store)).Settle(ctx, key, Outcome{State: EventSucceeded, Source: SourceCallback, At: now}, nil)
	require.NoError(rc.t, err)
	return s.ID
}

// advanceUntil moves the clock step by step until done holds, letting the Runs act
// between steps (they do on goroutines of their own).
func (rc *reportCase) advanceUntil(step time.Duration, steps int, done func() bool) {
	for range steps {
		if done() {
			return
		}
		rc.clock.Advance(step)
		select {
		case <-rc.called:
		case <-time.After(20 * time.Millisecond):
		}
	}
	require.True(rc.t, done(), "not done after %d steps of %s", steps, step)
}

func (rc *reportCase) reported(id string) bool {
	e, err := gateOf(rc.store).Get(context.Background(), settlementKey(id))
	require.NoError(rc.t, err)
	return e.Final != nil && !e.Final.ReportedAt.IsZero()
}

func (rc *reportCase) callsOf(id string) int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.calls[id]
}

// settlementKey is the key of a KindSend outcome id made by settled.
func settlementKey(id string) movementKey {
	parts := strings.SplitN(id, "/", 3)
	return movementKey{Callback: EventKind(parts[0]), ClientReference: parts[2]}
}

// failingMarks is a store whose MarkReported fails its first n calls, after recording
// the report or before, in turn: a write that failed, or whose answer was lost.
type failingMarks struct {
	storekit.Store
	mu    sync.Mutex
	fails int
	calls int
}

func (f *failingMarks) MarkReported(ctx context.Context, id string, now time.Time) error {
	f.mu.Lock()
	f.calls++
	n := f.calls
	f.mu.Unlock()
	if n > f.fails {
		return f.Store.MarkReported(ctx, id, now)
	}
	if n%2 == 0 {
		if err := f.Store.MarkReported(ctx, id, now); err != nil {
			return err
		}
		return errors.New("the answer was lost")
	}
	return errors.New("connection reset")
}

// A report whose recording fails (the write refused, or its answer lost) is recorded
// again, with backoff, by the instance that made it: OnOutcome is not called twice, on
// that instance or another, though the lease ran out meanwhile.
func TestRunRetriesRecordingAReport(t *testing.T) {
	store := &failingMarks{Store: NewMemoryStore(0), fails: 5}
	rc := newReportCase(t, store, 2, TrackerOptions{Lease: 2 * time.Second}, func(context.Context, *Outcome) error { return nil })
	id := rc.settled("markfails1")
	rc.advanceUntil(500*time.Millisecond, 200, func() bool { return rc.reported(id) })
	for range 20 { // leases end; no instance reports it again
		rc.clock.Advance(time.Second)
		select {
		case got := <-rc.called:
			t.Fatalf("%s reported again", got)
		case <-time.After(2 * time.Millisecond):
		}
	}
	assert.Equal(t, 1, rc.callsOf(id), "reported once")
	store.mu.Lock()
	assert.Greater(t, store.calls, store.fails, "recorded once the store took it")
	store.mu.Unlock()
}

// The claim of a report is renewed while OnOutcome runs: a call that lasts ten leases
// is not made again by another instance meanwhile.
func TestRunRenewsTheClaimOfAReport(t *testing.T) {
	release := make(chan struct{})
	rc := newReportCase(t, NewMemoryStore(0), 3, TrackerOptions{Lease: time.Minute}, func(ctx context.Context, o *Outcome) error {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return ctx.Err()
	})
	id := rc.settled("slowreport1")
	rc.advanceUntil(time.Second, 10, func() bool { return rc.callsOf(id) == 1 })
	for range 60 { // ten minutes, ten leases
		rc.clock.Advance(10 * time.Second)
		select {
		case got := <-rc.called:
			t.Fatalf("%s reported again while the first call ran", got)
		case <-time.After(2 * time.Millisecond):
		}
	}
	close(release)
	rc.advanceUntil(time.Second, 100, func() bool { return rc.reported(id) })
	assert.Equal(t, 1, rc.callsOf(id))
}

// One OnOutcome call that does not return holds up neither the other reports nor the
// status checks of the instance that made it.
func TestRunASlowOnOutcomeStallsNothing(t *testing.T) {
	forGood := make(chan struct{})
	t.Cleanup(func() { close(forGood) })
	rc := newReportCase(t, NewMemoryStore(0), 1, TrackerOptions{ReportConcurrency: 2, CallbackWait: 10 * time.Second}, func(ctx context.Context, o *Outcome) error {
		if strings.HasSuffix(o.ID, "/stuck1") {
			<-forGood
		}
		return nil
	})
	stuck := rc.settled("stuck1")
	rc.advanceUntil(time.Second, 10, func() bool { return rc.callsOf(stuck) == 1 })

	var others []string
	for i := range 10 {
		others = append(others, rc.settled(fmt.Sprintf("other%d", i)))
	}
	registerStatus(t, rc.mock, "/v1/payments/payout4075", "confirm/send_status_payout4075.json")
	require.NoError(t, rc.trs[0].Track(context.Background(), KindSend, "payout4075"))
	rc.advanceUntil(5*time.Second, 200, func() bool {
		for _, id := range others {
			if !rc.reported(id) {
				return false
			}
		}
		e, err := gateOf(rc.store).Get(context.Background(), movementKey{Callback: EventKindPayout, ClientReference: "payout4075"})
		return err == nil && e.Final != nil
	})
	assert.False(t, rc.reported(stuck), "the stuck call is still under way")
}

// An OnOutcome call that ends its goroutine (runtime.Goexit, as a test's FailNow does)
// is a failed call, recorded at once: Run goes on with the reports waiting, and the
// outcome is reported again.
func TestRunAnOnOutcomeThatEndsItsGoroutineFailsOneCall(t *testing.T) {
	var exits atomic.Int32
	rc := newReportCase(t, NewMemoryStore(0), 1, TrackerOptions{ReportConcurrency: 1}, func(ctx context.Context, o *Outcome) error {
		if strings.HasSuffix(o.ID, "/exits1") && exits.Add(1) == 1 {
			runtime.Goexit()
		}
		return nil
	})
	exiting := rc.settled("exits1")
	var others []string
	for i := range 5 {
		others = append(others, rc.settled(fmt.Sprintf("other%d", i)))
	}
	rc.advanceUntil(time.Second, 200, func() bool {
		for _, id := range append(others, exiting) {
			if !rc.reported(id) {
				return false
			}
		}
		return true
	})
	assert.Equal(t, 2, rc.callsOf(exiting), "called again after the call that ended its goroutine")
	e, err := gateOf(rc.store).Get(context.Background(), settlementKey(exiting))
	require.NoError(t, err)
	assert.Equal(t, 1, e.Final.ReportAttempts, "the call that ended its goroutine counts as one failed attempt")
	for _, id := range others {
		assert.Equal(t, 1, rc.callsOf(id))
	}
}

// An OnOutcome call given up on at its deadline, and after its grace, gives its report
// over to another goroutine, which records the failure and goes on with the reports
// waiting even when recording it panics (a store's driver): the panic is Run's to return,
// and no report is left unfinished for Run to wait on for good.
func TestAReportGivenUpOnGoesOnWhenRecordingItPanics(t *testing.T) {
	forGood := make(chan struct{})
	t.Cleanup(func() { close(forGood) })
	deadlines := newFakeDeadlines()
	tr, _, _ := newTestTracker(t, TrackerOptions{deadline: deadlines.deadline, OnOutcome: func(context.Context, *Outcome) error {
		<-forGood // deaf to its context
		return nil
	}})
	recorded, wentOn, kept := make(chan bool, 1), make(chan struct{}), make(chan bool, 1)
	go func() {
		kept <- tr.callOnOutcome(context.Background(), &Outcome{ID: "payout/send/stuck1"}, func(finished bool, err error) {
			recorded <- finished
			assert.ErrorIs(t, err, context.DeadlineExceeded)
			panic("the store's driver")
		}, func() { close(wentOn) })
	}()
	deadlines.fire(1) // OnOutcomeTimeout
	deadlines.fire(1) // the grace
	select {
	case <-wentOn:
	case <-time.After(10 * time.Second): // a safety net only
		t.Fatal("the report given up on did not go on")
	}
	assert.False(t, <-recorded, "recorded as a call that did not finish")
	assert.ErrorContains(t, tr.takePanic(), "the store's driver")
	select {
	case <-kept:
		t.Fatal("callOnOutcome returned while OnOutcome was still under way")
	default:
	}
}
