package billing

import (
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMetersCreateAndGet(t *testing.T) {
	c, mock := newMockClient(t)
	var got map[string]any
	mock.RegisterResponder(http.MethodPost, mockBaseURL+"/v1/meters", func(r *http.Request) (*http.Response, error) {
		got = requestBody(t, r)
		if got["aggregation"] == "LAST" {
			return fixtureResponder(t, 201, "meters/meter_last.json")(r)
		}
		return fixtureResponder(t, 201, "meters/meter.json")(r)
	})
	mock.RegisterResponder(http.MethodGet, mockBaseURL+"/v1/meters/met_7e6d5c4b3a2918f7e6d5c4b3", fixtureResponder(t, 200, "meters/meter.json"))

	m, err := c.Meters.Create(ctx(), &MeterCreateParams{Name: "API calls", EventName: "api.call"})
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"name": "API calls", "eventName": "api.call"}, got, "defaults are left to the service")
	want := &Meter{
		ID: "met_7e6d5c4b3a2918f7e6d5c4b3", Name: "API calls", EventName: "api.call", Aggregation: MeterAggregationSum,
		ValueField: "value", Active: true,
		CreatedAt: time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC), UpdatedAt: time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC),
	}
	assert.Equal(t, want, m)

	seats, err := c.Meters.Create(ctx(), &MeterCreateParams{Name: "Seats in use", EventName: "seats.in_use", Aggregation: MeterAggregationLast, ValueField: "seats"})
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"name": "Seats in use", "eventName": "seats.in_use", "aggregation": "LAST", "valueField": "seats"}, got)
	assert.Equal(t, MeterAggregationLast, seats.Aggregation)
	assert.Equal(t, "seats", seats.ValueField)

	m, err = c.Meters.Get(ctx(), "met_7e6d5c4b3a2918f7e6d5c4b3")
	require.NoError(t, err)
	assert.Equal(t, want, m)
}

func TestMetersCreateConflictOnEventName(t *testing.T) {
	c, mock := newMockClient(t)
	mock.RegisterResponder(http.MethodPost, mockBaseURL+"/v1/meters", fixtureResponder(t, 409, "errors/conflict.json"))
	_, err := c.Meters.Create(ctx(), &MeterCreateParams{Name: "API calls", EventName: "api.call"})
	require.ErrorIs(t, err, ErrConflict)
}

func TestMetersRecordEventSendsTheBodyAndDecodesTheEvent(t *testing.T) {
	c, mock := newMockClient(t)
	var got map[string]any
	mock.RegisterResponder(http.MethodPost, mockBaseURL+"/v1/meters/met_1/events", func(r *http.Request) (*http.Response, error) {
		got = requestBody(t, r)
		return fixtureResponder(t, 201, "meters/event.json")(r)
	})

	ev, err := c.Meters.RecordEvent(ctx(), "met_1", &MeterEventParams{
		CustomerID: "cust_8f3a2b1c9d0e4f5a6b7c8d9e", Value: Value(3.0), IdempotencyKey: "req-1",
		Timestamp: time.Date(2026, 11, 21, 9, 30, 0, 0, time.UTC), Metadata: Metadata{"endpoint": "/search"},
	})
	require.NoError(t, err)
	assert.Equal(t, map[string]any{
		"customerId": "cust_8f3a2b1c9d0e4f5a6b7c8d9e", "value": float64(3), "idempotencyKey": "req-1",
		"timestamp": "2026-11-21T09:30:00Z", "metadata": map[string]any{"endpoint": "/search"},
	}, got)
	assert.Equal(t, &MeterEvent{
		ID: "mte_0f1e2d3c4b5a69788796a5b4", MeterID: "met_7e6d5c4b3a2918f7e6d5c4b3", CustomerID: "cust_8f3a2b1c9d0e4f5a6b7c8d9e",
		Value: 3, IdempotencyKey: "req-1", Metadata: Metadata{"endpoint": "/search"},
		Timestamp: time.Date(2026, 11, 21, 9, 30, 0, 0, time.UTC), CreatedAt: time.Date(2026, 11, 21, 9, 30, 0, 250e6, time.UTC),
	}, ev)

	_, err = c.Meters.RecordEvent(ctx(), "met_1", nil)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{}, got, "no params: an empty object, the service's defaults")

	_, err = c.Meters.RecordEvent(ctx(), "met_1", &MeterEventParams{Value: Value(0.0)})
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"value": float64(0)}, got, "a reading of zero is sent")
}

