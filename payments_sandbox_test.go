package billing_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// moneySandbox starts a sandbox whose clock moves only when the test says, and a client
// for it.
func moneySandbox(t *testing.T, opts ...billingtest.Option) (*billingtest.Server, *billing.Client) {
	t.Helper()
	srv := billingtest.NewServer(t, append([]billingtest.Option{billingtest.WithManualClock()}, opts...)...)
	return srv, srv.Client()
}

// callbackSink is a merchant's callback endpoint that answers every post with 200. What
// the sandbox posted is read back through Server.Deliveries.
func callbackSink(t *testing.T) string {
	t.Helper()
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(sink.Close)
	return sink.URL
}

// deliveredTo returns the bodies the sandbox posted to url, oldest first, each also
// decoded into a map for shape checks.
func deliveredTo(srv *billingtest.Server, url string) []json.RawMessage {
	var bodies []json.RawMessage
	for _, d := range srv.Deliveries() {
		if d.URL == url {
			bodies = append(bodies, d.Body)
		}
	}
	return bodies
}

// assertShape checks that body has every key of the recorded fixture, spelled with the
// same case, at every level of nesting. exact also refuses keys the fixture lacks, for
// the bodies whose fields the spec lists in full.
func assertShape(t *testing.T, fixtureName string, body json.RawMessage, exact bool) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", fixtureName))
	require.NoError(t, err)
	var want, got map[string]any
	require.NoError(t, json.Unmarshal(raw, &want))
	require.NoError(t, json.Unmarshal(body, &got), "body: %s", body)
	compareShape(t, fixtureName, "", want, got, exact)
}

func compareShape(t *testing.T, fixtureName, at string, want, got map[string]any, exact bool) {
	t.Helper()
	for k, w := range want {
		g, ok := got[k]
		if !assert.True(t, ok, "%s: key %s%s missing from %v", fixtureName, at, k, keysOf(got)) {
			continue
		}
		wm, wIsObject := w.(map[string]any)
		gm, gIsObject := g.(map[string]any)
		if wIsObject && gIsObject {
			compareShape(t, fixtureName, at+k+".", wm, gm, exact && k != "metadata")
		}
	}
	if exact {
		for k := range got {
			_, ok := want[k]
			assert.True(t, ok, "%s: unexpected key %s%s", fixtureName, at, k)
		}
	}
}

func keysOf(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}

// transactionCallback is the spec's callback of receive and direct debit, decoded with
// the SDK's decimal type so amounts are exact.
type transactionCallback struct {
	ResponseCode billing.ResponseCode
	Message      string
	Data         struct {
		Amount, Charges, AmountAfterCharges, AmountCharged billing.DecimalAmount
		ClientReference, TransactionID, Description        string
		ExternalTransactionID                              *string `json:"ExternalTransactionId"`
	}
}

func decodeCallback[T any](t *testing.T, body json.RawMessage) T {
	t.Helper()
	var v T
	require.NoError(t, json.Unmarshal(body, &v), "body: %s", body)
	return v
}

func TestCheckoutEndToEnd(t *testing.T) {
	onEachWire(t, testCheckoutEndToEnd)
}

