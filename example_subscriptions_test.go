package billing_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
)

// A subscription with a trial: the sandbox's clock ends the trial and renews the
// period; a cancel at the period end takes effect when the clock reaches it.
func ExampleSubscriptionsService() {
	srv, err := billingtest.Start(billingtest.WithManualClock()) // starts 2025-01-01
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
	product, err := c.Products.Create(ctx, &billing.ProductCreateParams{Name: "Pro plan"})
	if err != nil {
		log.Fatal(err)
	}
	monthly, err := c.Products.CreatePrice(ctx, product.ID, &billing.PriceCreateParams{
		UnitAmount: billing.GHS(50), IsRecurring: true, Interval: billing.PriceIntervalMonth,
	})
	if err != nil {
		log.Fatal(err)
	}

	sub, err := c.Subscriptions.Create(ctx, &billing.SubscriptionCreateParams{CustomerID: cust.ID, PriceID: monthly.ID, TrialDays: billing.Value(14)})
	if err != nil {
		log.Fatal(err)
	}
	day := func(t time.Time) string { return t.Format("Jan 2") }
	fmt.Println(sub.Status, "until", day(sub.TrialEnd))

	srv.Advance(14 * 24 * time.Hour)
	sub, err = c.Subscriptions.Get(ctx, sub.ID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(sub.Status, day(sub.CurrentPeriodStart), "to", day(sub.CurrentPeriodEnd))

	state, err := c.Subscriptions.Cancel(ctx, sub.ID, &billing.SubscriptionCancelParams{AtPeriodEnd: true})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(state.Status, "until", day(state.CancelAt))

	srv.Advance(31 * 24 * time.Hour)
	sub, err = c.Subscriptions.Get(ctx, sub.ID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(sub.Status)

	_, err = c.Subscriptions.Resume(ctx, sub.ID)
	fmt.Println("resume refused:", errors.Is(err, billing.ErrConflict))
	// Output:
	// TRIALING until Jan 15
	// ACTIVE Jan 15 to Feb 15
	// ACTIVE until Feb 15
	// CANCELED
	// resume refused: true
}
