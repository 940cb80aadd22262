package billing

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Await of a reference nobody tracked (a typo) is refused at once, for every kind:
// nothing is tracked, no status check is asked, nothing is left for Run to poll. Track
// adopts a movement sent outside the Tracker, which Await then resolves.
func TestAwaitRefusesAReferenceNeverTracked(t *testing.T) {
	for _, kind := range movementKinds {
		t.Run(string(kind), func(t *testing.T) {
			tr, mock, _ := newTestTracker(t, TrackerOptions{})
			ctx := context.Background()
			o, err := tr.Await(ctx, kind, "typo1042")
			require.ErrorIs(t, err, ErrNotTracked)
			assert.Nil(t, o)
			assert.Contains(t, err.Error(), "track it first")
			assert.Zero(t, mock.GetTotalCallCount(), "a status check was asked for a reference nobody tracked")
			key, err := keyOf(kind, "typo1042")
			require.NoError(t, err)
			e, err := tr.store.Get(ctx, key)
			require.NoError(t, err)
			assert.False(t, e.Tracked, "the refused Await tracked the reference")
			stats, err := tr.Stats(ctx)
			require.NoError(t, err)
			assert.Zero(t, stats.Pending)

			// Adopted with Track, the same reference is awaited.
			require.NoError(t, tr.Track(ctx, kind, "typo1042"))
			done, cancel := context.WithCancel(ctx)
			cancel()
			_, err = tr.Await(done, kind, "typo1042")
			assert.ErrorIs(t, err, ErrStillPending)
			assert.NotErrorIs(t, err, ErrNotTracked)
		})
	}
}

// An outcome a callback settled for a reference nobody tracked is still returned: Await
// refuses only what it could learn nothing about.
func TestAwaitReturnsAnOutcomeSettledForAnUntrackedReference(t *testing.T) {
	tr, mock, _ := newTestTracker(t, TrackerOptions{})
	registerStatus(t, mock, "/v1/payments/order1042", "confirm/receive_status_order1042.json")
	require.Equal(t, http.StatusOK, post(t, tr.Handler(), fixture(t, "events/transaction_success.json")).Code)
	o, err := tr.Await(context.Background(), KindReceive, "order1042")
	require.NoError(t, err)
	assert.True(t, o.Succeeded())
}
