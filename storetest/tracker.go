package storetest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
	"github.com/billingsdk/billing-go/storekit"
)

// RunTracker runs, as subtests of t, the scenarios of several Tracker instances sharing
// one store, against the sandbox with its manual clock: a callback delivered to one
// instance resolves an Await on another; an instance that dies after tracking, or after
// sending, leaves its movements to another's Run; three instances running Run over
// hundreds of movements, with callbacks dropped, duplicated and spread over instances,
// report each outcome exactly once and lose none. Each scenario runs once on each wire
// the sandbox speaks (the soak on the provider's with fewer movements). A backlog of
// outcomes whose reports take longer than a third of their lease, on two instances, is
// reported once each. Callbacks the status check contradicts (a failure copy of a
// paid payout, a success claiming a hundred times its amount) settle nothing, and with
// a store that records them Reconcile lists their movements. newStore returns an empty store for one subtest; its instances
// share it.
func RunTracker(t *testing.T, newStore func(t *testing.T) storekit.Store) {
	t.Run("ReportBacklogPastItsLease", func(t *testing.T) { testReportBacklog(t, newStore(t)) })
	for _, wire := range billingtest.Wires() {
		movements := 300
		if wire != billingtest.WireSpec {
			movements = 60
		}
		t.Run(string(wire), func(t *testing.T) {
			t.Run("CallbackOnAnotherInstanceResolvesAwait", func(t *testing.T) { testAwaitAcrossInstances(t, newStore(t), wire) })
			t.Run("DeadInstanceIsResumed", func(t *testing.T) { testDeadInstanceResumed(t, newStore(t), wire) })
			t.Run("ThreeInstancesReportEachOutcomeOnce", func(t *testing.T) { manyInstances(t, newStore(t), wire, 3, movements) })
			t.Run("CheckoutSurvivesARestart", func(t *testing.T) { testCheckoutAcrossARestart(t, newStore(t), wire) })
			t.Run("ForgedCallbacksAreReconciled", func(t *testing.T) { testForgedCallbacksReconciled(t, newStore(t), wire) })
		})
	}
}

// cluster is a sandbox and Tracker instances sharing one store, each with its callback
// endpoint and its Run.
type cluster struct {
	t         *testing.T
	srv       *billingtest.Server
	client    *billing.Client
	store     storekit.Store
	instances []*instance

	mu       sync.Mutex
	reported map[string][]*billing.Outcome // by client reference
	progress chan struct{}
}

type instance struct {
	tracker     *billing.Tracker
	callbackURL string
	handler     http.Handler
	stop        func() // ends its Run, checking how it ended
}

func newCluster(t *testing.T, store storekit.Store, wire billingtest.Wire) *cluster {
	srv := billingtest.NewServer(t, billingtest.WithManualClock(), billingtest.WithWire(wire))
	return &cluster{t: t, srv: srv, client: srv.Client(), store: store, reported: map[string][]*billing.Outcome{}, progress: make(chan struct{}, 1)}
}

// start adds an instance; with run, its Run goes until the test ends.
func (c *cluster) start(run bool) *instance {
	t := c.t
	name := fmt.Sprintf("instance%d", len(c.instances))
	tr := billing.NewTracker(c.client, billing.TrackerOptions{
		Store: c.store, Clock: c.srv.Clock(), Owner: name,
		// Longer than the test's steps of the clock can outrun the work under way, so
		// a lease ends only for an instance that stopped.
		Lease: 10 * time.Minute,
		OnOutcome: func(_ context.Context, o *billing.Outcome) error {
			c.mu.Lock()
			c.reported[o.ClientReference] = append(c.reported[o.ClientReference], o)
			c.mu.Unlock()
			progressed(c.progress)
			return nil
		},
		Observer: progressObserver(c.progress),
	})
	h := tr.Handler(billing.WithStatusCheckConfirmation(c.client))
	endpoint := httptest.NewServer(h)
	t.Cleanup(endpoint.Close)
	in := &instance{tracker: tr, callbackURL: endpoint.URL + "/callbacks/" + name, handler: h, stop: func() {}}
	if run {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- tr.Run(ctx) }()
		in.stop = func() {
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Errorf("%s: Run ended with %v, want context.Canceled", name, err)
			}
		}
		t.Cleanup(func() { in.stop() })
	}
	c.instances = append(c.instances, in)
	return in
}

