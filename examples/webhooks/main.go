// Webhooks is a merchant server that takes a mobile-money payment and pays one out, hears
// their outcomes at its callback endpoint, and resolves each through a Tracker: by the
// callback when it comes, by the status check when it does not. The embedded sandbox drops
// the callback of one payment, so the five-minute fallback shows, and a forged callback
// is refused because the status check contradicts it.
//
// With no credentials in the environment it runs against an embedded sandbox, whose clock
// it moves forward instead of waiting five minutes. Against a real service the callbacks
// must reach this machine at a public URL; until they do, the Tracker falls back to the
// status checks after five real minutes.
//
//	go run ./examples/webhooks
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
)

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	if err := run(ctx, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, out io.Writer) error {
	// One endpoint takes every callback and every webhook: the Tracker's handler. Its
	// routes are added once the Tracker exists.
	mux := http.NewServeMux()
	base, stop, err := serve(mux)
	if err != nil {
		return err
	}
	defer stop()
	c, sandbox, err := connect(out, billingtest.WithWebhookURL(base+"/webhooks"))
	if err != nil {
		return err
	}
	if sandbox != nil {
		defer sandbox.Close()
	}

	// Against the embedded sandbox the Tracker keeps the sandbox's time, so moving that
	// clock moves the Tracker's five-minute wait too.
	var opts billing.TrackerOptions
	if sandbox != nil {
		opts.Clock = sandbox.Clock()
	}
	tracker := billing.NewTracker(c, opts)

	// The handler answers redeliveries without handling them twice, and believes a
	// claimed success or failure only once the status check of the tracked kind agrees:
	// callbacks carry no signature, so anyone could post one. Money movements settle in
	// the Tracker (Await, OnOutcome); every event that settles no movement it tracks (a
	// subscription's trial, a checkout made without the Tracker) goes to the event
	// handler, confirmed first. Without one, those are answered and logged.
	handler := tracker.Handler(billing.WithDedupe(0), billing.WithEventHandler(func(_ context.Context, ev billing.Event) error {
		fmt.Fprintf(out, "the shop's own event: %s, %s\n", ev.Kind(), ev.State())
		return nil
	}))
	mux.Handle("/callbacks", handler) // the callback URL of each request
	mux.Handle("/webhooks", handler)  // the webhook URL registered in the dashboard
	callbackURL := base + "/callbacks"
	if public := os.Getenv("BILLING_CALLBACK_URL"); public != "" {
		callbackURL = public // where a real service can reach this endpoint
	}

	// Client references must be unique: each names its operation for good.
	run := time.Now().UnixNano()
	payment := fmt.Sprintf("order%d", run)
	payout := fmt.Sprintf("refund%d", run)
	silent := fmt.Sprintf("order%dsilent", run)
	if sandbox != nil {
		sandbox.InjectCallbackFault(billingtest.CallbackFault{Kind: billingtest.CallbackDropped, Reference: silent})
	}

	for _, ref := range []string{payment, silent} {
		// The Tracker records each movement before sending it, so no crash forgets it.
		if _, err := tracker.Receive(ctx, &billing.ReceiveParams{
			Amount: billing.GHS(50), Phone: "+233 24 123 4567", Provider: billing.ProviderMTN,
			Description: "Order " + ref, ClientReference: ref, CallbackURL: callbackURL,
		}); err != nil {
			return fmt.Errorf("receive %s: %w", ref, err)
		}
		fmt.Fprintln(out, "asked for", billing.Money{Amount: 5000, Currency: "GHS"}, "reference", describe(ref, run))
	}
	if _, err := tracker.Send(ctx, &billing.SendParams{
		Amount: billing.GHS(20), Phone: "+233 20 123 4567", Provider: billing.ProviderTelecel, Name: "Kofi Boateng",
		Description: "Refund", ClientReference: payout, CallbackURL: callbackURL,
	}); err != nil {
		return fmt.Errorf("send %s: %w", payout, err)
	}
	fmt.Fprintln(out, "paid out", billing.Money{Amount: 2000, Currency: "GHS"}, "reference", describe(payout, run))

	// The callbacks of the first two arrive within moments.
	for _, w := range []struct {
		kind billing.Kind
		ref  string
	}{{billing.KindReceive, payment}, {billing.KindSend, payout}} {
		o, err := tracker.Await(ctx, w.kind, w.ref)
		if err != nil {
			return fmt.Errorf("awaiting %s: %w", w.ref, err)
		}
		report(out, o, run)
	}

	// Someone posts a success for a payment nobody made. The status check says otherwise.
	forged := `{"ResponseCode":"0000","Message":"success","Data":{"ClientReference":"order1forged","Amount":500.00}}`
	resp, err := http.Post(base+"/callbacks", "application/json", strings.NewReader(forged))
	if err != nil {
		return err
	}
	resp.Body.Close()
	fmt.Fprintf(out, "a forged success callback was answered %d: nothing was fulfilled\n", resp.StatusCode)

	// No callback comes for the third. Five minutes after the request the Tracker asks the
	// status check, as the service asks.
	if sandbox != nil {
		fmt.Fprintln(out, "no callback for", describe(silent, run)+"; moving the sandbox clock five minutes on")
		sandbox.Advance(5 * time.Minute)
	}
	o, err := tracker.Await(ctx, billing.KindReceive, silent)
	if err != nil {
		return fmt.Errorf("awaiting %s: %w", silent, err)
	}
	report(out, o, run)

	// A donation page the shop made without the Tracker: its webhook reaches the event
	// handler as the payment the service holds.
	if sandbox != nil {
		donation, err := c.Payments.CreateCheckout(ctx, &billing.CheckoutParams{Amount: billing.GHS(10), Description: "Donation"})
		if err != nil {
			return err
		}
		if err := sandbox.CompleteCheckout(donation.Reference, "CARD", "succeeded"); err != nil {
			return err
		}
		sandbox.Advance(0) // the sandbox posts the webhook
	}
	return nil
}

// report prints an outcome the way an order system would record it.
func report(out io.Writer, o *billing.Outcome, run int64) {
	verdict := "fulfil the order"
	switch {
	case o.Failed(), o.Expired():
		verdict = "nothing moved"
	case o.Mismatched():
		verdict = "money moved, but not as asked: look at it"
	case o.Unknown():
		verdict = "unknown: ask the service"
	case o.IsPending():
		verdict = "still pending: ask again later"
	}
	fmt.Fprintf(out, "%s %s: %s by %s, code %s, %s: %s\n", o.Kind, describe(o.ClientReference, run), o.State, o.Source,
		o.Code, billing.Money{Amount: o.Amount, Currency: "GHS"}, verdict)
}

// describe shortens a reference for printing: the run's timestamp is left out.
func describe(ref string, run int64) string {
	return strings.Replace(ref, fmt.Sprint(run), "…", 1)
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
