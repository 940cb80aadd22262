package billing

import (
	"context"
	"fmt"
	"iter"
	"math"
	"time"
)

// MetersService defines usage meters and records usage events.
type MetersService service

// MeterAggregation says how a meter folds its events into one quantity.
type MeterAggregation string

// The aggregations of a meter. SUM is the default.
const (
	// MeterAggregationSum adds the values of all events.
	MeterAggregationSum MeterAggregation = "SUM"
	// MeterAggregationCount counts the events, whatever their values.
	MeterAggregationCount MeterAggregation = "COUNT"
	// MeterAggregationMax takes the largest value.
	MeterAggregationMax MeterAggregation = "MAX"
	// MeterAggregationLast takes the value of the most recently ingested event, whatever
	// the event's own timestamp says.
	MeterAggregationLast MeterAggregation = "LAST"
)

var meterAggregations = []MeterAggregation{MeterAggregationSum, MeterAggregationCount, MeterAggregationMax, MeterAggregationLast}

// maxIdempotencyKeyLength bounds an event's idempotency key; the service names no limit, the
// SDK and its sandbox agree on this one.
const maxIdempotencyKeyLength = 255

// Meter is a usage meter.
type Meter struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// EventName is unique among the business's meters.
	EventName   string           `json:"eventName"`
	Aggregation MeterAggregation `json:"aggregation"`
	// ValueField is the key of the event payload that holds the quantity ("value"
	// unless the meter was created with another).
	ValueField string    `json:"valueField"`
	Active     bool      `json:"active"`
	CreatedAt  time.Time `json:"createdAt,omitzero"`
	UpdatedAt  time.Time `json:"updatedAt,omitzero"`
}

// MeterCreateParams defines a meter.
type MeterCreateParams struct {
	// Name is shown to people. Required.
	Name string `json:"name"`
	// EventName identifies the meter's events; it must be unique. Required.
	EventName string `json:"eventName"`
	// Aggregation defaults to SUM.
	Aggregation MeterAggregation `json:"aggregation,omitempty"`
	// ValueField is the key of the event payload holding the quantity; it defaults to
	// "value". With another key, an event that sends no Value is measured by that key
	// of its Metadata.
	ValueField string `json:"valueField,omitempty"`
}

func (p *MeterCreateParams) validate() error {
	if p == nil {
		return invalid("params", "are required")
	}
	return firstError(
		required("name", p.Name),
		required("eventName", p.EventName),
		oneOf("aggregation", p.Aggregation, meterAggregations...),
		notBlank("valueField", p.ValueField),
	)
}

// MeterEvent is one recorded usage event.
type MeterEvent struct {
	ID         string `json:"id"`
	MeterID    string `json:"meterId"`
	CustomerID string `json:"customerId,omitempty"`
	// Value is the quantity the event measured.
	Value          float64  `json:"value"`
	IdempotencyKey string   `json:"idempotencyKey,omitempty"`
	Metadata       Metadata `json:"metadata,omitempty"`
	// Timestamp is when the usage happened, as the sender said; the service's time of
	// ingestion when the sender said nothing.
	Timestamp time.Time `json:"timestamp,omitzero"`
	// CreatedAt is when the service ingested the event. Lists are ordered by it, and
	// their from and to filters compare it.
	CreatedAt time.Time `json:"createdAt,omitzero"`
}

// MeterEventParams records a usage event. Every field is optional.
type MeterEventParams struct {
	CustomerID string `json:"customerId,omitempty"`
	// Value is the quantity, zero or more. Left unset, the service records 1 (or, on a
	// meter with another ValueField, the number under that key of Metadata). It is a
	// Nullable so that a reading of zero can be sent; Null is refused.
	Value Nullable[float64] `json:"value,omitzero"`
	// Timestamp is when the usage happened; zero means the service's time of ingestion.
	Timestamp time.Time `json:"timestamp,omitzero"`
	// IdempotencyKey makes the event safe to send again: the service ignores a repeat
	// of a key it has seen on the meter, and the SDK retries the request like a read.
	// At most 255 characters.
	IdempotencyKey string   `json:"idempotencyKey,omitempty"`
	Metadata       Metadata `json:"metadata,omitzero"`
}

func (p *MeterEventParams) validate() error {
	if p == nil {
		return nil
	}
	var valueErr error
	if p.Value.IsNull() {
		valueErr = invalid("value", "must be a number; leave it unset for the default of 1")
	} else if v, ok := p.Value.Get(); ok && (math.IsNaN(v) || math.IsInf(v, 0) || v < 0) {
		valueErr = invalid("value", "must be a finite number, zero or more")
	}
	return firstError(
		notBlank("customerId", p.CustomerID),
		valueErr,
		notBlank("idempotencyKey", p.IdempotencyKey),
		maxLength("idempotencyKey", p.IdempotencyKey, maxIdempotencyKeyLength),
		p.Metadata.validate("metadata"),
	)
}

// MeterEventListParams filters the events of a meter.
type MeterEventListParams struct {
	ListParams
	// CustomerID keeps the events of that customer.
	CustomerID string `url:"customerId,omitempty"`
	// From keeps events ingested at or after it; zero for no lower bound.
	From time.Time `url:"from,omitempty" layout:"2006-01-02T15:04:05.999999999Z07:00"`
	// To keeps events ingested at or before it; zero for no upper bound.
	To time.Time `url:"to,omitempty" layout:"2006-01-02T15:04:05.999999999Z07:00"`
}

func (p *MeterEventListParams) validate() error {
	return firstError(p.ListParams.validate(), eventWindow(p.From, p.To))
}

