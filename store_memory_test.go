package billing_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/storetest"
)

func TestMemoryStore(t *testing.T) {
	storetest.Run(t, func(*testing.T) billing.Store { return billing.NewMemoryStore(0) })
}

// The in-memory store holds a bounded number of movements. It forgets settled, reported
// ones first; it never forgets one still pending or unreported, and refuses a new one
// instead, so that the movement is not sent.
func TestMemoryStoreBoundsMovements(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	s := billing.NewMemoryStore(3)
	mv := func(ref string) billing.Movement {
		return billing.Movement{Kind: billing.KindSend, ClientReference: ref, StartedAt: t0, Deadline: t0.Add(time.Minute)}
	}
	for _, ref := range []string{"p1", "p2", "p3"} {
		if _, _, err := s.Track(ctx, mv(ref)); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := s.Track(ctx, mv("p4")); !errors.Is(err, billing.ErrStoreFull) {
		t.Fatalf("Track beyond the bound: %v, want ErrStoreFull", err)
	}
	stray := billing.MovementKey{Callback: billing.EventKindPayout, ClientReference: "stray"}
	final := billing.Outcome{State: billing.EventSucceeded, Source: billing.SourceCallback, At: t0}
	if _, _, err := s.Settle(ctx, stray, final, nil); !errors.Is(err, billing.ErrStoreFull) {
		t.Fatalf("a stray callback beyond the bound: %v, want ErrStoreFull", err)
	}
	// Settled but unreported: still kept.
	st, _, err := s.Settle(ctx, mv("p1").Key(), final, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Track(ctx, mv("p4")); !errors.Is(err, billing.ErrStoreFull) {
		t.Fatalf("Track while the settled movement is unreported: %v, want ErrStoreFull", err)
	}
	if err := s.MarkReported(ctx, st.ID, t0); err != nil {
		t.Fatal(err)
	}
	if _, created, err := s.Track(ctx, mv("p4")); err != nil || !created {
		t.Fatalf("Track after a report freed room: created=%v err=%v", created, err)
	}
	if e, _ := s.Get(ctx, mv("p1").Key()); e.Tracked || e.Final != nil {
		t.Fatalf("the reported movement was kept: %+v", e)
	}
	for _, ref := range []string{"p2", "p3", "p4"} {
		if e, _ := s.Get(ctx, mv(ref).Key()); !e.Tracked {
			t.Fatalf("%s was forgotten", ref)
		}
	}
}

// BenchmarkMemoryStore100kPending measures the memory the in-memory store holds for
// 100,000 pending movements (DefaultMaxTracked): heap-bytes/movement is what stays live
// once they are tracked.
func BenchmarkMemoryStore100kPending(b *testing.B) {
	const n = 100_000
	ctx := context.Background()
	t0 := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	refs := make([]string, n)
	for i := range refs {
		refs[i] = fmt.Sprintf("order%031d", i) // 36 characters, as the spec's references
	}
	var live uint64
	b.ReportAllocs()
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		s := billing.NewMemoryStore(n)
		for i, ref := range refs {
			start := t0.Add(time.Duration(i) * time.Millisecond)
			m := billing.Movement{Kind: billing.KindSend, ClientReference: ref, StartedAt: start, Deadline: start.Add(5 * time.Minute)}
			if _, _, err := s.Track(ctx, m); err != nil {
				b.Fatal(err)
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		live = after.HeapAlloc - before.HeapAlloc
		runtime.KeepAlive(s)
	}
	b.ReportMetric(float64(live)/n, "heap-bytes/movement")
	b.ReportMetric(float64(live)/(1<<20), "heap-MiB/100k")
}
