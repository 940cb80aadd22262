package pgstore_test

import (
	"context"
	"database/sql"
	"math"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	_ "github.com/lib/pq"

	"github.com/billingsdk/billing-go/pgstore"
	"github.com/billingsdk/billing-go/storekit"
	"github.com/billingsdk/billing-go/storetest"
)

// newLibpqStore is a store on a fresh schema through lib/pq, the other driver the
// package's documentation names: its statements' arguments are what database/sql hands
// any driver, never pgx's own types.
func newLibpqStore(t testing.TB) *pgstore.Store {
	t.Helper()
	var schema string
	if err := freshSchema(t).QueryRow(`SELECT current_schema()`).Scan(&schema); err != nil {
		t.Fatal(err)
	}
	s, err := pgstore.NewWithOptions(context.Background(), newLibpqStoreDB(t), pgstore.Options{Schema: schema, CallerClock: true})
	if err != nil {
		t.Fatalf("New on lib/pq: %v", err)
	}
	if s.HeedsContext() {
		t.Fatal("a store on lib/pq promises nothing of its context")
	}
	return s
}

// newLibpqStoreDB opens the test database through lib/pq.
func newLibpqStoreDB(t testing.TB) *sql.DB {
	t.Helper()
	cfg, err := pgx.ParseConfig(databaseURL(t))
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("postgres", cfg.ConnString())
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(20)
	db.SetMaxIdleConns(20)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// The store keeps its contract on lib/pq: every conformance case, and Trackers on it.
func TestLibpqConformance(t *testing.T) {
	databaseURL(t)
	storetest.Run(t, func(t *testing.T) storekit.Store { return newLibpqStore(t) })
}

func TestLibpqTrackerConformance(t *testing.T) {
	databaseURL(t)
	storetest.RunTracker(t, func(t *testing.T) storekit.Store { return newLibpqStore(t) })
}

// The array literals the store writes for lib/pq read, on the server, as the arrays pgx
// sends from the same slices: quotes, backslashes, braces, commas, blanks, the word NULL,
// line breaks and non-ASCII text; the extremes of int64; times to the microsecond in any
// zone; nil, empty and binary byte strings.
func TestLibpqArraysReadAsPgxSendsThem(t *testing.T) {
	lib := newLibpqStoreDB(t)
	direct := freshSchema(t)
	zone := time.FixedZone("x", -(3*3600 + 30*60))
	for _, tc := range []struct {
		cast  string
		slice any
	}{
		{"text[]", []string{"", "a", `q"uote`, `back\slash`, `\\`, "{brace}", "comma,", " spaced ", "NULL", "null", "é中", "new\nline", "tab\t"}},
		{"bigint[]", []int64{0, -1, 42, math.MaxInt64, math.MinInt64}},
		{"boolean[]", []bool{true, false}},
		{"timestamptz[]", []time.Time{time.Date(2026, 11, 29, 6, 40, 1, 123456789, time.UTC),
			time.Date(1999, 12, 31, 23, 59, 59, 999999999, zone), time.Unix(0, 0)}},
		{"bytea[]", [][]byte{nil, {}, {0, 0xff, '\\', '"', '{'}, []byte(`{"a":"b"}`)}},
		{"text[]", []string{}},
	} {
		query := `SELECT array_to_json($1::` + tc.cast + `)::text`
		var want, got string
		if err := direct.QueryRow(query, tc.slice).Scan(&want); err != nil {
			t.Fatalf("%s through pgx: %v", tc.cast, err)
		}
		if err := lib.QueryRow(query, pgstore.ArrayArgs([]any{tc.slice})...).Scan(&got); err != nil {
			t.Fatalf("%s through lib/pq: %v", tc.cast, err)
		}
		if got != want {
			t.Errorf("%s: lib/pq reads %s, pgx %s", tc.cast, got, want)
		}
	}
}
