package otelbilling

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
)

// recorder returns a TracerProvider whose ended spans the returned recorder keeps.
func recorder(t *testing.T) (*sdktrace.TracerProvider, *tracetest.SpanRecorder) {
	sr := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return tp, sr
}

// attrs returns a span's attributes as a map of their values.
func attrs(s sdktrace.ReadOnlySpan) map[string]any {
	m := make(map[string]any)
	for _, kv := range s.Attributes() {
		m[string(kv.Key)] = kv.Value.AsInterface()
	}
	return m
}

func hostPort(t *testing.T, raw string) (string, int64) {
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		t.Fatal(err)
	}
	return u.Hostname(), int64(port)
}

func assertAttrs(t *testing.T, span sdktrace.ReadOnlySpan, want map[string]any) {
	t.Helper()
	got := attrs(span)
	if len(got) != len(want) {
		t.Errorf("span %q: attributes %v, want %v", span.Name(), got, want)
		return
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("span %q: %s = %v (%T), want %v (%T)", span.Name(), k, got[k], got[k], v, v)
		}
	}
}

// A read the service answers 503, then 200: one call span, two attempt spans under it,
// all under the caller's span.
func TestSpansOfARetriedRead(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := hits.Add(1)
		w.Header().Set("X-Request-Id", "req_"+strconv.Itoa(int(n)))
		w.Header().Set("Content-Type", "application/json")
		if n == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"success":false,"message":"busy","code":"5000"}`))
			return
		}
		_, _ = w.Write([]byte(`{"success":true,"data":{"id":"cust_1","email":"ama@example.com","name":"Ama","status":"ACTIVE"}}`))
	}))
	defer srv.Close()
	tp, sr := recorder(t)
	c, err := billing.NewClient(billing.WithBaseURL(srv.URL), billing.WithSecretKey("sk_test"),
		billing.WithRetry(3, 0, 0), billing.WithObserver(NewObserver(WithTracerProvider(tp))))
	if err != nil {
		t.Fatal(err)
	}

	ctx, parent := tp.Tracer("test").Start(context.Background(), "checkout handler")
	if _, err := c.Customers.Get(ctx, "cust_1"); err != nil {
		t.Fatal(err)
	}
	parent.End()

	spans := sr.Ended()
	if len(spans) != 4 {
		t.Fatalf("%d spans, want 2 attempts, the call and the caller's", len(spans))
	}
	first, second, call := spans[0], spans[1], spans[2]
	host, port := hostPort(t, srv.URL)
	request := map[string]any{
		"http.request.method": "GET", "url.template": "/v1/customers/{id}",
		"server.address": host, "server.port": port,
	}
	with := func(extra map[string]any) map[string]any {
		m := map[string]any{}
		for k, v := range request {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}

	if call.Name() != "billing GET /v1/customers/{id}" || call.SpanKind() != trace.SpanKindInternal {
		t.Errorf("call span %q of kind %v", call.Name(), call.SpanKind())
	}
	if call.Parent().SpanID() != parent.SpanContext().SpanID() {
		t.Error("the call span is not under the caller's")
	}
	assertAttrs(t, call, with(map[string]any{
		"http.response.status_code": int64(200), "http.request.resend_count": int64(1),
		"billing.outcome_unknown": false, "billing.request_id": "req_2",
	}))
	if call.Status().Code != codes.Unset {
		t.Errorf("call status %v", call.Status())
	}

	for i, a := range []sdktrace.ReadOnlySpan{first, second} {
		if a.Name() != "GET /v1/customers/{id}" || a.SpanKind() != trace.SpanKindClient {
			t.Errorf("attempt span %q of kind %v", a.Name(), a.SpanKind())
		}
		if a.Parent().SpanID() != call.SpanContext().SpanID() {
			t.Errorf("attempt %d is not under the call span", i+1)
		}
	}
	assertAttrs(t, first, with(map[string]any{
		"http.response.status_code": int64(503), "error.type": "503", "billing.request_id": "req_1",
	}))
	if first.Status().Code != codes.Error {
		t.Errorf("a 503 attempt has status %v", first.Status())
	}
	assertAttrs(t, second, with(map[string]any{
		"http.response.status_code": int64(200), "http.request.resend_count": int64(1), "billing.request_id": "req_2",
	}))
}

// A money movement whose answer is lost after the sandbox did the work: the call's span
// says the outcome is unknown, and names the client reference to resolve.
func TestSpansOfAMoneyMovementWithAnUnknownOutcome(t *testing.T) {
	srv := billingtest.NewServer(t, billingtest.WithManualClock())
	tp, sr := recorder(t)
	c := srv.Client(billing.WithObserver(NewObserver(WithTracerProvider(tp))))
	srv.InjectFault(billingtest.Fault{Route: "POST /v1/payments/send", Kind: billingtest.FaultResponseLost})

	_, err := c.Payouts.Send(context.Background(), &billing.SendParams{
		Amount: 2000, Phone: "233201234567", Provider: billing.ProviderTelecel, Name: "Kofi", Description: "Refund 77",
		ClientReference: "refund77", CallbackURL: "https://shop.example.com/callbacks",
	})
	if !errors.Is(err, billing.ErrOutcomeUnknown) {
		t.Fatalf("err = %v, want ErrOutcomeUnknown", err)
	}
	spans := sr.Ended()
	if len(spans) != 2 {
		t.Fatalf("%d spans, want one attempt and the call", len(spans))
	}
	attempt, call := spans[0], spans[1]
	host, port := hostPort(t, srv.URL)
	assertAttrs(t, call, map[string]any{
		"http.request.method": "POST", "url.template": "/v1/payments/send", "server.address": host, "server.port": port,
		"billing.client_reference": "refund77", "billing.outcome_unknown": true, "error.type": "billing.outcome_unknown",
	})
	if call.Status().Code != codes.Error {
		t.Errorf("call status %v", call.Status())
	}
	a := attrs(attempt)
	if a["error.type"] == nil || a["error.type"] == "_OTHER" || a["http.response.status_code"] != nil {
		t.Errorf("a lost response: attempt attributes %v", a)
	}
	if attempt.Status().Code != codes.Error {
		t.Errorf("attempt status %v", attempt.Status())
	}
}

// The service's response code and request id reach the call span; a refusal under a
// 2xx is an error of type billing.APIError.
func TestSpanOfARefusalUnderA2xx(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Request-Id", "req_4070")
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"message":"declined","responseCode":"4070","data":{}}`))
	}))
	defer srv.Close()
	tp, sr := recorder(t)
	c, err := billing.NewClient(billing.WithBaseURL(srv.URL), billing.WithClientCredentials("id", "secret"),
		billing.WithObserver(NewObserver(WithTracerProvider(tp))))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Payments.Receive(context.Background(), &billing.ReceiveParams{
		Amount: 100, Phone: "233241230003", Provider: billing.ProviderMTN, Description: "Order 9",
		ClientReference: "order9", CallbackURL: "https://shop.example.com/callbacks",
	})
	var apiErr *billing.APIError
	if !errors.As(err, &apiErr) || apiErr.RequestID != "req_4070" {
		t.Fatalf("err = %v", err)
	}
	call := sr.Ended()[1]
	a := attrs(call)
	for k, v := range map[string]any{
		"billing.response_code": "4070", "billing.request_id": "req_4070", "error.type": "billing.APIError",
		"billing.outcome_unknown": false, "http.response.status_code": int64(200),
	} {
		if a[k] != v {
			t.Errorf("%s = %v, want %v", k, a[k], v)
		}
	}
}

func TestErrorTypes(t *testing.T) {
	for want, err := range map[string]error{
		"timeout":          context.DeadlineExceeded,
		"canceled":         context.Canceled,
		"billing.APIError": &billing.APIError{StatusCode: 200, Code: "2001"},
		"syscall.Errno": fmt.Errorf("billing: GET /x: %w",
			&url.Error{Op: "Get", URL: "/x", Err: &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}}),
		"_OTHER": errors.New("plain"),
	} {
		if got := errorType(0, err); got != want {
			t.Errorf("errorType(%v) = %q, want %q", err, got, want)
		}
	}
	if got := errorType(502, nil); got != "502" {
		t.Errorf("errorType(502) = %q", got)
	}
}