// eventWindow checks that a from-to window is not reversed; a zero end is open.
func eventWindow(from, to time.Time) error {
	if !from.IsZero() && !to.IsZero() && from.After(to) {
		return invalid("from", "must not be after to")
	}
	return nil
}

// Create defines a meter.
func (s *MetersService) Create(ctx context.Context, p *MeterCreateParams) (*Meter, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	return send[Meter](ctx, s.client, epMeterCreate.op(p))
}

// Get returns the meter with the given id.
func (s *MetersService) Get(ctx context.Context, id string) (*Meter, error) {
	return send[Meter](ctx, s.client, epMeterGet.op(nil, seg("id", id)))
}

// RecordEvent records a usage event on a meter; p may be nil for one unit now. A repeat
// of an idempotency key already seen on the meter is not counted again: the service
// answers with the event first recorded under it.
//
// With an IdempotencyKey the request is retried like a read (on 5xx, timeouts, reset
// connections), since the service drops the repeats. Without one it is not retried once
// it may have reached the service, so an event is never counted twice, and a lost answer
// is an error matching ErrOutcomeUnknown: list the meter's Events to see whether it was
// recorded.
func (s *MetersService) RecordEvent(ctx context.Context, meterID string, p *MeterEventParams) (*MeterEvent, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	switch {
	case p == nil:
		return send[MeterEvent](ctx, s.client, epMeterEventRecord.op(struct{}{}, seg("meterId", meterID)))
	case p.IdempotencyKey != "":
		return send[MeterEvent](ctx, s.client, epMeterEventRecordKeyed.op(p, seg("meterId", meterID)))
	}
	return send[MeterEvent](ctx, s.client, epMeterEventRecord.op(p, seg("meterId", meterID)))
}

// EventsPage returns one page of a meter's events, the most recently ingested first.
func (s *MetersService) EventsPage(ctx context.Context, meterID string, p *MeterEventListParams) (*Page[MeterEvent], error) {
	if p == nil {
		p = &MeterEventListParams{}
	}
	if err := p.validate(); err != nil {
		return nil, err
	}
	return send[Page[MeterEvent]](ctx, s.client, epMeterEventList.op(p, seg("meterId", meterID)))
}

// Events returns every event of a meter matching p, the most recently ingested first,
// fetching pages lazily as the loop advances. p is not modified.
func (s *MetersService) Events(ctx context.Context, meterID string, p *MeterEventListParams) iter.Seq2[*MeterEvent, error] {
	return listAll(ctx, p, func(ctx context.Context, p *MeterEventListParams) (*Page[MeterEvent], error) {
		return s.EventsPage(ctx, meterID, p)
	})
}

// MeterUsage is the aggregate of a meter's events over a period.
type MeterUsage struct {
	MeterID     string
	CustomerID  string // empty: every customer
	Aggregation MeterAggregation
	// From and To are the period asked for; a zero end is open.
	From, To time.Time
	// Value is the aggregate: the sum, the count, the largest value, or the value of the
	// most recently ingested event. It is 0 when no event falls in the period.
	Value float64
	// Events is how many events fell in the period.
	Events int
}

// Usage computes a meter's usage over a period under the meter's aggregation: the events
// ingested from from to to (inclusive; a zero end is open), of customerID or, when it
// is empty, of every customer. It reads the meter, then walks its events page by page.
//
// This is a convenience the service does not offer itself; for a large period it costs
// one request per 100 events.
func (s *MetersService) Usage(ctx context.Context, meterID, customerID string, from, to time.Time) (*MeterUsage, error) {
	if err := eventWindow(from, to); err != nil {
		return nil, err
	}
	meter, err := send[Meter](ctx, s.client, epMeterGet.op(nil, seg("meterId", meterID)))
	if err != nil {
		return nil, err
	}
	if meter.Aggregation == "" {
		meter.Aggregation = MeterAggregationSum // the service's default
	}
	if err := oneOf("aggregation", meter.Aggregation, meterAggregations...); err != nil {
		return nil, fmt.Errorf("billing: meter %s: aggregation %q is not one this SDK can compute", meterID, meter.Aggregation)
	}
	usage := &MeterUsage{MeterID: meterID, CustomerID: customerID, Aggregation: meter.Aggregation, From: from, To: to}
	var agg meterAggregator
	params := &MeterEventListParams{ListParams: ListParams{Limit: 100}, CustomerID: customerID, From: from, To: to}
	for ev, err := range s.Events(ctx, meterID, params) {
		if err != nil {
			return nil, err
		}
		agg.add(ev)
	}
	usage.Value, usage.Events = agg.result(meter.Aggregation), agg.count
	return usage, nil
}

// meterAggregator folds events, met newest-ingested first, into every aggregation at once.
type meterAggregator struct {
	count    int
	sum, max float64
	last     float64
	lastAt   time.Time
}

func (a *meterAggregator) add(ev *MeterEvent) {
	if a.count == 0 || ev.Value > a.max {
		a.max = ev.Value
	}
	// The list comes newest first, so among events ingested in the same instant the
	// first one met is the latest; a strictly later CreatedAt wins whatever the order.
	if a.count == 0 || ev.CreatedAt.After(a.lastAt) {
		a.last, a.lastAt = ev.Value, ev.CreatedAt
	}
	a.sum += ev.Value
	a.count++
}

func (a *meterAggregator) result(agg MeterAggregation) float64 {
	switch agg {
	case MeterAggregationCount:
		return float64(a.count)
	case MeterAggregationMax:
		return a.max
	case MeterAggregationLast:
		return a.last
	}
	return a.sum

}
