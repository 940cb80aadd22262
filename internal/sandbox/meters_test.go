package sandbox

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// meterJSON and meterEventJSON decode a meter and an event as a client would.
type meterJSON struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	EventName   string `json:"eventName"`
	Aggregation string `json:"aggregation"`
	ValueField  string `json:"valueField"`
	Active      bool   `json:"active"`
	CreatedAt   string `json:"createdAt"`
	UpdatedAt   string `json:"updatedAt"`
}

type meterEventJSON struct {
	ID             string         `json:"id"`
	MeterID        string         `json:"meterId"`
	CustomerID     *string        `json:"customerId"`
	Value          float64        `json:"value"`
	IdempotencyKey *string        `json:"idempotencyKey"`
	Timestamp      string         `json:"timestamp"`
	Metadata       map[string]any `json:"metadata"`
	CreatedAt      string         `json:"createdAt"`
}

type meterEventPage struct {
	Items      []meterEventJSON `json:"items"`
	NextCursor string           `json:"nextCursor"`
	HasMore    bool             `json:"hasMore"`
}

func postMeter(tb testing.TB, s *Server, body any) meterJSON {
	tb.Helper()
	return decode[meterJSON](tb, serve(tb, s, http.MethodPost, "/v1/meters", basicHeader, body), http.StatusCreated).Data
}

func postMeterEvent(tb testing.TB, s *Server, meterID string, body any, status int) meterEventJSON {
	tb.Helper()
	return decode[meterEventJSON](tb, serve(tb, s, http.MethodPost, "/v1/meters/"+meterID+"/events", basicHeader, body), status).Data
}

func meterEvents(tb testing.TB, s *Server, meterID, query string) meterEventPage {
	tb.Helper()
	return decode[meterEventPage](tb, serve(tb, s, http.MethodGet, "/v1/meters/"+meterID+"/events?"+query, basicHeader, nil), http.StatusOK).Data
}

func TestCreateAndGetMeter(t *testing.T) {
	s := newTestServer(t, Config{})
	m := postMeter(t, s, map[string]any{"name": "API calls", "eventName": "api.call"})
	assert.Regexp(t, `^met_[0-9a-f]{24}$`, m.ID)
	assert.Equal(t, meterJSON{ID: m.ID, Name: "API calls", EventName: "api.call", Aggregation: "SUM", ValueField: "value",
		Active: true, CreatedAt: "2025-01-02T03:04:05.000Z", UpdatedAt: "2025-01-02T03:04:05.000Z"}, m, "the defaults")

	seats := postMeter(t, s, map[string]any{"name": "Seats", "eventName": "seats", "aggregation": "LAST", "valueField": "seats"})
	assert.Equal(t, "LAST", seats.Aggregation)
	assert.Equal(t, "seats", seats.ValueField)

	got := decode[meterJSON](t, serve(t, s, http.MethodGet, "/v1/meters/"+seats.ID, secretHeader, nil), http.StatusOK).Data
	assert.Equal(t, seats, got)
	requireError(t, serve(t, s, http.MethodGet, "/v1/meters/met_missing", basicHeader, nil), http.StatusNotFound, CodeNotFound, "", `meter "met_missing" not found`)
}

func TestMeterEventNameIsUnique(t *testing.T) {
	s := newTestServer(t, Config{})
	postMeter(t, s, map[string]any{"name": "API calls", "eventName": "api.call"})
	rec := serve(t, s, http.MethodPost, "/v1/meters", basicHeader, map[string]any{"name": "Other", "eventName": "api.call", "aggregation": "MAX"})
	requireError(t, rec, http.StatusConflict, CodeConflict, "", "a meter with eventName api.call already exists")
	assert.Equal(t, 1, s.meters.table.len(), "nothing created")
	postMeter(t, s, map[string]any{"name": "Other", "eventName": "API.CALL"}) // event names are exact
}

