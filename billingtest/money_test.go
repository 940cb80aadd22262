package billingtest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/internal/sandbox"
)

// field digs a value out of a decoded body by keys.
func field(body map[string]any, path ...string) any {
	var v any = body
	for _, key := range path {
		v = v.(map[string]any)[key]
	}
	return v
}

func TestCompleteCheckout(t *testing.T) {
	s := NewServer(t)
	status, body := call(t, s, http.MethodPost, "/v1/payments", `{"amount":5000,"customer":{"name":"Ada","email":"ada@example.com","phone":"233241234567"}}`)
	require.Equal(t, http.StatusCreated, status, body)
	reference := field(body, "data", "reference").(string)
	assert.Equal(t, s.URL+"/checkout/"+reference, field(body, "data", "checkoutUrl"))

	require.NoError(t, s.CompleteCheckout(reference, "MOBILE_MONEY", "succeeded"))
	status, body = call(t, s, http.MethodGet, "/v1/payments/"+reference, "")
	require.Equal(t, http.StatusOK, status, body)
	assert.Equal(t, "SUCCEEDED", field(body, "data", "status"))
	assert.Equal(t, "MOBILE_MONEY", field(body, "data", "method"))
	assert.Equal(t, float64(98), field(body, "data", "fee"))
	assert.Equal(t, "233241234567", field(body, "data", "mobileMoneyDetail", "phone"))

	assert.ErrorContains(t, s.CompleteCheckout(reference, "CARD", "failed"), "only a PENDING session")
	assert.ErrorContains(t, s.CompleteCheckout("nope", "CARD", "failed"), "not found")
	assert.ErrorContains(t, s.CompleteCheckout(reference, "CASH", "failed"), "method")
	assert.Equal(t, 1, s.Movements(reference))
}

func TestSMSGivesTheMandateOTP(t *testing.T) {
	s := NewServer(t)
	status, body := call(t, s, http.MethodPost, "/v1/mandates",
		`{"clientReferenceId":"m1","customerMsisdn":"233201230000","channel":"vodafone-gh-direct-debit","callbackUrl":"http://127.0.0.1:1/cb"}`)
	require.Equal(t, http.StatusOK, status, body)
	prefix := field(body, "data", "otpPrefix").(string)
	sms := s.SMS("+233201230000")
	require.Len(t, sms, 1)
	assert.Regexp(t, "^"+regexp.QuoteMeta(prefix)+"-[0-9]{4}$", sms[0])
	assert.Empty(t, s.SMS("233201239999"))
}

func TestMovementsAndDisbursementBalance(t *testing.T) {
	s := NewServer(t, WithManualClock(), WithDisbursementBalance(20_000))
	assert.Equal(t, int64(20_000), s.DisbursementBalance())
	send := `{"amount":10000,"phone":"233201234567","provider":"MTN","name":"Kofi","description":"Refund","metadata":{"clientReference":"pay1"}}`
	status, body := call(t, s, http.MethodPost, "/v1/payments/send", send)
	require.Equal(t, http.StatusOK, status, body)
	assert.Equal(t, int64(9_900), s.DisbursementBalance(), "amount plus the 1% fee")
	assert.Equal(t, 1, s.Movements("pay1"))

	status, body = call(t, s, http.MethodPost, "/v1/payments/send", send)
	require.Equal(t, http.StatusOK, status, body)
	assert.Equal(t, "2001", body["responseCode"], "a reused reference")
	assert.Equal(t, 1, s.Movements("pay1"), "moved nothing")
	assert.Equal(t, int64(9_900), s.DisbursementBalance())
	assert.Zero(t, s.Movements("never"))

	s.Advance(0)
	status, body = call(t, s, http.MethodGet, "/v1/payments/pay1", "")
	require.Equal(t, http.StatusOK, status, body)
	assert.Equal(t, "success", field(body, "data", "transactionStatus"))
}

func TestDeliveries(t *testing.T) {
	var mu sync.Mutex
	var got []string
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		got = append(got, string(b))
		if len(got) == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer receiver.Close()
	s := NewServer(t, WithManualClock())
	status, body := call(t, s, http.MethodPost, "/v1/payments/receive",
		`{"amount":5000,"phone":"233241234567","provider":"MTN","description":"d","callbackUrl":"`+receiver.URL+`","metadata":{"clientReference":"r1"}}`)
	require.Equal(t, http.StatusOK, status, body)
	assert.Empty(t, s.Deliveries(), "nothing before the clock moves")

	s.Advance(0)
	s.Advance(30 * time.Second) // the first redelivery
	deliveries := s.Deliveries()
	require.Len(t, deliveries, 2)
	assert.Equal(t, []int{1, 2}, []int{deliveries[0].Attempt, deliveries[1].Attempt})
	assert.Equal(t, []int{http.StatusServiceUnavailable, http.StatusOK}, []int{deliveries[0].Status, deliveries[1].Status})
	assert.Equal(t, receiver.URL, deliveries[0].URL)
	assert.Equal(t, s.Now(), deliveries[1].At)
	var callback struct {
		ResponseCode string
		Data         struct{ ClientReference string }
	}
	require.NoError(t, json.Unmarshal(deliveries[0].Body, &callback))
	assert.Equal(t, "0000", callback.ResponseCode)
	assert.Equal(t, "r1", callback.Data.ClientReference)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, got[0], string(deliveries[0].Body), "the body as posted")
}

