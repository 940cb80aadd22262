package proptest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"pgregory.net/rapid"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
	"github.com/billingsdk/billing-go/storekit"
)

// TestMoneyTruth drives random interleavings of money movements against the sandbox and
// checks, after every step, what merchant code was told (OnOutcome and Await) against
// the sandbox's own record of each movement:
//   - a final outcome names the state the sandbox holds for that kind and reference
//     (never final while the sandbox says pending, never succeeded for a movement the
//     sandbox never accepted), its amount and transaction id when it succeeded;
//   - an outcome reports the kind the merchant tracked under that reference;
//   - OnOutcome is given each Outcome.ID once (it returned nil for it once);
//   - no canary of a forged callback appears in anything merchant code was given;
//   - no money moves twice: the sandbox holds at most one movement of a kind under a
//     reference, and an order the merchant pays again after being told it failed has at
//     most one movement that succeeded;
//   - a movement Reconcile lists as contradicted had a callback under its key refused
//     403, claiming the state the record names, at least as many times as the record
//     counts, and is not settled with Disagreed (listed there instead);
//   - an outcome reported Retention ago is forgotten, and only such a one: Await of its
//     movement says ErrForgotten, and sending or tracking its reference again is refused
//     with ErrForgotten, sends no request and moves no money, and OnOutcome is never told
//     of it again; a movement settled but not reported, or still pending, when the clock
//     passed Retention is kept, resolved and reported once;
//
// and, once time has run on after the last step, that every movement the sandbox
// resolved was reported.
func TestMoneyTruth(t *testing.T) {
	nameSeed(t)
	var checks, steps, forgetting, refused, contradicted atomic.Int64
	rapid.Check(t, func(rt *rapid.T) {
		w := newWorld(rt)
		checks.Add(1)
		rt.Repeat(map[string]func(*rapid.T){
			"start":           w.start,
			"startUntracked":  w.startUntracked,
			"trackOnly":       w.trackOnly,
			"advance":         w.advance,
			"runRound":        func(rt *rapid.T) { w.runRound(rt) },
			"await":           w.await,
			"restart":         w.restart,
			"callbackFault":   w.callbackFault,
			"statusFault":     w.statusFault,
			"sendFault":       w.sendFault,
			"replay":          w.replay,
			"forge":           w.forge,
			"failReports":     w.failReports,
			"merchantRetries": w.merchantRetries,
			// Named to sort after the others: rapid numbers the actions in name order, so
			// the fail files kept under testdata/rapid still draw the actions they drew.
			"useForgottenRef":               w.useForgottenRef,
			"waitPastRetention":             w.waitPastRetention,
			"whilePurgingReuse":             w.whilePurgingReuse,
			"withSlowReportsOnTwoInstances": w.withSlowReportsOnTwoInstances,
			"": func(rt *rapid.T) {
				steps.Add(1)
				w.checkInvariants(rt)
			},
		})
		w.drain(rt)
		w.checkInvariants(rt)
		w.checkEveryResolvedMovementReported(rt)
		if len(w.forgotten) > 0 {
			forgetting.Add(1)
		}
		refused.Add(w.refusedForgotten)
		contradicted.Add(w.contradictedSeen)
	})
	t.Logf("explored %d checks, %d states (steps); %d checks forgot outcomes, %d uses of a forgotten reference were refused, "+
		"and %d contradicted records were checked", checks.Load(), steps.Load(), forgetting.Load(), refused.Load(), contradicted.Load())
}

// The kinds a merchant sends, and the sandbox's name of each in its ledger.
var (
	kinds        = []billing.Kind{billing.KindReceive, billing.KindSend, billing.KindBankTransfer, billing.KindDirectDebit, billing.KindMandate}
	sandboxKinds = map[billing.Kind]string{
		billing.KindReceive: "receive", billing.KindSend: "send", billing.KindBankTransfer: "send-to-bank",
		billing.KindDirectDebit: "direct-debit", billing.KindMandate: "mandate",
	}
	// callbackShapes are the kinds whose callbacks look alike: the Tracker keys a
	// movement by its shape and reference.
	callbackShapes = map[billing.Kind]string{
		billing.KindReceive: "transaction", billing.KindDirectDebit: "transaction",
		billing.KindSend: "payout", billing.KindBankTransfer: "payout", billing.KindMandate: "mandate",
	}
	// sharedRefs are the references movements draw from, few so that kinds share them.
	sharedRefs = []string{"ref1", "ref2", "ref3", "ref4"}
	// Sandbox test numbers: the last digits choose the outcome.
	phoneEndings   = []string{"4567", "0001", "0002", "0003", "0004"}
	debitEndings   = []string{"4567", "0001", "0002", "0004"}
	mandateEndings = []string{"4567", "0009"}
	accountEndings = []string{"3456", "0001"}
)

// runInterval is the Tracker's RunInterval: a wait of exactly this long is Run going to
// sleep after a round, which no other wait of the Tracker matches.
const runInterval = 7 * time.Second

// retention is the Tracker's Retention: the other actions move the clock by minutes, and
// waitPastRetention past it.
const retention = 48 * time.Hour

// purgeEvery is how often Run forgets what is older than Retention: at most once a
// minute of the clock, an instance's first round included.
const purgeEvery = time.Minute

// movement is one money movement the merchant started.
type movement struct {
	kind    billing.Kind
	ref     string
	amount  int64
	order   *order // nil for one sent outside the Tracker
	tracked bool   // sent through the Tracker's helpers (or only tracked)
	sent    bool   // a request was made
	sendErr error
	// created says the request made the sandbox's movement of its kind under ref; a
	// request refused (a duplicate reference) made none, and the movement the sandbox
	// holds under that reference, if any, is another's.
	created bool
}

// order is what a merchant sells: paid again under a new reference when merchant code
// is told its last movement failed.
type order struct {
	id       int
	kind     billing.Kind
	amount   int64
	attempts []*movement
	retried  int // attempts retried after a failure
}

// report is an outcome OnOutcome accepted.
type report struct {
	o *billing.Outcome
}

