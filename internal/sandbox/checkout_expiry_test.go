package sandbox

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// openSession creates a checkout session with clientReference (none when
// empty) and returns its service reference.
func openSession(t *testing.T, s *Server, clientReference string) string {
	t.Helper()
	body := `{"amount":5000,"description":"Order"}`
	if clientReference != "" {
		body = `{"amount":5000,"description":"Order","metadata":{"clientReference":"` + clientReference + `"}}`
	}
	created := answer(t, serve(t, s, http.MethodPost, "/v1/payments", basicHeader, body), http.StatusCreated)
	return str(t, object(t, created["data"])["reference"])
}

// sessionStatus reads a session by reference through the status path.
func sessionStatus(t *testing.T, s *Server, reference string) map[string]json.RawMessage {
	t.Helper()
	return object(t, answer(t, serve(t, s, http.MethodGet, "/v1/payments/"+reference, basicHeader, nil), http.StatusOK)["data"])
}

func TestCheckoutUnpaidExpiresAfterItsLifetime(t *testing.T) {
	for _, wire := range []Wire{WireSpec, WireProvider} {
		for _, lifetime := range []time.Duration{0, 30 * time.Minute} {
			t.Run(string(wire)+"/"+lifetime.String(), func(t *testing.T) {
				hooks := newCallbackReceiver(t)
				s := newTestServer(t, Config{Wire: wire, WebhookURL: hooks + "/hook", CheckoutLifetime: lifetime})
				want := lifetime
				if want == 0 {
					want = DefaultCheckoutLifetime
				}
				ref := openSession(t, s, "order-1_a")
				s.Advance(want - time.Second)
				assert.Equal(t, `"PENDING"`, string(sessionStatus(t, s, ref)["status"]), "payable until its lifetime ends")
				s.Advance(time.Second)
				data := sessionStatus(t, s, ref)
				assert.Equal(t, `"FAILED"`, string(data["status"]))
				assert.Equal(t, `"expired"`, string(data["failureCode"]))
				assert.Equal(t, "null", string(data["paidAt"]))
				assert.Equal(t, "null", string(data["method"]))
				assert.Equal(t, StateFailed, s.Movements(ref)[0].State)
				assert.ErrorContains(t, s.CompleteCheckout(ref, "CARD", "succeeded"), "FAILED", "an expired session cannot be paid")
				s.Advance(time.Hour)
				assert.Empty(t, deliveredTo(s, hooks+"/hook"), "no webhook for a session nobody paid")
			})
		}
	}
}

func TestCheckoutPaidDoesNotExpire(t *testing.T) {
	hooks := newCallbackReceiver(t)
	s := newTestServer(t, Config{WebhookURL: hooks + "/hook"})
	ref := openSession(t, s, "")
	require.NoError(t, s.CompleteCheckout(ref, "MOBILE_MONEY", "succeeded"))
	s.Advance(48 * time.Hour)
	data := sessionStatus(t, s, ref)
	assert.Equal(t, `"SUCCEEDED"`, string(data["status"]))
	assert.Equal(t, "null", string(data["failureCode"]))
	assert.Len(t, deliveredTo(s, hooks+"/hook"), 1)
}

// A merchant whose creation answer was lost knows only its own reference:
// the status path finds the session by it, on both wires.
func TestCheckoutFoundByItsClientReference(t *testing.T) {
	for _, wire := range []Wire{WireSpec, WireProvider} {
		t.Run(string(wire), func(t *testing.T) {
			s := newTestServer(t, Config{Wire: wire})
			ref := openSession(t, s, "ORDER-2291-A")
			other := openSession(t, s, "ORDER-2292")
			byClient := sessionStatus(t, s, "ORDER-2291-A")
			assert.Equal(t, `"`+ref+`"`, string(byClient["reference"]))
			assert.Equal(t, sessionStatus(t, s, ref), byClient, "the same record either way")
			assert.Equal(t, `"`+other+`"`, string(sessionStatus(t, s, "ORDER-2292")["reference"]))
			requireError(t, serve(t, s, http.MethodGet, "/v1/payments/ORDER-9999", basicHeader, nil), http.StatusNotFound, CodeNotFound, "", "ORDER-9999")
		})
	}
}

// The checkout webhook meets the callback faults on both wires, picked by the
// merchant's client reference or by the session's service reference.
func TestCheckoutWebhookFaultsOnBothWires(t *testing.T) {
	for _, wire := range []Wire{WireSpec, WireProvider} {
		t.Run(string(wire), func(t *testing.T) {
			hooks := newCallbackReceiver(t)
			s := newTestServer(t, Config{Wire: wire, WebhookURL: hooks + "/hook"})
			dropped, delayed, byService := openSession(t, s, "dropme"), openSession(t, s, "delayme"), openSession(t, s, "")
			require.NoError(t, s.InjectCallbackFault(CallbackFault{Kind: CallbackDropped, Reference: "dropme"}))
			require.NoError(t, s.InjectCallbackFault(CallbackFault{Kind: CallbackDelayed, Reference: "delayme", Delay: 10 * time.Minute}))
			require.NoError(t, s.InjectCallbackFault(CallbackFault{Kind: CallbackDropped, ServiceReference: byService}))
			for _, ref := range []string{dropped, delayed, byService} {
				require.NoError(t, s.CompleteCheckout(ref, "CARD", "succeeded"))
			}
			s.Advance(9 * time.Minute)
			assert.Empty(t, deliveredTo(s, hooks+"/hook"))
			s.Advance(time.Minute)
			got := deliveredTo(s, hooks+"/hook")
			require.Len(t, got, 1)
			assert.Equal(t, "delayme", callbackReference(got[0]))
			_, fired := s.CallbackFaultCounts()
			assert.Equal(t, 3, fired)
		})
	}
	s := newTestServer(t, Config{})
	assert.ErrorContains(t, s.InjectCallbackFault(CallbackFault{Kind: CallbackDropped, Reference: "a", ServiceReference: "b"}), "not both")
}