func TestCreateMeterRules(t *testing.T) {
	s := newTestServer(t, Config{})
	for _, tc := range []struct{ name, body, field, message string }{
		{"name missing", `{"eventName":"e"}`, "name", "name is required"},
		{"name blank", `{"name":"  ","eventName":"e"}`, "name", "name is required"},
		{"name null", `{"name":null,"eventName":"e"}`, "name", "name is required"},
		{"name number", `{"name":5,"eventName":"e"}`, "name", "name must be a string"},
		{"eventName missing", `{"name":"n"}`, "eventName", "eventName is required"},
		{"eventName blank", `{"name":"n","eventName":""}`, "eventName", "eventName is required"},
		{"aggregation lower case", `{"name":"n","eventName":"e","aggregation":"sum"}`, "aggregation", "one of SUM, COUNT, MAX, LAST"},
		{"aggregation unknown", `{"name":"n","eventName":"e","aggregation":"AVG"}`, "aggregation", "one of SUM, COUNT, MAX, LAST"},
		{"valueField blank", `{"name":"n","eventName":"e","valueField":" "}`, "valueField", "a non-blank key"},
		{"valueField number", `{"name":"n","eventName":"e","valueField":1}`, "valueField", "valueField must be a string"},
		{"not an object", `"meter"`, "", "JSON object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			requireError(t, serve(t, s, http.MethodPost, "/v1/meters", basicHeader, tc.body), http.StatusBadRequest, CodeValidation, tc.field, tc.message)
			assert.Zero(t, s.meters.table.len(), "nothing created")
		})
	}
}

func TestRecordMeterEvent(t *testing.T) {
	s := newTestServer(t, Config{})
	m := postMeter(t, s, map[string]any{"name": "API calls", "eventName": "api.call"})
	cust := creditCustomer(t, s)

	bare := postMeterEvent(t, s, m.ID, `{}`, http.StatusCreated)
	assert.Regexp(t, `^mte_[0-9a-f]{24}$`, bare.ID)
	assert.Equal(t, meterEventJSON{ID: bare.ID, MeterID: m.ID, Value: 1, Timestamp: "2025-01-02T03:04:05.000Z",
		CreatedAt: "2025-01-02T03:04:05.000Z"}, bare, "value 1 and the server's time by default")

	s.Advance(time.Minute)
	full := postMeterEvent(t, s, m.ID, map[string]any{"customerId": cust, "value": 2.5, "timestamp": "2025-01-01T12:00:00.123456Z",
		"idempotencyKey": "req-1", "metadata": map[string]any{"endpoint": "/search"}}, http.StatusCreated)
	assert.Equal(t, meterEventJSON{ID: full.ID, MeterID: m.ID, CustomerID: &cust, Value: 2.5, IdempotencyKey: creditStr("req-1"),
		Timestamp: "2025-01-01T12:00:00.123Z", Metadata: map[string]any{"endpoint": "/search"}, CreatedAt: "2025-01-02T03:05:05.000Z"}, full)

	zero := postMeterEvent(t, s, m.ID, `{"value":0,"customerId":null,"idempotencyKey":null}`, http.StatusCreated)
	assert.Zero(t, zero.Value, "a reading of zero is kept")
	assert.Nil(t, zero.CustomerID)
	assert.Len(t, meterEvents(t, s, m.ID, "").Items, 3)
}

func TestRepeatedIdempotencyKeyIsNotCountedTwice(t *testing.T) {
	s := newTestServer(t, Config{})
	m := postMeter(t, s, map[string]any{"name": "API calls", "eventName": "api.call"})
	other := postMeter(t, s, map[string]any{"name": "Jobs", "eventName": "job.run"})

	first := postMeterEvent(t, s, m.ID, `{"value":5,"idempotencyKey":"k-1"}`, http.StatusCreated)
	s.Advance(time.Second)
	again := postMeterEvent(t, s, m.ID, `{"value":7,"idempotencyKey":"k-1"}`, http.StatusOK)
	assert.Equal(t, first, again, "the repeat answers the first event, unchanged")
	postMeterEvent(t, s, m.ID, `{"value":5,"idempotencyKey":"k-2"}`, http.StatusCreated)
	postMeterEvent(t, s, other.ID, `{"value":5,"idempotencyKey":"k-1"}`, http.StatusCreated) // keys are per meter

	events := meterEvents(t, s, m.ID, "").Items
	require.Len(t, events, 2)
	assert.Equal(t, []string{"k-2", "k-1"}, []string{*events[0].IdempotencyKey, *events[1].IdempotencyKey})
}

