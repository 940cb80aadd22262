package billing

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newBearerMockClient is newMockClient without client credentials: only the given
// Bearer credentials.
func newBearerMockClient(t *testing.T, opts ...Option) (*Client, *httpmock.MockTransport) {
	t.Helper()
	c, err := NewClient(append([]Option{WithBaseURL(mockBaseURL), WithRetry(1, 0, 0)}, opts...)...)
	require.NoError(t, err)
	mock := httpmock.NewMockTransport()
	c.http.HTTPClient.Transport = mock
	return c, mock
}

// recordedRequest is what a responder saw of a request.
type recordedRequest struct {
	method, path, auth, body string
}

// recordingResponder answers with a fixture and records the request.
func recordingResponder(t *testing.T, seen *[]recordedRequest, status int, name string) httpmock.Responder {
	return func(r *http.Request) (*http.Response, error) {
		var body []byte
		if r.Body != nil {
			var err error
			body, err = io.ReadAll(r.Body)
			require.NoError(t, err)
		}
		*seen = append(*seen, recordedRequest{r.Method, r.URL.EscapedPath(), r.Header.Get("Authorization"), string(body)})
		return fixtureResponder(t, status, name)(r)
	}
}

func utcTime(year int, month time.Month, day, hour, min, sec int) time.Time {
	return time.Date(year, month, day, hour, min, sec, 0, time.UTC)
}

func TestSubscriptionsTakeTheV1FormWithClientCredentials(t *testing.T) {
	c, mock := newMockClient(t, WithSecretKey("sk_test_abc"), WithSessionToken("sess_abc"))
	var seen []recordedRequest
	mock.RegisterResponder(http.MethodPost, mockBaseURL+"/v1/subscriptions", recordingResponder(t, &seen, 201, "subscriptions/subscription.json"))

	sub, err := c.Subscriptions.Create(ctx(), &SubscriptionCreateParams{CustomerID: "cust_1", PriceID: "price_1", Quantity: 2})
	require.NoError(t, err)
	require.Len(t, seen, 1)
	assert.Equal(t, "Basic Y2xpZW50LWlkOmNsaWVudC1zZWNyZXQ=", seen[0].auth, "Basic even when Bearer credentials are configured too")
	assert.JSONEq(t, `{"customerId":"cust_1","priceId":"price_1","quantity":2}`, seen[0].body)
	assert.Equal(t, &Subscription{
		ID: "sub_b1c0bd6fe48dcf47629c5348", CustomerID: "cust_883566f47c5ec7982ee1b5d4", PriceID: "price_632e8fe2cfe19990cb5d9bbb",
		Quantity: 2, Status: SubscriptionStatusActive, Currency: "GHS",
		CurrentPeriodStart: utcTime(2025, 1, 2, 3, 4, 5), CurrentPeriodEnd: utcTime(2025, 2, 2, 3, 4, 5), CreatedAt: utcTime(2025, 1, 2, 3, 4, 5),
	}, sub, "null moments read as zero")
}

func TestSubscriptionsTakeTheShortFormWithBearerCredentials(t *testing.T) {
	for name, tc := range map[string]struct {
		opts []Option
		auth string
	}{
		"session token":        {[]Option{WithSessionToken("sess_abc")}, "Bearer sess_abc"},
		"secret key":           {[]Option{WithSecretKey("sk_test_abc")}, "Bearer sk_test_abc"},
		"session before a key": {[]Option{WithSecretKey("sk_test_abc"), WithSessionToken("sess_abc")}, "Bearer sess_abc"},
	} {
		t.Run(name, func(t *testing.T) {
			c, mock := newBearerMockClient(t, tc.opts...)
			var seen []recordedRequest
			mock.RegisterResponder(http.MethodPost, mockBaseURL+"/subscriptions", recordingResponder(t, &seen, 201, "subscriptions/subscription_trialing.json"))
			mock.RegisterResponder(http.MethodGet, mockBaseURL+"/subscriptions/sub_1", recordingResponder(t, &seen, 200, "subscriptions/subscription_trialing.json"))
			mock.RegisterResponder(http.MethodPatch, mockBaseURL+"/subscriptions/sub_1/pause", recordingResponder(t, &seen, 200, "subscriptions/paused.json"))
			mock.RegisterResponder(http.MethodPatch, mockBaseURL+"/subscriptions/sub_1/resume", recordingResponder(t, &seen, 200, "subscriptions/resumed.json"))
			mock.RegisterResponder(http.MethodPatch, mockBaseURL+"/subscriptions/sub_1/cancel", recordingResponder(t, &seen, 200, "subscriptions/cancel_now.json"))

			sub, err := c.Subscriptions.Create(ctx(), &SubscriptionCreateParams{CustomerID: "cust_1", PriceID: "price_1", TrialDays: Value(14)})
			require.NoError(t, err)
			assert.Equal(t, SubscriptionStatusTrialing, sub.Status)
			assert.Equal(t, utcTime(2025, 1, 16, 3, 4, 5), sub.TrialEnd)
			_, err = c.Subscriptions.Get(ctx(), "sub_1")
			require.NoError(t, err)
			_, err = c.Subscriptions.Pause(ctx(), "sub_1")
			require.NoError(t, err)
			_, err = c.Subscriptions.Resume(ctx(), "sub_1")
			require.NoError(t, err)
			_, err = c.Subscriptions.Cancel(ctx(), "sub_1", nil)
			require.NoError(t, err)

			require.Len(t, seen, 5)
			for _, r := range seen {
				assert.Equal(t, tc.auth, r.auth, r.path)
			}
			assert.JSONEq(t, `{"customerId":"cust_1","priceId":"price_1","trialDays":14}`, seen[0].body)
		})
	}
}

