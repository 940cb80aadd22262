package billing_test

import (
	"context"
	"fmt"
	"log"
	"time"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
)

// A direct-debit mandate verified by one-time passcode, then a charge under it.
func ExampleMandatesService() {
	srv, err := billingtest.Start(billingtest.WithManualClock())
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	c := srv.Client()
	ctx := context.Background()
	const msisdn = "233201234567"

	m, err := c.Mandates.Create(ctx, &billing.MandateCreateParams{
		ClientReferenceID: "plan2001",
		CustomerMSISDN:    msisdn,
		Channel:           billing.DirectDebitChannelVodafone,
		CallbackURL:       "https://shop.example.com/callbacks/mandates",
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(m.PreapprovalStatus, m.VerificationType, len(m.OTPPrefix), "letters of passcode prefix")

	// The customer reads the passcode from an SMS and types it into the merchant's page.
	otp := srv.SMS(msisdn)[0]
	if _, err := c.Mandates.VerifyOTP(ctx, &billing.MandateVerifyOTPParams{
		CustomerMSISDN: msisdn, ServicePreApprovalID: m.ServicePreApprovalID,
		ClientReferenceID: "plan2001", OTPCode: otp,
	}); err != nil {
		log.Fatal(err)
	}
	srv.Advance(time.Second) // the approval arrives by callback
	m, err = c.Mandates.Status(ctx, "plan2001")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(m.PreapprovalStatus)

	d, err := c.Mandates.Charge(ctx, &billing.DirectDebitParams{
		CustomerMSISDN:     msisdn,
		Channel:            billing.DirectDebitChannelVodafone,
		Amount:             billing.DecimalAmount(billing.GHS(49) + billing.Minor(99)),
		PrimaryCallbackURL: "https://shop.example.com/callbacks/debit",
		Description:        "Monthly plan, February",
		ClientReference:    "plan2001feb",
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("charging", d.Amount.Money("GHS"), "charges", d.Charges.Money("GHS"))
	srv.Advance(time.Second)
	st, err := c.Mandates.ChargeStatus(ctx, "plan2001feb")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(st.Status, "final:", st.IsFinal())
	// Output:
	// PENDING OTP 4 letters of passcode prefix
	// APPROVED
	// charging GHS 49.99 charges GHS 1.00
	// Paid final: true
}