func TestRecordMeterEventRules(t *testing.T) {
	s := newTestServer(t, Config{})
	m := postMeter(t, s, map[string]any{"name": "API calls", "eventName": "api.call"})
	for _, tc := range []struct{ name, body, field, message string }{
		{"value string", `{"value":"1"}`, "value", "value must be a number, zero or more"},
		{"value null", `{"value":null}`, "value", "value must be a number"},
		{"value negative", `{"value":-1}`, "value", "value must be a number, zero or more"},
		{"value boolean", `{"value":true}`, "value", "value must be a number"},
		{"timestamp shape", `{"timestamp":"yesterday"}`, "timestamp", "RFC 3339"},
		{"timestamp number", `{"timestamp":1700000000}`, "timestamp", "timestamp must be a string"},
		{"idempotencyKey blank", `{"idempotencyKey":""}`, "idempotencyKey", "a non-blank string of at most 255 characters"},
		{"idempotencyKey long", `{"idempotencyKey":"` + strings.Repeat("k", 256) + `"}`, "idempotencyKey", "at most 255"},
		{"idempotencyKey number", `{"idempotencyKey":7}`, "idempotencyKey", "idempotencyKey must be a string"},
		{"customerId blank", `{"customerId":" "}`, "customerId", "customerId must not be empty"},
		{"metadata nested", `{"metadata":{"a":[1]}}`, "metadata", "must be flat"},
		{"not an object", `[]`, "", "JSON object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			requireError(t, serve(t, s, http.MethodPost, "/v1/meters/"+m.ID+"/events", basicHeader, tc.body), http.StatusBadRequest, CodeValidation, tc.field, tc.message)
			assert.Empty(t, meterEvents(t, s, m.ID, "").Items, "nothing recorded")
		})
	}
	postMeterEvent(t, s, m.ID, `{"idempotencyKey":"`+strings.Repeat("é", 255)+`"}`, http.StatusCreated) // 255 characters, more bytes

	requireError(t, serve(t, s, http.MethodPost, "/v1/meters/met_missing/events", basicHeader, `{}`), http.StatusNotFound, CodeNotFound, "", `meter "met_missing"`)
	requireError(t, serve(t, s, http.MethodPost, "/v1/meters/"+m.ID+"/events", basicHeader, `{"customerId":"cust_missing"}`),
		http.StatusNotFound, CodeNotFound, "", `customer "cust_missing" not found`)
	assert.Len(t, meterEvents(t, s, m.ID, "").Items, 1)
}

