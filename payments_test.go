package billing

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// exchange is what a recorded responder saw of the request it answered.
type exchange struct {
	calls int
	auth  string
	query string
}

// recordedExchange answers method url with a response fixture, after checking that the
// request body is the request fixture (skipped when requestFixture is empty).
func recordedExchange(t *testing.T, mock *httpmock.MockTransport, method, url, requestFixture string, status int, responseFixture string) *exchange {
	t.Helper()
	ex := &exchange{}
	respond := fixtureResponder(t, status, responseFixture)
	mock.RegisterResponder(method, url, func(r *http.Request) (*http.Response, error) {
		ex.calls++
		ex.auth, ex.query = r.Header.Get("Authorization"), r.URL.RawQuery
		if requestFixture != "" {
			b, err := io.ReadAll(r.Body)
			require.NoError(t, err)
			assert.JSONEq(t, string(fixture(t, requestFixture)), string(b), "request body of %s %s", method, url)
		}
		return respond(r)
	})
	return ex
}

const basicClientAuth = "Basic Y2xpZW50LWlkOmNsaWVudC1zZWNyZXQ="

func TestCreateCheckoutSendsTheRecordedRequestAndDecodesThePendingSession(t *testing.T) {
	c, mock := newMockClient(t, WithSecretKey("sk_test_abc"))
	ex := recordedExchange(t, mock, http.MethodPost, mockBaseURL+"/v1/payments", "payments/checkout_request.json", 201, "payments/checkout_created.json")

	meta := Metadata{"orderId": "1042"}
	pay, err := c.Payments.CreateCheckout(ctx(), &CheckoutParams{
		Amount: 5000, Currency: "ghs", Description: "Order 1042: two bags of rice",
		Customer:        CheckoutCustomer{Name: "Ama Mensah", Email: "ama.mensah@example.com", Phone: "+233 24 123 4567"},
		Metadata:        meta,
		ClientReference: "order1042",
		ReturnURL:       "https://shop.example.com/orders/1042",
	})
	require.NoError(t, err)
	assert.Equal(t, basicClientAuth, ex.auth, "money endpoints take client credentials even when a secret key is set")
	assert.Equal(t, Metadata{"orderId": "1042"}, meta, "the caller's metadata is not changed")

	assert.Equal(t, "pay_3b9f2c7d1e8a4f60", pay.ID)
	assert.Equal(t, "chk_7Qw2Zp9Lx4", pay.Reference)
	assert.Equal(t, PaymentStatusPending, pay.Status)
	assert.Equal(t, PaymentEnvironmentTest, pay.Environment)
	assert.Equal(t, "https://checkout.billing.test/checkout/chk_7Qw2Zp9Lx4", pay.CheckoutURL)
	assert.Empty(t, pay.Method)
	assert.True(t, pay.PaidAt.IsZero())
	assert.Empty(t, pay.FailureCode)
	assert.Empty(t, pay.Refunds)
	assert.Equal(t, PaymentCustomer{ID: "cust_5c1d", Name: "Ama Mensah", Email: "ama.mensah@example.com", Phone: "233241234567"}, pay.Customer)
	assert.True(t, pay.IsPending())
	assert.False(t, pay.IsFinal())
	assert.False(t, pay.Succeeded())
}

