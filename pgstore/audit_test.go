package pgstore_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
	"github.com/billingsdk/billing-go/opsview"
	"github.com/billingsdk/billing-go/pgstore"
	"github.com/billingsdk/billing-go/storekit"
)

// Two instances on one database: one resolves a movement by hand while a late genuine
// callback lands on the other. It is reported once; when the resolve came first, the
// callback is one recorded contradiction.
func TestResolveRacesALateCallbackOnPostgres(t *testing.T) {
	db := freshSchema(t)
	store := newTestStore(t, db)
	srv := billingtest.NewServer(t, billingtest.WithManualClock())
	var mu sync.Mutex
	var reported []string
	onOutcome := func(_ context.Context, o *billing.Outcome) error {
		mu.Lock()
		defer mu.Unlock()
		reported = append(reported, o.ID)
		return nil
	}
	var bHandler http.Handler
	callbacks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { bHandler.ServeHTTP(w, r) }))
	t.Cleanup(callbacks.Close)
	a := billing.NewTracker(srv.Client(), billing.TrackerOptions{Store: store, Clock: srv.Clock(), Owner: "a", OnOutcome: onOutcome, CallbackURL: callbacks.URL})
	b := billing.NewTracker(srv.Client(), billing.TrackerOptions{Store: store, Clock: srv.Clock(), Owner: "b", OnOutcome: onOutcome, CallbackURL: callbacks.URL})
	bHandler = b.Handler() // the callback lands on the other instance
	ctx := context.Background()
	if _, err := a.Send(ctx, &billing.SendParams{Amount: 2000, Phone: "233201234567", Provider: billing.ProviderTelecel, Name: "Ama",
		Description: "refund", ClientReference: "race1"}); err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 2)
	var resolveErr error
	resolved := make(chan struct{})
	go func() {
		defer close(resolved)
		_, resolveErr = a.Resolve(ctx, "ops", "no answer from the service", billing.KindSend, "race1", billing.EventFailed)
	}()
	srv.Advance(time.Minute) // the sandbox pays it and calls back, on b
	<-resolved
	go func() { done <- b.Run(runCtx) }()
	go func() { done <- a.Run(runCtx) }()
	key := storekit.MovementKey{Callback: storekit.CallbackPayout, ClientReference: "race1"}
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		n := len(reported)
		mu.Unlock()
		c, _ := store.Contradiction(ctx, key)
		if n > 0 && (resolveErr != nil || c != nil) || time.Now().After(deadline) {
			break
		}
		srv.Advance(time.Second)
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	<-done
	<-done
	srv.Advance(time.Hour)
	left, err := store.ClaimUnreported(ctx, "probe", srv.Now(), srv.Now().Add(time.Minute), 10)
	if err != nil || len(left) != 0 {
		t.Fatalf("left to report: %+v %v", left, err)
	}
	mu.Lock()
	if len(reported) != 1 {
		t.Fatalf("reported %v; want once", reported)
	}
	mu.Unlock()
	c, err := store.Contradiction(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the resolve came first: %v", resolveErr == nil)
	switch {
	case resolveErr == nil && (c == nil || c.Claimed != storekit.StateSucceeded):
		t.Fatalf("the resolve came first, but the success is no contradiction: %+v", c)
	case resolveErr != nil && (!errors.Is(resolveErr, billing.ErrAlreadySettled) || c != nil):
		t.Fatalf("the callback came first; resolve: %v, contradiction %+v", resolveErr, c)
	}
}

