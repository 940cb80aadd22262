// Licenses issues a key for two machines and shows each way an activation can be
// refused, told apart with errors.Is: the seat limit, a suspension, an expiry and a
// revocation. With no credentials in the environment it runs against an embedded
// sandbox and moves its clock past the expiry; against a real service it skips that
// step.
//
//	go run ./examples/licenses
package main

import (
	"context"
	"errors"
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
	c, sandbox, err := connect(out, billingtest.WithManualClock())
	if err != nil {
		return err
	}
	if sandbox != nil {
		defer sandbox.Close()
	}

	cust, err := c.Customers.Create(ctx, &billing.CustomerCreateParams{
		Email: fmt.Sprintf("esi.%d@example.com", time.Now().UnixNano()), Name: "Esi Owusu",
	})
	if err != nil {
		return fmt.Errorf("creating a customer: %w", err)
	}
	product, err := c.Products.Create(ctx, &billing.ProductCreateParams{Name: "Photo Editor", Type: billing.ProductTypeDigital})
	if err != nil {
		return fmt.Errorf("creating a product: %w", err)
	}
	now := time.Now()
	if sandbox != nil {
		now = sandbox.Now()
	}
	lic, err := c.Licenses.Create(ctx, &billing.LicenseCreateParams{
		CustomerID: cust.ID, ProductID: product.ID, MaxActivations: 2,
		ExpiresAt: now.Add(30 * 24 * time.Hour), Metadata: billing.Metadata{"order": "A-1042"},
	})
	if err != nil {
		return fmt.Errorf("issuing a license: %w", err)
	}
	fmt.Fprintf(out, "issued %s to %s for %s: %s, %d seats, expires %s\n",
		lic.Key, lic.Customer.Name, lic.Product.Name, lic.Status, lic.MaxActivations, lic.ExpiresAt.UTC().Format("2006-01-02"))

	activate := func(label string) {
		a, err := c.Licenses.Activate(ctx, lic.Key)
		switch {
		case err == nil:
			fmt.Fprintf(out, "%s: activated, %d of %d seats used\n", label, a.Activations, a.MaxActivations)
		case errors.Is(err, billing.ErrActivationLimit):
			fmt.Fprintf(out, "%s: refused, every seat is taken\n", label)
		case errors.Is(err, billing.ErrLicenseNotActive):
			fmt.Fprintf(out, "%s: refused, the license is suspended\n", label)
		case errors.Is(err, billing.ErrLicenseExpired):
			fmt.Fprintf(out, "%s: refused, the license has expired\n", label)
		case errors.Is(err, billing.ErrLicenseRevoked):
			fmt.Fprintf(out, "%s: refused, the license is revoked\n", label)
		default:
			fmt.Fprintf(out, "%s: %v\n", label, err)
		}
	}
	activate("laptop")
	activate("desktop")
	activate("tablet")

	if _, err := c.Licenses.Update(ctx, lic.Key, &billing.LicenseUpdateParams{Status: billing.LicenseStatusSuspended, MaxActivations: 3}); err != nil {
		return fmt.Errorf("suspending: %w", err)
	}
	activate("tablet while suspended")
	if _, err := c.Licenses.Update(ctx, lic.Key, &billing.LicenseUpdateParams{Status: billing.LicenseStatusActive}); err != nil {
		return fmt.Errorf("reinstating: %w", err)
	}
	activate("tablet with a third seat")

	if srv := sandbox; srv != nil {
		srv.Advance(31 * 24 * time.Hour)
		valid, err := c.Licenses.Get(ctx, lic.Key)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "31 days later the license is %s\n", valid.Status)
		activate("phone")

		// Renewing: a later expiry (here none at all) together with the status.
		renewed, err := c.Licenses.Update(ctx, lic.Key, &billing.LicenseUpdateParams{Status: billing.LicenseStatusActive, ExpiresAt: billing.Null[time.Time]()})
		if err != nil {
			return fmt.Errorf("renewing: %w", err)
		}
		fmt.Fprintf(out, "renewed without expiry: %s\n", renewed.Status)
	}

	revoked, err := c.Licenses.Revoke(ctx, lic.Key)
	if err != nil {
		return fmt.Errorf("revoking: %w", err)
	}
	fmt.Fprintf(out, "revoked: %s\n", revoked.Status)
	activate("laptop again")
	_, err = c.Licenses.Update(ctx, lic.Key, &billing.LicenseUpdateParams{Status: billing.LicenseStatusActive})
	fmt.Fprintf(out, "a revoked license cannot be reinstated: %t\n", errors.Is(err, billing.ErrLicenseRevoked))
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