func TestPaymentsGetDecodesEveryCheckoutOutcome(t *testing.T) {
	for name, tc := range map[string]struct {
		fixture string
		check   func(t *testing.T, p *Payment)
	}{
		"mobile money": {"payments/checkout_paid_mobile_money.json", func(t *testing.T, p *Payment) {
			assert.True(t, p.Succeeded())
			assert.True(t, p.IsFinal())
			assert.Equal(t, PaymentMethodMobileMoney, p.Method)
			assert.Equal(t, int64(98), p.Fee)
			assert.Equal(t, int64(4902), p.Net)
			assert.Equal(t, time.Date(2025, 1, 1, 9, 3, 12, 250e6, time.UTC), p.PaidAt)
			assert.Equal(t, MobileMoneyDetail{Network: "MTN", Phone: "233241234567", ExternalRef: "MM2501010903"}, p.MobileMoneyDetail)
			assert.Zero(t, p.CardDetail)
		}},
		"card": {"payments/checkout_paid_card.json", func(t *testing.T, p *Payment) {
			assert.True(t, p.Succeeded())
			assert.Equal(t, PaymentMethodCard, p.Method)
			assert.Equal(t, CardDetail{Brand: "VISA", Last4: "4242"}, p.CardDetail)
			assert.Zero(t, p.Customer, "a null customer")
		}},
		"declined": {"payments/checkout_failed.json", func(t *testing.T, p *Payment) {
			assert.False(t, p.Succeeded())
			assert.True(t, p.IsFinal())
			assert.False(t, p.IsPending())
			assert.Equal(t, PaymentStatusFailed, p.Status)
			assert.Equal(t, "card_declined", p.FailureCode)
			assert.Equal(t, "The card was declined by the issuer", p.FailureMessage)
		}},
	} {
		t.Run(name, func(t *testing.T) {
			c, mock := newMockClient(t)
			ex := recordedExchange(t, mock, http.MethodGet, mockBaseURL+"/v1/payments/chk_1", "", 200, tc.fixture)
			p, err := c.Payments.Get(ctx(), "chk_1")
			require.NoError(t, err)
			assert.Equal(t, basicClientAuth, ex.auth)
			tc.check(t, p)
		})
	}
}

func TestReceiveSendsTheRecordedRequestAndDecodesTheAcceptance(t *testing.T) {
	c, mock := newMockClient(t)
	ex := recordedExchange(t, mock, http.MethodPost, mockBaseURL+"/v1/payments/receive", "payments/receive_request.json", 200, "payments/receive_accepted.json")

	r, err := c.Payments.Receive(ctx(), &ReceiveParams{
		Amount: 2500, Currency: "GHS", Phone: "+233 24 123 4567", Provider: ProviderMTN,
		Description: "Order 1044", CustomerID: "cust_5c1d", Metadata: Metadata{"orderId": "1044"},
		ClientReference: "rcv1044", CallbackURL: "https://shop.example.com/callbacks/momo",
	})
	require.NoError(t, err)
	assert.Equal(t, basicClientAuth, ex.auth)
	assert.Equal(t, &DirectReceive{
		ID: "rcv_6a2f9e1c", Reference: "rcv1044", Status: "PROCESSING", Amount: 2500, Currency: "GHS",
		Phone: "233241234567", Provider: ProviderMTN, Description: "Order 1044",
		CreatedAt: time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC),
	}, r)
}

func TestReceiveStatusReadsTheCodeAsTheTransactionsState(t *testing.T) {
	for name, tc := range map[string]struct {
		fixture                     string
		code                        ResponseCode
		status                      CollectionStatus
		final, succeeded, fulfilled bool
		externalID                  string
		date                        time.Time
	}{
		"pending": {"payments/receive_status_pending.json", CodeAccepted, CollectionStatusUnpaid, false, false, false, "",
			time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)},
		"paid": {"payments/receive_status_paid.json", CodeSuccess, CollectionStatusPaid, true, true, true, "MM2501011200",
			time.Date(2025, 1, 1, 12, 0, 30, 0, time.UTC)},
		"failed": {"payments/receive_status_failed.json", CodeFailed, CollectionStatusUnpaid, true, false, false, "",
			time.Date(2025, 1, 1, 12, 0, 30, 0, time.UTC)},
		"unpaid under 0000 is not paid and not final": {"payments/receive_status_unpaid_success_code.json", CodeSuccess, CollectionStatusUnpaid, false, false, false, "",
			time.Date(2025, 1, 1, 12, 0, 10, 0, time.UTC)},
	} {
		t.Run(name, func(t *testing.T) {
			c, mock := newMockClient(t)
			recordedExchange(t, mock, http.MethodGet, mockBaseURL+"/v1/payments/rcv1044", "", 200, tc.fixture)
			st, err := c.Payments.ReceiveStatus(ctx(), "rcv1044")
			require.NoError(t, err, "a failed transaction is a result of the status check, not an error")
			assert.Equal(t, tc.code, st.ResponseCode)
			assert.NotEmpty(t, st.Message)
			assert.Equal(t, tc.status, st.Status)
			assert.Equal(t, tc.final, st.IsFinal())
			assert.Equal(t, !tc.final, st.IsPending())
			assert.Equal(t, tc.succeeded, st.Succeeded())
			assert.Equal(t, tc.fulfilled, st.IsFulfilled)
			assert.Equal(t, tc.externalID, st.ExternalTransactionID)
			assert.Equal(t, tc.date, st.Date)
			assert.Equal(t, int64(2500), st.Amount)
			assert.Equal(t, int64(25), st.Charges)
			assert.Equal(t, int64(2475), st.AmountAfterCharges)
			assert.Equal(t, "GHS", st.CurrencyCode)
		})
	}
}

