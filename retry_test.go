package billing

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// waitRecorder replaces the transport's sleep: it records each wait and returns at once.
type waitRecorder struct {
	mu    sync.Mutex
	waits []time.Duration
	hook  func(n int) // called with the wait's index, before returning
}

func (w *waitRecorder) wait(d time.Duration) time.Duration {
	w.mu.Lock()
	w.waits = append(w.waits, d)
	n := len(w.waits)
	w.mu.Unlock()
	if w.hook != nil {
		w.hook(n)
	}
	return 0
}

func (w *waitRecorder) recorded() []time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]time.Duration(nil), w.waits...)
}

// newTestClient returns a client for baseURL whose retry waits are recorded, not slept.
func newTestClient(t *testing.T, baseURL string, opts ...Option) (*Client, *waitRecorder) {
	t.Helper()
	c, err := NewClient(append([]Option{
		WithBaseURL(baseURL),
		WithClientCredentials("client-id", "client-secret"),
		WithRetry(4, 10*time.Millisecond, 100*time.Millisecond),
	}, opts...)...)
	require.NoError(t, err)
	rec := &waitRecorder{}
	c.retryWait = rec.wait
	return c, rec
}

// scriptedServer answers each request with the next step of its script; the last step
// repeats. It counts the requests that reached it.
type scriptedServer struct {
	*httptest.Server
	hits  atomic.Int32
	steps []func(w http.ResponseWriter, r *http.Request)
}

func newScriptedServer(t *testing.T, steps ...func(w http.ResponseWriter, r *http.Request)) *scriptedServer {
	t.Helper()
	s := &scriptedServer{steps: steps}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := int(s.hits.Add(1)) - 1
		s.steps[min(n, len(s.steps)-1)](w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func jsonAnswer(status int, body string, headers ...string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}
}

// resetConnection reads the request, then drops the connection with a TCP reset: the
// server did the work but the client never hears of it.
func resetConnection(w http.ResponseWriter, r *http.Request) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err != nil {
		panic(err)
	}
	if tcp, ok := conn.(*net.TCPConn); ok {
		_ = tcp.SetLinger(0)
	}
	_ = conn.Close()
}

// truncatedBody promises more bytes than it sends.
func truncatedBody(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", "200")
	_, _ = w.Write([]byte(`{"success":true,"data":{"id":"cust_`))
}

const (
	okCustomer    = `{"success":true,"data":{"id":"cust_1","email":"ama@example.com","name":"Ama","status":"ACTIVE"}}`
	serverFailure = `{"success":false,"message":"internal error","code":"5000"}`
)

func TestRetryGetOnServerErrorsAndResets(t *testing.T) {
	for name, failure := range map[string]func(http.ResponseWriter, *http.Request){
		"500":       jsonAnswer(500, serverFailure),
		"502":       jsonAnswer(502, `<html>bad gateway</html>`),
		"503":       jsonAnswer(503, serverFailure),
		"reset":     resetConnection,
		"truncated": truncatedBody,
		"malformed": jsonAnswer(200, `{"success":true,"data":{"id":`),
	} {
		t.Run(name, func(t *testing.T) {
			srv := newScriptedServer(t, failure, failure, jsonAnswer(200, okCustomer))
			c, rec := newTestClient(t, srv.URL)

			cust, err := c.Customers.Get(context.Background(), "cust_1")
			require.NoError(t, err)
			assert.Equal(t, "cust_1", cust.ID)
			assert.EqualValues(t, 3, srv.hits.Load(), "two failures, then the answer")
			assert.Len(t, rec.recorded(), 2)
		})
	}
}

func TestRetryGetGivesUpAfterMaxAttempts(t *testing.T) {
	srv := newScriptedServer(t, jsonAnswer(503, serverFailure))
	c, _ := newTestClient(t, srv.URL)

	_, err := c.Customers.Get(context.Background(), "cust_1")
	var apiErr *APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, 503, apiErr.StatusCode)
	assert.Equal(t, ResponseCode("5000"), apiErr.Code)
	assert.Equal(t, "internal error", apiErr.Message)
	assert.EqualValues(t, 4, srv.hits.Load())
}

