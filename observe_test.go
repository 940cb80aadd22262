package billing

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type spanKey struct{}

// recordingObserver writes each event as a line and marks the contexts it returns, so a
// test can check that they reach the next event and the transport.
type recordingObserver struct {
	mu     sync.Mutex
	events []string
	calls  []*CallInfo
}

func (r *recordingObserver) add(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, fmt.Sprintf(format, args...))
}

func (r *recordingObserver) CallStart(ctx context.Context, call *CallInfo) context.Context {
	r.add("call start %s %s %t:%t money=%t ref=%s parent=%v", call.Method, call.Route, call.ServerAddress != "", call.ServerPort != 0,
		call.MoneyMovement, call.ClientReference, ctx.Value(spanKey{}))
	return context.WithValue(ctx, spanKey{}, "call")
}

func (r *recordingObserver) CallEnd(ctx context.Context, call *CallInfo) {
	r.add("call end status=%d code=%s id=%s attempts=%d unknown=%t err=%t span=%v", call.StatusCode, call.ResponseCode, call.RequestID,
		call.Attempts, call.OutcomeUnknown, call.Err != nil, ctx.Value(spanKey{}))
	r.mu.Lock()
	r.calls = append(r.calls, call)
	r.mu.Unlock()
}

func (r *recordingObserver) AttemptStart(ctx context.Context, a *AttemptInfo) context.Context {
	r.add("attempt %d start parent=%v", a.Attempt, ctx.Value(spanKey{}))
	return context.WithValue(ctx, spanKey{}, fmt.Sprintf("attempt %d", a.Attempt))
}

func (r *recordingObserver) AttemptEnd(ctx context.Context, a *AttemptInfo) {
	r.add("attempt %d end status=%d id=%s err=%t retryable=%t span=%v", a.Attempt, a.StatusCode, a.RequestID, a.Err != nil, a.Retryable, ctx.Value(spanKey{}))
}

func (r *recordingObserver) recorded() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.events...)
}

// spanSeer is a transport that records the span each request was sent under.
type spanSeer struct {
	mu   sync.Mutex
	seen []any
}

func (s *spanSeer) RoundTrip(r *http.Request) (*http.Response, error) {
	s.mu.Lock()
	s.seen = append(s.seen, r.Context().Value(spanKey{}))
	s.mu.Unlock()
	return http.DefaultTransport.RoundTrip(r)
}

