package billing_test

import (
	"context"
	"fmt"
	"log"
	"time"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
)

// A usage meter: define it, record events (a repeated idempotency key counts once), and
// read the usage of a period.
func ExampleMetersService() {
	srv, err := billingtest.Start(billingtest.WithManualClock())
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	c := srv.Client()
	ctx := context.Background()

	cust, err := c.Customers.Create(ctx, &billing.CustomerCreateParams{Email: "ama@example.com", Name: "Ama Mensah"})
	if err != nil {
		log.Fatal(err)
	}
	meter, err := c.Meters.Create(ctx, &billing.MeterCreateParams{Name: "API calls", EventName: "api.call"})
	if err != nil {
		log.Fatal(err)
	}
	periodStart := srv.Now()
	for _, key := range []string{"req-1", "req-2", "req-2", "req-3"} { // req-2 is sent twice
		_, err := c.Meters.RecordEvent(ctx, meter.ID, &billing.MeterEventParams{
			CustomerID: cust.ID, Value: billing.Value(10.0), IdempotencyKey: key,
		})
		if err != nil {
			log.Fatal(err)
		}
		srv.Advance(time.Minute)
	}

	usage, err := c.Meters.Usage(ctx, meter.ID, cust.ID, periodStart, srv.Now())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s over %d events: %g\n", usage.Aggregation, usage.Events, usage.Value)
	// Output:
	// SUM over 3 events: 30
}

// A LAST meter reports the most recently ingested reading, whatever the readings' own
// timestamps say.
func ExampleMetersService_Usage() {
	srv, err := billingtest.Start(billingtest.WithManualClock())
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	c := srv.Client()
	ctx := context.Background()

	seats, err := c.Meters.Create(ctx, &billing.MeterCreateParams{Name: "Seats in use", EventName: "seats.in_use", Aggregation: billing.MeterAggregationLast})
	if err != nil {
		log.Fatal(err)
	}
	now := srv.Now()
	readings := []struct {
		seats float64
		taken time.Time
	}{
		{12, now.Add(-time.Hour)},
		{0, now.Add(-2 * time.Hour)},  // zero is a reading too
		{15, now.Add(-3 * time.Hour)}, // ingested last, though taken first
	}
	for _, r := range readings {
		if _, err := c.Meters.RecordEvent(ctx, seats.ID, &billing.MeterEventParams{Value: billing.Value(r.seats), Timestamp: r.taken}); err != nil {
			log.Fatal(err)
		}
		srv.Advance(time.Second)
	}
	usage, err := c.Meters.Usage(ctx, seats.ID, "", time.Time{}, time.Time{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("seats:", usage.Value)
	// Output:
	// seats: 15
}
