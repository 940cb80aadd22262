package pgstore_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
	"github.com/billingsdk/billing-go/pgstore"
	"github.com/billingsdk/billing-go/storekit"
)

// A Tracker on billingtest's manual clock and pgstore.New, with no option of the store's:
// the Tracker hands the store its clock, which the database's now() does not follow, and
// the store compares the callers' times. A payout whose callback never comes is checked
// once the clock passed its callback wait, and reported. Before, the store compared due
// times on the database's clock, and the movement never fell due.
func TestManualClockWithNoStoreOption(t *testing.T) {
	store, err := pgstore.New(context.Background(), freshSchema(t))
	if err != nil {
		t.Fatal(err)
	}
	srv := billingtest.NewServer(t, billingtest.WithManualClock())
	var mu sync.Mutex
	var reported []*billing.Outcome
	tr := billing.NewTracker(srv.Client(), billing.TrackerOptions{Store: store, Clock: srv.Clock(),
		OnOutcome: func(_ context.Context, o *billing.Outcome) error {
			mu.Lock()
			defer mu.Unlock()
			reported = append(reported, o)
			return nil
		}})
	endpoint := httptest.NewServer(tr.Handler())
	t.Cleanup(endpoint.Close)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- tr.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	srv.InjectCallbackFault(billingtest.CallbackFault{Kind: billingtest.CallbackDropped, Reference: "manual1"})
	if _, err := tr.Send(context.Background(), &billing.SendParams{Amount: 2000, Phone: "233201234567", Provider: billing.ProviderTelecel,
		Description: "Refund", ClientReference: "manual1", CallbackURL: endpoint.URL}); err != nil {
		t.Fatal(err)
	}
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(reported)
	}
	for i := 0; i < 40 && count() == 0; i++ { // twenty minutes of the clock
		srv.Advance(30 * time.Second)
		deadline := time.Now().Add(200 * time.Millisecond) // Run acts on goroutines of its own
		for count() == 0 && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(reported) != 1 || !reported[0].Succeeded() || reported[0].Source != billing.SourceStatusCheck {
		t.Fatalf("reported %+v; want the payout, succeeded by its status check", reported)
	}
}

// A clock the store cannot follow is an error at NewTracker (a panic naming it), never a
// Run that silently finds nothing due: a store whose Options.Clock is another clock, or
// the wall clock against a store that follows a manual one, or a second Tracker of one
// store with a clock of its own.
func TestClockMismatchAtNewTracker(t *testing.T) {
	db := freshSchema(t)
	a := billingtest.NewServer(t, billingtest.WithManualClock())
	b := billingtest.NewServer(t, billingtest.WithManualClock())
	newStore := func(opts pgstore.Options) *pgstore.Store {
		s, err := pgstore.NewWithOptions(context.Background(), db, opts)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	panics := func(what string, store *pgstore.Store, clock storekit.Clock) {
		t.Helper()
		defer func() {
			p := recover()
			if p == nil || !strings.Contains(fmt.Sprint(p), "clock") {
				t.Errorf("%s: NewTracker recovered %v; want a panic naming the clock", what, p)
			}
		}()
		billing.NewTracker(a.Client(), billing.TrackerOptions{Store: store, Clock: clock})
	}
	works := func(what string, store *pgstore.Store, clock storekit.Clock) {
		t.Helper()
		defer func() {
			if p := recover(); p != nil {
				t.Errorf("%s: NewTracker panicked: %v", what, p)
			}
		}()
		billing.NewTracker(a.Client(), billing.TrackerOptions{Store: store, Clock: clock})
	}
	given := newStore(pgstore.Options{Clock: a.Clock(), CallerClock: true})
	works("the store's own clock", given, a.Clock())
	panics("another manual clock than the store's", given, b.Clock())
	panics("the wall clock against the store's manual clock", given, nil)

	adopted := newStore(pgstore.Options{})
	works("a manual clock handed to a store with none", adopted, a.Clock())
	works("the same clock again", adopted, a.Clock())
	panics("a second Tracker with another clock", adopted, b.Clock())
	panics("a second Tracker on the wall clock", adopted, nil)

	wall := newStore(pgstore.Options{})
	works("the wall clock", wall, nil)
	works("the wall clock again", wall, nil)
}
