package billing_test

import (
	"context"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
	"github.com/billingsdk/billing-go/storekit"
)

// getCountingStore counts the Get calls made on the Store it wraps, which it gives only
// its Store methods: the optional interfaces are hidden.
type getCountingStore struct {
	storekit.Store
	gets atomic.Int64
}

func (s *getCountingStore) Get(ctx context.Context, key storekit.MovementKey) (storekit.Entry, error) {
	s.gets.Add(1)
	return s.Store.Get(ctx, key)
}

// entryCountingStore is a getCountingStore that passes storekit.EntryTracker and
// storekit.CallbackEntryBeginner on from the store it wraps.
type entryCountingStore struct {
	*getCountingStore
	inner storekit.Store
}

func (s entryCountingStore) TrackEntry(ctx context.Context, m storekit.Movement) (storekit.Entry, bool, error) {
	return s.inner.(storekit.EntryTracker).TrackEntry(ctx, m)
}

func (s entryCountingStore) TrackNew(ctx context.Context, m storekit.Movement) (storekit.Entry, bool, error) {
	return s.inner.(storekit.EntryTracker).TrackNew(ctx, m)
}

func (s entryCountingStore) BeginCallbackEntry(ctx context.Context, c storekit.Callback, owner string, leaseUntil time.Time) (storekit.CallbackClaim, storekit.Entry, error) {
	return s.inner.(storekit.CallbackEntryBeginner).BeginCallbackEntry(ctx, c, owner, leaseUntil)
}

var (
	_ storekit.EntryTracker          = entryCountingStore{}
	_ storekit.CallbackEntryBeginner = entryCountingStore{}
)

// A Tracker refuses the same movements, with the same errors, whether its store answers
// what a key holds as it tracks (storekit.EntryTracker) or not: one of another kind under
// a reference whose outcome was settled as a receive, and a send under a reference that
// holds an outcome already. With such a store, tracking and a movement's callback read
// nothing besides: no Get.
func TestTrackRefusesTheSameWithOrWithoutEntryTracker(t *testing.T) {
	for _, entries := range []bool{true, false} {
		name := "GetFirst"
		if entries {
			name = "EntryTracker"
		}
		t.Run(name, func(t *testing.T) {
			srv := billingtest.NewServer(t, billingtest.WithManualClock())
			mem := billing.NewMemoryStore(0)
			counted := &getCountingStore{Store: mem}
			var store storekit.Store = counted
			if entries {
				store = entryCountingStore{counted, mem}
			}
			tr := billing.NewTracker(srv.Client(), billing.TrackerOptions{Store: store, Clock: srv.Clock()})
			endpoint := httptest.NewServer(tr.Handler())
			t.Cleanup(endpoint.Close)
			ctx := context.Background()
			now := srv.Clock().Now()

			// Settled before any Track: a receive its status check confirmed as one, and a
			// payout callback of no known kind.
			_, _, err := mem.Settle(ctx, storekit.MovementKey{Callback: storekit.CallbackTransaction, ClientReference: "shared1"},
				storekit.Outcome{Kind: storekit.KindReceive, State: storekit.StateSucceeded, Source: storekit.SourceStatusCheck, At: now}, nil)
			require.NoError(t, err)
			_, _, err = mem.Settle(ctx, storekit.MovementKey{Callback: storekit.CallbackPayout, ClientReference: "ref1"},
				storekit.Outcome{State: storekit.StateSucceeded, Source: storekit.SourceCallback, At: now}, []byte(`{}`))
			require.NoError(t, err)
			send := func(ref string) error {
				_, err := tr.Send(ctx, &billing.SendParams{Amount: 7300, Phone: "233241234567", Provider: billing.ProviderMTN,
					Description: "payout", ClientReference: ref, CallbackURL: endpoint.URL})
				return err
			}

			err = tr.Track(ctx, billing.KindDirectDebit, "shared1")
			require.ErrorIs(t, err, billing.ErrAlreadyTracked)
			assert.Contains(t, err.Error(), `"shared1" is settled as a receive`)
			err = send("ref1")
			require.ErrorIs(t, err, billing.ErrAlreadyTracked)
			assert.Contains(t, err.Error(), `"ref1" has an outcome already, another movement's`)
			assert.Zero(t, srv.Movements("ref1"), "nothing was sent")
			for _, k := range []storekit.MovementKey{
				{Callback: storekit.CallbackTransaction, ClientReference: "shared1"},
				{Callback: storekit.CallbackPayout, ClientReference: "ref1"},
			} {
				e, err := mem.Get(ctx, k)
				require.NoError(t, err)
				assert.False(t, e.Tracked, "%s was tracked", k.ClientReference)
			}

			// Its own kind adopts the receive's outcome; a new reference is sent once.
			require.NoError(t, tr.Track(ctx, billing.KindReceive, "shared1"))
			require.NoError(t, send("ref2"))
			require.ErrorIs(t, send("ref2"), billing.ErrAlreadyTracked)
			srv.Advance(time.Minute) // the payout succeeds and calls back
			e, err := mem.Get(ctx, storekit.MovementKey{Callback: storekit.CallbackPayout, ClientReference: "ref2"})
			require.NoError(t, err)
			require.NotNil(t, e.Final, "the callback settled ref2")
			assert.True(t, e.Tracked && (e.Final.Outcome.State == storekit.StateSucceeded) && e.Final.Outcome.Kind == storekit.KindSend, "ref2 = %+v", e.Final)
			if entries {
				// The callback is confirmed before it is recorded under the confirmed
				// fact's key: that confirmation reads the tracked kind once.
				assert.LessOrEqual(t, counted.gets.Load(), int64(1), "Get calls")
			}
		})
	}
}
