package proptest_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"time"

	"pgregory.net/rapid"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/storekit"
)

// whilePurgingReuse sends again, through the Tracker, the reference of a movement whose
// outcome was reported, once the clock passed Retention from its report, while a round
// of Run forgets it: the two race on the store. Whichever comes first, the reference is
// not tracked again: the send is refused (ErrAlreadyTracked when it came before the
// purge, ErrForgotten after), sends nothing, moves no money, and leaves the key's
// tombstone alone.
func (w *world) whilePurgingReuse(rt *rapid.T) {
	var reported []*movement
	w.mu.Lock()
	for _, m := range w.movements {
		sk := shapeKey(m.kind, m.ref)
		if _, ok := w.reportedAt[sk]; m.tracked && ok && !w.unreported[sk] && !w.forgotten[sk] && w.trackedKind[sk] == m.kind {
			reported = append(reported, m)
		}
	}
	w.mu.Unlock()
	if len(reported) == 0 {
		rt.Skip("nothing reported and still kept")
	}
	m := rapid.SampledFrom(reported).Draw(rt, "reused")
	w.mu.Lock()
	forgettable := w.reportedAt[shapeKey(m.kind, m.ref)].Add(retention + time.Second)
	w.mu.Unlock()
	if now := w.clock.Now(); forgettable.After(now) { // the clock runs on until a purge forgets it
		w.srv.Advance(forgettable.Sub(now))
	}
	if now := w.clock.Now(); !w.purgedAt.IsZero() && now.Sub(w.purgedAt) < purgeEvery { // and a purge is due
		w.srv.Advance(purgeEvery - now.Sub(w.purgedAt))
	}
	now := w.clock.Now()
	cut := now.Add(-retention)
	again := &movement{kind: m.kind, ref: m.ref, amount: int64(rapid.IntRange(20, 9000).Draw(rt, "amount")) * 11, tracked: true}
	was := w.sandboxState(m.ref)

	round := make(chan error, 1)
	go func() { round <- w.oneRound() }()
	err := w.sendOne(rt, again, true) // beside the round's purge
	if rerr := <-round; rerr != nil {
		rt.Fatal(rerr)
	}
	w.purgedAt = now
	w.forgetReportedBefore(cut)

	if !errors.Is(err, billing.ErrForgotten) && !errors.Is(err, billing.ErrAlreadyTracked) {
		w.violate("%s %s, reused while its purge ran, was not refused: %v", again.kind, again.ref, err)
	}
	w.refusedForgotten++
	if now := w.sandboxState(m.ref); !reflect.DeepEqual(now.records, was.records) || now.balance != was.balance {
		w.violate("%s %s, reused while its purge ran, moved money: the sandbox held %+v (balance %d), now %+v (balance %d)",
			again.kind, again.ref, was.records, was.balance, now.records, now.balance)
	}
	key := storekit.Movement{Kind: string(m.kind), ClientReference: m.ref}.Key()
	if e, err := w.store.Get(context.Background(), key); err != nil || e.Tracked || !e.Forgotten {
		w.violate("%s %s, reused while its purge ran, is not its tombstone alone: %+v, %v", m.kind, m.ref, e, err)
	}
}

// oneRound is runRound's round of Run, for a goroutine of its own: it returns an error
// where runRound fails the check.
func (w *world) oneRound() error {
	select {
	case <-w.clock.sleeping:
	default:
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.tracker.Run(ctx) }()
	var err error
	select {
	case <-w.clock.sleeping:
	case <-time.After(30 * time.Second):
		err = errors.New("run did not finish a round in 30 s of real time")
	}
	cancel()
	<-done
	return err
}

// slowReportLease is the lease of the instances of withSlowReportsOnTwoInstances, and
// slowReportTakes how long each of their OnOutcome calls takes: past a third of the
// lease, so that a claim waiting behind one call, unrenewed, would end.
const (
	slowReportLease = time.Minute
	slowReportTakes = 25 * time.Second
)

