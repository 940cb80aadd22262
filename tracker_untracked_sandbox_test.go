package billing_test

import (
	"context"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
)

// Every kind of money movement started on the sandbox without the Tracker (as another
// system, or the billing command's trigger, starts one), on each wire, reaches the event
// function of the Tracker's handler as an *UntrackedMovementEvent once its callback is
// confirmed (storetest checks that OnOutcome never reports an untracked outcome).
func TestUntrackedMovementOnTheSandbox(t *testing.T) {
	for _, wire := range billingtest.Wires() {
		t.Run(string(wire), func(t *testing.T) {
			for _, tc := range trackedMovements {
				if !tc.succeeded && failureUnconfirmable(wire, tc.kind) {
					continue // nothing confirms it: answered 503, handed to no one
				}
				t.Run(tc.name, func(t *testing.T) {
					srv := billingtest.NewServer(t, billingtest.WithManualClock(), billingtest.WithWire(wire))
					c := srv.Client()
					var mu sync.Mutex
					var events []billing.Event
					// One Tracker starts the movement (another system, say); the merchant's
					// Tracker, which never tracked it, takes its callback.
					other := billing.NewTracker(c, billing.TrackerOptions{Clock: srv.Clock()})
					mine := billing.NewTracker(c, billing.TrackerOptions{Clock: srv.Clock()})
					endpoint := httptest.NewServer(mine.Handler(billing.WithEventHandler(func(_ context.Context, ev billing.Event) error {
						mu.Lock()
						defer mu.Unlock()
						events = append(events, ev)
						return nil
					})))
					t.Cleanup(endpoint.Close)

					tc.start(t, &trackedMerchant{srv: srv, client: c, tracker: other, callbackURL: endpoint.URL + "/callbacks"}, "walkin1")
					srv.Advance(time.Second) // the sandbox resolves it and posts its callback

					mu.Lock()
					defer mu.Unlock()
					require.Len(t, events, 1, "the untracked movement reaches the event function")
					ev, ok := events[0].(*billing.UntrackedMovementEvent)
					require.True(t, ok, "handed on as %T", events[0])
					assert.True(t, ev.Untracked)
					assert.Equal(t, tc.kind, ev.Outcome.Kind)
					assert.Equal(t, "walkin1", ev.Reference())
					assert.Equal(t, tc.succeeded, ev.State() == billing.EventSucceeded, "state %s", ev.State())
					assert.Equal(t, tc.amount, ev.Outcome.Amount)
					settled := awaitOutcome(t, mine, tc.kind, "walkin1")
					assert.Equal(t, ev.Outcome.ID, settled.ID, "settled as before: an Await of the reference finds it")
				})
			}
		})
	}
}
