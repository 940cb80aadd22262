package billing_test

import (
	"testing"

	"encoding/json"
	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
	"io"
	"net/http"
	"strings"
)

func stringsReader(s string) io.Reader { return strings.NewReader(s) }

func decodeJSON(resp *http.Response, v any) error {
	defer resp.Body.Close()
	return json.NewDecoder(resp.Body).Decode(v)
}

// onEachWire runs test once on each wire the sandbox speaks, as a subtest named after
// the wire, so one test body proves a flow on both.
func onEachWire(t *testing.T, test func(t *testing.T, wire billingtest.Wire)) {
	for _, wire := range billingtest.Wires() {
		t.Run(string(wire), func(t *testing.T) { test(t, wire) })
	}
}

// failureUnconfirmable reports whether a failed movement of kind can never be confirmed
// on wire: the provider's status check of a receive or a direct debit answers 0000 with
// Unpaid for a payment not paid, whether it failed or is not paid yet, so nothing
// confirms a failure its callback reports. The Tracker leaves such a movement pending
// (Reconcile lists it overdue) rather than take the sender's word: a forged failure
// could make a merchant charge the customer twice.
func failureUnconfirmable(wire billingtest.Wire, kind billing.Kind) bool {
	return wire == billingtest.WireProvider && (kind == billing.KindReceive || kind == billing.KindDirectDebit)
}
