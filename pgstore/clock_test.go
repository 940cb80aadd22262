package pgstore_test

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
	"github.com/billingsdk/billing-go/pgstore"
	"github.com/billingsdk/billing-go/storekit"
)

// aheadClock is a clock d ahead of another.
type aheadClock struct {
	storekit.Clock
	d time.Duration
}

func (c aheadClock) Now() time.Time { return c.Clock.Now().Add(c.d) }

// dbClock gives a test's schema a clock of its own: a now() of the schema, found before
// pg_catalog's on its search path, reads a time the test sets, so the database's clock
// moves with the test's steps instead of the wall clock. The store's statements are
// the ones production runs.
type dbClock struct {
	t      testing.TB
	admin  *sql.DB
	schema string
}

func newDBClock(t testing.TB, at time.Time) *dbClock {
	admin, schema := freshSchemaNamed(t)
	for _, stmt := range []string{
		`CREATE TABLE db_clock (t timestamptz NOT NULL)`,
		`CREATE FUNCTION ` + schema + `.now() RETURNS timestamptz LANGUAGE sql STABLE
			AS 'SELECT t FROM ` + schema + `.db_clock'`,
	} {
		if _, err := admin.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	c := &dbClock{t: t, admin: admin, schema: schema}
	if _, err := admin.Exec(`INSERT INTO db_clock VALUES ($1)`, at); err != nil {
		t.Fatal(err)
	}
	return c
}

func (c *dbClock) set(at time.Time) {
	if _, err := c.admin.Exec(`UPDATE db_clock SET t = $1`, at); err != nil {
		c.t.Fatal(err)
	}
}

// open is a pool of an instance, on the database's clock.
func (c *dbClock) open() *sql.DB { return openSchema(c.t, c.schema+", pg_catalog") }

// rounds counts the claims of an instance's Run, so a test knows it looked.
type rounds struct {
	*pgstore.Store
	n atomic.Int64
}

func (r *rounds) ClaimDue(ctx context.Context, owner string, now, leaseUntil time.Time, limit int) ([]storekit.Movement, error) {
	defer r.n.Add(1) // once the claim is made: the instance's look is over
	return r.Store.ClaimDue(ctx, owner, now, leaseUntil, limit)
}

// checks records when, on the sandbox's clock, each movement was status checked.
type checks struct {
	srv *billingtest.Server
	mu  sync.Mutex
	at  map[string][]time.Time
}

func (c *checks) CallbackReceived(context.Context, billing.Event)  {}
func (c *checks) OutcomeSettled(context.Context, *billing.Outcome) {}
func (c *checks) StatusChecked(_ context.Context, _ billing.Kind, ref string, _ *billing.Outcome, _ error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at[ref] = append(c.at[ref], c.srv.Now())
}

// skewScenario runs two Trackers on one database, B's clock ten minutes ahead of A's
// (the sandbox's), the database's an hour ahead of both, over payouts whose callbacks
// never come. It returns the status checks made before the callback wait ended and the
// outcomes reported more than once.
func skewScenario(t *testing.T, callerClock bool) (early []string, twice []string) {
	srv := billingtest.NewServer(t, billingtest.WithManualClock())
	db := newDBClock(t, srv.Now().Add(time.Hour))
	const wait, lease, movements = 5 * time.Minute, 5 * time.Minute, 12
	seen := &checks{srv: srv, at: map[string][]time.Time{}}
	var (
		mu       sync.Mutex
		reported = map[string]int{}
		first    = make(chan struct{}) // the first OnOutcome call has begun
		hold     = make(chan struct{}) // ... and ends when this is closed
		once     sync.Once
	)
	clocks := []storekit.Clock{srv.Clock(), aheadClock{srv.Clock(), 10 * time.Minute}}
	var trackers []*billing.Tracker
	var stores []*rounds
	for i, clock := range clocks {
		s, err := pgstore.NewWithOptions(context.Background(), db.open(), pgstore.Options{Clock: clock, CallerClock: callerClock})
		if err != nil {
			t.Fatal(err)
		}
		r := &rounds{Store: s}
		stores = append(stores, r)
		trackers = append(trackers, billing.NewTracker(srv.Client(), billing.TrackerOptions{
			Store: r, Clock: clock, Owner: fmt.Sprintf("instance%d", i), CallbackWait: wait, Lease: lease, Observer: seen,
			OnOutcome: func(_ context.Context, o *billing.Outcome) error {
				held := false
				once.Do(func() { held = true; close(first) })
				if held {
					<-hold
				}
				mu.Lock()
				defer mu.Unlock()
				reported[o.ClientReference]++
				return nil
			},
		}))
	}
	ctx := context.Background()
	start := srv.Now()
	for i := range movements {
		ref := fmt.Sprintf("skew%02d", i)
		srv.InjectCallbackFault(billingtest.CallbackFault{Kind: billingtest.CallbackDropped, Reference: ref})
		if _, err := trackers[i%2].Send(ctx, &billing.SendParams{Amount: 100, Phone: "233201234567", Provider: billing.ProviderTelecel,
			Description: "skew", ClientReference: ref, CallbackURL: "http://127.0.0.1:1/none"}); err != nil {
			t.Fatal(err)
		}
	}
	runCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for _, tr := range trackers {
		wg.Add(1)
		go func() { defer wg.Done(); _ = tr.Run(runCtx) }()
	}
	var release sync.Once
	defer func() { release.Do(func() { close(hold) }); stop(); wg.Wait() }()

	// step moves the sandbox's clock and waits until lookers instances have looked for
	// work since (an instance that slept through is woken by a second more), then moves
	// the database's clock: it lags, so it can only make a check late, never early.
	step := func(d time.Duration, lookers int) {
		before := make([]int64, len(stores))
		for i, r := range stores {
			before[i] = r.n.Load()
		}
		srv.Advance(d)
		waitFor(t, func() bool {
			looked := 0
			for i, r := range stores {
				if r.n.Load() > before[i] {
					looked++
				}
			}
			select {
			case <-first: // one instance is held in OnOutcome: only the other looks
				lookers = min(lookers, 1)
			default:
			}
			if looked >= lookers {
				return true
			}
			srv.Advance(time.Second)
			return false
		})
		db.set(srv.Now().Add(time.Hour))
	}
	// The callback wait: nothing is due on the database's clock, though B's clock says
	// every movement A started is.
	for range 9 {
		step(30*time.Second, 2)
	}
	// Past it: the status checks, the settles and the reports. The first report is held
	// while the clock moves less than a lease: no other instance may report it.
	step(31*time.Second, 1)
	waitFor(t, func() bool {
		select {
		case <-first:
			return true
		default:
			step(time.Second, 1)
			return false
		}
	})
	step(20*time.Second, 1)
	step(20*time.Second, 1)
	release.Do(func() { close(hold) })
	waitFor(t, func() bool {
		mu.Lock()
		n := len(reported)
		mu.Unlock()
		if n < movements {
			step(time.Second, 1)
		}
		return n == movements
	})

	seen.mu.Lock()
	defer seen.mu.Unlock()
	mu.Lock()
	defer mu.Unlock()
	for i := range movements {
		ref := fmt.Sprintf("skew%02d", i)
		for _, at := range seen.at[ref] {
			if at.Before(start.Add(wait)) {
				early = append(early, fmt.Sprintf("%s at %v", ref, at.Sub(start)))
			}
		}
		if reported[ref] > 1 {
			twice = append(twice, fmt.Sprintf("%s %d times", ref, reported[ref]))
		}
	}
	return early, twice
}

// Two Trackers on one database, one with a clock ten minutes ahead: on the database's
// clock, no movement is status checked before its callback wait and no outcome is
// reported twice. On the callers' clocks (the store's CallerClock, as before the
// database's clock was used) the instance ahead checks at once what the other started.
func TestClockSkewBetweenInstances(t *testing.T) {
	early, twice := skewScenario(t, false)
	if len(early) > 0 || len(twice) > 0 {
		t.Errorf("on the database's clock: checked early %v; reported twice %v", early, twice)
	}
	early, twice = skewScenario(t, true)
	if len(early) == 0 {
		t.Error("on the callers' clocks the instance ahead did not check early: the scenario shows nothing")
	}
	t.Logf("on the callers' clocks: %d status checks early, %d outcomes reported twice", len(early), len(twice))
}

// On the database's clock, every time a caller gives comes back to it on its own clock,
// whatever the distance between the two (behind or ahead, by a second or by years), in
// every field that holds one, while leases and due times follow the database's clock.
func TestEveryTimeComesBackOnTheCallersClock(t *testing.T) {
	base := time.Date(2028, 7, 1, 12, 0, 0, 0, time.UTC)
	for _, offset := range []time.Duration{-10 * 365 * 24 * time.Hour, -time.Hour, -time.Second, 0, time.Second,
		10 * time.Minute, 365 * 24 * time.Hour} {
		t.Run(offset.String(), func(t *testing.T) {
			ctx := context.Background()
			db := newDBClock(t, base)
			caller := &movingClock{at: base.Add(offset)}
			advance := func(d time.Duration) { caller.at = caller.at.Add(d); db.set(caller.at.Add(-offset)) }
			store, err := pgstore.NewWithOptions(ctx, db.open(), pgstore.Options{Clock: caller})
			if err != nil {
				t.Fatal(err)
			}
			same := func(field string, got, want time.Time) {
				t.Helper()
				if !got.Equal(want) {
					t.Errorf("%s = %v, want %v", field, got, want)
				}
			}
			start := caller.Now()
			m := storekit.Movement{Kind: storekit.KindSend, ClientReference: "times1", StartedAt: start, Deadline: start.Add(5 * time.Minute)}
			got, _, err := store.Track(ctx, m)
			if err != nil {
				t.Fatal(err)
			}
			same("Track: StartedAt", got.StartedAt, start)
			same("Track: Deadline", got.Deadline, m.Deadline)
			same("Track: NextCheckAt", got.NextCheckAt, m.Deadline)
			c := storekit.Callback{Key: m.Key(), DedupeKey: "payout/times1", Body: []byte(`{"a":1}`), At: start}
			if claim, err := store.BeginCallback(ctx, c, "x", start.Add(time.Minute)); err != nil || claim != storekit.CallbackClaimed {
				t.Fatalf("BeginCallback = %v, %v", claim, err)
			}
			cbs, err := store.Callbacks(ctx, m.Key())
			if err != nil || len(cbs) != 1 {
				t.Fatalf("Callbacks = %+v, %v", cbs, err)
			}
			same("Callbacks: At", cbs[0].At, start)
			same("Callbacks: LastAt", cbs[0].LastAt, start)
			if _, oldest, err := store.Pending(ctx); err != nil {
				t.Fatal(err)
			} else {
				same("Pending: oldest", oldest, start)
			}

			// A minute before the deadline on both clocks: not due, whatever the caller
			// says its now is; then due at the deadline.
			advance(4 * time.Minute)
			if ms, err := store.ClaimDue(ctx, "x", caller.Now().Add(time.Hour), caller.Now().Add(2*time.Hour), 10); err != nil || len(ms) != 0 {
				t.Fatalf("claimed before the deadline on the database's clock: %+v, %v", ms, err)
			}
			advance(time.Minute)
			now := caller.Now()
			ms, err := store.ClaimDue(ctx, "x", now, now.Add(time.Minute), 10)
			if err != nil || len(ms) != 1 {
				t.Fatalf("ClaimDue at the deadline = %+v, %v", ms, err)
			}
			same("ClaimDue: LeaseUntil", ms[0].LeaseUntil, now.Add(time.Minute))
			same("ClaimDue: Deadline", ms[0].Deadline, m.Deadline)
			if err := store.RenewClaim(ctx, m.Key(), "x", now.Add(2*time.Minute)); err != nil {
				t.Fatal(err)
			}
			e, err := store.Get(ctx, m.Key())
			if err != nil {
				t.Fatal(err)
			}
			same("RenewClaim: LeaseUntil", e.Movement.LeaseUntil, now.Add(2*time.Minute))
			if err := store.Reschedule(ctx, m.Key(), "x", now.Add(3*time.Minute)); err != nil {
				t.Fatal(err)
			}
			if e, err = store.Get(ctx, m.Key()); err != nil {
				t.Fatal(err)
			}
			same("Reschedule: NextCheckAt", e.Movement.NextCheckAt, now.Add(3*time.Minute))
			same("Get: StartedAt", e.Movement.StartedAt, start)

			advance(time.Minute)
			now = caller.Now()
			learned := now.Add(-30 * time.Second) // its callback came earlier
			st, _, err := store.Settle(ctx, m.Key(), storekit.Outcome{State: storekit.StateSucceeded, Source: storekit.SourceStatusCheck, At: learned}, nil)
			if err != nil {
				t.Fatal(err)
			}
			same("Settle: At", st.Outcome.At, learned)
			ss, err := store.ClaimUnreported(ctx, "x", now, now.Add(time.Minute), 10)
			if err != nil || len(ss) != 1 {
				t.Fatalf("ClaimUnreported = %+v, %v", ss, err)
			}
			same("ClaimUnreported: At", ss[0].Outcome.At, learned)
			if err := store.RetryReport(ctx, st.ID, "x", now.Add(time.Minute)); err != nil {
				t.Fatal(err)
			}
			if ss, err := store.ClaimUnreported(ctx, "y", now.Add(time.Hour), now.Add(2*time.Hour), 10); err != nil || len(ss) != 0 {
				t.Fatalf("claimed before the retry on the database's clock: %+v, %v", ss, err)
			}
			advance(time.Minute)
			now = caller.Now()
			if err := store.MarkReported(ctx, st.ID, now); err != nil {
				t.Fatal(err)
			}
			if e, err = store.Get(ctx, m.Key()); err != nil || e.Final == nil {
				t.Fatalf("Get = %+v, %v", e, err)
			}
			same("Get: Outcome.At", e.Final.Outcome.At, st.Outcome.At)
			same("MarkReported: ReportedAt", e.Final.ReportedAt, now)
			r, err := store.Reconcile(ctx, start.Add(-time.Second), start.Add(time.Second), now)
			if err != nil || len(r.StatusCheckOnly) != 1 {
				t.Fatalf("Reconcile = %+v, %v", r, err)
			}
			same("Reconcile: At", r.StatusCheckOnly[0].Outcome.At, st.Outcome.At)
			// Forgotten once reported longer ago than the caller says, on the database's
			// clock.
			if n, err := store.Purge(ctx, now.Add(-time.Second)); err != nil || n != 0 {
				t.Fatalf("Purge before the report = %d, %v", n, err)
			}
			if n, err := store.Purge(ctx, now.Add(time.Second)); err != nil || n != 1 {
				t.Fatalf("Purge after the report = %d, %v", n, err)
			}
		})
	}
}

// movingClock is a caller's clock that the test moves.
type movingClock struct{ at time.Time }

func (c *movingClock) Now() time.Time                     { return c.at }
func (*movingClock) After(time.Duration) <-chan time.Time { return make(chan time.Time) }