func testCheckoutEndToEnd(t *testing.T, wire billingtest.Wire) {
	webhooks := callbackSink(t)
	srv, c := moneySandbox(t, billingtest.WithWire(wire), billingtest.WithWebhookURL(webhooks+"/webhooks"))
	ctx := context.Background()

	pay, err := c.Payments.CreateCheckout(ctx, &billing.CheckoutParams{
		Amount: 5000, Currency: "ghs", Description: "Order 1042",
		Customer:        billing.CheckoutCustomer{Name: "Ama Mensah", Email: "ama@example.com", Phone: "+233 24 123 4567"},
		Metadata:        billing.Metadata{"orderId": "1042"},
		ClientReference: "order1042",
		ReturnURL:       "https://shop.example.com/orders/1042",
	})
	require.NoError(t, err)
	assert.Regexp(t, `^pay_`, pay.ID)
	assert.Equal(t, billing.PaymentStatusPending, pay.Status)
	assert.Equal(t, billing.PaymentEnvironmentTest, pay.Environment)
	assert.Equal(t, srv.URL+"/checkout/"+pay.Reference, pay.CheckoutURL)
	assert.Equal(t, "GHS", pay.Currency)
	assert.Equal(t, int64(5000), pay.Amount)
	assert.Empty(t, pay.Method)
	assert.Equal(t, "233241234567", strings.TrimPrefix(pay.Customer.Phone, "+"))
	assert.Equal(t, "order1042", pay.Metadata["clientReference"])
	assert.Equal(t, "https://shop.example.com/orders/1042", pay.Metadata["returnUrl"])
	assert.Equal(t, 1, srv.Movements(pay.Reference))
	assert.Equal(t, 1, srv.Movements("order1042"))

	page, err := http.Get(pay.CheckoutURL)
	require.NoError(t, err)
	page.Body.Close()
	assert.Equal(t, http.StatusOK, page.StatusCode, "the checkout URL is the sandbox's own page")

	got, err := c.Payments.Get(ctx, pay.Reference)
	require.NoError(t, err)
	assert.True(t, got.IsPending())

	require.NoError(t, srv.CompleteCheckout(pay.Reference, "MOBILE_MONEY", "succeeded"))
	srv.Advance(time.Second)
	got, err = c.Payments.Get(ctx, pay.Reference)
	require.NoError(t, err)
	assert.True(t, got.Succeeded())
	assert.True(t, got.IsFinal())
	assert.Equal(t, billing.PaymentMethodMobileMoney, got.Method)
	assert.Equal(t, int64(98), got.Fee, "1.95% of 50.00, rounded half up")
	assert.Equal(t, int64(4902), got.Net)
	assert.Equal(t, srv.Now().Add(-time.Second), got.PaidAt)
	assert.NotEmpty(t, got.MobileMoneyDetail.Network)
	assert.NotEmpty(t, got.MobileMoneyDetail.ExternalRef)
	assert.Equal(t, "233241234567", got.MobileMoneyDetail.Phone)

	hooks := deliveredTo(srv, webhooks+"/webhooks")
	require.Len(t, hooks, 1, "payment.succeeded goes to the webhook URL")
	if wire == billingtest.WireProvider {
		assertShape(t, "provider/checkout_webhook.json", hooks[0], true)
		var hook struct {
			ResponseCode billing.ResponseCode
			Status       string
			Data         struct {
				CheckoutID      string `json:"CheckoutId"`
				SalesInvoiceID  string `json:"SalesInvoiceId"`
				ClientReference string
				Amount          billing.DecimalAmount
			}
		}
		require.NoError(t, json.Unmarshal(hooks[0], &hook))
		assert.Equal(t, billing.CodeSuccess, hook.ResponseCode)
		assert.Equal(t, "Success", hook.Status)
		assert.Equal(t, pay.Reference, hook.Data.CheckoutID)
		assert.Equal(t, pay.ID, hook.Data.SalesInvoiceID)
		assert.Equal(t, "order1042", hook.Data.ClientReference)
		assert.Equal(t, billing.DecimalAmount(5000), hook.Data.Amount, "50 cedis")
	} else {
		assertShape(t, "payments/checkout_webhook.json", hooks[0], false)
		var hook struct {
			Event string
			Data  billing.Payment
		}
		require.NoError(t, json.Unmarshal(hooks[0], &hook))
		assert.Equal(t, "payment.succeeded", hook.Event)
		assert.Equal(t, pay.Reference, hook.Data.Reference)
		assert.Equal(t, billing.PaymentStatusSucceeded, hook.Data.Status)
	}
	ev, err := billing.ParseEvent(hooks[0])
	require.NoError(t, err, "the SDK reads the webhook of either wire")
	assert.Equal(t, billing.EventKindPaymentSucceeded, ev.Kind())
	if wire == billingtest.WireProvider {
		assert.Equal(t, "order1042", ev.Reference(), "the provider's webhook names its session by the client reference")
	} else {
		assert.Equal(t, pay.Reference, ev.Reference())
	}
	assert.Equal(t, billing.EventSucceeded, ev.State())

	err = srv.CompleteCheckout(pay.Reference, "CARD", "succeeded")
	assert.Error(t, err, "a paid session cannot be paid again")
}

