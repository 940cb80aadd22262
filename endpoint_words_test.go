package billing

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lostAnswerServer reads every request whole, then closes the connection without an
// answer: the work may have been done, its answer is lost.
type lostAnswerServer struct {
	*httptest.Server
	mu       sync.Mutex
	attempts int
}

func newLostAnswerServer(t *testing.T) *lostAnswerServer {
	s := &lostAnswerServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		s.mu.Lock()
		s.attempts++
		s.mu.Unlock()
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			_ = conn.Close()
		}
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *lostAnswerServer) take() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.attempts
	s.attempts = 0
	return n
}

// endpointOfRoute returns the row of the endpoint table whose route an Observer saw.
func endpointOfRoute(route string) (*endpoint, bool) {
	for id := range endpointCount {
		if e := &endpoints[id]; e.method+" "+e.path == route {
			return e, true
		}
	}
	return nil, false
}

// Every exported call, found by reflection, loses its answer after the request was
// written. The endpoint table's retry class alone decides what the caller is told: a read
// (or a write the service dedupes) is asked again and fails as a plain error; every other
// write was sent once and its error matches ErrOutcomeUnknown, since the work may have
// been done (a balance deducted, an activation counted) and a merchant who retried
// without looking would do it twice.
func TestALostAnswerToAWriteNotSafeToRepeatIsAnUnknownOutcome(t *testing.T) {
	srv := newLostAnswerServer(t)
	obs := &routeObserver{}
	clients := map[string]*Client{}
	var err error
	clients["client credentials"], err = NewClient(WithBaseURL(srv.URL), WithClientCredentials("client-id", "client-secret"),
		WithDisbursementAccount("2020202"), WithRetry(3, 0, 0), WithObserver(obs))
	require.NoError(t, err)
	clients["session token"], err = NewClient(WithBaseURL(srv.URL), WithSessionToken("session-token"), WithRetry(3, 0, 0), WithObserver(obs))
	require.NoError(t, err)

	classes := map[retryClass]int{}
	for clientName, c := range clients {
		for _, call := range exportedCalls(t, c) {
			var routes []string
			var err error
			attempts := 0
			for pick := range validIDs {
				args, _ := baseArgs(t, call.name, call.fn(), pick)
				err = invoke(call.fn(), args)
				attempts = srv.take()
				if routes = obs.take(); len(routes) > 0 {
					break
				}
			}
			if len(routes) == 0 {
				if clientName == "client credentials" {
					t.Errorf("%s: no valid call reaches the server", call.name)
				}
				continue
			}
			e, ok := endpointOfRoute(routes[0])
			if !ok {
				t.Errorf("%s: route %s is no row of the endpoint table", call.name, routes[0])
				continue
			}
			classes[e.retry]++
			unknown := errors.Is(err, ErrOutcomeUnknown)
			switch e.retry {
			case retryRead:
				if unknown || err == nil || attempts < 2 {
					t.Errorf("%s (%s, %s): a read that lost its answer: %d attempts, error %v; want it asked again and a plain error",
						call.name, clientName, routes[0], attempts, err)
				}
			default:
				if !unknown || attempts != 1 {
					t.Errorf("%s (%s, %s): a write not safe to repeat lost its answer: %d attempts, error %v; want one attempt and ErrOutcomeUnknown",
						call.name, clientName, routes[0], attempts, err)
				}
				var ue *OutcomeUnknownError
				if errors.As(err, &ue) && reflect.ValueOf(ue.Err).IsZero() {
					t.Errorf("%s: the unknown outcome carries no cause", call.name)
				}
			}
		}
	}
	t.Logf("calls by retry class: read %d, write %d, money %d", classes[retryRead], classes[retryWrite], classes[retryMoney])
	require.Positive(t, classes[retryWrite])
	require.Positive(t, classes[retryRead])
}

// The words table has a row for every endpoint; a write not safe to repeat, and only
// such a write, says where to look when its answer was lost.
func TestEveryEndpointIsNamedAndEveryUnsafeWriteSaysWhereToLook(t *testing.T) {
	for id := range endpointCount {
		e, w := endpoints[id], endpointWording[id]
		if w.operation == "" {
			t.Errorf("%s %s has no operation name", e.method, e.path)
		}
		if unsafe := e.retry == retryWrite; unsafe != (w.findOut != "") {
			t.Errorf("%s %s (%s): retry class %d, findOut %q: an unsafe write says where to look, nothing else does",
				e.method, e.path, w.operation, e.retry, w.findOut)
		}
	}
}

// Every exported call, refused by the service with a message naming another kind (as the
// shared status path's "payment ... not found" does for a payout), fails with an error
// naming the operation the merchant called.
func TestEveryErrorNamesTheOperationCalled(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(jsonAnswer(http.StatusNotFound, `{"success":false,"code":"4040","message":"payment \"x1\" not found"}`)))
	t.Cleanup(srv.Close)
	obs := &routeObserver{}
	c, err := NewClient(WithBaseURL(srv.URL), WithClientCredentials("client-id", "client-secret"),
		WithDisbursementAccount("2020202"), WithRetry(1, 0, 0), WithObserver(obs))
	require.NoError(t, err)
	named := map[string]bool{}
	for _, call := range exportedCalls(t, c) {
		var routes []string
		for pick := range validIDs {
			args, _ := baseArgs(t, call.name, call.fn(), pick)
			err = invoke(call.fn(), args)
			if routes = obs.take(); len(routes) > 0 {
				break
			}
		}
		if len(routes) == 0 {
			continue // a call of the session-token form: its twin is checked
		}
		// Several endpoints share a route (/v1/payments/{reference}): the error names one
		// of them, the one called, which the last assertion below tells apart.
		ops := map[string]bool{}
		for id := range endpointCount {
			if e := &endpoints[id]; e.method+" "+e.path == routes[len(routes)-1] {
				ops[endpointWording[id].operation] = true
			}
		}
		require.NotEmpty(t, ops, routes)
		var apiErr *APIError
		if !errors.As(err, &apiErr) {
			continue // a money call's unknown outcome
		}
		want := apiErr.Operation
		if !ops[want] || !strings.HasPrefix(err.Error(), "billing: "+want+": ") {
			t.Errorf("%s: error %q (Operation %q); want it to name one of %v first", call.name, err, apiErr.Operation, ops)
		}
		named[want] = true
	}
	// The shared status path names each kind's own operation.
	for _, op := range []string{"payout status", "receive status", "checkout status", "bank transfer status", "mandate status", "charge status", "credit deduct"} {
		assert.True(t, named[op], "no call's error named %q", op)
	}
}
