package billing_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
)

// A client for the live service takes its address and credentials, typically from the
// environment. NewClient refuses a configuration that cannot work before any request.
func ExampleNewClient() {
	c, err := billing.NewClient(
		billing.WithBaseURL("https://api.example.com"),
		// In production: os.Getenv("BILLING_CLIENT_ID"), os.Getenv("BILLING_CLIENT_SECRET").
		billing.WithClientCredentials("my-client-id", "my-client-secret"),
	)
	if err != nil {
		log.Fatal(err)
	}
	_ = c // share one Client per set of credentials: it is safe for concurrent use

	_, err = billing.NewClient(billing.WithBaseURL("http://api.example.com"), billing.WithSecretKey("sk_live_x"))
	fmt.Println(err)
	// Output:
	// billing: base URL "http://api.example.com": plain http is allowed only to a loopback host; use https
}

// Customers: create one, read it back, and walk the list lazily, one page at a time.
func ExampleCustomersService() {
	srv, err := billingtest.Start()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	c := srv.Client()
	ctx := context.Background()

	cust, err := c.Customers.Create(ctx, &billing.CustomerCreateParams{
		Email: "ama@example.com", Name: "Ama Mensah", Phone: "+233 24 123 4567",
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(cust.Name, cust.Phone, cust.Status)

	_, err = c.Customers.Create(ctx, &billing.CustomerCreateParams{Email: "ama@example.com", Name: "Ama again"})
	fmt.Println("same email again is a conflict:", errors.Is(err, billing.ErrConflict))

	_, err = c.Customers.Create(ctx, &billing.CustomerCreateParams{Email: "kofi@example.com"})
	var invalid *billing.ValidationError
	if errors.As(err, &invalid) {
		fmt.Println("refused before sending:", invalid.Field, invalid.Rule)
	}

	for summary, err := range c.Customers.List(ctx, &billing.CustomerListParams{Email: "example.com"}) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println("listed:", summary.Email)
	}
	// Output:
	// Ama Mensah +233241234567 ACTIVE
	// same email again is a conflict: true
	// refused before sending: name is required
	// listed: ama@example.com
}
