package billing_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
)

// newMeter defines a meter with a unique event name.
func newMeter(t *testing.T, c *billing.Client, agg billing.MeterAggregation) *billing.Meter {
	t.Helper()
	m, err := c.Meters.Create(context.Background(), &billing.MeterCreateParams{
		Name: "Meter " + string(agg), EventName: fmt.Sprintf("event.%s.%d", agg, time.Now().UnixNano()), Aggregation: agg,
	})
	require.NoError(t, err)
	return m
}

// countEvents counts a meter's events through the SDK.
func countEvents(t *testing.T, c *billing.Client, meterID string) int {
	t.Helper()
	n := 0
	for _, err := range c.Meters.Events(context.Background(), meterID, nil) {
		require.NoError(t, err)
		n++
	}
	return n
}

func TestMetersAgainstTheSandbox(t *testing.T) {
	srv := billingtest.NewServer(t, billingtest.WithManualClock())
	c := srv.Client()
	ctx := context.Background()

	m, err := c.Meters.Create(ctx, &billing.MeterCreateParams{Name: "API calls", EventName: "api.call"})
	require.NoError(t, err)
	assert.Equal(t, billing.MeterAggregationSum, m.Aggregation, "the default")
	assert.Equal(t, "value", m.ValueField)
	assert.True(t, m.Active)
	_, err = c.Meters.Create(ctx, &billing.MeterCreateParams{Name: "Again", EventName: "api.call"})
	require.ErrorIs(t, err, billing.ErrConflict)
	got, err := c.Meters.Get(ctx, m.ID)
	require.NoError(t, err)
	assert.Equal(t, m, got)
	_, err = c.Meters.Get(ctx, "met_missing")
	require.ErrorIs(t, err, billing.ErrNotFound)

	cust := newWalletOwner(t, c)
	first, err := c.Meters.RecordEvent(ctx, m.ID, &billing.MeterEventParams{CustomerID: cust, Value: billing.Value(3.0), IdempotencyKey: "req-1"})
	require.NoError(t, err)
	assert.Equal(t, srv.Now(), first.Timestamp, "the server's time by default")
	again, err := c.Meters.RecordEvent(ctx, m.ID, &billing.MeterEventParams{CustomerID: cust, Value: billing.Value(3.0), IdempotencyKey: "req-1"})
	require.NoError(t, err)
	assert.Equal(t, first, again, "the repeat answers the first event")
	unit, err := c.Meters.RecordEvent(ctx, m.ID, nil)
	require.NoError(t, err)
	assert.Equal(t, 1.0, unit.Value, "one unit by default")
	assert.Equal(t, 2, countEvents(t, c, m.ID), "the repeat was not counted")

	usage, err := c.Meters.Usage(ctx, m.ID, cust, time.Time{}, time.Time{})
	require.NoError(t, err)
	assert.Equal(t, &billing.MeterUsage{MeterID: m.ID, CustomerID: cust, Aggregation: billing.MeterAggregationSum, Value: 3, Events: 1}, usage)
	usage, err = c.Meters.Usage(ctx, m.ID, "", time.Time{}, time.Time{})
	require.NoError(t, err)
	assert.Equal(t, 4.0, usage.Value, "every customer, and events without one")

	_, err = c.Meters.RecordEvent(ctx, m.ID, &billing.MeterEventParams{CustomerID: "cust_missing"})
	require.ErrorIs(t, err, billing.ErrNotFound)
}

func TestMetersUsageForEachAggregation(t *testing.T) {
	srv := billingtest.NewServer(t, billingtest.WithManualClock())
	c := srv.Client()
	ctx := context.Background()
	cust, other := newWalletOwner(t, c), newWalletOwner(t, c)
	start := srv.Now()

	// Ingested in this order, an hour apart; their own timestamps run the other way
	// round, so LAST must follow ingestion, not timestamps.
	series := []struct {
		customer string
		value    float64
		happened time.Duration // before start
	}{
		{cust, 4, time.Minute},
		{cust, 9, 2 * time.Minute},
		{other, 100, 3 * time.Minute}, // another customer: filtered out
		{cust, 2, 4 * time.Minute},
		{cust, 0, 5 * time.Minute}, // a reading of zero
		{cust, 6, 6 * time.Minute},
	}
	want := map[billing.MeterAggregation]float64{
		billing.MeterAggregationSum: 21, billing.MeterAggregationCount: 5, billing.MeterAggregationMax: 9, billing.MeterAggregationLast: 6,
	}
	meters := map[billing.MeterAggregation]*billing.Meter{}
	for agg := range want {
		meters[agg] = newMeter(t, c, agg)
	}
	for _, ev := range series {
		for _, m := range meters {
			_, err := c.Meters.RecordEvent(ctx, m.ID, &billing.MeterEventParams{
				CustomerID: ev.customer, Value: billing.Value(ev.value), Timestamp: start.Add(-ev.happened),
			})
			require.NoError(t, err)
		}
		srv.Advance(time.Hour)
	}

	for agg, m := range meters {
		usage, err := c.Meters.Usage(ctx, m.ID, cust, time.Time{}, time.Time{})
		require.NoError(t, err)
		assert.Equal(t, want[agg], usage.Value, "%s over everything", agg)
		assert.Equal(t, 5, usage.Events)
		assert.Equal(t, agg, usage.Aggregation)
	}

	// The window [start+1h, start+3h] holds the 2nd to 4th ingestions: 9, 100 (other), 2.
	from, to := start.Add(time.Hour), start.Add(3*time.Hour)
	for agg, wantInWindow := range map[billing.MeterAggregation]float64{
		billing.MeterAggregationSum: 11, billing.MeterAggregationCount: 2, billing.MeterAggregationMax: 9, billing.MeterAggregationLast: 2,
	} {
		usage, err := c.Meters.Usage(ctx, meters[agg].ID, cust, from, to)
		require.NoError(t, err)
		assert.Equal(t, wantInWindow, usage.Value, "%s in the window", agg)
	}
	usage, err := c.Meters.Usage(ctx, meters[billing.MeterAggregationLast].ID, "", from, to)
	require.NoError(t, err)
	assert.Equal(t, 2.0, usage.Value, "LAST of every customer in the window")
	usage, err = c.Meters.Usage(ctx, meters[billing.MeterAggregationMax].ID, "", time.Time{}, time.Time{})
	require.NoError(t, err)
	assert.Equal(t, 100.0, usage.Value, "MAX of every customer")
	usage, err = c.Meters.Usage(ctx, meters[billing.MeterAggregationSum].ID, cust, start.Add(24*time.Hour), time.Time{})
	require.NoError(t, err)
	assert.Equal(t, &billing.MeterUsage{MeterID: meters[billing.MeterAggregationSum].ID, CustomerID: cust,
		Aggregation: billing.MeterAggregationSum, From: start.Add(24 * time.Hour)}, usage, "an empty period")
}

