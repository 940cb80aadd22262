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
