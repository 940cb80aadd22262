package billing_test

import (
	"fmt"

	billing "github.com/billingsdk/billing-go"
)

// Amounts come back as minor units; Money prints them with the currency's decimal places.
func ExampleMoney() {
	fmt.Println(billing.Money{Amount: 100000000, Currency: "GHS"})
	fmt.Println(billing.Money{Amount: -2500, Currency: "GHS"})
	fmt.Println(billing.Money{Amount: 5000, Currency: "XOF"}) // no minor unit
	fmt.Println(billing.Money{Amount: 1250, Currency: "KWD"}) // thousandths
	// Output:
	// GHS 1,000,000.00
	// GHS -25.00
	// XOF 5,000
	// KWD 1.250
}

// The decimal amounts of send-to-bank and direct debit display the same way.
func ExampleDecimalAmount_Money() {
	amount := billing.DecimalAmount(4999)
	fmt.Println(amount)              // the wire form
	fmt.Println(amount.Money("GHS")) // for people
	// Output:
	// 49.99
	// GHS 49.99
}
