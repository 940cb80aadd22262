package billingtest_test

import (
	"context"
	"fmt"
	"log"
	"time"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
)

// The service compiles an invoice at the start of every paid period and sends it to the
// customer; the sandbox keeps them, so a test can check what each renewal bills. Here a
// monthly price with a 14-day trial: nothing is billed during the trial, then one
// invoice when it ends and one at each renewal.
func ExampleServer_Invoices() {
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
	product, err := c.Products.Create(ctx, &billing.ProductCreateParams{Name: "Team plan"})
	if err != nil {
		log.Fatal(err)
	}
	price, err := c.Products.CreatePrice(ctx, product.ID, &billing.PriceCreateParams{
		UnitAmount: 1500, Scheme: billing.PriceSchemePerUnit, IsRecurring: true, Interval: billing.PriceIntervalMonth, TrialPeriodDays: 14,
	})
	if err != nil {
		log.Fatal(err)
	}
	sub, err := c.Subscriptions.Create(ctx, &billing.SubscriptionCreateParams{CustomerID: cust.ID, PriceID: price.ID, Quantity: 3})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(sub.Status, "invoices:", len(srv.Invoices(sub.ID)))

	srv.Advance(14 * 24 * time.Hour) // the trial ends: the first paid period begins
	srv.Advance(31 * 24 * time.Hour) // and renews a month later
	for _, inv := range srv.Invoices(sub.ID) {
		fmt.Println(inv.BillingReason, inv.Amount, inv.Currency, inv.PeriodStart.Format(time.DateOnly), "to", inv.PeriodEnd.Format(time.DateOnly), inv.Status)
	}
	// Output:
	// TRIALING invoices: 0
	// TRIAL_END 4500 GHS 2025-01-15 to 2025-02-15 PAID
	// RENEWAL 4500 GHS 2025-02-15 to 2025-03-15 PAID
}
