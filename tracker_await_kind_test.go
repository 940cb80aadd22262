package billing

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Await answers only about a movement of the kind it was asked for. For every kind and
// every shape a key can hold that is no movement of that kind (tracked as another kind
// sharing its callback, pending or settled; an outcome settled untracked as another kind;
// a movement forgotten after Retention with a later outcome kept beside its tombstone,
// of any kind), Await says so with no outcome, asks nothing of the service and changes
// nothing in the store: it never relabels another movement's outcome as the one asked.
func TestAwaitAnswersOnlyForTheKindAsked(t *testing.T) {
	t0 := time.Date(2025, 4, 1, 10, 0, 0, 0, time.UTC)
	kinds := slices.Sorted(func(yield func(Kind) bool) {
		for k := range movements {
			if !yield(k) {
				return
			}
		}
	})
	type shape struct {
		name string
		// seed makes the key of ref hold the shape for a movement of kind other; want is
		// the error Await of another kind (or, for a forgotten key, any kind) matches.
		seed func(t *testing.T, s *storeGate, other Kind, ref string)
		want error
		// anyKind: the shape is no movement of any kind, the other's own included.
		anyKind bool
	}
	settle := func(t *testing.T, s *storeGate, k Kind, ref string, at time.Time) settlement {
		key, err := keyOf(k, ref)
		require.NoError(t, err)
		st, _, err := s.Settle(context.Background(), key, Outcome{Kind: k, State: EventSucceeded,
			Source: SourceStatusCheck, Amount: 500, Currency: "GHS", TransactionID: "tx-" + ref, At: at}, nil)
		require.NoError(t, err)
		return st
	}
	track := func(t *testing.T, s *storeGate, k Kind, ref string) {
		_, _, err := s.Track(context.Background(), movement{Kind: k, ClientReference: ref, Amount: 500, Currency: "GHS",
			StartedAt: t0, Deadline: t0.Add(5 * time.Minute)})
		require.NoError(t, err)
	}
	shapes := []shape{
		{name: "tracked as another kind, pending", want: ErrAlreadyTracked,
			seed: func(t *testing.T, s *storeGate, other Kind, ref string) { track(t, s, other, ref) }},
		{name: "tracked as another kind, settled", want: ErrAlreadyTracked,
			seed: func(t *testing.T, s *storeGate, other Kind, ref string) {
				track(t, s, other, ref)
				settle(t, s, other, ref, t0.Add(time.Minute))
			}},
		{name: "settled untracked as another kind", want: ErrAlreadyTracked,
			seed: func(t *testing.T, s *storeGate, other Kind, ref string) {
				settle(t, s, other, ref, t0.Add(time.Minute))
			}},
		{name: "forgotten, a later outcome beside its tombstone", want: ErrForgotten, anyKind: true,
			seed: func(t *testing.T, s *storeGate, other Kind, ref string) {
				ctx := context.Background()
				track(t, s, other, ref)
				st := settle(t, s, other, ref, t0.Add(time.Minute))
				require.NoError(t, s.MarkReported(ctx, st.ID, t0.Add(2*time.Minute)))
				n, err := s.Purge(ctx, t0.Add(time.Hour))
				require.NoError(t, err)
				require.Equal(t, 1, n)
				settle(t, s, other, ref, t0.Add(2*time.Hour)) // a callback delivered again, confirmed
			}},
	}
	cells := 0
	for _, sh := range shapes {
		for _, other := range kinds {
			for _, asked := range kinds {
				otherKey, _ := keyOf(other, "r")
				askedKey, _ := keyOf(asked, "r")
				if otherKey.Callback != askedKey.Callback || (asked == other && !sh.anyKind) {
					continue // another key, or the movement itself
				}
				cells++
				t.Run(fmt.Sprintf("%s/%s/asked %s", sh.name, other, asked), func(t *testing.T) {
					tr, mock, _ := newTestTracker(t, TrackerOptions{})
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // a bound on a failure, not a timing
					defer cancel()
					const ref = "ref-shared"
					sh.seed(t, tr.store, other, ref)
					before, err := tr.store.Get(ctx, askedKey)
					require.NoError(t, err)

					o, err := tr.Await(ctx, asked, ref)
					assert.ErrorIs(t, err, sh.want)
					assert.Nil(t, o, "no outcome of a %s is made of what the key holds", asked)
					assert.Zero(t, mock.GetTotalCallCount(), "nothing asked of the service: %v", mock.GetCallCountInfo())
					after, err := tr.store.Get(ctx, askedKey)
					require.NoError(t, err)
					assert.Equal(t, before, after, "the store is unchanged")
				})
			}
		}
	}
	t.Logf("%d cells of (shape, kind held, kind asked)", cells)
}
