package billing

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recordedDeadlines derives contexts on a fake clock and counts them.
type recordedDeadlines struct {
	now     time.Time
	derived int
}

func (r *recordedDeadlines) derive(parent context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	r.derived++
	return context.WithDeadline(parent, r.now.Add(timeout))
}

// valueCtx is a context of a type == cannot compare.
type valueCtx struct {
	context.Context
	tags []string
}

// heldCtx is a context of a type == compares, which may hold a value it cannot.
type heldCtx struct {
	context.Context
	held any
}

func TestSharedDeadlinesBoundEveryCallWithinASlice(t *testing.T) {
	rec := &recordedDeadlines{now: time.Now()} // the derived contexts end by the wall clock
	d := newSharedDeadlines(func() time.Time { return rec.now }, rec.derive)
	parent, stop := context.WithCancel(context.Background())
	defer stop()
	const timeout = 10 * time.Second
	slice := timeout / deadlineSlices

	own, cancel := d.deadline(parent, timeout)
	cancel()
	require.Error(t, own.Err(), "a parent not shared: each call's context is its own, ended when it returns")
	unshare := d.share(parent)
	first, cancel := d.deadline(parent, timeout)
	cancel()
	require.NoError(t, first.Err(), "a call's cancel leaves the shared context to the others")
	rec.now = rec.now.Add(slice - time.Nanosecond)
	second, _ := d.deadline(parent, timeout)
	assert.Same(t, first, second, "within the slice: shared")
	deadline, _ := second.Deadline()
	assert.GreaterOrEqual(t, deadline.Sub(rec.now), timeout-slice, "never bounded by less than the timeout less a slice")
	assert.LessOrEqual(t, deadline.Sub(rec.now), timeout, "never by more than the timeout")

	rec.now = rec.now.Add(time.Nanosecond)
	third, _ := d.deadline(parent, timeout)
	assert.NotSame(t, first, third, "a slice later: a new one")
	deadline, _ = third.Deadline()
	assert.Equal(t, timeout, deadline.Sub(rec.now))

	otherParent := context.WithoutCancel(parent)
	defer d.share(otherParent)()
	other, _ := d.deadline(otherParent, timeout)
	assert.NotSame(t, third, other, "another parent: another context")
	longer, _ := d.deadline(parent, time.Minute)
	deadline, _ = longer.Deadline()
	assert.Equal(t, time.Minute, deadline.Sub(rec.now), "each timeout has its own")

	stop()
	require.Error(t, third.Err())
	again, _ := d.deadline(parent, timeout)
	assert.NotSame(t, third, again, "an ended context is never handed out again")

	before := rec.derived
	assert.Equal(t, 6, before, "own, first, third, other, longer and again: one context each")
	odd := valueCtx{Context: context.Background(), tags: []string{"x"}}
	defer d.share(odd)()
	d.deadline(odd, timeout)
	d.deadline(odd, timeout)
	assert.Equal(t, before+2, rec.derived, "a parent that cannot be compared shares nothing")
	// A type == compares, holding in an interface a value it cannot: used as a map key, it
	// would panic.
	held := heldCtx{Context: context.Background(), held: map[string]int{}}
	require.NotPanics(t, func() {
		defer d.share(held)()
		d.deadline(held, timeout)
		d.deadline(held, timeout)
	})
	assert.Equal(t, before+4, rec.derived, "a parent whose parts may not compare shares nothing")

	unshare()
	rec.now = rec.now.Add(time.Nanosecond)
	after, _ := d.deadline(parent, timeout)
	assert.NotSame(t, again, after, "no longer shared once Run is done with it")
}

