// Mandates sets up a direct-debit mandate verified by one-time passcode, charges the
// customer under it, cancels it and asks for it again. With no credentials in the
// environment it runs against an embedded sandbox, which also plays the customer's phone
// (the passcode SMS).
//
//	go run ./examples/mandates
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

const msisdn = "233201234567" // the customer's Vodafone wallet

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
	run := time.Now().UnixNano()
	mandateRef := fmt.Sprintf("plan%d", run)

	m, err := tracker.CreateMandate(ctx, &billing.MandateCreateParams{
		ClientReferenceID: mandateRef,
		CustomerMSISDN:    "+" + msisdn,
		Channel:           billing.DirectDebitChannelVodafone,
		CallbackURL:       callbackURL,
	})
	if err != nil {
		return fmt.Errorf("creating the mandate: %w", err)
	}
	fmt.Fprintf(out, "mandate %s: %s, verified by %s, passcode starts %s-\n", m.ClientReferenceID, m.PreapprovalStatus, m.VerificationType, m.OTPPrefix)
	if sandbox == nil {
		fmt.Fprintln(out, "the customer received the passcode by SMS: submit it with Mandates.VerifyOTP")
		return nil
	}
	verify := func(m *billing.Mandate) error {
		otp := sandbox.SMS(msisdn)[0] // what the customer reads on the phone and types in
		_, err := c.Mandates.VerifyOTP(ctx, &billing.MandateVerifyOTPParams{
			CustomerMSISDN: msisdn, ServicePreApprovalID: m.ServicePreApprovalID,
			ClientReferenceID: mandateRef, OTPCode: otp,
		})
		return err
	}

	// A wrong passcode (here the right one with its last digit changed) is refused with
	// 4204 and approves nothing.
	otp := sandbox.SMS(msisdn)[0]
	_, err = c.Mandates.VerifyOTP(ctx, &billing.MandateVerifyOTPParams{
		CustomerMSISDN: msisdn, ServicePreApprovalID: m.ServicePreApprovalID,
		ClientReferenceID: mandateRef, OTPCode: otp[:8] + string('0'+(otp[8]-'0'+1)%10),
	})
	var apiErr *billing.APIError
	if errors.As(err, &apiErr) {
		fmt.Fprintf(out, "wrong passcode refused: code %s\n", apiErr.Code)
	}
	if err := verify(m); err != nil {
		return fmt.Errorf("verifying the passcode: %w", err)
	}
	approval, err := tracker.Await(ctx, billing.KindMandate, mandateRef)
	if err != nil {
		return fmt.Errorf("waiting for the approval: %w", err)
	}
	fmt.Fprintf(out, "approval by %s: %s\n", approval.Source, approval.State)

	// Charges need no PIN or passcode from the customer. Amounts are decimals on the
	// wire: DecimalAmount(4999) is written 49.99.
	charge := func(ref string) (*billing.DirectDebit, error) {
		return tracker.Charge(ctx, &billing.DirectDebitParams{
			CustomerMSISDN:     msisdn,
			Channel:            billing.DirectDebitChannelVodafone,
			Amount:             billing.DecimalAmount(billing.GHS(49) + billing.Minor(99)),
			PrimaryCallbackURL: callbackURL,
			Description:        "Monthly plan",
			ClientReference:    ref,
		})
	}
	chargeRef := fmt.Sprintf("plan%dm1", run)
	d, err := charge(chargeRef)
	if err != nil {
		return fmt.Errorf("charging: %w", err)
	}
	fmt.Fprintf(out, "charging %s (charges %s)\n", d.Amount.Money("GHS"), d.Charges.Money("GHS"))
	paid, err := tracker.Await(ctx, billing.KindDirectDebit, chargeRef)
	if err != nil {
		return fmt.Errorf("waiting for the charge: %w", err)
	}
	fmt.Fprintf(out, "  outcome by %s: %s, code %s\n", paid.Source, paid.State, paid.Code)

	// Cancelled, the mandate cannot be charged.
	cancelled, err := c.Mandates.Cancel(ctx, msisdn)
	if err != nil {
		return fmt.Errorf("cancelling: %w", err)
	}
	fmt.Fprintf(out, "mandate %s\n", cancelled.PreapprovalStatus)
	if _, err := charge(fmt.Sprintf("plan%dm2", run)); errors.As(err, &apiErr) {
		fmt.Fprintf(out, "charge refused: code %s\n", apiErr.Code)
	}

	// Reactivation asks the customer again, with a fresh passcode.
	again, err := c.Mandates.Reactivate(ctx, &billing.MandateReactivateParams{CustomerMSISDN: msisdn, CallbackURL: callbackURL})
	if err != nil {
		return fmt.Errorf("reactivating: %w", err)
	}
	fmt.Fprintf(out, "reactivated: %s, new passcode starts %s-\n", again.PreapprovalStatus, again.OTPPrefix)
	if err := verify(again); err != nil {
		return fmt.Errorf("verifying the new passcode: %w", err)
	}
	fmt.Fprintln(out, "new passcode accepted; the approval follows by callback")
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
