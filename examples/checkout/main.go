// Checkout creates hosted checkout sessions: the backend creates the session, sends the
// payer to its checkout URL, and learns the outcome from the payment.succeeded webhook
// and from Payments.Get. With no credentials in the environment it runs against an
// embedded sandbox, which also plays the payer on the checkout page.
//
//	go run ./examples/checkout
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"time"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
	"github.com/billingsdk/billing-go/examples/internal/callbacks"
	"github.com/billingsdk/billing-go/examples/internal/exampleenv"
)

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := run(ctx, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, out io.Writer) error {
	// The webhook URL registered in the dashboard receives payment.succeeded.
	events := make(chan billing.Event, 8)
	webhookURL, stop, err := callbacks.Serve(billing.NewWebhookHandler(func(_ context.Context, ev billing.Event) error {
		events <- ev
		return nil
	}))
	if err != nil {
		return err
	}
	defer stop()
	env, err := exampleenv.Connect(out, billingtest.WithWebhookURL(webhookURL))
	if err != nil {
		return err
	}
	defer env.Close()
	c := env.Client

	pay, err := c.Payments.CreateCheckout(ctx, &billing.CheckoutParams{
		Amount:      5000, // 50.00 GHS
		Description: "Two bags of rice",
		Customer:    billing.CheckoutCustomer{Name: "Ama Mensah", Email: "ama@example.com", Phone: "+233 24 123 4567"},
		Metadata:    billing.Metadata{"orderId": "1042"},
		ReturnURL:   "https://shop.example.com/orders/1042",
	})
	if err != nil {
		return fmt.Errorf("creating the session: %w", err)
	}
	fmt.Fprintf(out, "session %s: %s; send the payer to %s\n", pay.Reference, pay.Status, pay.CheckoutURL)
	if env.Sandbox == nil {
		return nil // a real payer completes the page; the webhook and Payments.Get tell the outcome
	}

	// The payer confirms on the page and enters the mobile-money PIN.
	if err := env.Sandbox.CompleteCheckout(pay.Reference, "MOBILE_MONEY", "succeeded"); err != nil {
		return err
	}
	select {
	case ev := <-events:
		fmt.Fprintf(out, "webhook %s for %s: %s\n", ev.Kind(), ev.Reference(), ev.State())
	case <-ctx.Done():
		return fmt.Errorf("no webhook: %w", ctx.Err())
	}
	pay, err = c.Payments.Get(ctx, pay.Reference)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "paid by %s (%s): fee %s, net %s GHS; fulfil: %t\n",
		pay.Method, pay.MobileMoneyDetail.Network, billing.DecimalAmount(pay.Fee), billing.DecimalAmount(pay.Net), pay.Succeeded())

	// A declined card ends the session FAILED, and sends no webhook.
	declined, err := c.Payments.CreateCheckout(ctx, &billing.CheckoutParams{Amount: 12000, Description: "Annual plan"})
	if err != nil {
		return err
	}
	if err := env.Sandbox.CompleteCheckout(declined.Reference, "CARD", "failed"); err != nil {
		return err
	}
	declined, err = c.Payments.Get(ctx, declined.Reference)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "second session %s: %s (%s)\n", declined.Status, declined.FailureCode, declined.FailureMessage)
	return nil
}
