package billing

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"io"
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

// HTTP/2 frame types and flags the reset server speaks (RFC 9113, section 6).
const (
	h2FrameData      = 0x0
	h2FrameHeaders   = 0x1
	h2FrameRSTStream = 0x3
	h2FrameSettings  = 0x4
	h2FramePing      = 0x6
	h2FlagEndStream  = 0x1
	h2FlagAck        = 0x1
	h2ProtocolError  = 0x1
	h2Preface        = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
)

// resetServer is an HTTP/2 server over TLS that reads each request whole, counts it as
// done, then resets its stream with an error code: the stdlib server cannot send
// PROTOCOL_ERROR from a handler. It speaks just enough framing for that; it never decodes
// the headers, since counting streams is all it needs.
type resetServer struct {
	listener  net.Listener
	code      uint32
	requests  atomic.Int32 // HEADERS frames opening a stream
	processed atomic.Int32 // requests read to their end, then reset
	roots     *x509.CertPool
	wg        sync.WaitGroup
}

func newResetServer(t *testing.T, code uint32) *resetServer {
	t.Helper()
	// Borrow httptest's certificate and a pool trusting it.
	donor := httptest.NewUnstartedServer(http.NotFoundHandler())
	donor.EnableHTTP2 = true
	donor.StartTLS()
	cfg := donor.TLS.Clone()
	roots := x509.NewCertPool()
	roots.AddCert(donor.Certificate())
	donor.Close()
	cfg.NextProtos = []string{"h2"}

	l, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	require.NoError(t, err)
	s := &resetServer{listener: l, code: code, roots: roots}
	s.wg.Add(1)
	go s.serve()
	t.Cleanup(func() {
		_ = l.Close()
		s.wg.Wait()
	})
	return s
}

func (s *resetServer) url() string { return "https://" + s.listener.Addr().String() }

func (s *resetServer) serve() {
	defer s.wg.Done()
	var conns sync.WaitGroup
	defer conns.Wait()
	var open []net.Conn
	var mu sync.Mutex
	defer func() {
		mu.Lock()
		for _, c := range open {
			_ = c.Close()
		}
		mu.Unlock()
	}()
	for {
		conn, err := s.listener.Accept()
		if err != nil {
			return
		}
		mu.Lock()
		open = append(open, conn)
		mu.Unlock()
		conns.Add(1)
		go func() {
			defer conns.Done()
			defer conn.Close()
			s.serveConn(conn)
		}()
	}
}

func (s *resetServer) serveConn(conn net.Conn) {
	preface := make([]byte, len(h2Preface))
	if _, err := io.ReadFull(conn, preface); err != nil || string(preface) != h2Preface {
		return
	}
	var writeMu sync.Mutex
	write := func(typ, flags byte, stream uint32, payload []byte) error {
		writeMu.Lock()
		defer writeMu.Unlock()
		var h [9]byte
		h[0], h[1], h[2] = byte(len(payload)>>16), byte(len(payload)>>8), byte(len(payload))
		h[3], h[4] = typ, flags
		binary.BigEndian.PutUint32(h[5:], stream)
		_, err := conn.Write(append(h[:], payload...))
		return err
	}
	if write(h2FrameSettings, 0, 0, nil) != nil {
		return
	}
	for {
		var h [9]byte
		if _, err := io.ReadFull(conn, h[:]); err != nil {
			return
		}
		length := int(h[0])<<16 | int(h[1])<<8 | int(h[2])
		typ, flags, stream := h[3], h[4], binary.BigEndian.Uint32(h[5:])&0x7fffffff
		payload := make([]byte, length)
		if _, err := io.ReadFull(conn, payload); err != nil {
			return
		}
		var err error
		switch {
		case typ == h2FrameSettings && flags&h2FlagAck == 0:
			err = write(h2FrameSettings, h2FlagAck, 0, nil)
		case typ == h2FramePing && flags&h2FlagAck == 0:
			err = write(h2FramePing, h2FlagAck, 0, payload)
		case typ == h2FrameHeaders:
			s.requests.Add(1)
			if flags&h2FlagEndStream != 0 {
				err = s.finish(write, stream)
			}
		case typ == h2FrameData && flags&h2FlagEndStream != 0:
			err = s.finish(write, stream)
		}
		if err != nil {
			return
		}
	}
}

// finish counts a request read whole as processed, then resets its stream.
func (s *resetServer) finish(write func(typ, flags byte, stream uint32, payload []byte) error, stream uint32) error {
	s.processed.Add(1)
	return write(h2FrameRSTStream, 0, stream, binary.BigEndian.AppendUint32(nil, s.code))
}

// client returns an SDK client speaking HTTP/2 to s, with the retries given.
func (s *resetServer) client(t *testing.T, attempts int) (*Client, *waitRecorder) {
	t.Helper()
	transport := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: s.roots}, ForceAttemptHTTP2: true}
	t.Cleanup(transport.CloseIdleConnections)
	return newTestClient(t, s.url(), WithHTTPClient(&http.Client{Transport: transport}), WithRetry(attempts, time.Millisecond, time.Millisecond))
}

func TestHTTP2StreamResetAfterTheWorkIsNotReplayed(t *testing.T) {
	for _, attempts := range []int{1, DefaultMaxAttempts} {
		srv := newResetServer(t, h2ProtocolError)
		c, rec := srv.client(t, attempts)
		// The deadline only bounds a failure: net/http's own replays back off for seconds.
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		err := moneyCall(ctx, c, "ref1")
		require.ErrorIs(t, err, ErrOutcomeUnknown)
		assert.NotErrorIs(t, err, context.DeadlineExceeded, "the call ends with the reset, not at the deadline")
		assert.EqualValues(t, 1, srv.processed.Load(), "the payout reached the wire once: %d requests seen", srv.requests.Load())
		assert.EqualValues(t, 1, srv.requests.Load())
		assert.Empty(t, rec.recorded())

		_, err = c.Customers.Create(ctx, &CustomerCreateParams{Email: "ama@example.com", Name: "Ama"})
		require.Error(t, err)
		assert.NotErrorIs(t, err, context.DeadlineExceeded)
		assert.EqualValues(t, 2, srv.requests.Load(), "a create is not replayed either")
	}
}