// progressed says, without waiting, that an instance did something.
func progressed(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// progressObserver says progress on every callback, status check and settle of a
// Tracker, so that a harness waiting for quiet sees work under way between reports.
type progressObserver chan struct{}

func (p progressObserver) CallbackReceived(context.Context, billing.Event) { progressed(p) }
func (p progressObserver) StatusChecked(context.Context, billing.Kind, string, *billing.Outcome, error) {
	progressed(p)
}
func (p progressObserver) OutcomeSettled(context.Context, *billing.Outcome) { progressed(p) }

// advanceUntil moves the sandbox clock a step at a time until done holds. Between steps
// it lets the instances' Runs, which act on goroutines of their own, finish what the
// last step woke: it waits until no instance has received a callback, asked a status
// check, settled or reported an outcome for a moment.
func (c *cluster) advanceUntil(step time.Duration, steps int, done func() bool) {
	settle := func() {
		for !done() {
			select {
			case <-c.progress:
			case <-time.After(25 * time.Millisecond):
				return
			}
		}
	}
	for range steps {
		if settle(); done() {
			return
		}
		c.srv.Advance(step)
	}
	settle()
}

func (c *cluster) reports(ref string) []*billing.Outcome {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*billing.Outcome(nil), c.reported[ref]...)
}

func (c *cluster) reportedCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.reported)
}

func sendParams(ref, phone, callbackURL string) *billing.SendParams {
	return &billing.SendParams{Amount: 2000, Phone: phone, Provider: billing.ProviderTelecel, Name: "Kofi",
		Description: "Refund " + ref, ClientReference: ref, CallbackURL: callbackURL}
}

func receiveParams(ref, phone, callbackURL string) *billing.ReceiveParams {
	return &billing.ReceiveParams{Amount: 5000, Phone: phone, Provider: billing.ProviderMTN,
		Description: "Order " + ref, ClientReference: ref, CallbackURL: callbackURL}
}

func testAwaitAcrossInstances(t *testing.T, store storekit.Store, wire billingtest.Wire) {
	c := newCluster(t, store, wire)
	a, b := c.start(false), c.start(false)
	ctx := context.Background()
	// A sends; the callback goes to B.
	if _, err := a.tracker.Send(ctx, sendParams("acrossInstances1", "233201234567", b.callbackURL)); err != nil {
		t.Fatal(err)
	}
	result := make(chan *billing.Outcome, 1)
	go func() {
		o, err := a.tracker.Await(ctx, billing.KindSend, "acrossInstances1")
		if err != nil {
			t.Errorf("Await on A: %v", err)
		}
		result <- o
	}()
	var o *billing.Outcome
	for i := 0; o == nil && i < 60; i++ {
		c.srv.Advance(time.Second) // delivers the callback to B, then A's Await looks again
		select {
		case o = <-result:
		case <-time.After(50 * time.Millisecond):
		}
	}
	switch {
	case o == nil:
		t.Fatal("A's Await did not return within a minute of sandbox time")
	case !o.Succeeded() || o.Source != billing.SourceCallback || o.ID == "":
		t.Fatalf("A's Await = %+v, want the success B received by callback, with an ID", o)
	}
	key := storekit.Movement{Kind: storekit.KindSend, ClientReference: "acrossInstances1"}.Key()
	cbs, err := store.Callbacks(ctx, key)
	if err != nil || len(cbs) != 1 || !strings.Contains(string(cbs[0].Body), "acrossInstances1") {
		t.Fatalf("the callback's raw body was not kept for audit: %+v, %v", cbs, err)
	}
}