func TestObserverIsToldOfEachCallAndAttempt(t *testing.T) {
	for name, tc := range map[string]struct {
		steps []func(http.ResponseWriter, *http.Request)
		call  func(c *Client) error
		want  []string
	}{
		"a read answered at once": {
			steps: []func(http.ResponseWriter, *http.Request){withRequestID("req_1", jsonAnswer(200, okCustomer))},
			call:  func(c *Client) error { _, err := c.Customers.Get(ctx(), "cust_1"); return err },
			want: []string{
				"call start GET /v1/customers/{id} true:true money=false ref= parent=<nil>",
				"attempt 1 start parent=call",
				"attempt 1 end status=200 id=req_1 err=false retryable=false span=attempt 1",
				"call end status=200 code= id=req_1 attempts=1 unknown=false err=false span=call",
			},
		},
		"a read retried after a 503 and a body cut short": {
			steps: []func(http.ResponseWriter, *http.Request){
				withRequestID("req_1", jsonAnswer(503, serverFailure)),
				withRequestID("req_2", truncatedBody),
				withRequestID("req_3", jsonAnswer(200, okCustomer)),
			},
			call: func(c *Client) error { _, err := c.Customers.Get(ctx(), "cust_1"); return err },
			want: []string{
				"call start GET /v1/customers/{id} true:true money=false ref= parent=<nil>",
				"attempt 1 start parent=call",
				"attempt 1 end status=503 id=req_1 err=false retryable=true span=attempt 1",
				"attempt 2 start parent=call",
				"attempt 2 end status=200 id=req_2 err=true retryable=true span=attempt 2",
				"attempt 3 start parent=call",
				"attempt 3 end status=200 id=req_3 err=false retryable=false span=attempt 3",
				"call end status=200 code= id=req_3 attempts=3 unknown=false err=false span=call",
			},
		},
		"a refusal": {
			steps: []func(http.ResponseWriter, *http.Request){withRequestID("req_1", jsonAnswer(404, `{"success":false,"message":"no"}`))},
			call:  func(c *Client) error { _, err := c.Customers.Get(ctx(), "cust_1"); return err },
			want: []string{
				"call start GET /v1/customers/{id} true:true money=false ref= parent=<nil>",
				"attempt 1 start parent=call",
				"attempt 1 end status=404 id=req_1 err=false retryable=false span=attempt 1",
				"call end status=404 code= id=req_1 attempts=1 unknown=false err=true span=call",
			},
		},
		"a money movement answered 500": {
			steps: []func(http.ResponseWriter, *http.Request){withRequestID("req_1", jsonAnswer(500, serverFailure))},
			call:  func(c *Client) error { return moneyCall(ctx(), c, "ref_1") },
			want: []string{
				"call start POST /v1/payments/receive true:true money=true ref=ref_1 parent=<nil>",
				"attempt 1 start parent=call",
				"attempt 1 end status=500 id=req_1 err=false retryable=false span=attempt 1",
				"call end status=500 code=5000 id=req_1 attempts=1 unknown=true err=true span=call",
			},
		},
		"a money movement whose connection was reset": {
			steps: []func(http.ResponseWriter, *http.Request){resetConnection},
			call:  func(c *Client) error { return moneyCall(ctx(), c, "ref_1") },
			want: []string{
				"call start POST /v1/payments/receive true:true money=true ref=ref_1 parent=<nil>",
				"attempt 1 start parent=call",
				"attempt 1 end status=0 id= err=true retryable=false span=attempt 1",
				"call end status=0 code= id= attempts=1 unknown=true err=true span=call",
			},
		},
		"a money movement accepted after a 429": {
			steps: []func(http.ResponseWriter, *http.Request){
				jsonAnswer(429, `{"success":false,"message":"slow down"}`, "Retry-After", "1"),
				withRequestID("req_2", jsonAnswer(200, `{"message":"accepted","responseCode":"0001","data":{"transactionId":"tx_1","clientReference":"ref_1","amount":5000}}`)),
			},
			call: func(c *Client) error { return moneyCall(ctx(), c, "ref_1") },
			want: []string{
				"call start POST /v1/payments/receive true:true money=true ref=ref_1 parent=<nil>",
				"attempt 1 start parent=call",
				"attempt 1 end status=429 id= err=false retryable=true span=attempt 1",
				"attempt 2 start parent=call",
				"attempt 2 end status=200 id=req_2 err=false retryable=false span=attempt 2",
				"call end status=200 code=0001 id=req_2 attempts=2 unknown=false err=false span=call",
			},
		},
	} {
		t.Run(name, func(t *testing.T) {
			srv := newScriptedServer(t, tc.steps...)
			obs := &recordingObserver{}
			seer := &spanSeer{}
			c, _ := newTestClient(t, srv.URL, WithObserver(obs), WithHTTPClient(&http.Client{Transport: seer}))

			_ = tc.call(c)
			assert.Equal(t, tc.want, obs.recorded())
			want := make([]any, 0, srv.hits.Load())
			for i := range int(srv.hits.Load()) {
				want = append(want, fmt.Sprintf("attempt %d", i+1))
			}
			assert.Equal(t, want, seer.seen, "each attempt is sent under the context its AttemptStart returned")
		})
	}
}