func TestCheckoutOtherMethodsAndDeclines(t *testing.T) {
	onEachWire(t, testCheckoutOtherMethodsAndDeclines)
}

func testCheckoutOtherMethodsAndDeclines(t *testing.T, wire billingtest.Wire) {
	webhooks := callbackSink(t)
	srv, c := moneySandbox(t, billingtest.WithWire(wire), billingtest.WithWebhookURL(webhooks))
	ctx := context.Background()
	for _, tc := range []struct {
		method, outcome string
		check           func(t *testing.T, p *billing.Payment)
	}{
		{"CARD", "succeeded", func(t *testing.T, p *billing.Payment) {
			assert.True(t, p.Succeeded())
			assert.Equal(t, billing.PaymentMethodCard, p.Method)
			assert.NotEmpty(t, p.CardDetail.Brand)
			assert.Len(t, p.CardDetail.Last4, 4)
			assert.Equal(t, int64(59), p.Fee, "1.95% of 30.00 is 0.585, rounded half up")
		}},
		{"BANK_TRANSFER", "succeeded", func(t *testing.T, p *billing.Payment) {
			assert.True(t, p.Succeeded())
			assert.Equal(t, billing.PaymentMethodBankTransfer, p.Method)
			assert.Equal(t, int64(3000-59), p.Net)
		}},
		{"CARD", "failed", func(t *testing.T, p *billing.Payment) {
			assert.True(t, p.IsFinal())
			assert.False(t, p.Succeeded())
			assert.Equal(t, billing.PaymentStatusFailed, p.Status)
			assert.Equal(t, "card_declined", p.FailureCode)
			assert.NotEmpty(t, p.FailureMessage)
			assert.True(t, p.PaidAt.IsZero())
		}},
		{"MOBILE_MONEY", "failed", func(t *testing.T, p *billing.Payment) {
			assert.Equal(t, billing.PaymentStatusFailed, p.Status)
			assert.Equal(t, "mobile_money_failed", p.FailureCode)
		}},
	} {
		t.Run(tc.method+" "+tc.outcome, func(t *testing.T) {
			before := len(deliveredTo(srv, webhooks))
			pay, err := c.Payments.CreateCheckout(ctx, &billing.CheckoutParams{Amount: 3000, Description: "Plan"})
			require.NoError(t, err)
			require.NoError(t, srv.CompleteCheckout(pay.Reference, tc.method, tc.outcome))
			srv.Advance(time.Second)
			got, err := c.Payments.Get(ctx, pay.Reference)
			require.NoError(t, err)
			tc.check(t, got)
			want := before
			if tc.outcome == "succeeded" {
				want++
			}
			assert.Len(t, deliveredTo(srv, webhooks), want, "a webhook for each success, none for a decline")
		})
	}

	_, err := c.Payments.Get(ctx, "nosuchreference")
	assert.ErrorIs(t, err, billing.ErrNotFound)
}

// receiveFor asks for a receive from phone under ref, with its callback going to url.
func receiveFor(ctx context.Context, c *billing.Client, phone, ref, url string) (*billing.DirectReceive, error) {
	return c.Payments.Receive(ctx, &billing.ReceiveParams{
		Amount: 2500, Phone: phone, Provider: billing.ProviderMTN, Description: "Order " + ref,
		ClientReference: ref, CallbackURL: url,
	})
}