func TestMeterValueFieldReadsTheQuantityFromMetadata(t *testing.T) {
	s := newTestServer(t, Config{})
	m := postMeter(t, s, map[string]any{"name": "Tokens", "eventName": "llm.tokens", "valueField": "tokens"})
	assert.Equal(t, 42.0, postMeterEvent(t, s, m.ID, `{"metadata":{"tokens":42,"model":"small"}}`, http.StatusCreated).Value)
	assert.Equal(t, 3.0, postMeterEvent(t, s, m.ID, `{"value":3,"metadata":{"tokens":42}}`, http.StatusCreated).Value, "an explicit value wins")
	assert.Equal(t, 1.0, postMeterEvent(t, s, m.ID, `{"metadata":{"model":"small"}}`, http.StatusCreated).Value, "no quantity: the default 1")
	requireError(t, serve(t, s, http.MethodPost, "/v1/meters/"+m.ID+"/events", basicHeader, `{"metadata":{"tokens":"many"}}`),
		http.StatusBadRequest, CodeValidation, "metadata.tokens", "metadata.tokens must be a number")
	requireError(t, serve(t, s, http.MethodPost, "/v1/meters/"+m.ID+"/events", basicHeader, `{"metadata":{"tokens":-4}}`),
		http.StatusBadRequest, CodeValidation, "metadata.tokens", "zero or more")
	assert.Len(t, meterEvents(t, s, m.ID, "").Items, 3)

	plain := postMeter(t, s, map[string]any{"name": "Calls", "eventName": "calls"})
	assert.Equal(t, 1.0, postMeterEvent(t, s, plain.ID, `{"metadata":{"value":9}}`, http.StatusCreated).Value,
		"with the default valueField the quantity is the value field itself")
}

func TestListMeterEventsFilters(t *testing.T) {
	s := newTestServer(t, Config{})
	m := postMeter(t, s, map[string]any{"name": "API calls", "eventName": "api.call"})
	ada, bob := creditCustomer(t, s), creditCustomer(t, s)
	var created []string
	for i := range 6 {
		cust := ada
		if i%2 == 1 {
			cust = bob
		}
		ev := postMeterEvent(t, s, m.ID, fmt.Sprintf(`{"customerId":%q,"value":%d}`, cust, i), http.StatusCreated)
		created = append(created, ev.CreatedAt)
		s.Advance(time.Hour)
	}
	values := func(p meterEventPage) []float64 {
		var vs []float64
		for _, e := range p.Items {
			vs = append(vs, e.Value)
		}
		return vs
	}
	assert.Equal(t, []float64{5, 4, 3, 2, 1, 0}, values(meterEvents(t, s, m.ID, "")), "the most recently ingested first")
	assert.Equal(t, []float64{4, 2, 0}, values(meterEvents(t, s, m.ID, "customerId="+ada)))
	window := url.Values{"from": {created[1]}, "to": {created[3]}}.Encode()
	assert.Equal(t, []float64{3, 2, 1}, values(meterEvents(t, s, m.ID, window)), "both bounds inclusive")
	assert.Equal(t, []float64{3, 1}, values(meterEvents(t, s, m.ID, window+"&customerId="+bob)))
	assert.Equal(t, []float64{5, 4}, values(meterEvents(t, s, m.ID, "from="+url.QueryEscape("2025-01-02T07:04:05+00:00"))), "any RFC 3339 offset")
	assert.Empty(t, meterEvents(t, s, m.ID, "customerId=cust_other").Items)

	first := meterEvents(t, s, m.ID, "limit=4")
	assert.Equal(t, []float64{5, 4, 3, 2}, values(first))
	require.True(t, first.HasMore)
	rest := meterEvents(t, s, m.ID, "limit=4&cursor="+first.NextCursor)
	assert.Equal(t, []float64{1, 0}, values(rest))
	assert.False(t, rest.HasMore)
}

func TestListMeterEventsRules(t *testing.T) {
	s := newTestServer(t, Config{})
	m := postMeter(t, s, map[string]any{"name": "API calls", "eventName": "api.call"})
	for query, field := range map[string]string{
		"from=yesterday": "from",
		"to=2025-13-01":  "to",
		"from=2025-01-03T00:00:00Z&to=2025-01-02T00:00:00Z": "from",
		"limit=0":      "limit",
		"cursor=bogus": "cursor",
	} {
		requireError(t, serve(t, s, http.MethodGet, "/v1/meters/"+m.ID+"/events?"+query, basicHeader, nil), http.StatusBadRequest, CodeValidation, field, field)
	}
	requireError(t, serve(t, s, http.MethodGet, "/v1/meters/met_missing/events", basicHeader, nil), http.StatusNotFound, CodeNotFound, "", "meter")
}

