package otelbilling

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	billing "github.com/billingsdk/billing-go"
)

// BenchmarkTracedCall measures a Customers.Get traced by the Observer (every span
// sampled and exported to memory) beside the same call untraced, alternately in batches
// so that a busy machine slows both alike; x-untraced is the first over the second.
func BenchmarkTracedCall(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Request-Id", "req_8f3a2b1c")
		_, _ = w.Write([]byte(`{"success":true,"data":{"id":"cust_1","email":"ama@example.com","name":"Ama","status":"ACTIVE"}}`))
	}))
	defer srv.Close()
	exporter := tracetest.NewNoopExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exporter))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	newClient := func(opts ...billing.Option) *billing.Client {
		c, err := billing.NewClient(append([]billing.Option{billing.WithBaseURL(srv.URL), billing.WithSecretKey("sk_test")}, opts...)...)
		if err != nil {
			b.Fatal(err)
		}
		return c
	}
	traced := newClient(billing.WithObserver(NewObserver(WithTracerProvider(tp))))
	plain := newClient()
	get := func(c *billing.Client) func() {
		return func() {
			if _, err := c.Customers.Get(context.Background(), "cust_1"); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("traced", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			get(traced)()
		}
	})
	b.Run("untraced", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			get(plain)()
		}
	})
	b.Run("ratio", func(b *testing.B) {
		var tookTraced, tookPlain time.Duration
		batch := func(fn func()) time.Duration {
			start := time.Now()
			for range 10 {
				fn()
			}
			return time.Since(start)
		}
		round := 0
		for b.Loop() {
			if round++; round%2 == 0 {
				tookTraced += batch(get(traced))
				tookPlain += batch(get(plain))
			} else {
				tookPlain += batch(get(plain))
				tookTraced += batch(get(traced))
			}
		}
		b.ReportMetric(float64(tookTraced)/float64(tookPlain), "x-untraced")
	})
}
