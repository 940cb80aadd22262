package storekit

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Money settled for a reference no one tracked, once a status check confirmed its
// kind, is listed by Reconcile (Untracked) and by List and Summarize; an unconfirmed
// one (no kind) is not money anyone knows moved.
func TestMemoryStoreListsUntrackedMoney(t *testing.T) {
	ctx := context.Background()
	s := NewMemoryStore(MemoryStoreOptions{})
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	key := MovementKey{Callback: CallbackPayout, ClientReference: "trig1"}
	_, _, err := s.Settle(ctx, key, Outcome{Kind: KindSend, State: StateSucceeded, Source: SourceStatusCheck, At: at}, nil)
	require.NoError(t, err)
	_, _, err = s.Settle(ctx, MovementKey{Callback: CallbackPayout, ClientReference: "nokind"},
		Outcome{State: StateSucceeded, Source: SourceCallback, At: at}, nil)
	require.NoError(t, err)

	r, err := s.Reconcile(ctx, at.Add(-time.Hour), at.Add(time.Hour), at)
	require.NoError(t, err)
	require.Len(t, r.Untracked, 1)
	assert.Equal(t, key, r.Untracked[0].Key)
	assert.Equal(t, KindSend, r.Untracked[0].Outcome.Kind)
	r, err = s.Reconcile(ctx, at.Add(time.Second), at.Add(time.Hour), at)
	require.NoError(t, err)
	assert.Empty(t, r.Untracked, "outside the window")

	items, more, err := s.(Inspector).List(ctx, ListQuery{State: ListUntracked, Now: at})
	require.NoError(t, err)
	assert.False(t, more)
	require.Len(t, items, 1)
	assert.Equal(t, ListUntracked, items[0].State(at))
	sum, err := s.(Inspector).Summarize(ctx, at)
	require.NoError(t, err)
	assert.Equal(t, 1, sum.Untracked)
}

// List pages by a cursor, latest started first, without losing or repeating an item.
func TestMemoryStoreListPagesByCursor(t *testing.T) {
	ctx := context.Background()
	s := NewMemoryStore(MemoryStoreOptions{})
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i := range 7 {
		m := Movement{Kind: KindSend, ClientReference: "p" + string(rune('a'+i)), StartedAt: at.Add(time.Duration(i%3) * time.Second), Deadline: at.Add(time.Minute)}
		_, _, err := s.Track(ctx, m)
		require.NoError(t, err)
	}
	var seen []string
	q := ListQuery{Limit: 3, Now: at}
	for {
		items, more, err := s.(Inspector).List(ctx, q)
		require.NoError(t, err)
		for _, it := range items {
			seen = append(seen, it.Key.ClientReference)
		}
		if !more {
			break
		}
		q.After = items[len(items)-1].Cursor
	}
	assert.Equal(t, []string{"pc", "pf", "pb", "pe", "pa", "pd", "pg"}, seen)
}