func TestMeterScopes(t *testing.T) {
	s := newTestServer(t, Config{Scopes: []string{ScopeMetersRead}})
	requireError(t, serve(t, s, http.MethodPost, "/v1/meters", basicHeader, `{"name":"n","eventName":"e"}`), http.StatusForbidden, CodeKeysMismatch, "", ScopeMetersWrite)
	requireError(t, serve(t, s, http.MethodPost, "/v1/meters/met_1/events", basicHeader, `{}`), http.StatusForbidden, CodeKeysMismatch, "", ScopeMetersWrite)
	requireError(t, serve(t, s, http.MethodGet, "/v1/meters/met_1", basicHeader, nil), http.StatusNotFound, CodeNotFound, "", "meter")

	writeOnly := newTestServer(t, Config{Scopes: []string{ScopeMetersWrite}})
	requireError(t, serve(t, writeOnly, http.MethodGet, "/v1/meters/met_1", basicHeader, nil), http.StatusForbidden, CodeKeysMismatch, "", ScopeMetersRead)
	requireError(t, serve(t, writeOnly, http.MethodGet, "/v1/meters/met_1/events", basicHeader, nil), http.StatusForbidden, CodeKeysMismatch, "", ScopeMetersRead)
}

func TestMeterFixturesMatchTheSandbox(t *testing.T) {
	s := newTestServer(t, Config{})
	cust := creditCustomer(t, s)
	rec := serve(t, s, http.MethodPost, "/v1/meters", basicHeader, `{"name":"API calls","eventName":"api.call","aggregation":"SUM"}`)
	requireWireShapeOf(t, "meters/meter.json", rec.Body.Bytes())
	m := decode[meterJSON](t, rec, http.StatusCreated).Data
	ev := serve(t, s, http.MethodPost, "/v1/meters/"+m.ID+"/events", basicHeader,
		fmt.Sprintf(`{"customerId":%q,"value":3,"idempotencyKey":"req-1","metadata":{"endpoint":"/search"}}`, cust))
	requireWireShapeOf(t, "meters/event.json", ev.Body.Bytes())
	postMeterEvent(t, s, m.ID, fmt.Sprintf(`{"customerId":%q,"value":1,"idempotencyKey":"req-2","metadata":{"endpoint":"/items"}}`, cust), http.StatusCreated)
	requireWireShapeOf(t, "meters/events_page1.json", serve(t, s, http.MethodGet, "/v1/meters/"+m.ID+"/events?limit=1", basicHeader, nil).Body.Bytes())
	requireWireShapeOf(t, "meters/meter_last.json", serve(t, s, http.MethodPost, "/v1/meters", basicHeader,
		`{"name":"Seats in use","eventName":"seats.in_use","aggregation":"LAST","valueField":"seats"}`).Body.Bytes())

	bare := postMeter(t, s, map[string]any{"name": "Jobs", "eventName": "job.run"})
	postMeterEvent(t, s, bare.ID, `{"value":4}`, http.StatusCreated)
	requireWireShapeOf(t, "meters/events_page2.json", serve(t, s, http.MethodGet, "/v1/meters/"+bare.ID+"/events", basicHeader, nil).Body.Bytes())
}

// BenchmarkSandboxRecordMeterEvent ingests events with distinct idempotency keys
// into one meter from parallel goroutines.
func BenchmarkSandboxRecordMeterEvent(b *testing.B) {
	s := newTestServer(b, Config{})
	m := postMeter(b, s, map[string]any{"name": "API calls", "eventName": "api.call"})
	var n atomic.Int64
	benchmarkRequests(b, s, http.StatusCreated, func() *http.Request {
		body := fmt.Sprintf(`{"value":2,"idempotencyKey":"k-%d","metadata":{"region":"accra"}}`, n.Add(1))
		return authorized(http.MethodPost, "/v1/meters/"+m.ID+"/events", strings.NewReader(body))
	})
}