// world is one run of the machine: a sandbox on one wire, a merchant endpoint for its
// callbacks, a shared store and the Tracker instance of the moment.
type world struct {
	wire     billingtest.Wire
	srv      *billingtest.Server
	client   *billing.Client
	store    storekit.Store
	clock    *roundClock
	tracker  *billing.Tracker
	handler  atomic.Pointer[http.Handler]
	endpoint string
	instance int
	serial   int

	mu      sync.Mutex
	reports []report
	failFor map[string]bool // OnOutcome fails once for these references
	// refusedRequests holds the shape keys whose tracked request the service refused,
	// making nothing: the truth of a failure the Tracker settles from the request.
	refusedRequests map[string]bool
	// asked is the amount the merchant tracked under a shape key, when sent.
	asked       map[string]int64
	violations  []string
	canaryTexts []string
	canaryInts  []int64
	// reportedAt is when OnOutcome last accepted an outcome under a shape key;
	// unreported holds the keys whose outcome OnOutcome failed on since: the store
	// holds it unreported, so it is not forgotten.
	reportedAt map[string]time.Time
	unreported map[string]bool
	// forgotten holds the shape keys whose reported outcome Run forgot after Retention.
	forgotten map[string]bool
	// refusals counts, by movement key and claimed state, the callbacks the handler
	// answered 403; contradictedSeen counts the contradicted records checked against it.
	refusals         map[storekit.MovementKey]map[string]int
	contradictedSeen int64
	began            time.Time

	// requests counts the HTTP requests the client sent the sandbox.
	requests atomic.Int64
	// purgedAt is when the instance's Run last purged its store (zero: not yet).
	purgedAt time.Time
	// refusedForgotten counts the uses of a forgotten reference checked.
	refusedForgotten int64

	movements []*movement
	orders    []*order
	// trackedKind is the kind the merchant tracked under a shape and reference.
	trackedKind map[string]billing.Kind
	debitPhones map[string]string // ending -> a number with an approved mandate
}

func newWorld(rt *rapid.T) *world {
	wire := rapid.SampledFrom(billingtest.Wires()).Draw(rt, "wire")
	srv, err := billingtest.Start(billingtest.WithManualClock(), billingtest.WithWire(wire))
	if err != nil {
		rt.Fatalf("starting the sandbox: %v", err)
	}
	rt.Cleanup(srv.Close)
	w := &world{
		wire: wire, srv: srv,
		clock:           &roundClock{Clock: srv.Clock(), sleeping: make(chan struct{}, 1)},
		store:           billing.NewMemoryStore(0),
		trackedKind:     map[string]billing.Kind{},
		failFor:         map[string]bool{},
		refusedRequests: map[string]bool{},
		asked:           map[string]int64{},
		debitPhones:     map[string]string{},
		reportedAt:      map[string]time.Time{},
		unreported:      map[string]bool{},
		forgotten:       map[string]bool{},
		refusals:        map[storekit.MovementKey]map[string]int{},
	}
	w.began = srv.Clock().Now()
	// Retries of status checks wait on the wall clock: keep them short. The transport
	// counts what reaches the sandbox: a refused movement sends nothing.
	transport := http.DefaultTransport.(*http.Transport).Clone()
	rt.Cleanup(transport.CloseIdleConnections)
	w.client = srv.Client(billing.WithRetry(2, time.Millisecond, 5*time.Millisecond), billing.WithHTTPClient(&http.Client{
		Transport: countingTransport{base: transport, n: &w.requests}, Timeout: billing.DefaultTimeout,
	}))
	endpoint := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		(*w.handler.Load()).ServeHTTP(rw, r)
	}))
	rt.Cleanup(endpoint.Close)
	w.endpoint = endpoint.URL + "/callbacks"
	w.newTracker()
	// Mandates approved outside the Tracker, for the charges.
	for i, ending := range debitEndings {
		msisdn := fmt.Sprintf("2332490%01d%s", i, ending)
		_, err := w.client.Mandates.Create(context.Background(), &billing.MandateCreateParams{ClientReferenceID: fmt.Sprintf("setup%d", i),
			CustomerMSISDN: msisdn, Channel: billing.DirectDebitChannelMTN, CallbackURL: endpoint.URL + "/setup"})
		if err != nil {
			rt.Fatalf("approving the mandate of %s: %v", msisdn, err)
		}
		w.debitPhones[ending] = msisdn
	}
	srv.Advance(time.Second)
	return w
}

// newTracker starts a Tracker instance on the shared store and points the endpoint at it.
func (w *world) newTracker() {
	w.instance++
	w.purgedAt = time.Time{}
	w.tracker = billing.NewTracker(w.client, billing.TrackerOptions{
		Clock: w.clock, Store: w.store, Owner: fmt.Sprintf("instance%d", w.instance),
		RunInterval: runInterval, OnOutcome: w.onOutcome,
		// One status check at a time, and pauses no jitter can move past the next step
		// of the clock (a second, where the clock moves by a second or more): a seed
		// replays the same run.
		RunConcurrency: 1, PollInterval: time.Second, MaxPollInterval: time.Second,
		// Every report a round claims takes a slot at once, so each is made before the
		// round's Run returns (runRound stops Run once it sleeps).
		ReportConcurrency: 100,
		// Outcomes are reported once within Retention, the window merchants dedupe
		// Outcome.ID over; the other actions' few hours of clock stay inside it, and
		// waitPastRetention passes it. A reported outcome Run forgot then leaves a
		// tombstone: its reference is never tracked, asked or reported again.
		Retention: retention,
	})
	h := w.recordingRefusals(w.tracker.Handler())
	w.handler.Store(&h)
}

// onOutcome is merchant code: it checks what it is told against the sandbox.
func (w *world) onOutcome(_ context.Context, o *billing.Outcome) error {
	key := shapeKey(o.Kind, o.ClientReference)
	w.mu.Lock()
	if w.forgotten[key] {
		w.violations = append(w.violations, fmt.Sprintf("OnOutcome was told of %s %s (%s, outcome %s) after its reported outcome was forgotten",
			o.Kind, o.ClientReference, o.State, o.ID))
	}
	if w.failFor[o.ClientReference] {
		delete(w.failFor, o.ClientReference)
		w.unreported[key] = true
		w.mu.Unlock()
		return errors.New("the order database is down")
	}
	w.mu.Unlock()
	w.checkOutcome("OnOutcome", o, o.Kind)
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, r := range w.reports {
		if r.o.ID == o.ID {
			w.violations = append(w.violations, fmt.Sprintf("OnOutcome accepted outcome %s twice (%s %s)", o.ID, o.Kind, o.ClientReference))
		}
	}
	if tracked, ok := w.trackedKind[shapeKey(o.Kind, o.ClientReference)]; ok && o.Kind != tracked {
		w.violations = append(w.violations, fmt.Sprintf("OnOutcome was told of a %s %s, but the merchant tracked a %s under that reference",
			o.Kind, o.ClientReference, tracked))
	}
	w.reports = append(w.reports, report{o: o})
	w.reportedAt[key] = w.clock.Now()
	delete(w.unreported, key)
	return nil
}

