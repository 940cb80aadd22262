package pgstore_test

import (
	"context"
	"database/sql"
	"fmt"
	"net/http/httptest"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
	"github.com/billingsdk/billing-go/pgstore"
)

// statements counts, with pg_stat_statements, the statements run in the test database.
// The extension must be loaded (scripts/pgtest.sh does); without it the benchmarks that
// count skip, except under CI=true, where they fail.
type statements struct {
	admin *sql.DB
}

func newStatements(tb testing.TB) *statements {
	tb.Helper()
	cfg, err := pgx.ParseConfig(databaseURL(tb))
	if err != nil {
		tb.Fatal(err)
	}
	admin := stdlib.OpenDB(*cfg)
	tb.Cleanup(func() { _ = admin.Close() })
	if _, err := admin.Exec(`SELECT pg_stat_statements_reset()`); err != nil {
		const how = "pg_stat_statements is not loaded: run scripts/pgtest.sh"
		if os.Getenv("CI") == "true" {
			tb.Fatalf("%s: %v", how, err)
		}
		tb.Skipf("%s: %v", how, err)
	}
	return &statements{admin: admin}
}

func (s *statements) reset(tb testing.TB) {
	if _, err := s.admin.Exec(`SELECT pg_stat_statements_reset()`); err != nil {
		tb.Fatal(err)
	}
}

// count returns how many statements ran since the last reset, leaving out the
// counting's own.
func (s *statements) count(tb testing.TB) int64 {
	var n int64
	if err := s.admin.QueryRow(`SELECT coalesce(sum(calls), 0) FROM pg_stat_statements
		WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
			AND query NOT ILIKE '%pg_stat_statements%'`).Scan(&n); err != nil {
		tb.Fatal(err)
	}
	return n
}

// resolutions is a sandbox and instances of a Tracker on one PostgreSQL schema, each
// with its own pool, as separate servers would be.
type resolutions struct {
	srv       *billingtest.Server
	trackers  []*billing.Tracker
	callbacks string // the first instance's callback endpoint

	mu       sync.Mutex
	reported int
	done     chan struct{}
	want     int
}

// newResolutions starts instances; with tx, OnOutcome is the store's OnOutcomeTx with a
// function that writes nothing. via opens each instance's pool on the schema, with the
// store's options; nil opens it directly, the schema on its search_path.
func newResolutions(b *testing.B, instances int, tx bool, via func(testing.TB, string) (*sql.DB, pgstore.Options)) *resolutions {
	srv := billingtest.NewServer(b, billingtest.WithManualClock())
	db, schema := freshSchemaNamed(b)
	r := &resolutions{srv: srv}
	for i := range instances {
		pool, opts := db, pgstore.Options{}
		switch {
		case via != nil:
			pool, opts = via(b, schema)
		case i > 0:
			pool = openSchema(b, schema)
		}
		// As in production: the wall clock, leases and due times on the database's.
		// The sandbox keeps its manual clock, which only settles the payouts.
		store, err := pgstore.NewWithOptions(context.Background(), pool, opts)
		if err != nil {
			b.Fatal(err)
		}
		onOutcome := func(context.Context, *billing.Outcome) error { r.note(); return nil }
		if tx {
			onOutcome = store.OnOutcomeTx(func(context.Context, *sql.Tx, *billing.Outcome) error { r.note(); return nil })
		}
		tr := billing.NewTracker(srv.Client(), billing.TrackerOptions{
			Store: store, Owner: fmt.Sprintf("instance%d", i),
			CallbackWait: time.Millisecond, RunInterval: 10 * time.Millisecond,
			OnOutcome: onOutcome,
		})
		r.trackers = append(r.trackers, tr)
	}
	endpoint := httptest.NewServer(r.trackers[0].Handler())
	b.Cleanup(endpoint.Close)
	r.callbacks = endpoint.URL
	return r
}

func (r *resolutions) expect(n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reported, r.want, r.done = 0, n, make(chan struct{})
}

func (r *resolutions) note() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reported++
	if r.reported == r.want {
		close(r.done)
	}
}

// send sends n payouts through the first instance; with dropped, their callbacks never
// come.
func (r *resolutions) send(b *testing.B, prefix string, n int, dropped bool) {
	ctx := context.Background()
	for i := range n {
		ref := fmt.Sprintf("%s%06d", prefix, i)
		if dropped {
			r.srv.InjectCallbackFault(billingtest.CallbackFault{Kind: billingtest.CallbackDropped, Reference: ref})
		}
		if _, err := r.trackers[0].Send(ctx, &billing.SendParams{Amount: 100, Phone: "233201234567", Provider: billing.ProviderTelecel,
			Description: "bench", ClientReference: ref, CallbackURL: r.callbacks}); err != nil {
			b.Fatal(err)
		}
	}
}