// wireFixture names the recorded fixture of a body's shape on wire: the spec's under
// testdata/<spec>, the provider's documented payload under testdata/provider/<provider>.
func wireFixture(wire billingtest.Wire, spec, provider string) string {
	if wire == billingtest.WireProvider {
		return "provider/" + provider
	}
	return spec
}

func TestReceiveEveryTestNumber(t *testing.T) {
	onEachWire(t, testReceiveEveryTestNumber)
}

func testReceiveEveryTestNumber(t *testing.T, wire billingtest.Wire) {
	provider := wire == billingtest.WireProvider
	sink := callbackSink(t)
	for _, tc := range []struct {
		name, phone  string
		code         billing.ResponseCode // of the callback and the final status check
		succeeded    bool
		callback     bool
		pendingUntil time.Duration
	}{
		{"success", "+233 24 123 4567", billing.CodeSuccess, true, true, 0},
		{"wrong PIN", "233241230001", billing.CodeFailed, false, true, 0},
		{"no callback ever", "233241230002", billing.CodeSuccess, true, false, 0},
		{"pending ten minutes", "233241230004", billing.CodeSuccess, true, true, 10 * time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, c := moneySandbox(t, billingtest.WithWire(wire))
			ctx := context.Background()
			ref := "rcv" + tc.phone[len(tc.phone)-4:]
			url := sink + "/receive/" + ref
			r, err := receiveFor(ctx, c, tc.phone, ref, url)
			require.NoError(t, err)
			assert.Equal(t, int64(2500), r.Amount, "25.00 in minor units")
			if provider {
				assert.NotEmpty(t, r.ID, "the provider's acceptance names the transaction")
				assert.Equal(t, ref, r.Reference)
			} else {
				assert.Equal(t, "PROCESSING", r.Status)
				assert.Equal(t, strings.NewReplacer("+", "", " ", "").Replace(tc.phone), r.Phone, "sent in international form")
				assert.Equal(t, billing.ProviderMTN, r.Provider)
			}
			assert.Equal(t, 1, srv.Movements(ref))

			st, err := c.Payments.ReceiveStatus(ctx, ref)
			require.NoError(t, err)
			assert.True(t, st.IsPending(), "nothing resolves before the clock moves")
			assert.Equal(t, pendingStatusCode(wire), st.ResponseCode)
			assert.Equal(t, billing.CollectionStatusUnpaid, st.Status)
			assert.False(t, st.IsFulfilled)
			if provider {
				assert.Equal(t, r.ID, st.TransactionID)
			}

			if tc.pendingUntil > 0 {
				srv.Advance(tc.pendingUntil - time.Second)
				st, err = c.Payments.ReceiveStatus(ctx, ref)
				require.NoError(t, err)
				assert.True(t, st.IsPending(), "still pending just before %s", tc.pendingUntil)
				assert.Empty(t, deliveredTo(srv, url))
			}
			srv.Advance(2 * time.Second)

			st, err = c.Payments.ReceiveStatus(ctx, ref)
			require.NoError(t, err)
			assert.Equal(t, tc.succeeded, st.Succeeded())
			if !provider {
				assert.Equal(t, tc.succeeded, st.IsFulfilled, "the provider writes isFulfilled null")
			}
			if provider && !tc.succeeded {
				// The provider's status check answers 0000 Unpaid for a payment not paid,
				// failed or not yet: only the callback says it failed.
				assert.True(t, st.IsPending(), "Unpaid under 0000 is no final state")
				assert.Equal(t, billing.CodeSuccess, st.ResponseCode)
				assert.Equal(t, billing.CollectionStatusUnpaid, st.Status)
			} else {
				assert.True(t, st.IsFinal())
				assert.Equal(t, tc.code, st.ResponseCode)
			}
			assert.Equal(t, ref, st.ClientReference)
			assert.NotEmpty(t, st.TransactionID)
			assert.Equal(t, int64(2500), st.Amount)
			if tc.succeeded {
				assert.Equal(t, int64(25), st.Charges, "1% of the amount")
				assert.Equal(t, int64(2475), st.AmountAfterCharges)
			} else {
				assert.Zero(t, st.Charges, "nothing is charged for a failed payment")
			}
			if tc.succeeded || !provider {
				// The provider names the network's transaction on a failure too.
				assert.Equal(t, tc.succeeded, st.ExternalTransactionID != "")
			}

			bodies := deliveredTo(srv, url)
			if !tc.callback {
				assert.Empty(t, bodies)
				return
			}
			require.Len(t, bodies, 1)
			fixtureName := wireFixture(wire, "payments/transaction_callback_success.json", "receive_callback_success_doc.json")
			if !tc.succeeded {
				fixtureName = wireFixture(wire, "payments/transaction_callback_failed.json", "receive_callback_failed_doc.json")
			}
			assertShape(t, fixtureName, bodies[0], true)
			cb := decodeCallback[transactionCallback](t, bodies[0])
			assert.Equal(t, tc.code, cb.ResponseCode)
			assert.Equal(t, ref, cb.Data.ClientReference)
			assert.Equal(t, st.TransactionID, cb.Data.TransactionID, "the callback and the status check name the same transaction")
			assert.Equal(t, billing.DecimalAmount(2500), cb.Data.Amount, "callbacks carry decimals: 25.00")
			if provider {
				assert.Contains(t, string(bodies[0]), `"Amount":25,`, "the provider writes cedis with the fewest decimals")
			} else {
				assert.Contains(t, string(bodies[0]), `"Amount":25.00`)
				assert.Equal(t, tc.succeeded, cb.Data.ExternalTransactionID != nil)
			}
		})
	}
}

