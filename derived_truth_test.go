package billing

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readStatus reads a kind's status check the way its row does, without comparing the
// reference its answer names: for tests of the wire reading alone, whose fixtures name
// their own references.
func readStatus(c *Client, kind Kind, ref string) (*Outcome, error) {
	return movements[kind].status(context.Background(), c, movement{Kind: kind, ClientReference: ref})
}

// statusReferenceField matches the fields a status check names its movement by.
var statusReferenceField = regexp.MustCompile(`("(?i:clientReference|clientReferenceId|reference)"\s*:\s*)"[^"]*"`)

// fixtureAbout is fixtureResponder with every reference the fixture names set to ref:
// a status check answers about the reference it was asked, or its answer is no answer.
func fixtureAbout(t testing.TB, status int, name, ref string) httpmock.Responder {
	body := statusReferenceField.ReplaceAll(fixture(t, name), []byte(`${1}"`+ref+`"`))
	return func(*http.Request) (*http.Response, error) {
		resp := httpmock.NewBytesResponse(status, body)
		resp.Header.Set("Content-Type", "application/json")
		return resp, nil
	}
}

// fixtureAsked is fixtureAbout for the reference the request asks about: its
// clientReference query, else the last segment of its path (before /status).
func fixtureAsked(t testing.TB, status int, name string) httpmock.Responder {
	return func(r *http.Request) (*http.Response, error) {
		ref := r.URL.Query().Get("clientReference")
		if ref == "" {
			segments := strings.Split(strings.TrimSuffix(r.URL.Path, "/status"), "/")
			ref = segments[len(segments)-1]
		}
		return fixtureAbout(t, status, name, ref)(r)
	}
}

// forgeCase is a genuine callback and the status checks that confirm it.
type forgeCase struct {
	event  string            // the fixture of the callback
	checks map[string]string // path -> the fixture of its status check, about the callback's reference
}

var forgeCases = []forgeCase{
	{"events/transaction_success.json", map[string]string{"/v1/payments/order1042": "confirm/receive_status_order1042.json"}},
	{"events/direct_debit_success.json", map[string]string{"/v1/payments/direct-debit/status/debitMarch2025": "confirm/charge_status_debitMarch2025.json"}},
	{"events/send_success.json", map[string]string{"/v1/payments/refund1042": "confirm/send_status_refund1042.json"}},
	{"events/send_failed_4075.json", map[string]string{"/v1/payments/payout4075": "confirm/send_status_payout4075.json"}},
	{"events/send_to_bank_success.json", map[string]string{"/v1/merchants/2020202/transactions/status": "confirm/bank_status_supplier88.json"}},
	{"events/mandate_approved.json", map[string]string{"/v1/mandates/preapproval/mandate2025ama/status": "confirm/mandate_status_mandate2025ama.json"}},
	{"events/payment_succeeded.json", map[string]string{"/v1/payments/ref_7Q2K9XW4LM": "confirm/checkout_get_ref_7Q2K9XW4LM.json"}},
}

// forgeries returns body with each of its leaves forged in turn (top level, and inside
// every object below it), and with the fields only a sender writes added at the top
// level and under its data: every variant a sender could try.
func forgeries(t *testing.T, body []byte) map[string][]byte {
	var doc map[string]any
	require.NoError(t, json.Unmarshal(body, &doc))
	out := map[string][]byte{}
	var walk func(path string, obj map[string]any)
	walk = func(path string, obj map[string]any) {
		for k, v := range obj {
			p := path + "/" + k
			if inner, ok := v.(map[string]any); ok {
				walk(p, inner)
			}
			for i, forged := range forgedValues(v) {
				obj[k] = forged
				b, err := json.Marshal(doc)
				require.NoError(t, err)
				out[fmt.Sprintf("%s#%d", p, i)] = b
			}
			obj[k] = v
		}
		for _, extra := range []string{"clientReference", "ClientReference", "environment", "OrderId", "AmountCharged", "AmountDebited", "RecipientName", "CustomerMsisdn", "metadata"} {
			if _, ok := obj[extra]; ok {
				continue
			}
			for i, forged := range []any{"FORGED-" + extra, 99999.0, map[string]any{"orderId": "9999"}} {
				obj[extra] = forged
				b, err := json.Marshal(doc)
				require.NoError(t, err)
				out[fmt.Sprintf("%s/+%s#%d", path, extra, i)] = b
			}
			delete(obj, extra)
		}
	}
	walk("", doc)
	return out
}

// forgedValues are the values a forger puts in place of v.
func forgedValues(v any) []any {
	switch v := v.(type) {
	case string:
		return []any{"FORGED", v + "X", "LIVE", "9999"}
	case float64:
		return []any{v*7 + 13, 99999.0, 0.01}
	case bool:
		return []any{!v}
	case nil:
		return []any{"FORGED", 99999.0}
	}
	return []any{"FORGED"}
}

