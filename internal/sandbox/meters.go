package sandbox

import (
	"encoding/json"
	"math"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// meterAggregations are the aggregations of a meter; SUM is the default (SPEC "Meter").
var meterAggregations = []string{"SUM", "COUNT", "MAX", "LAST"}

// What the spec leaves open of meters, decided by the sandbox: the default key
// of the quantity, and the longest idempotency key.
const (
	defaultMeterValueField       = "value"
	maxMeterIdempotencyKeyLength = 255
)

// meter is a usage meter as the wire shows it (SPEC "Meter").
type meter struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	EventName   string    `json:"eventName"`
	Aggregation string    `json:"aggregation"`
	ValueField  string    `json:"valueField"`
	Active      bool      `json:"active"`
	CreatedAt   timestamp `json:"createdAt"`
	UpdatedAt   timestamp `json:"updatedAt"`
}

// meterRecord is a meter with its events.
type meterRecord struct {
	meter
	events table[meterEvent] // in ingestion order
	byKey  map[string]string // idempotency key -> id of the event first recorded with it
}

// meterEvent is a usage event as the wire shows it (SPEC "Meter event").
type meterEvent struct {
	ID             string         `json:"id"`
	MeterID        string         `json:"meterId"`
	CustomerID     *string        `json:"customerId"`
	Value          float64        `json:"value"`
	IdempotencyKey *string        `json:"idempotencyKey"`
	Timestamp      timestamp      `json:"timestamp"`
	Metadata       map[string]any `json:"metadata"`
	CreatedAt      timestamp      `json:"createdAt"`
}

func (e *meterEvent) view() meterEvent { return *e }

// meterStore is the meters of the business.
type meterStore struct {
	table       table[meterRecord]
	byEventName map[string]string // eventName -> meter id; an event name is unique
}

func meterRoutes(s *Server) []route {
	return []route{
		{pattern: "POST /v1/meters", auth: authBilling, scope: ScopeMetersWrite, handler: s.createMeter},
		{pattern: "GET /v1/meters/{id}", auth: authBilling, scope: ScopeMetersRead, handler: s.getMeter},
		{pattern: "POST /v1/meters/{id}/events", auth: authBilling, scope: ScopeMetersWrite, handler: s.recordMeterEvent},
		{pattern: "GET /v1/meters/{id}/events", auth: authBilling, scope: ScopeMetersRead, handler: s.listMeterEvents},
	}
}

// meterNow is the sandbox's time cut to the milliseconds the wire shows, so a
// time read back from a record and sent as a list bound matches the record.
func (s *Server) meterNow() time.Time { return s.Now().Truncate(time.Millisecond) }

func (s *Server) createMeter(w http.ResponseWriter, r *http.Request) {
	f, err := decodeFields(r)
	if err != nil {
		writeError(w, err)
		return
	}
	m := meter{Aggregation: "SUM", ValueField: defaultMeterValueField, Active: true}
	m.Name = f.requiredString("name")
	m.EventName = f.requiredString("eventName")
	if aggregation, ok := f.enum("aggregation", meterAggregations...); ok {
		m.Aggregation = aggregation
	}
	if field, ok := f.stringWhere("valueField", "a non-blank key", func(s string) bool { return strings.TrimSpace(s) != "" }); ok {
		m.ValueField = field
	}
	if err := f.err(); err != nil {
		writeError(w, err)
		return
	}
	created, err := s.insertMeter(m)
	writeResult(w, http.StatusCreated, created, err)
}

func (s *Server) insertMeter(m meter) (meter, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, taken := s.meters.byEventName[m.EventName]; taken {
		return meter{}, conflictError("a meter with eventName %s already exists", m.EventName)
	}
	m.ID = newID("met_")
	m.CreatedAt = timestamp{s.meterNow()}
	m.UpdatedAt = m.CreatedAt
	if s.meters.byEventName == nil {
		s.meters.byEventName = make(map[string]string)
	}
	s.meters.byEventName[m.EventName] = m.ID
	s.meters.table.insert(m.ID, &meterRecord{meter: m, byKey: make(map[string]string)})
	return m, nil
}

func (s *Server) getMeter(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	rec, err := s.meterRecord(r.PathValue("id"))
	var m meter
	if err == nil {
		m = rec.meter
	}
	s.mu.Unlock()
	writeResult(w, http.StatusOK, m, err)
}

// meterRecord returns the meter id; call it with s.mu held.
func (s *Server) meterRecord(id string) (*meterRecord, error) {
	rec, ok := s.meters.table.get(id)
	if !ok {
		return nil, notFoundError("meter", id)
	}
	return rec, nil
}

// recordMeterEvent ingests an event. A repeat of an idempotency key already
// recorded on the meter is ignored: the answer is the first event, with HTTP
// 200 instead of 201, and nothing is counted again.
func (s *Server) recordMeterEvent(w http.ResponseWriter, r *http.Request) {
	f, err := decodeFields(r)
	if err != nil {
		writeError(w, err)
		return
	}
	ev := meterEvent{}
	nullableField(f, "customerId", f.nonEmptyString).applyTo(&ev.CustomerID)
	var hasValue bool
	ev.Value, hasValue = meterEventValue(f, "value")
	if happenedAt, ok := f.timestamp("timestamp"); ok {
		ev.Timestamp = timestamp{happenedAt.Truncate(time.Millisecond)}
	}
	nullableField(f, "idempotencyKey", func(name string) (string, bool) {
		return f.stringWhere(name, "a non-blank string of at most 255 characters", func(s string) bool {
			return strings.TrimSpace(s) != "" && len([]rune(s)) <= maxMeterIdempotencyKeyLength
		})
	}).applyTo(&ev.IdempotencyKey)
	ev.Metadata, _ = f.metadata("metadata")
	if err := f.err(); err != nil {
		writeError(w, err)
		return
	}

	stored, status, err := s.ingestMeterEvent(r.PathValue("id"), ev, hasValue)
	writeResult(w, status, stored, err)
}

