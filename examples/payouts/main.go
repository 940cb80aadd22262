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
	"net"
	"net/http"
	"os"
	"time"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
)

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
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
	tracker := billing.NewTracker(c, billing.TrackerOptions{})
	callbackURL, stop, err := serve(tracker.Handler())
	if err != nil {
		return err
	}
	defer stop()
	showBalance := func() {
		if sandbox != nil {
			fmt.Fprintf(out, "  disbursement balance: %s\n", billing.Money{Amount: sandbox.DisbursementBalance(), Currency: "GHS"})
		}
	}
	showBalance()
	run := time.Now().UnixNano()

	// Mobile money: the amount and a fee leave the balance when the payout is accepted,
	// and come back if it fails.
	for i, to := range []struct{ who, phone, note string }{
		{"Kofi", "233201234567", ""},
		// Sandbox test number 0004: the payout fails by callback with 4075.
		{"Ama", "233241230004", " (test number 0004: insufficient balance)"},
	} {
		ref := fmt.Sprintf("payout%d%d", run, i)
		// The Tracker records the payout, then sends it: should this process die in
		// between, the status check still resolves it (see examples/multiinstance).
		s, err := tracker.Send(ctx, &billing.SendParams{
			Amount:          billing.GHS(150),
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
		fmt.Fprintf(out, "sending %s to %s%s: %s, fee %s\n", billing.Money{Amount: s.Amount, Currency: s.Currency}, to.who, to.note, s.Status,
			billing.Money{Amount: s.Fee, Currency: s.Currency})
		if err := report(ctx, out, tracker, billing.KindSend, ref); err != nil {
			return err
		}
		showBalance()
	}

	// Bank: the disbursement account comes from WithDisbursementAccount (or the params).
	// Amounts are decimals on the wire: DecimalAmount(50000) is written 500.00.
	for i, account := range []string{"1441000123456", "1441000120001"} { // 0001 fails the name check
		ref := fmt.Sprintf("bank%d%d", run, i)
		bt, err := tracker.SendToBank(ctx, &billing.BankTransferParams{
			BankCode:           "300302",
			Amount:             billing.DecimalAmount(billing.GHS(500)),
			PrimaryCallbackURL: callbackURL,
			Description:        "Supplier invoice",
			BankAccountNumber:  account,
			BankAccountName:    "Adwoa Farms Ltd",
			ClientReference:    ref,
		})
		if err != nil {
			return fmt.Errorf("paying account %s: %w", account, err)
		}
		fmt.Fprintf(out, "sending %s to account %s: charges %s, debited %s\n",
			bt.Amount.Money("GHS"), account, bt.Charges.Money("GHS"), bt.AmountDebited.Money("GHS"))
		if err := report(ctx, out, tracker, billing.KindBankTransfer, ref); err != nil {
			return err
		}
		showBalance()
	}

	// MPESA takes no payouts: refused before anything is sent.
	_, err = c.Payouts.Send(ctx, &billing.SendParams{
		Amount: billing.Minor(100), Phone: "254712345678", Provider: billing.ProviderMPESA, Description: "x", ClientReference: "x1",
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

// connect returns a client for the service named by BILLING_BASE_URL, BILLING_CLIENT_ID
// and BILLING_CLIENT_SECRET (and BILLING_DISBURSEMENT_ACCOUNT, which
// send-to-bank pays out of) when they are set. Otherwise it starts a sandbox
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
		billing.WithDisbursementAccount(os.Getenv("BILLING_DISBURSEMENT_ACCOUNT")),
	)
	if err != nil {
		return nil, nil, fmt.Errorf("BILLING_BASE_URL, BILLING_CLIENT_ID and BILLING_CLIENT_SECRET must all be set: %w", err)
	}
	fmt.Fprintf(out, "using the service at %s\n", base)
	return c, nil, nil
}

// serve serves h on a free port of this machine, where the embedded sandbox can reach
// it, and returns its base URL and a function that stops it. In production the service
// is given a public HTTPS address of the merchant's server instead.
func serve(h http.Handler) (url string, stop func(), err error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(l) }()
	return "http://" + l.Addr().String(), func() { _ = srv.Close() }, nil
}
