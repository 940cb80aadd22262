package billing

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func parseFixture(t *testing.T, name string) Event {
	t.Helper()
	ev, err := ParseEvent(fixture(t, "events/"+name))
	require.NoError(t, err)
	return ev
}

func TestParseEventRecognisesEveryShape(t *testing.T) {
	tests := []struct {
		fixture   string
		kind      EventKind
		reference string
		state     EventState
		code      ResponseCode
	}{
		{"payment_succeeded.json", EventKindPaymentSucceeded, "ref_7Q2K9XW4LM", EventSucceeded, ""},
		{"payment_succeeded_minimal.json", EventKindPaymentSucceeded, "ref_B3N8Q1ZT6P", EventSucceeded, ""},
		{"subscription_trial.json", EventKindSubscriptionTrial, "sub_3c4d5e6f7a8b9c0d1e2f3a4b", EventSucceeded, ""},
		{"transaction_success.json", EventKindTransaction, "order1042", EventSucceeded, CodeSuccess},
		{"transaction_failed.json", EventKindTransaction, "order1043", EventFailed, CodeFailed},
		{"direct_debit_success.json", EventKindTransaction, "debitMarch2025", EventSucceeded, CodeSuccess},
		{"direct_debit_callback_url_spelling.json", EventKindTransaction, "debitApril2025", EventSucceeded, CodeSuccess},
		{"send_success.json", EventKindPayout, "refund1042", EventSucceeded, CodeSuccess},
		{"send_failed_2001.json", EventKindPayout, "payout2001", EventFailed, CodeFailed},
		{"send_failed_4075.json", EventKindPayout, "payout4075", EventFailed, CodeInsufficientBalance},
		{"send_to_bank_success.json", EventKindPayout, "supplier88", EventSucceeded, CodeSuccess},
		{"send_to_bank_failed_2001.json", EventKindPayout, "supplier89", EventFailed, CodeFailed},
		{"mandate_approved.json", EventKindMandate, "mandate2025ama", EventSucceeded, ""},
		{"mandate_active.json", EventKindMandate, "mandate2025kofi", EventSucceeded, ""},
	}
	entries, err := os.ReadDir(filepath.Join("testdata", "events"))
	require.NoError(t, err)
	require.Len(t, tests, len(entries), "every fixture of testdata/events has a row")
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			ev := parseFixture(t, tt.fixture)
			assert.Equal(t, tt.kind, ev.Kind())
			assert.Equal(t, tt.reference, ev.Reference())
			assert.Equal(t, tt.state, ev.State())
			assert.Equal(t, tt.code, ev.Code())
		})
	}
}

// The fixtures the resource groups recorded of their own callbacks and webhooks parse
// too, each as the shape it is.
func TestParseEventReadsTheCallbackFixturesOfEveryResourceGroup(t *testing.T) {
	for name, kind := range map[string]EventKind{
		"payments/checkout_webhook.json":                  EventKindPaymentSucceeded,
		"payments/checkout_webhook_minimal.json":          EventKindPaymentSucceeded,
		"payments/transaction_callback_success.json":      EventKindTransaction,
		"payments/transaction_callback_failed.json":       EventKindTransaction,
		"mandates/debit_callback_success.json":            EventKindTransaction,
		"mandates/mandate_callback.json":                  EventKindMandate,
		"payouts/send_callback_success.json":              EventKindPayout,
		"payouts/send_callback_insufficient_balance.json": EventKindPayout,
		"payouts/bank_callback_success.json":              EventKindPayout,
		"payouts/bank_callback_name_check_failed.json":    EventKindPayout,
		"subscriptions/trial_event.json":                  EventKindSubscriptionTrial,
	} {
		ev, err := ParseEvent(fixture(t, name))
		if assert.NoError(t, err, name) {
			assert.Equal(t, kind, ev.Kind(), name)
			assert.NotEmpty(t, ev.Reference(), name)
		}
	}
}

func TestParseEventCheckoutVariants(t *testing.T) {
	full := parseFixture(t, "payment_succeeded.json").(*CheckoutEvent)
	assert.Equal(t, "evt_5f0c1a2b3c4d5e6f7a8b9c0d", full.ID)
	assert.Equal(t, PaymentEnvironmentTest, full.Environment)
	assert.Equal(t, PaymentMethodMobileMoney, full.Data.Method)
	assert.Equal(t, time.Date(2025, 1, 1, 10, 15, 30, 0, time.UTC), full.CreatedAt)
	assert.Equal(t, int64(5000), full.Data.Amount, "checkout amounts are integer minor units")
	assert.Equal(t, int64(98), full.Data.Fee)
	assert.Equal(t, int64(4902), full.Data.Net)
	assert.Equal(t, "GHS", full.Data.Currency)
	assert.Equal(t, "Ama Mensah", full.Data.Customer.Name)
	assert.Equal(t, "51234567890", full.Data.MobileMoneyDetail.ExternalRef)
	assert.Equal(t, "1042", full.Data.Metadata["orderId"])
	assert.Equal(t, time.Date(2025, 1, 1, 10, 15, 29, 412_000_000, time.UTC), full.Data.PaidAt)

	minimal := parseFixture(t, "payment_succeeded_minimal.json").(*CheckoutEvent)
	assert.Empty(t, minimal.ID)
	assert.Empty(t, minimal.Environment)
	assert.True(t, minimal.CreatedAt.IsZero())
	assert.Equal(t, int64(12000), minimal.Data.Amount)
	assert.Equal(t, "TELECEL", minimal.Data.MobileMoneyDetail.Network)
}

