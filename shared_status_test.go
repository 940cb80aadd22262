package billing

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sharedRecord is a record GET /v1/payments/{reference} can answer with.
type sharedRecord struct {
	file string
	// owners are the kinds whose status check this record answers: one kind, or the
	// receive and the checkout for the provider's lower-camel collection record, which
	// is the shape of both its receive and its checkout status checks.
	owners []Kind
	// moved: the record says money moved.
	moved bool
}

// sharedRecords are the records of every kind served on the shared path, both wires.
var sharedRecords = []sharedRecord{
	{"payments/checkout_paid_card.json", []Kind{KindCheckout}, true},
	{"payments/checkout_paid_mobile_money.json", []Kind{KindCheckout}, true},
	{"payments/checkout_failed.json", []Kind{KindCheckout}, false},
	{"payments/checkout_created.json", []Kind{KindCheckout}, false},
	{"payments/receive_status_paid.json", []Kind{KindReceive}, true},
	{"payments/receive_status_failed.json", []Kind{KindReceive}, false},
	{"payments/receive_status_pending.json", []Kind{KindReceive}, false},
	{"provider/receive_status_paid_doc.json", []Kind{KindReceive, KindCheckout}, true},
	{"provider/receive_status_unpaid_doc.json", []Kind{KindReceive, KindCheckout}, false},
	{"payouts/send_status_success.json", []Kind{KindSend}, true},
	{"payouts/send_status_failed.json", []Kind{KindSend}, false},
	{"payouts/send_status_pending.json", []Kind{KindSend}, false},
	{"provider/send_status_success.json", []Kind{KindSend}, true},
}

// kindsOnPath returns the kinds whose status check asks path about a reference, found
// by asking each kind of the movements table and recording where it went.
func kindsOnPath(t *testing.T, path string) []Kind {
	t.Helper()
	var out []Kind
	for _, kind := range movementKinds {
		c, mock := newMockClient(t, WithDisbursementAccount("2020202"))
		var asked string
		mock.RegisterNoResponder(func(r *http.Request) (*http.Response, error) {
			asked = r.URL.Path
			return httpmock.NewStringResponse(http.StatusNotFound, `{"success":false,"message":"not found"}`), nil
		})
		_, _ = movementStatus(ctx(), c, movement{Kind: kind, ClientReference: "shared7"})
		if asked == strings.Replace(path, "{reference}", "shared7", 1) {
			out = append(out, kind)
		}
	}
	return out
}

// namingReference returns body with every clientReference in it naming ref, so that
// the answer is about the reference asked.
func namingReference(t *testing.T, body []byte, ref string) []byte {
	t.Helper()
	root := parseNode(t, body)
	var walk func(n *jsonNode)
	walk = func(n *jsonNode) {
		for i := range n.members {
			if strings.EqualFold(n.members[i].key, "clientReference") {
				n.members[i].value = &jsonNode{raw: []byte(`"` + ref + `"`)}
			}
			walk(n.members[i].value)
		}
		for _, it := range n.items {
			walk(it)
		}
	}
	walk(root)
	return root.bytes()
}

// TestSharedStatusPathNeverConfusesKinds: for every kind whose status check shares GET
// /v1/payments/{reference}, every record of every kind served there (both wires)
// answers its status check. A record of another kind is no answer: nothing final is
// read from it. A record that says money moved is never read, nor given up, as failed or
// expired.
func TestSharedStatusPathNeverConfusesKinds(t *testing.T) {
	kinds := kindsOnPath(t, "/v1/payments/{reference}")
	require.ElementsMatch(t, []Kind{KindReceive, KindSend, KindCheckout}, kinds)
	cases := 0
	for _, kind := range kinds {
		for _, rec := range sharedRecords {
			c, mock := newMockClient(t)
			ref := "shared7"
			body := namingReference(t, fixture(t, rec.file), ref)
			mock.RegisterResponder(http.MethodGet, mockBaseURL+"/v1/payments/"+ref, httpmock.NewBytesResponder(http.StatusOK, body))
			clock := newFakeClock()
			tr := NewTracker(c, TrackerOptions{Clock: clock})
			m := movement{Kind: kind, ClientReference: ref, StartedAt: clock.Now()}
			o, err := movementStatus(ctx(), c, m)
			given := tr.checkoutGivenUp(m, o, err, clock.Now().Add(tr.opts.CheckoutExpiry+time.Hour))
			cases++
			desc := rec.file + " answering the " + string(kind) + " status check"
			owned := false
			for _, owner := range rec.owners {
				owned = owned || owner == kind
			}
			if !owned {
				assert.False(t, err == nil && o.IsFinal(), "%s: settled %v as the wrong kind", desc, o)
			}
			if rec.moved {
				if err == nil {
					assert.NotContains(t, []EventState{EventFailed, EventExpired}, o.State, "%s: money moved", desc)
				}
				if given != nil {
					assert.NotEqual(t, EventExpired, given.State, "%s: money moved, yet given up as expired", desc)
				}
			}
			if owned && rec.moved {
				require.NoError(t, err, desc)
				assert.True(t, o.moved(), "%s: read as %s", desc, o.State)
			}
		}
	}
	t.Logf("%d records answered %d kinds' status checks", cases, len(kinds))
}

// TestProviderCheckoutStatusConfirmsItsWebhook: the provider's checkout webhook,
// confirmed by the provider's checkout status check ({status: "Paid"}), is taken: the
// tracked session settles succeeded, where it was refused 503 for ever and then given up
// as expired.
func TestProviderCheckoutStatusConfirmsItsWebhook(t *testing.T) {
	tr, mock, _ := newTestTracker(t, TrackerOptions{})
	// The provider's checkout status check of the webhook's session: Paid, 0.50.
	paid := strings.Replace(string(fixture(t, "provider/receive_status_paid_doc.json")), `"amount": 0.1,`, `"amount": 0.5,`, 1)
	status := namingReference(t, []byte(paid), "Kaks545253")
	mock.RegisterResponder(http.MethodGet, mockBaseURL+"/v1/payments/Kaks545253", httpmock.NewBytesResponder(http.StatusOK, status))
	require.NoError(t, tr.TrackAmount(ctx(), KindCheckout, "Kaks545253", Money{Amount: 50}))
	assert.Equal(t, http.StatusOK, post(t, tr.Handler(), fixture(t, "provider/checkout_webhook.json")).Code)
	o := settledNow(t, tr, KindCheckout, "Kaks545253")
	require.NotNil(t, o)
	assert.Equal(t, EventSucceeded, o.State)
}