func TestStatusChecksAreRetriedAndTheirErrorsTyped(t *testing.T) {
	c, mock := newMockClient(t, WithRetry(3, 0, 0))
	calls := 0
	mock.RegisterResponder(http.MethodGet, mockBaseURL+"/v1/payments/rcv1044", func(r *http.Request) (*http.Response, error) {
		calls++
		if calls == 1 {
			return httpmock.NewStringResponse(503, `{"success":false,"message":"maintenance"}`), nil
		}
		return fixtureResponder(t, 200, "payments/receive_status_paid.json")(r)
	})
	st, err := c.Payments.ReceiveStatus(ctx(), "rcv1044")
	require.NoError(t, err)
	assert.True(t, st.Succeeded())
	assert.Equal(t, 2, calls, "a status check is a read: retried on 5xx")

	mock.RegisterResponder(http.MethodGet, mockBaseURL+"/v1/payments/nosuchref", fixtureResponder(t, 404, "payments/status_not_found.json"))
	_, err = c.Payments.ReceiveStatus(ctx(), "nosuchref")
	assert.ErrorIs(t, err, ErrNotFound)
	_, err = c.Payouts.SendStatus(ctx(), "nosuchref")
	assert.ErrorIs(t, err, ErrNotFound)
	assert.NotErrorIs(t, err, ErrOutcomeUnknown)
}

func TestReceiveDefiniteRefusalsAreAPIErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		status  int
		fixture string
		code    ResponseCode
		is      error
	}{
		"duplicate reference": {200, "payments/receive_duplicate.json", CodeFailed, nil},
		"declined":            {200, "payments/receive_declined.json", CodeDeclined, nil},
		"allowlist":           {403, "errors/ip_not_allowed.json", "ip_not_allowed", ErrIPNotAllowed},
		"scope":               {403, "errors/scope_disabled.json", CodeKeysMismatch, ErrUnauthorized},
	} {
		t.Run(name, func(t *testing.T) {
			c, mock := newMockClient(t)
			recordedExchange(t, mock, http.MethodPost, mockBaseURL+"/v1/payments/receive", "", tc.status, tc.fixture)
			_, err := c.Payments.Receive(ctx(), validReceive())
			var apiErr *APIError
			require.ErrorAs(t, err, &apiErr)
			assert.Equal(t, tc.code, apiErr.Code)
			assert.NotErrorIs(t, err, ErrOutcomeUnknown, "the service said no: nothing moved")
			if tc.is != nil {
				assert.ErrorIs(t, err, tc.is)
			}
		})
	}
}

func validReceive() *ReceiveParams {
	return &ReceiveParams{Amount: 2500, Phone: "233241234567", Provider: ProviderMTN, Description: "Order", ClientReference: "rcv1"}
}