func shapeKey(kind billing.Kind, ref string) string { return callbackShapes[kind] + "/" + ref }

// truth returns the sandbox's record of the movement of kind under ref, if any.
func (w *world) truth(kind billing.Kind, ref string) (billingtest.Movement, int) {
	var found []billingtest.Movement
	for _, m := range w.srv.MovementRecords(ref) {
		if m.Kind == sandboxKinds[kind] {
			found = append(found, m)
		}
	}
	if len(found) == 0 {
		return billingtest.Movement{}, 0
	}
	return found[0], len(found)
}

// checkOutcome compares an outcome merchant code was given, as the given kind, with the
// sandbox's truth and looks in it for every canary forged so far.
func (w *world) checkOutcome(where string, o *billing.Outcome, kind billing.Kind) {
	var bad []string
	w.mu.Lock()
	refusedRequest := w.refusedRequests[shapeKey(kind, o.ClientReference)]
	asked, askedKnown := w.asked[shapeKey(kind, o.ClientReference)]
	w.mu.Unlock()
	moved := o.Succeeded() || o.Mismatched()
	switch {
	case o.Failed() && o.Source == billing.SourceRequest:
		// A failure settled from the request's refusal is the truth of that request, the
		// only one made under the reference: whatever the sandbox holds under it was made
		// by another request (a reused reference) and is not this movement's.
		if !refusedRequest {
			bad = append(bad, fmt.Sprintf("%s: %s %s failed by its request, but no request of it was refused", where, kind, o.ClientReference))
		}
	case o.IsFinal():
		m, n := w.truth(kind, o.ClientReference)
		switch {
		case n == 0 && moved:
			bad = append(bad, fmt.Sprintf("%s: %s %s %s, but the sandbox never accepted it", where, kind, o.ClientReference, o.State))
		case n == 0:
		case m.State == "pending":
			bad = append(bad, fmt.Sprintf("%s: %s %s %s while the sandbox says pending", where, kind, o.ClientReference, o.State))
		case (m.State == "succeeded") != moved:
			// Mismatched is money moved too: a success of another amount than the one
			// asked (under a reused reference, the other movement's).
			bad = append(bad, fmt.Sprintf("%s: %s %s %s, but the sandbox says %s", where, kind, o.ClientReference, o.State, m.State))
		case kind == billing.KindMandate:
		default:
			if moved && o.Amount != m.Amount {
				bad = append(bad, fmt.Sprintf("%s: %s %s %s for %d, but the sandbox moved %d", where, kind, o.ClientReference, o.State, o.Amount, m.Amount))
			}
			// A plain success is of the amount asked; mismatched is of another.
			if moved && askedKnown && o.Succeeded() != (m.Amount == asked) {
				bad = append(bad, fmt.Sprintf("%s: %s %s %s, but the merchant asked %d and the sandbox moved %d", where, kind, o.ClientReference, o.State, asked, m.Amount))
			}
			if o.TransactionID != "" && m.TransactionID != "" && o.TransactionID != m.TransactionID {
				bad = append(bad, fmt.Sprintf("%s: %s %s names transaction %q, the sandbox's is %q", where, kind, o.ClientReference, o.TransactionID, m.TransactionID))
			}
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if found := findCanary(reflect.ValueOf(o), where, w.canaryTexts, w.canaryInts); len(found) > 0 {
		bad = append(bad, fmt.Sprintf("%s: a forged value reached merchant code at %s", where, strings.Join(found, ", ")))
	}
	for _, v := range bad {
		w.violations = append(w.violations, fmt.Sprintf("%s [source %s, outcome %s]", v, o.Source, o.ID))
	}
}

func (w *world) checkInvariants(rt *rapid.T) {
	w.checkRetention()
	w.checkContradicted()
	w.mu.Lock()
	violations := slices.Clone(w.violations)
	w.mu.Unlock()
	// No money moves twice: one movement of a kind a reference, and one success an order.
	refs := map[string]bool{}
	for _, m := range w.movements {
		refs[m.ref] = true
	}
	for ref := range refs {
		count := map[string]int{}
		for _, m := range w.srv.MovementRecords(ref) {
			count[m.Kind]++
			if count[m.Kind] == 2 {
				violations = append(violations, fmt.Sprintf("the sandbox moved two %s under %s", m.Kind, ref))
			}
		}
	}
	for _, o := range w.orders {
		paid := 0
		var attempts []string
		for _, a := range o.attempts {
			m, n := w.truth(a.kind, a.ref)
			// Only the movement the attempt's own request made is the order's: under a
			// reference another system used first, the sandbox's movement is that one's.
			if n > 0 && a.created && m.State == "succeeded" {
				paid++
			}
			attempts = append(attempts, fmt.Sprintf("%s (send: %v; sandbox: %s)", a.ref, a.sendErr, m.State))
		}
		if paid > 1 {
			violations = append(violations, fmt.Sprintf("order %d (%s) was paid %d times: merchant code was told an attempt failed that did not: %s",
				o.id, o.kind, paid, strings.Join(attempts, ", ")))
		}
	}
	if len(violations) > 0 {
		rt.Fatalf("%d invariant violations on the %s wire:\n%s", len(violations), w.wire, strings.Join(violations, "\n"))
	}
}

// start sends a new order's first movement through the Tracker.
func (w *world) start(rt *rapid.T) {
	kind := rapid.SampledFrom(kinds).Draw(rt, "kind")
	ref := rapid.SampledFrom(sharedRefs).Draw(rt, "ref")
	amount := int64(rapid.IntRange(20, 9000).Draw(rt, "amount")) * 11 // above the debit minimum; never the canary
	o := &order{id: len(w.orders) + 1, kind: kind, amount: amount}
	w.orders = append(w.orders, o)
	w.send(rt, o, ref)
}

// send sends a movement of the order under ref through the Tracker and checks that one
// refused as already tracked, or as forgotten, moved nothing.
func (w *world) send(rt *rapid.T, o *order, ref string) {
	m := &movement{kind: o.kind, ref: ref, amount: o.amount, order: o, tracked: true, sent: true}
	o.attempts = append(o.attempts, m)
	w.movements = append(w.movements, m)
	_, before := w.truth(m.kind, ref)
	was := w.sandboxState(ref)
	m.sendErr = w.sendOne(rt, m, true)
	_, after := w.truth(m.kind, ref)
	m.created = after > before
	if w.checkForgottenRefusal("sending", m.kind, ref, m.sendErr, was) {
		m.sent = false
		return
	}
	if refusedSend(m.sendErr) && !m.created {
		w.mu.Lock()
		w.refusedRequests[shapeKey(m.kind, ref)] = true
		w.mu.Unlock()
	}
	if _, ok := w.trackedKind[shapeKey(m.kind, ref)]; !ok && !errors.Is(m.sendErr, billing.ErrAlreadyTracked) {
		w.trackedKind[shapeKey(m.kind, ref)] = m.kind
		w.mu.Lock()
		w.asked[shapeKey(m.kind, ref)] = m.amount
		w.mu.Unlock()
	}
	if errors.Is(m.sendErr, billing.ErrAlreadyTracked) {
		m.sent = false
		if after != before {
			w.mu.Lock()
			w.violations = append(w.violations, fmt.Sprintf("a %s %s refused as already tracked moved money", m.kind, ref))
			w.mu.Unlock()
		}
	}
}

// sendOne makes the movement's request, through the Tracker or the client alone.
func (w *world) sendOne(rt *rapid.T, m *movement, tracked bool) error {
	ctx := context.Background()
	w.serial++
	desc := fmt.Sprintf("Order %s %d", m.ref, w.serial)
	switch m.kind {
	case billing.KindReceive:
		p := &billing.ReceiveParams{Amount: m.amount, Phone: "23324123" + rapid.SampledFrom(phoneEndings).Draw(rt, "ending"),
			Provider: billing.ProviderMTN, Description: desc, ClientReference: m.ref, CallbackURL: w.endpoint}
		if tracked {
			_, err := w.tracker.Receive(ctx, p)
			return err
		}
		_, err := w.client.Payments.Receive(ctx, p)
		return err
	case billing.KindSend:
		p := &billing.SendParams{Amount: m.amount, Phone: "23320123" + rapid.SampledFrom(phoneEndings).Draw(rt, "ending"),
			Provider: billing.ProviderTelecel, Name: "Kofi", Description: desc, ClientReference: m.ref, CallbackURL: w.endpoint}
		if tracked {
			_, err := w.tracker.Send(ctx, p)
			return err
		}
		_, err := w.client.Payouts.Send(ctx, p)
		return err
	case billing.KindBankTransfer:
		p := &billing.BankTransferParams{BankCode: "300302", Amount: billing.DecimalAmount(m.amount), PrimaryCallbackURL: w.endpoint,
			Description: desc, BankAccountNumber: "144100012" + rapid.SampledFrom(accountEndings).Draw(rt, "ending"),
			ClientReference: m.ref, BankAccountName: "Adwoa Farms Ltd"}
		if tracked {
			_, err := w.tracker.SendToBank(ctx, p)
			return err
		}
		_, err := w.client.Payouts.SendToBank(ctx, p)
		return err
	case billing.KindDirectDebit:
		p := &billing.DirectDebitParams{CustomerMSISDN: w.debitPhones[rapid.SampledFrom(debitEndings).Draw(rt, "ending")],
			Channel: billing.DirectDebitChannelMTN, Amount: billing.DecimalAmount(m.amount), PrimaryCallbackURL: w.endpoint,
			Description: desc, ClientReference: m.ref}
		if tracked {
			_, err := w.tracker.Charge(ctx, p)
			return err
		}
		_, err := w.client.Mandates.Charge(ctx, p)
		return err
	default:
		// One mandate a number: each gets a number of its own.
		p := &billing.MandateCreateParams{ClientReferenceID: m.ref, Channel: billing.DirectDebitChannelMTN, CallbackURL: w.endpoint,
			CustomerMSISDN: fmt.Sprintf("23324%03d%s", w.serial%1000, rapid.SampledFrom(mandateEndings).Draw(rt, "ending"))}
		if tracked {
			_, err := w.tracker.CreateMandate(ctx, p)
			return err
		}
		_, err := w.client.Mandates.Create(ctx, p)
		return err
	}
}

// startUntracked sends a movement outside the Tracker, its callback to the same
// endpoint: another system of the merchant's, or a movement made by hand.
func (w *world) startUntracked(rt *rapid.T) {
	m := &movement{kind: rapid.SampledFrom(kinds).Draw(rt, "kind"), ref: rapid.SampledFrom(sharedRefs).Draw(rt, "ref"),
		amount: int64(rapid.IntRange(20, 9000).Draw(rt, "amount")) * 13, sent: true}
	w.movements = append(w.movements, m)
	_, before := w.truth(m.kind, m.ref)
	m.sendErr = w.sendOne(rt, m, false)
	_, after := w.truth(m.kind, m.ref)
	m.created = after > before
}

// refusedSend reports whether err is the service's definite refusal of a request:
// nothing moved.
func refusedSend(err error) bool {
	var apiErr *billing.APIError
	return errors.As(err, &apiErr) && !errors.Is(err, billing.ErrOutcomeUnknown)
}

// trackOnly tracks a movement and crashes before sending it: it must never be reported
// succeeded.
func (w *world) trackOnly(rt *rapid.T) {
	kind := rapid.SampledFrom(kinds).Draw(rt, "kind")
	ref := rapid.SampledFrom(sharedRefs).Draw(rt, "ref")
	was := w.sandboxState(ref)
	err := w.tracker.Track(context.Background(), kind, ref)
	if w.checkForgottenRefusal("tracking", kind, ref, err, was) || err != nil {
		return
	}
	if _, ok := w.trackedKind[shapeKey(kind, ref)]; !ok {
		w.trackedKind[shapeKey(kind, ref)] = kind
	}
	w.movements = append(w.movements, &movement{kind: kind, ref: ref, tracked: true})
}

func (w *world) advance(rt *rapid.T) {
	d := rapid.SampledFrom([]time.Duration{0, time.Second, 30 * time.Second, 2 * time.Minute, 5 * time.Minute, 6 * time.Minute, 11 * time.Minute}).Draw(rt, "advance")
	w.srv.Advance(d)
}

// runRound lets Run make one round: overdue status checks, OnOutcome for what is
// unreported.
func (w *world) runRound(rt *rapid.T) {
	select {
	case <-w.clock.sleeping:
	default:
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.tracker.Run(ctx) }()
	select {
	case <-w.clock.sleeping:
	case <-time.After(30 * time.Second):
		rt.Errorf("Run did not finish a round in 30 s of real time")
	}
	cancel()
	<-done
	// The round forgot, if a purge was due, every outcome reported before its cut.
	if now := w.clock.Now(); w.purgedAt.IsZero() || now.Sub(w.purgedAt) >= purgeEvery {
		w.purgedAt = now
		w.forgetReportedBefore(now.Add(-retention))
	}
}

// await asks, without waiting, what the Tracker knows of a tracked movement.
func (w *world) await(rt *rapid.T) {
	var tracked []*movement
	for _, m := range w.movements {
		if m.tracked {
			tracked = append(tracked, m)
		}
	}
	if len(tracked) == 0 {
		rt.Skip("nothing tracked")
	}
	m := rapid.SampledFrom(tracked).Draw(rt, "movement")
	w.checkAwait(m.kind, m.ref)
}

// checkAwait checks what Await answers of the movement of kind under ref, its context
// ended as soon as it would wait for the clock: ErrForgotten and no outcome exactly when
// its reported outcome was forgotten; ErrAlreadyTracked and no outcome when the reference
// is tracked as another kind whose callbacks look alike (the Tracker keys both by one
// shape and reference); else the truth.
func (w *world) checkAwait(kind billing.Kind, ref string) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w.clock.setOnWait(cancel)
	defer w.clock.setOnWait(nil)
	o, err := w.tracker.Await(ctx, kind, ref)
	w.mu.Lock()
	forgotten := w.forgotten[shapeKey(kind, ref)]
	other := w.trackedKind[shapeKey(kind, ref)]
	w.mu.Unlock()
	switch {
	case !forgotten && other != "" && other != kind:
		if !errors.Is(err, billing.ErrAlreadyTracked) || o != nil {
			w.violate("Await of %s %s, tracked as a %s, answered %s (error %v), not ErrAlreadyTracked", kind, ref, other, describe(o), err)
		}
	case forgotten && (!errors.Is(err, billing.ErrForgotten) || o != nil):
		w.violate("Await of %s %s, whose reported outcome was forgotten, answered %s (error %v), not ErrForgotten", kind, ref, describe(o), err)
	case !forgotten && errors.Is(err, billing.ErrForgotten):
		w.violate("Await of %s %s said ErrForgotten, but no outcome of it was reported Retention before a purge", kind, ref)
	case err == nil && o != nil:
		w.checkOutcome("Await", o, kind)
	}
}

func describe(o *billing.Outcome) string {
	if o == nil {
		return "no outcome"
	}
	return fmt.Sprintf("%s (source %s, outcome %s)", o.State, o.Source, o.ID)
}

func (w *world) violate(format string, args ...any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.violations = append(w.violations, fmt.Sprintf(format, args...))
}

// restart replaces the Tracker instance with a new one on the same store.
func (w *world) restart(*rapid.T) { w.newTracker() }

// waitPastRetention lets two days or so of clock run, then Run makes a round: the
// sandbox has resolved what was pending and Run settles and reports it, and forgets what
// was reported longer than Retention ago. A wait a minute short of Retention keeps what
// was reported in the minute before it, for a later round to forget.
func (w *world) waitPastRetention(rt *rapid.T) {
	d := rapid.SampledFrom([]time.Duration{retention - purgeEvery, retention + time.Second, retention + 11*time.Minute, 2 * retention}).Draw(rt, "wait")
	w.srv.Advance(d)
	w.runRound(rt)
}

// forgetReportedBefore records what a purge of the store at cut forgets: every outcome
// OnOutcome accepted before cut, unless a later one of its movement is unreported.
func (w *world) forgetReportedBefore(cut time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for key, at := range w.reportedAt {
		if at.Before(cut) && !w.unreported[key] {
			w.forgotten[key] = true
		}
	}
}

// useForgottenRef uses again the reference of a movement whose reported outcome was
// forgotten, through the Tracker: sending a movement of its kind (or of a kind whose
// callbacks look alike) under it, tracking it, or awaiting it. Each is refused with
// ErrForgotten, sends no request, moves no money, tracks nothing and tells OnOutcome
// nothing.
func (w *world) useForgottenRef(rt *rapid.T) {
	var gone []*movement
	w.mu.Lock()
	for _, m := range w.movements {
		if m.tracked && w.forgotten[shapeKey(m.kind, m.ref)] {
			gone = append(gone, m)
		}
	}
	w.mu.Unlock()
	if len(gone) == 0 {
		rt.Skip("nothing forgotten")
	}
	m := rapid.SampledFrom(gone).Draw(rt, "forgotten")
	var alike []billing.Kind
	for _, k := range kinds {
		if callbackShapes[k] == callbackShapes[m.kind] {
			alike = append(alike, k)
		}
	}
	kind := rapid.SampledFrom(alike).Draw(rt, "kind")
	again := &movement{kind: kind, ref: m.ref, amount: int64(rapid.IntRange(20, 9000).Draw(rt, "amount")) * 11, tracked: true}
	w.mu.Lock()
	told := len(w.reports)
	w.mu.Unlock()
	was := w.sandboxState(m.ref)
	ctx := context.Background()
	var err error
	switch how := rapid.SampledFrom([]string{"send", "track", "trackAmount", "await"}).Draw(rt, "how"); how {
	case "send":
		err = w.sendOne(rt, again, true)
	case "track":
		err = w.tracker.Track(ctx, kind, m.ref)
	case "trackAmount":
		err = w.tracker.TrackAmount(ctx, kind, m.ref, billing.Money{Amount: again.amount, Currency: "GHS"})
	default:
		// A bound on a failure, not a timing: an Await that tracked the movement again
		// would wait for the manual clock.
		actx, cancel := context.WithTimeout(ctx, 10*time.Second)
		var o *billing.Outcome
		o, err = w.tracker.Await(actx, kind, m.ref)
		cancel()
		if o != nil {
			w.violate("Await of %s %s, whose reported outcome was forgotten, answered %s", kind, m.ref, describe(o))
		}
	}
	w.checkForgottenRefusal("using again", kind, m.ref, err, was)
	key := storekit.Movement{Kind: string(kind), ClientReference: m.ref}.Key()
	if e, err := w.store.Get(ctx, key); err != nil || e.Tracked {
		w.violate("%s %s, forgotten, is tracked again after a refused use (store: %+v, %v)", kind, m.ref, e, err)
	}
	w.mu.Lock()
	if len(w.reports) != told {
		w.violations = append(w.violations, fmt.Sprintf("using %s %s again, forgotten, told OnOutcome of %d outcomes", kind, m.ref, len(w.reports)-told))
	}
	w.mu.Unlock()
}

// sandboxState is what the sandbox holds and was asked, as the refusal of a movement
// must leave it: its movements under a reference, the disbursement balance, and the
// count of requests the client sent.
type sandboxState struct {
	records  []billingtest.Movement
	balance  int64
	requests int64
}

func (w *world) sandboxState(ref string) sandboxState {
	return sandboxState{records: w.srv.MovementRecords(ref), balance: w.srv.DisbursementBalance(), requests: w.requests.Load()}
}

// checkForgottenRefusal checks the answer err to sending, tracking or awaiting kind under
// ref, made when the sandbox was as was: ErrForgotten exactly when its key's reported
// outcome was forgotten, and then nothing sent or moved. It reports whether the key was
// forgotten or the answer says so: the movement was not (or must not have been) tracked.
func (w *world) checkForgottenRefusal(doing string, kind billing.Kind, ref string, err error, was sandboxState) bool {
	w.mu.Lock()
	forgotten := w.forgotten[shapeKey(kind, ref)]
	w.mu.Unlock()
	saysForgotten := errors.Is(err, billing.ErrForgotten)
	switch {
	case forgotten && !saysForgotten:
		w.violate("%s %s %s, whose reported outcome was forgotten, was not refused with ErrForgotten: %v", doing, kind, ref, err)
	case !forgotten && saysForgotten:
		w.violate("%s %s %s was refused with ErrForgotten, but no outcome of it was reported Retention before a purge: %v", doing, kind, ref, err)
	}
	if forgotten {
		w.refusedForgotten++
		now := w.sandboxState(ref)
		if n := now.requests - was.requests; n != 0 {
			w.violate("%s %s %s, forgotten, sent %d requests to the service", doing, kind, ref, n)
		}
		if !reflect.DeepEqual(now.records, was.records) || now.balance != was.balance {
			w.violate("%s %s %s, forgotten, moved money: the sandbox held %+v (balance %d), now %+v (balance %d)",
				doing, kind, ref, was.records, was.balance, now.records, now.balance)
		}
	}
	return forgotten || saysForgotten
}

// checkRetention checks every tracked movement against what Run must have forgotten:
// the store holds a tombstone of its key exactly when its reported outcome was
// forgotten, and Await answers ErrForgotten then, the truth otherwise.
func (w *world) checkRetention() {
	seen := map[string]bool{}
	for _, m := range w.movements {
		sk := shapeKey(m.kind, m.ref)
		kind, ok := w.trackedKind[sk]
		if !m.tracked || !ok || seen[sk] {
			continue
		}
		seen[sk] = true
		key := storekit.Movement{Kind: string(kind), ClientReference: m.ref}.Key()
		e, err := w.store.Get(context.Background(), key)
		w.mu.Lock()
		forgotten, at := w.forgotten[sk], w.reportedAt[sk]
		w.mu.Unlock()
		switch {
		case err != nil:
			w.violate("reading %s %s from the store: %v", kind, m.ref, err)
		case forgotten && (!e.Forgotten || e.Tracked):
			w.violate("%s %s was reported at %s, longer than Retention before a purge, but the store did not forget it: %+v",
				kind, m.ref, at.Format(time.RFC3339), e)
		case !forgotten && e.Forgotten:
			w.violate("%s %s was forgotten, but no outcome of it was reported Retention before a purge (last reported: %s)",
				kind, m.ref, at.Format(time.RFC3339))
		}
		// Await answers from the store alone (no status check, no tracking) for these.
		if err == nil && (forgotten || e.Final != nil) {
			w.checkAwait(kind, m.ref)
		}
	}
}

func (w *world) callbackFault(rt *rapid.T) {
	kind := rapid.SampledFrom([]billingtest.CallbackFaultKind{billingtest.CallbackDropped, billingtest.CallbackDuplicated,
		billingtest.CallbackStale, billingtest.CallbackDelayed, billingtest.CallbackContradicted, billingtest.CallbackForgedFailure,
		billingtest.CallbackForgedAmount}).Draw(rt, "callbackFault")
	w.srv.InjectCallbackFault(billingtest.CallbackFault{Kind: kind, Reference: rapid.SampledFrom(sharedRefs).Draw(rt, "ref"),
		Nth: rapid.IntRange(1, 2).Draw(rt, "nth")})
}

var (
	statusRoutes = []string{"GET /v1/payments/{reference}", "GET /v1/merchants/{account}/transactions/status",
		"GET /v1/payments/direct-debit/status/{clientReference}", "GET /v1/mandates/preapproval/{clientReferenceId}/status"}
	sendRoutes = []string{"POST /v1/payments/receive", "POST /v1/payments/send", "POST /v1/merchants/{account}/send/bank/gh/{bankCode}",
		"POST /v1/payments/direct-debit", "POST /v1/mandates"}
	statusFaults = []billingtest.FaultKind{billingtest.FaultHTTP500, billingtest.FaultHTTP502, billingtest.FaultHTTP503,
		billingtest.FaultHTTP429, billingtest.FaultResetBeforeWork, billingtest.FaultTruncatedBody, billingtest.FaultMalformedJSON,
		billingtest.FaultCode0005, billingtest.FaultUnclassifiedAfterWork}
	sendFaults = []billingtest.FaultKind{billingtest.FaultHTTP500, billingtest.FaultHTTP503, billingtest.FaultResetBeforeWork,
		billingtest.FaultResponseLost, billingtest.FaultTruncatedBody, billingtest.FaultMalformedJSON, billingtest.FaultCode0005,
		billingtest.FaultUnclassifiedAfterWork, billingtest.FaultHTTP429AfterWork}
)

func (w *world) statusFault(rt *rapid.T) {
	w.srv.InjectFault(billingtest.Fault{Route: rapid.SampledFrom(statusRoutes).Draw(rt, "route"),
		Kind: rapid.SampledFrom(statusFaults).Draw(rt, "fault"), Nth: rapid.IntRange(1, 3).Draw(rt, "nth")})
}

func (w *world) sendFault(rt *rapid.T) {
	w.srv.InjectFault(billingtest.Fault{Route: rapid.SampledFrom(sendRoutes).Draw(rt, "route"),
		Kind: rapid.SampledFrom(sendFaults).Draw(rt, "fault"), Nth: 1})
}

// delivered returns the callbacks the sandbox posted to the endpoint so far.
func (w *world) delivered() [][]byte {
	var out [][]byte
	for _, d := range w.srv.Deliveries() {
		if d.URL == w.endpoint {
			out = append(out, d.Body)
		}
	}
	return out
}

// replay delivers again a callback the sandbox posted before: a duplicate, late and out
// of order.
func (w *world) replay(rt *rapid.T) {
	bodies := w.delivered()
	if len(bodies) == 0 {
		rt.Skip("no callback yet")
	}
	w.post(rapid.SampledFrom(bodies).Draw(rt, "body"))
}

func (w *world) post(body []byte) {
	rec := httptest.NewRecorder()
	(*w.handler.Load()).ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/callbacks", bytes.NewReader(body)))
}

// forge delivers a callback the sandbox posted with one thing changed: a field set to a
// canary, its state turned over, or its reference turned into another movement's.
func (w *world) forge(rt *rapid.T) {
	bodies := w.delivered()
	if len(bodies) == 0 {
		rt.Skip("no callback yet")
	}
	body := decode(rapid.SampledFrom(bodies).Draw(rt, "body"))
	leaves := leafPaths(body, nil)
	switch rapid.IntRange(0, 2).Draw(rt, "forgery") {
	case 0:
		path := rapid.SampledFrom(leaves).Draw(rt, "field")
		w.mu.Lock()
		canary := fmt.Sprintf("Zqx%04dFrg", len(w.canaryTexts))
		w.canaryTexts = append(w.canaryTexts, canary)
		w.canaryInts = []int64{91337, 9133700}
		w.mu.Unlock()
		value := any(canary)
		if _, isNumber := get(body, path).(json.Number); isNumber {
			value = json.Number("913.37")
		}
		body = set(body, path, value)
	case 1:
		body = turnOver(body)
	default:
		other := rapid.SampledFrom(sharedRefs).Draw(rt, "otherRef")
		for _, path := range leaves {
			if name := strings.ToLower(path[len(path)-1]); name == "clientreference" || name == "clientreferenceid" {
				body = set(body, path, other)
			}
		}
	}
	b, err := json.Marshal(body)
	if err != nil {
		rt.Fatal(err)
	}
	w.post(b)
}

// turnOver claims the opposite final state: success for failure and back.
func turnOver(body any) any {
	for _, path := range leafPaths(body, nil) {
		switch strings.ToLower(path[len(path)-1]) {
		case "responsecode":
			code := "0000"
			if get(body, path) == "0000" {
				code = "2001"
			}
			body = set(body, path, code)
		case "message":
			body = set(body, path, "success")
		case "preapprovalstatus":
			status := "APPROVED"
			if strings.EqualFold(fmt.Sprint(get(body, path)), "APPROVED") {
				status = "FAILED"
			}
			body = set(body, path, status)
		}
	}
	return body
}

// failReports makes merchant code fail once on the next outcome of a reference: it must
// be given that outcome again.
func (w *world) failReports(rt *rapid.T) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.failFor[rapid.SampledFrom(sharedRefs).Draw(rt, "failRef")] = true
}