func TestWriteIsNotResentOnceItMayHaveReachedTheServer(t *testing.T) {
	for name, failure := range map[string]func(http.ResponseWriter, *http.Request){
		"500":   jsonAnswer(500, serverFailure),
		"503":   jsonAnswer(503, serverFailure, "Retry-After", "1"),
		"reset": resetConnection,
	} {
		t.Run(name, func(t *testing.T) {
			srv := newScriptedServer(t, failure, jsonAnswer(201, okCustomer))
			c, _ := newTestClient(t, srv.URL)

			_, err := c.Customers.Create(context.Background(), &CustomerCreateParams{Email: "ama@example.com", Name: "Ama"})
			require.Error(t, err)
			assert.EqualValues(t, 1, srv.hits.Load(), "a create must not be sent twice")
			if name == "reset" {
				// Its answer was lost: the customer may have been created.
				assert.ErrorIs(t, err, ErrOutcomeUnknown)
			} else {
				assert.NotErrorIs(t, err, ErrOutcomeUnknown, "the service answered: a definite failure")
			}
		})
	}
}

// moneyCall sends a POST through the pipeline as a money movement.
func moneyCall(ctx context.Context, c *Client, ref string) error {
	o := &op{method: http.MethodPost, path: "/v1/payments/receive", body: map[string]any{"amount": 100},
		auth: authBasic, retry: retryMoney, clientReference: ref, ipRestricted: true}
	_, err := send[map[string]any](ctx, c, o)
	return err
}

func TestMoneyMovementAmbiguousFailuresAreOutcomeUnknown(t *testing.T) {
	for name, failure := range map[string]func(http.ResponseWriter, *http.Request){
		"500":       jsonAnswer(500, serverFailure),
		"502 html":  jsonAnswer(502, `<html>bad gateway</html>`),
		"503":       jsonAnswer(503, serverFailure, "Retry-After", "1"),
		"504":       jsonAnswer(504, ``),
		"reset":     resetConnection,
		"truncated": truncatedBody,
		"malformed": jsonAnswer(200, `{"success":tr`),
		"0005":      jsonAnswer(200, `{"success":false,"responseCode":"0005","message":"connection error"}`),
	} {
		t.Run(name, func(t *testing.T) {
			srv := newScriptedServer(t, failure, jsonAnswer(200, acceptedReceive))
			c, _ := newTestClient(t, srv.URL)

			err := moneyCall(context.Background(), c, "ref123")
			require.ErrorIs(t, err, ErrOutcomeUnknown)
			var unknown *OutcomeUnknownError
			require.ErrorAs(t, err, &unknown)
			assert.Equal(t, "ref123", unknown.ClientReference)
			assert.Contains(t, err.Error(), "ref123")
			assert.EqualValues(t, 1, srv.hits.Load(), "money must never be sent twice")
		})
	}
}

