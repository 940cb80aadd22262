package pgstore_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
	"github.com/billingsdk/billing-go/pgstore"
	"github.com/billingsdk/billing-go/storekit"
)

// waiting counts the statements of the test's database that wait on a lock and whose
// text holds fragment.
func waiting(t testing.TB, admin *sql.DB, fragment string) func() bool {
	return func() bool {
		var n int
		if err := admin.QueryRow(`SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%' || $1 || '%'`,
			fragment).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n > 0
	}
}

// A reference reused while the Purge that forgets it runs is not tracked again: the
// test holds a lock that Purge's transaction takes after it forgot the movement (the
// row of a handled callback record it deletes next), so that the Track of the reused
// reference starts while the Purge is under way, and waits for it. Once the Purge
// commits, the Track finds the tombstone: ErrForgotten, nothing tracked, nothing to
// send, ask or report. With the tombstone checked on the Track statement's snapshot,
// the Track waited for the movement's row, found it gone, and tracked the key again.
func TestPurgeRacingAReuse(t *testing.T) {
	for _, fresh := range []bool{true, false} {
		t.Run(fmt.Sprintf("TrackNew=%v", fresh), func(t *testing.T) {
			db := freshSchema(t)
			s := newTestStore(t, db)
			ctx := context.Background()
			t0 := time.Date(2025, 6, 1, 9, 0, 0, 0, time.UTC)
			m := storekit.Movement{Kind: storekit.KindSend, ClientReference: "reused1", StartedAt: t0, Deadline: t0.Add(5 * time.Minute)}
			if _, _, err := s.Track(ctx, m); err != nil {
				t.Fatal(err)
			}
			st, _, err := s.Settle(ctx, m.Key(), storekit.Outcome{State: storekit.StateSucceeded, Source: storekit.SourceCallback, At: t0.Add(time.Minute)}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.MarkReported(ctx, st.ID, t0.Add(2*time.Minute)); err != nil {
				t.Fatal(err)
			}
			gate := storekit.Callback{Key: m.Key(), DedupeKey: "purge-gate", At: t0}
			if _, err := s.BeginCallback(ctx, gate, "gate", t0.Add(time.Minute)); err != nil {
				t.Fatal(err)
			}
			if err := s.FinishCallback(ctx, gate.DedupeKey, "gate", true, t0); err != nil {
				t.Fatal(err)
			}

			lock, err := db.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = lock.Rollback() }()
			if _, err := lock.Exec(`SELECT 1 FROM billing_callback_dedupe WHERE dedupe_key = 'purge-gate' FOR UPDATE`); err != nil {
				t.Fatal(err)
			}
			purged := make(chan error, 1)
			go func() { _, err := s.Purge(ctx, t0.Add(2*time.Hour)); purged <- err }()
			waitFor(t, waiting(t, db, "billing_callback_dedupe"))

			reuse := m
			reuse.StartedAt, reuse.Deadline = t0.Add(31*time.Minute), t0.Add(36*time.Minute)
			type answer struct {
				e       storekit.Entry
				created bool
				err     error
			}
			tracked := make(chan answer, 1)
			go func() {
				var a answer
				if fresh {
					a.e, a.created, a.err = s.TrackNew(ctx, reuse)
				} else {
					a.e, a.created, a.err = s.TrackEntry(ctx, reuse)
				}
				tracked <- a
			}()
			waitFor(t, waiting(t, db, "tracked AS"))
			if err := lock.Rollback(); err != nil {
				t.Fatal(err)
			}
			if err := <-purged; err != nil {
				t.Fatal(err)
			}
			a := <-tracked
			if a.created || !errors.Is(a.err, billing.ErrForgotten) {
				t.Fatalf("the reference reused during its purge: created %v, %+v, %v; want ErrForgotten", a.created, a.e, a.err)
			}
			e, err := s.Get(ctx, m.Key())
			if err != nil {
				t.Fatal(err)
			}
			if !e.Forgotten || e.Tracked || e.Final != nil {
				t.Fatalf("after the purge and the reuse the key holds %+v; want a tombstone alone", e)
			}
			if ms, err := s.ClaimDue(ctx, "other", t0.Add(time.Hour), t0.Add(2*time.Hour), 10); err != nil || len(ms) != 0 {
				t.Fatalf("ClaimDue after the reuse = %+v, %v; want nothing to check", ms, err)
			}
		})
	}
}

// The answer to Track's commit lost (the proxy closes the connection once the
// statement that tracks the movement is done): the send helper returns an error and
// sends nothing. Called again with the same payout, it sends it, once; a third call
// answers ErrAlreadyTracked and sends nothing. Before, the second call answered
// ErrAlreadyTracked, the payout was never sent, and Run asked its status check (404)
// until its give-up limit.
func TestTrackAnswerLostThenSentOnce(t *testing.T) {
	db, schema := freshSchemaNamed(t)
	if _, err := pgstore.New(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	proxy, through := startProxy(t)
	store, err := pgstore.New(context.Background(), openThrough(t, through, schema))
	if err != nil {
		t.Fatal(err)
	}
	srv := billingtest.NewServer(t, billingtest.WithManualClock())
	tr := billing.NewTracker(srv.Client(), billing.TrackerOptions{Store: store, Clock: srv.Clock(), StoreTimeout: faultStoreTimeout})
	endpoint := httptest.NewServer(tr.Handler())
	t.Cleanup(endpoint.Close)
	ctx := context.Background()
	params := &billing.SendParams{Amount: 2000, Phone: "233201234567", Provider: billing.ProviderTelecel, Name: "Ama",
		Description: "Refund", ClientReference: "lostTrack1", CallbackURL: endpoint.URL}

	proxy.LoseAnswersOf("tracked AS", 1)
	if _, err := tr.Send(ctx, params); err == nil {
		t.Fatal("Send succeeded with the answer of its Track lost")
	}
	if lost := proxy.Stats().AnswersLost; lost != 1 {
		t.Fatalf("%d answers lost, want 1", lost)
	}
	if n := srv.Movements("lostTrack1"); n != 0 {
		t.Fatalf("the sandbox holds %d payouts after a failed Track, want 0", n)
	}
	key := storekit.Movement{Kind: storekit.KindSend, ClientReference: "lostTrack1"}.Key()
	if e, err := store.Get(ctx, key); err != nil || !e.Tracked {
		t.Fatalf("the lost Track's commit: %+v, %v; want the movement tracked", e, err)
	}
	if _, err := tr.Send(ctx, params); err != nil {
		t.Fatalf("Send again after the lost answer: %v; want it sent", err)
	}
	if _, err := tr.Send(ctx, params); !errors.Is(err, billing.ErrAlreadyTracked) {
		t.Fatalf("a third Send: %v; want ErrAlreadyTracked", err)
	}
	if n := srv.Movements("lostTrack1"); n != 1 {
		t.Fatalf("the sandbox holds %d payouts of lostTrack1, want 1", n)
	}
	srv.Advance(0) // the callback
	o, err := tr.Await(ctx, billing.KindSend, "lostTrack1")
	if err != nil || !o.Succeeded() {
		t.Fatalf("Await = %+v, %v; want the payout succeeded", o, err)
	}
}
