package billing_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
)

// A transaction callback as the service posts it to a receive's CallbackURL. Amounts in
// the Pascal-case callbacks are decimals in major units.
const receiveCallback = `{
  "ResponseCode": "0000",
  "Message": "success",
  "Data": {
    "Amount": 25.00, "Charges": 0.25, "AmountAfterCharges": 24.75, "AmountCharged": 25.00,
    "Description": "Order 1044", "ClientReference": "order1044",
    "TransactionId": "pay_7f3a", "ExternalTransactionId": "mtn-0042",
    "OrderId": "pay_7f3a", "PaymentDate": "2025-01-01T10:16:02Z"
  }
}`

// ParseEvent recognises every callback and webhook by its shape and returns a typed
// value; every event also answers Kind, Reference, State and Code.
func ExampleParseEvent() {
	ev, err := billing.ParseEvent([]byte(receiveCallback))
	if err != nil {
		log.Fatal(err) // matches billing.ErrInvalidEvent
	}
	fmt.Println(ev.Kind(), ev.Reference(), ev.State(), ev.Code())
	switch e := ev.(type) {
	case *billing.TransactionCallback: // receive, direct debit, web SDK payments
		fmt.Println("paid", e.Data.Amount.Money("GHS"), "telco reference", e.Data.ExternalTransactionID)
	case *billing.PayoutCallback, *billing.MandateCallback, *billing.CheckoutEvent, *billing.SubscriptionTrialEvent:
		// the other shapes
	}

	_, err = billing.ParseEvent([]byte(`{"hello": "world"}`))
	fmt.Println(err != nil)
	// Output:
	// transaction order1044 succeeded 0000
	// paid GHS 25.00 telco reference mtn-0042
	// true
}

// The webhook handler reads, parses and answers callbacks; the function sees typed
// events. An error from it answers 500, so the sender delivers the event again. In
// production add billing.WithStatusCheckConfirmation(client), so a forged success is
// refused, and billing.WithDedupe(0) to drop redeliveries.
func ExampleNewWebhookHandler() {
	handler := billing.NewWebhookHandler(func(ctx context.Context, ev billing.Event) error {
		fmt.Println("record", ev.Reference(), ev.State())
		return nil
	}, billing.WithDedupe(0))

	for range 2 { // the sender delivers the same callback twice
		w := httptest.NewRecorder()
		handler.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/callbacks", strings.NewReader(receiveCallback)))
		fmt.Println(w.Code)
	}
	w := httptest.NewRecorder()
	handler.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/callbacks", strings.NewReader("not json")))
	fmt.Println(w.Code)
	// Output:
	// record order1044 succeeded
	// 200
	// 200
	// 400
}

// The Tracker turns the callback-or-status-check rule into one call: Await returns the
// outcome from the callback, or, when none has come five minutes after the request,
// from the status check. Its handler takes the callbacks. With the sandbox's clock the
// five minutes pass at once.
func ExampleNewTracker() {
	srv, err := billingtest.Start(billingtest.WithManualClock())
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	c := srv.Client()
	ctx := context.Background()

	tracker := billing.NewTracker(c, billing.TrackerOptions{Clock: srv.Clock()})
	callbacks := httptest.NewServer(tracker.Handler(billing.WithStatusCheckConfirmation(c)))
	defer callbacks.Close()

	for _, ref := range []string{"order1044", "order1045"} {
		phone := "+233 24 123 4567"
		if ref == "order1045" {
			phone = "+233 24 123 0001" // a sandbox test number: the customer types a wrong PIN
		}
		_, err := c.Payments.Receive(ctx, &billing.ReceiveParams{
			Amount: billing.GHS(25), Phone: phone, Provider: billing.ProviderMTN, Description: "Order",
			ClientReference: ref, CallbackURL: callbacks.URL,
		})
		if err != nil {
			log.Fatal(err)
		}
	}
	srv.Advance(0) // the sandbox resolves both and posts their callbacks

	for _, ref := range []string{"order1044", "order1045"} {
		outcome, err := tracker.Await(ctx, billing.KindReceive, ref)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(ref, outcome.State, "by", outcome.Source, "code", outcome.Code, "fulfil:", outcome.Succeeded())
	}
	// Output:
	// order1044 succeeded by callback code 0000 fulfil: true
	// order1045 failed by callback code 2001 fulfil: false
}