func TestMoneyMovementDefiniteFailuresAreAPIErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		answer func(http.ResponseWriter, *http.Request)
		code   ResponseCode
		is     error
	}{
		"400":             {jsonAnswer(400, `{"success":false,"message":"amount is required","code":"4000","field":"amount"}`), CodeValidation, ErrInvalidRequest},
		"2001 under 200":  {jsonAnswer(200, `{"success":false,"responseCode":"2001","message":"duplicate client reference"}`), CodeFailed, nil},
		"4070 under 200":  {jsonAnswer(200, `{"message":"declined","responseCode":"4070"}`), CodeDeclined, nil},
		"pascal 4075":     {jsonAnswer(200, `{"ResponseCode":"4075","Message":"insufficient balance","Data":null}`), CodeInsufficientBalance, nil},
		"403 allowlist":   {jsonAnswer(403, `{"success":false,"message":"forbidden","code":"ip_not_allowed"}`), "ip_not_allowed", ErrIPNotAllowed},
		"403 scope":       {jsonAnswer(403, `{"success":false,"message":"scope disabled","code":"4101"}`), CodeKeysMismatch, ErrUnauthorized},
		"401 credentials": {jsonAnswer(401, `{"success":false,"message":"bad credentials","code":"4101"}`), CodeKeysMismatch, ErrUnauthorized},
	} {
		t.Run(name, func(t *testing.T) {
			srv := newScriptedServer(t, tc.answer)
			c, _ := newTestClient(t, srv.URL)

			err := moneyCall(context.Background(), c, "ref123")
			var apiErr *APIError
			require.ErrorAs(t, err, &apiErr)
			assert.NotErrorIs(t, err, ErrOutcomeUnknown)
			assert.Equal(t, tc.code, apiErr.Code)
			assert.NotEmpty(t, apiErr.Body)
			if tc.is != nil {
				assert.ErrorIs(t, err, tc.is)
			}
			assert.EqualValues(t, 1, srv.hits.Load())
		})
	}
}

func TestRateLimitWaitsRetryAfterForEveryKindOfRequest(t *testing.T) {
	limited := jsonAnswer(429, `{"success":false,"message":"slow down","code":"429"}`, "Retry-After", "7")
	t.Run("money", func(t *testing.T) {
		srv := newScriptedServer(t, limited, jsonAnswer(200, acceptedReceive))
		c, rec := newTestClient(t, srv.URL)
		require.NoError(t, moneyCall(context.Background(), c, "ref1"))
		assert.Equal(t, []time.Duration{7 * time.Second}, rec.recorded())
		assert.EqualValues(t, 2, srv.hits.Load())
	})
	t.Run("create", func(t *testing.T) {
		srv := newScriptedServer(t, limited, jsonAnswer(201, okCustomer))
		c, rec := newTestClient(t, srv.URL)
		_, err := c.Customers.Create(context.Background(), &CustomerCreateParams{Email: "ama@example.com", Name: "Ama"})
		require.NoError(t, err)
		assert.Equal(t, []time.Duration{7 * time.Second}, rec.recorded())
	})
	t.Run("http date", func(t *testing.T) {
		at := time.Now().Add(90 * time.Second).UTC().Format(http.TimeFormat)
		srv := newScriptedServer(t, jsonAnswer(429, `{}`, "Retry-After", at), jsonAnswer(200, okCustomer))
		c, rec := newTestClient(t, srv.URL)
		c.maxRetryAfter = 5 * time.Minute
		_, err := c.Customers.Get(context.Background(), "cust_1")
		require.NoError(t, err)
		require.Len(t, rec.recorded(), 1)
		assert.InDelta(t, 90, rec.recorded()[0].Seconds(), 2)
	})
	t.Run("too long a pause gives up", func(t *testing.T) {
		srv := newScriptedServer(t, jsonAnswer(429, `{"success":false,"message":"later"}`, "Retry-After", "3600"))
		c, rec := newTestClient(t, srv.URL)
		_, err := c.Customers.Get(context.Background(), "cust_1")
		assert.ErrorIs(t, err, ErrRateLimited)
		assert.Empty(t, rec.recorded())
		assert.EqualValues(t, 1, srv.hits.Load())
	})
}

func TestBackoffGrowsExponentiallyWithJitter(t *testing.T) {
	srv := newScriptedServer(t, jsonAnswer(500, serverFailure))
	c, rec := newTestClient(t, srv.URL, WithRetry(5, 100*time.Millisecond, 500*time.Millisecond))
	_, err := c.Customers.Get(context.Background(), "cust_1")
	require.Error(t, err)
	waits := rec.recorded()
	require.Len(t, waits, 4)
	for i, limit := range []time.Duration{100, 200, 400, 500} {
		limit *= time.Millisecond
		assert.GreaterOrEqual(t, waits[i], limit/2, "wait %d", i)
		assert.LessOrEqual(t, waits[i], limit, "wait %d", i)
	}
}

