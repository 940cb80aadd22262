package storekit_test

import (
	"fmt"
	"time"

	"github.com/billingsdk/billing-go/storekit"
)

// A store's Settle reads what it holds for the key, merges the new outcome into it by
// the shared rules, and writes back what MergeOutcome returns.
func ExampleMergeOutcome() {
	key := storekit.MovementKey{Callback: storekit.CallbackTransaction, ClientReference: "ord-1"}
	at := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

	held, _, _ := storekit.MergeOutcome(nil, key,
		storekit.Outcome{State: storekit.StateFailed, Source: storekit.SourceCallback, At: at}, []byte(`{"...":"..."}`))
	next, changed, err := storekit.MergeOutcome(&held, key,
		storekit.Outcome{State: storekit.StateSucceeded, Source: storekit.SourceStatusCheck, At: at.Add(time.Minute)}, nil)
	fmt.Println(next.Outcome.State, changed, err)
	fmt.Println(held.ID, "->", next.ID, "disagreed:", next.Disagreed)
	// Output:
	// succeeded true <nil>
	// transaction/failed/ord-1 -> transaction/succeeded/ord-1 disagreed: true
}