func TestInjectFault(t *testing.T) {
	s := NewServer(t)
	s.InjectFault(Fault{Route: "POST /v1/payments/receive", Nth: 1, Kind: FaultResponseLost})
	req, err := http.NewRequest(http.MethodPost, s.URL+"/v1/payments/receive",
		strings.NewReader(`{"amount":5000,"phone":"233241234567","provider":"MTN","description":"d","metadata":{"clientReference":"lost1"}}`))
	require.NoError(t, err)
	req.SetBasicAuth(s.ClientID, s.ClientSecret)
	_, err = http.DefaultClient.Do(req)
	assert.ErrorIs(t, err, syscall.ECONNRESET)
	assert.Equal(t, 1, s.Movements("lost1"), "the work was done before the connection was reset")

	s.InjectFault(Fault{Route: "POST /v1/payments/send", Kind: FaultResetBeforeWork})
	status, body := call(t, s, http.MethodPost, "/v1/payments/receive",
		`{"amount":5000,"phone":"233241234567","provider":"MTN","description":"d","metadata":{"clientReference":"ok1"}}`)
	assert.Equal(t, http.StatusOK, status, "a fault on another route: %v", body)

	assert.PanicsWithValue(t, `billingtest: sandbox: no route "POST /v1/nowhere"; a fault names a route pattern such as "POST /v1/payments/receive"`, func() {
		s.InjectFault(Fault{Route: "POST /v1/nowhere", Kind: FaultResponseLost})
	})
	assert.Panics(t, func() { s.InjectFault(Fault{Route: "POST /v1/payments", Kind: "lose"}) })
	assert.Panics(t, func() { s.InjectFault(Fault{Route: "POST /v1/payments", Kind: FaultHTTP429, RetryAfter: -time.Second}) })
	assert.Equal(t, FaultKind(sandbox.FaultResponseLost), FaultResponseLost)
}

func TestInjectFaultOfEveryKindThroughTheSDK(t *testing.T) {
	s := NewServer(t)
	c := s.Client(billing.WithRetry(1, 0, 0))
	ctx := context.Background()
	receive := func(ref string) error {
		_, err := c.Payments.Receive(ctx, &billing.ReceiveParams{
			Amount: 1000, Phone: "233241234567", Provider: billing.ProviderMTN, Description: "Order", ClientReference: ref,
		})
		return err
	}
	for i, kind := range []FaultKind{FaultHTTP500, FaultHTTP502, FaultHTTP503, FaultResetBeforeWork} {
		s.InjectFault(Fault{Route: "POST /v1/payments/receive", Kind: kind})
		ref := fmt.Sprintf("before%d", i)
		require.ErrorIs(t, receive(ref), billing.ErrOutcomeUnknown, kind)
		assert.Zero(t, s.Movements(ref), "%s comes before the work", kind)
	}
	for i, kind := range []FaultKind{FaultResponseLost, FaultTruncatedBody, FaultMalformedJSON, FaultCode0005} {
		s.InjectFault(Fault{Route: "POST /v1/payments/receive", Kind: kind})
		ref := fmt.Sprintf("after%d", i)
		require.ErrorIs(t, receive(ref), billing.ErrOutcomeUnknown, kind)
		assert.Equal(t, 1, s.Movements(ref), "%s comes after the work", kind)
	}
	s.InjectFault(Fault{Route: "POST /v1/payments/receive", Kind: FaultLatency, Latency: 10 * time.Millisecond})
	require.NoError(t, receive("slow1"))
	assert.Equal(t, 9, s.FaultsFired())

	records := s.MovementRecords("slow1")
	require.Len(t, records, 1)
	assert.Equal(t, "receive", records[0].Kind)
	assert.Equal(t, "slow1", records[0].ClientReference)
	assert.Equal(t, int64(1000), records[0].Amount)
	assert.Equal(t, int64(10), records[0].Fee)
	assert.NotEmpty(t, records[0].TransactionID)
	assert.Contains(t, []string{"pending", "succeeded"}, records[0].State)
	assert.Empty(t, s.MovementRecords("nobody"))
}
