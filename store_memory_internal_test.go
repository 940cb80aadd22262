package billing

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// Callback bodies kept for audit are bounded in bytes, the oldest forgotten first, so a
// flood of callbacks for references nobody tracks cannot fill the memory.
func TestMemoryStoreBoundsCallbackBytes(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	s := newMemoryStore(0, 1000)
	body := make([]byte, 300)
	for i := range 10 {
		copy(body, fmt.Sprintf("body %d", i))
		c := Callback{
			Key:       MovementKey{Callback: EventKindPayout, ClientReference: fmt.Sprintf("flood%d", i)},
			DedupeKey: fmt.Sprintf("flood%d", i),
			Body:      body,
			At:        t0.Add(time.Duration(i) * time.Second),
		}
		if _, err := s.BeginCallback(ctx, c, "a", t0.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if s.used > s.maxBytes {
			t.Fatalf("after %d callbacks %d bytes kept, bound %d", i+1, s.used, s.maxBytes)
		}
	}
	for i := range 10 {
		got, err := s.Callbacks(ctx, MovementKey{Callback: EventKindPayout, ClientReference: fmt.Sprintf("flood%d", i)})
		if err != nil {
			t.Fatal(err)
		}
		if kept := len(got) == 1; kept != (i >= 7) {
			t.Fatalf("flood%d kept=%v; want only the newest three", i, kept)
		}
	}
}

// A movement that received several callbacks (a forged one and the genuine one) is
// forgotten whole once reported and past the retention, bodies and all.
func TestMemoryStorePurgesAMovementWithSeveralCallbacks(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	s := newMemoryStore(0, 1<<20)
	key := MovementKey{Callback: EventKindPayout, ClientReference: "twobodies1"}
	if _, _, err := s.Track(ctx, Movement{Kind: KindSend, ClientReference: key.ClientReference, StartedAt: t0, Deadline: t0.Add(5 * time.Minute)}); err != nil {
		t.Fatal(err)
	}
	for i, body := range []string{`{"forged":true}`, `{"genuine":true}`, `{"again":true}`} {
		c := Callback{Key: key, DedupeKey: fmt.Sprintf("d%d", i), Body: []byte(body), At: t0}
		if _, err := s.BeginCallback(ctx, c, "a", t0.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	settled, _, err := s.Settle(ctx, key, Outcome{Kind: KindSend, ClientReference: key.ClientReference, State: EventSucceeded, Source: SourceCallback, At: t0}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.MarkReported(ctx, settled.ID, t0); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Purge(ctx, t0.Add(time.Hour)); err != nil || n != 1 {
		t.Fatalf("Purge forgot %d movements (%v), want 1", n, err)
	}
	if got, err := s.Callbacks(ctx, key); err != nil || len(got) != 0 {
		t.Fatalf("%d callbacks kept after the purge (%v)", len(got), err)
	}
	if s.used != 0 {
		t.Fatalf("%d bytes still counted after the purge", s.used)
	}
}