// testForgedCallbacksReconciled: the sandbox delivers, beside each genuine callback, a
// copy the status check contradicts (a failure claimed of a paid payout, a success
// claimed for a hundred times its amount). Each payout is settled by the truth and
// reported once, and Reconcile lists both as contradicted, never as disagreed.
func testForgedCallbacksReconciled(t *testing.T, store storekit.Store, wire billingtest.Wire) {
	if _, ok := store.(storekit.ContradictionRecorder); !ok {
		t.Skip("the store records no contradicted callbacks (storekit.ContradictionRecorder is optional)")
	}
	c := newCluster(t, store, wire)
	in := c.start(true)
	ctx := context.Background()
	start := c.srv.Now()
	faults := map[string]billingtest.CallbackFaultKind{"forgedSend1": billingtest.CallbackContradicted, "forgedSend2": billingtest.CallbackForgedAmount}
	for ref, kind := range faults {
		c.srv.InjectCallbackFault(billingtest.CallbackFault{Kind: kind, Reference: ref})
		if _, err := in.tracker.Send(ctx, sendParams(ref, "233201234567", in.callbackURL)); err != nil {
			t.Fatal(err)
		}
	}
	contradicted := func() []string {
		r, err := in.tracker.Reconcile(ctx, start.Add(-time.Hour), c.srv.Now().Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Disagreed) != 0 {
			t.Fatalf("Disagreed = %+v: the store's outcome never met a forgery", r.Disagreed)
		}
		var refs []string
		for _, x := range r.Contradicted {
			refs = append(refs, x.Key.ClientReference)
		}
		return sorted(refs)
	}
	want := []string{"forgedSend1", "forgedSend2"}
	c.advanceUntil(time.Second, 120, func() bool {
		return len(c.reports("forgedSend1")) > 0 && len(c.reports("forgedSend2")) > 0 && slices.Equal(contradicted(), want)
	})
	for ref, kind := range faults {
		if got := c.reports(ref); len(got) != 1 || !got[0].Succeeded() {
			t.Fatalf("%s (%s): reported %d time(s), want once, succeeded: %+v", ref, kind, len(got), got)
		}
	}
	if got := contradicted(); !slices.Equal(got, want) {
		t.Fatalf("Contradicted = %v, want %v", got, want)
	}
}

func testDeadInstanceResumed(t *testing.T, store storekit.Store, wire billingtest.Wire) {
	c := newCluster(t, store, wire)
	dead := c.start(false)
	dead.callbackURL = "http://127.0.0.1:1/callbacks" // nobody answers: the instance is gone
	ctx := context.Background()
	// One tracked and sent, one tracked and never sent: then the instance dies.
	if _, err := dead.tracker.Send(ctx, sendParams("deadSent1", "233201234567", dead.callbackURL)); err != nil {
		t.Fatal(err)
	}
	if err := dead.tracker.Track(ctx, billing.KindSend, "deadUnsent1"); err != nil {
		t.Fatal(err)
	}
	from := c.srv.Now()
	c.start(true) // another instance's Run takes over
	c.advanceUntil(30*time.Second, 40, func() bool { return len(c.reports("deadSent1")) > 0 })
	c.srv.Advance(time.Minute) // deadUnsent1's deadline is past
	got := c.reports("deadSent1")
	if len(got) != 1 || !got[0].Succeeded() || got[0].Source != billing.SourceStatusCheck {
		t.Fatalf("the sent payout was reported %d times: %+v; want once, succeeded by status check", len(got), got)
	}
	if n := c.srv.Movements("deadSent1"); n != 1 {
		t.Fatalf("the sandbox holds %d movements of deadSent1, want 1", n)
	}
	if got := c.reports("deadUnsent1"); len(got) != 0 {
		t.Fatalf("a movement never sent was reported: %+v", got[0])
	}
	r, err := c.instances[1].tracker.Reconcile(ctx, from.Add(-time.Hour), c.srv.Now().Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Overdue) != 1 || r.Overdue[0].ClientReference != "deadUnsent1" {
		t.Fatalf("Reconcile's overdue = %+v, want deadUnsent1 alone", r.Overdue)
	}
	if len(r.StatusCheckOnly) != 1 || r.StatusCheckOnly[0].Key.ClientReference != "deadSent1" {
		t.Fatalf("Reconcile's settled by status check alone = %+v, want deadSent1", r.StatusCheckOnly)
	}
}