func TestReceiveRefusedAtOnceMovesNothing(t *testing.T) {
	onEachWire(t, testReceiveRefusedAtOnce)
}

func testReceiveRefusedAtOnce(t *testing.T, wire billingtest.Wire) {
	srv, c := moneySandbox(t, billingtest.WithWire(wire))
	ctx := context.Background()

	_, err := receiveFor(ctx, c, "233241230003", "rcv0003", "")
	var apiErr *billing.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, billing.CodeDeclined, apiErr.Code, "test number 0003 is declined by the gateway")
	assert.NotErrorIs(t, err, billing.ErrOutcomeUnknown)
	assert.Zero(t, srv.Movements("rcv0003"))
	_, err = c.Payments.ReceiveStatus(ctx, "rcv0003")
	assert.ErrorIs(t, err, billing.ErrNotFound)

	_, err = receiveFor(ctx, c, "233241234567", "rcvdup", "")
	require.NoError(t, err)
	_, err = receiveFor(ctx, c, "233241234567", "rcvdup", "")
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, billing.CodeFailed, apiErr.Code)
	assert.Contains(t, strings.ToLower(apiErr.Message), "duplicate")
	assert.Equal(t, 1, srv.Movements("rcvdup"), "a reused client reference moves nothing")
}

func TestMoneyEndpointsBehindTheAllowlist(t *testing.T) {
	srv, c := moneySandbox(t, billingtest.WithAllowIPs(netip.MustParsePrefix("203.0.113.0/24")))
	ctx := context.Background()
	mandateApproved(t, srv, c, "233241239991", "ipmandate1")

	restricted := map[string]func() error{
		"receive": func() error { _, err := receiveFor(ctx, c, "233241234567", "ip1", ""); return err },
		"send":    func() error { _, err := sendTo(ctx, c, "233241234567", "ip2", "", 5000); return err },
		"send to bank": func() error {
			_, err := c.Payouts.SendToBank(ctx, bankTransfer("1441000123456", "ip3", "https://example.com/cb", 1000))
			return err
		},
		"direct debit": func() error {
			_, err := c.Mandates.Charge(ctx, debit("233241239991", "ip4", "https://example.com/cb", 1000))
			return err
		},
	}
	for name, call := range restricted {
		err := call()
		assert.ErrorIs(t, err, billing.ErrIPNotAllowed, name)
		assert.NotErrorIs(t, err, billing.ErrOutcomeUnknown, name)
	}
	for _, ref := range []string{"ip1", "ip2", "ip3", "ip4"} {
		assert.Zero(t, srv.Movements(ref))
	}

	_, err := c.Payments.CreateCheckout(ctx, &billing.CheckoutParams{Amount: 100})
	assert.NoError(t, err, "checkout is not behind the allowlist")
	_, err = c.Mandates.Status(ctx, "ipmandate1")
	assert.NoError(t, err, "mandates are not behind the allowlist")
	_, err = c.Payments.ReceiveStatus(ctx, "ip1")
	assert.ErrorIs(t, err, billing.ErrNotFound, "status checks are not behind the allowlist")
}