// merchantRetries pays again, under a new reference, every order whose last movement
// merchant code was told failed (by OnOutcome, or by the send's own definite refusal).
func (w *world) merchantRetries(rt *rapid.T) {
	w.mu.Lock()
	failed := map[string]bool{}
	for _, r := range w.reports {
		if r.o.Failed() {
			failed[shapeKey(r.o.Kind, r.o.ClientReference)] = true
		}
	}
	w.mu.Unlock()
	for _, o := range w.orders {
		last := o.attempts[len(o.attempts)-1]
		refused := refusedSend(last.sendErr)
		if o.retried >= 2 || !(refused || failed[shapeKey(last.kind, last.ref)]) {
			continue
		}
		o.retried++
		w.send(rt, o, fmt.Sprintf("order%dtry%d", o.id, o.retried))
	}
}

// drain lets time run on, with Run's rounds, until every movement could have resolved.
func (w *world) drain(rt *rapid.T) {
	for range 12 {
		w.srv.Advance(3 * time.Minute)
		w.runRound(rt)
	}
}

// checkEveryResolvedMovementReported: a movement sent through the Tracker that the
// sandbox resolved has been reported to OnOutcome.
func (w *world) checkEveryResolvedMovementReported(rt *rapid.T) {
	w.mu.Lock()
	reported := map[string]bool{}
	for _, r := range w.reports {
		reported[string(r.o.Kind)+"/"+r.o.ClientReference] = true
	}
	w.mu.Unlock()
	var missing []string
	for _, m := range w.movements {
		if !m.tracked || !m.sent || w.trackedKind[shapeKey(m.kind, m.ref)] != m.kind {
			continue
		}
		if w.statusAmbiguous(m.ref) {
			continue
		}
		if t, n := w.truth(m.kind, m.ref); n > 0 && t.State != "pending" && !reported[string(m.kind)+"/"+m.ref] &&
			!w.failureUnconfirmable(m.kind, t.State) {
			missing = append(missing, fmt.Sprintf("%s %s (%s in the sandbox)", m.kind, m.ref, t.State))
		}
	}
	if len(missing) > 0 {
		rt.Fatalf("never reported to OnOutcome after 36 minutes: %s", strings.Join(missing, ", "))
	}
}