// ManyInstances runs instances Trackers with Run on store over movements payouts and
// prompts sent through them in turn, against the sandbox with its manual clock. Their
// callbacks go to another instance; some are dropped (the status check must resolve
// them), some duplicated, some delivered again to a third instance; some numbers never
// call back, some fail. It checks that OnOutcome was called exactly once for every
// movement, with the sandbox's truth and a distinct Outcome.ID, that the sandbox moved
// each once, and that nothing is left pending. It is the soak of a store, on the
// service's specified wire.
func ManyInstances(t *testing.T, store storekit.Store, instances, movements int) {
	manyInstances(t, store, billingtest.WireSpec, instances, movements)
}

// manyInstances is ManyInstances with the sandbox answering in wire's shapes.
func manyInstances(t *testing.T, store storekit.Store, wire billingtest.Wire, instances, movements int) {
	c := newCluster(t, store, wire)
	for range instances {
		c.start(true)
	}
	ctx := context.Background()
	from := c.srv.Now()
	type sent struct {
		ref  string
		kind billing.Kind
		fail bool
		// stuck: a failed receive on the provider's wire, whose status check answers
		// 0000 Unpaid for a payment not paid, failed or not yet. Nothing confirms the
		// failure its callback reports: it stays pending, and Reconcile lists it.
		stuck bool
	}
	var stuck int
	var all []sent
	for j := range movements {
		in := c.instances[j%instances]
		to := c.instances[(j+1)%instances]
		ref := fmt.Sprintf("many%05d", j)
		suffix := "4567" // success by callback
		switch j % 5 {
		case 0:
			suffix = "0001" // failure by callback
		case 1:
			suffix = "0002" // no callback ever: the status check says
		}
		switch j % 7 {
		case 0:
			c.srv.InjectCallbackFault(billingtest.CallbackFault{Kind: billingtest.CallbackDropped, Reference: ref})
		case 1:
			c.srv.InjectCallbackFault(billingtest.CallbackFault{Kind: billingtest.CallbackDuplicated, Reference: ref})
		}
		var err error
		kind := billing.KindSend
		if j%2 == 0 {
			_, err = in.tracker.Send(ctx, sendParams(ref, "23320123"+suffix, to.callbackURL))
		} else {
			kind = billing.KindReceive
			_, err = in.tracker.Receive(ctx, receiveParams(ref, "23324123"+suffix, to.callbackURL))
		}
		if err != nil {
			t.Fatalf("%s: %v", ref, err)
		}
		s := sent{ref: ref, kind: kind, fail: suffix == "0001"}
		s.stuck = wire == billingtest.WireProvider && kind == billing.KindReceive && s.fail
		if s.stuck {
			stuck++
		}
		all = append(all, s)
	}
	c.srv.Advance(0) // the sandbox resolves them and posts the callbacks
	// Some callbacks reach a third instance too, as a load balancer may send them.
	for _, d := range c.srv.Deliveries() {
		if d.Status != http.StatusOK || !strings.Contains(string(d.Body), "many") {
			continue
		}
		var j int
		if _, err := fmt.Sscanf(string(d.Body)[strings.Index(string(d.Body), "many"):], "many%05d", &j); err != nil || j%7 != 2 {
			continue
		}
		third := c.instances[(j+2)%instances]
		req := httptest.NewRequest(http.MethodPost, third.callbackURL, strings.NewReader(string(d.Body)))
		rec := httptest.NewRecorder()
		third.handler.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			t.Errorf("a callback delivered again to a third instance: %d %s", rec.Code, rec.Body)
		}
	}
	// Up to four hours of clock: done ends it as soon as every movement is reported, so
	// the steps cost nothing on a fast machine and give a loaded one the rounds it needs.
	c.advanceUntil(30*time.Second, 480, func() bool { return c.reportedCount() == movements-stuck })

	ids := map[string]string{}
	for _, s := range all {
		got := c.reports(s.ref)
		if s.stuck {
			if len(got) != 0 {
				t.Errorf("%s: a failure nothing confirms was reported %d times", s.ref, len(got))
			}
			continue
		}
		if len(got) != 1 {
			for _, o := range got {
				t.Logf("%s: %s %s %s %s", s.ref, o.ID, o.State, o.Source, o.At)
			}
			t.Errorf("%s reported %d times, want once", s.ref, len(got))
			continue
		}
		o := got[0]
		if o.Failed() != s.fail || !o.IsFinal() || o.Kind != s.kind {
			t.Errorf("%s reported %s %s (source %s), want %s failed=%v", s.ref, o.Kind, o.State, o.Source, s.kind, s.fail)
		}
		if prev, dup := ids[o.ID]; dup || o.ID == "" {
			t.Errorf("%s reported with ID %q, already %s's", s.ref, o.ID, prev)
		}
		ids[o.ID] = s.ref
		if n := c.srv.Movements(s.ref); n != 1 {
			t.Errorf("the sandbox holds %d movements of %s, want 1", n, s.ref)
		}
	}
	c.srv.Advance(time.Minute) // every deadline has passed: a movement still pending is overdue
	r, err := c.instances[0].tracker.Reconcile(ctx, from.Add(-time.Hour), c.srv.Now().Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Overdue) != stuck {
		t.Errorf("%d movements still pending, want %d", len(r.Overdue), stuck)
		for _, m := range r.Overdue {
			t.Logf("still pending: %+v", m)
		}
	}
	t.Logf("%d instances, %d movements: %d reported once, %d settled by status check alone, %d unresolved",
		instances, movements, len(ids), len(r.StatusCheckOnly), len(r.Overdue)-stuck)
}

