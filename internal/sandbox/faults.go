package sandbox

import (
	"fmt"
	"net"
	"net/http"
	"sync"
)

// FaultKind is what an injected fault does to the request it hits.
type FaultKind int

const (
	// FaultResponseLost does the work of the request, then resets the
	// connection without a response: the client cannot know what happened.
	FaultResponseLost FaultKind = iota + 1
	// FaultResetBeforeWork resets the connection before any work is done.
	FaultResetBeforeWork
)

// faultEffect serves a faulted request; serve is the route's own handling.
type faultEffect func(w http.ResponseWriter, r *http.Request, serve http.HandlerFunc)

// faultEffects is the table of fault kinds: adding a kind adds a row.
var faultEffects = map[FaultKind]faultEffect{
	FaultResponseLost: func(w http.ResponseWriter, r *http.Request, serve http.HandlerFunc) {
		serve(discardWriter{header: http.Header{}}, r)
		resetConnection(w)
	},
	FaultResetBeforeWork: func(w http.ResponseWriter, _ *http.Request, _ http.HandlerFunc) {
		resetConnection(w)
	},
}

// Fault makes one request to a route fail in a chosen way.
type Fault struct {
	// Route is the route pattern, exactly as the sandbox registers it:
	// "POST /v1/payments/receive".
	Route string
	// Nth counts the requests to Route from the injection on: 1 (or 0) is
	// the next one.
	Nth int
	// Kind is what happens to that request.
	Kind FaultKind
}

// armedFault is an injected fault counting down its route's requests.
type armedFault struct {
	route     string
	remaining int
	effect    faultEffect
}

// faultTable holds the armed faults, in injection order, under its own lock
// so that requests to other routes never wait for the store.
type faultTable struct {
	mu    sync.Mutex
	armed []*armedFault
}

// InjectFault arms f. Each request to f.Route counts down every fault armed
// for it; a request takes at most one fault, the earliest injected of those
// due, and a fault due at the same time as another waits for the next request.
func (s *Server) InjectFault(f Fault) error {
	effect, ok := faultEffects[f.Kind]
	if !ok {
		return fmt.Errorf("sandbox: unknown fault kind %d", f.Kind)
	}
	if f.Nth < 0 {
		return fmt.Errorf("sandbox: fault Nth must be 1 or more, not %d", f.Nth)
	}
	if !s.hasRoute(f.Route) {
		return fmt.Errorf("sandbox: no route %q; a fault names a route pattern such as \"POST /v1/payments/receive\"", f.Route)
	}
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	s.faults.armed = append(s.faults.armed, &armedFault{route: f.Route, remaining: max(f.Nth, 1), effect: effect})
	return nil
}

func (s *Server) hasRoute(pattern string) bool {
	for _, group := range routeGroups {
		for _, rt := range group(s) {
			if rt.pattern == pattern {
				return true
			}
		}
	}
	return false
}

// take counts a request to route and returns the effect of the fault it
// meets, or nil.
func (t *faultTable) take(route string) faultEffect {
	t.mu.Lock()
	defer t.mu.Unlock()
	var hit faultEffect
	for i := 0; i < len(t.armed); i++ {
		f := t.armed[i]
		if f.route != route {
			continue
		}
		f.remaining--
		if f.remaining <= 0 && hit == nil {
			hit = f.effect
			t.armed = append(t.armed[:i], t.armed[i+1:]...)
			i--
		}
	}
	return hit
}

// withFaults serves a route's requests through the faults armed for it.
func (s *Server) withFaults(pattern string, serve http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if effect := s.faults.take(pattern); effect != nil {
			effect(w, r, serve)
			return
		}
		serve(w, r)
	}
}

// resetConnection drops the client's connection with a TCP reset and no
// response. Without a connection to take over (an in-process recorder), it
// aborts the handler, which the server answers by closing the connection.
func resetConnection(w http.ResponseWriter) {
	for wrapped := true; wrapped; {
		switch inner := w.(type) {
		case *fallbackWriter:
			w = inner.ResponseWriter
		case *statusWriter:
			w = inner.ResponseWriter
		default:
			wrapped = false
		}
	}
	hijacker, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler)
	}
	conn, _, err := hijacker.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if tcp, ok := conn.(*net.TCPConn); ok {
		_ = tcp.SetLinger(0) // close with RST, not FIN
	}
	_ = conn.Close()
}

// discardWriter takes the response of work whose answer is lost.
type discardWriter struct{ header http.Header }

func (d discardWriter) Header() http.Header         { return d.header }
func (d discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (d discardWriter) WriteHeader(int)             {}
