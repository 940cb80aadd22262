// Quickstart is a short tour of the SDK: it registers a customer, changes it, lists
// customers, puts a product with a monthly price in the catalog and subscribes a
// customer to it, then takes a mobile-money payment and waits for its confirmed outcome.
// With no credentials in the environment it runs against an embedded sandbox; against a
// real service it stops before the payment, which would prompt a real phone.
//
//	go run ./examples/quickstart
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
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
	c, sandbox, err := connect(out)
	if err != nil {
		return err
	}
	if sandbox != nil {
		defer sandbox.Close()
	}

	// Register a customer. The phone number is normalised to international form.
	email := fmt.Sprintf("ama.%d@example.com", time.Now().UnixNano())
	cust, err := c.Customers.Create(ctx, &billing.CustomerCreateParams{
		Email:    email,
		Name:     "Ama Mensah",
		Phone:    "+233 24 123 4567",
		Metadata: billing.Metadata{"source": "quickstart"},
	})
	if err != nil {
		return fmt.Errorf("creating a customer: %w", err)
	}
	fmt.Fprintf(out, "created customer %s (%s, %s, %s)\n", cust.ID, cust.Name, cust.Phone, cust.Status)

	// Bad input never leaves the machine: it is refused with a ValidationError.
	_, err = c.Customers.Create(ctx, &billing.CustomerCreateParams{Email: "not-an-email", Name: "Kofi"})
	var invalid *billing.ValidationError
	if errors.As(err, &invalid) {
		fmt.Fprintf(out, "refused before sending: %s %s\n", invalid.Field, invalid.Rule)
	}

	// A second customer with the same email is a conflict.
	_, err = c.Customers.Create(ctx, &billing.CustomerCreateParams{Email: email, Name: "Someone Else"})
	if errors.Is(err, billing.ErrConflict) {
		fmt.Fprintln(out, "the same email again is refused: emails are unique")
	}

	// Update: clear the phone, block the customer.
	cust, err = c.Customers.Update(ctx, cust.ID, &billing.CustomerUpdateParams{
		Phone:  billing.Null[string](),
		Status: billing.CustomerStatusBlocked,
	})
	if err != nil {
		return fmt.Errorf("updating the customer: %w", err)
	}
	fmt.Fprintf(out, "updated customer %s: phone %q, status %s\n", cust.ID, cust.Phone, cust.Status)

	// List the blocked customers, page after page, lazily.
	n := 0
	for summary, err := range c.Customers.List(ctx, &billing.CustomerListParams{Status: billing.CustomerStatusBlocked}) {
		if err != nil {
			return fmt.Errorf("listing customers: %w", err)
		}
		if summary.ID == cust.ID {
			fmt.Fprintf(out, "found %s among the blocked customers\n", summary.Email)
		}
		n++
	}
	fmt.Fprintf(out, "%d blocked customer(s) in all\n", n)

	// A product in the catalog, with a monthly price of GHS 50.00 and a 7-day trial.
	product, err := c.Products.Create(ctx, &billing.ProductCreateParams{Name: "Pro plan", Type: billing.ProductTypeDigital})
	if err != nil {
		return fmt.Errorf("creating a product: %w", err)
	}
	price, err := c.Products.CreatePrice(ctx, product.ID, &billing.PriceCreateParams{
		UnitAmount: billing.GHS(50), IsRecurring: true, Interval: billing.PriceIntervalMonth, TrialPeriodDays: 7,
	})
	if err != nil {
		return fmt.Errorf("creating a price: %w", err)
	}
	// Amounts are in minor units; billing.Money prints 5000 GHS as GHS 50.00.
	fmt.Fprintf(out, "product %s (%s) at %s every %d %s\n", product.ID, product.Name,
		billing.Money{Amount: price.UnitAmount, Currency: price.Currency}, price.IntervalCount, price.Interval)

	// A recurring price needs an interval: refused before sending, like any bad input.
	_, err = c.Products.CreatePrice(ctx, product.ID, &billing.PriceCreateParams{UnitAmount: billing.GHS(50), IsRecurring: true})
	if errors.As(err, &invalid) {
		fmt.Fprintf(out, "refused before sending: %s %s\n", invalid.Field, invalid.Rule)
	}

	// Subscribe a new customer to the price. The price's trial applies.
	subscriber, err := c.Customers.Create(ctx, &billing.CustomerCreateParams{
		Email: fmt.Sprintf("kofi.%d@example.com", time.Now().UnixNano()), Name: "Kofi Boateng",
	})
	if err != nil {
		return fmt.Errorf("creating a customer: %w", err)
	}
	sub, err := c.Subscriptions.Create(ctx, &billing.SubscriptionCreateParams{CustomerID: subscriber.ID, PriceID: price.ID})
	if err != nil {
		return fmt.Errorf("subscribing: %w", err)
	}
	fmt.Fprintf(out, "subscription %s: %s for %d days, then billed monthly\n", sub.ID, sub.Status, int(sub.TrialEnd.Sub(sub.TrialStart).Hours()/24))

	if sandbox == nil {
		fmt.Fprintln(out, "no payment against a real service: it would prompt a real phone (see examples/receive)")
		return nil
	}
	return takePayment(ctx, out, c)
}

// takePayment asks the customer's phone to approve GHS 50.00 and waits for the outcome.
// A Tracker records the payment, sends it, hears its callback, and confirms the callback
// with the status check before it says anything.
func takePayment(ctx context.Context, out io.Writer, c *billing.Client) error {
	tracker := billing.NewTracker(c, billing.TrackerOptions{})
	callbacks := httptest.NewServer(tracker.Handler()) // your server's callback endpoint
	defer callbacks.Close()

	ref := fmt.Sprintf("quickstart%d", time.Now().UnixNano()) // one reference per payment, never reused
	r, err := tracker.Receive(ctx, &billing.ReceiveParams{
		Amount: billing.GHS(50), Phone: "+233 24 123 4567", Provider: billing.ProviderMTN,
		Description: "Pro plan", ClientReference: ref, CallbackURL: callbacks.URL,
	})
	if err != nil {
		return fmt.Errorf("asking for a payment: %w", err)
	}
	fmt.Fprintf(out, "asked %s to pay %s: %s\n", r.Phone, billing.Money{Amount: r.Amount, Currency: r.Currency}, r.Status)

	outcome, err := tracker.Await(ctx, billing.KindReceive, ref)
	if err != nil {
		return fmt.Errorf("awaiting the payment: %w", err)
	}
	if !outcome.Succeeded() {
		return fmt.Errorf("the payment %s: code %s", outcome.State, outcome.Code)
	}
	fmt.Fprintf(out, "paid %s by %s, confirmed by the status check: fulfil the order\n",
		billing.Money{Amount: outcome.Amount, Currency: r.Currency}, outcome.Source)
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