// testCheckoutAcrossARestart creates two checkout sessions on one instance, which then
// dies; another instance on the same store takes over the webhook URL and Run. One
// session is paid and its webhook lands on the new instance; the other is paid with its
// webhook lost, so Run's Payments.Get settles it. Each is reported once, with the
// service's payment.
func testCheckoutAcrossARestart(t *testing.T, store storekit.Store, wire billingtest.Wire) {
	var current atomic.Pointer[http.Handler]
	endpoint := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		(*current.Load()).ServeHTTP(w, r)
	}))
	t.Cleanup(endpoint.Close)
	srv := billingtest.NewServer(t, billingtest.WithManualClock(), billingtest.WithWire(wire),
		billingtest.WithWebhookURL(endpoint.URL+"/webhooks"))
	var mu sync.Mutex
	reported := map[string][]*billing.Outcome{}
	progress := make(chan struct{}, 1)
	newInstance := func(owner string) *billing.Tracker {
		tr := billing.NewTracker(srv.Client(), billing.TrackerOptions{
			Store: store, Clock: srv.Clock(), Owner: owner, Lease: 10 * time.Minute,
			OnOutcome: func(_ context.Context, o *billing.Outcome) error {
				mu.Lock()
				defer mu.Unlock()
				reported[o.ClientReference] = append(reported[o.ClientReference], o)
				progressed(progress)
				return nil
			},
			Observer: progressObserver(progress),
		})
		h := tr.Handler()
		current.Store(&h)
		return tr
	}
	ctx := context.Background()
	first := newInstance("before")
	sessions := map[string]*billing.Payment{}
	for _, ref := range []string{"shopHook", "shopLost"} {
		pay, err := first.CreateCheckout(ctx, &billing.CheckoutParams{Amount: 4200, Currency: "GHS", Description: "Order " + ref, ClientReference: ref})
		if err != nil {
			t.Fatalf("%s: %v", ref, err)
		}
		sessions[ref] = pay
	}
	// The first instance dies; the next one serves the webhook URL and runs.
	next := newInstance("after")
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- next.Run(runCtx) }()
	t.Cleanup(func() { cancel(); <-done })

	srv.InjectCallbackFault(billingtest.CallbackFault{Kind: billingtest.CallbackDropped, Reference: "shopLost"})
	for ref, pay := range sessions {
		if err := srv.CompleteCheckout(pay.Reference, "MOBILE_MONEY", "succeeded"); err != nil {
			t.Fatalf("%s: %v", ref, err)
		}
	}
	all := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(reported["shopHook"]) > 0 && len(reported["shopLost"]) > 0
	}
	// Run acts on goroutines of its own: after each step of the clock, give it until
	// it has done nothing for a moment.
	quiet := func() {
		for {
			select {
			case <-progress:
			case <-time.After(50 * time.Millisecond):
				return
			}
		}
	}
	for i := 0; i < 120 && !all(); i++ {
		srv.Advance(30 * time.Second)
		quiet()
	}
	srv.Advance(time.Hour) // nothing more is reported, whatever runs meanwhile
	quiet()
	mu.Lock()
	defer mu.Unlock()
	for ref, want := range map[string]billing.OutcomeSource{"shopHook": billing.SourceCallback, "shopLost": billing.SourceStatusCheck} {
		got := reported[ref]
		if len(got) != 1 {
			t.Errorf("%s reported %d times, want once", ref, len(got))
			continue
		}
		o := got[0]
		if !o.Succeeded() || o.Kind != billing.KindCheckout || o.Amount != 4200 || o.Source != want ||
			o.ServiceReference != sessions[ref].Reference {
			t.Errorf("%s reported %s %s amount %d source %s session %q, want a success of 4200 by %s for session %q",
				ref, o.Kind, o.State, o.Amount, o.Source, o.ServiceReference, want, sessions[ref].Reference)
		}
	}
}

