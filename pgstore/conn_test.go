package pgstore_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/internal/goroutines"
	"github.com/billingsdk/billing-go/pgstore"
	"github.com/billingsdk/billing-go/storekit"
	"github.com/billingsdk/billing-go/storetest"
)

// storeOnOneConnection returns a store whose pool holds one connection, so that a
// connection a statement left unusable would fail the next statement.
func storeOnOneConnection(t *testing.T) (*pgstore.Store, *sql.DB) {
	t.Helper()
	db := freshSchema(t)
	s, err := pgstore.New(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	return s, db
}

// A statement whose context ends while the database is still working on it returns at
// once with the context's error, and the pool's next statement runs on a sound
// connection.
func TestAStatementEndsWhenItsContextEnds(t *testing.T) {
	s, _ := storeOnOneConnection(t)
	admin := freshSchema(t)
	const sleep = "SELECT pg_sleep(30) /* ends-with-its-context */"
	t.Cleanup(func() {
		_, _ = admin.Exec(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = $1`, sleep)
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- pgstore.Exec(s, ctx, sleep) }()
	waitUntil(t, "the statement to run", func() bool {
		var n int
		if err := admin.QueryRow(`SELECT count(*) FROM pg_stat_activity WHERE query = $1 AND state = 'active'`, sleep).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n == 1
	})
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("a statement whose context was cancelled returned %v; want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a statement whose context was cancelled was still running 10 s later")
	}
	stillOK(t, s)
}

// A context that ends while a query's rows are read, the statement already answered,
// leaves no connection behind with a deadline in the past.
func TestAContextEndingAfterItsStatementLeavesTheConnectionSound(t *testing.T) {
	s, _ := storeOnOneConnection(t)
	for _, rows := range []int{1, 3, 100_000} {
		ctx, cancel := context.WithCancel(context.Background())
		read := 0
		err := pgstore.Query(s, ctx, "SELECT generate_series(1, "+strconv.Itoa(rows)+")", func(pgstore.Scanner) error {
			read++
			cancel()
			return nil
		})
		if err != nil && !errors.Is(err, context.Canceled) {
			t.Fatalf("%d rows, cancelled after the first: %v; want success or context.Canceled", rows, err)
		}
		if read == 0 {
			t.Fatalf("%d rows: none read", rows)
		}
		stillOK(t, s)
	}
}

// Statements under a context that can end start no goroutine to watch it: the store
// registers a function on the context instead of the driver's watcher per statement
// and database/sql's per query.
func TestStatementsWatchTheirContextWithoutAGoroutine(t *testing.T) {
	s, _ := storeOnOneConnection(t)
	stillOK(t, s) // the pool's connection is open
	const statements = 40
	before := goroutines.Created(t)
	for range statements / 2 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		if err := pgstore.Exec(s, ctx, "SELECT 1"); err != nil {
			t.Fatal(err)
		}
		if err := pgstore.Query(s, ctx, "SELECT 1", func(pgstore.Scanner) error { return nil }); err != nil {
			t.Fatal(err)
		}
		cancel()
	}
	if n := goroutines.Created(t) - before; n >= statements/4 {
		t.Fatalf("%d statements under a context that can end started %d goroutines; want almost none", statements, n)
	}
}

// stillOK runs statements on s's pool under contexts that can end and that do not.
func stillOK(t *testing.T, s *pgstore.Store) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, ctx := range []context.Context{ctx, context.Background()} {
		if err := pgstore.Exec(s, ctx, "SELECT 1"); err != nil {
			t.Fatalf("the next statement: %v", err)
		}
	}
}

// waitUntil polls cond, which reads the database, for up to 10 s.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("waited 10 s for %s", what)
		}
		time.Sleep(10 * time.Millisecond) // the database's state, polled
	}
}

// A statement whose connection the driver finds broken before the statement began
// (driver.ErrBadConn: the database's end reset it while it sat in the pool) is made
// again on another connection, as database/sql makes its own.
func TestAStatementRefusedBeforeItBeganIsMadeAgain(t *testing.T) {
	proxy, through := startProxy(t)
	admin := freshSchema(t)
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "billing_test_" + hex.EncodeToString(b)
	if _, err := admin.Exec("CREATE SCHEMA " + schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = admin.Exec("DROP SCHEMA " + schema + " CASCADE") })
	db := openThrough(t, through, schema)
	db.SetMaxOpenConns(1) // the one connection is the one reset
	s, err := pgstore.NewWithOptions(context.Background(), db, pgstore.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		stillOK(t, s) // used within the second: pgx pings no connection before reusing it
		proxy.ResetAll()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		err := pgstore.Exec(s, ctx, "SELECT 1")
		cancel()
		if err != nil {
			t.Fatalf("a statement on a connection reset in the pool: %v", err)
		}
	}
}

// Every call of the store conformance suite, made as a Tracker makes its own: through
// Tracker.Store, each under a deadline of its own, so that each statement runs on a
// connection taken for it and is watched by a function on its context (conn.on).
func TestStoreConformanceUnderDeadlines(t *testing.T) {
	databaseURL(t)
	storetest.Run(t, func(t *testing.T) storekit.Store {
		c, err := billing.NewClient(billing.WithBaseURL("http://127.0.0.1:1"), billing.WithClientCredentials("id", "secret"))
		if err != nil {
			t.Fatal(err)
		}
		return billing.NewTracker(c, billing.TrackerOptions{Store: newStore(t)}).Store()
	})
}