// Every field of every callback and webhook fixture, forged in turn (or added where the
// fixture lacks it), is refused or never reaches merchant code: what the handler's
// function receives, and the Tracker's Outcome and its Event, are the genuine
// callback's exactly, built from the status check alone.
func TestForgedFieldsNeverReachMerchantCode(t *testing.T) {
	fields, refusedN, passedN := 0, 0, 0
	for _, fc := range forgeCases {
		t.Run(fc.event, func(t *testing.T) {
			genuine := fixture(t, fc.event)
			setup := func(t *testing.T) (*Client, *httpmock.MockTransport) {
				c, mock := newMockClient(t, WithDisbursementAccount("2020202"))
				knowsNothingElse(t, mock)
				ref := mustParse(t, genuine).Reference()
				for path, name := range fc.checks {
					known := fixtureAbout(t, http.StatusOK, name, ref)
					unknown := fixtureResponder(t, http.StatusNotFound, "payments/status_not_found.json")
					mock.RegisterResponder(http.MethodGet, mockBaseURL+path, func(r *http.Request) (*http.Response, error) {
						if q := r.URL.Query().Get("clientReference"); q != "" && q != ref {
							return unknown(r) // the service knows only the genuine movement
						}
						return known(r)
					})
				}
				return c, mock
			}
			// What merchant code receives for the genuine callback.
			c, _ := setup(t)
			var base webhookRecorder
			require.Equal(t, http.StatusOK, post(t, NewWebhookHandler(base.handle, WithStatusCheckConfirmation(c)), genuine).Code)
			want := base.last()
			require.NotNil(t, want)
			claim := mustParse(t, genuine)
			assertNoClaimOnlyFields(t, want)
			tr := NewTracker(c, TrackerOptions{Clock: newFakeClock()})
			require.Equal(t, http.StatusOK, post(t, tr.Handler(), genuine).Code)
			wantOutcome := awaitSettled(t, tr, claim)

			for name, forged := range forgeries(t, genuine) {
				fields++
				c, _ := setup(t)
				var rec webhookRecorder
				code := post(t, NewWebhookHandler(rec.handle, WithStatusCheckConfirmation(c)), forged).Code
				if code != http.StatusOK {
					refusedN++
					assert.Zero(t, rec.calls.Load(), name)
					continue
				}
				passedN++
				got := rec.last()
				if _, unconfirmedEvent := got.(*UnconfirmedEvent); unconfirmedEvent {
					continue // a kind forged into one the SDK does not know reaches it marked unconfirmed
				}
				if got != nil && got.State() != EventPending {
					assert.Equal(t, want, got, "%s reached merchant code", name)
				}
				// The Tracker: its settled outcome is the genuine one, or nothing.
				tr := NewTracker(c, TrackerOptions{Clock: newFakeClock()})
				if post(t, tr.Handler(), forged).Code != http.StatusOK {
					continue
				}
				e, err := tr.store.Get(context.Background(), eventKey(claim))
				require.NoError(t, err)
				if e.Final != nil {
					got := settledOutcome(e.Final, wantOutcome.Kind)
					got.At = wantOutcome.At
					assert.Equal(t, wantOutcome, got, "%s settled another outcome", name)
				}
			}
		})
	}
	t.Logf("%d forged variants: %d refused, %d answered 200 with the genuine truth or nothing", fields, refusedN, passedN)
}

// awaitSettled returns the outcome the Tracker settled for a callback: for a checkout,
// under the client reference the service's payment names.
func awaitSettled(t *testing.T, tr *Tracker, claim Event) *Outcome {
	t.Helper()
	key := eventKey(claim)
	if key.Callback == EventKindPaymentSucceeded {
		return nil // an untracked checkout settles nothing: see the checkout tests
	}
	e, err := tr.store.Get(context.Background(), key)
	require.NoError(t, err)
	require.NotNil(t, e.Final, "the genuine callback settles")
	o := settledOutcome(e.Final, e.Final.Outcome.Kind)
	assertNoClaimOnlyFields(t, o.Event)
	return o
}

// assertNoClaimOnlyFields checks that a confirmed event holds none of the fields only a
// callback carries.
func assertNoClaimOnlyFields(t *testing.T, ev Event) {
	t.Helper()
	switch ev := ev.(type) {
	case *TransactionCallback:
		assert.Zero(t, ev.Data.AmountCharged)
		assert.Zero(t, ev.Data.AmountAfterCharges)
		assert.Empty(t, ev.Data.OrderID)
		assert.Empty(t, ev.Data.Description)
		assert.Empty(t, ev.Data.PaymentDate)
	case *PayoutCallback:
		assert.Zero(t, ev.Data.AmountDebited)
		assert.Empty(t, ev.Data.RecipientName)
		assert.Empty(t, ev.Data.Meta)
		assert.Empty(t, ev.Data.Description)
	case *MandateCallback:
		assert.Empty(t, ev.CustomerMsisdn)
		assert.Empty(t, ev.CreatedAt)
	case *CheckoutEvent:
		assert.Empty(t, ev.ID)
		assert.Empty(t, ev.Environment)
		assert.Empty(t, ev.ClientReference)
		assert.Zero(t, ev.CreatedAt)
	}
}
