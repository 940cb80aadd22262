// Package exampleenv connects the examples to a service: the one named by
// BILLING_BASE_URL, BILLING_CLIENT_ID and BILLING_CLIENT_SECRET when they are set, and
// otherwise a sandbox started in the same process, so every example runs on a fresh
// machine.
package exampleenv

import (
	"fmt"
	"io"
	"os"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
)

// Env is where an example runs.
type Env struct {
	// Client talks to the service.
	Client *billing.Client
	// Sandbox is the embedded sandbox, or nil against a real service. Examples use it
	// to do what a payer would (approve a prompt, pay a checkout page).
	Sandbox *billingtest.Server
}

// Close stops the embedded sandbox, if one was started.
func (e *Env) Close() {
	if e.Sandbox != nil {
		e.Sandbox.Close()
	}
}

// Connect returns the environment and says on out which one it is. opts configure the
// embedded sandbox and are ignored against a real service.
func Connect(out io.Writer, opts ...billingtest.Option) (*Env, error) {
	base, id, secret := os.Getenv("BILLING_BASE_URL"), os.Getenv("BILLING_CLIENT_ID"), os.Getenv("BILLING_CLIENT_SECRET")
	if base != "" || id != "" || secret != "" {
		clientOpts := []billing.Option{billing.WithBaseURL(base), billing.WithClientCredentials(id, secret)}
		if acct := os.Getenv("BILLING_DISBURSEMENT_ACCOUNT"); acct != "" {
			clientOpts = append(clientOpts, billing.WithDisbursementAccount(acct))
		}
		c, err := billing.NewClient(clientOpts...)
		if err != nil {
			return nil, fmt.Errorf("BILLING_BASE_URL, BILLING_CLIENT_ID and BILLING_CLIENT_SECRET must all be set: %w", err)
		}
		fmt.Fprintf(out, "using the service at %s\n", base)
		return &Env{Client: c}, nil
	}
	srv, err := billingtest.Start(opts...)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(out, "using an embedded sandbox at %s (set BILLING_BASE_URL, BILLING_CLIENT_ID and BILLING_CLIENT_SECRET to use a real service)\n", srv.URL)
	return &Env{Client: srv.Client(), Sandbox: srv}, nil
}