// withSlowReportsOnTwoInstances sends a few new orders, lets their callbacks settle
// them, then has the outcomes settled and not yet reported reported by two instances at
// once, each making one OnOutcome call at a time, every call taking
// 25 s of a one-minute lease, while the clock moves in steps of a quarter lease: a
// backlog held past its lease would be reported by both. OnOutcome (merchant code)
// checks that no Outcome.ID is accepted twice. The instances purge nothing, so that the
// machine's model of Retention holds; their Runs stop once a step of the clock finds no
// call to make, or after three minutes of clock, leaving what they did not report to the
// next round.
func (w *world) withSlowReportsOnTwoInstances(rt *rapid.T) {
	// The backlog: new orders, paid under references of their own, whose callbacks
	// settle them while no Run reports.
	for range rapid.IntRange(0, 8).Draw(rt, "backlog") {
		kind := rapid.SampledFrom(kinds).Draw(rt, "kind")
		o := &order{id: len(w.orders) + 1, kind: kind, amount: int64(rapid.IntRange(20, 9000).Draw(rt, "amount")) * 11}
		w.orders = append(w.orders, o)
		w.send(rt, o, fmt.Sprintf("backlog%d", o.id))
	}
	w.srv.Advance(time.Second) // the sandbox resolves them and posts their callbacks
	concurrency := rapid.IntRange(1, 2).Draw(rt, "reportConcurrency")
	progress := make(chan struct{}, 1)
	var mu sync.Mutex
	running, began := 0, 0 // calls under way; calls begun
	say := func() {
		select {
		case progress <- struct{}{}:
		default:
		}
	}
	clock := w.srv.Clock()
	slow := func(ctx context.Context, o *billing.Outcome) error {
		mu.Lock()
		running++
		began++
		mu.Unlock()
		say()
		defer func() {
			mu.Lock()
			running--
			mu.Unlock()
			say()
		}()
		for end := clock.Now().Add(slowReportTakes); clock.Now().Before(end); {
			select {
			case <-clock.After(end.Sub(clock.Now())):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return w.onOutcome(ctx, o)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i := range 2 {
		tr := billing.NewTracker(w.client, billing.TrackerOptions{
			Clock: clock, Store: observedStore{w.store, say}, Owner: fmt.Sprintf("backlog%d-%d", w.instance, i),
			Lease: slowReportLease, ReportConcurrency: concurrency, RunConcurrency: 1,
			PollInterval: time.Second, MaxPollInterval: time.Second, RunInterval: 5 * time.Second,
			OnOutcome: slow, OnOutcomeTimeout: time.Minute,
			Retention: 100 * 365 * 24 * time.Hour, // forgets nothing the model has not
		})
		wg.Add(1)
		go func() { defer wg.Done(); _ = tr.Run(ctx) }()
	}
	quiet := func() {
		for {
			select {
			case <-progress:
			case <-time.After(20 * time.Millisecond):
				return
			}
		}
	}
	// Step by a quarter lease while calls run or a step began one: once a step of the
	// clock (past RunInterval) begins none and none runs, the backlog is reported.
	quiet()
	for range 12 {
		mu.Lock()
		idle, before := running == 0, began
		mu.Unlock()
		w.srv.Advance(slowReportLease / 4)
		quiet()
		mu.Lock()
		idle = idle && running == 0 && began == before
		mu.Unlock()
		if idle {
			break
		}
	}
	cancel()
	wg.Wait()
	w.reportedAsTheStoreRecorded()
}

// reportedAsTheStoreRecorded takes, for each outcome the model saw reported, the time
// the store recorded its report, where that is later: an instance marks a report once
// OnOutcome has returned, and with the clock stepping while calls run the mark can fall
// a step after OnOutcome's own time. Retention counts from the store's record.
func (w *world) reportedAsTheStoreRecorded() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, m := range w.movements {
		sk := shapeKey(m.kind, m.ref)
		at, ok := w.reportedAt[sk]
		if !ok {
			continue
		}
		e, err := w.store.Get(context.Background(), storekit.Movement{Kind: string(m.kind), ClientReference: m.ref}.Key())
		if err == nil && e.Final != nil && e.Final.ReportedAt.After(at) {
			w.reportedAt[sk] = e.Final.ReportedAt
		}
	}
}

// observedStore says progress on the calls of a store about reports, so that a wait for
// quiet sees the claims, renewals and marks under way.
type observedStore struct {
	storekit.Store
	say func()
}

func (o observedStore) ClaimUnreported(ctx context.Context, owner string, now, leaseUntil time.Time, limit int) ([]storekit.Settlement, error) {
	defer o.say()
	return o.Store.ClaimUnreported(ctx, owner, now, leaseUntil, limit)
}

func (o observedStore) MarkReported(ctx context.Context, id string, now time.Time) error {
	defer o.say()
	return o.Store.MarkReported(ctx, id, now)
}

// RenewReport renews the claim in the store, which renews claims of reports.
func (o observedStore) RenewReport(ctx context.Context, id, owner string, leaseUntil time.Time) error {
	defer o.say()
	return o.Store.(storekit.ReportLeaseRenewer).RenewReport(ctx, id, owner, leaseUntil)
}