// moneyCalls are the six money movements, each with the route it takes and the client
// reference its params carry.
var moneyCalls = map[string]struct {
	method, url, ref string
	call             func(c *Client) error
}{
	"checkout": {http.MethodPost, mockBaseURL + "/v1/payments", "chk1", func(c *Client) error {
		_, err := c.Payments.CreateCheckout(ctx(), &CheckoutParams{Amount: 100, ClientReference: "chk1"})
		return err
	}},
	"receive": {http.MethodPost, mockBaseURL + "/v1/payments/receive", "rcv1", func(c *Client) error {
		_, err := c.Payments.Receive(ctx(), validReceive())
		return err
	}},
	"send": {http.MethodPost, mockBaseURL + "/v1/payments/send", "snd1", func(c *Client) error {
		_, err := c.Payouts.Send(ctx(), validSend())
		return err
	}},
	"send to bank": {http.MethodPost, mockBaseURL + "/v1/merchants/2020202/send/bank/gh/300302", "bank1", func(c *Client) error {
		_, err := c.Payouts.SendToBank(ctx(), validBankTransfer())
		return err
	}},
	"mandate": {http.MethodPost, mockBaseURL + "/v1/mandates", "mandate1", func(c *Client) error {
		_, err := c.Mandates.Create(ctx(), validMandate())
		return err
	}},
	"direct debit": {http.MethodPost, mockBaseURL + "/v1/payments/direct-debit", "debit1", func(c *Client) error {
		_, err := c.Mandates.Charge(ctx(), validDebit())
		return err
	}},
}

func TestMoneyMovementsAreNeverResentAndAmbiguityIsOutcomeUnknown(t *testing.T) {
	for name, mc := range moneyCalls {
		for failure, responder := range map[string]httpmock.Responder{
			"reset":     httpmock.NewErrorResponder(errors.New("connection reset by peer")),
			"500":       httpmock.NewStringResponder(500, `{"success":false,"message":"internal error"}`),
			"504":       httpmock.NewStringResponder(504, ``),
			"0005":      fixtureResponder(t, 200, "payments/receive_connection_error.json"),
			"malformed": httpmock.NewStringResponder(200, `{"success":true,"data":{"id":`),
		} {
			t.Run(name+"/"+failure, func(t *testing.T) {
				c, mock := newMockClient(t, WithRetry(4, 0, 0), WithDisbursementAccount("2020202"))
				mock.RegisterResponder(mc.method, mc.url, responder)
				err := mc.call(c)
				require.ErrorIs(t, err, ErrOutcomeUnknown)
				var unknown *OutcomeUnknownError
				require.ErrorAs(t, err, &unknown)
				assert.Equal(t, mc.ref, unknown.ClientReference)
				assert.Equal(t, 1, mock.GetTotalCallCount(), "money is never sent twice")
			})
		}
	}
}

func TestMoneyMovementsAreResentWhenSurelyUnsent(t *testing.T) {
	for name, mc := range moneyCalls {
		t.Run(name, func(t *testing.T) {
			c, mock := newMockClient(t, WithRetry(4, 0, 0), WithDisbursementAccount("2020202"))
			mock.RegisterResponder(mc.method, mc.url, httpmock.ResponderFromMultipleResponses([]*http.Response{
				httpmock.NewStringResponse(429, `{"success":false,"message":"slow down"}`),
				httpmock.NewStringResponse(400, `{"success":false,"message":"refused","code":"4000"}`),
			}))
			err := mc.call(c)
			assert.ErrorIs(t, err, ErrInvalidRequest)
			assert.NotErrorIs(t, err, ErrOutcomeUnknown)
			assert.Equal(t, 2, mock.GetTotalCallCount(), "a 429 did no work, so it is sent again")
		})
	}
}

