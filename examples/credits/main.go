// Credits runs a customer's prepaid credit wallet: it grants credits, some of them
// expiring, spends them, shows that spending more than the balance is refused, and prints
// the ledger. Against the embedded sandbox it also moves the sandbox's clock past the
// expiry, so the unused promotional credits expire.
//
//	go run ./examples/credits
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
	c, sandbox, err := connect(out)
	if err != nil {
		return err
	}
	if sandbox != nil {
		defer sandbox.Close()
	}

	cust, err := c.Customers.Create(ctx, &billing.CustomerCreateParams{
		Email: fmt.Sprintf("wallet.%d@example.com", time.Now().UnixNano()),
		Name:  "Efua Owusu",
	})
	if err != nil {
		return fmt.Errorf("creating a customer: %w", err)
	}
	fmt.Fprintf(out, "customer %s\n", cust.ID)

	// The first grant opens the wallet.
	topUp, err := c.Credits.Grant(ctx, cust.ID, &billing.CreditGrantParams{Amount: 1000, Description: "paid top-up"})
	if err != nil {
		return fmt.Errorf("granting credits: %w", err)
	}
	// Credits are a count, not money.
	fmt.Fprintf(out, "granted 1000: wallet %s holds %d credits\n", topUp.Wallet.ID, topUp.Wallet.Balance)

	// Promotional credits that expire in 30 days. Deducts draw on them first.
	now := time.Now()
	if sandbox != nil {
		now = sandbox.Now()
	}
	promo, err := c.Credits.Grant(ctx, cust.ID, &billing.CreditGrantParams{
		Amount: 200, Description: "launch promo", ExpiresAt: now.Add(30 * 24 * time.Hour),
		Metadata: billing.Metadata{"campaign": "launch"},
	})
	if err != nil {
		return fmt.Errorf("granting promotional credits: %w", err)
	}
	fmt.Fprintf(out, "granted 200 expiring %s: balance %d\n", promo.Transaction.ExpiresAt.Format(time.DateOnly), promo.Wallet.Balance)

	spent, err := c.Credits.Deduct(ctx, cust.ID, &billing.CreditDeductParams{Amount: 150, Description: "report export"})
	if err != nil {
		return fmt.Errorf("deducting credits: %w", err)
	}
	fmt.Fprintf(out, "deducted 150: balance %d -> %d\n", spent.Transaction.BalanceBefore, spent.Transaction.BalanceAfter)

	// Spending more than the balance is refused, and nothing is written.
	_, err = c.Credits.Deduct(ctx, cust.ID, &billing.CreditDeductParams{Amount: 5000})
	if !errors.Is(err, billing.ErrInsufficientCredits) {
		return fmt.Errorf("deducting beyond the balance: want ErrInsufficientCredits, got %v", err)
	}
	fmt.Fprintf(out, "deducting 5000 is refused: %v\n", err)

	if sandbox != nil {
		// 150 of the promo's 200 were spent; the other 50 expire with it.
		sandbox.Advance(31 * 24 * time.Hour)
		wallet, err := c.Credits.Get(ctx, cust.ID)
		if err != nil {
			return fmt.Errorf("reading the wallet: %w", err)
		}
		fmt.Fprintf(out, "31 days later the promo has expired: balance %d\n", wallet.Balance)
	}

	fmt.Fprintln(out, "ledger, newest first:")
	for tx, err := range c.Credits.Transactions(ctx, cust.ID, nil) {
		if err != nil {
			return fmt.Errorf("reading the ledger: %w", err)
		}
		fmt.Fprintf(out, "  %-6s %5d  %5d -> %-5d %s\n", tx.Type, tx.Amount, tx.BalanceBefore, tx.BalanceAfter, tx.Description)
	}
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
