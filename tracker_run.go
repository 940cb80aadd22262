package billing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/billingsdk/billing-go/internal/workers"
)

// pool runs the Tracker's status checks, reports and bounded store calls on goroutines
// kept between calls (see workers.Pool), shared with pgstore's batched statements.
var pool = workers.Shared

// runBatch is how many movements, and how many outcomes, one round of Run claims.
const runBatch = 100

// Run resolves, until ctx ends, the movements of the Tracker's store that no callback
// resolved in time, on behalf of every instance sharing the store: call it on each
// instance (go tracker.Run(ctx)). Each round it claims movements whose callback is
// overdue, under a lease so that one instance checks each at a time and the claims of an
// instance that dies expire; asks their status checks (again with backoff while they say
// pending, without giving up: Reconcile lists those still pending); settles the final
// ones; and calls OnOutcome for each final outcome not yet reported, whichever instance
// learned it, until OnOutcome returns nil. OnOutcome calls run beside the rounds,
// ReportConcurrency at a time. Run claims no more unreported outcomes than it can report
// before their lease ends, judging by how long OnOutcome has taken, renews the lease of
// every outcome it holds, waiting or being reported, when the store can renew it (see
// storekit.ReportLeaseRenewer), and never starts a report whose claim it lost. It also
// forgets what is older than Retention.
//
// Store and status check errors are logged and tried again later; Run returns only when
// ctx ends, with an error matching ctx's (context.Canceled or DeadlineExceeded). Every
// store call is bounded by StoreTimeout and every OnOutcome call by OnOutcomeTimeout, so
// Run returns soon after ctx ends whatever the network does: within StoreTimeout plus 3
// seconds (13 seconds with the defaults). Claims it could not give back then end with
// their lease.
func (t *Tracker) Run(ctx context.Context) error {
	if ctx == nil {
		return errNilContext()
	}
	if shared := t.opts.shared; shared != nil {
		ctx = newSharingContext(ctx, shared)
		// Deferred first, so undone after the reports end: their calls share too. The
		// writes that go on once ctx ends run under context.WithoutCancel(ctx), a value
		// equal for equal parents, so they share as well.
		defer shared.share(ctx)()
		defer shared.share(withoutCancel(ctx))()
	}
	reports := newReporter(t.opts.ReportConcurrency, t.reportLease())
	defer reports.wait()
	if renew := t.store.renewReport(); renew != nil {
		stop := t.renewReports(ctx, reports, renew)
		defer stop()
	}
	for {
		more, wake := t.runRound(ctx, reports)
		if err := t.takePanic(); err != nil {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !more {
			_ = t.sleepUntil(ctx, t.opts.Clock.Now().Add(t.opts.RunInterval), wake)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

// runRound does one round of Run. It reports whether there may be more work at once (a
// claim came back full), and a channel closed when an OnOutcome call ends if reports
// were left unclaimed for want of a free call.
func (t *Tracker) runRound(ctx context.Context, reports *reporter) (more bool, wake <-chan struct{}) {
	now := t.opts.Clock.Now()
	due, err := t.store.ClaimDue(ctx, t.opts.Owner, now, now.Add(t.opts.Lease), runBatch)
	if err != nil && ctx.Err() == nil {
		t.opts.Logger.LogAttrs(ctx, slog.LevelWarn, "billing tracker: claiming overdue movements failed", slog.String("error", err.Error()))
	}
	held, stopHolding := t.holdClaims(ctx, due)
	t.each(ctx, len(due), func(i int) { t.check(ctx, due[i], held, i) }, func(from int) { t.release(ctx, due[from:]) })
	stopHolding()
	more = len(due) == runBatch

	if t.opts.OnOutcome != nil && ctx.Err() == nil {
		wake = reports.ended() // before claiming, so that no call ending meanwhile is missed
		if n := reports.free(); n > 0 {
			now = t.opts.Clock.Now()
			lease := t.reportLease()
			unreported, err := t.store.ClaimUnreported(ctx, t.opts.Owner, now, now.Add(lease), n)
			if err != nil && ctx.Err() == nil {
				t.opts.Logger.LogAttrs(ctx, slog.LevelWarn, "billing tracker: claiming unreported outcomes failed", slog.String("error", err.Error()))
			}
			for i := range unreported {
				s := &unreported[i] // the closures share the claimed slice rather than each a copy
				reports.start(ctx, s.ID, now.Add(lease), func(c *reportClaim, goOn func()) (kept bool) {
					kept = true // a panic before the call was given up on leaves the report to this goroutine
					defer t.recoverPanic("a report of Run")
					return t.report(ctx, reports, s, c, goOn)
				}, func() { t.giveBackReport(ctx, s.ID, s.Key) }, t.clockNow)
			}
			more = more || (len(unreported) == n && reports.free() > 0)
			if len(unreported) < n {
				wake = nil // none left waiting for a free call
			}
		}
	}
	if ctx.Err() == nil {
		t.purgeIfDue(ctx)
	}
	return more, wake
}

// each calls fn(0..n-1), RunConcurrency at a time, and waits for all. Once ctx has
// ended it starts no more: it calls stopped with the first it did not start, beside the
// calls still under way, so that the two take no longer than the longer of them. The
// calls are made by RunConcurrency pooled goroutines, each taking the next index when
// its call returns: a round hands work to a goroutine once per goroutine, not once
// per call.
func (t *Tracker) each(ctx context.Context, n int, fn func(i int), stopped func(from int)) {
	if n == 0 {
		return
	}
	var next atomic.Int64 // the next index to call; n or more once none is left
	var wg sync.WaitGroup
	workers := min(n, t.opts.RunConcurrency)
	wg.Add(workers)
	for range workers {
		pool.Go(func() {
			defer wg.Done()
			for ctx.Err() == nil {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				t.eachCall(fn, i)
			}
		})
	}
	stoppedDone := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(stoppedDone)
		if from := int(min(next.Swap(int64(n)), int64(n))); from < n {
			stopped(from)
		}
	})
	wg.Wait()
	if !stop() {
		<-stoppedDone
	}
}

// eachCall is one call of each, a panic in it noted for Run to return.
func (t *Tracker) eachCall(fn func(i int), i int) {
	defer t.recoverPanic("a status check of Run")
	fn(i)
}

// release gives back, all at once, the claims of movements Run will not check because
// ctx ended, so that another instance may take them without waiting for their lease.
// Each call is bounded by StoreTimeout.
func (t *Tracker) release(ctx context.Context, ms []movement) {
	if len(ms) == 0 {
		return
	}
	var wg sync.WaitGroup
	for _, m := range ms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer t.recoverPanic("a claim release of Run")
			if err := t.store.ReleaseClaim(withoutCancel(ctx), m.Key(), t.opts.Owner); err != nil && !errors.Is(err, errLeaseLost) {
				t.opts.Logger.LogAttrs(ctx, slog.LevelWarn, "billing tracker: releasing a claim failed",
					slog.String("kind", string(m.Kind)), slog.String("clientReference", m.ClientReference), slog.String("error", err.Error()))
			}
		}()
	}
	wg.Wait()
}

