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
	"net"
	"net/http"
	"os"
	"time"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
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
	webhookURL, stop, err := serve(billing.NewWebhookHandler(func(_ context.Context, ev billing.Event) error {
		events <- ev
		return nil
	}))
	if err != nil {
		return err
	}
	defer stop()
	c, sandbox, err := connect(out, billingtest.WithWebhookURL(webhookURL))
	if err != nil {
		return err
	}
	if sandbox != nil {
		defer sandbox.Close()
	}

	pay, err := c.Payments.CreateCheckout(ctx, &billing.CheckoutParams{
		Amount:      5000, // minor units: GHS 50.00
		Description: "Two bags of rice",
		Customer:    billing.CheckoutCustomer{Name: "Ama Mensah", Email: "ama@example.com", Phone: "+233 24 123 4567"},
		Metadata:    billing.Metadata{"orderId": "1042"},
		ReturnURL:   "https://shop.example.com/orders/1042",
	})
	if err != nil {
		return fmt.Errorf("creating the session: %w", err)
	}
	fmt.Fprintf(out, "session %s: %s; send the payer to %s\n", pay.Reference, pay.Status, pay.CheckoutURL)
	if sandbox == nil {
		return nil // a real payer completes the page; the webhook and Payments.Get tell the outcome
	}

	// The payer confirms on the page and enters the mobile-money PIN.
	if err := sandbox.CompleteCheckout(pay.Reference, "MOBILE_MONEY", "succeeded"); err != nil {
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
	fmt.Fprintf(out, "paid %s by %s (%s): fee %s, net %s; fulfil: %t\n",
		billing.Money{Amount: pay.Amount, Currency: pay.Currency}, pay.Method, pay.MobileMoneyDetail.Network,
		billing.Money{Amount: pay.Fee, Currency: pay.Currency}, billing.Money{Amount: pay.Net, Currency: pay.Currency}, pay.Succeeded())

	// A declined card ends the session FAILED, and sends no webhook.
	declined, err := c.Payments.CreateCheckout(ctx, &billing.CheckoutParams{Amount: 12000, Description: "Annual plan"})
	if err != nil {
		return err
	}
	if err := sandbox.CompleteCheckout(declined.Reference, "CARD", "failed"); err != nil {
		return err
	}
	declined, err = c.Payments.Get(ctx, declined.Reference)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "second session %s: %s (%s)\n", declined.Status, declined.FailureCode, declined.FailureMessage)
	return nil
}

// connect returns a client for the service named by BILLING_BASE_URL, BILLING_CLIENT_ID
// and BILLING_CLIENT_SECRET when they are set. Otherwise it starts a sandbox
// of the service in this process (opts configure it) and returns it too, for the caller
// to drive and close.
func connect(out io.Writer, opts ...billingtest.Option) (*billing.Client, *billingtest.Server, error) {
	base, id, secret := os.Getenv("BILLING_BASE_URL"), os.Getenv("BILLING_CLIENT_ID"), os.Getenv("BILLING_CLIENT_SECRET")
	if base == "" && id == "" && secret == "" {
		sandbox, err := billingtest.Start(opts...)
		if err != nil {
			return nil, nil, err
		}
		fmt.Fprintf(out, "using an embedded sandbox at %s (set BILLING_BASE_URL, BILLING_CLIENT_ID and BILLING_CLIENT_SECRET to use a real service)\n", sandbox.URL)
		return sandbox.Client(), sandbox, nil
	}
	c, err := billing.NewClient(
		billing.WithBaseURL(base),
		billing.WithClientCredentials(id, secret),
	)
	if err != nil {
		return nil, nil, fmt.Errorf("BILLING_BASE_URL, BILLING_CLIENT_ID and BILLING_CLIENT_SECRET must all be set: %w", err)
	}
	fmt.Fprintf(out, "using the service at %s\n", base)
	return c, nil, nil
}

// serve serves h on a free port of this machine, where the embedded sandbox can reach
// it, and returns its base URL and a function that stops it. In production the service
// is given a public HTTPS address of the merchant's server instead.
func serve(h http.Handler) (url string, stop func(), err error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(l) }()
	return "http://" + l.Addr().String(), func() { _ = srv.Close() }, nil
}