// failureUnconfirmable reports whether a movement of kind that ended in state can never
// be confirmed: on the provider's wire a receive's or a direct debit's status check
// answers 0000 Unpaid, failed or not yet, so the Tracker takes no failure of theirs (a
// forged one could make the merchant charge twice) and leaves them pending.
func (w *world) failureUnconfirmable(kind billing.Kind, state string) bool {
	return w.wire == billingtest.WireProvider && state == "failed" &&
		(kind == billing.KindReceive || kind == billing.KindDirectDebit)
}

// statusAmbiguous reports whether the service itself cannot tell two movements of ref
// apart: two kinds whose status checks share one path (on the spec's wire a receive and
// a send; on the provider's a receive and a direct debit, whose one transaction status
// answers for both, and a send and a send-to-bank, whose one payout status does) answer
// for one of them under a shared reference, and the other may stay unknown for ever.
func (w *world) statusAmbiguous(ref string) bool {
	pairs := [][2]billing.Kind{{billing.KindReceive, billing.KindSend}}
	if w.wire == billingtest.WireProvider {
		pairs = append(pairs, [2]billing.Kind{billing.KindReceive, billing.KindDirectDebit},
			[2]billing.Kind{billing.KindSend, billing.KindBankTransfer})
	}
	for _, p := range pairs {
		_, a := w.truth(p[0], ref)
		_, b := w.truth(p[1], ref)
		if a > 0 && b > 0 {
			return true
		}
	}
	return false
}