func TestCancelledContextStopsTheWaitAtOnce(t *testing.T) {
	srv := newScriptedServer(t, jsonAnswer(429, `{"success":false,"message":"slow down"}`, "Retry-After", "30"))
	c, _ := newTestClient(t, srv.URL)
	waiting := make(chan struct{})
	c.retryWait = func(d time.Duration) time.Duration {
		close(waiting)
		return d // really wait the 30s, unless cancelled
	}

	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-waiting; cancel() }()
	err := moneyCall(ctx, c, "ref1")
	assert.ErrorIs(t, err, context.Canceled)
	assert.NotErrorIs(t, err, ErrOutcomeUnknown, "a 429 did no work, so the outcome is known: nothing moved")
	assert.EqualValues(t, 1, srv.hits.Load())
}

func TestDialFailureIsRetriedForAnyMethod(t *testing.T) {
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		t.Run(method, func(t *testing.T) {
			// Reserve an address, then free it so the first dial is refused.
			l, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			addr := l.Addr().String()
			require.NoError(t, l.Close())

			var hits atomic.Int32
			c, rec := newTestClient(t, "http://"+addr)
			rec.hook = func(n int) {
				if n != 1 {
					return
				}
				// Bring the server up during the first backoff.
				l, err := net.Listen("tcp", addr)
				require.NoError(t, err)
				srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					hits.Add(1)
					jsonAnswer(200, acceptedReceive)(w, r)
				})}
				go func() { _ = srv.Serve(l) }()
				t.Cleanup(func() { _ = srv.Close() })
			}
			if method == http.MethodGet {
				_, err = c.Customers.Get(context.Background(), "cust_1")
			} else {
				err = moneyCall(context.Background(), c, "ref1")
			}
			require.NoError(t, err)
			assert.EqualValues(t, 1, hits.Load())
			assert.Len(t, rec.recorded(), 1)
		})
	}
}

func TestDialFailureExhaustedIsNotOutcomeUnknown(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	c, rec := newTestClient(t, "http://"+addr)

	err = moneyCall(context.Background(), c, "ref1")
	require.Error(t, err)
	assert.NotErrorIs(t, err, ErrOutcomeUnknown, "nothing was ever connected: the payment surely did not happen")
	assert.Len(t, rec.recorded(), 3)
}

func TestRequestBodyIsReplayableWithKnownLength(t *testing.T) {
	var lengths []int64
	var bodies []string
	var mu sync.Mutex
	srv := newScriptedServer(t, func(w http.ResponseWriter, r *http.Request) {
		b := make([]byte, r.ContentLength)
		_, _ = r.Body.Read(b)
		mu.Lock()
		lengths, bodies = append(lengths, r.ContentLength), append(bodies, string(b))
		mu.Unlock()
		if len(lengths) == 1 {
			jsonAnswer(429, `{}`, "Retry-After", "0")(w, r)
			return
		}
		jsonAnswer(201, okCustomer)(w, r)
	})
	c, _ := newTestClient(t, srv.URL)
	_, err := c.Customers.Create(context.Background(), &CustomerCreateParams{Email: "ama@example.com", Name: "Ama"})
	require.NoError(t, err)
	require.Len(t, bodies, 2)
	assert.Equal(t, bodies[0], bodies[1])
	assert.Equal(t, int64(len(bodies[0])), lengths[0])
	assert.JSONEq(t, `{"email":"ama@example.com","name":"Ama"}`, bodies[1])
}

func TestContextDeadlineDuringMoneyMovementIsOutcomeUnknown(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	srv := newScriptedServer(t, func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-release // the work is under way when the caller gives up
		jsonAnswer(200, acceptedReceive)(w, r)
	})
	defer close(release)
	c, _ := newTestClient(t, srv.URL)

	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	err := moneyCall(ctx, c, "ref1")
	assert.ErrorIs(t, err, ErrOutcomeUnknown)
	assert.ErrorIs(t, err, context.Canceled)
	assert.EqualValues(t, 1, srv.hits.Load())
}
