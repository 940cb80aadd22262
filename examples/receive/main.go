// Receive asks customers' phones to approve mobile-money payments, then waits for each
// outcome the way production code should: the callback when it comes, the status check
// when it does not (a Tracker does both). With no credentials in the environment it runs
// against an embedded sandbox, whose test numbers choose the outcomes.
//
//	go run ./examples/receive
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

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if err := run(ctx, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, out io.Writer) error {
	c, sandbox, err := connect(out)
	if err != nil {
		return err
	}
	if sandbox != nil {
		defer sandbox.Close()
	}

	// The Tracker takes the callbacks at CallbackURL and falls back to the status check
	// when none has come five minutes after the request.
	tracker := billing.NewTracker(c, billing.TrackerOptions{})
	callbackURL, stop, err := serve(tracker.Handler())
	if err != nil {
		return err
	}
	defer stop()

	// Client references must be unique: a reused one is refused and moves nothing.
	run := time.Now().UnixNano()
	var paidRef string
	for i, payer := range []struct{ who, phone string }{
		{"a customer who approves", "+233 24 123 4567"},
		{"a customer who types a wrong PIN", "233 24 123 0001"}, // sandbox test number 0001
	} {
		ref := fmt.Sprintf("order%d%d", run, i)
		// The Tracker records the movement, then sends it: a crash in between forgets
		// nothing, as its status check is asked later.
		r, err := tracker.Receive(ctx, &billing.ReceiveParams{
			Amount:          billing.GHS(25),
			Phone:           payer.phone,
			Provider:        billing.ProviderMTN,
			Description:     "Order " + ref,
			ClientReference: ref,
			CallbackURL:     callbackURL,
		})
		if err != nil {
			return fmt.Errorf("asking %s: %w", payer.who, err)
		}
		fmt.Fprintf(out, "asked %s (%s) for %s: %s\n", payer.who, r.Phone, billing.Money{Amount: r.Amount, Currency: r.Currency}, r.Status)

		outcome, err := tracker.Await(ctx, billing.KindReceive, ref)
		if err != nil {
			return fmt.Errorf("waiting for %s: %w", ref, err)
		}
		fmt.Fprintf(out, "  outcome by %s: %s, code %s\n", outcome.Source, outcome.State, outcome.Code)
		if outcome.Succeeded() {
			paidRef = ref
		}
	}

	// The status check says the same, with the charges.
	st, err := c.Payments.ReceiveStatus(ctx, paidRef)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "status check: %s, fulfilled %t, %s paid, charges %s, %s after charges\n", st.Status, st.IsFulfilled,
		billing.Money{Amount: st.Amount, Currency: st.CurrencyCode}, billing.Money{Amount: st.Charges, Currency: st.CurrencyCode},
		billing.Money{Amount: st.AmountAfterCharges, Currency: st.CurrencyCode})

	// A decline is a plain error, and nothing moved.
	_, err = c.Payments.Receive(ctx, &billing.ReceiveParams{
		Amount: billing.GHS(25), Phone: "233241230003", Provider: billing.ProviderMTN, // sandbox test number 0003
		Description: "Order", ClientReference: fmt.Sprintf("order%d9", run),
	})
	var apiErr *billing.APIError
	if errors.As(err, &apiErr) {
		fmt.Fprintf(out, "declined at once: code %s\n", apiErr.Code)
	}

	// Bad input never leaves the machine.
	_, err = c.Payments.Receive(ctx, &billing.ReceiveParams{
		Amount: billing.GHS(25), Phone: "024 123 4567", Provider: billing.ProviderMTN, Description: "Order", ClientReference: "x1",
	})
	var invalid *billing.ValidationError
	if errors.As(err, &invalid) {
		fmt.Fprintf(out, "refused before sending: %s %s\n", invalid.Field, invalid.Rule)
	}
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
