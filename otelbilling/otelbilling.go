// Package otelbilling instruments the billing SDK with OpenTelemetry: a span for every
// call a billing.Client makes and a child span for each attempt of it, named and
// attributed by the HTTP client semantic conventions, and metrics of what a
// billing.Tracker is waiting for and has learned.
//
//	c, err := billing.NewClient(
//		billing.WithBaseURL(url),
//		billing.WithClientCredentials(id, secret),
//		billing.WithObserver(otelbilling.NewObserver()),
//	)
//
//	metrics, err := otelbilling.NewTrackerMetrics()
//	tracker := billing.NewTracker(c, billing.TrackerOptions{Observer: metrics})
//	err = metrics.Watch(tracker)
//
// Without options both use the global TracerProvider and MeterProvider (otel.SetTracerProvider,
// otel.SetMeterProvider); WithTracerProvider and WithMeterProvider give others.
package otelbilling

import (
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// ScopeName is the instrumentation scope of the spans and metrics this package makes.
const ScopeName = "github.com/billingsdk/billing-go/otelbilling"

// Attributes of the billing service, beside the semantic conventions' HTTP ones.
const (
	// AttrResponseCode is the service's response code ("0000", "0001", "2001", ...).
	AttrResponseCode = "billing.response_code"
	// AttrOutcomeUnknown is true on a call whose money movement was sent but whose result
	// is unknown (billing.ErrOutcomeUnknown): resolve it by status check, never resend.
	AttrOutcomeUnknown = "billing.outcome_unknown"
	// AttrRequestID is the service's id of the request, to quote to support.
	AttrRequestID = "billing.request_id"
	// AttrClientReference is the client reference of a money movement.
	AttrClientReference = "billing.client_reference"
	// AttrMovementKind is the kind of money movement (billing.Kind).
	AttrMovementKind = "billing.movement.kind"
	// AttrCallbackKind and AttrCallbackState describe a callback received.
	AttrCallbackKind  = "billing.callback.kind"
	AttrCallbackState = "billing.callback.state"
	// AttrStatusCheckResult is the state a status check answered, or "error".
	AttrStatusCheckResult = "billing.status_check.result"
	// AttrOutcomeState and AttrOutcomeSource describe a settled outcome.
	AttrOutcomeState  = "billing.outcome.state"
	AttrOutcomeSource = "billing.outcome.source"
	// AttrOperatorAction, AttrOperatorActor, AttrStateBefore and AttrStateAfter describe
	// an operator's action on a movement (billing.ActionObserver).
	AttrOperatorAction = "billing.operator.action"
	AttrOperatorActor  = "billing.operator.actor"
	AttrStateBefore    = "billing.movement.state_before"
	AttrStateAfter     = "billing.movement.state_after"
)

// Option configures NewObserver and NewTrackerMetrics.
type Option func(*config)

type config struct {
	tracerProvider trace.TracerProvider
	meterProvider  metric.MeterProvider
}

// WithTracerProvider makes spans with tp instead of the global TracerProvider.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(c *config) { c.tracerProvider = tp }
}

// WithMeterProvider makes metrics with mp instead of the global MeterProvider.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(c *config) { c.meterProvider = mp }
}

func newConfig(opts []Option) config {
	var c config
	for _, opt := range opts {
		opt(&c)
	}
	if c.tracerProvider == nil {
		c.tracerProvider = otel.GetTracerProvider()
	}
	if c.meterProvider == nil {
		c.meterProvider = otel.GetMeterProvider()
	}
	return c
}
