package billing_test

import (
	"context"
	"fmt"
	"log"
	"net/http/httptest"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
)

// Money moved that the Tracker never tracked (a receive started by another system, by
// the billing command's trigger, or by hand) reaches the event function as an
// *UntrackedMovementEvent once the status check confirms its callback: a fact to look
// at, never a tracked outcome to fulfil an order on.
func ExampleUntrackedMovementEvent() {
	srv, err := billingtest.Start(billingtest.WithManualClock())
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	c := srv.Client()
	tracker := billing.NewTracker(c, billing.TrackerOptions{Clock: srv.Clock()})
	callbacks := httptest.NewServer(tracker.Handler(billing.WithEventHandler(func(ctx context.Context, ev billing.Event) error {
		switch e := ev.(type) {
		case *billing.UntrackedMovementEvent:
			fmt.Println("untracked", e.Outcome.Kind, e.Reference(), e.State(), e.Outcome.Amount)
		default:
			fmt.Println("other event", ev.Kind())
		}
		return nil
	})))
	defer callbacks.Close()

	// Sent with the Client, not the Tracker: nothing tracks it.
	_, err = c.Payments.Receive(context.Background(), &billing.ReceiveParams{
		Amount: billing.GHS(25), Phone: "+233 24 123 4567", Provider: billing.ProviderMTN, Description: "Walk-in sale",
		ClientReference: "walkin7", CallbackURL: callbacks.URL,
	})
	if err != nil {
		log.Fatal(err)
	}
	srv.Advance(0) // the sandbox resolves it and posts its callback
	// Output:
	// untracked receive walkin7 succeeded 2500
}
