package sandbox

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newFaultServer serves s over real connections, which a fault can reset.
func newFaultServer(t *testing.T, s *Server) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return ts
}

// postOver sends a POST over a fresh connection and returns the status, or the
// transport error.
func postOver(t *testing.T, ts *httptest.Server, path, body string) (int, error) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, ts.URL+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", basicHeader)
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, nil
}

func TestFaultResponseLostDoesTheWorkThenResets(t *testing.T) {
	s := newTestServer(t, Config{})
	ts := newFaultServer(t, s)
	require.NoError(t, s.InjectFault(Fault{Route: "POST /v1/payments/receive", Nth: 1, Kind: FaultResponseLost}))

	_, err := postOver(t, ts, "/v1/payments/receive", receiveBody("233241234567", "lost1", "http://127.0.0.1:1/cb"))
	require.Error(t, err, "no response")
	assert.ErrorIs(t, err, syscall.ECONNRESET, "a TCP reset")
	require.Len(t, s.Movements("lost1"), 1, "the work was done")

	status, err := postOver(t, ts, "/v1/payments/receive", receiveBody("233241234567", "lost1", "http://127.0.0.1:1/cb"))
	require.NoError(t, err, "the fault is spent")
	assert.Equal(t, http.StatusOK, status)
	assert.Len(t, s.Movements("lost1"), 1, "the retry was a duplicate and moved nothing")
}

func TestFaultResetBeforeWorkDoesNothing(t *testing.T) {
	s := newTestServer(t, Config{})
	ts := newFaultServer(t, s)
	require.NoError(t, s.InjectFault(Fault{Route: "POST /v1/payments/send", Kind: FaultResetBeforeWork}))

	_, err := postOver(t, ts, "/v1/payments/send", sendBody("233241234567", "early1", "http://127.0.0.1:1/cb", "5000"))
	require.Error(t, err)
	assert.Empty(t, s.Movements("early1"))
	assert.Equal(t, DefaultDisbursementBalance, s.DisbursementBalance())
}

func TestFaultHitsTheNthRequestOfItsRouteOnly(t *testing.T) {
	s := newTestServer(t, Config{})
	ts := newFaultServer(t, s)
	require.NoError(t, s.InjectFault(Fault{Route: "POST /v1/payments", Nth: 2, Kind: FaultResetBeforeWork}))
	require.NoError(t, s.InjectFault(Fault{Route: "POST /v1/payments", Nth: 2, Kind: FaultResponseLost}))

	status, err := postOver(t, ts, "/v1/payments/receive", receiveBody("233241234567", "other1", "http://127.0.0.1:1/cb"))
	require.NoError(t, err, "another route does not count")
	assert.Equal(t, http.StatusOK, status)

	status, err = postOver(t, ts, "/v1/payments", `{"amount":100}`)
	require.NoError(t, err, "the first request passes")
	assert.Equal(t, http.StatusCreated, status)
	_, err = postOver(t, ts, "/v1/payments", `{"amount":100}`)
	assert.Error(t, err, "the second meets the first fault injected")
	assert.Equal(t, 1, checkoutCount(s), "reset before the work")
	_, err = postOver(t, ts, "/v1/payments", `{"amount":100}`)
	assert.Error(t, err, "the fault due at the same time waits for the next request")
	assert.Equal(t, 2, checkoutCount(s), "its work was done")
	status, err = postOver(t, ts, "/v1/payments", `{"amount":100}`)
	require.NoError(t, err, "no fault is left")
	assert.Equal(t, http.StatusCreated, status)
}

func TestFaultOnAnInProcessRecorderAbortsTheHandler(t *testing.T) {
	s := newTestServer(t, Config{})
	require.NoError(t, s.InjectFault(Fault{Route: "POST /v1/payments", Kind: FaultResponseLost}))
	assert.PanicsWithValue(t, http.ErrAbortHandler, func() {
		serve(t, s, http.MethodPost, "/v1/payments", basicHeader, `{"amount":100}`)
	})
	assert.Equal(t, 1, checkoutCount(s), "the work was done first")
}

func TestInjectFaultRefusesWhatCannotHappen(t *testing.T) {
	s := newTestServer(t, Config{})
	assert.ErrorContains(t, s.InjectFault(Fault{Route: "POST /v1/nowhere", Kind: FaultResponseLost}), "no route")
	assert.ErrorContains(t, s.InjectFault(Fault{Route: "/v1/payments", Kind: FaultResponseLost}), "no route", "the method is part of the pattern")
	assert.ErrorContains(t, s.InjectFault(Fault{Route: "POST /v1/payments", Kind: 99}), "unknown fault kind")
	assert.ErrorContains(t, s.InjectFault(Fault{Route: "POST /v1/payments", Nth: -1, Kind: FaultResponseLost}), "Nth")
	assert.Equal(t, http.StatusCreated, serve(t, s, http.MethodPost, "/v1/payments", basicHeader, `{"amount":100}`).Code, "nothing was armed")
}

// checkoutCount counts the checkout sessions under the store lock.
func checkoutCount(s *Server) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.payments.checkouts.len()
}
