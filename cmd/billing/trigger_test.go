package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/billingsdk/billing-go/billingtest"
	"github.com/billingsdk/billing-go/billingtest/sandboxctl"
)

// Every flow of the trigger table, with every outcome it offers, reaches
// that outcome on the sandbox; the cases come from the table itself.
func TestEveryFlowReachesItsOutcome(t *testing.T) {
	srv := billingtest.NewServer(t, billingtest.WithWebhookURL("http://127.0.0.1:1/hooks"))
	callbacks := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer callbacks.Close()
	ctl := sandboxctl.New(srv.URL, srv.ClientID, srv.ClientSecret)
	wantFinal := map[outcome]string{outcomeSuccess: "succeeded", outcomeFail: "failed", outcomeNoCallback: "succeeded"}
	n := 0
	for _, name := range flowNames() {
		for asked := range flows[name].numbers {
			n++
			reference := fmt.Sprintf("flow%d", n)
			t.Run(name+" "+string(asked), func(t *testing.T) {
				args := []string{"trigger", name, "--sandbox", srv.URL, "--reference", reference, "--callback", callbacks.URL, "--json"}
				if asked != outcomeSuccess {
					args = append(args, "--"+string(asked))
				}
				if asked != outcomePending {
					args = append(args, "--wait")
				}
				var stdout, stderr bytes.Buffer
				code := run(context.Background(), args, &env{stdout: &stdout, stderr: &stderr, getenv: func(string) string { return "" }})
				require.Equal(t, 0, code, "%s", stderr.String())
				var result triggerResult
				require.NoError(t, json.Unmarshal(stdout.Bytes(), &result), stdout.String())
				assert.Equal(t, reference, result.Reference)
				assert.Equal(t, flows[name].numbers[asked].expect, result.Expect)
				movements, err := ctl.Movements(context.Background(), reference)
				require.NoError(t, err)
				var states []string
				for _, m := range movements {
					if m.Kind == flows[name].kind {
						states = append(states, m.State)
					}
				}
				if asked == outcomePending {
					assert.Equal(t, []string{"pending"}, states)
					assert.Nil(t, result.Final)
					return
				}
				assert.Equal(t, []string{wantFinal[asked]}, states)
				require.NotNil(t, result.Final)
				assert.Equal(t, wantFinal[asked], result.Final.State)
			})
		}
	}
	assert.GreaterOrEqual(t, n, 15, "flows and outcomes")
}
