package billingtest_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/billingsdk/billing-go/billingtest"
)

// A sandbox on the provider's wire answers a receive of 80 minor units the way
// production does: {Message, ResponseCode, Data} with the amount in cedis.
func ExampleWithWire() {
	srv, err := billingtest.Start(billingtest.WithWire(billingtest.WireProvider))
	if err != nil {
		panic(err)
	}
	defer srv.Close()

	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/payments/receive", strings.NewReader(
		`{"amount":80,"phone":"233241234567","provider":"MTN","description":"Order 7","metadata":{"clientReference":"ORDER2291"}}`))
	req.SetBasicAuth(srv.ClientID, srv.ClientSecret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	var answer struct {
		ResponseCode string
		Data         struct{ Amount json.Number }
	}
	if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil {
		panic(err)
	}
	fmt.Println(answer.ResponseCode, answer.Data.Amount)
	// Output: 0001 0.8
}
