package billing

import (
	"context"
	"encoding/json"
	"log/slog"
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

// contradicted keeps, in a store that records them (storekit.ContradictionRecorder),
// that the status check contradicted ev, a callback of a money movement refused for it:
// Reconcile then lists the movement. It settles nothing, and a store without the
// record, or a reference nothing tracks, leaves only the log of the refusal.
func contradicted(ctx context.Context, store *storeGate, now time.Time, ev Event, body []byte, logger *slog.Logger) {
	if store == nil || nilEvent(ev) || !isMovementCallback(ev) {
		return
	}
	record := store.recordContradiction()
	if record == nil {
		return
	}
	if len(body) > MaxEventBytes {
		body = nil
	}
	// The sender may have gone; the record is the merchant's, kept all the same.
	if _, err := record(context.WithoutCancel(ctx), eventKey(ev), ev.State(), body, now); err != nil {
		logger.LogAttrs(ctx, slog.LevelWarn, "billing: the contradicted callback was not recorded",
			append(eventAttrs(ev), slog.String("error", err.Error()))...)
	}
}

// rawBodyKey carries the raw body of the callback being handled to Tracker.Deliver.
type rawBodyKey struct{}

func withRawBody(ctx context.Context, body []byte) context.Context {
	return context.WithValue(ctx, rawBodyKey{}, body)
}

// callbackBody is the raw body of ev for the store: the one the handler read, else ev
// encoded again (a callback given to Deliver by the merchant's own handler).
func callbackBody(ctx context.Context, ev Event) []byte {
	if body, ok := ctx.Value(rawBodyKey{}).([]byte); ok && len(body) > 0 {
		return body
	}
	body, err := json.Marshal(ev)
	if err != nil || len(body) > MaxEventBytes {
		return nil
	}
	return body
}
