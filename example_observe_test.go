package billing_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
)

// What the service said besides the data: the request id to quote to support, the HTTP
// status and header, and how many attempts the call took. A failed call carries its
// request id in the error.
func ExampleWithResponseMeta() {
	srv, err := billingtest.Start()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	c := srv.Client()

	var meta billing.ResponseMeta
	ctx := billing.WithResponseMeta(context.Background(), &meta)
	cust, err := c.Customers.Create(ctx, &billing.CustomerCreateParams{Email: "ama@example.com", Name: "Ama Mensah"})
	if err != nil {
		log.Fatal(err)
	}
	// Store meta.RequestID beside the customer: support finds the request by it.
	fmt.Println(cust.Email, meta.StatusCode, meta.Attempts)

	_, err = c.Customers.Create(ctx, &billing.CustomerCreateParams{Email: "ama@example.com", Name: "Ama again"})
	var apiErr *billing.APIError
	if errors.As(err, &apiErr) {
		// apiErr.RequestID (also in err's text) is the id of the refused request.
		fmt.Println(apiErr.StatusCode, errors.Is(err, billing.ErrConflict), apiErr.RequestID == meta.RequestID)
	}
	// Output:
	// ama@example.com 201 1
	// 409 true true
}

// callPrinter is an Observer that prints each call as it ends.
type callPrinter struct{}

func (callPrinter) CallStart(ctx context.Context, _ *billing.CallInfo) context.Context { return ctx }
func (callPrinter) CallEnd(_ context.Context, call *billing.CallInfo) {
	fmt.Println(call.Method, call.Route, call.StatusCode, "attempts", call.Attempts, "outcome unknown", call.OutcomeUnknown)
}
func (callPrinter) AttemptStart(ctx context.Context, _ *billing.AttemptInfo) context.Context {
	return ctx
}
func (callPrinter) AttemptEnd(context.Context, *billing.AttemptInfo) {}

// An Observer sees every call and attempt; package otelbilling turns them into
// OpenTelemetry spans. Here one prints each call.
func ExampleWithObserver() {
	srv, err := billingtest.Start()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	c := srv.Client(billing.WithObserver(callPrinter{}))

	_, err = c.Customers.Create(context.Background(), &billing.CustomerCreateParams{Email: "ama@example.com", Name: "Ama Mensah"})
	if err != nil {
		log.Fatal(err)
	}
	// Output:
	// POST /v1/customers 201 attempts 1 outcome unknown false
}