// Run's calls alternate between its two lasting parents (its context, and the one its
// last writes run under) with one timeout: each parent keeps its shared context for the
// slice, so a slice derives one context per parent however the calls interleave, and
// at most deadlineSlices per parent are alive at once.
func TestSharedDeadlinesKeepOnePerParentWhateverTheOrder(t *testing.T) {
	rec := &recordedDeadlines{now: time.Now()}
	d := newSharedDeadlines(func() time.Time { return rec.now }, rec.derive)
	run, stop := context.WithCancel(context.Background())
	defer stop()
	writes := context.WithoutCancel(run)
	defer d.share(run)()
	defer d.share(writes)()
	const timeout = 10 * time.Second
	slice := timeout / deadlineSlices
	for range 3 {
		before := rec.derived
		var ofRun, ofWrites context.Context
		for i := range 100 {
			r, _ := d.deadline(run, timeout)
			w, _ := d.deadline(context.WithoutCancel(run), timeout) // a new value, the same parent
			if i == 0 {
				ofRun, ofWrites = r, w
			}
			assert.Same(t, ofRun, r)
			assert.Same(t, ofWrites, w)
			rec.now = rec.now.Add(slice / 200)
		}
		require.Equal(t, before+2, rec.derived, "one context per parent in a slice")
		rec.now = rec.now.Add(slice)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	assert.Len(t, d.slots, 2, "a slot per timeout and parent")
}

// A callback's calls get deadlines of their own: no context of a callback request, and
// nothing its values hold, outlives the handling. Only Run's context is shared.
func TestOnlyRunsCallsShareDeadlines(t *testing.T) {
	tr, mock, _ := newTestTracker(t, TrackerOptions{})
	require.NotNil(t, tr.opts.shared, "the wall clock's deadlines are shared")
	status := string(fixture(t, "payments/receive_status_paid.json"))
	var callback map[string]any
	require.NoError(t, json.Unmarshal(fixture(t, "events/transaction_success.json"), &callback))
	data := callback["Data"].(map[string]any)
	delete(data, "Amount") // the paid status check's amount differs from the fixture's
	delete(data, "TransactionId")
	ref := "shared1"
	data["ClientReference"] = ref
	status = regexp.MustCompile(`"clientReference": "\w+"`).ReplaceAllString(status, `"clientReference": "`+ref+`"`)
	mock.RegisterRegexpResponder(http.MethodGet, regexp.MustCompile(`/v1/payments/shared1$`), httpmock.NewStringResponder(http.StatusOK, status))
	body, err := json.Marshal(callback)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, post(t, tr.Handler(), body).Code)

	tr.opts.shared.mu.Lock()
	assert.Empty(t, tr.opts.shared.slots, "no context kept after a callback")
	assert.Empty(t, tr.opts.shared.lasting)
	tr.opts.shared.mu.Unlock()

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- tr.Run(ctx) }()
	require.Eventually(t, func() bool {
		tr.opts.shared.mu.Lock()
		defer tr.opts.shared.mu.Unlock()
		for parent, n := range tr.opts.shared.lasting {
			if run, ok := parent.(*sharingContext); ok && run.Context == ctx && n == 1 {
				return tr.opts.shared.lasting[context.WithoutCancel(run)] == 1 && len(tr.opts.shared.lasting) == 2
			}
		}
		return false
	}, 10*time.Second, time.Millisecond, "Run shares its context, and the one its last writes run under")
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
	tr.opts.shared.mu.Lock()
	assert.Empty(t, tr.opts.shared.lasting, "and stops sharing it when it returns")
	tr.opts.shared.mu.Unlock()
}

// Shared deadlines over random sequences of calls: any mix of lasting parents (Run's
// context, its writes', another) and timeouts, in any order, the clock moving by random
// steps. Every call is bounded by its timeout and by no less than its timeout less a
// slice, and a timeout under a parent derives a new context only once its slice is over,
// so that at most deadlineSlices of them are alive at once.
func TestSharedDeadlinesOverRandomCalls(t *testing.T) {
	seed := uint64(43)
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, seed))
	run, stop := context.WithCancel(context.Background())
	defer stop()
	other, stopOther := context.WithCancel(context.Background())
	defer stopOther()
	parents := []func() context.Context{
		func() context.Context { return run },
		func() context.Context { return context.WithoutCancel(run) }, // a new value each time
		func() context.Context { return other },
	}
	timeouts := []time.Duration{10 * time.Second, time.Minute}
	now := time.Now()
	type slot struct {
		parent  int
		timeout time.Duration
	}
	var derivedFor *slot
	lastDerived := map[slot]time.Time{}
	d := newSharedDeadlines(func() time.Time { return now }, func(parent context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
		if derivedFor == nil {
			t.Fatal("a context derived outside a call")
		}
		if last, ok := lastDerived[*derivedFor]; ok && now.Sub(last) < timeout/deadlineSlices {
			t.Fatalf("%v: a new context %v after the last, within its slice", *derivedFor, now.Sub(last))
		}
		lastDerived[*derivedFor] = now
		return context.WithDeadline(parent, now.Add(timeout))
	})
	for i := range parents {
		defer d.share(parents[i]())()
	}
	for range 100_000 {
		s := slot{r.IntN(len(parents)), timeouts[r.IntN(len(timeouts))]}
		derivedFor = &s
		ctx, cancel := d.deadline(parents[s.parent](), s.timeout)
		derivedFor = nil
		deadline, ok := ctx.Deadline()
		require.True(t, ok)
		if left := deadline.Sub(now); left > s.timeout || left < s.timeout-s.timeout/deadlineSlices {
			t.Fatalf("%v: bounded by %v", s, left)
		}
		cancel()
		now = now.Add(time.Duration(r.Int64N(int64(s.timeout / deadlineSlices / 10))))
	}
	assert.Len(t, lastDerived, len(parents)*len(timeouts), "every timeout under every parent derived its own")
}