// countingTransport counts the requests sent through it.
type countingTransport struct {
	base *http.Transport
	n    *atomic.Int64
}

func (c countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.base.RoundTrip(r)
}

// roundClock is the sandbox's clock that says when Run goes to sleep after a round, and
// when anything else would wait for it.
type roundClock struct {
	billing.Clock
	sleeping chan struct{}

	mu     sync.Mutex
	onWait func()
}

func (c *roundClock) After(d time.Duration) <-chan time.Time {
	if d == runInterval {
		select {
		case c.sleeping <- struct{}{}:
		default:
		}
	} else {
		c.mu.Lock()
		onWait := c.onWait
		c.mu.Unlock()
		if onWait != nil {
			onWait()
		}
	}
	return c.Clock.After(d)
}

// setOnWait has f called whenever a wait other than Run's sleep is set (nil: none).
func (c *roundClock) setOnWait(f func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.onWait = f
}

// JSON bodies handled generically, numbers kept as written.

func decode(b []byte) any {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	_ = dec.Decode(&v)
	return v
}

// leafPaths lists the paths of every string, number, boolean and null, keys sorted.
func leafPaths(v any, prefix []string) [][]string {
	obj, ok := v.(map[string]any)
	if !ok {
		return [][]string{slices.Clone(prefix)}
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out [][]string
	for _, k := range keys {
		out = append(out, leafPaths(obj[k], append(prefix, k))...)
	}
	return out
}

func get(v any, path []string) any {
	for _, k := range path {
		obj, _ := v.(map[string]any)
		v = obj[k]
	}
	return v
}

// set returns a copy of v with the value at path replaced.
func set(v any, path []string, value any) any {
	if len(path) == 0 {
		return value
	}
	obj, _ := v.(map[string]any)
	out := make(map[string]any, len(obj))
	for k, x := range obj {
		out[k] = x
	}
	out[path[0]] = set(obj[path[0]], path[1:], value)
	return out
}

// findCanary returns the paths under v holding one of the canary texts (in any string
// or byte slice) or integers, at any depth, through unexported fields too.
func findCanary(v reflect.Value, path string, texts []string, ints []int64) []string {
	var found []string
	var walk func(v reflect.Value, path string, depth int)
	walk = func(v reflect.Value, path string, depth int) {
		if !v.IsValid() || depth > 32 {
			return
		}
		switch v.Kind() {
		case reflect.Pointer, reflect.Interface:
			if !v.IsNil() {
				walk(v.Elem(), path, depth+1)
			}
		case reflect.Struct:
			for i := range v.NumField() {
				walk(v.Field(i), path+"."+v.Type().Field(i).Name, depth+1)
			}
		case reflect.Map:
			iter := v.MapRange()
			for iter.Next() {
				walk(iter.Key(), path+"[key]", depth+1)
				walk(iter.Value(), path+"["+fmt.Sprint(iter.Key())+"]", depth+1)
			}
		case reflect.Slice, reflect.Array:
			if v.Type().Elem().Kind() == reflect.Uint8 {
				b := make([]byte, v.Len())
				for i := range b {
					b[i] = byte(v.Index(i).Uint())
				}
				if containsAny(string(b), texts) || strings.Contains(string(b), "913.37") {
					found = append(found, path)
				}
				return
			}
			for i := range v.Len() {
				walk(v.Index(i), fmt.Sprintf("%s[%d]", path, i), depth+1)
			}
		case reflect.String:
			if containsAny(v.String(), texts) {
				found = append(found, path)
			}
		case reflect.Int, reflect.Int32, reflect.Int64:
			if slices.Contains(ints, v.Int()) {
				found = append(found, path)
			}
		case reflect.Float64:
			if math.Abs(v.Float()-913.37) < 1e-9 {
				found = append(found, path)
			}
		}
	}
	walk(v, path, 0)
	return found
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// recordingRefusals is h, noting every callback it answers 403 under its movement key
// and claimed state, for checkContradicted.
func (w *world) recordingRefusals(h http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, billing.MaxEventBytes+1))
		if err != nil {
			http.Error(rw, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		sw := &statusWriter{ResponseWriter: rw}
		h.ServeHTTP(sw, r)
		if sw.status != http.StatusForbidden {
			return
		}
		ev, err := billing.ParseEvent(body)
		if err != nil || ev == nil {
			return
		}
		key := storekit.MovementKey{Callback: string(ev.Kind()), ClientReference: ev.Reference()}
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.refusals[key] == nil {
			w.refusals[key] = map[string]int{}
		}
		w.refusals[key][string(ev.State())]++
	})
}