func TestParseEventCallbackDetails(t *testing.T) {
	ok := parseFixture(t, "transaction_success.json").(*TransactionCallback)
	assert.Equal(t, "success", ok.Message)
	assert.Equal(t, DecimalAmount(5000), ok.Data.Amount, "callback amounts are decimals in major units")
	assert.Equal(t, DecimalAmount(50), ok.Data.Charges)
	assert.Equal(t, DecimalAmount(4950), ok.Data.AmountAfterCharges)
	assert.Equal(t, "51234567890", ok.Data.ExternalTransactionID)
	assert.Equal(t, "7fd01221faeb41469e4b0d1d1c6e5c3e", ok.Data.TransactionID)

	failed := parseFixture(t, "transaction_failed.json").(*TransactionCallback)
	assert.Zero(t, failed.Data.Amount, "a failure callback may carry Amount 0")
	assert.Empty(t, failed.Data.ExternalTransactionID)

	debit := parseFixture(t, "direct_debit_success.json").(*TransactionCallback)
	assert.Equal(t, DecimalAmount(5050), debit.Data.Amount, "50.5")
	assert.Equal(t, DecimalAmount(100), debit.Data.Charges, "1")
	quoted := parseFixture(t, "direct_debit_callback_url_spelling.json").(*TransactionCallback)
	assert.Equal(t, DecimalAmount(7500), quoted.Data.Amount, `"75.00"`)

	insufficient := parseFixture(t, "send_failed_4075.json").(*PayoutCallback)
	assert.Empty(t, insufficient.Data.ExternalTransactionID, "null")
	assert.Empty(t, insufficient.Data.RecipientName, "null")
	assert.Equal(t, DecimalAmount(250000), insufficient.Data.Amount)
	assert.Equal(t, "null", string(insufficient.Data.Meta))

	bank := parseFixture(t, "send_to_bank_success.json").(*PayoutCallback)
	assert.Equal(t, DecimalAmount(100100), bank.Data.AmountDebited)
	assert.Equal(t, "KOFI BOATENG", bank.Data.RecipientName)
	assert.JSONEq(t, `{"BankCode":"300302","Channel":"gip-gh"}`, string(bank.Data.Meta))

	mandate := parseFixture(t, "mandate_approved.json").(*MandateCallback)
	assert.Equal(t, "233241234567", mandate.CustomerMsisdn)
	assert.Equal(t, VerificationTypeUSSD, mandate.VerificationType)
	assert.Equal(t, "b7a3c1d2e4f5061728394a5b6c7d8e9f", mandate.ServicePreapprovalID)

	trial := parseFixture(t, "subscription_trial.json").(*SubscriptionTrialEvent)
	assert.Equal(t, "evt_0d9c8b7a6f5e4d3c2b1a0f9e", trial.ID)
	assert.Equal(t, "cust_0a1b2c3d4e5f6a7b8c9d0e1f", trial.Data.CustomerID)
	assert.Equal(t, SubscriptionStatusTrialing, trial.Data.Status)
	assert.Equal(t, time.Date(2025, 1, 15, 0, 0, 0, 0, time.UTC), trial.Data.TrialEnd)
}

func TestParseEventStates(t *testing.T) {
	pending := `{"ResponseCode":"0001","Message":"pending","Data":{"ClientReference":"r1","Amount":5}}`
	ev, err := ParseEvent([]byte(pending))
	require.NoError(t, err)
	assert.Equal(t, EventPending, ev.State())

	for status, want := range map[string]EventState{
		"APPROVED": EventSucceeded, "ACTIVE": EventSucceeded, "PENDING": EventPending, "CANCELLED": EventFailed,
	} {
		ev, err := ParseEvent([]byte(`{"PreapprovalStatus":"` + status + `","ClientReferenceId":"m1"}`))
		require.NoError(t, err)
		assert.Equal(t, want, ev.State(), status)
	}
	for status, want := range map[string]EventState{"SUCCEEDED": EventSucceeded, "FAILED": EventFailed, "PENDING": EventPending} {
		ev, err := ParseEvent([]byte(`{"event":"payment.succeeded","data":{"reference":"p1","status":"` + status + `"}}`))
		require.NoError(t, err)
		assert.Equal(t, want, ev.State(), status)
	}
}

func TestParseEventKeysMatchWithoutRegardToCase(t *testing.T) {
	ev, err := ParseEvent([]byte(`{"responseCode":"0000","data":{"clientReference":"lower1","amountAfterCharges":"1.00"}}`))
	require.NoError(t, err)
	assert.Equal(t, EventKindTransaction, ev.Kind())
	assert.Equal(t, "lower1", ev.Reference())
}

func TestParseEventRefusesWhatIsNotAnEvent(t *testing.T) {
	for name, body := range map[string]string{
		"empty":                 ``,
		"not JSON":              `hello`,
		"an array":              `[{"ResponseCode":"0000"}]`,
		"a string":              `"payment.succeeded"`,
		"an empty object":       `{}`,
		"truncated":             `{"ResponseCode":"0000","Data":{"ClientReference":"r1"`,
		"trailing garbage":      `{"ResponseCode":"0000","Message":"success","Data":{"ClientReference":"r1"}} x`,
		"unknown event":         `{"event":"invoice.paid","data":{"id":"inv_1"}}`,
		"event not a string":    `{"event":42,"data":{}}`,
		"no reference":          `{"ResponseCode":"0000","Message":"success","Data":{"Amount":1}}`,
		"no response code":      `{"ResponseCode":"","Message":"success","Data":{"ClientReference":"r1"}}`,
		"checkout no reference": `{"event":"payment.succeeded","data":{"id":"pay_1","status":"SUCCEEDED"}}`,
		"trial no subscription": `{"event":"customer.subscription.trial","data":null}`,
		"mandate no reference":  `{"PreapprovalStatus":"APPROVED"}`,
		"neither shape":         `{"ResponseCode":"0000","Data":{"ClientReference":"r1"}}`,
		"both shapes":           `{"ResponseCode":"0000","Data":{"ClientReference":"r1","AmountDebited":1,"AmountCharged":1}}`,
		"data not an object":    `{"ResponseCode":"0000","Message":"success","Data":"x"}`,
	} {
		t.Run(name, func(t *testing.T) {
			ev, err := ParseEvent([]byte(body))
			assert.Nil(t, ev)
			assert.ErrorIs(t, err, ErrInvalidEvent)
		})
	}
}