// run runs every instance's Run until the outcomes expected are reported.
func (r *resolutions) run(b *testing.B) {
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, tr := range r.trackers {
		wg.Add(1)
		go func() { defer wg.Done(); _ = tr.Run(ctx) }()
	}
	select {
	case <-r.done:
	case <-time.After(5 * time.Minute):
		b.Errorf("%d of %d reported in five minutes", r.reported, r.want)
	}
	stop()
	wg.Wait()
}

// BenchmarkRunResolutions measures Run on PostgreSQL: movements whose callbacks were
// dropped, each resolved by its status check against the in-process sandbox, settled
// and reported to OnOutcome, by 1 and by 8 instances looking for work every 10 ms. It
// reports resolutions per second, the SQL statements per movement (its Track included),
// and per 10,000 movements the bytes allocated and the live heap left after a GC.
func BenchmarkRunResolutions(b *testing.B) {
	runResolutions(b, nil)
}

// runResolutions is BenchmarkRunResolutions with the instances' pools opened by via.
func runResolutions(b *testing.B, via func(testing.TB, string) (*sql.DB, pgstore.Options)) {
	for _, c := range []struct {
		instances int
		tx        bool
	}{{1, false}, {8, false}, {8, true}} {
		name := fmt.Sprintf("instances=%d", c.instances)
		if c.tx {
			name += "/OnOutcomeTx"
		}
		b.Run(name, func(b *testing.B) {
			const n = 2000
			stmts := newStatements(b)
			r := newResolutions(b, c.instances, c.tx, via)
			var (
				resolved, statements int64
				elapsed              time.Duration
				allocated            uint64
				live                 int64
				ms                   runtime.MemStats
			)
			for round := 0; b.Loop(); round++ {
				b.StopTimer()
				r.expect(n)
				runtime.GC()
				runtime.ReadMemStats(&ms)
				heapBefore := int64(ms.HeapAlloc)
				stmts.reset(b)
				r.send(b, fmt.Sprintf("run%dr", round), n, true)
				r.srv.Advance(6 * time.Minute) // the sandbox settles the payouts
				runtime.ReadMemStats(&ms)
				before := ms.TotalAlloc
				b.StartTimer()
				start := time.Now()
				r.run(b)
				elapsed += time.Since(start)
				b.StopTimer()
				runtime.ReadMemStats(&ms)
				allocated += ms.TotalAlloc - before
				runtime.GC()
				runtime.ReadMemStats(&ms)
				live += int64(ms.HeapAlloc) - heapBefore
				statements += stmts.count(b)
				resolved += n
				b.StartTimer()
			}
			b.ReportMetric(float64(resolved)/elapsed.Seconds(), "resolutions/s")
			b.ReportMetric(float64(statements)/float64(resolved), "statements/movement")
			b.ReportMetric(float64(allocated)/float64(resolved)*10000/(1<<20), "MiB-allocated/10k-movements")
			b.ReportMetric(float64(live)/float64(resolved)*10000/(1<<20), "MiB-live/10k-movements")
		})
	}
}

// BenchmarkCallbackPath measures the statements of a movement resolved by its callback:
// Track (by Send), then the callback handler's dedupe claim, its settle and its finish.
func BenchmarkCallbackPath(b *testing.B) {
	const n = 500
	stmts := newStatements(b)
	r := newResolutions(b, 1, false, nil)
	var resolved, statements int64
	for round := 0; b.Loop(); round++ {
		stmts.reset(b)
		r.send(b, fmt.Sprintf("cb%dr", round), n, false)
		r.srv.Advance(0) // the sandbox posts the callbacks
		statements += stmts.count(b)
		resolved += n
	}
	b.ReportMetric(float64(statements)/float64(resolved), "statements/movement")
}

// openSchema opens another pool on schema, as another instance would.
func openSchema(tb testing.TB, schema string) *sql.DB {
	tb.Helper()
	cfg, err := pgx.ParseConfig(databaseURL(tb))
	if err != nil {
		tb.Fatal(err)
	}
	cfg.RuntimeParams["search_path"] = schema
	db := stdlib.OpenDB(*cfg)
	db.SetMaxOpenConns(20)
	db.SetMaxIdleConns(20)
	tb.Cleanup(func() { _ = db.Close() })
	return db
}

