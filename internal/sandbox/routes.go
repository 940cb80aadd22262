package sandbox

import (
	"log/slog"
	"net/http"
	"time"
)

// route is one operation of the service and the access it demands.
type route struct {
	pattern     string   // ServeMux pattern with its method: "GET /v1/customers/{id}"
	auth        authKind // the credentials it takes
	scope       string   // the scope it needs; "" for none
	ipAllowlist bool     // the caller's address must be in Config.AllowIPs
	handler     http.HandlerFunc
}

// routeGroups is the route table: one function per resource group, each in
// its own file, returning that group's routes.
var routeGroups = []func(*Server) []route{
	customerRoutes,
	productRoutes,
	subscriptionRoutes,
	licenseRoutes,
	creditRoutes,
	meterRoutes,
	paymentRoutes,
	payoutRoutes,
	mandateRoutes,
	checkoutPageRoutes,
	controlRoutes,
	faultRoutes,
	callbackFaultRoutes,
}

// register serves rt behind its access checks: the caller's address first (as
// a network filter would), then the credentials, then the scope.
func (s *Server) register(rt route) {
	if rt.auth == 0 {
		panic("sandbox: route " + rt.pattern + " declares no auth kind")
	}
	s.mux.HandleFunc(rt.pattern, s.withFaults(rt.pattern, func(w http.ResponseWriter, r *http.Request) {
		if fw, ok := w.(*fallbackWriter); ok {
			w = fw.ResponseWriter // a routed request answers for itself
		}
		if err := s.admit(rt, r); err != nil {
			writeError(w, err)
			return
		}
		rt.handler(w, r)
	}))
}

func (s *Server) admit(rt route, r *http.Request) error {
	if rt.ipAllowlist && !s.ipAllowed(r) {
		return &apiError{status: http.StatusForbidden, code: CodeIPNotAllowed, message: "the caller's IP address is not in the allowlist of this endpoint"}
	}
	if err := s.authenticate(rt.auth, r); err != nil {
		return err
	}
	if rt.scope != "" && !s.granted[rt.scope] {
		return &apiError{status: http.StatusForbidden, code: CodeKeysMismatch, message: "scope " + rt.scope + " is not granted to these credentials"}
	}
	return nil
}

// RequestIDHeader names the header carrying the id the sandbox gives each
// request, on every answer (errors and /sandbox/ controls too), so a client
// can quote it and find the request in the sandbox's log.
const RequestIDHeader = "X-Request-Id"

// newRequestID returns a fresh request id: req_ and 24 random hex digits.
func newRequestID() string { return newID("req_") }

// ServeHTTP answers one request of the service's wire interface.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id := newRequestID()
	w.Header().Set(RequestIDHeader, id) // before any handler or fault writes
	logger := s.cfg.Logger
	if !logger.Enabled(r.Context(), slog.LevelDebug) {
		s.mux.ServeHTTP(&fallbackWriter{ResponseWriter: w, request: r}, r)
		return
	}
	start := time.Now()
	sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
	s.mux.ServeHTTP(&fallbackWriter{ResponseWriter: sw, request: r}, r)
	// The route pattern, not the path: paths can carry phone numbers.
	logger.LogAttrs(r.Context(), slog.LevelDebug, "sandbox request",
		slog.String("method", r.Method), slog.String("route", r.Pattern),
		slog.Int("status", sw.status), slog.Duration("duration", time.Since(start)),
		slog.String("request_id", id))
}

// fallbackWriter turns the plain-text 404 and 405 that ServeMux writes when
// no route matches into the sandbox's error body. Routed handlers unwrap it,
// so it only ever sees the mux's own answers.
type fallbackWriter struct {
	http.ResponseWriter
	request  *http.Request
	replaced bool
}

func (w *fallbackWriter) WriteHeader(status int) {
	r := w.request
	switch status {
	case http.StatusNotFound:
		w.replaced = true
		writeError(w.ResponseWriter, &apiError{status: status, code: CodeNotFound, message: "no route matches " + r.Method + " " + r.URL.Path})
	case http.StatusMethodNotAllowed:
		w.replaced = true
		writeError(w.ResponseWriter, &apiError{status: status, code: CodeMethodNotAllowed,
			message: r.Method + " is not allowed on " + r.URL.Path + "; allowed: " + w.Header().Get("Allow")})
	default:
		w.ResponseWriter.WriteHeader(status)
	}
}

func (w *fallbackWriter) Write(b []byte) (int, error) {
	if w.replaced {
		return len(b), nil // the mux's plain-text body, already replaced
	}
	return w.ResponseWriter.Write(b)
}

// statusWriter remembers the status for the request log.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(status int) {
	w.status = status
	w.ResponseWriter.WriteHeader(status)
}