func TestReceiveAndDebitNeedTheDirectScope(t *testing.T) {
	srv, c := moneySandbox(t, billingtest.WithScopes("customers:read"))
	ctx := context.Background()
	_, err := receiveFor(ctx, c, "233241234567", "scope1", "")
	var apiErr *billing.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, billing.CodeKeysMismatch, apiErr.Code)
	assert.ErrorIs(t, err, billing.ErrUnauthorized)
	assert.NotErrorIs(t, err, billing.ErrIPNotAllowed)

	_, err = c.Mandates.Charge(ctx, debit("233241234567", "scope2", "https://example.com/cb", 100))
	assert.ErrorIs(t, err, billing.ErrUnauthorized)
	assert.Zero(t, srv.Movements("scope1")+srv.Movements("scope2"))

	_, err = sendTo(ctx, c, "233241234567", "scope3", "", 5000)
	assert.NoError(t, err, "send needs no scope")
	_, err = c.Mandates.Create(ctx, &billing.MandateCreateParams{
		ClientReferenceID: "scope4", CustomerMSISDN: "233241234567", Channel: billing.DirectDebitChannelMTN, CallbackURL: "https://example.com/cb",
	})
	assert.NoError(t, err, "mandates need no scope")
}

// lostResponseCase is one money movement whose response the sandbox loses after doing
// the work, and how to check the truth afterwards.
type lostResponseCase struct {
	route string
	ref   string
	// setup prepares what the movement needs (an approved mandate for a charge).
	setup func(t *testing.T, srv *billingtest.Server, c *billing.Client)
	call  func(ctx context.Context, c *billing.Client) error
	// truth asks the status check once the sandbox has resolved the movement.
	truth func(t *testing.T, ctx context.Context, c *billing.Client)
}