func TestObserverNestsUnderTheCallersContext(t *testing.T) {
	srv := newScriptedServer(t, jsonAnswer(200, okCustomer))
	obs := &recordingObserver{}
	c, _ := newTestClient(t, srv.URL, WithObserver(obs))

	_, err := c.Customers.Get(context.WithValue(ctx(), spanKey{}, "caller"), "cust_1")
	require.NoError(t, err)
	assert.True(t, strings.HasSuffix(obs.recorded()[0], "parent=caller"), obs.recorded()[0])
}

func TestObserverRouteMasksNumbers(t *testing.T) {
	srv := newScriptedServer(t, jsonAnswer(200, `{"success":true,"data":{}}`))
	obs := &recordingObserver{}
	c, _ := newTestClient(t, srv.URL, WithObserver(obs))

	_, _ = c.Mandates.Cancel(ctx(), "233241234567")
	require.NotEmpty(t, obs.calls)
	assert.Equal(t, "/v1/mandates/preapproval/{customerMsisdn}/cancel", obs.calls[0].Route)
}

func TestObserverIsNotToldOfCallsRefusedBeforeSending(t *testing.T) {
	srv := newScriptedServer(t, jsonAnswer(200, okCustomer))
	obs := &recordingObserver{}
	c, _ := newTestClient(t, srv.URL, WithObserver(obs))

	_, err := c.Customers.Get(ctx(), "")
	var v *ValidationError
	require.ErrorAs(t, err, &v)
	assert.Empty(t, obs.recorded())
}

func TestObserverKeepsHooksAlreadyOnTheTransport(t *testing.T) {
	srv := newScriptedServer(t, jsonAnswer(200, okCustomer))
	c, err := NewClient(WithBaseURL(srv.URL), WithSecretKey("sk"))
	require.NoError(t, err)
	var earlier int
	c.http.RequestLogHook = func(_ retryablehttp.Logger, _ *http.Request, _ int) { earlier++ }
	obs := &recordingObserver{}
	c.setObserver(obs, c.base)

	_, err = c.Customers.Get(ctx(), "cust_1")
	require.NoError(t, err)
	assert.Equal(t, 1, earlier)
	assert.Len(t, obs.recorded(), 4)
}

func TestObserverServerAddressAndPort(t *testing.T) {
	for base, want := range map[string]string{
		"https://api.example.com":         "api.example.com:443",
		"https://api.example.com:8443/v2": "api.example.com:8443",
		"http://127.0.0.1":                "127.0.0.1:80",
		"http://[::1]:4010":               "::1:4010",
	} {
		c, err := NewClient(WithBaseURL(base), WithSecretKey("sk"), WithObserver(&recordingObserver{}))
		require.NoError(t, err)
		assert.Equal(t, want, fmt.Sprintf("%s:%d", c.observer.address, c.observer.port), base)
	}
	_, err := NewClient(WithBaseURL("https://api.example.com"), WithSecretKey("sk"), WithObserver(nil))
	assert.ErrorContains(t, err, "WithObserver needs an observer")
}

// Without an Observer and a ResponseMeta, observing a call costs no allocation: the
// pipeline only checks that there is nothing to tell.
func TestUnobservedCallsAllocateNothingForObserving(t *testing.T) {
	c, err := NewClient(WithBaseURL("https://api.example.com"), WithSecretKey("sk"))
	require.NoError(t, err)
	assert.Nil(t, c.observer, "nothing to tell without an Observer")
	o := newOp(http.MethodGet, "/v1/customers/cust_1")
	st := &attemptState{attempts: 1}
	res := &response{done: true, status: 200}
	h := &envelopeHeader{}
	background := context.WithValue(ctx(), spanKey{}, "caller")
	allocs := testing.AllocsPerRun(100, func() {
		cctx, call := c.startCall(background, o)
		if cctx != background || call != nil {
			t.Fatal("an unobserved call was observed")
		}
		call.finish(st, res, h, nil)
	})
	assert.Zero(t, allocs)
}