func TestSubscriptionsStateChanges(t *testing.T) {
	c, mock := newMockClient(t)
	var seen []recordedRequest
	const id = "sub_b1c0bd6fe48dcf47629c5348"
	base := mockBaseURL + "/v1/subscriptions/" + id
	mock.RegisterResponder(http.MethodPatch, base+"/cancel", func(r *http.Request) (*http.Response, error) {
		if len(seen) == 0 {
			return recordingResponder(t, &seen, 200, "subscriptions/cancel_at_period_end.json")(r)
		}
		return recordingResponder(t, &seen, 200, "subscriptions/cancel_now.json")(r)
	})
	mock.RegisterResponder(http.MethodPatch, base+"/pause", recordingResponder(t, &seen, 200, "subscriptions/paused.json"))
	mock.RegisterResponder(http.MethodPatch, base+"/resume", recordingResponder(t, &seen, 200, "subscriptions/resumed.json"))
	mock.RegisterResponder(http.MethodGet, base, recordingResponder(t, &seen, 200, "subscriptions/subscription_canceled.json"))

	scheduled, err := c.Subscriptions.Cancel(ctx(), id, &SubscriptionCancelParams{AtPeriodEnd: true})
	require.NoError(t, err)
	assert.Equal(t, &SubscriptionState{ID: id, Status: SubscriptionStatusActive, CancelAt: utcTime(2025, 2, 2, 3, 4, 5), CanceledAt: utcTime(2025, 1, 5, 3, 4, 5)}, scheduled)

	paused, err := c.Subscriptions.Pause(ctx(), id)
	require.NoError(t, err)
	assert.Equal(t, &SubscriptionState{ID: id, Status: SubscriptionStatusPaused}, paused)

	resumed, err := c.Subscriptions.Resume(ctx(), id)
	require.NoError(t, err)
	assert.Equal(t, &SubscriptionState{ID: id, Status: SubscriptionStatusActive}, resumed)

	now, err := c.Subscriptions.Cancel(ctx(), id, &SubscriptionCancelParams{})
	require.NoError(t, err)
	assert.Equal(t, &SubscriptionState{ID: id, Status: SubscriptionStatusCanceled, CanceledAt: utcTime(2025, 1, 5, 3, 4, 5)}, now)

	got, err := c.Subscriptions.Get(ctx(), id)
	require.NoError(t, err)
	assert.Equal(t, SubscriptionStatusCanceled, got.Status)
	assert.Equal(t, utcTime(2025, 1, 5, 3, 4, 5), got.CanceledAt)
	assert.True(t, got.CancelAt.IsZero())

	bodies := make([]string, len(seen))
	for i, r := range seen {
		bodies[i] = r.method + " " + r.body
	}
	assert.Equal(t, []string{`PATCH {"atPeriodEnd":true}`, "PATCH ", "PATCH ", `PATCH {"atPeriodEnd":false}`, "GET "}, bodies,
		"cancel always states atPeriodEnd; pause and resume send no body")
}

func TestSubscriptionsRefusalsAreTyped(t *testing.T) {
	c, mock := newMockClient(t)
	mock.RegisterResponder(http.MethodPatch, mockBaseURL+"/v1/subscriptions/sub_1/cancel", fixtureResponder(t, 409, "subscriptions/error_invalid_state.json"))
	mock.RegisterResponder(http.MethodPost, mockBaseURL+"/v1/subscriptions", fixtureResponder(t, 409, "subscriptions/error_price_archived.json"))
	mock.RegisterResponder(http.MethodPatch, mockBaseURL+"/v1/subscriptions/sub%2F2/resume", fixtureResponder(t, 404, "errors/not_found.json"))

	_, err := c.Subscriptions.Cancel(ctx(), "sub_1", &SubscriptionCancelParams{AtPeriodEnd: true})
	require.ErrorIs(t, err, ErrConflict)
	var apiErr *APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, ResponseCode("invalid_state"), apiErr.Code)

	_, err = c.Subscriptions.Create(ctx(), &SubscriptionCreateParams{CustomerID: "cust_1", PriceID: "price_1"})
	require.ErrorIs(t, err, ErrConflict)
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, ResponseCode("price_archived"), apiErr.Code)
	assert.Equal(t, "priceId", apiErr.Field)

	_, err = c.Subscriptions.Resume(ctx(), "sub/2")
	assert.Equal(t, "id", requireValidationError(t, err).Field, "an id is one path segment")
}

