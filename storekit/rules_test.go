package storekit

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The rank of final states decides MergeOutcome, over every pair of states and sources:
// money moved outranks nothing moved, which outranks unknown; a higher rank replaces a
// lower one under a new ID; at equal rank the first stands; a refusal of the request is
// never replaced.
func TestMergeOutcomeRanksEveryPair(t *testing.T) {
	key := MovementKey{Callback: CallbackTransaction, ClientReference: "ref1"}
	states := []string{StateSucceeded, StateMismatched, StateFailed, StateExpired, StateUnknown}
	sources := []string{SourceCallback, SourceStatusCheck, SourceRequest}
	at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	cells := 0
	for _, s1 := range states {
		for _, src1 := range sources {
			first, changed, err := MergeOutcome(nil, key, Outcome{State: s1, Source: src1, At: at}, nil)
			require.NoError(t, err)
			require.True(t, changed)
			for _, s2 := range states {
				for _, src2 := range sources {
					cells++
					next, changed, err := MergeOutcome(&first, key, Outcome{State: s2, Source: src2, At: at.Add(time.Second)}, nil)
					require.NoError(t, err)
					want := finalRank[s2] > finalRank[s1] && src1 != SourceRequest
					name := fmt.Sprintf("%s/%s then %s/%s", s1, src1, s2, src2)
					assert.Equal(t, want, changed, name)
					if want {
						assert.Equal(t, s2, next.Outcome.State, name)
						assert.NotEqual(t, first.ID, next.ID, "a new outcome to report: %s", name)
					} else {
						assert.Equal(t, s1, next.Outcome.State, name)
						assert.Equal(t, first.ID, next.ID, name)
					}
				}
			}
		}
	}
	t.Logf("%d cells", cells)
	for _, s := range []string{StatePending, "", "bogus"} {
		_, _, err := MergeOutcome(nil, key, Outcome{State: s, Source: SourceCallback, At: at}, nil)
		var ve *ValidationError
		assert.ErrorAs(t, err, &ve, "%q is not final", s)
	}
}
