package billing

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The transport judges an answer twice when it goes on to read its body; the log's
// attempt count must still be one per request sent.
func TestLogCountsEachSendOnce(t *testing.T) {
	for name, tc := range map[string]struct {
		steps []func(http.ResponseWriter, *http.Request)
		want  string
	}{
		"one answer":            {[]func(http.ResponseWriter, *http.Request){jsonAnswer(200, okCustomer)}, "attempts=1"},
		"one refusal":           {[]func(http.ResponseWriter, *http.Request){jsonAnswer(404, `{"success":false,"message":"no"}`)}, "attempts=1"},
		"two failures, then ok": {[]func(http.ResponseWriter, *http.Request){jsonAnswer(503, serverFailure), truncatedBody, jsonAnswer(200, okCustomer)}, "attempts=3"},
	} {
		t.Run(name, func(t *testing.T) {
			var logs bytes.Buffer
			srv := newScriptedServer(t, tc.steps...)
			c, _ := newTestClient(t, srv.URL, WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
			_, _ = c.Customers.Get(context.Background(), "cust_1")
			assert.Contains(t, logs.String(), " "+tc.want+" ")
			require.NotZero(t, srv.hits.Load())
		})
	}
}

// withRequestID answers like step, naming the request id in the X-Request-Id header.
func withRequestID(id string, step func(http.ResponseWriter, *http.Request)) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Request-Id", id)
		step(w, r)
	}
}

func TestAPIErrorCarriesTheRequestID(t *testing.T) {
	srv := newScriptedServer(t, withRequestID("req_7Hq2", jsonAnswer(404, `{"success":false,"message":"customer not found"}`)))
	c, _ := newTestClient(t, srv.URL)

	_, err := c.Customers.Get(ctx(), "cust_1")
	var apiErr *APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, "req_7Hq2", apiErr.RequestID)
	assert.Equal(t, "req_7Hq2", apiErr.Header.Get("X-Request-Id"), "the response's header is kept")
	assert.Equal(t, "billing: customer get: GET /v1/customers/cust_1: HTTP 404: customer not found (request id req_7Hq2)", err.Error())
}

func TestAPIErrorWithoutARequestIDSaysNothingOfIt(t *testing.T) {
	srv := newScriptedServer(t, jsonAnswer(404, `{"success":false,"message":"customer not found"}`))
	c, _ := newTestClient(t, srv.URL)

	_, err := c.Customers.Get(ctx(), "cust_1")
	var apiErr *APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Empty(t, apiErr.RequestID)
	assert.NotContains(t, err.Error(), "request id")
}

// A request id comes from the network and is written into error text and logs: one that
// is not a short printable token is not kept (the header still has it as sent).
func TestUnfitRequestIDsAreNotKept(t *testing.T) {
	for name, id := range map[string]string{
		"too long":      strings.Repeat("a", 129),
		"space":         "req 1",
		"tab":           "req\t1",
		"not ASCII":     "req_é",
		"control bytes": "req_\x1b[2J",
	} {
		t.Run(name, func(t *testing.T) {
			h := http.Header{}
			h.Set("X-Request-Id", id)
			assert.Empty(t, requestIDOf(h))
		})
	}
	h := http.Header{}
	h.Set("x-request-id", strings.Repeat("a", 128))
	assert.Equal(t, strings.Repeat("a", 128), requestIDOf(h), "128 bytes is the limit")
}

func TestOutcomeUnknownCarriesTheRequestIDOfTheResponseSeen(t *testing.T) {
	for name, tc := range map[string]struct {
		answer func(http.ResponseWriter, *http.Request)
		want   string
	}{
		"500":            {withRequestID("req_500", jsonAnswer(500, serverFailure)), "req_500"},
		"code 0005":      {withRequestID("req_0005", jsonAnswer(200, `{"message":"network unreachable","responseCode":"0005"}`)), "req_0005"},
		"body cut short": {withRequestID("req_cut", truncatedBody), "req_cut"},
		"reset":          {resetConnection, ""},
	} {
		t.Run(name, func(t *testing.T) {
			srv := newScriptedServer(t, tc.answer)
			c, _ := newTestClient(t, srv.URL)

			err := moneyCall(ctx(), c, "ref_1")
			var unknown *OutcomeUnknownError
			require.ErrorAs(t, err, &unknown)
			assert.Equal(t, tc.want, unknown.RequestID)
			if tc.want == "" {
				assert.NotContains(t, err.Error(), "request id")
				return
			}
			assert.Equal(t, 1, strings.Count(err.Error(), "request id "+tc.want), "named once: %s", err)
		})
	}
}