func TestSubscriptionTrialEventFixture(t *testing.T) {
	body := fixture(t, "subscriptions/trial_event.json")
	ev, err := ParseEvent(body)
	require.NoError(t, err)
	trial, ok := ev.(*SubscriptionTrialEvent)
	require.True(t, ok, "%T", ev)
	assert.Equal(t, "sub_9853a7313ecfb2e03f37b35e", trial.Reference())

	var envelope struct {
		ID        string       `json:"id"`
		Event     string       `json:"event"`
		CreatedAt time.Time    `json:"createdAt"`
		Data      Subscription `json:"data"`
	}
	require.NoError(t, json.Unmarshal(body, &envelope))
	assert.Equal(t, "customer.subscription.trial", envelope.Event)
	assert.Equal(t, Subscription{
		ID: "sub_9853a7313ecfb2e03f37b35e", CustomerID: "cust_883566f47c5ec7982ee1b5d4", PriceID: "price_c018a8c50d0e5d8195289c0a",
		Quantity: 1, Status: SubscriptionStatusTrialing, Currency: "GHS",
		TrialStart: utcTime(2025, 1, 2, 3, 4, 5), TrialEnd: utcTime(2025, 1, 16, 3, 4, 5),
		CurrentPeriodStart: utcTime(2025, 1, 2, 3, 4, 5), CurrentPeriodEnd: utcTime(2025, 1, 16, 3, 4, 5), CreatedAt: utcTime(2025, 1, 2, 3, 4, 5),
	}, envelope.Data, "the event's data is a Subscription")
}

func TestSubscriptionsValidationSendsNothing(t *testing.T) {
	requireRefusedBeforeSending(t, map[string]refusal{
		"create nil": {func(c *Client) error { _, err := c.Subscriptions.Create(ctx(), nil); return err }, "params"},
		"customer required": {func(c *Client) error {
			_, err := c.Subscriptions.Create(ctx(), &SubscriptionCreateParams{PriceID: "price_1"})
			return err
		}, "customerId"},
		"price required": {func(c *Client) error {
			_, err := c.Subscriptions.Create(ctx(), &SubscriptionCreateParams{CustomerID: "cust_1"})
			return err
		}, "priceId"},
		"quantity negative": {func(c *Client) error {
			_, err := c.Subscriptions.Create(ctx(), &SubscriptionCreateParams{CustomerID: "cust_1", PriceID: "price_1", Quantity: -1})
			return err
		}, "quantity"},
		"trial negative": {func(c *Client) error {
			_, err := c.Subscriptions.Create(ctx(), &SubscriptionCreateParams{CustomerID: "cust_1", PriceID: "price_1", TrialDays: Value(-3)})
			return err
		}, "trialDays"},
		"trial too long": {func(c *Client) error {
			_, err := c.Subscriptions.Create(ctx(), &SubscriptionCreateParams{CustomerID: "cust_1", PriceID: "price_1", TrialDays: Value(MaxTrialDays + 1)})
			return err
		}, "trialDays"},
		"get id":    {func(c *Client) error { _, err := c.Subscriptions.Get(ctx(), ""); return err }, "id"},
		"cancel id": {func(c *Client) error { _, err := c.Subscriptions.Cancel(ctx(), "", nil); return err }, "id"},
		"pause id":  {func(c *Client) error { _, err := c.Subscriptions.Pause(ctx(), " "); return err }, "id"},
		"resume id": {func(c *Client) error { _, err := c.Subscriptions.Resume(ctx(), ""); return err }, "id"},
	})
}

func TestSubscriptionTrialDaysThreeStates(t *testing.T) {
	for want, days := range map[string]Nullable[int]{
		`{"customerId":"cust_1","priceId":"price_1"}`:                {},
		`{"customerId":"cust_1","priceId":"price_1","trialDays":0}`:  Value(0),
		`{"customerId":"cust_1","priceId":"price_1","trialDays":14}`: Value(14),
	} {
		c, mock := newMockClient(t)
		var got string
		mock.RegisterResponder(http.MethodPost, mockBaseURL+"/v1/subscriptions", func(r *http.Request) (*http.Response, error) {
			b, _ := io.ReadAll(r.Body)
			got = string(b)
			return fixtureResponder(t, 201, "subscriptions/subscription.json")(r)
		})
		_, err := c.Subscriptions.Create(ctx(), &SubscriptionCreateParams{CustomerID: "cust_1", PriceID: "price_1", TrialDays: days})
		require.NoError(t, err)
		assert.JSONEq(t, want, got)
	}
	requireRefusedBeforeSending(t, map[string]refusal{
		"null trial": {func(c *Client) error {
			_, err := c.Subscriptions.Create(ctx(), &SubscriptionCreateParams{CustomerID: "cust_1", PriceID: "price_1", TrialDays: Null[int]()})
			return err
		}, "trialDays"},
	})
}
