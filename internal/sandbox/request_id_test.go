package sandbox

import (
	"bytes"
	"log/slog"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every answer carries a fresh request id: successes, errors of every kind,
// answers of faults, the /sandbox/ controls and the hosted page alike.
func TestEveryAnswerCarriesItsOwnRequestID(t *testing.T) {
	s := newTestServer(t, Config{})
	require.NoError(t, s.InjectFault(Fault{Route: "GET /v1/customers", Kind: FaultHTTP503}))
	seen := map[string]string{}
	for _, tc := range []struct {
		name   string
		req    *http.Request
		status int
	}{
		{"fault", request(t, http.MethodGet, "/v1/customers", secretHeader, nil), http.StatusServiceUnavailable},
		{"success", request(t, http.MethodGet, "/v1/customers", secretHeader, nil), http.StatusOK},
		{"unauthorized", request(t, http.MethodGet, "/v1/customers", "", nil), http.StatusUnauthorized},
		{"validation", request(t, http.MethodPost, "/v1/customers", secretHeader, `{}`), http.StatusBadRequest},
		{"unknown route", request(t, http.MethodGet, "/v1/nothing", secretHeader, nil), http.StatusNotFound},
		{"wrong method", request(t, http.MethodDelete, "/v1/customers", secretHeader, nil), http.StatusMethodNotAllowed},
		{"control", request(t, http.MethodPost, "/sandbox/clock/advance", secretHeader, `{"seconds":1}`), http.StatusOK},
		{"control refused", request(t, http.MethodGet, "/sandbox/sms?msisdn=1", secretHeader, nil), http.StatusBadRequest},
		{"money", request(t, http.MethodPost, "/v1/payments/receive", basicHeader, receiveBody("233241234567", "rid1", "http://127.0.0.1:1/cb")), http.StatusOK},
		{"hosted page", request(t, http.MethodGet, "/checkout/nope", "", nil), http.StatusNotFound},
	} {
		rec := serveRequest(s, tc.req)
		require.Equal(t, tc.status, rec.Code, "%s: %s", tc.name, rec.Body)
		id := rec.Header().Get(RequestIDHeader)
		assert.Regexp(t, `^req_[0-9a-f]{24}$`, id, tc.name)
		if other, dup := seen[id]; dup {
			t.Errorf("%s and %s share the request id %s", tc.name, other, id)
		}
		seen[id] = tc.name
	}
	assert.Len(t, seen, 10)
}

func TestRequestIDIsLoggedWithTheRequest(t *testing.T) {
	var logs bytes.Buffer
	s := newTestServer(t, Config{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	rec := serve(t, s, http.MethodGet, "/v1/customers/cust_nobody", secretHeader, nil)
	id := rec.Header().Get(RequestIDHeader)
	require.NotEmpty(t, id)
	assert.Contains(t, logs.String(), "request_id="+id)
	assert.Contains(t, logs.String(), "status=404")
}
