package billing_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
)

// keyPattern finds the keys of a JSON body: a plain string followed by a colon.
var keyPattern = regexp.MustCompile(`"([A-Za-z])([A-Za-z0-9_]*)"\s*:`)

// escapeKeys writes the first letter of each key of body that pick accepts as a JSON
// \u escape: "\u0052esponseCode" for "ResponseCode".
func escapeKeys(body []byte, pick func(key string) bool) []byte {
	return keyPattern.ReplaceAllFunc(body, func(m []byte) []byte {
		sub := keyPattern.FindSubmatch(m)
		if !pick(string(sub[1]) + string(sub[2])) {
			return m
		}
		return fmt.Appendf(nil, `"\u%04X%s":`, sub[1][0], sub[2])
	})
}

// settledOn returns the outcome the Tracker settled for ref, or nil while none is.
func settledOn(t *testing.T, tr *billing.Tracker, kind billing.Kind, ref string) *billing.Outcome {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // no waiting: what is settled now
	o, err := tr.Await(ctx, kind, ref)
	if err != nil {
		require.ErrorIs(t, err, billing.ErrStillPending)
		return nil
	}
	return o
}

// The sandbox's genuine callback of every kind of money movement, on each wire, with its
// telling keys (ResponseCode, Data, PreapprovalStatus), or every key, written with JSON
// escapes, is answered and settles its tracked movement exactly as the plain callback.
func TestEscapedKeysOfAGenuineCallbackSettleOnTheSandbox(t *testing.T) {
	spellings := map[string]func(string) bool{
		"telling keys": func(key string) bool {
			return strings.EqualFold(key, "ResponseCode") || strings.EqualFold(key, "Data") || strings.EqualFold(key, "PreapprovalStatus")
		},
		"every key": func(string) bool { return true },
	}
	for _, wire := range billingtest.Wires() {
		t.Run(string(wire), func(t *testing.T) {
			for _, tc := range trackedMovements {
				if !tc.succeeded && failureUnconfirmable(wire, tc.kind) {
					continue // answered 503 whatever its spelling: nothing confirms it
				}
				t.Run(tc.name, func(t *testing.T) {
					for how, pick := range spellings {
						t.Run(how, func(t *testing.T) {
							m, body := genuineCallback(t, wire, tc, "canon1")
							escaped := escapeKeys(body, pick)
							require.NotEqual(t, []byte(body), escaped)

							assert.Equal(t, http.StatusOK, postTo(m.tracker.Handler(), escaped), "%s", escaped)
							o := settledOn(t, m.tracker, tc.kind, "canon1")
							require.NotNil(t, o, "the escaped callback settled nothing: %s", escaped)
							assert.Equal(t, billing.SourceCallback, o.Source)
							assert.Equal(t, tc.succeeded, o.Succeeded(), "state %s", o.State)
							assert.Equal(t, tc.amount, o.Amount)
						})
					}
				})
			}
		})
	}
}

// A checkout paid on the sandbox whose webhook names its event with a JSON escape
// ("payment\u002esucceeded"), or writes its keys with escapes, is settled by it on either
// wire, and no event function is handed it.
func TestEscapedCheckoutWebhookSettlesOnTheSandbox(t *testing.T) {
	onEachWire(t, func(t *testing.T, wire billingtest.Wire) {
		sink := callbackSink(t)
		srv := billingtest.NewServer(t, billingtest.WithManualClock(), billingtest.WithWire(wire), billingtest.WithWebhookURL(sink))
		tr := billing.NewTracker(srv.Client(), billing.TrackerOptions{Clock: srv.Clock()})
		var others []billing.Event
		h := tr.Handler(billing.WithEventHandler(func(_ context.Context, ev billing.Event) error {
			others = append(others, ev)
			return nil
		}))
		pay, err := tr.CreateCheckout(context.Background(), &billing.CheckoutParams{
			Amount: 5000, Currency: "GHS", Description: "Order 1044", ClientReference: "order1044"})
		require.NoError(t, err)
		require.NoError(t, srv.CompleteCheckout(pay.Reference, "MOBILE_MONEY", "succeeded"))
		srv.Advance(0)
		hooks := deliveredTo(srv, sink)
		require.Len(t, hooks, 1)
		escaped := escapeKeys(hooks[0], func(string) bool { return true })
		if wire == billingtest.WireSpec {
			escaped = bytes.Replace(escaped, []byte(`"payment.succeeded"`), []byte(`"payment\u002esucceeded"`), 1)
			require.Contains(t, string(escaped), `payment\u002esucceeded`)
		}

		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/webhooks", bytes.NewReader(escaped)))
		assert.Equal(t, http.StatusOK, rec.Code, "%s", escaped)
		o := settledOn(t, tr, billing.KindCheckout, "order1044")
		require.NotNil(t, o, "the paid checkout is still pending: %s", escaped)
		assert.True(t, o.Succeeded(), "state %s", o.State)
		assert.Equal(t, billing.SourceCallback, o.Source)
		assert.Equal(t, pay.Reference, o.ServiceReference)
		assert.Empty(t, others, "a tracked checkout's webhook reaches no event function")
	})
}