// reporter runs Run's OnOutcome calls beside its rounds, a limited number at once, and
// holds no more claims of outcomes than it can report before their lease ends: as many
// as its calls can make within half a lease at the pace the last calls took, at most
// runBatch, and no more than one per call until a call has been timed.
//
// A report waits for a call in a queue, not on a goroutine of its own: the goroutine
// that ends a call makes the next report waiting, so that a claim of many outcomes keeps
// no more goroutines than calls, and none is started for each.
type reporter struct {
	wg          sync.WaitGroup
	concurrency int
	lease       time.Duration

	mu       sync.Mutex
	running  int                     // goroutines making reports, at most concurrency
	queue    []queuedReport          // waiting for a call to end from queue[head], the first claimed first
	head     int                     // the first waiting
	unwatch  func() bool             // stops watching the queue's context (see start)
	freed    chan struct{}           // closed when a call ends; made by ended, for its callers
	claims   map[string]*reportClaim // the outcomes held, waiting for a call or being reported
	pending  int                     // reports taken on and not finished
	pace     time.Duration           // how long a call takes, on the Clock: see took
	measured bool                    // a call was timed
}

// queuedReport is a report taken on by start.
type queuedReport struct {
	id       string
	c        *reportClaim
	fn       reportFunc
	giveBack func()
	now      func() time.Time
}

