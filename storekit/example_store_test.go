package storekit_test

import (
	"context"
	"fmt"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/storekit"
)

// countingStore is a store of one's own built on another: it embeds the Store it wraps
// and overrides the calls it adds to. (Embedding hides the optional interfaces of the
// store inside, such as EntryTracker; the Tracker then makes the plain calls.)
type countingStore struct {
	storekit.Store
	tracked int
}

func (s *countingStore) Track(ctx context.Context, m storekit.Movement) (storekit.Movement, bool, error) {
	s.tracked++
	return s.Store.Track(ctx, m)
}

// A Tracker takes any Store; what it keeps is read back in the store's own records.
func ExampleStore() {
	ctx := context.Background()
	store := &countingStore{Store: storekit.NewMemoryStore(storekit.MemoryStoreOptions{})}
	c, err := billing.NewClient(billing.WithBaseURL("http://127.0.0.1:1"), billing.WithClientCredentials("id", "secret"))
	if err != nil {
		panic(err)
	}
	tracker := billing.NewTracker(c, billing.TrackerOptions{Store: store})
	if err := tracker.Track(ctx, billing.KindSend, "payout-1042"); err != nil {
		panic(err)
	}

	key := storekit.Movement{Kind: storekit.KindSend, ClientReference: "payout-1042"}.Key()
	e, err := store.Get(ctx, key)
	fmt.Println(store.tracked, key.Callback, e.Tracked, e.Movement.Kind, err)
	// Output:
	// 1 payout true send <nil>
}