// The operator's view works on PostgreSQL as on the memory store.
func TestOpsviewOnPostgres(t *testing.T) {
	store := newStore(t)
	srv := billingtest.NewServer(t, billingtest.WithManualClock())
	tr := billing.NewTracker(srv.Client(), billing.TrackerOptions{Store: store, Clock: srv.Clock(), CallbackURL: "http://127.0.0.1:9/cb"})
	ctx := context.Background()
	if err := tr.Track(ctx, billing.KindReceive, "233241234567"); err != nil {
		t.Fatal(err)
	}
	srv.Advance(10 * time.Minute)
	h := opsview.NewHandler(opsview.Options{Tracker: tr, Resolve: true,
		Authorize: func(*http.Request, opsview.Action, opsview.Movement) (string, error) { return "alice", nil }})
	get := func(target string) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "http://ops.example/"+target, nil))
		if w.Code != http.StatusOK {
			t.Fatalf("%s: %d %s", target, w.Code, w.Body)
		}
		if strings.Contains(w.Body.String(), "241234567") {
			t.Fatalf("%s shows the phone-like reference", target)
		}
		return w
	}
	var l struct{ Items []opsview.MovementView }
	if err := json.Unmarshal(get("api-movements?state=overdue").Body.Bytes(), &l); err != nil || len(l.Items) != 1 {
		t.Fatalf("overdue: %+v %v", l, err)
	}
	get("")
	get("reconcile")
	get("movements.csv")
	body := `{"action":"resolve","id":"` + l.Items[0].ID + `","state":"failed","reason":"the service lost it"}`
	r := httptest.NewRequest(http.MethodPost, "http://ops.example/api-act", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusOK {
		t.Fatalf("resolve: %d %s", w.Code, w.Body)
	}
	page := get("movement?id=" + l.Items[0].ID).Body.String()
	if !strings.Contains(page, "the service lost it") {
		t.Fatal("the audit line is not on the timeline")
	}
}

// seedMovements writes n movements straight into the store's table, a third of them
// settled, for the list's and the counts' plans and timings.
func seedMovements(tb testing.TB, db *sql.DB, n int) {
	tb.Helper()
	_, err := db.ExecContext(context.Background(), `INSERT INTO billing_movements
		(callback_kind, client_reference, kind, started_at, deadline, next_check_at, outcome_id, state, source, settled_at, reported_at)
		SELECT 'payout', 'seed' || i, 'send', now() - i * interval '1 second', now() - i * interval '1 second' + interval '5 minutes',
			now() - i * interval '1 second' + interval '5 minutes',
			CASE WHEN i % 3 = 0 THEN 'payout/succeeded/seed' || i END, CASE WHEN i % 3 = 0 THEN 'succeeded' END,
			CASE WHEN i % 3 = 0 THEN 'status_check' END, CASE WHEN i % 3 = 0 THEN now() END, CASE WHEN i % 6 = 0 THEN now() END
		FROM generate_series(1, $1) AS i`, n)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := db.ExecContext(context.Background(), `ANALYZE billing_movements`); err != nil {
		tb.Fatal(err)
	}
}

// The default list reads the index in order and stops at a page: it never sorts the
// table.
func TestListReadsTheIndex(t *testing.T) {
	db := freshSchema(t)
	newTestStore(t, db)
	seedMovements(t, db, 50_000)
	rows, err := db.QueryContext(context.Background(), `EXPLAIN SELECT * FROM billing_movements
		WHERE (kind IS NOT NULL OR (outcome_id IS NOT NULL AND outcome_kind <> ''))
		ORDER BY coalesce(started_at, settled_at) DESC, callback_kind, client_reference LIMIT 501`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, line)
	}
	if !strings.Contains(strings.Join(plan, "\n"), "billing_movements_listed") {
		t.Fatalf("the list does not read its index:\n%s", strings.Join(plan, "\n"))
	}
}

// BenchmarkOperatorsView50k times the default list and the overview's counts over
// 50,000 movements (docs/ops.md quotes the figures).
func BenchmarkOperatorsView50k(b *testing.B) {
	db := freshSchema(b)
	s := newTestStore(b, db)
	seedMovements(b, db, 50_000)
	ctx := context.Background()
	now := time.Now()
	b.Run("list", func(b *testing.B) {
		for b.Loop() {
			if _, _, err := s.List(ctx, storekit.ListQuery{Now: now, Limit: 100}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("overview", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.Summarize(ctx, now); err != nil {
				b.Fatal(err)
			}
		}
	})
}

var _ = pgstore.Version
