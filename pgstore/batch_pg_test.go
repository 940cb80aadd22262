package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/stdlib"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/pgstore"
	"github.com/billingsdk/billing-go/storekit"
)

// heldBatch makes the calls of fn(0..n-1) at once, each adding one write to the store's
// batched writes, and lets the writes start only when all n wait: the statements then
// hold up to a hundred writes each, of every shape the calls make.
func heldBatch(t *testing.T, s *pgstore.Store, n int, fn func(i int)) {
	t.Helper()
	queued, release := pgstore.HoldBatches(s)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() { defer wg.Done(); fn(i) }()
	}
	for queued() < n {
		runtime.Gosched()
	}
	release()
	wg.Wait()
}

// batchStart is when the movements of the batched-write tests start.
var batchStart = time.Date(2025, 6, 1, 9, 0, 0, 0, time.UTC)

// trackMany tracks n movements of kind for 100 GHS, their references ref (a format of
// their index), and returns their keys.
func trackMany(t *testing.T, s *pgstore.Store, kind string, ref string, n int) []storekit.MovementKey {
	t.Helper()
	keys := make([]storekit.MovementKey, n)
	for i := range n {
		m := storekit.Movement{Kind: kind, ClientReference: fmt.Sprintf(ref, i), Amount: 100, Currency: "GHS",
			StartedAt: batchStart, Deadline: batchStart.Add(time.Minute)}
		if _, _, err := s.Track(context.Background(), m); err != nil {
			t.Fatal(err)
		}
		keys[i] = m.Key()
	}
	return keys
}