// observed is a store that says progress on every call about reports, so that a
// harness waiting for quiet sees the claims, renewals and marks under way.
type observed struct {
	storekit.Store
	progress chan struct{}
}

func (o *observed) ClaimUnreported(ctx context.Context, owner string, now, leaseUntil time.Time, limit int) ([]storekit.Settlement, error) {
	defer progressed(o.progress)
	return o.Store.ClaimUnreported(ctx, owner, now, leaseUntil, limit)
}

func (o *observed) MarkReported(ctx context.Context, id string, now time.Time) error {
	defer progressed(o.progress)
	return o.Store.MarkReported(ctx, id, now)
}

func (o *observed) RetryReport(ctx context.Context, id, owner string, at time.Time) error {
	defer progressed(o.progress)
	return o.Store.RetryReport(ctx, id, owner, at)
}

// UseClock hands the clock on to a store that takes one.
func (o *observed) UseClock(c storekit.Clock) error {
	if u, ok := o.Store.(storekit.ClockUser); ok {
		return u.UseClock(c)
	}
	return nil
}

// observedRenewer is observed for a store that renews the claims of reports.
type observedRenewer struct {
	*observed
	renewer storekit.ReportLeaseRenewer
}

func (o observedRenewer) RenewReport(ctx context.Context, id, owner string, leaseUntil time.Time) error {
	defer progressed(o.progress)
	return o.renewer.RenewReport(ctx, id, owner, leaseUntil)
}

// observe wraps store so that its calls about reports say progress.
func observe(store storekit.Store, progress chan struct{}) storekit.Store {
	o := &observed{Store: store, progress: progress}
	if r, ok := store.(storekit.ReportLeaseRenewer); ok {
		return observedRenewer{observed: o, renewer: r}
	}
	return o
}

