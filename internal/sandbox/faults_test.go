package sandbox

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

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
	assert.ErrorContains(t, s.InjectFault(Fault{Route: "POST /v1/payments", Kind: "lose"}), "unknown fault kind")
	assert.ErrorContains(t, s.InjectFault(Fault{Route: "POST /v1/payments", Nth: -1, Kind: FaultResponseLost}), "Nth")
	assert.Equal(t, http.StatusCreated, serve(t, s, http.MethodPost, "/v1/payments", basicHeader, `{"amount":100}`).Code, "nothing was armed")
}

// checkoutCount counts the checkout sessions under the store lock.
func checkoutCount(s *Server) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.payments.checkouts.len()
}

// exchange sends a request over a fresh connection through client (a plain
// one when nil) and returns the response with its body read in full, or the
// error of the exchange or of reading the body.
func exchange(t *testing.T, client *http.Client, ts *httptest.Server, method, path, body string) (*http.Response, []byte, error) {
	t.Helper()
	var reader io.Reader
	if body != "" {
		reader = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, ts.URL+path, reader)
	require.NoError(t, err)
	req.Header.Set("Authorization", basicHeader)
	if client == nil {
		client = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	read, err := io.ReadAll(resp.Body)
	return resp, read, err
}

func TestFaultsBeforeTheWorkAnswerAndDoNothing(t *testing.T) {
	for _, tc := range []struct {
		kind       FaultKind
		retryAfter time.Duration
		status     int
		code       string
		header     string // Retry-After
	}{
		{FaultHTTP500, 0, http.StatusInternalServerError, CodeInternal, ""},
		{FaultHTTP503, 1500 * time.Millisecond, http.StatusServiceUnavailable, CodeUnavailable, "2"},
		{FaultHTTP503, 0, http.StatusServiceUnavailable, CodeUnavailable, "0"},
		{FaultHTTP429, 3 * time.Second, http.StatusTooManyRequests, CodeRateLimited, "3"},
	} {
		t.Run(string(tc.kind), func(t *testing.T) {
			s := newTestServer(t, Config{})
			ts := newFaultServer(t, s)
			require.NoError(t, s.InjectFault(Fault{Route: "POST /v1/payments/send", Kind: tc.kind, RetryAfter: tc.retryAfter}))
			resp, body, err := exchange(t, nil, ts, http.MethodPost, "/v1/payments/send", sendBody("233241234567", "early1", "http://127.0.0.1:1/cb", "5000"))
			require.NoError(t, err)
			assert.Equal(t, tc.status, resp.StatusCode)
			assert.Equal(t, tc.header, resp.Header.Get("Retry-After"))
			assert.Equal(t, tc.code, str(t, object(t, body)["code"]))
			assert.Equal(t, "false", string(object(t, body)["success"]))
			assert.Empty(t, s.Movements("early1"), "nothing was done")
			assert.Equal(t, DefaultDisbursementBalance, s.DisbursementBalance())
		})
	}
}

func TestFaultBadGatewayAnswersAPageNotJSON(t *testing.T) {
	s := newTestServer(t, Config{})
	ts := newFaultServer(t, s)
	require.NoError(t, s.InjectFault(Fault{Route: "POST /v1/payments/receive", Kind: FaultHTTP502}))
	resp, body, err := exchange(t, nil, ts, http.MethodPost, "/v1/payments/receive", receiveBody("233241234567", "gw1", "http://127.0.0.1:1/cb"))
	require.NoError(t, err)
	assert.Equal(t, http.StatusBadGateway, resp.StatusCode)
	assert.Equal(t, "text/html; charset=utf-8", resp.Header.Get("Content-Type"))
	assert.Contains(t, string(body), "502 Bad Gateway")
	assert.Empty(t, s.Movements("gw1"))
}

func TestFaultTruncatedBodyDoesTheWorkAndCutsTheAnswer(t *testing.T) {
	s := newTestServer(t, Config{})
	ts := newFaultServer(t, s)
	require.NoError(t, s.InjectFault(Fault{Route: "POST /v1/payments/receive", Kind: FaultTruncatedBody}))
	resp, body, err := exchange(t, nil, ts, http.MethodPost, "/v1/payments/receive", receiveBody("233241234567", "cut1", "http://127.0.0.1:1/cb"))
	require.ErrorIs(t, err, io.ErrUnexpectedEOF, "the body ends before its Content-Length")
	assert.Equal(t, http.StatusOK, resp.StatusCode, "the status and headers arrived")
	assert.Less(t, int64(len(body)), resp.ContentLength)
	assert.Positive(t, len(body), "half the body arrived")
	assert.Len(t, s.Movements("cut1"), 1, "the work was done")
}

func TestFaultMalformedJSONDoesTheWorkAndAnswersHalfABody(t *testing.T) {
	s := newTestServer(t, Config{})
	ts := newFaultServer(t, s)
	require.NoError(t, s.InjectFault(Fault{Route: "GET /v1/customers", Kind: FaultMalformedJSON}))
	require.NoError(t, s.InjectFault(Fault{Route: "POST /v1/payments/receive", Kind: FaultMalformedJSON}))

	resp, body, err := exchange(t, nil, ts, http.MethodPost, "/v1/payments/receive", receiveBody("233241234567", "bad1", "http://127.0.0.1:1/cb"))
	require.NoError(t, err, "a complete HTTP answer")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	assert.False(t, json.Valid(body), "body: %s", body)
	assert.True(t, strings.HasPrefix(string(body), `{"success":true`), "the start of the real answer: %s", body)
	assert.Len(t, s.Movements("bad1"), 1, "the work was done")

	_, body, err = exchange(t, nil, ts, http.MethodGet, "/v1/customers", "")
	require.NoError(t, err)
	assert.False(t, json.Valid(body), "body: %s", body)
}

func TestFaultCode0005AnswersTheWorkUnderTheConnectionErrorCode(t *testing.T) {
	s := newTestServer(t, Config{})
	ts := newFaultServer(t, s)
	require.NoError(t, s.InjectFault(Fault{Route: "POST /v1/payments", Kind: FaultCode0005}))
	resp, body, err := exchange(t, nil, ts, http.MethodPost, "/v1/payments", `{"amount":5000,"metadata":{"clientReference":"chk5"}}`)
	require.NoError(t, err)
	assert.Equal(t, http.StatusCreated, resp.StatusCode, "the route's own status")
	env := object(t, body)
	assert.Equal(t, "false", string(env["success"]))
	assert.Equal(t, `"0005"`, string(env["responseCode"]))
	assert.Contains(t, str(t, env["message"]), "status check")
	data := object(t, env["data"])
	assert.Equal(t, `"PENDING"`, string(data["status"]), "the session was created")
	require.Len(t, s.Movements("chk5"), 1)
	assert.Equal(t, StatePending, s.Movements("chk5")[0].State)

	// The Pascal envelope keeps its own key.
	require.NoError(t, s.InjectFault(Fault{Route: "POST /v1/merchants/{account}/send/bank/gh/{bankCode}", Kind: FaultCode0005}))
	_, body, err = exchange(t, nil, ts, http.MethodPost, bankPath, bankBody("10.00", "1441000123456", "bank5", "http://127.0.0.1:1/cb"))
	require.NoError(t, err)
	env = object(t, body)
	assert.Equal(t, `"0005"`, string(env["ResponseCode"]))
	assert.NotContains(t, env, "responseCode")
	assert.NotContains(t, env, "success", "no success key is added where the envelope has none")
	assert.Len(t, s.Movements("bank5"), 1)
}

func TestWithResponseCodeLeavesABodyThatIsNoObject(t *testing.T) {
	assert.Equal(t, "<html></html>", string(withResponseCode([]byte("<html></html>"), CodeConnectionError, "m")))
	assert.Equal(t, "[1]", string(withResponseCode([]byte("[1]"), CodeConnectionError, "m")))
}

func TestFaultLatencyHoldsTheRequestThenServesIt(t *testing.T) {
	s := newTestServer(t, Config{})
	ts := newFaultServer(t, s)
	require.NoError(t, s.InjectFault(Fault{Route: "POST /v1/payments/receive", Kind: FaultLatency, Latency: 30 * time.Millisecond}))
	start := time.Now()
	resp, _, err := exchange(t, nil, ts, http.MethodPost, "/v1/payments/receive", receiveBody("233241234567", "slow1", "http://127.0.0.1:1/cb"))
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.GreaterOrEqual(t, time.Since(start), 30*time.Millisecond)
	assert.Len(t, s.Movements("slow1"), 1)
}

func TestFaultLatencyPastTheCallersTimeoutDoesNothing(t *testing.T) {
	s := newTestServer(t, Config{})
	ts := httptest.NewServer(s)
	require.NoError(t, s.InjectFault(Fault{Route: "POST /v1/payments/receive", Kind: FaultLatency, Latency: MaxLatency}))
	impatient := &http.Client{Timeout: 50 * time.Millisecond, Transport: &http.Transport{DisableKeepAlives: true}}
	_, _, err := exchange(t, impatient, ts, http.MethodPost, "/v1/payments/receive", receiveBody("233241234567", "gone1", "http://127.0.0.1:1/cb"))
	require.Error(t, err)
	ts.Close() // waits for the held request: the caller's hang-up ended it
	assert.Empty(t, s.Movements("gone1"), "the caller gave up before the work")
}

func TestFaultCountsTellWhatFired(t *testing.T) {
	s := newTestServer(t, Config{})
	ts := newFaultServer(t, s)
	require.NoError(t, s.InjectFault(Fault{Route: "GET /v1/customers", Nth: 2, Kind: FaultHTTP500}))
	require.NoError(t, s.InjectFault(Fault{Route: "GET /v1/customers", Nth: 5, Kind: FaultHTTP500}))
	armed, fired := s.FaultCounts()
	assert.Equal(t, []int{2, 0}, []int{armed, fired})
	statuses := make([]int, 3)
	for i := range statuses {
		resp, _, err := exchange(t, nil, ts, http.MethodGet, "/v1/customers", "")
		require.NoError(t, err)
		statuses[i] = resp.StatusCode
	}
	assert.Equal(t, []int{200, 500, 200}, statuses)
	armed, fired = s.FaultCounts()
	assert.Equal(t, []int{1, 1}, []int{armed, fired})
}

func TestInjectFaultRefusesBadValues(t *testing.T) {
	s := newTestServer(t, Config{})
	assert.ErrorContains(t, s.InjectFault(Fault{Route: "POST /v1/payments", Kind: FaultLatency, Latency: -time.Second}), "Latency")
	assert.ErrorContains(t, s.InjectFault(Fault{Route: "POST /v1/payments", Kind: FaultLatency, Latency: MaxLatency + 1}), "Latency")
	assert.ErrorContains(t, s.InjectFault(Fault{Route: "POST /v1/payments", Kind: FaultHTTP429, RetryAfter: -time.Second}), "RetryAfter")
	armed, _ := s.FaultCounts()
	assert.Zero(t, armed)
}

func TestFaultControl(t *testing.T) {
	s := newTestServer(t, Config{})
	rec := serve(t, s, http.MethodPost, "/sandbox/faults", basicHeader,
		`{"route":"POST /v1/payments","kind":"http-503","nth":2,"retryAfterSeconds":5}`)
	body := answer(t, rec, http.StatusCreated)
	assert.JSONEq(t, `{"route":"POST /v1/payments","kind":"http-503","nth":2,"retryAfterSeconds":5}`, string(body["data"]))

	for _, tc := range []struct{ body, field string }{
		{`{"kind":"http-500"}`, "route"},
		{`{"route":"POST /v1/nowhere","kind":"http-500"}`, "route"},
		{`{"route":"POST /v1/payments"}`, "kind"},
		{`{"route":"POST /v1/payments","kind":"lose"}`, "kind"},
		{`{"route":"POST /v1/payments","kind":"latency","latencyMs":0}`, "latencyMs"},
		{`{"route":"POST /v1/payments","kind":"http-500","nth":0}`, "nth"},
		{`{"route":"POST /v1/payments","kind":"http-429","retryAfterSeconds":-1}`, "retryAfterSeconds"},
	} {
		requireError(t, serve(t, s, http.MethodPost, "/sandbox/faults", basicHeader, tc.body), http.StatusBadRequest, CodeValidation, tc.field, "")
	}
	requireError(t, serve(t, s, http.MethodPost, "/sandbox/faults", "", `{"route":"POST /v1/payments","kind":"http-500"}`), http.StatusUnauthorized, CodeKeysMismatch, "", "")
	armed, _ := s.FaultCounts()
	require.Equal(t, 1, armed, "refused requests armed nothing")

	assert.Equal(t, http.StatusCreated, serve(t, s, http.MethodPost, "/v1/payments", basicHeader, `{"amount":100}`).Code)
	rec = serve(t, s, http.MethodPost, "/v1/payments", basicHeader, `{"amount":100}`)
	assert.Equal(t, http.StatusServiceUnavailable, rec.Code)
	assert.Equal(t, "5", rec.Header().Get("Retry-After"))
}

func TestParseFaults(t *testing.T) {
	faults, err := ParseFaults(" POST /v1/payments/receive#2=response-lost; GET /v1/payments/{reference}=http-503:5s;" +
		"POST /v1/payments/send=latency:1.5s;POST /v1/payments=code-0005; ")
	require.NoError(t, err)
	assert.Equal(t, []Fault{
		{Route: "POST /v1/payments/receive", Nth: 2, Kind: FaultResponseLost},
		{Route: "GET /v1/payments/{reference}", Nth: 1, Kind: FaultHTTP503, RetryAfter: 5 * time.Second},
		{Route: "POST /v1/payments/send", Nth: 1, Kind: FaultLatency, Latency: 1500 * time.Millisecond},
		{Route: "POST /v1/payments", Nth: 1, Kind: FaultCode0005},
	}, faults)
	none, err := ParseFaults("")
	require.NoError(t, err)
	assert.Empty(t, none)

	for _, bad := range []string{
		"POST /v1/payments",                  // no kind
		"POST /v1/payments#0=http-500",       // request numbers start at 1
		"POST /v1/payments#x=http-500",       // not a number
		"POST /v1/payments=latency:soon",     // not a duration
		"POST /v1/payments=latency:-1s",      // negative
		"POST /v1/payments=http-500:1s",      // takes no duration
		"POST /v1/payments=response-lost:1s", // takes no duration
	} {
		_, err := ParseFaults(bad)
		assert.Error(t, err, bad)
	}
	// The syntax is read here; the route and kind are checked when armed.
	faults, err = ParseFaults("POST /v1/nowhere=lose")
	require.NoError(t, err)
	s := newTestServer(t, Config{})
	assert.Error(t, s.InjectFault(faults[0]))
}

func TestFaultsThatAnswerWhatCannotBeClassified(t *testing.T) {
	noRedirects := &http.Client{
		Transport:     &http.Transport{DisableKeepAlives: true},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	for _, tc := range []struct {
		name     string
		fault    Fault
		status   int
		location string
		body     string
		done     int // movements recorded
	}{
		{"redirect by default", Fault{Kind: FaultRedirect}, http.StatusTemporaryRedirect, "/v1/payments/send", "", 0},
		{"redirect elsewhere", Fault{Kind: FaultRedirect, Status: 301, Location: "http://127.0.0.1:1/x"}, 301, "http://127.0.0.1:1/x", "", 0},
		{"redirect after the work", Fault{Kind: FaultRedirectAfterWork, Status: 303}, 303, "/v1/payments/send", "", 1},
		{"unclassified by default", Fault{Kind: FaultUnclassifiedAfterWork}, 200, "", "{}", 1},
		{"unclassified 304", Fault{Kind: FaultUnclassifiedAfterWork, Status: 304, Body: ""}, 304, "", "", 1},
		{"unclassified data null", Fault{Kind: FaultUnclassifiedAfterWork, Body: `{"data":null}`}, 200, "", `{"data":null}`, 1},
		{"429 after the work", Fault{Kind: FaultHTTP429AfterWork, RetryAfter: time.Second}, 429, "", "", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestServer(t, Config{})
			ts := newFaultServer(t, s)
			f := tc.fault
			f.Route = "POST /v1/payments/send"
			require.NoError(t, s.InjectFault(f))
			resp, body, err := exchange(t, noRedirects, ts, http.MethodPost, "/v1/payments/send", sendBody("233241234567", "odd1", "http://127.0.0.1:1/cb", "5000"))
			require.NoError(t, err)
			assert.Equal(t, tc.status, resp.StatusCode)
			assert.Equal(t, tc.location, resp.Header.Get("Location"))
			if tc.body != "" {
				assert.Equal(t, tc.body, string(body))
			}
			assert.Len(t, s.Movements("odd1"), tc.done)
		})
	}
	s := newTestServer(t, Config{})
	assert.ErrorContains(t, s.InjectFault(Fault{Route: "POST /v1/payments", Kind: FaultRedirect, Status: 200}), "300 to 399")
	assert.ErrorContains(t, s.InjectFault(Fault{Route: "POST /v1/payments", Kind: FaultUnclassifiedAfterWork, Status: 101}), "200 to 599")
	assert.ErrorContains(t, s.InjectFault(Fault{Route: "POST /v1/payments", Kind: FaultHTTP500, Status: 302}), "takes no Status")
}
