package billing_test

import (
	"context"
	"fmt"
	"log"
	"time"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
)

// A mobile-money payout out of the disbursement account, then its status check.
func ExamplePayoutsService_Send() {
	srv, err := billingtest.Start(billingtest.WithManualClock())
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	c := srv.Client()
	ctx := context.Background()

	s, err := c.Payouts.Send(ctx, &billing.SendParams{
		Amount:          billing.GHS(150),
		Phone:           "233201234567",
		Provider:        billing.ProviderTelecel,
		Name:            "Kofi Boateng",
		Description:     "Refund of order 1040",
		ClientReference: "refund1040",
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(s.Status, "fee", billing.Money{Amount: s.Fee, Currency: s.Currency})

	srv.Advance(time.Second)
	st, err := c.Payouts.SendStatus(ctx, "refund1040")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(st.ResponseCode, st.TransactionStatus, st.Channel, "final:", st.IsFinal())
	// Output:
	// PROCESSING fee GHS 1.50
	// 0000 success vodafone-gh final: true
}

// A payout to a bank account. Amounts are decimals on the wire: DecimalAmount holds minor
// units and always writes two decimals.
func ExamplePayoutsService_SendToBank() {
	srv, err := billingtest.Start(billingtest.WithManualClock())
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	c := srv.Client() // its disbursement account comes from WithDisbursementAccount
	ctx := context.Background()

	bt, err := c.Payouts.SendToBank(ctx, &billing.BankTransferParams{
		BankCode:           "300302",
		Amount:             billing.DecimalAmount(billing.GHS(500)),
		PrimaryCallbackURL: "https://shop.example.com/callbacks/bank",
		Description:        "Supplier invoice 88",
		BankAccountNumber:  "1441000123456",
		BankAccountName:    "Adwoa Farms Ltd",
		ClientReference:    "supplier88",
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("amount", bt.Amount.Money("GHS"), "charges", bt.Charges.Money("GHS"), "debited", bt.AmountDebited.Money("GHS"))

	srv.Advance(time.Second)
	st, err := c.Payouts.BankTransferStatus(ctx, &billing.BankTransferStatusParams{ClientReference: "supplier88"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(st.TransactionStatus, st.Channel, "succeeded:", st.Succeeded())
	// Output:
	// amount GHS 500.00 charges GHS 1.00 debited GHS 501.00
	// success gip-gh succeeded: true
}
