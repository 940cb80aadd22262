package otelbilling

import (
	"context"
	"errors"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.39.0"
	"go.opentelemetry.io/otel/trace"

	billing "github.com/billingsdk/billing-go"
)

// Observer is a billing.Observer that traces a Client with OpenTelemetry. Each call is a
// span named "billing {method} {route}" (kind internal) under the caller's span, and each
// attempt of it a child span named "{method} {route}" (kind client), both attributed by
// the HTTP client semantic conventions: http.request.method, url.template,
// server.address, server.port, http.response.status_code, http.request.resend_count and
// error.type; plus billing.response_code, billing.outcome_unknown, billing.request_id
// and, for money movements, billing.client_reference. A transport below the Client that
// is itself instrumented (otelhttp) nests its spans under the attempt's.
//
// A span carries the route template, never the request's path or query (no url.full,
// url.path or url.query): ids, phone and account numbers and emails stay out. Every text
// it sets (status descriptions, the client reference) passes through billing.Scrub.
type Observer struct {
	tracer trace.Tracer
}

var _ billing.Observer = (*Observer)(nil)

// NewObserver returns an Observer that makes spans with the global TracerProvider, or the
// one WithTracerProvider gives. Install it with billing.WithObserver.
func NewObserver(opts ...Option) *Observer {
	c := newConfig(opts)
	return &Observer{tracer: c.tracerProvider.Tracer(ScopeName, trace.WithSchemaURL(semconv.SchemaURL))}
}

// CallStart starts the call's span.
func (o *Observer) CallStart(ctx context.Context, call *billing.CallInfo) context.Context {
	attrs := make([]attribute.KeyValue, 0, 6)
	attrs = append(attrs, requestAttrs(call)...)
	if call.ClientReference != "" {
		attrs = append(attrs, attribute.String(AttrClientReference, billing.Scrub(call.ClientReference)))
	}
	ctx, _ = o.tracer.Start(ctx, "billing "+call.Method+" "+call.Route,
		trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	return ctx
}

// CallEnd ends the call's span with its result.
func (o *Observer) CallEnd(ctx context.Context, call *billing.CallInfo) {
	span := trace.SpanFromContext(ctx)
	attrs := []attribute.KeyValue{attribute.Bool(AttrOutcomeUnknown, call.OutcomeUnknown)}
	if call.StatusCode > 0 {
		attrs = append(attrs, semconv.HTTPResponseStatusCode(call.StatusCode))
	}
	if call.ResponseCode != "" {
		attrs = append(attrs, attribute.String(AttrResponseCode, string(call.ResponseCode)))
	}
	if call.RequestID != "" {
		attrs = append(attrs, attribute.String(AttrRequestID, call.RequestID))
	}
	if call.Attempts > 1 {
		attrs = append(attrs, semconv.HTTPRequestResendCount(call.Attempts-1))
	}
	if call.Err != nil {
		kind := errorType(call.StatusCode, call.Err)
		if call.OutcomeUnknown {
			kind = "billing.outcome_unknown"
		}
		attrs = append(attrs, semconv.ErrorTypeKey.String(kind))
		span.SetStatus(codes.Error, billing.Scrub(call.Err.Error()))
	}
	span.SetAttributes(attrs...)
	span.End()
}

// AttemptStart starts the attempt's span under the call's.
func (o *Observer) AttemptStart(ctx context.Context, a *billing.AttemptInfo) context.Context {
	attrs := requestAttrs(a.Call)
	if a.Attempt > 1 {
		attrs = append(attrs, semconv.HTTPRequestResendCount(a.Attempt-1))
	}
	ctx, _ = o.tracer.Start(ctx, a.Call.Method+" "+a.Call.Route,
		trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	return ctx
}

// AttemptEnd ends the attempt's span with its response status or transport error.
func (o *Observer) AttemptEnd(ctx context.Context, a *billing.AttemptInfo) {
	span := trace.SpanFromContext(ctx)
	if a.StatusCode > 0 {
		span.SetAttributes(semconv.HTTPResponseStatusCode(a.StatusCode))
	}
	if a.RequestID != "" {
		span.SetAttributes(attribute.String(AttrRequestID, a.RequestID))
	}
	// The conventions make a client span an error from status 400 up, or without a
	// whole response.
	if a.StatusCode >= 400 || a.Err != nil {
		span.SetAttributes(semconv.ErrorTypeKey.String(errorType(a.StatusCode, a.Err)))
		msg := strconv.Itoa(a.StatusCode)
		if a.Err != nil {
			msg = billing.Scrub(a.Err.Error())
		}
		span.SetStatus(codes.Error, msg)
	}
	span.End()
}

// requestAttrs are the attributes known before a request is sent.
func requestAttrs(call *billing.CallInfo) []attribute.KeyValue {
	return append(make([]attribute.KeyValue, 0, 6),
		semconv.HTTPRequestMethodKey.String(call.Method),
		semconv.URLTemplate(call.Route),
		semconv.ServerAddress(call.ServerAddress),
		semconv.ServerPort(call.ServerPort),
	)
}

// errorType names a failure in few enough values to group by: the HTTP status from 400
// up, "timeout" or "canceled" when a deadline or context ended it, billing.APIError for a
// failure the service reported under a 2xx, and otherwise the type of the innermost
// error that has one of its own (the wrappers and plain messages around it say nothing
// of the kind), or _OTHER.
func errorType(status int, err error) string {
	var timeout interface{ Timeout() bool }
	var apiErr *billing.APIError
	switch {
	case status >= 400:
		return strconv.Itoa(status)
	case err == nil:
		return semconv.ErrorTypeOther.Value.AsString()
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &timeout) && timeout.Timeout():
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.As(err, &apiErr):
		return "billing.APIError"
	}
	kind := semconv.ErrorTypeOther.Value.AsString()
	for ; err != nil; err = errors.Unwrap(err) {
		switch t := semconv.ErrorType(err).Value.AsString(); t {
		case "*fmt.wrapError", "*fmt.wrapErrors", "*errors.errorString", "*errors.joinError":
		default:
			kind = t
		}
	}
	return kind
}