var lostResponseCases = map[string]lostResponseCase{
	"checkout": {
		route: "POST /v1/payments", ref: "lostcheckout",
		call: func(ctx context.Context, c *billing.Client) error {
			_, err := c.Payments.CreateCheckout(ctx, &billing.CheckoutParams{Amount: 5000, ClientReference: "lostcheckout"})
			return err
		},
	},
	"receive": {
		route: "POST /v1/payments/receive", ref: "lostreceive",
		call: func(ctx context.Context, c *billing.Client) error {
			_, err := receiveFor(ctx, c, "233241234567", "lostreceive", "")
			return err
		},
		truth: func(t *testing.T, ctx context.Context, c *billing.Client) {
			st, err := c.Payments.ReceiveStatus(ctx, "lostreceive")
			require.NoError(t, err)
			assert.True(t, st.Succeeded())
		},
	},
	"send": {
		route: "POST /v1/payments/send", ref: "lostsend",
		call: func(ctx context.Context, c *billing.Client) error {
			_, err := sendTo(ctx, c, "233241234567", "lostsend", "", 5000)
			return err
		},
		truth: func(t *testing.T, ctx context.Context, c *billing.Client) {
			st, err := c.Payouts.SendStatus(ctx, "lostsend")
			require.NoError(t, err)
			assert.True(t, st.Succeeded())
		},
	},
	"send to bank": {
		route: "POST /v1/merchants/{account}/send/bank/gh/{bankCode}", ref: "lostbank",
		call: func(ctx context.Context, c *billing.Client) error {
			_, err := c.Payouts.SendToBank(ctx, bankTransfer("1441000123456", "lostbank", "https://example.com/cb", 5000))
			return err
		},
		truth: func(t *testing.T, ctx context.Context, c *billing.Client) {
			st, err := c.Payouts.BankTransferStatus(ctx, &billing.BankTransferStatusParams{ClientReference: "lostbank"})
			require.NoError(t, err)
			assert.True(t, st.Succeeded())
		},
	},
	"mandate": {
		route: "POST /v1/mandates", ref: "lostmandate",
		call: func(ctx context.Context, c *billing.Client) error {
			_, err := c.Mandates.Create(ctx, &billing.MandateCreateParams{
				ClientReferenceID: "lostmandate", CustomerMSISDN: "233241234567",
				Channel: billing.DirectDebitChannelMTN, CallbackURL: "https://example.com/cb",
			})
			return err
		},
		truth: func(t *testing.T, ctx context.Context, c *billing.Client) {
			m, err := c.Mandates.Status(ctx, "lostmandate")
			require.NoError(t, err)
			assert.True(t, m.Succeeded(), "USSD approval follows on its own")
		},
	},
	"direct debit": {
		route: "POST /v1/payments/direct-debit", ref: "lostdebit",
		setup: func(t *testing.T, srv *billingtest.Server, c *billing.Client) {
			mandateApproved(t, srv, c, "233241234567", "lostdebitmandate")
		},
		call: func(ctx context.Context, c *billing.Client) error {
			_, err := c.Mandates.Charge(ctx, debit("233241234567", "lostdebit", "https://example.com/cb", 4999))
			return err
		},
		truth: func(t *testing.T, ctx context.Context, c *billing.Client) {
			st, err := c.Mandates.ChargeStatus(ctx, "lostdebit")
			require.NoError(t, err)
			assert.True(t, st.Succeeded())
		},
	},
}

func TestLostResponseIsOutcomeUnknownAndMovesMoneyOnce(t *testing.T) {
	onEachWire(t, testLostResponse)
}

func testLostResponse(t *testing.T, wire billingtest.Wire) {
	for name, tc := range lostResponseCases {
		t.Run(name, func(t *testing.T) {
			srv, c := moneySandbox(t, billingtest.WithWire(wire))
			ctx := context.Background()
			if tc.setup != nil {
				tc.setup(t, srv, c)
			}
			srv.InjectFault(billingtest.Fault{Route: tc.route, Nth: 1, Kind: billingtest.FaultResponseLost})

			err := tc.call(ctx, c)
			require.ErrorIs(t, err, billing.ErrOutcomeUnknown)
			var unknown *billing.OutcomeUnknownError
			require.ErrorAs(t, err, &unknown)
			assert.Equal(t, tc.ref, unknown.ClientReference)
			assert.Equal(t, 1, srv.Movements(tc.ref), "the work was done once and the SDK did not send it again")

			srv.Advance(time.Second)
			if tc.truth == nil {
				return // a checkout session has no status check by client reference
			}
			tc.truth(t, ctx, c)
			err = tc.call(ctx, c)
			assert.Error(t, err, "the same client reference again is refused as a duplicate")
			assert.NotErrorIs(t, err, billing.ErrOutcomeUnknown)
			assert.Equal(t, 1, srv.Movements(tc.ref))
		})
	}
}