// failOnce answers 500 to the first request and the fixture after it.
func failOnce(t *testing.T, fixtureName string) httpmock.Responder {
	calls := 0
	return func(r *http.Request) (*http.Response, error) {
		calls++
		if calls == 1 {
			return httpmock.NewStringResponse(500, `{"success":false,"message":"internal error","code":"internal_error"}`), nil
		}
		return fixtureResponder(t, 201, fixtureName)(r)
	}
}

func TestMetersRecordEventIsRetriedOnlyWithAnIdempotencyKey(t *testing.T) {
	t.Run("with a key", func(t *testing.T) {
		c, mock := newMockClient(t, WithRetry(3, 0, 0))
		var keys []any
		responder := failOnce(t, "meters/event.json")
		mock.RegisterResponder(http.MethodPost, mockBaseURL+"/v1/meters/met_1/events", func(r *http.Request) (*http.Response, error) {
			keys = append(keys, requestBody(t, r)["idempotencyKey"])
			return responder(r)
		})
		ev, err := c.Meters.RecordEvent(ctx(), "met_1", &MeterEventParams{IdempotencyKey: "req-1"})
		require.NoError(t, err)
		assert.Equal(t, "mte_0f1e2d3c4b5a69788796a5b4", ev.ID)
		assert.Equal(t, []any{"req-1", "req-1"}, keys, "the same body, key included, is sent again")
	})
	t.Run("without a key", func(t *testing.T) {
		c, mock := newMockClient(t, WithRetry(3, 0, 0))
		mock.RegisterResponder(http.MethodPost, mockBaseURL+"/v1/meters/met_1/events", failOnce(t, "meters/event.json"))
		_, err := c.Meters.RecordEvent(ctx(), "met_1", &MeterEventParams{Value: Value(2.0)})
		var apiErr *APIError
		require.ErrorAs(t, err, &apiErr)
		assert.Equal(t, 500, apiErr.StatusCode)
		assert.Equal(t, 1, mock.GetTotalCallCount(), "it could be counted twice")
		assert.NotErrorIs(t, err, ErrOutcomeUnknown, "an event is not a money movement")
	})
}

func TestMetersEventsWalksPagesWithTheFilters(t *testing.T) {
	c, mock := newMockClient(t)
	var queries []string
	mock.RegisterResponder(http.MethodGet, mockBaseURL+"/v1/meters/met_1/events", pagedResponder(t, "meters/events_page1.json", "meters/events_page2.json", &queries))

	from := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
	to := time.Date(2026, 11, 21, 10, 0, 0, 500e6, time.FixedZone("GMT+1", 3600))
	params := &MeterEventListParams{ListParams: ListParams{Limit: 2}, CustomerID: "cust_8f3a2b1c9d0e4f5a6b7c8d9e", From: from, To: to}
	var ids []string
	for ev, err := range c.Meters.Events(ctx(), "met_1", params) {
		require.NoError(t, err)
		ids = append(ids, ev.ID)
	}
	assert.Equal(t, []string{"mte_3", "mte_2", "mte_1"}, ids)
	require.Len(t, queries, 2)
	assert.Equal(t, "customerId=cust_8f3a2b1c9d0e4f5a6b7c8d9e&from=2026-11-21T09%3A00%3A00Z&limit=2&to=2026-11-21T10%3A00%3A00.5%2B01%3A00", queries[0],
		"times keep their fraction and offset")
	assert.Contains(t, queries[1], "cursor=bXRlXzI")
	assert.Equal(t, from, params.From, "params untouched")
	assert.Empty(t, params.Cursor)

	page, err := c.Meters.EventsPage(ctx(), "met_1", nil)
	require.NoError(t, err)
	assert.Equal(t, "", queries[len(queries)-1], "no filters, no query")
	assert.Equal(t, 7.5, page.Items[1].Value)
	assert.True(t, page.HasMore)
}

