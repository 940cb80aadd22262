package billing_test

import (
	"testing"

	"encoding/json"
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
