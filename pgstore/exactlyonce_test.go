package pgstore_test

import (
	"context"
	"database/sql"
	"errors"
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

// shop is a merchant's own table of fulfilled orders, in the store's database, with no
// unique key: an order fulfilled twice shows as two rows.
type shop struct {
	t  testing.TB
	db *sql.DB
}

func newShop(t testing.TB, db *sql.DB) *shop {
	for _, stmt := range []string{
		`CREATE TABLE parcels (id integer PRIMARY KEY)`,
		`INSERT INTO parcels VALUES (1)`,
		// Checked at COMMIT: a parcel that does not exist fails the commit itself.
		`CREATE TABLE fulfilled (order_ref text NOT NULL, outcome_id text NOT NULL,
			parcel integer REFERENCES parcels DEFERRABLE INITIALLY DEFERRED)`,
	} {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	return &shop{t: t, db: db}
}

// fulfil is the merchant's write: one row for the order.
func fulfil(ctx context.Context, tx *sql.Tx, o *billing.Outcome, parcel int) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO fulfilled (order_ref, outcome_id, parcel) VALUES ($1, $2, $3)`,
		o.ClientReference, o.ID, parcel)
	return err
}

// fulfilments counts the rows of each order.
func (s *shop) fulfilments() map[string]int {
	rows, err := s.db.Query(`SELECT order_ref, count(*) FROM fulfilled GROUP BY order_ref`)
	if err != nil {
		s.t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var ref string
		var n int
		if err := rows.Scan(&ref, &n); err != nil {
			s.t.Fatal(err)
		}
		out[ref] = n
	}
	return out
}

// settled tracks and settles a payout of ref on store, returning its outcome as the
// Tracker gives it to OnOutcome.
func settled(t testing.TB, store *pgstore.Store, ref string) *billing.Outcome {
	t.Helper()
	ctx := context.Background()
	t0 := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	m := storekit.Movement{Kind: storekit.KindSend, ClientReference: ref, StartedAt: t0, Deadline: t0.Add(5 * time.Minute)}
	if _, _, err := store.Track(ctx, m); err != nil {
		t.Fatal(err)
	}
	st, _, err := store.Settle(ctx, m.Key(), storekit.Outcome{State: storekit.StateSucceeded, Source: storekit.SourceStatusCheck, At: t0}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &billing.Outcome{ID: st.ID, Kind: billing.KindSend, ClientReference: ref, State: billing.EventSucceeded,
		Source: billing.SourceStatusCheck, At: st.Outcome.At}
}

func reportedAt(t testing.TB, store *pgstore.Store, ref string) time.Time {
	t.Helper()
	e, err := store.Get(context.Background(), storekit.MovementKey{Callback: storekit.CallbackPayout, ClientReference: ref})
	if err != nil || e.Final == nil {
		t.Fatalf("Get(%s) = %+v, %v", ref, e, err)
	}
	return e.Final.ReportedAt
}

// A crash between the merchant's write and the commit, an error of the merchant's
// function, and a commit that fails all leave neither the order fulfilled nor the
// outcome reported; the next call fulfils it, and no call after that runs the function.
func TestOnOutcomeTxFulfilsOnceAcrossFailures(t *testing.T) {
	db := freshSchema(t)
	store := newTestStore(t, db)
	s := newShop(t, db)
	var calls atomic.Int32
	var crash bool
	var parcel int
	var fnErr error
	ctx, cancel := context.WithCancel(context.Background())
	handler := store.OnOutcomeTx(func(ctx context.Context, tx *sql.Tx, o *billing.Outcome) error {
		calls.Add(1)
		if err := fulfil(ctx, tx, o, parcel); err != nil {
			return err
		}
		if crash {
			cancel() // the process goes down after the write, before the commit
		}
		return fnErr
	})
	o := settled(t, store, "order1")

	crash, parcel = true, 1
	if err := handler(ctx, o); err == nil {
		t.Fatal("a handler whose context ended before the commit returned nil")
	}
	fnErr, crash, ctx = errors.New("the warehouse said no"), false, context.Background()
	if err := handler(ctx, o); !errors.Is(err, fnErr) {
		t.Fatalf("handler = %v, want the merchant's error", err)
	}
	fnErr, parcel = nil, 999 // no such parcel: the deferred check fails the COMMIT
	if err := handler(ctx, o); err == nil {
		t.Fatal("a handler whose commit failed returned nil")
	}
	if got := s.fulfilments(); len(got) != 0 {
		t.Fatalf("fulfilled after three failed attempts: %v", got)
	}
	if at := reportedAt(t, store, "order1"); !at.IsZero() {
		t.Fatalf("reported at %v after three failed attempts", at)
	}

	parcel = 1
	if err := handler(ctx, o); err != nil {
		t.Fatal(err)
	}
	if at := reportedAt(t, store, "order1"); at.IsZero() {
		t.Fatal("not reported after a committed attempt")
	}
	// Again, as after a commit whose answer was lost: the function is not called.
	if err := handler(ctx, o); err != nil {
		t.Fatal(err)
	}
	if got := s.fulfilments(); got["order1"] != 1 || calls.Load() != 4 {
		t.Fatalf("fulfilments %v after %d calls of the function; want order1 once, 4 calls", got, calls.Load())
	}
	// The Tracker's MarkReported that follows changes nothing.
	if err := store.MarkReported(ctx, o.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	var ve *billing.ValidationError
	if err := handler(ctx, &billing.Outcome{}); !errors.As(err, &ve) {
		t.Fatalf("handler without an outcome id = %v, want a *billing.ValidationError", err)
	}
}

// Two instances, each with its own pool, racing to report the same outcomes: each order
// is fulfilled once.
func TestOnOutcomeTxRacingInstances(t *testing.T) {
	db, schema := freshSchemaNamed(t)
	s := newShop(t, db)
	stores := []*pgstore.Store{newTestStore(t, db), newTestStore(t, openSchema(t, schema))}
	const orders, racers = 40, 4
	outcomes := make([]*billing.Outcome, orders)
	for i := range outcomes {
		outcomes[i] = settled(t, stores[0], fmt.Sprintf("race%02d", i))
	}
	var calls atomic.Int32
	var wg sync.WaitGroup
	errs := make(chan error, orders*racers)
	for i := range racers {
		handler := stores[i%2].OnOutcomeTx(func(ctx context.Context, tx *sql.Tx, o *billing.Outcome) error {
			calls.Add(1)
			return fulfil(ctx, tx, o, 1)
		})
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, o := range outcomes {
				if err := handler(context.Background(), o); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	got := s.fulfilments()
	for _, o := range outcomes {
		if got[o.ClientReference] != 1 {
			t.Errorf("%s fulfilled %d times", o.ClientReference, got[o.ClientReference])
		}
	}
	if calls.Load() != orders {
		t.Errorf("the function ran %d times for %d orders", calls.Load(), orders)
	}
}

// Trackers on three instances with OnOutcomeTx, whose report leases end while some
// handlers are held: every order is fulfilled exactly once.
func TestOnOutcomeTxWithTrackers(t *testing.T) {
	db, schema := freshSchemaNamed(t)
	s := newShop(t, db)
	srv := billingtest.NewServer(t, billingtest.WithManualClock())
	const movements, held = 30, 5
	hold := make(chan struct{})
	var heldCalls atomic.Int32
	const lease = time.Minute
	var trackers []*billing.Tracker
	for i := range 3 {
		pool := db
		if i > 0 {
			pool = openSchema(t, schema)
		}
		store := newTestStore(t, pool)
		fulfilTx := store.OnOutcomeTx(func(ctx context.Context, tx *sql.Tx, o *billing.Outcome) error {
			var n int
			if _, err := fmt.Sscanf(o.ClientReference, "tracked%02d", &n); err == nil && n < held {
				heldCalls.Add(1)
				<-hold
			}
			return fulfil(ctx, tx, o, 1)
		})
		trackers = append(trackers, billing.NewTracker(srv.Client(), billing.TrackerOptions{
			Store: store, Clock: srv.Clock(), Owner: fmt.Sprintf("instance%d", i), Lease: lease,
			OnOutcome: fulfilTx,
		}))
	}
	ctx := context.Background()
	for i := range movements {
		ref := fmt.Sprintf("tracked%02d", i)
		srv.InjectCallbackFault(billingtest.CallbackFault{Kind: billingtest.CallbackDropped, Reference: ref})
		if _, err := trackers[i%3].Send(ctx, &billing.SendParams{Amount: 100, Phone: "233201234567", Provider: billing.ProviderTelecel,
			Description: "order", ClientReference: ref, CallbackURL: "http://127.0.0.1:1/none"}); err != nil {
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

	done := func() bool {
		n := 0
		for _, c := range s.fulfilments() {
			n += c
		}
		return n >= movements-held
	}
	// Overdue: Run checks, settles and reports them. Runs that found nothing sleep
	// on the clock: each look moves it a second on.
	srv.Advance(6 * time.Minute)
	waitFor(t, func() bool { srv.Advance(time.Second); return done() })
	// The held handlers outlive their leases; their transactions still hold the rows,
	// which other instances' claims skip (see TestOnOutcomeTxHoldsItsOutcome).
	for range 3 {
		srv.Advance(2 * lease)
	}
	release.Do(func() { close(hold) })
	waitFor(t, func() bool { srv.Advance(time.Second); return len(s.fulfilments()) == movements })
	for ref, n := range s.fulfilments() {
		if n != 1 {
			t.Errorf("%s fulfilled %d times", ref, n)
		}
	}
	if heldCalls.Load() != held {
		t.Errorf("the function ran %d times for %d held orders", heldCalls.Load(), held)
	}
}

// While a handler's transaction is open, its outcome is no other instance's to claim,
// whatever the lease says; another instance's handler for it waits for the transaction,
// then finds the outcome reported and does not call its function.
func TestOnOutcomeTxHoldsItsOutcome(t *testing.T) {
	db, schema := freshSchemaNamed(t)
	s := newShop(t, db)
	a, b := newTestStore(t, db), newTestStore(t, openSchema(t, schema))
	ctx := context.Background()
	o := settled(t, a, "held1")
	t0 := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	if got, err := a.ClaimUnreported(ctx, "a", t0, t0.Add(time.Minute), 10); err != nil || len(got) != 1 {
		t.Fatalf("a's claim = %+v, %v", got, err)
	}
	entered, release := make(chan struct{}), make(chan struct{})
	var aCalls, bCalls atomic.Int32
	aHandler := a.OnOutcomeTx(func(ctx context.Context, tx *sql.Tx, o *billing.Outcome) error {
		aCalls.Add(1)
		close(entered)
		<-release
		return fulfil(ctx, tx, o, 1)
	})
	bHandler := b.OnOutcomeTx(func(ctx context.Context, tx *sql.Tx, o *billing.Outcome) error {
		bCalls.Add(1)
		return fulfil(ctx, tx, o, 1)
	})
	aDone, bDone := make(chan error, 1), make(chan error, 1)
	go func() { aDone <- aHandler(ctx, o) }()
	<-entered
	if got, err := b.ClaimUnreported(ctx, "b", t0.Add(time.Hour), t0.Add(2*time.Hour), 10); err != nil || len(got) != 0 {
		t.Fatalf("b claimed an outcome whose report is in progress: %+v, %v", got, err)
	}
	go func() { bDone <- bHandler(ctx, o) }()
	close(release)
	if err := errors.Join(<-aDone, <-bDone); err != nil {
		t.Fatal(err)
	}
	if got := s.fulfilments(); got["held1"] != 1 || aCalls.Load() != 1 || bCalls.Load() != 0 {
		t.Fatalf("fulfilments %v, a's function ran %d times, b's %d; want once, by a", got, aCalls.Load(), bCalls.Load())
	}
}

// waitFor waits, in real time, for work the Runs do on goroutines of their own.
func waitFor(t testing.TB, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("not done within 30 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