func TestMetersLastFollowsIngestionWithinOneInstant(t *testing.T) {
	srv := billingtest.NewServer(t, billingtest.WithManualClock())
	c := srv.Client()
	ctx := context.Background()
	m := newMeter(t, c, billing.MeterAggregationLast)
	for _, v := range []float64{7, 3, 5} { // one instant of the stopped clock; timestamps descending
		_, err := c.Meters.RecordEvent(ctx, m.ID, &billing.MeterEventParams{Value: billing.Value(v), Timestamp: srv.Now().Add(-time.Duration(v) * time.Minute)})
		require.NoError(t, err)
	}
	usage, err := c.Meters.Usage(ctx, m.ID, "", time.Time{}, time.Time{})
	require.NoError(t, err)
	assert.Equal(t, 5.0, usage.Value, "the event ingested last")
}

func TestMetersUsageReadsEveryPage(t *testing.T) {
	srv := billingtest.NewServer(t, billingtest.WithManualClock())
	c := srv.Client()
	ctx := context.Background()
	m := newMeter(t, c, billing.MeterAggregationCount)
	for range 230 {
		_, err := c.Meters.RecordEvent(ctx, m.ID, nil)
		require.NoError(t, err)
	}
	usage, err := c.Meters.Usage(ctx, m.ID, "", time.Time{}, time.Time{})
	require.NoError(t, err)
	assert.Equal(t, 230.0, usage.Value)
	assert.Equal(t, 230, usage.Events)
}

// faultyProxy forwards every request to the sandbox, but answers the first event
// POST with a 500 after the sandbox has processed it: the work is done, the answer lost.
type faultyProxy struct {
	*httptest.Server
	posts atomic.Int32 // event POSTs that reached the sandbox
}

func newFaultyProxy(t *testing.T, target string) *faultyProxy {
	t.Helper()
	u, err := url.Parse(target)
	require.NoError(t, err)
	p := &faultyProxy{}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.ModifyResponse = func(resp *http.Response) error {
		if resp.Request.Method != http.MethodPost {
			return nil
		}
		if p.posts.Add(1) == 1 {
			resp.Body.Close()
			resp.StatusCode = http.StatusInternalServerError
			body := `{"success":false,"message":"upstream failure","code":"internal_error"}`
			resp.Body = io.NopCloser(bytes.NewReader([]byte(body)))
			resp.ContentLength = int64(len(body))
			resp.Header.Set("Content-Length", fmt.Sprint(len(body)))
		}
		return nil
	}
	p.Server = httptest.NewServer(rp)
	t.Cleanup(p.Close)
	return p
}

func TestRecordEventRetryIsSafeOnlyWithAnIdempotencyKey(t *testing.T) {
	srv := billingtest.NewServer(t)
	direct := srv.Client()
	m := newMeter(t, direct, billing.MeterAggregationSum)
	clientVia := func(p *faultyProxy) *billing.Client {
		c, err := billing.NewClient(billing.WithBaseURL(p.URL), billing.WithClientCredentials(srv.ClientID, srv.ClientSecret), billing.WithRetry(3, 0, 0))
		require.NoError(t, err)
		return c
	}

	withKey := newFaultyProxy(t, srv.URL)
	ev, err := clientVia(withKey).Meters.RecordEvent(context.Background(), m.ID, &billing.MeterEventParams{Value: billing.Value(5.0), IdempotencyKey: "job-42"})
	require.NoError(t, err, "retried after the 500")
	assert.EqualValues(t, 2, withKey.posts.Load(), "the sandbox saw the event twice")
	assert.Equal(t, 1, countEvents(t, direct, m.ID), "and recorded it once")
	assert.Equal(t, 5.0, ev.Value)

	withoutKey := newFaultyProxy(t, srv.URL)
	_, err = clientVia(withoutKey).Meters.RecordEvent(context.Background(), m.ID, &billing.MeterEventParams{Value: billing.Value(5.0)})
	var apiErr *billing.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusInternalServerError, apiErr.StatusCode)
	assert.EqualValues(t, 1, withoutKey.posts.Load(), "not sent again")
	assert.Equal(t, 2, countEvents(t, direct, m.ID), "recorded once, though the caller could not know")
}