func FuzzParseEvent(f *testing.F) {
	entries, err := os.ReadDir(filepath.Join("testdata", "events"))
	if err != nil {
		f.Fatal(err)
	}
	for _, e := range entries {
		f.Add(fixture(f, "events/"+e.Name()))
	}
	for _, body := range providerFixtures(f) {
		f.Add(body) // the provider's callbacks, its checkout webhook, and bodies that are no event
	}
	f.Add([]byte(`{"event":"payment.succeeded","data":{"reference":"r","status":"SUCCEEDED"}}`))
	f.Add([]byte(`{"ResponseCode":"0000","Data":{"ClientReference":"r","AmountDebited":"1.5"}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		ev, err := ParseEvent(body)
		if err != nil {
			if ev != nil {
				t.Fatalf("an event with an error: %v", err)
			}
			if !errors.Is(err, ErrInvalidEvent) {
				t.Fatalf("error %v does not match ErrInvalidEvent", err)
			}
			return
		}
		if ev.Reference() == "" {
			t.Fatalf("%s without a reference from %q", ev.Kind(), body)
		}
		if !json.Valid(body) {
			t.Fatalf("an event from invalid JSON %q", body)
		}
		switch ev.State() {
		case EventSucceeded, EventFailed, EventPending:
		default:
			t.Fatalf("state %q", ev.State())
		}
	})
}

// BenchmarkParseEvent measures ParseEvent beside a bare json.Unmarshal of the same body
// into its right type: the floor a hand-written receiver that already knew the shape
// would pay.
func BenchmarkParseEvent(b *testing.B) {
	for _, tt := range []struct {
		fixture string
		into    func() any
	}{
		{"payment_succeeded.json", func() any { return new(CheckoutEvent) }},
		{"transaction_success.json", func() any { return new(TransactionCallback) }},
		{"send_to_bank_success.json", func() any { return new(PayoutCallback) }},
		{"mandate_approved.json", func() any { return new(MandateCallback) }},
	} {
		body := fixture(b, "events/"+tt.fixture)
		name := strings.TrimSuffix(tt.fixture, ".json")
		b.Run(name+"/impl=sdk", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if _, err := ParseEvent(body); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/impl=raw", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if err := json.Unmarshal(body, tt.into()); err != nil {
					b.Fatal(err)
				}
			}
		})
		// The two interleaved in small batches, so that a busy machine slows both alike:
		// x-unmarshal is ParseEvent's time over json.Unmarshal's (the goal: at most 1.5).
		b.Run(name+"/ratio", func(b *testing.B) {
			var parse, unmarshal time.Duration
			for b.Loop() {
				start := time.Now()
				for range 20 {
					_, _ = ParseEvent(body)
				}
				mid := time.Now()
				for range 20 {
					_ = json.Unmarshal(body, tt.into())
				}
				parse, unmarshal = parse+mid.Sub(start), unmarshal+time.Since(mid)
			}
			b.ReportMetric(float64(parse)/float64(unmarshal), "x-unmarshal")
		})
	}
}

// webhookRecorder is a handler function that records the events it is given and fails
// while fail is set.
type webhookRecorder struct {
	calls atomic.Int64
	fail  atomic.Bool
	mu    sync.Mutex
	event Event
}

func (r *webhookRecorder) last() Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.event
}

func (r *webhookRecorder) handle(_ context.Context, ev Event) error {
	r.calls.Add(1)
	r.mu.Lock()
	r.event = ev
	r.mu.Unlock()
	if r.fail.Load() {
		return errors.New("the order database is down")
	}
	return nil
}

func post(t *testing.T, h http.Handler, body []byte) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/webhooks", strings.NewReader(string(body))))
	return rec
}

func TestWebhookHandlerStatusCodes(t *testing.T) {
	var rec webhookRecorder
	h := NewWebhookHandler(rec.handle)

	for _, method := range []string{http.MethodGet, http.MethodPut, http.MethodDelete} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(method, "/webhooks", nil))
		assert.Equal(t, http.StatusMethodNotAllowed, w.Code, method)
		assert.Equal(t, http.MethodPost, w.Header().Get("Allow"))
	}

	tooLarge := fmt.Sprintf(`{"ResponseCode":"0000","Message":"success","Data":{"ClientReference":"r1","Description":%q}}`,
		strings.Repeat("x", MaxEventBytes))
	assert.Equal(t, http.StatusRequestEntityTooLarge, post(t, h, []byte(tooLarge)).Code)

	assert.Equal(t, http.StatusBadRequest, post(t, h, []byte(`{"hello":"world"}`)).Code)
	assert.Equal(t, http.StatusBadRequest, post(t, h, []byte(`not json`)).Code)
	assert.Zero(t, rec.calls.Load(), "nothing unparsable reaches the function")

	w := post(t, h, fixture(t, "events/transaction_success.json"))
	assert.Equal(t, http.StatusOK, w.Code)
	assert.JSONEq(t, `{"received":true}`, w.Body.String())
	require.EqualValues(t, 1, rec.calls.Load())
	assert.Equal(t, "order1042", rec.last().(*TransactionCallback).Reference())

	rec.fail.Store(true)
	assert.Equal(t, http.StatusInternalServerError, post(t, h, fixture(t, "events/send_success.json")).Code,
		"a failing function makes the sender deliver again")
	assert.EqualValues(t, 2, rec.calls.Load())
}

func TestWebhookHandlerAcceptsABodyOfExactlyTheLimit(t *testing.T) {
	var rec webhookRecorder
	h := NewWebhookHandler(rec.handle)
	body := `{"ResponseCode":"0000","Message":"success","Data":{"ClientReference":"r1","Description":""}}`
	pad := MaxEventBytes - len(body)
	body = strings.Replace(body, `"Description":""`, `"Description":"`+strings.Repeat("y", pad)+`"`, 1)
	require.Len(t, body, MaxEventBytes)
	assert.Equal(t, http.StatusOK, post(t, h, []byte(body)).Code)
}

func TestWebhookHandlerWithoutDedupeHandlesRedeliveries(t *testing.T) {
	var rec webhookRecorder
	h := NewWebhookHandler(rec.handle)
	body := fixture(t, "events/transaction_success.json")
	post(t, h, body)
	post(t, h, body)
	assert.EqualValues(t, 2, rec.calls.Load())
}

func TestWebhookHandlerDedupe(t *testing.T) {
	var rec webhookRecorder
	h := NewWebhookHandler(rec.handle, WithDedupe(2))
	pending := []byte(`{"ResponseCode":"0001","Message":"pending","Data":{"ClientReference":"r1","PaymentDate":"x"}}`)
	success := []byte(`{"ResponseCode":"0000","Message":"success","Data":{"ClientReference":"r1","PaymentDate":"x"}}`)

	assert.Equal(t, http.StatusOK, post(t, h, pending).Code)
	assert.Equal(t, http.StatusOK, post(t, h, pending).Code)
	assert.EqualValues(t, 1, rec.calls.Load(), "the redelivery is answered without calling the function")

	assert.Equal(t, http.StatusOK, post(t, h, success).Code)
	assert.EqualValues(t, 2, rec.calls.Load(), "a later different state of the same reference is not swallowed")
	assert.Equal(t, EventSucceeded, rec.last().State())

	// A failed handling is forgotten, so its redelivery is handled.
	rec.fail.Store(true)
	other := fixture(t, "events/send_success.json")
	assert.Equal(t, http.StatusInternalServerError, post(t, h, other).Code)
	rec.fail.Store(false)
	assert.Equal(t, http.StatusOK, post(t, h, other).Code)
	assert.EqualValues(t, 4, rec.calls.Load())

	// Bounded: with room for two, the oldest (pending r1) has been forgotten.
	assert.Equal(t, http.StatusOK, post(t, h, pending).Code)
	assert.EqualValues(t, 5, rec.calls.Load())
}

func TestSeenSetStaysBounded(t *testing.T) {
	s := newSeenSet(100)
	handle := func(key string, handled bool) seenState {
		st := s.begin(key)
		if st == seenNew {
			s.end(key, handled)
		}
		return st
	}
	for i := range 10_000 {
		require.Equal(t, seenNew, handle(fmt.Sprint(i), true))
	}
	assert.Len(t, s.keys, 100)
	assert.Empty(t, s.inFlight)
	assert.Equal(t, seenHandled, handle("9999", true))
	assert.Equal(t, seenNew, handle("0", false), "the oldest was forgotten")
	assert.Equal(t, seenNew, handle("0", true), "a failed handling is not remembered")
	assert.Equal(t, seenHandled, handle("0", true))
	assert.LessOrEqual(t, len(s.keys), 100)
}

// confirmingHandler returns a handler that confirms successes through a mock client, with
// its recorder, mock and log.
func confirmingHandler(t *testing.T, opts ...WebhookOption) (http.Handler, *webhookRecorder, *httpmock.MockTransport, *bytes.Buffer) {
	t.Helper()
	c, mock := newMockClient(t, WithDisbursementAccount("2020202"))
	knowsNothingElse(t, mock)
	var rec webhookRecorder
	var logs bytes.Buffer
	opts = append([]WebhookOption{WithStatusCheckConfirmation(c), WithWebhookLogger(slog.New(slog.NewTextHandler(&logs, nil)))}, opts...)
	return NewWebhookHandler(rec.handle, opts...), &rec, mock, &logs
}

func TestStatusCheckConfirmationRefusesAForgedSuccess(t *testing.T) {
	h, rec, mock, logs := confirmingHandler(t)
	mock.RegisterResponder(http.MethodGet, mockBaseURL+"/v1/payments/rcv1044", fixtureResponder(t, http.StatusOK, "payments/receive_status_pending.json"))
	forged := []byte(`{"ResponseCode":"0000","Message":"success","Data":{"ClientReference":"rcv1044","Amount":25.00,"TransactionId":"fake","PaymentDate":"x"}}`)

	w := post(t, h, forged)
	assert.Equal(t, http.StatusServiceUnavailable, w.Code, "the receive is unpaid: not now, maybe later")
	assert.Equal(t, "60", w.Header().Get("Retry-After"))
	assert.Contains(t, logs.String(), "still pending", "the reason is logged, not told to the sender")
	assert.Zero(t, rec.calls.Load(), "a forged success never reaches the function")
	assert.Contains(t, logs.String(), "billing webhook claiming success refused")
	assert.Contains(t, logs.String(), "reference=rcv1044")

	// Once the status check says failed, the claim is contradicted.
	mock.RegisterResponder(http.MethodGet, mockBaseURL+"/v1/payments/rcv1044", fixtureAbout(t, http.StatusOK, "payments/receive_status_failed.json", "rcv1044"))
	assert.Equal(t, http.StatusForbidden, post(t, h, forged).Code)

	// A reference no status check knows is contradicted too.
	mock.RegisterResponder(http.MethodGet, mockBaseURL+"/v1/payments/nosuchref", fixtureResponder(t, http.StatusNotFound, "payments/status_not_found.json"))
	mock.RegisterResponder(http.MethodGet, mockBaseURL+"/v1/payments/direct-debit/status/nosuchref", fixtureResponder(t, http.StatusNotFound, "payments/status_not_found.json"))
	w = post(t, h, []byte(`{"ResponseCode":"0000","Message":"success","Data":{"ClientReference":"nosuchref","PaymentDate":"x"}}`))
	assert.Equal(t, http.StatusForbidden, w.Code)
	assert.Contains(t, logs.String(), "no status check of [receive direct_debit] knows")
	assert.Zero(t, rec.calls.Load())
}

func TestStatusCheckConfirmationPassesATrueSuccess(t *testing.T) {
	h, rec, mock, _ := confirmingHandler(t, WithDedupe(0))
	mock.RegisterResponder(http.MethodGet, mockBaseURL+"/v1/payments/rcv1044", fixtureResponder(t, http.StatusOK, "payments/receive_status_pending.json"))
	success := []byte(`{"ResponseCode":"0000","Message":"success","Data":{"ClientReference":"rcv1044","Amount":25.00,"PaymentDate":"x"}}`)
	assert.Equal(t, http.StatusServiceUnavailable, post(t, h, success).Code)

	// The status check catches up: the redelivery is confirmed (a refusal is not
	// remembered by the dedupe), and handled once.
	mock.RegisterResponder(http.MethodGet, mockBaseURL+"/v1/payments/rcv1044", fixtureAbout(t, http.StatusOK, "payments/receive_status_paid.json", "rcv1044"))
	assert.Equal(t, http.StatusOK, post(t, h, success).Code)
	before := mock.GetTotalCallCount()
	assert.Equal(t, http.StatusOK, post(t, h, success).Code)
	assert.EqualValues(t, 1, rec.calls.Load())
	assert.Equal(t, before, mock.GetTotalCallCount(), "a redelivery already handled needs no status check")
}

func TestStatusCheckConfirmationOfEveryShape(t *testing.T) {
	tests := []struct {
		name      string
		event     string
		responses map[string]string // path -> fixture, or "404"
		want      int
	}{
		{"direct debit after the receive check knows nothing", "events/direct_debit_success.json", map[string]string{
			"/v1/payments/debitMarch2025":                     "404",
			"/v1/payments/direct-debit/status/debitMarch2025": "confirm/charge_status_debitMarch2025.json",
		}, http.StatusOK},
		{"direct debit whose amount differs", "events/direct_debit_success.json", map[string]string{
			"/v1/payments/debitMarch2025":                     "404",
			"/v1/payments/direct-debit/status/debitMarch2025": "mandates/charge_status_paid.json",
		}, http.StatusForbidden},
		{"send", "events/send_success.json", map[string]string{
			"/v1/payments/refund1042": "confirm/send_status_refund1042.json",
		}, http.StatusOK},
		{"bank transfer", "events/send_to_bank_success.json", map[string]string{
			"/v1/payments/supplier88":                   "404",
			"/v1/merchants/2020202/transactions/status": "confirm/bank_status_supplier88.json",
		}, http.StatusOK},
		{"bank transfer still pending", "events/send_to_bank_success.json", map[string]string{
			"/v1/payments/supplier88":                   "404",
			"/v1/merchants/2020202/transactions/status": "payouts/bank_status_pending.json",
		}, http.StatusServiceUnavailable},
		{"bank transfer failed", "events/send_to_bank_success.json", map[string]string{
			"/v1/payments/supplier88":                   "404",
			"/v1/merchants/2020202/transactions/status": "payouts/bank_status_failed.json",
		}, http.StatusForbidden},
		{"mandate", "events/mandate_approved.json", map[string]string{
			"/v1/mandates/preapproval/mandate2025ama/status": "confirm/mandate_status_mandate2025ama.json",
		}, http.StatusOK},
		{"mandate of another pre-approval id", "events/mandate_approved.json", map[string]string{
			"/v1/mandates/preapproval/mandate2025ama/status": "mandates/status_approved.json",
		}, http.StatusForbidden},
		{"checkout paid", "events/payment_succeeded.json", map[string]string{
			"/v1/payments/ref_7Q2K9XW4LM": "confirm/checkout_get_ref_7Q2K9XW4LM.json",
		}, http.StatusOK},
		{"checkout still pending", "events/payment_succeeded.json", map[string]string{
			"/v1/payments/ref_7Q2K9XW4LM": "payments/checkout_created.json",
		}, http.StatusServiceUnavailable},
		{"checkout declined", "events/payment_succeeded.json", map[string]string{
			"/v1/payments/ref_7Q2K9XW4LM": "payments/checkout_failed.json",
		}, http.StatusForbidden},
		{"checkout unknown", "events/payment_succeeded.json", map[string]string{
			"/v1/payments/ref_7Q2K9XW4LM": "404",
		}, http.StatusForbidden},
		{"a failure is confirmed too", "events/send_failed_4075.json", map[string]string{
			"/v1/payments/payout4075": "confirm/send_status_payout4075.json",
		}, http.StatusOK},
		{"a failure the status check calls a success is refused", "events/send_failed_4075.json", map[string]string{
			"/v1/payments/payout4075": "payouts/send_status_success.json",
		}, http.StatusForbidden},
		{"a trial start needs none", "events/subscription_trial.json", nil, http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, rec, mock, _ := confirmingHandler(t)
			ev, err := ParseEvent(fixture(t, tt.event))
			require.NoError(t, err)
			for path, name := range tt.responses {
				if name == "404" {
					mock.RegisterResponder(http.MethodGet, mockBaseURL+path, fixtureResponder(t, http.StatusNotFound, "payments/status_not_found.json"))
					continue
				}
				mock.RegisterResponder(http.MethodGet, mockBaseURL+path, fixtureAbout(t, http.StatusOK, name, ev.Reference()))
			}
			assert.Equal(t, tt.want, post(t, h, fixture(t, tt.event)).Code)
			calls := mock.GetCallCountInfo()
			for path := range tt.responses {
				assert.Equal(t, 1, calls["GET "+mockBaseURL+path], "%s asked once", path)
			}
			wantCalls := int64(0)
			if tt.want == http.StatusOK {
				wantCalls = 1
			}
			assert.Equal(t, wantCalls, rec.calls.Load())
		})
	}
}

func TestTrackerHandlerWithConfirmationIgnoresAForgedSuccess(t *testing.T) {
	tr, mock, clock := newTestTracker(t, TrackerOptions{})
	mock.RegisterResponder(http.MethodGet, mockBaseURL+"/v1/payments/rcv1044", fixtureAsked(t, http.StatusOK, "payments/receive_status_failed.json"))
	h := tr.Handler(WithStatusCheckConfirmation(tr.client))
	result := awaitAsync(context.Background(), tr, KindReceive, "rcv1044")
	clock.waitTimers(1)

	forged := []byte(`{"ResponseCode":"0000","Message":"success","Data":{"ClientReference":"rcv1044","PaymentDate":"x"}}`)
	assert.Equal(t, http.StatusForbidden, post(t, h, forged).Code)
	assert.Empty(t, result, "the forged success resolved nothing")

	clock.Advance(5 * time.Minute)
	r := <-result
	require.NoError(t, r.err)
	assert.True(t, r.outcome.Failed(), "the status check tells the truth")
}

func TestCallbackWithConnectionErrorCodeIsPendingNotFailed(t *testing.T) {
	for _, body := range []string{
		`{"ResponseCode":"0005","Message":"failed","Data":{"Amount":10.00,"ClientReference":"ref5","TransactionId":"t5"}}`,
		`{"ResponseCode":"0005","Data":{"AmountDebited":0,"TransactionId":"t6","ClientReference":"ref6","Amount":10.00,"Charges":0,"RecipientName":null}}`,
	} {
		ev, err := ParseEvent([]byte(body))
		require.NoError(t, err, body)
		assert.Equal(t, EventPending, ev.State(), "0005 says the state is unknown: %s", body)
		assert.Equal(t, CodeConnectionError, ev.Code())
	}
}

// The sender of a callback is not authenticated: a refusal tells it what to do (deliver
// again, or not), never the merchant's internal addresses or errors. Those go to the log.
func TestWebhookRefusalsQuoteNoInternalError(t *testing.T) {
	h, rec, mock, logs := confirmingHandler(t)
	mock.RegisterResponder(http.MethodGet, mockBaseURL+"/v1/payments/rcv1044",
		httpmock.NewErrorResponder(errors.New("dial tcp 10.1.2.3:8443: connection refused")))
	forged := []byte(`{"ResponseCode":"0000","Message":"success","Data":{"ClientReference":"rcv1044","PaymentDate":"x"}}`)

	w := post(t, h, forged)
	assert.Equal(t, http.StatusServiceUnavailable, w.Code)
	for _, secret := range []string{"10.1.2.3", "api.billing.test", "connection refused", "dial"} {
		assert.NotContains(t, w.Body.String(), secret)
		assert.Contains(t, logs.String(), secret, "the detail is logged for the merchant")
	}
	assert.Zero(t, rec.calls.Load())

	w = post(t, h, []byte(`{"event":"<script>","data":{}}`))
	assert.Equal(t, http.StatusOK, w.Code, "a kind the SDK does not know reaches the function, unconfirmed")
	assert.NotContains(t, w.Body.String(), "script", "the refusal does not echo the sender's input")
}

// A redelivery that arrives while the first copy is still being handled is answered
// "retry later", never "done": the first copy may yet fail, and then the event would be
// lost. The key is recorded only once the function returned nil.
func TestWebhookDedupeAnswersAnInFlightDuplicateRetryLater(t *testing.T) {
	entered, release := make(chan struct{}), make(chan error)
	var calls atomic.Int64
	h := NewWebhookHandler(func(context.Context, Event) error {
		if calls.Add(1) == 1 {
			close(entered)
			return <-release
		}
		return nil
	}, WithDedupe(0))
	body := fixture(t, "events/send_success.json")

	first := make(chan int)
	go func() { first <- post(t, h, body).Code }()
	<-entered
	w := post(t, h, body)
	assert.Equal(t, http.StatusServiceUnavailable, w.Code, "the first copy is still in flight")
	assert.NotEmpty(t, w.Header().Get("Retry-After"))

	release <- errors.New("the order database is down")
	assert.Equal(t, http.StatusInternalServerError, <-first)
	assert.Equal(t, http.StatusOK, post(t, h, body).Code, "the redelivery is handled: nothing was lost")
	assert.EqualValues(t, 2, calls.Load())
	assert.Equal(t, http.StatusOK, post(t, h, body).Code)
	assert.EqualValues(t, 2, calls.Load(), "once handled, a redelivery is a duplicate")
}

// A panic in merchant code is a failed handling: 500, the key forgotten, so the
// redelivery reaches the function again.
func TestWebhookHandlerRecoversAPanicAndForgetsTheEvent(t *testing.T) {
	var calls atomic.Int64
	var logs bytes.Buffer
	h := NewWebhookHandler(func(context.Context, Event) error {
		if calls.Add(1) == 1 {
			panic("nil order")
		}
		return nil
	}, WithDedupe(0), WithWebhookLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	body := fixture(t, "events/transaction_success.json")

	w := post(t, h, body)
	assert.Equal(t, http.StatusInternalServerError, w.Code)
	assert.NotContains(t, w.Body.String(), "nil order")
	assert.Contains(t, logs.String(), "nil order")
	assert.Equal(t, http.StatusOK, post(t, h, body).Code)
	assert.EqualValues(t, 2, calls.Load(), "the event panicked once and was handled on redelivery")
}

// registerStatus answers GET path with the fixture name, or 404 for "404".
func registerStatus(t *testing.T, mock *httpmock.MockTransport, path, name string) {
	t.Helper()
	if name == "404" {
		mock.RegisterResponder(http.MethodGet, mockBaseURL+path, fixtureResponder(t, http.StatusNotFound, "payments/status_not_found.json"))
		return
	}
	mock.RegisterResponder(http.MethodGet, mockBaseURL+path, fixtureAsked(t, http.StatusOK, name))
}

// A forged failure is as costly as a forged success: a merchant told a payout failed pays
// it again. With confirmation, a callback claiming failure reaches the function only once
// the status check says failed too; until then it is "retry later".
func TestStatusCheckConfirmationConfirmsFailuresToo(t *testing.T) {
	forgedFailure := []byte(`{"ResponseCode":"2001","Data":{"AmountDebited":0,"TransactionId":"snd_9d3e7a1b","ClientReference":"refund1040",
		"Amount":150.00,"Charges":1.50,"RecipientName":null}}`)
	h, rec, mock, logs := confirmingHandler(t, WithDedupe(0))
	registerStatus(t, mock, "/v1/payments/refund1040", "payouts/send_status_pending.json")

	w := post(t, h, forgedFailure)
	assert.Equal(t, http.StatusServiceUnavailable, w.Code, "the payout is still pending: nothing is final yet")
	assert.Equal(t, "60", w.Header().Get("Retry-After"))
	assert.Zero(t, rec.calls.Load(), "merchant code never hears of a failure the service does not report")
	assert.Contains(t, logs.String(), "still pending")

	// The payout succeeded after all: the failure is contradicted.
	registerStatus(t, mock, "/v1/payments/refund1040", "payouts/send_status_success.json")
	assert.Equal(t, http.StatusForbidden, post(t, h, forgedFailure).Code)
	assert.Zero(t, rec.calls.Load())

	// A failure the status check confirms reaches the function, with the status check's
	// code.
	h, rec, mock, _ = confirmingHandler(t, WithDedupe(0))
	registerStatus(t, mock, "/v1/payments/refund1041", "payouts/send_status_failed.json")
	failure := []byte(`{"ResponseCode":"2001","Data":{"AmountDebited":0,"TransactionId":"snd_2b8c4f6e","ClientReference":"refund1041",
		"Amount":150.00,"Charges":1.50,"RecipientName":null}}`)
	assert.Equal(t, http.StatusOK, post(t, h, failure).Code)
	require.EqualValues(t, 1, rec.calls.Load())
	assert.Equal(t, EventFailed, rec.last().State())
	assert.Equal(t, CodeInsufficientBalance, rec.last().Code(), "the status check's truth, not the callback's claim")
}

// A forged failure for a pending payout, through a Tracker's handler: merchant code is
// not called, the outcome is not settled, and once the status check says success the
// Await reports success, so the payout is never sent twice.
func TestTrackerIgnoresAForgedFailureOfAPendingPayout(t *testing.T) {
	tr, mock, clock := newTestTracker(t, TrackerOptions{})
	registerStatus(t, mock, "/v1/payments/refund1040", "payouts/send_status_pending.json")
	h := tr.Handler(WithDedupe(0))
	result := awaitAsync(context.Background(), tr, KindSend, "refund1040")
	clock.waitTimers(1)

	forged := []byte(`{"ResponseCode":"4075","Data":{"AmountDebited":0,"TransactionId":"snd_9d3e7a1b","ClientReference":"refund1040",
		"Amount":150.00,"Charges":1.50,"RecipientName":null}}`)
	assert.Equal(t, http.StatusServiceUnavailable, post(t, h, forged).Code)
	assert.Empty(t, result, "the forged failure settled nothing")

	// Fed straight to Deliver, it is confirmed the same way: the status check still says
	// pending, so Deliver says "not yet" and settles nothing.
	calls := mock.GetTotalCallCount()
	require.ErrorIs(t, tr.Deliver(context.Background(), mustParse(t, forged)), ErrStillPending)
	assert.Equal(t, calls+1, mock.GetTotalCallCount(), "one status check confirmed it")
	assert.Empty(t, result, "and settled nothing")

	// A forged failure the status check contradicts is refused outright.
	registerStatus(t, mock, "/v1/payments/refund1040", "payouts/send_status_success.json")
	require.ErrorIs(t, tr.Deliver(context.Background(), mustParse(t, forged)), ErrUnconfirmed)

	clock.Advance(5 * time.Minute)
	r := <-result
	require.NoError(t, r.err)
	assert.True(t, r.outcome.Succeeded(), "the payout succeeded: the merchant must not send it again")
}

func mustParse(t *testing.T, body []byte) Event {
	t.Helper()
	ev, err := ParseEvent(body)
	require.NoError(t, err)
	return ev
}

// What merchant code receives for a confirmed event is the status check's truth; a
// callback whose amount or transaction id disagrees with it is refused, and refusing it
// never marks the genuine event as seen.
func TestStatusCheckConfirmationHandsOverTheTruth(t *testing.T) {
	h, rec, mock, logs := confirmingHandler(t, WithDedupe(0))
	registerStatus(t, mock, "/v1/payments/rcv1044", "payments/receive_status_paid.json") // 25.00, rcv_6a2f9e1c

	inflated := []byte(`{"ResponseCode":"0000","Message":"success","Data":{"ClientReference":"rcv1044","Amount":1000000.00,"TransactionId":"rcv_6a2f9e1c","PaymentDate":"x"}}`)
	assert.Equal(t, http.StatusForbidden, post(t, h, inflated).Code, "the receive paid 25.00, not 1,000,000")
	assert.Contains(t, logs.String(), "amount")
	otherTx := []byte(`{"ResponseCode":"0000","Message":"success","Data":{"ClientReference":"rcv1044","Amount":25.00,"TransactionId":"rcv_other","PaymentDate":"x"}}`)
	assert.Equal(t, http.StatusForbidden, post(t, h, otherTx).Code)
	assert.Zero(t, rec.calls.Load())

	genuine := []byte(`{"ResponseCode":"0000","Message":"success","Data":{"ClientReference":"rcv1044","Amount":25.00,"Charges":0,"TransactionId":"rcv_6a2f9e1c","PaymentDate":"x"}}`)
	assert.Equal(t, http.StatusOK, post(t, h, genuine).Code, "the forgeries did not make the genuine callback a duplicate")
	require.EqualValues(t, 1, rec.calls.Load())
	got := rec.last().(*TransactionCallback)
	assert.Equal(t, DecimalAmount(2500), got.Data.Amount)
	assert.Equal(t, DecimalAmount(25), got.Data.Charges, "the status check's charges, not the callback's 0")
	assert.Equal(t, "MM2501011200", got.Data.ExternalTransactionID, "filled from the status check")
	assert.Equal(t, CodeSuccess, got.Code())
}

// A checkout webhook is confirmed by Payments.Get: the payment handed over is the one the
// service holds, and a webhook carrying another amount, currency or metadata is refused.
func TestStatusCheckConfirmationOfACheckoutHandsOverTheServicesPayment(t *testing.T) {
	webhook := string(fixture(t, "events/payment_succeeded.json"))
	for name, forged := range map[string]string{
		"metadata": strings.Replace(webhook, `"orderId": "1042"`, `"orderId": "9999"`, 1),
		"amount":   strings.Replace(webhook, `"amount": 5000`, `"amount": 500000`, 1),
		"currency": strings.Replace(webhook, `"currency": "GHS"`, `"currency": "USD"`, 1),
	} {
		t.Run(name, func(t *testing.T) {
			require.NotEqual(t, webhook, forged)
			h, rec, mock, _ := confirmingHandler(t)
			registerStatus(t, mock, "/v1/payments/ref_7Q2K9XW4LM", "confirm/checkout_get_ref_7Q2K9XW4LM.json")
			assert.Equal(t, http.StatusForbidden, post(t, h, []byte(forged)).Code)
			assert.Zero(t, rec.calls.Load())
		})
	}
	h, rec, mock, _ := confirmingHandler(t)
	registerStatus(t, mock, "/v1/payments/ref_7Q2K9XW4LM", "confirm/checkout_get_ref_7Q2K9XW4LM.json")
	require.Equal(t, http.StatusOK, post(t, h, []byte(webhook)).Code)
	got := rec.last().(*CheckoutEvent)
	assert.Equal(t, "pay_9a8b7c6d5e4f3a2b1c0d9e8f", got.Data.ID)
	assert.False(t, got.Data.CreatedAt.IsZero(), "the payment as Payments.Get returned it")
}

// A callback carrying a reference no movement can have is refused before the handler
// records anything of it, so a sender cannot fill a shared store with huge references.
func TestWebhookHandlerRefusesImpossibleReferencesBeforeRecording(t *testing.T) {
	store := NewMemoryStore(100)
	var calls int
	h := NewWebhookHandler(func(context.Context, Event) error { calls++; return nil }, WithDedupeStore(store))
	for _, ref := range []string{strings.Repeat("r", 300<<10), "../v1/payouts", "a b"} {
		body, err := json.Marshal(map[string]any{"ResponseCode": "0001", "Message": "accepted", "Data": map[string]any{"ClientReference": ref}})
		require.NoError(t, err)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/callbacks", bytes.NewReader(body)))
		assert.Equal(t, http.StatusBadRequest, rec.Code, "reference %.20q", ref)
		got, err := gateOf(store).Callbacks(context.Background(), movementKey{Callback: EventKindTransaction, ClientReference: ref})
		if err == nil {
			assert.Empty(t, got)
		}
	}
	assert.Zero(t, calls)
}