// statusWriter remembers the status a handler answered.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

// checkContradicted checks what Reconcile lists as contradicted against the callbacks
// the handler refused: a record is audit of refusals, never of a callback taken, and a
// movement settled with Disagreed is listed there instead.
func (w *world) checkContradicted() {
	ctx := context.Background()
	for page, err := range w.tracker.ReconcilePages(ctx, w.began.Add(-time.Hour), w.clock.Now().Add(time.Hour)) {
		if err != nil {
			w.violate("Reconcile: %v", err)
			return
		}
		for _, c := range page.Contradicted {
			w.mu.Lock()
			states := maps.Clone(w.refusals[c.Key])
			w.contradictedSeen++
			w.mu.Unlock()
			total := 0
			for _, n := range states {
				total += n
			}
			switch {
			case total == 0:
				w.violate("%s %s is listed as contradicted, but no callback under its key was refused: %+v", c.Key.Callback, c.Key.ClientReference, c)
			case c.Count < 1 || c.Count > total:
				w.violate("%s %s is listed as contradicted %d times, but %d callbacks under its key were refused", c.Key.Callback, c.Key.ClientReference, c.Count, total)
			case states[c.Claimed] == 0:
				w.violate("%s %s is listed as contradicted claiming %q, but the refused callbacks claimed %v", c.Key.Callback, c.Key.ClientReference, c.Claimed, states)
			}
			if e, err := w.store.Get(ctx, c.Key); err == nil && e.Final != nil && e.Final.Disagreed {
				w.violate("%s %s is listed as contradicted though settled with Disagreed", c.Key.Callback, c.Key.ClientReference)
			}
		}
	}
}
