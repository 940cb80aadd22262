// Subscriptions walks a subscription through its life: a trial announced by webhook, the
// trial's end, a renewal, a pause and a resume, and a cancel at the end of the period.
// With no credentials in the environment it runs against an embedded sandbox and moves
// the sandbox's clock; against a real service it stops where the clock would have to
// move.
//
//	go run ./examples/subscriptions
package main

import (
	"context"
	"errors"
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

const day = 24 * time.Hour

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := run(ctx, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, out io.Writer) error {
	// The merchant's webhook endpoint. The embedded sandbox posts the trial event to it.
	events := make(chan billing.Event, 8)
	hookURL, stopHook, err := serveWebhooks(events)
	if err != nil {
		return err
	}
	defer stopHook()

	c, sandbox, err := connect(out, billingtest.WithManualClock(), billingtest.WithWebhookURL(hookURL))
	if err != nil {
		return err
	}
	if sandbox != nil {
		defer sandbox.Close()
	}

	cust, err := c.Customers.Create(ctx, &billing.CustomerCreateParams{
		Email: fmt.Sprintf("kofi.%d@example.com", time.Now().UnixNano()), Name: "Kofi Boateng",
	})
	if err != nil {
		return fmt.Errorf("creating a customer: %w", err)
	}
	product, err := c.Products.Create(ctx, &billing.ProductCreateParams{Name: "Pro plan", Type: billing.ProductTypeDigital})
	if err != nil {
		return fmt.Errorf("creating a product: %w", err)
	}
	price, err := c.Products.CreatePrice(ctx, product.ID, &billing.PriceCreateParams{
		UnitAmount: billing.GHS(50), IsRecurring: true, Interval: billing.PriceIntervalMonth, TrialPeriodDays: 14,
	})
	if err != nil {
		return fmt.Errorf("creating a price: %w", err)
	}
	fmt.Fprintf(out, "price %s: %s a month, %d-day trial\n", price.ID, billing.Money{Amount: price.UnitAmount, Currency: price.Currency}, price.TrialPeriodDays)

	// The price's trial applies: the subscription starts TRIALING.
	sub, err := c.Subscriptions.Create(ctx, &billing.SubscriptionCreateParams{CustomerID: cust.ID, PriceID: price.ID})
	if err != nil {
		return fmt.Errorf("subscribing: %w", err)
	}
	fmt.Fprintf(out, "subscription %s is %s until %s\n", sub.ID, sub.Status, date(sub.TrialEnd))

	srv := sandbox
	if srv == nil {
		fmt.Fprintln(out, "against a real service the trial ends in 14 days; the example stops here")
		return nil
	}

	// Deliveries go out as the sandbox's clock allows.
	srv.Advance(0)
	select {
	case ev := <-events:
		fmt.Fprintf(out, "webhook %s for %s\n", ev.Kind(), ev.Reference())
	case <-ctx.Done():
		return ctx.Err()
	}

	srv.Advance(14 * day)
	if sub, err = c.Subscriptions.Get(ctx, sub.ID); err != nil {
		return err
	}
	fmt.Fprintf(out, "14 days later: %s, billed %s to %s\n", sub.Status, date(sub.CurrentPeriodStart), date(sub.CurrentPeriodEnd))

	srv.Advance(31 * day)
	if sub, err = c.Subscriptions.Get(ctx, sub.ID); err != nil {
		return err
	}
	fmt.Fprintf(out, "renewed: billed %s to %s\n", date(sub.CurrentPeriodStart), date(sub.CurrentPeriodEnd))

	state, err := c.Subscriptions.Pause(ctx, sub.ID)
	if err != nil {
		return fmt.Errorf("pausing: %w", err)
	}
	srv.Advance(60 * day)
	fmt.Fprintf(out, "%s for 60 days: no renewal\n", state.Status)
	if state, err = c.Subscriptions.Resume(ctx, sub.ID); err != nil {
		return fmt.Errorf("resuming: %w", err)
	}
	if sub, err = c.Subscriptions.Get(ctx, sub.ID); err != nil {
		return err
	}
	fmt.Fprintf(out, "%s again: a new period %s to %s\n", state.Status, date(sub.CurrentPeriodStart), date(sub.CurrentPeriodEnd))

	if state, err = c.Subscriptions.Cancel(ctx, sub.ID, &billing.SubscriptionCancelParams{AtPeriodEnd: true}); err != nil {
		return fmt.Errorf("cancelling: %w", err)
	}
	fmt.Fprintf(out, "cancel asked on %s: %s until %s\n", date(state.CanceledAt), state.Status, date(state.CancelAt))
	srv.Advance(state.CancelAt.Sub(srv.Now()))
	if sub, err = c.Subscriptions.Get(ctx, sub.ID); err != nil {
		return err
	}
	fmt.Fprintf(out, "on %s: %s\n", date(srv.Now()), sub.Status)

	_, err = c.Subscriptions.Resume(ctx, sub.ID)
	var apiErr *billing.APIError
	if errors.Is(err, billing.ErrConflict) && errors.As(err, &apiErr) {
		fmt.Fprintf(out, "resuming it is refused (%s): %s\n", apiErr.Code, apiErr.Message)
	}
	return nil
}

// serveWebhooks serves billing.NewWebhookHandler on a loopback port, handing each event
// to events, and returns its URL and a function that stops it.
func serveWebhooks(events chan<- billing.Event) (string, func(), error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	hs := &http.Server{
		Handler: billing.NewWebhookHandler(func(_ context.Context, ev billing.Event) error {
			events <- ev
			return nil
		}),
		ReadHeaderTimeout: 5 * time.Second,
	}
	go func() { _ = hs.Serve(l) }()
	return "http://" + l.Addr().String(), func() { _ = hs.Close() }, nil
}

func date(t time.Time) string { return t.UTC().Format("2006-01-02") }

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