// testReportBacklog: a hundred outcomes settled and unreported, reported by two
// instances with eight calls each, every call taking 15 s of a one-minute lease. The
// first instance alone could not report them all within a lease: it must claim no more
// than it can report in time, and renew what it holds, waiting or under way, so that
// the second instance, started once the first is busy, takes none of them. Each is
// reported once, never started again once a call of it returned, and none is lost.
func testReportBacklog(t *testing.T, store storekit.Store) {
	const (
		outcomes    = 100
		lease       = time.Minute
		callTakes   = 15 * time.Second
		concurrency = 8
		step        = 5 * time.Second // under a third of the lease: renewals keep up
	)
	srv := billingtest.NewServer(t, billingtest.WithManualClock())
	clock := srv.Clock()
	progress := make(chan struct{}, 1)
	shared := observe(store, progress)
	ctx := context.Background()
	now := clock.Now()
	for i := range outcomes {
		m := storekit.Movement{Kind: storekit.KindSend, ClientReference: fmt.Sprintf("backlog%03d", i), StartedAt: now, Deadline: now.Add(time.Hour)}
		if _, _, err := store.Track(ctx, m); err != nil {
			t.Fatal(err)
		}
		if _, _, err := store.Settle(ctx, m.Key(), storekit.Outcome{State: storekit.StateSucceeded, Source: storekit.SourceCallback, At: now}, nil); err != nil {
			t.Fatal(err)
		}
	}
	var (
		mu       sync.Mutex
		running  = map[string]int{}      // calls under way, by Outcome.ID
		returned = map[string]int{}      // calls that returned nil
		calls    = map[string][]string{} // who called, by Outcome.ID
		twice    []string
	)
	quiet := func() {
		for {
			select {
			case <-progress:
			case <-time.After(50 * time.Millisecond):
				return
			}
		}
	}
	start := func(owner string) {
		tr := billing.NewTracker(srv.Client(), billing.TrackerOptions{
			Store: shared, Clock: clock, Owner: owner, Lease: lease, ReportConcurrency: concurrency,
			OnOutcomeTimeout: 10 * time.Minute, // real time: the calls wait on the clock
			OnOutcome: func(ctx context.Context, o *billing.Outcome) error {
				began := clock.Now()
				mu.Lock()
				if running[o.ID] > 0 || returned[o.ID] > 0 {
					twice = append(twice, fmt.Sprintf("%s by %s at %s (%d under way, %d returned, calls %v)",
						o.ID, owner, began.Format(time.TimeOnly), running[o.ID], returned[o.ID], calls[o.ID]))
				}
				running[o.ID]++
				calls[o.ID] = append(calls[o.ID], owner)
				mu.Unlock()
				progressed(progress)
				for end := began.Add(callTakes); clock.Now().Before(end); {
					select {
					case <-clock.After(end.Sub(clock.Now())):
					case <-ctx.Done():
						mu.Lock()
						running[o.ID]--
						mu.Unlock()
						return ctx.Err()
					}
				}
				mu.Lock()
				running[o.ID]--
				returned[o.ID]++
				mu.Unlock()
				progressed(progress)
				return nil
			},
		})
		runCtx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- tr.Run(runCtx) }()
		t.Cleanup(func() { cancel(); <-done })
	}
	reported := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(returned)
	}
	start("first")
	quiet() // the first instance claims and starts its calls
	start("second")
	for i := 0; i < 400 && reported() < outcomes; i++ {
		quiet()
		srv.Advance(step)
	}
	quiet()
	srv.Advance(2 * lease) // any claim left would end: nothing more is reported
	quiet()
	mu.Lock()
	defer mu.Unlock()
	if len(twice) > 0 {
		t.Errorf("%d report calls of an outcome under way or reported already; the first: %s", len(twice), twice[0])
	}
	if len(returned) != outcomes {
		t.Errorf("%d of %d outcomes reported", len(returned), outcomes)
	}
	by := map[string]int{}
	for _, owners := range calls {
		for _, o := range owners {
			by[o]++
		}
	}
	t.Logf("reports made by each instance: %v", by)
}