func TestMetersUsageUnderEachAggregation(t *testing.T) {
	// The fixture's events, newest ingested first: mte_3 (1, timestamp 09:20), mte_2 (7.5,
	// timestamp 09:40), mte_1 (4, timestamp 09:50). Timestamps run against ingestion on purpose.
	for agg, want := range map[MeterAggregation]float64{
		MeterAggregationSum:   12.5,
		MeterAggregationCount: 3,
		MeterAggregationMax:   7.5,
		MeterAggregationLast:  1, // mte_3 was ingested last, though its timestamp is the earliest
		"":                    12.5,
	} {
		name := string(agg)
		if name == "" {
			name = "absent means SUM"
		}
		t.Run(name, func(t *testing.T) {
			c, mock := newMockClient(t)
			mock.RegisterResponder(http.MethodGet, mockBaseURL+"/v1/meters/met_1", func(r *http.Request) (*http.Response, error) {
				return httpmock.NewStringResponse(200, `{"success":true,"data":{"id":"met_1","aggregation":"`+string(agg)+`"}}`), nil
			})
			var queries []string
			mock.RegisterResponder(http.MethodGet, mockBaseURL+"/v1/meters/met_1/events", pagedResponder(t, "meters/events_page1.json", "meters/events_page2.json", &queries))
			from := time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)
			usage, err := c.Meters.Usage(ctx(), "met_1", "cust_1", from, time.Time{})
			require.NoError(t, err)
			assert.Equal(t, want, usage.Value)
			assert.Equal(t, 3, usage.Events)
			assert.Equal(t, "cust_1", usage.CustomerID)
			assert.Equal(t, from, usage.From)
			assert.True(t, usage.To.IsZero())
			assert.Equal(t, "customerId=cust_1&from=2026-11-21T00%3A00%3A00Z&limit=100", queries[0], "an open end is not sent")
		})
	}
}

func TestMeterAggregatorLastPrefersTheLaterIngestion(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var a meterAggregator
	// Met newest first, but a page boundary or clock skew could put an older ingestion
	// first: the later CreatedAt still wins; equal CreatedAt keeps the first met.
	a.add(&MeterEvent{Value: 1, CreatedAt: at})
	a.add(&MeterEvent{Value: 2, CreatedAt: at.Add(time.Second)})
	a.add(&MeterEvent{Value: 3, CreatedAt: at.Add(time.Second)})
	a.add(&MeterEvent{Value: -5, CreatedAt: at.Add(-time.Hour)})
	assert.Equal(t, 2.0, a.result(MeterAggregationLast))
	assert.Equal(t, 3.0, a.result(MeterAggregationMax))
	assert.Equal(t, 1.0, a.result(MeterAggregationSum))
	assert.Equal(t, 4.0, a.result(MeterAggregationCount))

	var empty meterAggregator
	for _, agg := range meterAggregations {
		assert.Zero(t, empty.result(agg), "no events: %s is 0", agg)
	}
}

func TestMetersUsageRefusesAnAggregationItCannotCompute(t *testing.T) {
	c, mock := newMockClient(t)
	mock.RegisterResponder(http.MethodGet, mockBaseURL+"/v1/meters/met_1", httpmock.NewStringResponder(200, `{"success":true,"data":{"id":"met_1","aggregation":"AVG"}}`))
	_, err := c.Meters.Usage(ctx(), "met_1", "", time.Time{}, time.Time{})
	require.ErrorContains(t, err, `aggregation "AVG" is not one this SDK can compute`)
	assert.Equal(t, 1, mock.GetTotalCallCount(), "no events are read")
}

func TestMetersUsageStopsAtAnError(t *testing.T) {
	c, mock := newMockClient(t)
	mock.RegisterResponder(http.MethodGet, mockBaseURL+"/v1/meters/met_1", fixtureResponder(t, 200, "meters/meter.json"))
	mock.RegisterResponder(http.MethodGet, mockBaseURL+"/v1/meters/met_1/events", func(r *http.Request) (*http.Response, error) {
		if r.URL.Query().Get("cursor") == "" {
			return fixtureResponder(t, 200, "meters/events_page1.json")(r)
		}
		return fixtureResponder(t, 404, "errors/not_found.json")(r)
	})
	usage, err := c.Meters.Usage(ctx(), "met_1", "", time.Time{}, time.Time{})
	require.ErrorIs(t, err, ErrNotFound)
	assert.Nil(t, usage, "no partial aggregate")

	c, mock = newMockClient(t)
	mock.RegisterResponder(http.MethodGet, mockBaseURL+"/v1/meters/met_missing", fixtureResponder(t, 404, "errors/not_found.json"))
	_, err = c.Meters.Usage(ctx(), "met_missing", "", time.Time{}, time.Time{})
	require.ErrorIs(t, err, ErrNotFound)
}