func TestPaymentsValidationSendsNothing(t *testing.T) {
	long := strings.Repeat("é", 256)
	requireRefusedBeforeSending(t, map[string]refusal{
		"checkout nil": {func(c *Client) error { _, err := c.Payments.CreateCheckout(ctx(), nil); return err }, "params"},
		"checkout amount": {func(c *Client) error {
			_, err := c.Payments.CreateCheckout(ctx(), &CheckoutParams{Amount: 0})
			return err
		}, "amount"},
		"checkout negative": {func(c *Client) error {
			_, err := c.Payments.CreateCheckout(ctx(), &CheckoutParams{Amount: -5})
			return err
		}, "amount"},
		"checkout currency": {func(c *Client) error {
			_, err := c.Payments.CreateCheckout(ctx(), &CheckoutParams{Amount: 1, Currency: "cedi"})
			return err
		}, "currency"},
		"checkout description": {func(c *Client) error {
			_, err := c.Payments.CreateCheckout(ctx(), &CheckoutParams{Amount: 1, Description: long})
			return err
		}, "description"},
		"checkout customer name": {func(c *Client) error {
			_, err := c.Payments.CreateCheckout(ctx(), &CheckoutParams{Amount: 1, Customer: CheckoutCustomer{Email: "a@b.co"}})
			return err
		}, "customer.name"},
		"checkout customer email": {func(c *Client) error {
			_, err := c.Payments.CreateCheckout(ctx(), &CheckoutParams{Amount: 1, Customer: CheckoutCustomer{Name: "A", Phone: "233241234567"}})
			return err
		}, "customer.email"},
		"checkout customer phone": {func(c *Client) error {
			_, err := c.Payments.CreateCheckout(ctx(), &CheckoutParams{Amount: 1, Customer: CheckoutCustomer{Name: "A", Email: "a@b.co", Phone: "0241234567"}})
			return err
		}, "customer.phone"},
		"checkout reference": {func(c *Client) error {
			_, err := c.Payments.CreateCheckout(ctx(), &CheckoutParams{Amount: 1, ClientReference: "order.1"})
			return err
		}, "ClientReference"},
		"checkout return url": {func(c *Client) error {
			_, err := c.Payments.CreateCheckout(ctx(), &CheckoutParams{Amount: 1, ReturnURL: "/orders/1"})
			return err
		}, "ReturnURL"},
		"checkout metadata contradicts": {func(c *Client) error {
			_, err := c.Payments.CreateCheckout(ctx(), &CheckoutParams{Amount: 1, ClientReference: "a1", Metadata: Metadata{"clientReference": "b2"}})
			return err
		}, "metadata.clientReference"},
		"checkout nested metadata": {func(c *Client) error {
			_, err := c.Payments.CreateCheckout(ctx(), &CheckoutParams{Amount: 1, Metadata: Metadata{"cart": []string{"rice"}}})
			return err
		}, "metadata.cart"},
		"get reference": {func(c *Client) error { _, err := c.Payments.Get(ctx(), ""); return err }, "reference"},
		"receive nil":   {func(c *Client) error { _, err := c.Payments.Receive(ctx(), nil); return err }, "params"},
		"receive amount": {func(c *Client) error {
			p := validReceive()
			p.Amount = 0
			_, err := c.Payments.Receive(ctx(), p)
			return err
		}, "amount"},
		"receive phone missing": {func(c *Client) error {
			p := validReceive()
			p.Phone = ""
			_, err := c.Payments.Receive(ctx(), p)
			return err
		}, "phone"},
		"receive local phone": {func(c *Client) error {
			p := validReceive()
			p.Phone = "024 123 4567"
			_, err := c.Payments.Receive(ctx(), p)
			return err
		}, "phone"},
		"receive provider missing": {func(c *Client) error {
			p := validReceive()
			p.Provider = ""
			_, err := c.Payments.Receive(ctx(), p)
			return err
		}, "provider"},
		"receive provider unknown": {func(c *Client) error {
			p := validReceive()
			p.Provider = "mtn"
			_, err := c.Payments.Receive(ctx(), p)
			return err
		}, "provider"},
		"receive description": {func(c *Client) error {
			p := validReceive()
			p.Description = " "
			_, err := c.Payments.Receive(ctx(), p)
			return err
		}, "description"},
		"receive reference missing": {func(c *Client) error {
			p := validReceive()
			p.ClientReference = ""
			_, err := c.Payments.Receive(ctx(), p)
			return err
		}, "ClientReference"},
		"receive reference too long": {func(c *Client) error {
			p := validReceive()
			p.ClientReference = "a123456789012345678901234567890123456"
			_, err := c.Payments.Receive(ctx(), p)
			return err
		}, "ClientReference"},
		"receive reference with a dot": {func(c *Client) error {
			p := validReceive()
			p.ClientReference = "rcv.1"
			_, err := c.Payments.Receive(ctx(), p)
			return err
		}, "ClientReference"},
		"receive callback url": {func(c *Client) error {
			p := validReceive()
			p.CallbackURL = "ftp://example.com/cb"
			_, err := c.Payments.Receive(ctx(), p)
			return err
		}, "callbackUrl"},
		"receive description long": {func(c *Client) error {
			p := validReceive()
			p.Description = long
			_, err := c.Payments.Receive(ctx(), p)
			return err
		}, "description"},
		"receive currency": {func(c *Client) error {
			p := validReceive()
			p.Currency = "G1S"
			_, err := c.Payments.Receive(ctx(), p)
			return err
		}, "currency"},
		"receive status reference": {func(c *Client) error { _, err := c.Payments.ReceiveStatus(ctx(), ""); return err }, "clientReference"},
	})

}

