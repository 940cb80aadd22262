package pgstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/billingsdk/billing-go/pgstore"
	"github.com/billingsdk/billing-go/storekit"
)

// On the database's clock (no CallerClock), a contradicted callback is recorded at the
// database's now() put back on the caller's clock, and Reconcile lists it: the
// statement types its time parameter in both modes.
func TestContradictionOnTheDatabasesClock(t *testing.T) {
	s, err := pgstore.NewWithOptions(context.Background(), freshSchema(t), pgstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	now := time.Now()
	m := storekit.Movement{Kind: storekit.KindSend, ClientReference: "dbclock1", StartedAt: now, Deadline: now.Add(time.Hour)}
	if _, _, err := s.Track(ctx, m); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		ok, err := s.RecordContradiction(ctx, storekit.Contradiction{Key: m.Key(), Claimed: storekit.StateSucceeded, Body: []byte(`{"forged":true}`), At: time.Now()})
		if err != nil || !ok {
			t.Fatalf("RecordContradiction = %v, %v", ok, err)
		}
	}
	r, err := s.Reconcile(ctx, now.Add(-time.Minute), now.Add(time.Minute), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Contradicted) != 1 {
		t.Fatalf("Contradicted = %+v; want dbclock1", r.Contradicted)
	}
	c := r.Contradicted[0]
	if c.Key != m.Key() || c.Claimed != storekit.StateSucceeded || string(c.Body) != `{"forged":true}` || c.Count != 2 {
		t.Fatalf("Contradicted[0] = %+v", c)
	}
	if d := c.At.Sub(now); d < -time.Second || d > 10*time.Second || c.LastAt.Before(c.At) {
		t.Fatalf("recorded from %s to %s, tracked at %s: not on the caller's clock", c.At, c.LastAt, now)
	}
}
