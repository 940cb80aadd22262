package billingtest_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
)

// In a test, NewServer(t) starts the sandbox and closes it when the test ends:
//
//	srv := billingtest.NewServer(t, billingtest.WithManualClock())
//
// A program that is not a test, like this example, calls Start and Close. The sandbox's
// client is ready to use; test numbers choose outcomes, and Advance moves the clock.
func ExampleStart() {
	srv, err := billingtest.Start(billingtest.WithManualClock())
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	c := srv.Client() // client credentials and disbursement account already set
	ctx := context.Background()

	_, err = c.Payments.Receive(ctx, &billing.ReceiveParams{
		Amount: 5000, Phone: "233240000004", Provider: billing.ProviderMTN, // 0004: pending for 10 minutes
		Description: "Order 7", ClientReference: "order7",
	})
	if err != nil {
		log.Fatal(err)
	}
	st, _ := c.Payments.ReceiveStatus(ctx, "order7")
	fmt.Println(srv.Now().Format(time.RFC3339), st.Status, "final:", st.IsFinal())

	srv.Advance(10 * time.Minute) // due work runs, callbacks included, before Advance returns
	st, _ = c.Payments.ReceiveStatus(ctx, "order7")
	fmt.Println(srv.Now().Format(time.RFC3339), st.Status, "final:", st.IsFinal())
	fmt.Println("movements under order7:", srv.Movements("order7"))
	// Output:
	// 2025-01-01T00:00:00Z Unpaid final: false
	// 2025-01-01T00:10:00Z Paid final: true
	// movements under order7: 1
}

// A fault makes the sandbox do the work and then lose the answer: the SDK reports
// ErrOutcomeUnknown instead of sending the money again, and the status check tells the
// truth.
func ExampleServer_InjectFault() {
	srv, err := billingtest.Start(billingtest.WithManualClock())
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	c := srv.Client()
	ctx := context.Background()

	srv.InjectFault(billingtest.Fault{Route: "POST /v1/payments/send", Kind: billingtest.FaultResponseLost})
	_, err = c.Payouts.Send(ctx, &billing.SendParams{
		Amount: 2000, Phone: "233201234567", Provider: billing.ProviderTelecel,
		Description: "Refund", ClientReference: "refund9",
	})
	var unknown *billing.OutcomeUnknownError
	fmt.Println("outcome unknown:", errors.As(err, &unknown), unknown.ClientReference)
	fmt.Println("sent once:", srv.Movements("refund9") == 1, "faults fired:", srv.FaultsFired())

	srv.Advance(time.Second)
	st, err := c.Payouts.SendStatus(ctx, "refund9")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(st.TransactionStatus)
	// Output:
	// outcome unknown: true refund9
	// sent once: true faults fired: 1
	// success
}
