// Payouts sends money out of the disbursement account: to mobile-money wallets and to
// bank accounts, waiting for each outcome through a Tracker (the callback, or the status
// check when no callback comes). With no credentials in the environment it runs against
// an embedded sandbox, whose test numbers choose the outcomes.
//
//	go run ./examples/payouts
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
	"github.com/billingsdk/billing-go/examples/internal/callbacks"
	"github.com/billingsdk/billing-go/examples/internal/exampleenv"
)

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if err := run(ctx, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, out io.Writer) error {
	env, err := exampleenv.Connect(out)
	if err != nil {
		return err
	}
	defer env.Close()
	c := env.Client
	tracker := billing.NewTracker(c, billing.TrackerOptions{})
	callbackURL, stop, err := callbacks.Serve(tracker.Handler())
	if err != nil {
		return err
	}
	defer stop()
	showBalance := func() {
		if env.Sandbox != nil {
			fmt.Fprintf(out, "  disbursement balance: %s GHS\n", billing.DecimalAmount(env.Sandbox.DisbursementBalance()))
		}
	}
	showBalance()
	run := time.Now().UnixNano()

	// Mobile money: the amount and a fee leave the balance when the payout is accepted,
	// and come back if it fails.
	for i, to := range []struct{ who, phone string }{
		{"Kofi", "233201234567"},
		{"a wallet the network refuses", "233241230004"}, // sandbox test number 0004: 4075
	} {
		ref := fmt.Sprintf("payout%d%d", run, i)
		s, err := c.Payouts.Send(ctx, &billing.SendParams{
			Amount:          15000, // 150.00 GHS
			Phone:           to.phone,
			Provider:        billing.ProviderTelecel,
			Name:            to.who,
			Description:     "Refund",
			ClientReference: ref,
			CallbackURL:     callbackURL,
		})
		if err != nil {
			return fmt.Errorf("paying %s: %w", to.who, err)
		}
		fmt.Fprintf(out, "sending 150.00 GHS to %s: %s, fee %s\n", to.who, s.Status, billing.DecimalAmount(s.Fee))
		if err := report(ctx, out, tracker, billing.KindSend, ref); err != nil {
			return err
		}
		showBalance()
	}

	// Bank: the disbursement account comes from WithDisbursementAccount (or the params).
	// Amounts are decimals on the wire; DecimalAmount(50000) is written 500.00.
	for i, account := range []string{"1441000123456", "1441000120001"} { // 0001 fails the name check
		ref := fmt.Sprintf("bank%d%d", run, i)
		bt, err := c.Payouts.SendToBank(ctx, &billing.BankTransferParams{
			BankCode:           "300302",
			Amount:             50000,
			PrimaryCallbackURL: callbackURL,
			Description:        "Supplier invoice",
			BankAccountNumber:  account,
			BankAccountName:    "Adwoa Farms Ltd",
			ClientReference:    ref,
		})
		if err != nil {
			return fmt.Errorf("paying account %s: %w", account, err)
		}
		fmt.Fprintf(out, "sending %s GHS to account %s: charges %s, debited %s\n", bt.Amount, account, bt.Charges, bt.AmountDebited)
		if err := report(ctx, out, tracker, billing.KindBankTransfer, ref); err != nil {
			return err
		}
		showBalance()
	}

	// MPESA takes no payouts: refused before anything is sent.
	_, err = c.Payouts.Send(ctx, &billing.SendParams{
		Amount: 100, Phone: "254712345678", Provider: billing.ProviderMPESA, Description: "x", ClientReference: "x1",
	})
	var invalid *billing.ValidationError
	if errors.As(err, &invalid) {
		fmt.Fprintf(out, "refused before sending: %s %s\n", invalid.Field, invalid.Rule)
	}
	return nil
}

// report waits for the final state of a payout and prints it.
func report(ctx context.Context, out io.Writer, tracker *billing.Tracker, kind billing.Kind, ref string) error {
	outcome, err := tracker.Await(ctx, kind, ref)
	if err != nil {
		return fmt.Errorf("waiting for %s: %w", ref, err)
	}
	fmt.Fprintf(out, "  outcome by %s: %s, code %s\n", outcome.Source, outcome.State, outcome.Code)
	return nil
}