// The status check of every kind of movement, made under Run, shares its attempts'
// deadline as Run's store calls do: the attempts that begin within a slice of the
// Client's timeout have one context between them, which carries the call's values and
// its own attempt state, ends with Run's context and no later than the timeout. The same
// checks under any other context get a deadline each.
func TestStatusChecksUnderRunShareTheirAttemptsDeadline(t *testing.T) {
	const timeout = time.Minute
	c, mock := newMockClient(t, WithTimeout(timeout), WithDisbursementAccount("2020202"))
	rd := &recordedDeadlines{now: time.Now()}
	d := newSharedDeadlines(func() time.Time { return rd.now }, rd.derive)
	type key struct{}
	parent, cancel := context.WithCancel(context.WithValue(context.Background(), key{}, "Run's"))
	defer cancel()
	run := &sharingContext{Context: parent, deadlines: d}
	defer d.share(run)()

	var seen []context.Context
	mock.RegisterNoResponder(func(r *http.Request) (*http.Response, error) {
		seen = append(seen, r.Context())
		return httpmock.NewStringResponse(http.StatusNotFound, `{"message":"not found"}`), nil
	})
	kinds := 0
	for kind := range movements {
		kinds++
		for _, ctx := range []context.Context{run, parent} {
			_, err := movementStatus(ctx, c, movement{Kind: kind, ClientReference: "shared" + string(kind), ServiceReference: "sess1"})
			require.Error(t, err, "the answer is a 404")
		}
	}
	require.Len(t, seen, 2*kinds, "one attempt per check")
	assert.Equal(t, 1, rd.derived, "every attempt under Run began within one slice: one context derived")
	var shared context.Context
	states := map[any]bool{}
	for i, ctx := range seen {
		assert.Equal(t, "Run's", ctx.Value(key{}), "the call's values")
		states[ctx.Value(attemptKey{})] = true
		deadline, ok := ctx.Deadline()
		require.True(t, ok)
		if i%2 == 1 { // under another context: its own deadline, on the wall clock
			assert.WithinDuration(t, time.Now().Add(timeout), deadline, 5*time.Second)
			continue
		}
		assert.Equal(t, rd.now.Add(timeout), deadline, "bounded by the timeout from the first")
		if shared == nil {
			shared = ctx
		}
		assert.Equal(t, shared.Done(), ctx.Done(), "one deadline between the attempts under Run")
	}
	assert.Len(t, states, len(seen), "each call keeps its own attempt state")
	cancel()
	assert.ErrorIs(t, shared.Err(), context.Canceled, "the shared deadline ends with Run's context")
}

// A status check under Run that is tried again gives each attempt a context of its own
// over the one shared deadline: net/http may still be letting go of an attempt's context
// (it reads it as the parent of its own) while the next begins, so none is rewritten.
func TestStatusCheckAttemptsUnderRunEachHaveTheirOwnContext(t *testing.T) {
	answered := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if answered++; answered < 3 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"message":"not found"}`))
	}))
	defer srv.Close()
	c, err := NewClient(WithBaseURL(srv.URL), WithClientCredentials("client-id", "client-secret"), WithRetry(3, 0, 0), WithTimeout(time.Minute))
	require.NoError(t, err)
	var attempts []context.Context
	c.http.HTTPClient.Transport = transportFunc(func(r *http.Request) (*http.Response, error) {
		attempts = append(attempts, r.Context())
		return srv.Client().Transport.RoundTrip(r) // net/http's own, with its read and write loops
	})
	rd := &recordedDeadlines{now: time.Now()}
	d := newSharedDeadlines(func() time.Time { return rd.now }, rd.derive)
	run := newSharingContext(context.Background(), d)
	defer d.share(run)()

	_, err = movementStatus(run, c, movement{Kind: KindSend, ClientReference: "retried1"})
	require.Error(t, err, "the answer is a 404")
	require.Len(t, attempts, 3, "tried again after two 503s")
	assert.Equal(t, 1, rd.derived, "one deadline between the attempts")
	for i, ctx := range attempts {
		assert.Equal(t, attempts[0].Done(), ctx.Done(), "attempt %d shares the deadline", i+1)
		for _, other := range attempts[:i] {
			assert.NotSame(t, other, ctx, "attempt %d has a context of its own", i+1)
		}
	}
}

// transportFunc is an http.RoundTripper made of a function.
type transportFunc func(*http.Request) (*http.Response, error)

func (f transportFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