// reportFunc makes the report held by the claim c on the calling goroutine, and
// returns true once it is finished. It returns false when it gave the report over to
// another goroutine, one that did not wait for an OnOutcome call past its deadline:
// that goroutine finishes the report, then calls goOn, which goes on with the reports
// waiting.
type reportFunc func(c *reportClaim, goOn func()) (kept bool)

// reportClaim is the claim of one outcome held by a reporter.
type reportClaim struct {
	until    time.Time     // when its lease ends, as last claimed or renewed
	lost     chan struct{} // closed when the store said another owner holds it
	lostOnce sync.Once
}

// lose records that the claim was lost.
func (c *reportClaim) lose() { c.lostOnce.Do(func() { close(c.lost) }) }

// isLost reports whether the claim was lost.
func (c *reportClaim) isLost() bool {
	select {
	case <-c.lost:
		return true
	default:
		return false
	}
}

func newReporter(limit int, lease time.Duration) *reporter {
	return &reporter{concurrency: limit, lease: lease, claims: map[string]*reportClaim{}}
}

// free is how many more outcomes may be claimed now: what the calls can report within
// half a lease, less the outcomes held.
func (r *reporter) free() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.capacityLocked() - r.pending
}

// capacityLocked is how many outcomes the reporter may hold at once.
func (r *reporter) capacityLocked() int {
	switch {
	case !r.measured:
		return r.concurrency // one per call until the calls' pace is known
	case r.pace <= 0:
		return runBatch
	}
	perCall := int(r.lease / 2 / r.pace)
	return min(runBatch, r.concurrency*max(1, perCall))
}

// took records that a call took d: the pace follows a slower call at once and a faster
// one by an eighth of the difference, so that a burst of slow calls shrinks the claims.
func (r *reporter) took(d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case !r.measured || d > r.pace:
		r.pace = d
	default:
		r.pace -= (r.pace - d) / 8
	}
	r.measured = true
}

// held returns the claims held now.
func (r *reporter) held() map[string]*reportClaim {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]*reportClaim, len(r.claims))
	for id, c := range r.claims {
		out[id] = c
	}
	return out
}

// renewed records that the claim c, still held, now lasts until until.
func (r *reporter) renewed(c *reportClaim, until time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if until.After(c.until) {
		c.until = until
	}
}

// start runs fn, the report of outcome id claimed until until, once fewer than the
// limit of calls are under way, unless id is held already: a store may let a claim go
// while its report is under way (a settle that changed it), and this instance makes one
// call of an outcome at a time. A report is started only while its claim holds (not
// lost, its lease not ended by now()): one that waited longer is dropped, and the
// instance holding it now reports it. Once ctx has ended, a report still waiting for a
// call calls giveBack instead of fn, so that its claim is not left to its lease.
func (r *reporter) start(ctx context.Context, id string, until time.Time, fn reportFunc, giveBack func(), now func() time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c, busy := r.claims[id]; busy {
		if until.After(c.until) {
			c.until = until // claimed again: it lasts that long at least
		}
		return
	}
	q := queuedReport{id: id, c: &reportClaim{until: until, lost: make(chan struct{})}, fn: fn, giveBack: giveBack, now: now}
	r.claims[id] = q.c
	r.pending++
	r.wg.Add(1)
	// A call free is taken even when ctx has just ended, so that a report claimed in the
	// round Run ended on is made when it can be (its call then has the grace of a
	// stopping Run); one left waiting is given back.
	if r.running < r.concurrency {
		r.running++
		pool.Go(func() { r.run(q) })
		return
	}
	r.queue = append(r.queue, q)
	if r.unwatch == nil {
		r.unwatch = context.AfterFunc(ctx, r.giveBackQueued)
	}
}

// run makes the report q, then the reports waiting, one after the other, until none
// waits, or until a report is given over to another goroutine, which goes on with them.
func (r *reporter) run(q queuedReport) {
	for {
		r.mu.Lock()
		ended := !q.now().Before(q.c.until)
		r.mu.Unlock()
		if !ended && !q.c.isLost() { // else another instance may hold it now: it reports it
			if !q.fn(q.c, func() { r.goOn(q) }) {
				return
			}
		}
		next, more := r.finished(q)
		if !more {
			return
		}
		q = next
	}
}

