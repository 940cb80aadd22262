package sandbox

import (
	"log/slog"
	"net/http"
	"strings"
	"time"
)

// route is one operation of the service: its path on each wire, how each
// wire's body is read, and the access it demands (alike on both paths).
type route struct {
	pattern     string           // the spec's ServeMux pattern with its method, served on both wires: "GET /v1/customers/{id}"
	handler     http.HandlerFunc // serves pattern, reading the spec's body
	provider    wirePath         // the same operation on the provider's wire; zero when the provider has no such call
	auth        authKind         // the credentials it takes
	scope       string           // the scope it needs; "" for none
	ipAllowlist bool             // the caller's address must be in Config.AllowIPs
}

// wirePath is an operation's path on the provider's wire (REQUESTS.md in
// provider-wire/), served only under WireProvider.
type wirePath struct {
	pattern string // ServeMux pattern with its method; {POS} and {prepaid} must name the business's accounts
	// handler serves pattern reading the provider's body; nil serves it with the
	// route's own handler, the provider's body being the spec's.
	handler http.HandlerFunc
	// shared says the pattern is served by another route's handler, which
	// tells the operations apart by the body or the query (body says how).
	shared bool
	// body says how the provider's request is read, for the route table.
	body string
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
	inspectControlRoutes,
	faultRoutes,
	callbackFaultRoutes,
}

// ControlPatterns returns the patterns of the sandbox's own controls (the routes under
// /sandbox/, which the real service does not have), in the route table's order, for a
// program that lists them.
func ControlPatterns() []string {
	var out []string
	for _, rt := range (&Server{}).routes() {
		if _, path, _ := strings.Cut(rt.pattern, " "); strings.HasPrefix(path, "/sandbox/") {
			out = append(out, rt.pattern)
		}
	}
	return out
}

// routes returns every row of the route table, in routeGroups order.
func (s *Server) routes() []route {
	var all []route
	for _, group := range routeGroups {
		all = append(all, group(s)...)
	}
	return all
}

// registerAll serves every route: its spec path on both wires, its provider
// path under WireProvider. A pattern shared by several rows is served once,
// by the row that has its handler.
func (s *Server) registerAll() {
	served := map[string]bool{}
	var shared []string
	for _, rt := range s.routes() {
		s.register(rt)
		if s.cfg.Wire != WireProvider || rt.provider.pattern == "" {
			continue
		}
		if rt.provider.shared {
			shared = append(shared, rt.provider.pattern)
			continue
		}
		if served[rt.provider.pattern] {
			panic("sandbox: provider pattern " + rt.provider.pattern + " is served by two routes; mark one shared")
		}
		served[rt.provider.pattern] = true
		handler := rt.provider.handler
		if handler == nil {
			handler = rt.handler
		}
		s.registerAt(rt.provider.pattern, rt, handler)
	}
	for _, pattern := range shared {
		if !served[pattern] {
			panic("sandbox: shared provider pattern " + pattern + " is served by no route")
		}
	}
}

// register serves rt's spec path with its handler (registerAt).
func (s *Server) register(rt route) { s.registerAt(rt.pattern, rt, rt.handler) }

// registerAt serves pattern with handler behind rt's access checks: the
// caller's address first (as a network filter would), then the credentials,
// then the scope, then the business's accounts the path names.
func (s *Server) registerAt(pattern string, rt route, handler http.HandlerFunc) {
	if rt.auth == 0 {
		panic("sandbox: route " + pattern + " declares no auth kind")
	}
	s.mux.HandleFunc(pattern, s.withFaults(pattern, func(w http.ResponseWriter, r *http.Request) {
		if fw, ok := w.(*fallbackWriter); ok {
			w = fw.ResponseWriter // a routed request answers for itself
		}
		if err := s.admit(rt, r); err != nil {
			writeError(w, err)
			return
		}
		handler(w, r)
	}))
}

// accountWildcards are the path wildcards of the provider's paths that name
// one of the business's accounts, and the account each must be.
var accountWildcards = []struct {
	name, kind string
	account    func(Config) string
}{
	{"POS", "sales account", func(c Config) string { return c.SalesAccount }},
	{"prepaid", "disbursement account", func(c Config) string { return c.DisbursementAccount }},
}

// checkAccounts answers 404 for a path naming an account the business does not hold.
func (s *Server) checkAccounts(r *http.Request) error {
	for _, w := range accountWildcards {
		if got := r.PathValue(w.name); got != "" && got != w.account(s.cfg) {
			return notFoundError(w.kind, got)
		}
	}
	return nil
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
	return s.checkAccounts(r)
}

// RequestIDHeader names the header carrying the id the sandbox gives each
// request, on every answer (errors and /sandbox/ controls too), so a client
// can quote it and find the request in the sandbox's log.
const RequestIDHeader = "X-Request-Id"

// newRequestID returns a fresh request id: req_ and 24 random hex digits.
func newRequestID() string { return newID("req_") }

// ServeHTTP answers one request of the service's wire interface. With a
// state file (KeepState), the answer is sent once the state it leaves is kept.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.keeper != nil {
		held := &heldResponse{ResponseWriter: w}
		s.serveHTTP(held, r)
		_ = s.keepState() // a failure is logged and shown by GET /sandbox/identity
		held.send()
		return
	}
	s.serveHTTP(w, r)
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
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
