package billing

import (
	"time"

	"github.com/billingsdk/billing-go/storekit"
)

// WithDedupeStore makes the handler record every callback it is delivered, with its raw
// body, in store (kept for audit: see storekit.Store.Callbacks), and dedupe redeliveries through
// it across every instance sharing the store: one already handled is answered 200
// without calling the function again, one another instance is handling right now is
// answered 503 with Retry-After, so the sender delivers it again later. A delivery is
// recorded as handled only once the function returned nil; an error or a panic forgets
// it, so its redelivery is handled. Events are the same when their kind, reference and
// state are, never by a code or other field the sender chooses (as for WithDedupe). The
// store's leases run on the wall clock; Tracker.Handler uses the Tracker's Clock and
// Owner instead. With WithStatusCheckConfirmation, a callback the status check
// contradicts is refused 403 and, for a movement the store tracks, recorded for its
// Reconcile (storekit.ContradictionRecorder), when the store records them.
func WithDedupeStore(store storekit.Store) WebhookOption {
	return withCallbackStore(gateOf(store), randomOwner(), wallClock{}, DefaultLease)
}

func withCallbackStore(store *storeGate, owner string, clock Clock, lease time.Duration) WebhookOption {
	return func(h *webhookHandler) {
		if store != nil {
			h.stored = &storeDedupe{store: store, owner: owner, clock: clock, lease: lease}
		}
	}
}
