package otelbilling

import (
	"context"
	"errors"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	billing "github.com/billingsdk/billing-go"
)

// TrackerMetrics is a billing.TrackerObserver that counts what Trackers learn, and reads
// what the Trackers it watches are waiting for, as OpenTelemetry metrics:
//
//   - billing.tracker.movements.pending (gauge): movements without a final outcome;
//   - billing.tracker.movements.oldest_pending.age (gauge, seconds): how long the oldest
//     of them has been pending;
//   - billing.tracker.callbacks (counter): callbacks received, by billing.callback.kind
//     and billing.callback.state;
//   - billing.tracker.status_checks (counter): status checks asked, by
//     billing.movement.kind and billing.status_check.result (the state answered, or
//     "error");
//   - billing.tracker.outcomes (counter): outcomes settled, by billing.outcome.state and
//     billing.outcome.source (callback or status_check).
//
// Give it to a Tracker in TrackerOptions.Observer for the counters, and to Watch for the
// gauges. One TrackerMetrics may serve several Trackers; the gauges then sum the pending
// movements and report the oldest of all.
type TrackerMetrics struct {
	callbacks, statusChecks, outcomes metric.Int64Counter
	registration                      metric.Registration

	mu      sync.Mutex
	watched []*billing.Tracker
}

var _ billing.TrackerObserver = (*TrackerMetrics)(nil)

// NewTrackerMetrics makes the instruments with the global MeterProvider, or the one
// WithMeterProvider gives.
func NewTrackerMetrics(opts ...Option) (*TrackerMetrics, error) {
	meter := newConfig(opts).meterProvider.Meter(ScopeName)
	m := &TrackerMetrics{}
	var errs [6]error
	var pending metric.Int64ObservableGauge
	var oldest metric.Float64ObservableGauge
	m.callbacks, errs[0] = meter.Int64Counter("billing.tracker.callbacks",
		metric.WithUnit("{callback}"), metric.WithDescription("Callbacks of money movements received by the Tracker."))
	m.statusChecks, errs[1] = meter.Int64Counter("billing.tracker.status_checks",
		metric.WithUnit("{check}"), metric.WithDescription("Status checks the Tracker asked, by the state they answered."))
	m.outcomes, errs[2] = meter.Int64Counter("billing.tracker.outcomes",
		metric.WithUnit("{outcome}"), metric.WithDescription("Final outcomes the Tracker settled, by state and source."))
	pending, errs[3] = meter.Int64ObservableGauge("billing.tracker.movements.pending",
		metric.WithUnit("{movement}"), metric.WithDescription("Money movements the Tracker awaits without a final outcome."))
	oldest, errs[4] = meter.Float64ObservableGauge("billing.tracker.movements.oldest_pending.age",
		metric.WithUnit("s"), metric.WithDescription("How long the oldest pending money movement has been pending."))
	if err := errors.Join(errs[:5]...); err != nil {
		return nil, err
	}
	m.registration, errs[5] = meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		var total billing.TrackerStats
		for _, s := range m.stats() {
			total.Pending += s.Pending
			total.OldestPendingAge = max(total.OldestPendingAge, s.OldestPendingAge)
		}
		o.ObserveInt64(pending, int64(total.Pending))
		o.ObserveFloat64(oldest, total.OldestPendingAge.Seconds())
		return nil
	}, pending, oldest)
	if errs[5] != nil {
		return nil, errs[5]
	}
	return m, nil
}

// Watch adds t's pending movements to the gauges. Watch each Tracker once: a Tracker
// watched twice is counted twice.
func (m *TrackerMetrics) Watch(t *billing.Tracker) error {
	if t == nil {
		return errors.New("otelbilling: Watch needs a Tracker")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.watched = append(m.watched, t)
	return nil
}

// Close stops the gauges' readings; the counters keep counting.
func (m *TrackerMetrics) Close() error {
	return m.registration.Unregister()
}

func (m *TrackerMetrics) stats() []billing.TrackerStats {
	m.mu.Lock()
	watched := append([]*billing.Tracker(nil), m.watched...)
	m.mu.Unlock()
	out := make([]billing.TrackerStats, len(watched))
	for i, t := range watched {
		out[i] = t.Stats()
	}
	return out
}

// CallbackReceived counts a callback.
func (m *TrackerMetrics) CallbackReceived(ctx context.Context, ev billing.Event) {
	m.callbacks.Add(ctx, 1, metric.WithAttributes(
		attribute.String(AttrCallbackKind, string(ev.Kind())),
		attribute.String(AttrCallbackState, string(ev.State())),
	))
}

// StatusChecked counts a status check.
func (m *TrackerMetrics) StatusChecked(ctx context.Context, kind billing.Kind, _ string, o *billing.Outcome, err error) {
	result := "error"
	if err == nil && o != nil {
		result = string(o.State)
	}
	m.statusChecks.Add(ctx, 1, metric.WithAttributes(
		attribute.String(AttrMovementKind, string(kind)),
		attribute.String(AttrStatusCheckResult, result),
	))
}

// OutcomeSettled counts a settled outcome.
func (m *TrackerMetrics) OutcomeSettled(ctx context.Context, o *billing.Outcome) {
	m.outcomes.Add(ctx, 1, metric.WithAttributes(
		attribute.String(AttrOutcomeState, string(o.State)),
		attribute.String(AttrOutcomeSource, string(o.Source)),
	))
}
