package pgstore_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/billingsdk/billing-go/pgstore"
	"github.com/billingsdk/billing-go/storekit"
	"github.com/billingsdk/billing-go/storetest"
)

// databaseURL is the database the tests use: BILLING_TEST_DATABASE_URL, else
// DATABASE_URL. Without one they skip, except under CI=true, where a skipped store test
// would pass a build that never tested the store.
func databaseURL(t testing.TB) string {
	t.Helper()
	return testEnv(t, "no PostgreSQL: set BILLING_TEST_DATABASE_URL, or run scripts/pgtest.sh from the repository root",
		"BILLING_TEST_DATABASE_URL", "DATABASE_URL")
}

// testEnv is the first of the variables names that is set. With none, the test skips
// saying how, except under CI=true, where it fails.
func testEnv(t testing.TB, how string, names ...string) string {
	t.Helper()
	for _, name := range names {
		if v := os.Getenv(name); v != "" {
			return v
		}
	}
	missing(t, how)
	return ""
}

// missing skips the test for want of a dependency, saying how to give it, except under
// CI=true, where it fails.
func missing(t testing.TB, how string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatal(how)
	}
	t.Skip(how)
}

// freshSchema creates an empty schema of its own for one test, dropped at its end, and
// returns a pool whose connections use it.
func freshSchema(t testing.TB) *sql.DB {
	t.Helper()
	cfg, err := pgx.ParseConfig(databaseURL(t))
	if err != nil {
		t.Fatalf("BILLING_TEST_DATABASE_URL: %v", err)
	}
	admin := stdlib.OpenDB(*cfg)
	t.Cleanup(func() { _ = admin.Close() })
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "billing_test_" + hex.EncodeToString(b)
	ctx := context.Background()
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("creating schema %s: %v", schema, err)
	}
	t.Cleanup(func() {
		if _, err := admin.ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("dropping schema %s: %v", schema, err)
		}
	})
	own := cfg.Copy()
	own.RuntimeParams["search_path"] = schema
	db := stdlib.OpenDB(*own)
	db.SetMaxOpenConns(20)
	db.SetMaxIdleConns(20)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func newStore(t testing.TB) *pgstore.Store {
	t.Helper()
	return newTestStore(t, freshSchema(t))
}

func TestStoreConformance(t *testing.T) {
	databaseURL(t)
	storetest.Run(t, func(t *testing.T) storekit.Store { return newStore(t) })
}

// Instances starting together on an empty database all succeed, and the schema is
// created once.
func TestNewConcurrentlyOnAnEmptyDatabase(t *testing.T) {
	db := freshSchema(t)
	const instances = 8
	var wg sync.WaitGroup
	errs := make([]error, instances)
	for i := range instances {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = pgstore.New(context.Background(), db)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("concurrent New: %v", err)
	}
	if _, applied := recordedVersions(t, db); len(applied) != pgstore.Version() || applied[len(applied)-1] != pgstore.Version() {
		t.Fatalf("versions applied %v; want 1 to %d, once each", applied, pgstore.Version())
	}
	// And again on a database already migrated.
	if _, err := pgstore.New(context.Background(), db); err != nil {
		t.Fatalf("New on a migrated database: %v", err)
	}
}

