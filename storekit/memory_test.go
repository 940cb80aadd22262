package storekit_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/storekit"
	"github.com/billingsdk/billing-go/storetest"
)

func TestMemoryStore(t *testing.T) {
	storetest.Run(t, func(*testing.T) storekit.Store { return billing.NewMemoryStore(0) })
}

// The in-memory store holds a bounded number of movements. It forgets settled, reported
// ones first; it never forgets one still pending or unreported, and refuses a new one
// instead, so that the movement is not sent.
func TestMemoryStoreBoundsMovements(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	s := billing.NewMemoryStore(3)
	mv := func(ref string) storekit.Movement {
		return storekit.Movement{Kind: storekit.KindSend, ClientReference: ref, StartedAt: t0, Deadline: t0.Add(time.Minute)}
	}
	for _, ref := range []string{"p1", "p2", "p3"} {
		if _, _, err := s.Track(ctx, mv(ref)); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := s.Track(ctx, mv("p4")); !errors.Is(err, storekit.ErrStoreFull) {
		t.Fatalf("Track beyond the bound: %v, want ErrStoreFull", err)
	}
	stray := storekit.MovementKey{Callback: storekit.CallbackPayout, ClientReference: "stray"}
	final := storekit.Outcome{State: storekit.StateSucceeded, Source: storekit.SourceCallback, At: t0}
	if _, _, err := s.Settle(ctx, stray, final, nil); !errors.Is(err, storekit.ErrStoreFull) {
		t.Fatalf("a stray callback beyond the bound: %v, want ErrStoreFull", err)
	}
	// Settled but unreported: still kept.
	st, _, err := s.Settle(ctx, mv("p1").Key(), final, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Track(ctx, mv("p4")); !errors.Is(err, storekit.ErrStoreFull) {
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
			m := storekit.Movement{Kind: storekit.KindSend, ClientReference: ref, StartedAt: start, Deadline: start.Add(5 * time.Minute)}
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

func TestTrackerInstancesOnTheMemoryStore(t *testing.T) {
	storetest.RunTracker(t, func(*testing.T) storekit.Store { return billing.NewMemoryStore(0) })
}

// The in-memory store's byte budget makes room by forgetting reported outcomes, never a
// movement pending or unreported: a settlement that does not fit is refused with
// ErrStoreFull and records nothing, so the callback is delivered again later.
func TestMemoryStoreBoundsBytes(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	s := storekit.NewMemoryStore(storekit.MemoryStoreOptions{MaxBytes: 4096})
	mv := func(ref string) storekit.Movement {
		return storekit.Movement{Kind: storekit.KindSend, ClientReference: ref, StartedAt: t0, Deadline: t0.Add(time.Minute)}
	}
	for _, ref := range []string{"p1", "p2"} {
		if _, _, err := s.Track(ctx, mv(ref)); err != nil {
			t.Fatal(err)
		}
	}
	final := storekit.Outcome{State: storekit.StateSucceeded, Source: storekit.SourceCallback, At: t0}
	body := []byte(fmt.Sprintf(`{"padding":%q}`, strings.Repeat("x", 2500)))
	st, _, err := s.Settle(ctx, mv("p1").Key(), final, body)
	if err != nil {
		t.Fatal(err)
	}
	// p1 is settled but unreported: it may not make room.
	if _, _, err := s.Settle(ctx, mv("p2").Key(), final, body); !errors.Is(err, storekit.ErrStoreFull) {
		t.Fatalf("a settlement beyond the budget: %v, want ErrStoreFull", err)
	}
	if e, _ := s.Get(ctx, mv("p2").Key()); !e.Tracked || e.Final != nil {
		t.Fatalf("a refused settlement changed the movement: %+v", e)
	}
	stray := storekit.MovementKey{Callback: storekit.CallbackPayout, ClientReference: "stray"}
	if _, _, err := s.Settle(ctx, stray, final, body); !errors.Is(err, storekit.ErrStoreFull) {
		t.Fatalf("a stray callback beyond the budget: %v, want ErrStoreFull", err)
	}
	if e, _ := s.Get(ctx, stray); e.Tracked || e.Final != nil {
		t.Fatalf("a refused stray callback was kept: %+v", e)
	}
	// A status check's outcome carries no body: it fits.
	byStatus := storekit.Outcome{State: storekit.StateSucceeded, Source: storekit.SourceStatusCheck, At: t0}
	if _, _, err := s.Settle(ctx, mv("p2").Key(), byStatus, nil); err != nil {
		t.Fatalf("a status check's outcome: %v", err)
	}
	// Once p1 is reported it may be forgotten to make room.
	if err := s.MarkReported(ctx, st.ID, t0); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Track(ctx, mv("p3")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Settle(ctx, mv("p3").Key(), final, body); err != nil {
		t.Fatalf("a settlement once a reported one may be forgotten: %v", err)
	}
	if e, _ := s.Get(ctx, mv("p1").Key()); e.Tracked || e.Final != nil {
		t.Fatalf("the reported movement was kept: %+v", e)
	}
	for _, ref := range []string{"p2", "p3"} {
		if e, _ := s.Get(ctx, mv(ref).Key()); e.Final == nil {
			t.Fatalf("%s lost its outcome", ref)
		}
	}
}
