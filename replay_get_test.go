package billing

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// closingServer is an HTTP/1.1 server written on a bare listener. It answers the first
// request of a connection and keeps the connection alive; the second request on that
// reused connection it reads whole, counts, and answers by closing the connection: the
// moment net/http decides by itself whether to send the request again on a new one.
// It does that once; afterwards every request is answered.
type closingServer struct {
	listener net.Listener
	answer   func(r *http.Request, seen int) (status int, body string)

	mu       sync.Mutex
	seen     map[string]int // "METHOD path" -> requests read
	bodies   map[string][]string
	dropped  string // the request read, then answered by a close
	closedOn bool
	wg       sync.WaitGroup
	conns    []net.Conn
}

func newClosingServer(t *testing.T, answer func(r *http.Request, seen int) (int, string)) *closingServer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := &closingServer{listener: l, answer: answer, seen: map[string]int{}, bodies: map[string][]string{}}
	s.wg.Add(1)
	go s.serve()
	t.Cleanup(func() {
		_ = l.Close()
		s.mu.Lock()
		for _, c := range s.conns {
			_ = c.Close()
		}
		s.mu.Unlock()
		s.wg.Wait()
	})
	return s
}

func (s *closingServer) url() string { return "http://" + s.listener.Addr().String() }

func (s *closingServer) serve() {
	defer s.wg.Done()
	for {
		conn, err := s.listener.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		s.conns = append(s.conns, conn)
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer conn.Close()
			s.serveConn(conn)
		}()
	}
}

func (s *closingServer) serveConn(conn net.Conn) {
	br := bufio.NewReader(conn)
	for n := 0; ; n++ {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		body, err := io.ReadAll(req.Body)
		if err != nil {
			return
		}
		key := req.Method + " " + req.URL.Path
		s.mu.Lock()
		s.seen[key]++
		seen := s.seen[key]
		s.bodies[key] = append(s.bodies[key], fmt.Sprintf("length %d, chunked %v, body %q", req.ContentLength, len(req.TransferEncoding) > 0, body))
		drop := n == 1 && !s.closedOn
		if drop {
			s.closedOn, s.dropped = true, key
		}
		s.mu.Unlock()
		if drop {
			return // read whole, never answered: the connection closes
		}
		status, answer := s.answer(req, seen)
		if _, err := fmt.Fprintf(conn, "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
			status, http.StatusText(status), len(answer), answer); err != nil {
			return
		}
	}
}

// droppedRequest is the request the server answered by closing its connection.
func (s *closingServer) droppedRequest() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dropped
}

func (s *closingServer) count(key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seen[key]
}

// closingClient is a client of s with its own pooled transport, so the connection the
// first call opens is the one the second call reuses.
func closingClient(t *testing.T, s *closingServer, opts ...Option) *Client {
	t.Helper()
	c, err := NewClient(append([]Option{WithBaseURL(s.url()), WithClientCredentials("client-id", "client-secret"),
		WithSecretKey("sk_test"), WithSessionToken("sess_test"), WithDisbursementAccount("2020202"),
		WithTimeout(10 * time.Second)}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(c.http.HTTPClient.CloseIdleConnections)
	return c
}

// TestMandateCancelIsNotReplayedOnAReusedConnection: the cancel is a GET, which net/http
// re-sends on its own when a reused keep-alive connection closes after the request was
// written. The service would then cancel twice and answer the second cancel 404, and the
// caller would be told ErrNotFound for a cancel that was done. The cancel must reach the
// service once, and its caller be told the outcome is unknown: neither the SDK nor
// net/http sends it again.
func TestMandateCancelIsNotReplayedOnAReusedConnection(t *testing.T) {
	const msisdn = "233241234567"
	cancelPath := "GET /v1/mandates/preapproval/" + msisdn + "/cancel"
	srv := newClosingServer(t, func(r *http.Request, seen int) (int, string) {
		if strings.HasSuffix(r.URL.Path, "/cancel") {
			if seen > 1 {
				return http.StatusNotFound, `{"success":false,"message":"no mandate to cancel"}`
			}
			return http.StatusOK, `{"message":"cancelled","responseCode":"2000","data":true}`
		}
		return http.StatusOK, `{"message":"ok","responseCode":"2000","data":{"servicePreApprovalId":"s1","clientReferenceId":"mandate1","customerMsisdn":"` + msisdn + `","preapprovalStatus":"APPROVED"}}`
	})
	c := closingClient(t, srv, WithRetry(DefaultMaxAttempts, time.Millisecond, time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	_, err := c.Mandates.Status(ctx, "mandate1")
	require.NoError(t, err, "the first request opens the keep-alive connection")
	_, err = c.Mandates.Cancel(ctx, msisdn)

	require.Equal(t, cancelPath, srv.droppedRequest(), "the cancel went out on the reused connection")
	assert.Equal(t, 1, srv.count(cancelPath), "the service saw the cancel once")
	require.ErrorIs(t, err, ErrOutcomeUnknown, "a cancel written and never answered may have been done")
	assert.NotErrorIs(t, err, ErrNotFound)
	assert.NotContains(t, err.Error(), msisdn, "the MSISDN in the path is masked")
	srv.mu.Lock()
	assert.Equal(t, []string{`length 0, chunked false, body ""`}, srv.bodies[cancelPath], "the cancel is a plain GET on the wire")
	srv.mu.Unlock()
}

// TestEndpointsWithSideEffectsAreNeverReplayedBelowTheSDK runs every row of the
// endpoints table through the closing server, with the SDK's own retries off: every
// request with side effects reaches the server once; a read, which net/http may
// replay, reaches it twice, which shows the server provokes the replay.
func TestEndpointsWithSideEffectsAreNeverReplayedBelowTheSDK(t *testing.T) {
	sideEffects := 0
	for id := range endpointCount {
		e := &endpoints[id]
		t.Run(fmt.Sprintf("%s %s", e.method, e.path), func(t *testing.T) {
			srv := newClosingServer(t, func(*http.Request, int) (int, string) {
				return http.StatusOK, `{"success":true,"message":"ok","responseCode":"0001","data":{"id":"x"}}`
			})
			c := closingClient(t, srv, WithRetry(1, 0, 0))
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			require.NoError(t, c.do(ctx, epCustomerGet.op(nil, seg("id", "warm")), new(envelope[map[string]any])))

			args := templateArgs(e, func(i int) string { return fmt.Sprintf("arg%d", i) })
			var params any
			if e.method != http.MethodGet {
				params = map[string]any{"amount": 1}
			}
			o := id.op(params, args...)
			o.clientReference = "ref1"
			err := c.do(ctx, o, new(envelope[map[string]any]))
			key := e.method + " " + o.path
			require.Equal(t, key, srv.droppedRequest(), "the request went out on the reused connection")
			if e.sideEffects() {
				sideEffects++
				assert.Equal(t, 1, srv.count(key), "a request with side effects reaches the service once")
				require.Error(t, err)
				if e.retry == retryMoney || e.flags&changesState != 0 {
					assert.ErrorIs(t, err, ErrOutcomeUnknown)
				}
				return
			}
			assert.Equal(t, 2, srv.count(key), "net/http replays a read on a new connection")
			assert.NoError(t, err)
		})
	}
	t.Logf("%d of %d endpoints have side effects", sideEffects, endpointCount)
}
