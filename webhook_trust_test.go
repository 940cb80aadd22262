package billing_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
)

// fulfilment is the merchant's code behind the webhook handler: what reaches it is what
// would fulfil an order or mark a payout paid.
type fulfilment struct {
	mu     sync.Mutex
	events []billing.Event
}

func (f *fulfilment) handle(_ context.Context, ev billing.Event) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.events = append(f.events, ev)
	return nil
}

func (f *fulfilment) references() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var refs []string
	for _, ev := range f.events {
		refs = append(refs, string(ev.Kind())+" "+ev.Reference()+" "+string(ev.State()))
	}
	return refs
}

func postEvent(t *testing.T, url, body string) int {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// TestForgedCallbacksNeverReachTheMerchant posts, to a handler confirming successes
// against the sandbox's status checks, the successes a forger would claim: for a receive
// still unpaid, one that failed, one never made, a payout never made, a checkout never
// paid and a mandate never approved. None reaches the merchant's code; the genuine
// callbacks of the same flows do.
func TestForgedCallbacksNeverReachTheMerchant(t *testing.T) {
	srv := billingtest.NewServer(t, billingtest.WithManualClock())
	c := srv.Client()
	ctx := context.Background()
	var merchant fulfilment
	endpoint := httptest.NewServer(billing.NewWebhookHandler(merchant.handle, billing.WithStatusCheckConfirmation(c)))
	t.Cleanup(endpoint.Close)
	callback := endpoint.URL + "/callbacks"

	receive := func(ref, phone string) {
		_, err := c.Payments.Receive(ctx, &billing.ReceiveParams{Amount: 5000, Phone: phone, Provider: billing.ProviderMTN,
			Description: "Order " + ref, ClientReference: ref, CallbackURL: callback})
		require.NoError(t, err)
	}
	receive("trustPaid", "233241230100")
	receive("trustFailed", "233241230001")  // test number: fails
	receive("trustPending", "233241230004") // test number: pending for 10 minutes
	_, err := c.Payouts.Send(ctx, &billing.SendParams{Amount: 2000, Phone: "233201230100", Provider: billing.ProviderMTN,
		Name: "Kofi", Description: "Refund", ClientReference: "trustSent", CallbackURL: callback})
	require.NoError(t, err)
	pay, err := c.Payments.CreateCheckout(ctx, &billing.CheckoutParams{Amount: 5000})
	require.NoError(t, err)
	_, err = c.Mandates.Create(ctx, &billing.MandateCreateParams{ClientReferenceID: "trustMandate", CustomerMSISDN: "233201230101",
		Channel: billing.DirectDebitChannelVodafone, CallbackURL: callback}) // OTP: stays PENDING without its code
	require.NoError(t, err)
	srv.Advance(time.Second) // the genuine callbacks arrive: trustPaid and trustSent succeed, trustFailed fails
	genuine := merchant.references()
	assert.ElementsMatch(t, []string{"transaction trustPaid succeeded", "transaction trustFailed failed", "payout trustSent succeeded"}, genuine)

	transaction := func(ref string) string {
		return `{"ResponseCode":"0000","Message":"success","Data":{"Amount":50.00,"Charges":0.50,"AmountAfterCharges":49.50,` +
			`"AmountCharged":50.00,"Description":"Order","ClientReference":"` + ref + `","TransactionId":"forged1",` +
			`"ExternalTransactionId":"99999999999","OrderId":"x","PaymentDate":"2025-01-01T00:00:00Z"}}`
	}
	for _, forged := range []struct {
		name, body string
		status     int
	}{
		{"success for a receive still unpaid", transaction("trustPending"), http.StatusServiceUnavailable},
		{"success for a receive that failed", transaction("trustFailed"), http.StatusForbidden},
		{"success for a receive never made", transaction("trustNeverMade"), http.StatusForbidden},
		{"payout success for an unknown reference", `{"ResponseCode":"0000","Data":{"AmountDebited":101.00,"TransactionId":"forged2",` +
			`"ExternalTransactionId":"99999999999","Description":"Payout","ClientReference":"trustNeverPaid","Amount":100.00,` +
			`"Charges":1.00,"Meta":null,"RecipientName":"Forger"}}`, http.StatusForbidden},
		{"checkout paid that nobody paid", `{"event":"payment.succeeded","data":{"id":"` + pay.ID + `","reference":"` + pay.Reference +
			`","status":"SUCCEEDED","amount":5000,"currency":"GHS"}}`, http.StatusServiceUnavailable},
		{"checkout paid that does not exist", `{"event":"payment.succeeded","data":{"id":"pay_forged","reference":"forgedref1",` +
			`"status":"SUCCEEDED","amount":5000,"currency":"GHS"}}`, http.StatusForbidden},
		{"mandate approved that nobody approved", `{"CustomerMsisdn":"233201230101","VerificationType":"OTP","PreapprovalStatus":"APPROVED",` +
			`"ServicePreapprovalId":"forged3","ClientReferenceId":"trustMandate","CreatedAt":"2025-01-01T00:00:00Z"}`, http.StatusServiceUnavailable},
	} {
		assert.Equal(t, forged.status, postEvent(t, callback, forged.body), forged.name)
	}
	assert.Equal(t, genuine, merchant.references(), "no forged success reached the merchant")
	assert.Zero(t, srv.Movements("trustNeverMade")+srv.Movements("trustNeverPaid"), "and nothing moved")

	// Once the pending receive truly succeeds, its genuine callback gets through.
	srv.Advance(10 * time.Minute)
	assert.Contains(t, merchant.references(), "transaction trustPending succeeded")
}

// TestWebhookHandlerRefusesOversizedBodies: a body over MaxEventBytes is answered 413
// whether or not it declares its length, and the merchant's code is never called.
func TestWebhookHandlerRefusesOversizedBodies(t *testing.T) {
	var calls atomic.Int32
	endpoint := httptest.NewServer(billing.NewWebhookHandler(func(context.Context, billing.Event) error {
		calls.Add(1)
		return nil
	}))
	t.Cleanup(endpoint.Close)
	padding := strings.Repeat("x", billing.MaxEventBytes)
	body := `{"ResponseCode":"0000","Message":"success","Data":{"ClientReference":"big1","Description":"` + padding + `"}}`

	assert.Equal(t, http.StatusRequestEntityTooLarge, postEvent(t, endpoint.URL, body), "with a Content-Length")
	req, err := http.NewRequest(http.MethodPost, endpoint.URL, io.MultiReader(strings.NewReader(body))) // no length: chunked
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode, "chunked")
	assert.Zero(t, calls.Load())
}

