package sandbox

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// testStart is where the manual clock of test servers stands.
var testStart = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

// Authorization headers for the default credentials.
var (
	basicHeader   = "Basic " + base64.StdEncoding.EncodeToString([]byte(DefaultClientID+":"+DefaultClientSecret))
	secretHeader  = "Bearer " + DefaultSecretKey
	sessionHeader = "Bearer " + DefaultSessionToken
)

// newTestServer returns a sandbox on a manual clock at testStart unless cfg
// names a clock, closed when the test ends.
func newTestServer(tb testing.TB, cfg Config) *Server {
	tb.Helper()
	if cfg.Clock == nil {
		cfg.Clock = NewManualClock(testStart)
	}
	s := New(cfg)
	tb.Cleanup(s.Close)
	return s
}

// request builds a request from a loopback address; body is sent as is when
// it is a string, else encoded as JSON.
func request(tb testing.TB, method, target, auth string, body any) *http.Request {
	tb.Helper()
	var reader io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		reader = strings.NewReader(b)
	default:
		encoded, err := json.Marshal(b)
		require.NoError(tb, err)
		reader = strings.NewReader(string(encoded))
	}
	req := httptest.NewRequest(method, target, reader)
	req.RemoteAddr = "127.0.0.1:50000"
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	return req
}

// serve sends one request to h in-process and returns the recorded answer.
func serve(tb testing.TB, h http.Handler, method, target, auth string, body any) *httptest.ResponseRecorder {
	tb.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, request(tb, method, target, auth, body))
	return rec
}

// envelope holds both the success envelope and the error body.
type envelope[T any] struct {
	Success bool   `json:"success"`
	Data    T      `json:"data"`
	Message string `json:"message"`
	Code    string `json:"code"`
	Field   string `json:"field"`
}

// decode checks the status and content type of rec and decodes its body.
func decode[T any](tb testing.TB, rec *httptest.ResponseRecorder, status int) envelope[T] {
	tb.Helper()
	require.Equal(tb, status, rec.Code, "body: %s", rec.Body)
	require.Equal(tb, "application/json", rec.Header().Get("Content-Type"))
	var env envelope[T]
	require.NoError(tb, json.Unmarshal(rec.Body.Bytes(), &env), "body: %s", rec.Body)
	return env
}

// requireError checks an error body: status, code, field, and a piece of the message.
func requireError(tb testing.TB, rec *httptest.ResponseRecorder, status int, code, field, message string) {
	tb.Helper()
	env := decode[json.RawMessage](tb, rec, status)
	require.False(tb, env.Success)
	require.Equal(tb, code, env.Code, "body: %s", rec.Body)
	require.Equal(tb, field, env.Field, "body: %s", rec.Body)
	require.Contains(tb, env.Message, message)
}

// okHandler answers {"success":true,"data":"ok"}: the handler of test routes.
func okHandler(w http.ResponseWriter, _ *http.Request) { writeData(w, http.StatusOK, "ok") }