func TestReceiveAcceptsEveryProviderAndPhoneForm(t *testing.T) {
	c, mock := newMockClient(t)
	var bodies []map[string]any
	mock.RegisterResponder(http.MethodPost, mockBaseURL+"/v1/payments/receive", func(r *http.Request) (*http.Response, error) {
		bodies = append(bodies, requestBody(t, r))
		return fixtureResponder(t, 200, "payments/receive_accepted.json")(r)
	})
	phones := []string{"233241234567", "+233241234567", "+233 24 123 4567", "00233 24-123-4567"}
	for i, provider := range []Provider{ProviderMTN, ProviderTelecel, ProviderAirtelTigo, ProviderMPESA} {
		p := validReceive()
		p.Provider, p.Phone = provider, phones[i]
		_, err := c.Payments.Receive(ctx(), p)
		require.NoError(t, err, provider)
	}
	require.Len(t, bodies, 4)
	for i, b := range bodies {
		assert.Equal(t, "233241234567", b["phone"])
		assert.Equal(t, map[string]any{"clientReference": "rcv1"}, b["metadata"])
		assert.NotContains(t, b, "callbackUrl", "omitted when not given")
		assert.NotContains(t, b, "currency")
		assert.Equal(t, string([]Provider{ProviderMTN, ProviderTelecel, ProviderAirtelTigo, ProviderMPESA}[i]), b["provider"])
	}
}

// The status checks read their times in both forms, and a time they cannot read is
// the zero time beside a state that is still read.
func TestStatusTimesReadBothFormsAndAnUnreadableOneKeepsTheState(t *testing.T) {
	for literal, want := range map[string]time.Time{
		`"2025-01-01 13:00:00"`:         time.Date(2025, 1, 1, 13, 0, 0, 0, time.UTC),
		`"2025-01-01T13:00:00.5+01:00"`: time.Date(2025, 1, 1, 12, 0, 0, 5e8, time.UTC),
		`"01/01/2025"`:                  {},
		`12345`:                         {},
		`"2025-01-01"`:                  {},
		`null`:                          {},
	} {
		var st SendTransaction
		require.NoError(t, json.Unmarshal([]byte(`{"transactionStatus": "success", "CreatedAt": `+literal+`}`), &st), literal)
		assert.Equal(t, want, st.CreatedAt, literal)
		assert.True(t, st.Succeeded(), literal)
		var rt ReceiveTransaction
		require.NoError(t, json.Unmarshal([]byte(`{"status": "Paid", "date": `+literal+`}`), &rt), literal)
		assert.Equal(t, want, rt.Date, literal)
		assert.True(t, rt.Succeeded(), literal)
	}
}

// BenchmarkSendStatus measures a status check whose timestamp takes the spec's
// "YYYY-MM-DD HH:MM:SS" form.
func BenchmarkSendStatus(b *testing.B) {
	c, mock := newMockClient(b)
	mock.RegisterResponder(http.MethodGet, mockBaseURL+"/v1/payments/refund1040", fixtureResponder(b, 200, "payouts/send_status_success.json"))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Payouts.SendStatus(context.Background(), "refund1040"); err != nil {
			b.Fatal(err)
		}
	}
}

