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

// A prepaid wallet: grant credits, spend them, and read the ledger. A deduct larger than
// the balance is refused and writes nothing.
func ExampleCreditsService() {
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
	if _, err := c.Credits.Grant(ctx, cust.ID, &billing.CreditGrantParams{Amount: 1000, Description: "welcome bonus"}); err != nil {
		log.Fatal(err)
	}
	spent, err := c.Credits.Deduct(ctx, cust.ID, &billing.CreditDeductParams{Amount: 250, Description: "report export"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("balance:", spent.Wallet.Balance)

	_, err = c.Credits.Deduct(ctx, cust.ID, &billing.CreditDeductParams{Amount: 5000})
	fmt.Println("overdraw refused:", errors.Is(err, billing.ErrInsufficientCredits))

	for tx, err := range c.Credits.Transactions(ctx, cust.ID, nil) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%-5s %4d  %d -> %d\n", tx.Type, tx.Amount, tx.BalanceBefore, tx.BalanceAfter)
	}
	// Output:
	// balance: 750
	// overdraw refused: true
	// USAGE  250  1000 -> 750
	// GRANT 1000  0 -> 1000
}

// Credits granted with an expiry are spent first, and what remains of them expires.
func ExampleCreditsService_Grant() {
	srv, err := billingtest.Start(billingtest.WithManualClock())
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	c := srv.Client()
	ctx := context.Background()

	cust, err := c.Customers.Create(ctx, &billing.CustomerCreateParams{Email: "kofi@example.com", Name: "Kofi Boateng"})
	if err != nil {
		log.Fatal(err)
	}
	week := 7 * 24 * time.Hour
	_, err = c.Credits.Grant(ctx, cust.ID, &billing.CreditGrantParams{Amount: 300, Description: "paid top-up"})
	if err != nil {
		log.Fatal(err)
	}
	_, err = c.Credits.Grant(ctx, cust.ID, &billing.CreditGrantParams{Amount: 100, Description: "promo", ExpiresAt: srv.Now().Add(week)})
	if err != nil {
		log.Fatal(err)
	}
	// 40 comes out of the promo grant, which expires first.
	if _, err := c.Credits.Deduct(ctx, cust.ID, &billing.CreditDeductParams{Amount: 40}); err != nil {
		log.Fatal(err)
	}

	srv.Advance(week) // the sandbox clock passes the promo's expiry
	wallet, err := c.Credits.Get(ctx, cust.ID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("balance after a week:", wallet.Balance)
	page, err := c.Credits.TransactionsPage(ctx, cust.ID, &billing.CreditTransactionListParams{Type: billing.CreditTransactionTypeExpiry})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("expired:", page.Items[0].Amount)
	// Output:
	// balance after a week: 300
	// expired: 60
}
