package pgstore_test

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/pgstore"
	"github.com/billingsdk/billing-go/storekit"
)

// Every sequence of up to three final outcomes, of every final state from every source,
// settles in PostgreSQL as in the memory store, which applies storekit.MergeOutcome: the
// same outcome stands or replaces the last under the same ID, with every field it
// carries, through the first outcome's single statement and the merging transaction
// alike, for every kind (a checkout's key included), tracked before or after.
func TestSettleMergesAsTheMemoryStore(t *testing.T) {
	pg := newStore(t)
	mem := billing.NewMemoryStore(0)
	scenarios := mergeScenarios()
	ctx := context.Background()
	run := func(i int, sc mergeScenario) error {
		m := sc.movement(i)
		kind := m.Kind
		track := func() error {
			for _, s := range []storekit.Store{pg, mem} {
				if _, _, err := s.Track(ctx, m); err != nil {
					return err
				}
			}
			return nil
		}
		if !sc.trackedLast {
			if err := track(); err != nil {
				return err
			}
		}
		for j := range sc.steps {
			o, body := sc.outcome(j)
			got, gotChanged, err := pg.Settle(ctx, m.Key(), o, body)
			if err != nil {
				return err
			}
			want, wantChanged, err := mem.Settle(ctx, m.Key(), o, body)
			if err != nil {
				return err
			}
			if gotChanged != wantChanged || !sameSettlement(got, want) {
				return fmt.Errorf("%s %+v step %d: Settle = %+v, %v; want %+v, %v", kind, sc, j, got, gotChanged, want, wantChanged)
			}
		}
		if sc.trackedLast {
			if err := track(); err != nil {
				return err
			}
		}
		got, err := pg.Get(ctx, m.Key())
		if err != nil {
			return err
		}
		want, err := mem.Get(ctx, m.Key())
		if err != nil {
			return err
		}
		if got.Tracked != want.Tracked || !sameMovement(got.Movement, want.Movement) || got.Final == nil ||
			want.Final == nil || !sameSettlement(*got.Final, *want.Final) {
			return fmt.Errorf("%s %+v: Get = %+v; want %+v", kind, sc, got, want)
		}
		return nil
	}
	// A few workers: the sequences touch keys of their own.
	const workers = 4
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(scenarios); i += workers {
				if err := run(i, scenarios[i]); err != nil {
					errs[w] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d sequences settled alike", len(scenarios))
}

// mergeStep is one final outcome of a sequence.
type mergeStep struct {
	state string
	src   string
}

// mergeScenario is a sequence of final outcomes of one movement.
type mergeScenario struct {
	steps       []mergeStep
	trackedLast bool // the callbacks came before Track
}

var mergeStart = time.Date(2025, 5, 1, 8, 0, 0, 0, time.UTC)

// mergeScenarios are every sequence of up to three final outcomes of every final state
// from every source, those of one or two also with Track after them.
func mergeScenarios() []mergeScenario {
	states := []string{storekit.StateSucceeded, storekit.StateMismatched, storekit.StateFailed,
		storekit.StateExpired, storekit.StateUnknown}
	sources := []string{storekit.SourceCallback, storekit.SourceStatusCheck, storekit.SourceRequest}
	var all []mergeStep
	for _, st := range states {
		for _, src := range sources {
			all = append(all, mergeStep{st, src})
		}
	}
	var scenarios []mergeScenario
	for _, a := range all {
		scenarios = append(scenarios, mergeScenario{[]mergeStep{a}, false}, mergeScenario{[]mergeStep{a}, true})
		for _, b := range all {
			scenarios = append(scenarios, mergeScenario{[]mergeStep{a, b}, false}, mergeScenario{[]mergeStep{a, b}, true})
			for _, c := range all {
				scenarios = append(scenarios, mergeScenario{[]mergeStep{a, b, c}, false})
			}
		}
	}
	return scenarios
}

// movement is the i-th scenario's movement, of every kind in turn (a checkout's key
// included).
func (sc mergeScenario) movement(i int) storekit.Movement {
	kinds := []string{storekit.KindReceive, storekit.KindDirectDebit, storekit.KindSend, storekit.KindBankTransfer,
		storekit.KindMandate, storekit.KindCheckout}
	return storekit.Movement{Kind: kinds[i%len(kinds)], ClientReference: fmt.Sprintf("merge%d", i), Amount: 5000,
		Currency: "GHS", StartedAt: mergeStart, Deadline: mergeStart.Add(time.Minute)}
}

// outcome is the scenario's j-th outcome and its callback's body, every field its own.
func (sc mergeScenario) outcome(j int) (storekit.Outcome, []byte) {
	st := sc.steps[j]
	o := storekit.Outcome{State: st.state, Source: st.src, Code: fmt.Sprintf("%04d", j),
		TransactionID: fmt.Sprintf("tx%d", j), ExternalTransactionID: fmt.Sprintf("ext%d", j),
		Amount: int64(1000 * (j + 1)), Charges: int64(j), Currency: []string{"GHS", "NGN", "USD"}[j],
		ServiceReference: fmt.Sprintf("ref_%d", j), At: mergeStart.Add(time.Duration(j+1) * time.Second)}
	var body []byte
	if st.src == storekit.SourceCallback {
		body = fmt.Appendf(nil, `{"step":%d}`, j)
	}
	return o, body
}

// sameSettlement compares two settlements, their times by instant.
func sameSettlement(a, b storekit.Settlement) bool {
	if !a.Outcome.At.Equal(b.Outcome.At) || !a.ReportedAt.Equal(b.ReportedAt) {
		return false
	}
	a.Outcome.At, b.Outcome.At, a.ReportedAt, b.ReportedAt = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	return reflect.DeepEqual(a, b)
}

// sameMovement compares two movements, their times by instant.
func sameMovement(a, b storekit.Movement) bool {
	for _, p := range [][2]*time.Time{{&a.StartedAt, &b.StartedAt}, {&a.Deadline, &b.Deadline},
		{&a.NextCheckAt, &b.NextCheckAt}, {&a.LeaseUntil, &b.LeaseUntil}} {
		if !p[0].Equal(*p[1]) {
			return false
		}
		*p[0], *p[1] = time.Time{}, time.Time{}
	}
	return reflect.DeepEqual(a, b)
}

// On the database's clock, Release names the Track call by the start the caller gave
// it, however far the database's clock and the caller's drifted apart since: the round
// trips between them take time on one clock and not the other.
func TestReleaseOnTheDatabasesClock(t *testing.T) {
	ctx := context.Background()
	base := time.Date(2028, 7, 1, 12, 0, 0, 0, time.UTC)
	db := newDBClock(t, base.Add(3*time.Millisecond)) // the request reached it later
	caller := &movingClock{at: base}
	store, err := pgstore.NewWithOptions(ctx, db.open(), pgstore.Options{Clock: caller})
	if err != nil {
		t.Fatal(err)
	}
	m := storekit.Movement{Kind: storekit.KindCheckout, ClientReference: "drift1", Amount: 700, Currency: "GHS",
		StartedAt: base.Add(123456789 * time.Nanosecond), Deadline: base.Add(time.Minute)}
	tracked, created, err := store.Track(ctx, m)
	if err != nil || !created {
		t.Fatalf("Track = %v, %v", created, err)
	}
	if tracked.Amount != 700 || tracked.Currency != "GHS" {
		t.Fatalf("Track = %+v, want the amount and currency asked", tracked)
	}
	caller.at = base.Add(time.Second)
	db.set(base.Add(time.Second + 40*time.Millisecond))
	if ok, err := store.Release(ctx, m.Key(), tracked.StartedAt.Add(time.Microsecond)); err != nil || ok {
		t.Fatalf("Release of another start = %v, %v", ok, err)
	}
	if ok, err := store.Release(ctx, m.Key(), tracked.StartedAt); err != nil || !ok {
		t.Fatalf("Release of the start Track returned = %v, %v; want released", ok, err)
	}
	if e, err := store.Get(ctx, m.Key()); err != nil || e.Tracked {
		t.Fatalf("Get after Release = %+v, %v", e, err)
	}
}