// Settles and reports made in shared statements write what the memory store writes one
// by one, for every sequence of TestSettleMergesAsTheMemoryStore: at each step, every
// movement's outcome is settled at once, a first outcome going in the shared insert and
// any later one merging after it; then every outcome is marked reported at once.
func TestBatchedWritesAsTheMemoryStore(t *testing.T) {
	pg := newStore(t)
	mem := billing.NewMemoryStore(0)
	scenarios := mergeScenarios()
	ctx := context.Background()
	track := func(tracked bool) {
		for i, sc := range scenarios {
			if sc.trackedLast == tracked {
				continue
			}
			m := sc.movement(i)
			for _, s := range []storekit.Store{pg, mem} {
				if _, _, err := s.Track(ctx, m); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	track(false) // those tracked first
	type settled struct {
		st      storekit.Settlement
		changed bool
		err     error
	}
	for j := range 3 {
		var at []int // the scenarios with a j-th step
		for i, sc := range scenarios {
			if len(sc.steps) > j {
				at = append(at, i)
			}
		}
		got := make([]settled, len(at))
		heldBatch(t, pg, len(at), func(k int) {
			i := at[k]
			o, body := scenarios[i].outcome(j)
			st, changed, err := pg.Settle(ctx, scenarios[i].movement(i).Key(), o, body)
			got[k] = settled{st, changed, err}
		})
		for k, i := range at {
			o, body := scenarios[i].outcome(j)
			want, wantChanged, err := mem.Settle(ctx, scenarios[i].movement(i).Key(), o, body)
			if err != nil || got[k].err != nil {
				t.Fatalf("scenario %d step %d: Settle = %v; memory %v", i, j, got[k].err, err)
			}
			if got[k].changed != wantChanged || !sameSettlement(got[k].st, want) {
				t.Fatalf("scenario %+v step %d: Settle = %+v, %v; want %+v, %v", scenarios[i], j, got[k].st, got[k].changed, want, wantChanged)
			}
		}
	}
	track(true) // then the others
	reportedAt := mergeStart.Add(time.Hour)
	ids := make([]string, len(scenarios))
	for i, sc := range scenarios {
		e, err := mem.Get(ctx, sc.movement(i).Key())
		if err != nil || e.Final == nil {
			t.Fatalf("memory Get %d = %+v, %v", i, e, err)
		}
		ids[i] = e.Final.ID
		if err := mem.MarkReported(ctx, ids[i], reportedAt); err != nil {
			t.Fatal(err)
		}
	}
	errs := make([]error, len(scenarios))
	heldBatch(t, pg, len(scenarios), func(i int) { errs[i] = pg.MarkReported(ctx, ids[i], reportedAt) })
	for i, sc := range scenarios {
		if errs[i] != nil {
			t.Fatalf("MarkReported %d: %v", i, errs[i])
		}
		key := sc.movement(i).Key()
		got, err := pg.Get(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := mem.Get(ctx, key)
		if got.Tracked != want.Tracked || !sameMovement(got.Movement, want.Movement) || got.Final == nil ||
			!sameSettlement(*got.Final, *want.Final) {
			t.Fatalf("scenario %+v: Get = %+v; want %+v", sc, got, want)
		}
	}
	t.Logf("%d sequences settled and reported alike in shared statements", len(scenarios))
}

// A write the database refuses fails alone: the others of its statement are made, and
// the refused one leaves its movement as it was.
func TestBatchedWriteRefusedAlone(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	const n, bad = 20, 7
	keys := trackMany(t, s, storekit.KindSend, "alone%d", n)
	errs := make([]error, n)
	heldBatch(t, s, n, func(i int) {
		o := storekit.Outcome{State: storekit.StateSucceeded, Source: storekit.SourceStatusCheck,
			TransactionID: fmt.Sprintf("tx%d", i), Amount: 100, Currency: "GHS", At: batchStart.Add(time.Second)}
		if i == bad {
			o.TransactionID = "tx\x00" // PostgreSQL's text holds no NUL
		}
		_, _, errs[i] = s.Settle(ctx, keys[i], o, nil)
	})
	for i := range n {
		e, err := s.Get(ctx, keys[i])
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case i == bad && (errs[i] == nil || e.Final != nil):
			t.Fatalf("the refused write: Settle = %v, Final = %+v; want an error and no outcome", errs[i], e.Final)
		case i != bad && (errs[i] != nil || e.Final == nil || e.Final.Outcome.TransactionID != fmt.Sprintf("tx%d", i)):
			t.Fatalf("write %d: Settle = %v, Final = %+v", i, errs[i], e.Final)
		}
	}
	if errors.Is(errs[bad], context.Canceled) {
		t.Fatalf("the refused write failed for its context: %v", errs[bad])
	}
}

// A batched statement held up by a connection whose peer went silent holds up no other
// write: a write that comes meanwhile takes another lane, on another connection, and the
// held statement ends when its caller gives up, having written nothing.
func TestBatchedWriteBesideASilentConnection(t *testing.T) {
	proxy, cfg := startProxy(t)
	_, schema := freshSchemaNamed(t)
	cfg.RuntimeParams["search_path"] = schema
	db := stdlib.OpenDB(*cfg)
	t.Cleanup(func() { _ = db.Close() })
	db.SetMaxIdleConns(1) // the one the held statement takes
	s := newTestStore(t, db)
	pgstore.SetBatchStall(s, 0) // another lane as soon as one statement is under way
	ctx := context.Background()
	tracked := trackMany(t, s, storekit.KindSend, "silent%d", 2)
	keys := map[string]storekit.MovementKey{"heldA": tracked[0], "besideB": tracked[1]}
	outcome := storekit.Outcome{State: storekit.StateSucceeded, Source: storekit.SourceStatusCheck, Amount: 100,
		Currency: "GHS", At: batchStart.Add(time.Second)}

	proxy.FreezeOpen() // the pool's idle connection goes silent
	heldCtx, giveUp := context.WithCancel(ctx)
	held := make(chan error, 1)
	go func() { _, _, err := s.Settle(heldCtx, keys["heldA"], outcome, nil); held <- err }()
	for { // until its statement has taken it, and the silent connection with it
		if lanes, queued := pgstore.SettleLanes(s); lanes == 1 && queued == 0 && db.Stats().InUse == 1 {
			break
		}
		runtime.Gosched()
	}
	bound, cancel := context.WithTimeout(ctx, 20*time.Second) // a bound on a failure, not a timing
	defer cancel()
	if _, _, err := s.Settle(bound, keys["besideB"], outcome, nil); err != nil {
		t.Fatalf("a write beside the held statement: %v", err)
	}
	giveUp()
	if err := <-held; !errors.Is(err, context.Canceled) {
		t.Fatalf("the held write = %v, want its caller's context.Canceled", err)
	}
	proxy.Thaw()
	if e, err := s.Get(ctx, keys["heldA"]); err != nil || e.Final != nil {
		t.Fatalf("the held write was made: %+v, %v", e.Final, err)
	}
	if _, changed, err := s.Settle(ctx, keys["heldA"], outcome, nil); err != nil || !changed {
		t.Fatalf("the held write made again = %v, %v", changed, err)
	}
}

// Two instances settling the same movements at once, their writes queued in opposite
// orders, each in shared statements: every write succeeds, each movement holds the one
// outcome, and neither statement waits on the other's locks in a cycle (the batches go
// in their keys' order).
func TestBatchedWritesOfTwoInstancesOnTheSameRows(t *testing.T) {
	db, schema := freshSchemaNamed(t)
	a, b := newTestStore(t, db), newTestStore(t, openSchema(t, schema))
	ctx := context.Background()
	const n = 100
	keys := trackMany(t, a, storekit.KindReceive, "both%03d", n)
	outcome := storekit.Outcome{State: storekit.StateSucceeded, Source: storekit.SourceStatusCheck, Amount: 100,
		Currency: "GHS", At: batchStart.Add(time.Second)}
	errs := make([]error, 2*n)
	var wg sync.WaitGroup
	queue := func(s *pgstore.Store, queued func() int, order func(i int) int, at int) {
		for i := range n {
			wg.Add(1)
			k := order(i)
			go func() { defer wg.Done(); _, _, errs[at+k] = s.Settle(ctx, keys[k], outcome, nil) }()
			for queued() < i+1 { // one at a time, in this order
				runtime.Gosched()
			}
		}
	}
	queuedA, releaseA := pgstore.HoldBatches(a)
	queuedB, releaseB := pgstore.HoldBatches(b)
	queue(a, queuedA, func(i int) int { return i }, 0)
	queue(b, queuedB, func(i int) int { return n - 1 - i }, n)
	releaseA()
	releaseB()
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	for _, k := range keys {
		e, err := a.Get(ctx, k)
		if err != nil || e.Final == nil || !(e.Final.Outcome.State == storekit.StateSucceeded) || e.Final.Outcome.Amount != 100 {
			t.Fatalf("%s: %+v, %v", k.ClientReference, e.Final, err)
		}
	}
}
