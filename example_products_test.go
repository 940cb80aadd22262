package billing_test

import (
	"context"
	"fmt"
	"log"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
)

// A catalog entry with a recurring price, and a price archived so that it takes no new
// subscriptions.
func ExampleProductsService() {
	srv, err := billingtest.Start(billingtest.WithManualClock())
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	c := srv.Client()
	ctx := context.Background()

	pro, err := c.Products.Create(ctx, &billing.ProductCreateParams{Name: "Pro plan", Type: billing.ProductTypeDigital})
	if err != nil {
		log.Fatal(err)
	}
	quarterly, err := c.Products.CreatePrice(ctx, pro.ID, &billing.PriceCreateParams{
		UnitAmount:  billing.GHS(150),
		IsRecurring: true, Interval: billing.PriceIntervalMonth, IntervalCount: 3,
		TrialPeriodDays: 14,
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: %s %s every %d %s, %d trial days\n", pro.Name, billing.DecimalAmount(quarterly.UnitAmount), quarterly.Currency,
		quarterly.IntervalCount, quarterly.Interval, quarterly.TrialPeriodDays)

	archived, err := c.Products.ArchivePrice(ctx, pro.ID, quarterly.ID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("price active after archive:", archived.Active)

	for p, err := range c.Products.List(ctx, &billing.ProductListParams{Active: billing.Value(true)}) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println("active product:", p.Name)
	}
	// Output:
	// Pro plan: 150.00 GHS every 3 MONTH, 14 trial days
	// price active after archive: false
	// active product: Pro plan
}