func TestPaymentDecodesTheDataOfBothCheckoutWebhookVariants(t *testing.T) {
	for name, want := range map[string]Payment{
		"payments/checkout_webhook.json": {
			ID: "pay_3b9f2c7d1e8a4f60", Reference: "chk_7Qw2Zp9Lx4", Environment: PaymentEnvironmentTest, Amount: 5000, Fee: 98, Net: 4902,
			Description: "Order 1042: two bags of rice", Metadata: Metadata{"orderId": "1042"},
			Customer:          PaymentCustomer{ID: "cust_5c1d", Name: "Ama Mensah", Email: "ama.mensah@example.com", Phone: "233241234567"},
			MobileMoneyDetail: MobileMoneyDetail{Network: "MTN", Phone: "233241234567", ExternalRef: "MM2501010903"},
			PaidAt:            time.Date(2025, 1, 1, 9, 3, 12, 250e6, time.UTC),
		},
		"payments/checkout_webhook_minimal.json": {
			ID: "pay_8e0a6b4c2d7f1a93", Reference: "chk_K2m8Vr5Tq1", Environment: PaymentEnvironmentLive, Amount: 12000, Fee: 234, Net: 11766,
			Description: "Annual plan", Metadata: Metadata{"orderId": "1050"},
			Customer:          PaymentCustomer{ID: "cust_9a2b", Name: "Yaw Asante", Email: "yaw@example.com", Phone: "233201112223"},
			MobileMoneyDetail: MobileMoneyDetail{Network: "TELECEL", Phone: "233201112223", ExternalRef: "VF2501011000"},
			PaidAt:            time.Date(2025, 1, 1, 10, 0, 5, 0, time.UTC),
		},
	} {
		t.Run(name, func(t *testing.T) {
			var hook struct {
				Event string  `json:"event"`
				Data  Payment `json:"data"`
			}
			require.NoError(t, json.Unmarshal(fixture(t, name), &hook))
			assert.Equal(t, "payment.succeeded", hook.Event)
			want.Status, want.Method, want.Currency = PaymentStatusSucceeded, PaymentMethodMobileMoney, "GHS"
			assert.Equal(t, want, hook.Data)
			assert.True(t, hook.Data.Succeeded())
		})
	}
}

// Every status check refuses a reference no movement can have before a byte is sent: a
// dot or two would turn the path into another endpoint, a slash another resource, and a
// megabyte-long reference (the webhook confirmer passes a callback's reference in) costs
// the service for nothing.
func TestStatusChecksRefuseImpossibleReferences(t *testing.T) {
	bad := map[string]string{
		"dot": ".", "dot dot": "..", "slash": "a/b", "back slash": `a\b`, "percent": "a%2Fb",
		"query": "a?b=c", "space": "a b", "newline": "a\nb", "too long": strings.Repeat("a", 37),
		"a megabyte": strings.Repeat("r", 1<<20), "unicode": "réf",
	}
	cases := map[string]refusal{}
	for name, ref := range bad {
		cases["ReceiveStatus "+name] = refusal{func(c *Client) error { _, err := c.Payments.ReceiveStatus(ctx(), ref); return err }, "clientReference"}
		cases["SendStatus "+name] = refusal{func(c *Client) error { _, err := c.Payouts.SendStatus(ctx(), ref); return err }, "clientReference"}
		cases["ChargeStatus "+name] = refusal{func(c *Client) error { _, err := c.Mandates.ChargeStatus(ctx(), ref); return err }, "clientReference"}
		cases["Mandates.Status "+name] = refusal{func(c *Client) error { _, err := c.Mandates.Status(ctx(), ref); return err }, "clientReferenceId"}
		cases["BankTransferStatus "+name] = refusal{func(c *Client) error {
			_, err := c.Payouts.BankTransferStatus(ctx(), &BankTransferStatusParams{ClientReference: ref})
			return err
		}, "clientReference"}
		cases["BankTransferStatus account "+name] = refusal{func(c *Client) error {
			_, err := c.Payouts.BankTransferStatus(ctx(), &BankTransferStatusParams{ClientReference: "ok1", DisbursementAccount: ref})
			return err
		}, "disbursementAccount"}
		if name != "too long" { // a checkout reference is the service's, and may be longer
			cases["Payments.Get "+name] = refusal{func(c *Client) error { _, err := c.Payments.Get(ctx(), ref); return err }, "reference"}
		}
	}
	cases["Payments.Get too long"] = refusal{func(c *Client) error {
		_, err := c.Payments.Get(ctx(), strings.Repeat("a", 65))
		return err
	}, "reference"}
	requireRefusedBeforeSending(t, cases, WithDisbursementAccount("2020202"))
}

