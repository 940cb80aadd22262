package billingtest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rawCall sends a request with the sandbox's client credentials and returns
// the status, the X-Request-Id and the body with its JSON kept raw.
func rawCall(t *testing.T, s *Server, method, path, body string) (int, string, map[string]json.RawMessage) {
	t.Helper()
	status, header, raw := send(t, s, method, path, body)
	return status, header.Get("X-Request-Id"), rawObject(t, raw)
}

func rawObject(t *testing.T, raw []byte) map[string]json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(raw, &m), "body: %s", raw)
	return m
}

// callbackRecorder serves 200 to callbacks and keeps their bodies.
type callbackRecorder struct {
	URL    string
	mu     sync.Mutex
	bodies [][]byte
}

func newCallbackRecorder(t *testing.T) *callbackRecorder {
	t.Helper()
	rec := &callbackRecorder{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var buf bytes.Buffer
		_, _ = buf.ReadFrom(r.Body)
		rec.mu.Lock()
		rec.bodies = append(rec.bodies, buf.Bytes())
		rec.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	rec.URL = srv.URL
	return rec
}

func (c *callbackRecorder) received() [][]byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([][]byte(nil), c.bodies...)
}

const receive80 = `{"amount":80,"phone":"233241234567","provider":"MTN","description":"Order 7",
	"callbackUrl":"%s","metadata":{"clientReference":"ORDER2291"}}`

func TestWithWireProviderAnswersAsTheProvider(t *testing.T) {
	callbacks := newCallbackRecorder(t)
	s := NewServer(t, WithWire(WireProvider), WithManualClock())
	assert.Equal(t, WireProvider, s.Wire())

	status, _, body := rawCall(t, s, http.MethodPost, "/v1/payments/receive", strings.Replace(receive80, "%s", callbacks.URL, 1))
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, `"0001"`, string(body["ResponseCode"]))
	data := rawObject(t, body["Data"])
	assert.Equal(t, "0.8", string(data["Amount"]), "80 minor units are 0.8 cedis")
	assert.Equal(t, `"ORDER2291"`, string(data["ClientReference"]))

	s.Advance(time.Second)
	got := callbacks.received()
	require.Len(t, got, 1)
	callback := rawObject(t, got[0])
	assert.Equal(t, `"0000"`, string(callback["ResponseCode"]))
	assert.Regexp(t, `^"2025-01-01T00:00:00\.0000000Z"$`, string(rawObject(t, callback["Data"])["PaymentDate"]))

	status, _, body = rawCall(t, s, http.MethodGet, "/v1/payments/ORDER2291", "")
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, `"0000"`, string(body["responseCode"]))
	assert.Equal(t, "0.8", string(rawObject(t, body["data"])["amount"]))
	assert.Equal(t, "null", string(rawObject(t, body["data"])["isFulfilled"]))
}

func TestTheSpecsWireIsTheDefault(t *testing.T) {
	for _, s := range []*Server{NewServer(t), NewServer(t, WithWire(WireSpec))} {
		assert.Equal(t, WireSpec, s.Wire())
		status, _, body := rawCall(t, s, http.MethodPost, "/v1/payments/receive", strings.Replace(receive80, "%s", "http://127.0.0.1:1/cb", 1))
		require.Equal(t, http.StatusOK, status)
		assert.Equal(t, "true", string(body["success"]))
		assert.Equal(t, "80", string(rawObject(t, body["data"])["amount"]), "minor units on the spec's wire")
	}
	assert.Equal(t, []Wire{WireSpec, WireProvider}, Wires())
}

func TestStartRefusesAWireTheSandboxDoesNotSpeak(t *testing.T) {
	s, err := Start(WithWire("soap"))
	require.ErrorContains(t, err, `unknown wire "soap": use spec or provider`)
	assert.Nil(t, s)
}

func TestEveryAnswerCarriesARequestID(t *testing.T) {
	for _, wire := range Wires() {
		s := NewServer(t, WithWire(wire))
		ids := map[string]bool{}
		for _, path := range []string{"/v1/customers", "/v1/payments/nothing", "/sandbox/sms?msisdn=233241234567"} {
			_, id, _ := rawCall(t, s, http.MethodGet, path, "")
			assert.Regexp(t, `^req_[0-9a-f]{24}$`, id, "%s %s", wire, path)
			ids[id] = true
		}
		assert.Len(t, ids, 3, "one id per request")
	}
}
