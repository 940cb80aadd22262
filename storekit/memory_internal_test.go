package storekit

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
			Key:       MovementKey{Callback: CallbackPayout, ClientReference: fmt.Sprintf("flood%d", i)},
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
		got, err := s.Callbacks(ctx, MovementKey{Callback: CallbackPayout, ClientReference: fmt.Sprintf("flood%d", i)})
		if err != nil {
			t.Fatal(err)
		}
		if kept := len(got) == 1; kept != (i >= 7) {
			t.Fatalf("flood%d kept=%v; want only the newest three", i, kept)
		}
	}
}

// A Movement that received several callbacks (a forged one and the genuine one) is
// forgotten whole once reported and past the retention, bodies and all.
func TestMemoryStorePurgesAMovementWithSeveralCallbacks(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	s := newMemoryStore(0, 1<<20)
	key := MovementKey{Callback: CallbackPayout, ClientReference: "twobodies1"}
	if _, _, err := s.Track(ctx, Movement{Kind: KindSend, ClientReference: key.ClientReference, StartedAt: t0, Deadline: t0.Add(5 * time.Minute)}); err != nil {
		t.Fatal(err)
	}
	for i, body := range []string{`{"forged":true}`, `{"genuine":true}`, `{"again":true}`} {
		c := Callback{Key: key, DedupeKey: fmt.Sprintf("d%d", i), Body: []byte(body), At: t0}
		if _, err := s.BeginCallback(ctx, c, "a", t0.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	settled, _, err := s.Settle(ctx, key, Outcome{Kind: KindSend, ClientReference: key.ClientReference, State: StateSucceeded, Source: SourceCallback, At: t0}, nil)
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

// TestMemoryStoreBoundsContradictionBodies: the memory store counts a contradiction's
// body in its byte bound, makes room for it only by forgetting other audit bodies, keeps
// the record without its body when even that leaves no room, and gives the bytes back
// when the Movement is released.
func TestMemoryStoreBoundsContradictionBodies(t *testing.T) {
	s := newMemoryStore(0, 4096)
	start := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	track := func(ref string) Movement {
		m := Movement{Kind: KindSend, ClientReference: ref, StartedAt: start, Deadline: start.Add(time.Hour)}
		_, created, err := s.Track(context.Background(), m)
		require.NoError(t, err)
		require.True(t, created)
		return m
	}
	record := func(m Movement, body []byte) {
		ok, err := s.RecordContradiction(context.Background(), Contradiction{Key: m.Key(), Claimed: StateFailed, Body: body, At: start})
		require.NoError(t, err)
		require.True(t, ok)
	}
	large, small := track("large1"), track("small1")
	used := s.used
	record(large, make([]byte, 8192))
	assert.Equal(t, used, s.used, "a body larger than the bound is not kept")
	record(small, make([]byte, 100))
	assert.Equal(t, used+100, s.used, "a kept body is counted")

	// An audit body of a callback gives way to a contradiction's body.
	heard := Callback{Key: MovementKey{Callback: CallbackPayout, ClientReference: "heard1"}, DedupeKey: "d1", Body: make([]byte, 3000), At: start}
	_, err := s.BeginCallback(context.Background(), heard, "a", start.Add(time.Minute))
	require.NoError(t, err)
	other := track("other1")
	record(other, make([]byte, 2000))
	kept, err := s.Callbacks(context.Background(), heard.Key)
	require.NoError(t, err)
	assert.Empty(t, kept, "the callback's audit body made room")
	assert.LessOrEqual(t, s.used, s.maxBytes)

	r, err := s.Reconcile(context.Background(), start.Add(-time.Minute), start.Add(time.Minute), start)
	require.NoError(t, err)
	require.Len(t, r.Contradicted, 3)
	for _, c := range r.Contradicted {
		switch c.Key.ClientReference {
		case "large1":
			assert.Nil(t, c.Body, "the record stands without its body")
		case "small1":
			assert.Len(t, c.Body, 100)
		case "other1":
			assert.Len(t, c.Body, 2000)
		}
	}
	before := s.used
	released, err := s.Release(context.Background(), other.Key(), other.StartedAt)
	require.NoError(t, err)
	require.True(t, released, "a contradiction never pins a movement")
	assert.Equal(t, before-2000-len("other1"), s.used, "its bytes went with it")
}