// A clientReference written straight into Metadata is the one sent on the wire, so it
// obeys the rule of the ClientReference field; float metadata must be finite, float32 as
// well as float64, or encoding fails after validation said yes.
func TestRawMetadataIsValidated(t *testing.T) {
	nan32, inf32 := float32(math.NaN()), float32(math.Inf(1))
	requireRefusedBeforeSending(t, map[string]refusal{
		"checkout raw clientReference": {func(c *Client) error {
			_, err := c.Payments.CreateCheckout(ctx(), &CheckoutParams{Amount: 1, Metadata: Metadata{"clientReference": "../../v1/payouts"}})
			return err
		}, "metadata.clientReference"},
		"checkout raw clientReference not a string": {func(c *Client) error {
			_, err := c.Payments.CreateCheckout(ctx(), &CheckoutParams{Amount: 1, Metadata: Metadata{"clientReference": 42}})
			return err
		}, "metadata.clientReference"},
		"checkout float32 NaN": {func(c *Client) error {
			_, err := c.Payments.CreateCheckout(ctx(), &CheckoutParams{Amount: 1, Metadata: Metadata{"ratio": nan32}})
			return err
		}, "metadata.ratio"},
		"receive float32 Inf": {func(c *Client) error {
			_, err := c.Payments.Receive(ctx(), &ReceiveParams{Amount: 1, Phone: "233241234567", Provider: ProviderMTN,
				Description: "x", ClientReference: "r1", Metadata: Metadata{"ratio": inf32}})
			return err
		}, "metadata.ratio"},
	})
}

// Merchants' references on receive and send carry hyphens and underscores, and the
// provider takes them; any other character, or more than 36, is still refused.
func TestReceiveAndSendTakeHyphensAndUnderscoresInTheirReference(t *testing.T) {
	for _, ref := range []string{"ORDER-2291-A", "order_2291", strings.Repeat("a-", 18)} {
		c, mock := newMockClient(t)
		mock.RegisterResponder(http.MethodPost, mockBaseURL+"/v1/payments/receive", fixtureResponder(t, http.StatusOK, "payments/receive_accepted.json"))
		mock.RegisterResponder(http.MethodPost, mockBaseURL+"/v1/payments/send", fixtureResponder(t, http.StatusOK, "payouts/send_accepted.json"))
		_, err := c.Payments.Receive(ctx(), &ReceiveParams{Amount: 500, Phone: "233241234567", Provider: ProviderMTN, Description: "Order", ClientReference: ref})
		require.NoError(t, err, ref)
		_, err = c.Payouts.Send(ctx(), &SendParams{Amount: 500, Phone: "233241234567", Provider: ProviderMTN, Description: "Refund", ClientReference: ref})
		require.NoError(t, err, ref)
		assert.Equal(t, 2, mock.GetTotalCallCount())
	}
	cases := map[string]refusal{}
	for _, ref := range []string{"order.1", "order/1", strings.Repeat("a", 37)} {
		cases["receive "+ref] = refusal{func(c *Client) error {
			_, err := c.Payments.Receive(ctx(), &ReceiveParams{Amount: 500, Phone: "233241234567", Provider: ProviderMTN, Description: "Order", ClientReference: ref})
			return err
		}, "ClientReference"}
		cases["send "+ref] = refusal{func(c *Client) error {
			_, err := c.Payouts.Send(ctx(), &SendParams{Amount: 500, Phone: "233241234567", Provider: ProviderMTN, Description: "Refund", ClientReference: ref})
			return err
		}, "ClientReference"}
	}
	requireRefusedBeforeSending(t, cases)
}
