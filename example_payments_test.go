package billing_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"strings"
	"time"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
)

// A hosted checkout session: create it, send the payer to CheckoutURL, and read the
// outcome once they have paid (here the sandbox pays as the payer would).
func ExamplePaymentsService_CreateCheckout() {
	srv, err := billingtest.Start(billingtest.WithManualClock())
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	c := srv.Client()
	ctx := context.Background()

	pay, err := c.Payments.CreateCheckout(ctx, &billing.CheckoutParams{
		Amount:      billing.GHS(50),
		Description: "Order 1042",
		Customer:    billing.CheckoutCustomer{Name: "Ama Mensah", Email: "ama@example.com"},
		ReturnURL:   "https://shop.example.com/orders/1042",
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(pay.Status, strings.HasPrefix(pay.CheckoutURL, srv.URL+"/checkout/"))

	if err := srv.CompleteCheckout(pay.Reference, "MOBILE_MONEY", "succeeded"); err != nil {
		log.Fatal(err)
	}
	pay, err = c.Payments.Get(ctx, pay.Reference)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(pay.Status, pay.Method, "fee", billing.Money{Amount: pay.Fee, Currency: pay.Currency}, "net", billing.Money{Amount: pay.Net, Currency: pay.Currency}, "fulfil:", pay.Succeeded())
	// Output:
	// PENDING true
	// SUCCEEDED MOBILE_MONEY fee GHS 0.98 net GHS 49.02 fulfil: true
}

// A mobile-money prompt: the first answer only says it was accepted; the final state
// arrives at CallbackURL, or through the status check.
func ExamplePaymentsService_Receive() {
	srv, err := billingtest.Start(billingtest.WithManualClock())
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	c := srv.Client()
	ctx := context.Background()

	r, err := c.Payments.Receive(ctx, &billing.ReceiveParams{
		Amount:          billing.GHS(25),
		Phone:           "+233 24 123 4567",
		Provider:        billing.ProviderMTN,
		Description:     "Order 1044",
		ClientReference: "order1044",
		CallbackURL:     "https://shop.example.com/callbacks/momo",
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(r.Status, r.Phone)

	srv.Advance(time.Second) // the customer approves on the phone
	st, err := c.Payments.ReceiveStatus(ctx, "order1044")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(st.ResponseCode, st.Status, "final:", st.IsFinal(), "paid:", st.Succeeded(), "charges:", billing.Money{Amount: st.Charges, Currency: st.CurrencyCode})
	// Output:
	// PROCESSING 233241234567
	// 0000 Paid final: true paid: true charges: GHS 0.25
}

// When the connection drops after a money movement was sent, the SDK does not send it
// again: it returns ErrOutcomeUnknown with the client reference, and the status check
// tells what happened.
func ExampleOutcomeUnknownError() {
	srv, err := billingtest.Start(billingtest.WithManualClock())
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	c := srv.Client()
	ctx := context.Background()

	// The sandbox takes the payment, then loses the response.
	srv.InjectFault(billingtest.Fault{Route: "POST /v1/payments/receive", Kind: billingtest.FaultResponseLost})
	_, err = c.Payments.Receive(ctx, &billing.ReceiveParams{
		Amount: billing.GHS(25), Phone: "233241234567", Provider: billing.ProviderMTN,
		Description: "Order 1045", ClientReference: "order1045",
	})
	var unknown *billing.OutcomeUnknownError
	if !errors.As(err, &unknown) {
		log.Fatal("expected an unknown outcome, got ", err)
	}
	fmt.Println("unknown outcome of", unknown.ClientReference)

	srv.Advance(time.Second)
	st, err := c.Payments.ReceiveStatus(ctx, unknown.ClientReference)
	switch {
	case errors.Is(err, billing.ErrNotFound):
		fmt.Println("never recorded: safe to send again with the same client reference")
	case err != nil:
		log.Fatal(err)
	default:
		fmt.Println("it happened:", st.Status, "moved", srv.Movements("order1045"), "time")
	}
	// Output:
	// unknown outcome of order1045
	// it happened: Paid moved 1 time
}