func TestNewRefusesANewerSchema(t *testing.T) {
	db := freshSchema(t)
	if _, err := pgstore.New(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO billing_schema_migrations (version) VALUES (99)`); err != nil {
		t.Fatal(err)
	}
	if _, err := pgstore.New(context.Background(), db); err == nil {
		t.Fatal("New accepted a schema newer than it knows")
	}
	var ve *storekit.ValidationError
	if _, err := pgstore.New(context.Background(), nil); !errors.As(err, &ve) {
		t.Fatalf("New(nil) = %v, want a *storekit.ValidationError", err)
	}
}

// Two stores on one database are two instances: what one settles, the other reads, and
// a claim by one holds the other off.
func TestTwoInstancesShareOneDatabase(t *testing.T) {
	db := freshSchema(t)
	ctx := context.Background()
	a, b := newTestStore(t, db), newTestStore(t, db)
	t0 := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	m := storekit.Movement{Kind: storekit.KindSend, ClientReference: "shared1", StartedAt: t0, Deadline: t0.Add(5 * time.Minute)}
	if _, _, err := a.Track(ctx, m); err != nil {
		t.Fatal(err)
	}
	got, err := b.ClaimDue(ctx, "b", t0.Add(5*time.Minute), t0.Add(6*time.Minute), 10)
	if err != nil || len(got) != 1 {
		t.Fatalf("b's claim = %+v, %v", got, err)
	}
	if got, err := a.ClaimDue(ctx, "a", t0.Add(5*time.Minute), t0.Add(6*time.Minute), 10); err != nil || len(got) != 0 {
		t.Fatalf("a claimed what b holds: %+v, %v", got, err)
	}
	o := storekit.Outcome{State: storekit.StateSucceeded, Source: storekit.SourceStatusCheck, At: t0.Add(5 * time.Minute)}
	if _, _, err := b.Settle(ctx, m.Key(), o, nil); err != nil {
		t.Fatal(err)
	}
	e, err := a.Get(ctx, m.Key())
	if err != nil || e.Final == nil || !(e.Final.Outcome.State == storekit.StateSucceeded) || e.Final.Outcome.Kind != storekit.KindSend {
		t.Fatalf("a reads %+v, %v", e, err)
	}
}

// benchStore is a store in a fresh schema for a benchmark.
func benchStore(b *testing.B) *pgstore.Store {
	return newStore(b)
}

// BenchmarkMovement measures the store's cost per movement on PostgreSQL: track it,
// record its callback's delivery, settle it, finish the callback.
func BenchmarkMovement(b *testing.B) {
	s := benchStore(b)
	ctx := context.Background()
	t0 := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	body := []byte(`{"ResponseCode":"0000","Data":{"ClientReference":"x","TransactionId":"t","Amount":50}}`)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ref := fmt.Sprintf("bench%09d", i)
		now := t0.Add(time.Duration(i) * time.Millisecond)
		m := storekit.Movement{Kind: storekit.KindReceive, ClientReference: ref, StartedAt: now, Deadline: now.Add(5 * time.Minute)}
		if _, _, err := s.Track(ctx, m); err != nil {
			b.Fatal(err)
		}
		c := storekit.Callback{Key: m.Key(), DedupeKey: "transaction/" + ref, Body: body, At: now}
		if _, err := s.BeginCallback(ctx, c, "bench", now.Add(time.Minute)); err != nil {
			b.Fatal(err)
		}
		o := storekit.Outcome{State: storekit.StateSucceeded, Source: storekit.SourceCallback, Amount: 5000, At: now}
		if _, _, err := s.Settle(ctx, m.Key(), o, body); err != nil {
			b.Fatal(err)
		}
		if err := s.FinishCallback(ctx, c.DedupeKey, "bench", true, now); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTrack, BenchmarkDeliver and BenchmarkSettle split BenchmarkMovement's cost.
func BenchmarkTrack(b *testing.B) {
	s := benchStore(b)
	ctx := context.Background()
	t0 := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m := storekit.Movement{Kind: storekit.KindSend, ClientReference: fmt.Sprintf("t%09d", i), StartedAt: t0, Deadline: t0.Add(5 * time.Minute)}
		if _, _, err := s.Track(ctx, m); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDeliver(b *testing.B) {
	s := benchStore(b)
	ctx := context.Background()
	t0 := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	body := []byte(`{"ResponseCode":"0000","Data":{"ClientReference":"x","TransactionId":"t","Amount":50}}`)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ref := fmt.Sprintf("d%09d", i)
		k := storekit.MovementKey{Callback: storekit.CallbackPayout, ClientReference: ref}
		c := storekit.Callback{Key: k, DedupeKey: "payout/" + ref, Body: body, At: t0}
		if _, err := s.BeginCallback(ctx, c, "bench", t0.Add(time.Minute)); err != nil {
			b.Fatal(err)
		}
		if err := s.FinishCallback(ctx, c.DedupeKey, "bench", true, t0); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSettle(b *testing.B) {
	s := benchStore(b)
	ctx := context.Background()
	t0 := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	keys := make([]storekit.MovementKey, b.N)
	for i := range keys {
		m := storekit.Movement{Kind: storekit.KindSend, ClientReference: fmt.Sprintf("s%09d", i), StartedAt: t0, Deadline: t0.Add(5 * time.Minute)}
		if _, _, err := s.Track(ctx, m); err != nil {
			b.Fatal(err)
		}
		keys[i] = m.Key()
	}
	o := storekit.Outcome{State: storekit.StateSucceeded, Source: storekit.SourceStatusCheck, Amount: 5000, At: t0}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, err := s.Settle(ctx, keys[i], o, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// newTestStore is the store of a test on db. The tests drive their instances with one
// manual clock, which the database's now() does not follow: the store compares the
// times they give.
func newTestStore(tb testing.TB, db *sql.DB) *pgstore.Store {
	tb.Helper()
	s, err := pgstore.NewWithOptions(context.Background(), db, pgstore.Options{CallerClock: true})
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// The raw callback that settled an outcome is kept for audit, and only for audit: the
// outcome read back is its fields, never the stored bytes parsed again as an event.
func TestStoredCallbackIsNotParsedBack(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	t0 := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	body := []byte(`{"ResponseCode":"0000","Data":{"ClientReference":"audit1","TransactionId":"forged","Amount":999}}`)
	m := storekit.Movement{Kind: storekit.KindReceive, ClientReference: "audit1", StartedAt: t0, Deadline: t0.Add(5 * time.Minute)}
	if _, _, err := s.Track(ctx, m); err != nil {
		t.Fatal(err)
	}
	o := storekit.Outcome{State: storekit.StateSucceeded, Source: storekit.SourceCallback, TransactionID: "truth", Amount: 5000, At: t0}
	if _, _, err := s.Settle(ctx, m.Key(), o, body); err != nil {
		t.Fatal(err)
	}
	e, err := s.Get(ctx, m.Key())
	if err != nil || e.Final == nil {
		t.Fatalf("Get = %+v, %v", e, err)
	}
	if string(e.Final.Body) != string(body) {
		t.Fatalf("kept body %q", e.Final.Body)
	}
	if got := e.Final.Outcome; got.TransactionID != "truth" || got.Amount != 5000 {
		t.Fatalf("outcome read back = %+v; want its own fields and no event parsed from the body", got)
	}
}

// BenchmarkClaimDue measures a claim of a full batch of due movements (the Tracker's
// round): the statement, and reading its rows of every column into movements. Each
// iteration claims the same movements, overdue, again: the leases of the one before
// have ended.
func BenchmarkClaimDue(b *testing.B) {
	s := benchStore(b)
	ctx := context.Background()
	t0 := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	const claim = 100 // the Tracker's round
	for i := range claim {
		m := storekit.Movement{Kind: storekit.KindSend, ClientReference: fmt.Sprintf("c%09d", i), StartedAt: t0, Deadline: t0.Add(time.Minute)}
		if _, _, err := s.Track(ctx, m); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		now := t0.Add(time.Hour + time.Duration(i)*2*time.Second)
		claimed, err := s.ClaimDue(ctx, "bench", now, now.Add(time.Second), claim)
		if err != nil {
			b.Fatal(err)
		}
		if len(claimed) != claim {
			b.Fatalf("claimed %d of %d", len(claimed), claim)
		}
	}
}
