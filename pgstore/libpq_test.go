package pgstore_test

import (
	"context"
	"database/sql"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"strconv"
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

// The array literals the store sends, through pgx as through lib/pq, read on the server
// as the arrays pgx sends from the same slices in its binary form: every kind of slice
// the store writes as a literal, with the edge cases (quotes, backslashes, braces,
// commas, blanks, the word NULL, line breaks and non-ASCII text; the extremes of int64;
// times to the microsecond in any zone; nil, empty and binary byte strings) and random
// slices of each.
func TestArraysInTextFormReadAsPgxSendsThem(t *testing.T) {
	lib := newLibpqStoreDB(t)
	direct := freshSchema(t)
	zone := time.FixedZone("x", -(3*3600 + 30*60))
	fixed := map[reflect.Type][]any{
		reflect.TypeFor[[]string](): {[]string{"", "a", `q"uote`, `back\slash`, `\\`, "{brace}", "comma,", " spaced ", "NULL", "null", "é中", "new\nline", "tab\t"}, []string{}},
		reflect.TypeFor[[]int64]():  {[]int64{0, -1, 42, math.MaxInt64, math.MinInt64}},
		reflect.TypeFor[[]bool]():   {[]bool{true, false}},
		reflect.TypeFor[[]time.Time](): {[]time.Time{time.Date(2026, 11, 29, 6, 40, 1, 123456789, time.UTC),
			time.Date(1999, 12, 31, 23, 59, 59, 999999999, zone), time.Unix(0, 0)}},
		reflect.TypeFor[[][]byte](): {[][]byte{nil, {}, {0, 0xff, '\\', '"', '{'}, []byte(`{"a":"b"}`)}},
	}
	seed, samples := uint64(39), 100
	if n, err := strconv.ParseUint(os.Getenv("BILLING_ARRAY_SEED"), 10, 64); err == nil {
		seed = n
	}
	if n, err := strconv.Atoi(os.Getenv("BILLING_ARRAY_SAMPLES")); err == nil {
		samples = n
	}
	t.Logf("seed %d (BILLING_ARRAY_SEED), %d random slices of each kind (BILLING_ARRAY_SAMPLES)", seed, samples)
	r := rand.New(rand.NewPCG(seed, seed))
	text := func() string {
		const alphabet = "aZ09 ,{}\"\\\n\tNUL'é中😀"
		runes := []rune(alphabet)
		b := make([]rune, r.IntN(12))
		for i := range b {
			b[i] = runes[r.IntN(len(runes))]
		}
		return string(b)
	}
	random := map[reflect.Type]func() any{
		reflect.TypeFor[[]string](): func() any { return sliceOf(r, text) },
		reflect.TypeFor[[]int64](): func() any {
			return sliceOf(r, func() int64 { return int64(r.Uint64()) >> r.IntN(64) })
		},
		reflect.TypeFor[[]bool](): func() any { return sliceOf(r, func() bool { return r.IntN(2) == 0 }) },
		reflect.TypeFor[[]time.Time](): func() any {
			return sliceOf(r, func() time.Time {
				return time.Unix(r.Int64N(1<<36)-1<<35, r.Int64N(1e9)).In(time.FixedZone("z", (r.IntN(49)-24)*1800))
			})
		},
		reflect.TypeFor[[][]byte](): func() any {
			return sliceOf(r, func() []byte {
				if r.IntN(5) == 0 {
					return nil
				}
				b := make([]byte, r.IntN(8))
				for i := range b {
					b[i] = byte(r.Uint32())
				}
				return b
			})
		},
	}
	for kind, cast := range pgstore.ArrayCasts() {
		gen, ok := random[kind]
		if !ok || len(fixed[kind]) == 0 {
			t.Fatalf("no slices of %v (%s) to send: add its cases", kind, cast)
		}
		slices := fixed[kind]
		for range samples {
			slices = append(slices, gen())
		}
		query := `SELECT array_to_json($1::` + cast + `)::text`
		for _, slice := range slices {
			var want, viaPgx, viaLib string
			if err := direct.QueryRow(query, slice).Scan(&want); err != nil {
				t.Fatalf("%s %#v in pgx's binary form: %v", cast, slice, err)
			}
			literal := pgstore.ArrayArgs([]any{slice})
			if err := direct.QueryRow(query, literal...).Scan(&viaPgx); err != nil {
				t.Fatalf("%s %#v as %q through pgx: %v", cast, slice, literal[0], err)
			}
			if err := lib.QueryRow(query, literal...).Scan(&viaLib); err != nil {
				t.Fatalf("%s %#v as %q through lib/pq: %v", cast, slice, literal[0], err)
			}
			if viaPgx != want || viaLib != want {
				t.Fatalf("%s %#v as %q: pgx reads %s, lib/pq %s; pgx's binary form %s", cast, slice, literal[0], viaPgx, viaLib, want)
			}
		}
	}
}

// sliceOf is a slice of up to 6 values of gen.
func sliceOf[T any](r *rand.Rand, gen func() T) []T {
	s := make([]T, r.IntN(7))
	for i := range s {
		s[i] = gen()
	}
	return s
}