// BenchmarkBacklogDrain measures 8 instances of Run draining a backlog of 50,000
// movements. Resolutions: payouts whose callbacks never came, all overdue at once (the
// instances were down), each resolved by its status check against the in-process
// sandbox, settled and reported, as BenchmarkRunResolutions measures 2,000 (the sends
// are not timed). Reports: outcomes settled and not yet reported (OnOutcome was failing
// while callbacks settled them), written by one statement before the timed part, on 1
// and 8 instances. Each reports its rate and the SQL statements per movement.
func BenchmarkBacklogDrain(b *testing.B) {
	b.Run("resolutions/instances=8", func(b *testing.B) {
		const n = 50_000
		stmts := newStatements(b)
		r := newResolutions(b, 8, false, nil)
		var resolved, statements int64
		var elapsed time.Duration
		for round := 0; b.Loop(); round++ {
			b.StopTimer()
			r.expect(n)
			r.send(b, fmt.Sprintf("drain%dr", round), n, true)
			r.srv.Advance(6 * time.Minute) // the sandbox settles the payouts
			stmts.reset(b)
			b.StartTimer()
			start := time.Now()
			r.run(b)
			elapsed += time.Since(start)
			b.StopTimer()
			statements += stmts.count(b)
			resolved += n
			b.StartTimer()
		}
		b.ReportMetric(float64(resolved)/elapsed.Seconds(), "resolutions/s")
		b.ReportMetric(float64(statements)/float64(resolved), "statements/movement")
	})
	for _, instances := range []int{1, 8} {
		b.Run(fmt.Sprintf("reports/instances=%d", instances), func(b *testing.B) {
			const n = 50_000
			stmts := newStatements(b)
			srv := billingtest.NewServer(b)
			db, schema := freshSchemaNamed(b)
			var (
				mu       sync.Mutex
				reported int
				done     chan struct{}
			)
			var trackers []*billing.Tracker
			for i := range instances {
				pool := db
				if i > 0 {
					pool = openSchema(b, schema)
				}
				store, err := pgstore.New(context.Background(), pool)
				if err != nil {
					b.Fatal(err)
				}
				trackers = append(trackers, billing.NewTracker(srv.Client(), billing.TrackerOptions{
					Store: store, Owner: fmt.Sprintf("instance%d", i), RunInterval: 10 * time.Millisecond,
					OnOutcome: func(context.Context, *billing.Outcome) error {
						mu.Lock()
						defer mu.Unlock()
						if reported++; reported == n {
							close(done)
						}
						return nil
					},
				}))
			}
			var drained, statements int64
			var elapsed time.Duration
			for round := 0; b.Loop(); round++ {
				b.StopTimer()
				if _, err := db.Exec(`INSERT INTO billing_movements (callback_kind, client_reference, kind, started_at,
						deadline, next_check_at, outcome_id, state, code, source, settled_at, by_callback, amount, currency)
					SELECT 'payout', r, 'send', now(), now(), now(), 'payout/succeeded/' || r, 'succeeded', '0000',
						'callback', now() - interval '1 second' + i * interval '1 microsecond', true, 100, 'GHS'
					FROM generate_series(1, $1::integer) AS i, LATERAL (SELECT format('drain%sr%s', $2::integer, i) AS r) AS ref`,
					n, round); err != nil {
					b.Fatal(err)
				}
				mu.Lock()
				reported, done = 0, make(chan struct{})
				finished := done
				mu.Unlock()
				stmts.reset(b)
				b.StartTimer()
				start := time.Now()
				ctx, stop := context.WithCancel(context.Background())
				var wg sync.WaitGroup
				for _, tr := range trackers {
					wg.Add(1)
					go func() { defer wg.Done(); _ = tr.Run(ctx) }()
				}
				select {
				case <-finished:
				case <-time.After(5 * time.Minute):
					b.Errorf("%d of %d reported in five minutes", reported, n)
				}
				elapsed += time.Since(start)
				stop()
				wg.Wait()
				b.StopTimer()
				statements += stmts.count(b)
				drained += n
				b.StartTimer()
			}
			b.ReportMetric(float64(drained)/elapsed.Seconds(), "reports/s")
			b.ReportMetric(float64(statements)/float64(drained), "statements/movement")
		})
	}
}