func TestResponseMetaOfASuccess(t *testing.T) {
	srv := newScriptedServer(t,
		withRequestID("req_1", jsonAnswer(503, serverFailure)),
		withRequestID("req_2", jsonAnswer(200, okCustomer, "X-Rate-Remaining", "99")),
	)
	c, _ := newTestClient(t, srv.URL)

	var meta ResponseMeta
	cust, err := c.Customers.Get(WithResponseMeta(ctx(), &meta), "cust_1")
	require.NoError(t, err)
	assert.Equal(t, "cust_1", cust.ID)
	assert.Equal(t, "req_2", meta.RequestID, "the final response's id")
	assert.Equal(t, http.StatusOK, meta.StatusCode)
	assert.Equal(t, "99", meta.Header.Get("X-Rate-Remaining"))
	assert.Equal(t, 2, meta.Attempts)
}

func TestResponseMetaOfAFailure(t *testing.T) {
	srv := newScriptedServer(t, resetConnection, withRequestID("req_409", jsonAnswer(409, `{"success":false,"message":"email taken"}`)))
	c, _ := newTestClient(t, srv.URL)

	var meta ResponseMeta
	_, err := c.Customers.Get(WithResponseMeta(ctx(), &meta), "cust_1")
	require.ErrorIs(t, err, ErrConflict)
	assert.Equal(t, ResponseMeta{RequestID: "req_409", StatusCode: 409, Header: meta.Header, Attempts: 2}, meta)
	assert.NotNil(t, meta.Header)
}

func TestResponseMetaWithoutAResponse(t *testing.T) {
	srv := newScriptedServer(t, resetConnection)
	c, _ := newTestClient(t, srv.URL, WithRetry(2, 0, 0))

	meta := ResponseMeta{RequestID: "stale", StatusCode: 200, Attempts: 9}
	_, err := c.Customers.Get(WithResponseMeta(ctx(), &meta), "cust_1")
	require.Error(t, err)
	assert.Equal(t, ResponseMeta{Attempts: 2}, meta, "nothing received: no id, no status")
}

func TestResponseMetaIsLeftAloneByACallRefusedBeforeSending(t *testing.T) {
	srv := newScriptedServer(t, jsonAnswer(200, okCustomer))
	c, _ := newTestClient(t, srv.URL)

	meta := ResponseMeta{RequestID: "req_earlier", StatusCode: 200, Attempts: 1}
	_, err := c.Customers.Get(WithResponseMeta(ctx(), &meta), "")
	var v *ValidationError
	require.ErrorAs(t, err, &v)
	assert.Equal(t, ResponseMeta{RequestID: "req_earlier", StatusCode: 200, Attempts: 1}, meta)
	assert.Zero(t, srv.hits.Load())
	assert.Equal(t, ctx(), WithResponseMeta(ctx(), nil), "a nil ResponseMeta asks for nothing")
}

// A read whose first answer is unreadable and whose retries then run out on 503s must
// report the 503, the last answer, not succeed with the empty value of the first.
func TestAReadWhoseRetriesRunOutReportsTheLastAnswer(t *testing.T) {
	srv := newScriptedServer(t,
		withRequestID("req_1", jsonAnswer(200, `{"success":true,"data":{"id":"cust_1","email":`)),
		withRequestID("req_last", jsonAnswer(503, serverFailure)),
	)
	c, _ := newTestClient(t, srv.URL)

	var meta ResponseMeta
	cust, err := c.Customers.Get(WithResponseMeta(ctx(), &meta), "cust_1")
	assert.Nil(t, cust)
	var apiErr *APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusServiceUnavailable, apiErr.StatusCode)
	assert.Equal(t, "req_last", apiErr.RequestID)
	assert.Equal(t, ResponseMeta{RequestID: "req_last", StatusCode: 503, Header: meta.Header, Attempts: 4}, meta)
}