// goOn finishes the report q, given over by the goroutine that began it, and makes the
// reports waiting on the calling goroutine.
func (r *reporter) goOn(q queuedReport) {
	if next, more := r.finished(q); more {
		r.run(next)
	}
}

// finished records that the report q is finished, and takes the next report waiting if
// any; if none, the goroutine that made q no longer counts as making reports.
func (r *reporter) finished(q queuedReport) (next queuedReport, more bool) {
	r.mu.Lock()
	r.finishedLocked(q.id)
	next, more = r.nextLocked()
	if !more {
		r.running--
	}
	r.mu.Unlock()
	r.wg.Done()
	return next, more
}

// nextLocked takes the first report waiting, if any.
func (r *reporter) nextLocked() (queuedReport, bool) {
	if r.head == len(r.queue) {
		return queuedReport{}, false
	}
	q := r.queue[r.head]
	r.queue[r.head] = queuedReport{}
	r.head++
	if r.head == len(r.queue) { // emptied: its room serves the next claims
		r.queue, r.head = r.queue[:0], 0
		r.unwatch()
		r.unwatch = nil
	}
	return q, true
}

// giveBackQueued gives back, each on a goroutine of its own and all at once, the claims
// of the reports waiting when the context of Run has ended.
func (r *reporter) giveBackQueued() {
	r.mu.Lock()
	queue := r.queue[r.head:]
	r.queue, r.head, r.unwatch = nil, 0, nil
	r.mu.Unlock()
	for _, q := range queue {
		pool.Go(func() {
			defer r.wg.Done()
			q.giveBack()
			r.mu.Lock()
			defer r.mu.Unlock()
			r.finishedLocked(q.id)
		})
	}
}

// finishedLocked forgets the report of id and wakes those waiting for a call to end.
func (r *reporter) finishedLocked(id string) {
	delete(r.claims, id)
	r.pending--
	if r.freed != nil {
		close(r.freed)
		r.freed = nil
	}
}

// ended returns a channel closed when the next call ends.
func (r *reporter) ended() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.freed == nil {
		r.freed = make(chan struct{})
	}
	return r.freed
}

// wait waits for every call started.
func (r *reporter) wait() { r.wg.Wait() }

// renewReports renews, every third of a lease on the Clock until ctx ends, the lease of
// every outcome the reporter holds, waiting for a slot or being reported, and marks
// lost those the store says another owner holds. It returns a function that stops it
// and waits for it.
func (t *Tracker) renewReports(ctx context.Context, r *reporter, renew func(ctx context.Context, id, owner string, until time.Time) error) (stop func()) {
	return t.everyThirdOfALease(ctx, "the report lease renewal of Run", func(until time.Time) bool {
		var each sync.WaitGroup
		for id, c := range r.held() {
			if c.isLost() {
				continue
			}
			each.Add(1)
			pool.Go(func() {
				defer each.Done()
				defer t.recoverPanic("a report lease renewal of Run")
				switch err := renew(ctx, id, t.opts.Owner, until); {
				case err == nil:
					r.renewed(c, until)
				case errors.Is(err, errLeaseLost):
					c.lose() // the report, or its recording, learns it too
				}
			})
		}
		each.Wait()
		return true
	})
}

