package otelbilling

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
)

// collect reads every metric of the reader, by name.
func collect(t *testing.T, r *sdkmetric.ManualReader) map[string]metricdata.Aggregation {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := make(map[string]metricdata.Aggregation)
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			out[m.Name] = m.Data
		}
	}
	return out
}

// counts returns a counter's points as "attr=value,attr=value" -> count.
func counts(t *testing.T, data metricdata.Aggregation, keys ...string) map[string]int64 {
	t.Helper()
	sum, ok := data.(metricdata.Sum[int64])
	if !ok {
		t.Fatalf("not an int64 sum: %T", data)
	}
	out := make(map[string]int64)
	for _, p := range sum.DataPoints {
		label := ""
		for i, k := range keys {
			v, _ := p.Attributes.Value(attribute.Key(k))
			if i > 0 {
				label += ","
			}
			label += v.Emit()
		}
		out[label] += p.Value
	}
	return out
}

func gauge[N int64 | float64](t *testing.T, data metricdata.Aggregation) N {
	t.Helper()
	g, ok := data.(metricdata.Gauge[N])
	if !ok || len(g.DataPoints) != 1 {
		t.Fatalf("not a gauge of one point: %#v", data)
	}
	return g.DataPoints[0].Value
}

// A merchant's Tracker against the sandbox: one receive settled by its callback, one
// payout whose callback is dropped and which the status check settles, and one receive
// that stays pending.
func TestTrackerMetricsAgainstTheSandbox(t *testing.T) {
	srv := billingtest.NewServer(t, billingtest.WithManualClock())
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	metrics, err := NewTrackerMetrics(WithMeterProvider(mp))
	if err != nil {
		t.Fatal(err)
	}
	c := srv.Client()
	tr := billing.NewTracker(c, billing.TrackerOptions{Clock: srv.Clock(), Observer: metrics})
	if err := metrics.Watch(tr); err != nil {
		t.Fatal(err)
	}
	endpoint := httptest.NewServer(tr.Handler())
	defer endpoint.Close()
	ctx := context.Background()

	receive := func(ref, phone string) {
		t.Helper()
		_, err := c.Payments.Receive(ctx, &billing.ReceiveParams{Amount: 5000, Phone: phone, Provider: billing.ProviderMTN,
			Description: "Order " + ref, ClientReference: ref, CallbackURL: endpoint.URL})
		if err != nil {
			t.Fatal(err)
		}
		if err := tr.Track(billing.KindReceive, ref); err != nil {
			t.Fatal(err)
		}
	}
	receive("order1", "233241234567")
	receive("order2", "233241230004") // stays pending for ten minutes
	srv.InjectCallbackFault(billingtest.CallbackFault{Kind: billingtest.CallbackDropped, Reference: "refund1"})
	if _, err := c.Payouts.Send(ctx, &billing.SendParams{Amount: 2000, Phone: "233201234567", Provider: billing.ProviderTelecel,
		Name: "Kofi", Description: "Refund 1", ClientReference: "refund1", CallbackURL: endpoint.URL}); err != nil {
		t.Fatal(err)
	}
	if err := tr.Track(billing.KindSend, "refund1"); err != nil {
		t.Fatal(err)
	}

	got := collect(t, reader)
	if n := gauge[int64](t, got["billing.tracker.movements.pending"]); n != 3 {
		t.Errorf("pending = %d before anything resolved, want 3", n)
	}

	srv.Advance(0) // order1's callback arrives; refund1's is dropped
	if o, err := tr.Await(ctx, billing.KindReceive, "order1"); err != nil || !o.Succeeded() {
		t.Fatalf("order1: %v %v", o, err)
	}
	srv.Advance(5 * time.Minute) // past the callback wait: refund1 by status check
	if o, err := tr.Await(ctx, billing.KindSend, "refund1"); err != nil || !o.Succeeded() || o.Source != billing.SourceStatusCheck {
		t.Fatalf("refund1: %+v %v", o, err)
	}

	got = collect(t, reader)
	if n := gauge[int64](t, got["billing.tracker.movements.pending"]); n != 1 {
		t.Errorf("pending = %d, want order2 alone", n)
	}
	if age := gauge[float64](t, got["billing.tracker.movements.oldest_pending.age"]); age != 300 {
		t.Errorf("oldest pending age = %vs, want 300", age)
	}
	assertCounts(t, "callbacks", counts(t, got["billing.tracker.callbacks"], AttrCallbackKind, AttrCallbackState),
		map[string]int64{"transaction,succeeded": 1})
	assertCounts(t, "status checks", counts(t, got["billing.tracker.status_checks"], AttrMovementKind, AttrStatusCheckResult),
		map[string]int64{"send,succeeded": 1})
	assertCounts(t, "outcomes", counts(t, got["billing.tracker.outcomes"], AttrOutcomeState, AttrOutcomeSource),
		map[string]int64{"succeeded,callback": 1, "succeeded,status_check": 1})

	if err := metrics.Close(); err != nil {
		t.Fatal(err)
	}
	if _, ok := collect(t, reader)["billing.tracker.movements.pending"]; ok {
		t.Error("the gauges are still read after Close")
	}
}

func assertCounts(t *testing.T, what string, got, want map[string]int64) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %v, want %v", what, got, want)
		return
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %v, want %v", what, got, want)
			return
		}
	}
}

func TestTrackerMetricsRefuseNoTracker(t *testing.T) {
	metrics, err := NewTrackerMetrics(WithMeterProvider(sdkmetric.NewMeterProvider()))
	if err != nil {
		t.Fatal(err)
	}
	if err := metrics.Watch(nil); err == nil {
		t.Error("Watch(nil) accepted")
	}
}