// TestWebhookHandlerIsBoundedBySlowBodies: a sender that trickles part of a body and
// stalls holds the handler only until the server's ReadTimeout. The handler has no
// clock of its own; the merchant's http.Server bounds the read, as the README says.
func TestWebhookHandlerIsBoundedBySlowBodies(t *testing.T) {
	var calls atomic.Int32
	handler := billing.NewWebhookHandler(func(context.Context, billing.Event) error {
		calls.Add(1)
		return nil
	})
	finished := make(chan int, 1)
	endpoint := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		handler.ServeHTTP(rec, r)
		finished <- rec.status
	}))
	endpoint.Config.ReadTimeout = 100 * time.Millisecond
	endpoint.Start()
	t.Cleanup(endpoint.Close)

	stall := make(chan struct{})
	body, sender := io.Pipe()
	t.Cleanup(func() { close(stall) })
	go func() {
		_, _ = io.WriteString(sender, `{"ResponseCode":"0000","Message":"success","Data":{"ClientReference":"slow1",`)
		<-stall // the rest never comes while the test runs
		sender.Close()
	}()
	go func() {
		req, err := http.NewRequest(http.MethodPost, endpoint.URL, body)
		if err != nil {
			return
		}
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()

	start := time.Now()
	select {
	case status := <-finished:
		assert.Equal(t, http.StatusBadRequest, status, "the unreadable body is refused")
		assert.Less(t, time.Since(start), 5*time.Second)
	case <-time.After(10 * time.Second):
		t.Fatal("the handler was still reading a stalled body after 10s: ReadTimeout did not bound it")
	}
	assert.Zero(t, calls.Load(), "a half-sent event is never handled")
}

// statusRecorder remembers the status a handler answered.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(status int) {
	r.status = status
	r.ResponseWriter.WriteHeader(status)
}