// everyThirdOfALease calls step with the end of a new lease every third of a lease, on
// the Clock, until stop is called, ctx ends or step returns false; name says what it
// renews in the log of a recovered panic. stop waits for the last step to end.
func (t *Tracker) everyThirdOfALease(ctx context.Context, name string, step func(until time.Time) bool) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	pool.Go(func() {
		defer wg.Done()
		defer t.recoverPanic(name)
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.opts.Clock.After(t.opts.Lease / 3):
			}
			select {
			case <-done: // a clock that wakes every waiter may wake this one after stop
				return
			default:
			}
			if !step(t.opts.Clock.Now().Add(t.opts.Lease)) {
				return
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

// clockNow is the Clock's now.
func (t *Tracker) clockNow() time.Time { return t.opts.Clock.Now() }

// check asks the status check of a claimed movement and settles it or reschedules it.
// A checkout still unpaid CheckoutExpiry after its creation settles expired; one the
// service never showed to exist by then settles unknown.
func (t *Tracker) check(ctx context.Context, m movement, held *claimsHeld, i int) {
	key := m.Key()
	// The log's attributes are built only for a line that is written.
	attrs := func(more ...slog.Attr) []slog.Attr {
		return append([]slog.Attr{slog.String("kind", string(m.Kind)), slog.String("clientReference", m.ClientReference)}, more...)
	}
	o, err := movementStatus(ctx, t.client, m)
	t.observeStatusCheck(ctx, m.Kind, m.ClientReference, o, err)
	held.done(i)
	// Store writes go on once ctx ends, so that the claim is not left to expire.
	wctx := withoutCancel(ctx)
	now := t.opts.Clock.Now()
	if final := t.checkoutGivenUp(m, o, err, now); final != nil && ctx.Err() == nil {
		o, err = final, nil
	}
	switch {
	case err == nil && o.IsFinal():
		o.At = now
		if _, err := t.settle(wctx, key, *o, nil); err != nil {
			t.opts.Logger.LogAttrs(ctx, slog.LevelWarn, "billing tracker: settling failed", attrs(slog.String("error", err.Error()))...)
		}
		return
	case ctx.Err() != nil:
		if err := t.store.ReleaseClaim(wctx, key, t.opts.Owner); err != nil && !errors.Is(err, errLeaseLost) {
			t.opts.Logger.LogAttrs(wctx, slog.LevelWarn, "billing tracker: releasing a claim failed", attrs(slog.String("error", err.Error()))...)
		}
		return
	case err != nil && !worthPollingAgain(err):
		t.opts.Logger.LogAttrs(ctx, slog.LevelError, "billing status check refused; asking again later", attrs(slog.String("error", err.Error()))...)
	case err != nil:
		t.opts.Logger.LogAttrs(ctx, slog.LevelWarn, "billing status check failed; asking again later", attrs(slog.String("error", err.Error()))...)
	}
	next := now.Add(jitter(t.backoff(m.Checks)))
	if err := t.store.RescheduleAfter(wctx, key, t.opts.Owner, next, t.checkAttempt(o, err, now)); err != nil && !errors.Is(err, errLeaseLost) {
		t.opts.Logger.LogAttrs(ctx, slog.LevelWarn, "billing tracker: rescheduling failed", attrs(slog.String("error", err.Error()))...)
	}
}

// backoff is the pause after the attempts-th failed try: PollInterval doubling, up to
// MaxPollInterval.
func (t *Tracker) backoff(attempts int) time.Duration {
	d := t.opts.PollInterval
	for range attempts {
		if d >= t.opts.MaxPollInterval {
			break
		}
		d *= 2
	}
	return min(d, t.opts.MaxPollInterval)
}

// claimsHeld are the claims of a round's movements whose status checks are under way,
// renewed together by one renewer (holdClaims), each known by its index in the round.
type claimsHeld struct {
	ms   []movement
	mu   sync.Mutex
	over []bool // by index: no longer renewed
}

// done stops the renewal of the round's i-th claim: its status check has answered, or
// its claim was lost.
func (h *claimsHeld) done(i int) {
	if h == nil {
		return
	}
	h.mu.Lock()
	h.over[i] = true
	h.mu.Unlock()
}

// list returns the indexes of the claims still held.
func (h *claimsHeld) list() []int {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []int
	for i, over := range h.over {
		if !over {
			out = append(out, i)
		}
	}
	return out
}

// holdClaims renews, every third of a lease on the Clock, the claim of each of ms until
// done is called for it, so that a slow status check keeps its movement: one renewer
// for the round, the renewals of a step side by side, each bounded by StoreTimeout. A
// claim the store says is lost is renewed no more (the settle or reschedule that follows
// learns it too); any other error is tried again at the next step. stop ends the
// renewals and waits for the last step.
func (t *Tracker) holdClaims(ctx context.Context, ms []movement) (held *claimsHeld, stop func()) {
	held = &claimsHeld{ms: ms, over: make([]bool, len(ms))}
	if len(ms) == 0 {
		return held, func() {}
	}
	stop = t.everyThirdOfALease(ctx, "a lease renewal of Run", func(until time.Time) bool {
		var each sync.WaitGroup
		for _, i := range held.list() {
			each.Add(1)
			pool.Go(func() {
				defer each.Done()
				defer t.recoverPanic("a lease renewal of Run")
				if err := t.store.RenewClaim(ctx, held.ms[i].Key(), t.opts.Owner, until); errors.Is(err, errLeaseLost) {
					held.done(i)
				}
			})
		}
		each.Wait()
		return true
	})
	return held, stop
}

// reportLease is how long a claim of ClaimUnreported lasts: Lease, renewed while the
// report is under way when the store can renew it; otherwise long enough for OnOutcome
// to reach its deadline and the report to be recorded.
func (t *Tracker) reportLease() time.Duration {
	if t.store.renewReport() != nil {
		return t.opts.Lease
	}
	return max(t.opts.Lease, t.opts.OnOutcomeTimeout+stopGrace+4*t.opts.StoreTimeout)
}

// report calls OnOutcome for a settlement held by the claim c, and records the result.
// The claim is renewed while it is held (renewReports) when the store can renew it;
// otherwise it lasts until c.until. It returns false when the call ran past its
// deadline and the report was given over to another goroutine (see callOnOutcome).
func (t *Tracker) report(ctx context.Context, r *reporter, s *settlement, c *reportClaim, goOn func()) (kept bool) {
	r.mu.Lock()
	until := c.until
	r.mu.Unlock()
	if t.store.renewReport() != nil {
		until = time.Time{} // renewed: it ends only when lost says so
	}
	o := settledOutcome(s, s.Outcome.Kind)
	began := t.opts.Clock.Now()
	return t.callOnOutcome(ctx, o, func(finished bool, err error) {
		if finished {
			r.took(t.opts.Clock.Now().Sub(began))
		}
		t.recordReport(ctx, s, until, c, finished, err)
	}, goOn)
}

// recordReport records the result of the OnOutcome call of s: reported when it
// returned nil, to be made again otherwise.
func (t *Tracker) recordReport(ctx context.Context, s *settlement, until time.Time, c *reportClaim, finished bool, err error) {
	if err == nil {
		t.markReported(ctx, s.ID, until, c.lost)
		return
	}
	now := t.opts.Clock.Now()
	next := now.Add(jitter(t.backoff(s.ReportAttempts)))
	switch {
	case ctx.Err() != nil && finished:
		next = now // stopping: let another instance take it at once
	case ctx.Err() == nil:
		t.opts.Logger.LogAttrs(ctx, slog.LevelWarn, "billing OnOutcome failed; it will be called again",
			slog.String("id", s.ID), slog.Int("attempts", s.ReportAttempts+1), slog.String("error", err.Error()))
	}
	if err := t.store.RetryReportAfter(withoutCancel(ctx), s.ID, t.opts.Owner, next, t.reportAttempt(s.Key, err, now)); err != nil && !errors.Is(err, errLeaseLost) {
		t.opts.Logger.LogAttrs(ctx, slog.LevelWarn, "billing tracker: recording a failed report failed", slog.String("id", s.ID), slog.String("error", err.Error()))
	}
}

// giveBackReport gives back the claim of a report Run will not make because ctx ended,
// so that another instance may take it without waiting for its lease (counted as one
// attempt). The write is bounded by StoreTimeout.
func (t *Tracker) giveBackReport(ctx context.Context, id string, key movementKey) {
	now := t.opts.Clock.Now()
	if err := t.store.RetryReportAfter(withoutCancel(ctx), id, t.opts.Owner, now, t.reportAttempt(key, errReportGivenBack, now)); err != nil && !errors.Is(err, errLeaseLost) {
		t.opts.Logger.LogAttrs(ctx, slog.LevelWarn, "billing tracker: giving back a report's claim failed", slog.String("id", id), slog.String("error", err.Error()))
	}
}

// markReported records that OnOutcome accepted the outcome id. MarkReported is
// idempotent, so it is tried again, with backoff on the Clock, until the store records
// it: a write that failed, or whose answer was lost, does not lead to a second OnOutcome
// call. It stops when the claim is lost (lost closed) or about to end (until, when not
// zero), and after one last try once ctx has ended; the outcome is then reported again
// once the claim ends.
func (t *Tracker) markReported(ctx context.Context, id string, until time.Time, lost <-chan struct{}) {
	pause := min(time.Second, t.opts.Lease/4)
	for attempt := 1; ; attempt++ {
		wctx, stopping := ctx, ctx.Err() != nil
		if stopping {
			wctx = withoutCancel(ctx)
		}
		err := t.store.MarkReported(wctx, id, t.opts.Clock.Now())
		if err == nil {
			return
		}
		next := t.opts.Clock.Now().Add(pause)
		if stopping || (!until.IsZero() && !next.Add(t.opts.StoreTimeout).Before(until)) {
			t.opts.Logger.LogAttrs(ctx, slog.LevelWarn, "billing tracker: recording a report failed; it will be made again",
				slog.String("id", id), slog.Int("attempts", attempt), slog.String("error", err.Error()))
			return
		}
		t.opts.Logger.LogAttrs(ctx, slog.LevelWarn, "billing tracker: recording a report failed; trying again",
			slog.String("id", id), slog.Int("attempts", attempt), slog.String("error", err.Error()))
		_ = t.sleepUntil(ctx, next, lost)
		select {
		case <-lost:
			t.opts.Logger.LogAttrs(ctx, slog.LevelWarn, "billing tracker: the claim of a report was lost before it was recorded; it will be made again",
				slog.String("id", id))
			return
		default:
		}
		pause = min(2*pause, t.opts.Lease/3)
	}
}

// The states of an OnOutcome call (see callOnOutcome).
const (
	callUnderWay int32 = iota
	callReturned
	callGivenUp
)

// callOnOutcome calls OnOutcome under OnOutcomeTimeout on the calling goroutine, a panic
// turned into an error, then calls then with its result (finished true) and returns
// true. A call that has not returned by its deadline (or, once ctx ended, within a
// short grace) is given up on: another goroutine calls then with finished false and an
// error, then goOn; the call runs on, unobserved, and callOnOutcome returns false when
// it returns, having done nothing more. So a report's call costs no hand-off between
// goroutines, and one that never returns stalls no other report.
func (t *Tracker) callOnOutcome(ctx context.Context, o *Outcome, then func(finished bool, err error), goOn func()) (kept bool) {
	octx, cancel := t.opts.deadline(ctx, t.opts.OnOutcomeTimeout)
	var state atomic.Int32
	returned := make(chan struct{}) // closed when the call returns, for a watch in its grace
	giveUp := func(err error) {
		func() {
			defer t.recoverPanic("a report of Run")
			cancel()
			then(false, err)
		}()
		goOn() // the report is finished, whether then panicked or not
	}
	unwatch := context.AfterFunc(octx, func() {
		if state.Load() != callUnderWay {
			return // it returned as its context ended
		}
		if ctx.Err() == nil {
			t.opts.Logger.LogAttrs(ctx, slog.LevelWarn, "billing OnOutcome did not return within its deadline",
				slog.String("id", o.ID), slog.Duration("timeout", t.opts.OnOutcomeTimeout))
		}
		// Its context has ended: give it a moment to return.
		gctx, gcancel := t.opts.deadline(withoutCancel(ctx), stopGrace)
		select {
		case <-returned:
		case <-gctx.Done():
		}
		gcancel()
		if state.CompareAndSwap(callUnderWay, callGivenUp) {
			giveUp(fmt.Errorf("billing: OnOutcome did not return within %s: %w", t.opts.OnOutcomeTimeout, context.DeadlineExceeded))
		}
	})
	exited := true // until OnOutcome returns or panics: runtime.Goexit ends the goroutine
	defer func() {
		if exited && state.CompareAndSwap(callUnderWay, callGivenUp) {
			unwatch()
			go giveUp(errors.New("billing: OnOutcome called runtime.Goexit"))
		}
	}()
	err := t.onOutcome(octx, o)
	exited = false
	if !state.CompareAndSwap(callUnderWay, callReturned) {
		return false // given up on: its report went on without it
	}
	close(returned)
	unwatch()
	cancel()
	then(true, err)
	return true
}

// onOutcome calls OnOutcome, turning a panic into an error.
func (t *Tracker) onOutcome(ctx context.Context, o *Outcome) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("billing: OnOutcome panicked: %v", p)
		}
	}()
	return t.opts.OnOutcome(ctx, o)
}