func TestConnectionResetBeforeWorkIsResolvedByTheStatusCheck(t *testing.T) {
	srv, c := moneySandbox(t)
	ctx := context.Background()
	srv.InjectFault(billingtest.Fault{Route: "POST /v1/payments/receive", Kind: billingtest.FaultResetBeforeWork})

	_, err := receiveFor(ctx, c, "233241234567", "resetrcv", "")
	require.ErrorIs(t, err, billing.ErrOutcomeUnknown, "the SDK cannot tell a reset before the work from one after")
	assert.Zero(t, srv.Movements("resetrcv"))

	_, err = c.Payments.ReceiveStatus(ctx, "resetrcv")
	require.ErrorIs(t, err, billing.ErrNotFound, "the status check says it never happened")
	_, err = receiveFor(ctx, c, "233241234567", "resetrcv", "")
	require.NoError(t, err, "so it is safe to send again, with the same client reference")
	assert.Equal(t, 1, srv.Movements("resetrcv"))
}

func TestStatusChecksAreRetriedThroughResets(t *testing.T) {
	srv, c := moneySandbox(t)
	ctx := context.Background()
	_, err := receiveFor(ctx, c, "233241234567", "retryrcv", "")
	require.NoError(t, err)
	srv.InjectFault(billingtest.Fault{Route: "GET /v1/payments/{reference}", Kind: billingtest.FaultResponseLost})
	st, err := c.Payments.ReceiveStatus(ctx, "retryrcv")
	require.NoError(t, err, "a status check is a read: a lost response is asked again")
	assert.Equal(t, "retryrcv", st.ClientReference)
}

// countingRoundTripper counts the requests that leave a client.
type countingRoundTripper struct {
	n atomic.Int32
}

func (c *countingRoundTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return http.DefaultTransport.RoundTrip(r)
}

func TestMoneyValidationNeverReachesTheSandbox(t *testing.T) {
	srv, _ := moneySandbox(t)
	counter := &countingRoundTripper{}
	c := srv.Client(billing.WithHTTPClient(&http.Client{Transport: counter}))
	ctx := context.Background()
	for name, call := range map[string]func() error{
		"checkout decimal-free amount": func() error {
			_, err := c.Payments.CreateCheckout(ctx, &billing.CheckoutParams{Amount: 0})
			return err
		},
		"receive local phone":  func() error { _, err := receiveFor(ctx, c, "0241234567", "v1", ""); return err },
		"receive no reference": func() error { _, err := receiveFor(ctx, c, "233241234567", "", ""); return err },
		"send mpesa": func() error {
			_, err := c.Payouts.Send(ctx, &billing.SendParams{Amount: 100, Phone: "254712345678", Provider: billing.ProviderMPESA, Description: "x", ClientReference: "v2"})
			return err
		},
		"bank code": func() error {
			p := bankTransfer("1441000123456", "v3", "https://example.com/cb", 100)
			p.BankCode = "123456"
			_, err := c.Payouts.SendToBank(ctx, p)
			return err
		},
		"mandate channel": func() error {
			_, err := c.Mandates.Create(ctx, &billing.MandateCreateParams{ClientReferenceID: "v4", CustomerMSISDN: "233241234567", Channel: "mtn-gh", CallbackURL: "https://example.com/cb"})
			return err
		},
		"otp shape": func() error {
			_, err := c.Mandates.VerifyOTP(ctx, &billing.MandateVerifyOTPParams{CustomerMSISDN: "233241234567", ServicePreApprovalID: "p", ClientReferenceID: "v5", OTPCode: "ABCD1234"})
			return err
		},
		"debit amount": func() error {
			_, err := c.Mandates.Charge(ctx, debit("233241234567", "v6", "https://example.com/cb", -100))
			return err
		},
	} {
		var v *billing.ValidationError
		assert.True(t, errors.As(call(), &v), name)
	}
	assert.Zero(t, counter.n.Load(), "bad input never leaves the machine")
}

// pendingStatusCode is the response code of a receive or debit status check while the
// payment is not paid: 0001 on the spec's wire; the provider answers 0000 with Unpaid.
func pendingStatusCode(wire billingtest.Wire) billing.ResponseCode {
	if wire == billingtest.WireProvider {
		return billing.CodeSuccess
	}
	return billing.CodeAccepted
}
