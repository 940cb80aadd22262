package otelbilling

import (
	"context"
	"errors"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

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
//   - billing.tracker.operator_actions (counter): operators' actions, by
//     billing.operator.action and whether it was refused (error.type).
//
// Each operator's action (Tracker.Recheck, Resolve, Release, ReportAgain) is also a span,
// "billing operator <action>", naming the actor, the movement and its state before and
// after; a refused action's span has an error status. Its texts pass through
// billing.Scrub.
//
// Give it to a Tracker in TrackerOptions.Observer for the counters, and to Watch for the
// gauges. One TrackerMetrics may serve several Trackers; the gauges then sum the pending
// movements and report the oldest of all.
type TrackerMetrics struct {
	callbacks, statusChecks, outcomes, actions metric.Int64Counter
	tracer                                     trace.Tracer
	registration                               metric.Registration

	mu      sync.Mutex
	watched []*billing.Tracker
}

var (
	_ billing.TrackerObserver = (*TrackerMetrics)(nil)
	_ billing.ActionObserver  = (*TrackerMetrics)(nil)
)

// NewTrackerMetrics makes the instruments with the global MeterProvider, or the one
// WithMeterProvider gives.
func NewTrackerMetrics(opts ...Option) (*TrackerMetrics, error) {
	c := newConfig(opts)
	meter := c.meterProvider.Meter(ScopeName)
	m := &TrackerMetrics{tracer: c.tracerProvider.Tracer(ScopeName)}
	var errs [7]error
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
	m.actions, errs[6] = meter.Int64Counter("billing.tracker.operator_actions",
		metric.WithUnit("{action}"), metric.WithDescription("Operators' actions on movements, taken or refused."))
	if err := errors.Join(append(errs[:5:5], errs[6])...); err != nil {
		return nil, err
	}
	m.registration, errs[5] = meter.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		stats, err := m.stats(ctx)
		if err != nil {
			return err
		}
		var total billing.TrackerStats
		for _, s := range stats {
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

func (m *TrackerMetrics) stats(ctx context.Context) ([]billing.TrackerStats, error) {
	m.mu.Lock()
	watched := append([]*billing.Tracker(nil), m.watched...)
	m.mu.Unlock()
	out := make([]billing.TrackerStats, len(watched))
	for i, t := range watched {
		s, err := t.Stats(ctx)
		if err != nil {
			return nil, err
		}
		out[i] = s
	}
	return out, nil
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

// OperatorActed makes a span of an operator's action and counts it.
func (m *TrackerMetrics) OperatorActed(ctx context.Context, r billing.ActionResult, err error) {
	refused := "none"
	if err != nil {
		refused = "refused"
	}
	m.actions.Add(ctx, 1, metric.WithAttributes(attribute.String(AttrOperatorAction, string(r.Action)),
		attribute.String("error.type", refused)))
	_, span := m.tracer.Start(ctx, "billing operator "+string(r.Action), trace.WithAttributes(
		attribute.String(AttrOperatorAction, string(r.Action)),
		attribute.String(AttrOperatorActor, billing.Scrub(r.Actor)),
		attribute.String(AttrMovementKind, string(r.Kind)),
		attribute.String(AttrClientReference, billing.Scrub(r.ClientReference)),
		attribute.String(AttrStateBefore, r.Before),
		attribute.String(AttrStateAfter, r.After),
	))
	if err != nil {
		span.SetStatus(codes.Error, billing.Scrub(err.Error()))
	}
	span.End()
}
