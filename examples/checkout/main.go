// Checkout creates hosted checkout sessions and tracks them durably: the backend
// creates the session through a Tracker (which records it before the request and keeps
// the session's reference), sends the payer to its checkout URL, and learns the outcome
// from the payment.succeeded webhook, confirmed by Payments.Get, or from Payments.Get
// alone when no webhook comes; a session left unpaid for 24 hours settles expired. With
// no credentials in the environment it runs against an embedded sandbox with a manual
// clock, which also plays the payer on the checkout page.
//
//	go run ./examples/checkout
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"
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
	// The Tracker's handler is the webhook URL registered in the dashboard: it settles
	// the checkouts it tracks, and gives every other event to the event handler.
	mux := http.NewServeMux() // its route is added once the Tracker exists
	webhookURL, stop, err := serve(mux)
	if err != nil {
		return err
	}
	defer stop()
	c, sandbox, err := connect(out, billingtest.WithWebhookURL(webhookURL+"/webhooks"), billingtest.WithManualClock())
	if err != nil {
		return err
	}
	opts := billing.TrackerOptions{Logger: slog.New(slog.DiscardHandler)} // the in-memory store
	if sandbox != nil {
		defer sandbox.Close()
		opts.Clock = sandbox.Clock() // the sandbox's time: a day passes in a moment
	}
	tracker := billing.NewTracker(c, opts)
	mux.Handle("/webhooks", tracker.Handler(billing.WithEventHandler(func(_ context.Context, ev billing.Event) error {
		fmt.Fprintf(out, "an event no checkout of ours settles: %s %s\n", ev.Kind(), ev.Reference())
		return nil
	})))
	runCtx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	go func() { _ = tracker.Run(runCtx) }() // the status checks, for sessions whose webhook never comes

	pay, err := tracker.CreateCheckout(ctx, &billing.CheckoutParams{
		Amount:          billing.GHS(50),
		Currency:        "GHS",
		Description:     "Two bags of rice",
		Customer:        billing.CheckoutCustomer{Name: "Ama Mensah", Email: "ama@example.com", Phone: "+233 24 123 4567"},
		Metadata:        billing.Metadata{"orderId": "1042"},
		ClientReference: "order1042", // required when tracked: the key of the checkout
		ReturnURL:       "https://shop.example.com/orders/1042",
	})
	if err != nil {
		return fmt.Errorf("creating the session: %w", err)
	}
	fmt.Fprintf(out, "session %s: %s; send the payer to %s\n", pay.Reference, pay.Status, pay.CheckoutURL)
	if sandbox == nil {
		return nil // a real payer completes the page; Await or OnOutcome tells the outcome
	}

	// The payer confirms on the page and enters the mobile-money PIN; the webhook comes.
	if err := sandbox.CompleteCheckout(pay.Reference, "MOBILE_MONEY", "succeeded"); err != nil {
		return err
	}
	sandbox.Advance(0) // the sandbox posts the webhook
	paid, err := tracker.Await(ctx, billing.KindCheckout, "order1042")
	if err != nil {
		return err
	}
	// The payment the service holds, never what the webhook said.
	p := paid.Event.(*billing.CheckoutEvent).Data
	fmt.Fprintf(out, "order1042: %s by %s: %s, fee %s; fulfil: %t\n", paid.State, paid.Source,
		billing.Money{Amount: paid.Amount, Currency: paid.Currency}, billing.Money{Amount: p.Fee, Currency: p.Currency}, paid.Succeeded())

	// A second payer opens the page and leaves. A day later the session is expired.
	left, err := tracker.CreateCheckout(ctx, &billing.CheckoutParams{Amount: billing.GHS(120), Currency: "GHS", Description: "Annual plan", ClientReference: "order1043"})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "session %s: %s\n", left.Reference, left.Status)
	sandbox.Advance(24*time.Hour + time.Minute)
	expired, err := tracker.Await(ctx, billing.KindCheckout, "order1043")
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "order1043: %s; fulfil: %t\n", expired.State, expired.Succeeded())
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