// ingestMeterEvent stores ev on the meter and answers it with 201, or answers the
// event first recorded under its idempotency key with 200. Without hasValue the
// quantity comes from the meter's valueField; a zero Timestamp means now.
func (s *Server) ingestMeterEvent(meterID string, ev meterEvent, hasValue bool) (meterEvent, int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, err := s.meterRecord(meterID)
	if err != nil {
		return meterEvent{}, 0, err
	}
	if ev.CustomerID != nil {
		if _, ok := s.customers.table.get(*ev.CustomerID); !ok {
			return meterEvent{}, 0, notFoundError("customer", *ev.CustomerID)
		}
	}
	if ev.IdempotencyKey != nil {
		if id, seen := rec.byKey[*ev.IdempotencyKey]; seen {
			first, _ := rec.events.get(id)
			return *first, http.StatusOK, nil
		}
	}
	if !hasValue {
		if ev.Value, err = meterValueFromMetadata(rec.ValueField, ev.Metadata); err != nil {
			return meterEvent{}, 0, err
		}
	}
	ev.ID, ev.MeterID, ev.CreatedAt = newID("mte_"), rec.ID, timestamp{s.meterNow()}
	if ev.Timestamp.IsZero() {
		ev.Timestamp = ev.CreatedAt
	}
	rec.events.insert(ev.ID, &ev)
	if ev.IdempotencyKey != nil {
		rec.byKey[*ev.IdempotencyKey] = ev.ID
	}
	return ev, http.StatusCreated, nil
}

// meterEventValue reads an event's quantity: a JSON number, zero or more.
// Absent gives ok false; null and anything else are refused.
func meterEventValue(f *fields, name string) (float64, bool) {
	raw, present := f.raw[name]
	if !present {
		return 0, false
	}
	var v float64
	if isNull(raw) || json.Unmarshal(raw, &v) != nil || v < 0 || math.IsInf(v, 0) {
		f.fail(name, "%s must be a number, zero or more", name)
		return 0, false
	}
	return v, true
}

// meterValueFromMetadata is the quantity of an event that sent no value: the
// number under the meter's valueField in its metadata when the meter names a
// field other than value, and 1 otherwise (SPEC "Meter event": value default 1).
func meterValueFromMetadata(valueField string, metadata map[string]any) (float64, error) {
	if valueField == defaultMeterValueField {
		return 1, nil
	}
	raw, ok := metadata[valueField]
	if !ok {
		return 1, nil
	}
	n, isNumber := raw.(json.Number)
	v, err := n.Float64()
	if !isNumber || err != nil || v < 0 {
		return 0, validationError("metadata."+valueField, "metadata.%s must be a number, zero or more: the meter measures it", valueField)
	}
	return v, nil
}

// listMeterEvents answers the paged list envelope of the meter's events, the
// most recently ingested first. The spec does not show this body; the sandbox
// answers like every other list. customerId keeps one customer's events;
// from and to bound createdAt, inclusive.
func (s *Server) listMeterEvents(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	pq, err := parsePageQuery(q)
	if err != nil {
		writeError(w, err)
		return
	}
	from, to, err := meterEventWindow(q)
	if err != nil {
		writeError(w, err)
		return
	}
	customerID, byCustomer := q.Get("customerId"), q.Has("customerId")
	keep := func(e *meterEvent) bool {
		created := e.CreatedAt.Time
		return (!byCustomer || e.CustomerID != nil && *e.CustomerID == customerID) &&
			(from.IsZero() || !created.Before(from)) && (to.IsZero() || !created.After(to))
	}
	s.mu.Lock()
	rec, err := s.meterRecord(r.PathValue("id"))
	var p page[meterEvent]
	if err == nil {
		p, err = listPage(&rec.events, pq, keep, (*meterEvent).view)
	}
	s.mu.Unlock()
	writeResult(w, http.StatusOK, p, err)
}

// meterEventWindow reads the from and to query parameters: RFC 3339 times,
// from not after to; zero when absent.
func meterEventWindow(q url.Values) (from, to time.Time, err error) {
	parse := func(name string) (time.Time, error) {
		if !q.Has(name) {
			return time.Time{}, nil
		}
		t, err := time.Parse(time.RFC3339Nano, q.Get(name))
		if err != nil {
			return time.Time{}, validationError(name, "%s must be an RFC 3339 timestamp such as 2025-01-31T09:30:00Z", name)
		}
		return t, nil
	}
	if from, err = parse("from"); err != nil {
		return
	}
	if to, err = parse("to"); err != nil {
		return
	}
	if !from.IsZero() && !to.IsZero() && from.After(to) {
		err = validationError("from", "from must not be after to")
	}
	return
}
