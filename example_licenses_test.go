package billing_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
)

// Issue a key for two machines; the third activation is refused with a sentinel the
// caller can branch on.
func ExampleLicensesService() {
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
	lic, err := c.Licenses.Create(ctx, &billing.LicenseCreateParams{CustomerID: cust.ID, MaxActivations: 2})
	if err != nil {
		log.Fatal(err)
	}
	for range 3 {
		a, err := c.Licenses.Activate(ctx, lic.Key)
		switch {
		case errors.Is(err, billing.ErrActivationLimit):
			fmt.Println("refused: every seat is taken")
		case errors.Is(err, billing.ErrLicenseExpired), errors.Is(err, billing.ErrLicenseNotActive), errors.Is(err, billing.ErrLicenseRevoked):
			fmt.Println("refused:", err)
		case err != nil:
			log.Fatal(err)
		default:
			fmt.Printf("activated %d of %d\n", a.Activations, a.MaxActivations)
		}
	}

	if _, err := c.Licenses.Revoke(ctx, lic.Key); err != nil {
		log.Fatal(err)
	}
	valid, err := c.Licenses.Get(ctx, lic.Key)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("status:", valid.Status)
	// Output:
	// activated 1 of 2
	// activated 2 of 2
	// refused: every seat is taken
	// status: REVOKED
}
