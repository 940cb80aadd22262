// Meters records usage: it defines a meter, records usage events (sending one of them
// twice, as a retry after a lost answer would, without counting it twice), lists the
// events, and computes a customer's usage for the period. A second meter keeps the last
// reported number of seats.
//
//	go run ./examples/meters
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
	unique := time.Now().UnixNano() // event names and emails are unique per business

	cust, err := c.Customers.Create(ctx, &billing.CustomerCreateParams{
		Email: fmt.Sprintf("usage.%d@example.com", unique),
		Name:  "Yaw Darko",
	})
	if err != nil {
		return fmt.Errorf("creating a customer: %w", err)
	}

	calls, err := c.Meters.Create(ctx, &billing.MeterCreateParams{
		Name: "Search API calls", EventName: fmt.Sprintf("search.call.%d", unique), Aggregation: billing.MeterAggregationSum,
	})
	if err != nil {
		return fmt.Errorf("creating a meter: %w", err)
	}
	fmt.Fprintf(out, "meter %s (%s, %s)\n", calls.ID, calls.Name, calls.Aggregation)

	// Each batch of calls is reported once, under an idempotency key of its own.
	periodStart := time.Now().Add(-time.Minute)
	if sandbox != nil {
		periodStart = sandbox.Now().Add(-time.Minute)
	}
	batches := []struct {
		key   string
		calls float64
	}{{"batch-1", 120}, {"batch-2", 80}, {"batch-3", 45}}
	var first *billing.MeterEvent
	for _, b := range batches {
		ev, err := c.Meters.RecordEvent(ctx, calls.ID, &billing.MeterEventParams{
			CustomerID: cust.ID, Value: billing.Value(b.calls), IdempotencyKey: b.key,
			Metadata: billing.Metadata{"region": "accra"},
		})
		if err != nil {
			return fmt.Errorf("recording %s: %w", b.key, err)
		}
		if first == nil {
			first = ev
		}
		fmt.Fprintf(out, "recorded %s: %g calls as %s\n", b.key, ev.Value, ev.ID)
	}

	// The answer to batch-1 was "lost", so it is sent again: the service answers with the
	// event it already has and counts nothing new.
	again, err := c.Meters.RecordEvent(ctx, calls.ID, &billing.MeterEventParams{
		CustomerID: cust.ID, Value: billing.Value(120.0), IdempotencyKey: "batch-1",
	})
	if err != nil {
		return fmt.Errorf("re-sending batch-1: %w", err)
	}
	fmt.Fprintf(out, "batch-1 again: the same event %s, not counted twice: %t\n", again.ID, again.ID == first.ID)

	fmt.Fprintln(out, "events, most recently ingested first:")
	for ev, err := range c.Meters.Events(ctx, calls.ID, &billing.MeterEventListParams{CustomerID: cust.ID}) {
		if err != nil {
			return fmt.Errorf("listing events: %w", err)
		}
		fmt.Fprintf(out, "  %-8s %4g\n", ev.IdempotencyKey, ev.Value)
	}

	usage, err := c.Meters.Usage(ctx, calls.ID, cust.ID, periodStart, time.Time{})
	if err != nil {
		return fmt.Errorf("computing usage: %w", err)
	}
	fmt.Fprintf(out, "usage this period: %g calls in %d events (%s)\n", usage.Value, usage.Events, usage.Aggregation)

	// A LAST meter reports the most recently ingested reading, here seats in use; a
	// reading of zero is sent with billing.Value(0.0).
	seats, err := c.Meters.Create(ctx, &billing.MeterCreateParams{
		Name: "Seats in use", EventName: fmt.Sprintf("seats.in_use.%d", unique), Aggregation: billing.MeterAggregationLast,
	})
	if err != nil {
		return fmt.Errorf("creating the seats meter: %w", err)
	}
	for _, n := range []float64{5, 8, 0, 6} {
		if _, err := c.Meters.RecordEvent(ctx, seats.ID, &billing.MeterEventParams{CustomerID: cust.ID, Value: billing.Value(n)}); err != nil {
			return fmt.Errorf("recording seats: %w", err)
		}
	}
	seatUsage, err := c.Meters.Usage(ctx, seats.ID, cust.ID, time.Time{}, time.Time{})
	if err != nil {
		return fmt.Errorf("computing seats: %w", err)
	}
	fmt.Fprintf(out, "seats in use now: %g (%s of %d readings)\n", seatUsage.Value, seatUsage.Aggregation, seatUsage.Events)
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