func TestMetersValidationSendsNothing(t *testing.T) {
	from := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	requireRefusedBeforeSending(t, map[string]refusal{
		"create nil": {func(c *Client) error { _, err := c.Meters.Create(ctx(), nil); return err }, "params"},
		"create name": {func(c *Client) error {
			_, err := c.Meters.Create(ctx(), &MeterCreateParams{EventName: "e"})
			return err
		}, "name"},
		"create eventName": {func(c *Client) error {
			_, err := c.Meters.Create(ctx(), &MeterCreateParams{Name: "n", EventName: " "})
			return err
		}, "eventName"},
		"create aggregation": {func(c *Client) error {
			_, err := c.Meters.Create(ctx(), &MeterCreateParams{Name: "n", EventName: "e", Aggregation: "sum"})
			return err
		}, "aggregation"},
		"get id":        {func(c *Client) error { _, err := c.Meters.Get(ctx(), ""); return err }, "id"},
		"event meterId": {func(c *Client) error { _, err := c.Meters.RecordEvent(ctx(), "", &MeterEventParams{}); return err }, "meterId"},
		"event null value": {func(c *Client) error {
			_, err := c.Meters.RecordEvent(ctx(), "met_1", &MeterEventParams{Value: Null[float64]()})
			return err
		}, "value"},
		"event negative value": {func(c *Client) error {
			_, err := c.Meters.RecordEvent(ctx(), "met_1", &MeterEventParams{Value: Value(-1.0)})
			return err
		}, "value"},
		"event NaN": {func(c *Client) error {
			_, err := c.Meters.RecordEvent(ctx(), "met_1", &MeterEventParams{Value: Value(math.NaN())})
			return err
		}, "value"},
		"event infinity": {func(c *Client) error {
			_, err := c.Meters.RecordEvent(ctx(), "met_1", &MeterEventParams{Value: Value(math.Inf(1))})
			return err
		}, "value"},
		"event key length": {func(c *Client) error {
			_, err := c.Meters.RecordEvent(ctx(), "met_1", &MeterEventParams{IdempotencyKey: strings.Repeat("k", 256)})
			return err
		}, "idempotencyKey"},
		"event metadata": {func(c *Client) error {
			_, err := c.Meters.RecordEvent(ctx(), "met_1", &MeterEventParams{Metadata: Metadata{"m": map[string]any{}}})
			return err
		}, "metadata.m"},
		"events meterId": {func(c *Client) error { _, err := c.Meters.EventsPage(ctx(), " ", nil); return err }, "meterId"},
		"events window": {func(c *Client) error {
			_, err := c.Meters.EventsPage(ctx(), "met_1", &MeterEventListParams{From: from, To: from.Add(-time.Nanosecond)})
			return err
		}, "from"},
		"events limit": {func(c *Client) error {
			_, err := c.Meters.EventsPage(ctx(), "met_1", &MeterEventListParams{ListParams: ListParams{Limit: -1}})
			return err
		}, "limit"},
		"events iterator": {func(c *Client) error {
			return firstIterError(c.Meters.Events(ctx(), "met_1", &MeterEventListParams{ListParams: ListParams{Limit: 1000}}))
		}, "limit"},
		"usage meterId": {func(c *Client) error { _, err := c.Meters.Usage(ctx(), "", "", from, from); return err }, "meterId"},
		"usage window": {func(c *Client) error {
			_, err := c.Meters.Usage(ctx(), "met_1", "", from, from.Add(-time.Hour))
			return err
		}, "from"},
	})
	// A key of 255 characters, and a one-instant window, are fine.
	c, mock := newMockClient(t)
	mock.RegisterResponder(http.MethodPost, mockBaseURL+"/v1/meters/met_1/events", fixtureResponder(t, 201, "meters/event.json"))
	_, err := c.Meters.RecordEvent(ctx(), "met_1", &MeterEventParams{IdempotencyKey: strings.Repeat("é", 255)})
	require.NoError(t, err)
	mock.RegisterResponder(http.MethodGet, mockBaseURL+"/v1/meters/met_1/events", fixtureResponder(t, 200, "meters/events_page2.json"))
	_, err = c.Meters.EventsPage(ctx(), "met_1", &MeterEventListParams{From: from, To: from})
	require.NoError(t, err)
}
