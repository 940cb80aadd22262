package billing_test

import (
	"context"
	"fmt"
	"log"
	"strings"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
)

// The backend creates the session with its credentials; NewWebCheckout gives the page
// what the web SDK needs, with the public key and never a secret. Render it into the
// page with html/template, which writes it as JSON inside a script element.
func ExampleNewWebCheckout() {
	srv, err := billingtest.Start()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	c := srv.Client()

	pay, err := c.Payments.CreateCheckout(context.Background(), &billing.CheckoutParams{
		Amount:      billing.GHS(50),
		Description: "Two bags of rice", // the web SDK requires a description
		Customer:    billing.CheckoutCustomer{Name: "Ama Mensah", Email: "ama@example.com", Phone: "+233241234567"},
		ReturnURL:   "https://shop.example.com/thanks",
	})
	if err != nil {
		log.Fatal(err)
	}
	web, err := billing.NewWebCheckout(pay, &billing.WebCheckoutParams{
		PublicKey:   srv.PublicKey, // the dashboard's public key in production
		CallbackURL: "https://shop.example.com/hooks/checkout",
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(billing.Money{Amount: web.PurchaseInfo.Amount, Currency: pay.Currency}, web.PurchaseInfo.PurchaseDescription)
	fmt.Println(strings.HasSuffix(web.ScriptURL, "/sdk/checkout.js"), web.Config.PublicKey == srv.PublicKey)

	_, err = billing.NewWebCheckout(pay, &billing.WebCheckoutParams{PublicKey: srv.SecretKey})
	fmt.Println("a secret key is refused:", err != nil)
	// Output:
	// GHS 50.00 Two bags of rice
	// true true
	// a secret key is refused: true
}
