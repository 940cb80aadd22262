package sandbox

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// FaultKind is what an injected request fault does to the request it hits. The
// names are also the values of the HTTP control and of examples/sandbox -faults.
type FaultKind string

// The request faults. "Before the work" means the route's handler never runs;
// "after the work" means it runs in full (the money moves, the record is
// written) and only the answer goes wrong.
const (
	// FaultLatency holds the request for the fault's Latency of real time,
	// then serves it. If the caller hangs up first (its timeout, its context),
	// the work is never done, as with a request still queued when the client
	// gave up.
	FaultLatency FaultKind = "latency"
	// FaultHTTP500 answers 500 with the error body, before the work.
	FaultHTTP500 FaultKind = "http-500"
	// FaultHTTP502 answers 502 with a gateway's HTML page, before the work.
	FaultHTTP502 FaultKind = "http-502"
	// FaultHTTP503 answers 503 with Retry-After and the error body, before the work.
	FaultHTTP503 FaultKind = "http-503"
	// FaultHTTP429 answers 429 with Retry-After and the error body, before the work.
	FaultHTTP429 FaultKind = "http-429"
	// FaultResetBeforeWork resets the connection before any work is done.
	FaultResetBeforeWork FaultKind = "reset-before-work"
	// FaultResponseLost does the work, then resets the connection without a
	// response: the client cannot know what happened.
	FaultResponseLost FaultKind = "response-lost"
	// FaultTruncatedBody does the work, then sends the status, the headers
	// with the full Content-Length and half the body, and closes the
	// connection.
	FaultTruncatedBody FaultKind = "truncated-body"
	// FaultMalformedJSON does the work, then sends a complete response whose
	// body is the first half of the JSON: it does not parse.
	FaultMalformedJSON FaultKind = "malformed-json"
	// FaultCode0005 does the work, then answers with the route's own status and
	// body, except that the envelope says success false and response code
	// 0005, the spec's "connection error to the telco or card network; final
	// state unknown" of checkout.
	FaultCode0005 FaultKind = "code-0005"
	// FaultRedirect answers the fault's Status (a 3xx, 307 by default) with its
	// Location (by default the request's own URL), before the work: a proxy or a
	// moved service. A client that follows it sends the request again.
	FaultRedirect FaultKind = "redirect"
	// FaultRedirectAfterWork does the work, then answers as FaultRedirect does.
	FaultRedirectAfterWork FaultKind = "redirect-after-work"
	// FaultUnclassifiedAfterWork does the work, then answers the fault's Status
	// (200 by default) with its Body verbatim ("{}" by default): an answer that
	// says neither yes nor no, such as 304, 307 without Location, or 200 with
	// null, {} or data null.
	FaultUnclassifiedAfterWork FaultKind = "unclassified-after-work"
	// FaultHTTP429AfterWork does the work, then answers 429 with Retry-After as
	// FaultHTTP429 does: a rate limiter behind which the request went through
	// anyway, so that a client re-sending it meets its own duplicate.
	FaultHTTP429AfterWork FaultKind = "http-429-after-work"
)

// CodeConnectionError is the response code of FaultCode0005 (SPEC "Errors").
const CodeConnectionError = "0005"

// Codes of the error bodies of the injected 429 and 503 answers; the spec
// shows neither, so they are the sandbox's own, like CodeInternal.
const (
	CodeRateLimited = "rate_limited"
	CodeUnavailable = "unavailable"
)

// DefaultLatency is the hold of FaultLatency without a Latency.
const DefaultLatency = time.Second

// MaxLatency bounds the hold of FaultLatency, so a mistyped fault cannot hang
// a caller that never gives up.
const MaxLatency = time.Minute

// maxHeldBody is how much of a request body FaultLatency reads before its hold.
const maxHeldBody = 1 << 20

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
	// Latency is the hold of FaultLatency, in real time (the SDK's timeout
	// runs on the real clock); zero means DefaultLatency.
	Latency time.Duration
	// RetryAfter is the Retry-After of FaultHTTP503, FaultHTTP429 and
	// FaultHTTP429AfterWork, sent in whole seconds rounded up; zero sends
	// "Retry-After: 0", retry at once.
	RetryAfter time.Duration
	// Status is the status of FaultRedirect, FaultRedirectAfterWork (300 to
	// 399) and FaultUnclassifiedAfterWork (100 to 599); zero means their default.
	Status int
	// Location is the Location of the redirect faults; empty means the
	// request's own URL. Body is the body of FaultUnclassifiedAfterWork; empty
	// means "{}".
	Location, Body string
}

// requestEffect serves a faulted request; serve is the route's own handling.
type requestEffect func(w http.ResponseWriter, r *http.Request, serve http.HandlerFunc)

// requestFaultKinds is the table of request fault kinds: each builds the effect of
// a fault from its parameters. Adding a kind adds a row.
var requestFaultKinds = map[FaultKind]func(Fault) requestEffect{
	FaultLatency: func(f Fault) requestEffect {
		hold := f.Latency
		if hold == 0 {
			hold = DefaultLatency
		}
		return func(w http.ResponseWriter, r *http.Request, serve http.HandlerFunc) {
			// net/http notices a caller hanging up (and ends r's context) only
			// once the body has been read to its end: read it first.
			buffered, err := io.ReadAll(io.LimitReader(r.Body, maxHeldBody))
			if err != nil {
				return // the caller is gone already
			}
			r.Body = struct {
				io.Reader
				io.Closer
			}{io.MultiReader(bytes.NewReader(buffered), r.Body), r.Body}
			timer := time.NewTimer(hold)
			defer timer.Stop()
			select {
			case <-timer.C:
				serve(w, r)
			case <-r.Context().Done(): // the caller gave up: nothing is done
			}
		}
	},
	FaultHTTP500: beforeWork(http.StatusInternalServerError, CodeInternal, "internal error (an injected fault); nothing was done"),
	FaultHTTP502: func(Fault) requestEffect {
		return func(w http.ResponseWriter, _ *http.Request, _ http.HandlerFunc) {
			page := "<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1></body></html>\n"
			w = routedWriter(w)
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Header().Set("Content-Length", strconv.Itoa(len(page)))
			w.WriteHeader(http.StatusBadGateway)
			_, _ = w.Write([]byte(page))
		}
	},
	FaultHTTP503: beforeWork(http.StatusServiceUnavailable, CodeUnavailable, "the service is unavailable (an injected fault); nothing was done"),
	FaultHTTP429: beforeWork(http.StatusTooManyRequests, CodeRateLimited, "too many requests (an injected fault); nothing was done"),
	FaultResetBeforeWork: func(Fault) requestEffect {
		return func(w http.ResponseWriter, _ *http.Request, _ http.HandlerFunc) { resetConnection(w) }
	},
	FaultResponseLost: afterWork(func(w http.ResponseWriter, _ *capturedResponse) { resetConnection(w) }),
	FaultTruncatedBody: afterWork(func(w http.ResponseWriter, c *capturedResponse) {
		// Declaring the full length and writing less makes net/http close the
		// connection after the handler, with a FIN: the client reads the
		// headers and half the body, then an unexpected EOF.
		c.replay(w, c.body, c.body[:len(c.body)/2])
	}),
	FaultMalformedJSON: afterWork(func(w http.ResponseWriter, c *capturedResponse) {
		// A proper prefix of a JSON object never parses.
		half := c.body[:len(c.body)/2]
		c.replay(w, half, half)
	}),
	FaultCode0005: afterWork(func(w http.ResponseWriter, c *capturedResponse) {
		body := withResponseCode(c.body, CodeConnectionError,
			"connection error to the telco or card network (an injected fault); the final state is unknown: run the status check")
		c.replay(w, body, body)
	}),
	FaultRedirect: func(f Fault) requestEffect {
		return func(w http.ResponseWriter, r *http.Request, _ http.HandlerFunc) { redirect(routedWriter(w), r, f) }
	},
	FaultRedirectAfterWork: func(f Fault) requestEffect {
		return func(w http.ResponseWriter, r *http.Request, serve http.HandlerFunc) {
			serve(&capturedResponse{header: http.Header{}, status: http.StatusOK}, r)
			redirect(routedWriter(w), r, f)
		}
	},
	FaultUnclassifiedAfterWork: func(f Fault) requestEffect {
		status, body := cmp.Or(f.Status, http.StatusOK), cmp.Or(f.Body, "{}")
		return func(w http.ResponseWriter, r *http.Request, serve http.HandlerFunc) {
			serve(&capturedResponse{header: http.Header{}, status: http.StatusOK}, r)
			w = routedWriter(w)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_, _ = io.WriteString(w, body)
		}
	},
	FaultHTTP429AfterWork: func(f Fault) requestEffect {
		answer := beforeWork(http.StatusTooManyRequests, CodeRateLimited, "too many requests (an injected fault)")(f)
		return func(w http.ResponseWriter, r *http.Request, serve http.HandlerFunc) {
			serve(&capturedResponse{header: http.Header{}, status: http.StatusOK}, r)
			answer(w, r, serve)
		}
	},
}

// redirect answers the redirect of f to r.
func redirect(w http.ResponseWriter, r *http.Request, f Fault) {
	location := f.Location
	if location == "" {
		location = r.URL.RequestURI()
	}
	w.Header().Set("Location", location)
	w.WriteHeader(cmp.Or(f.Status, http.StatusTemporaryRedirect))
}

// beforeWork builds the effect of an error body answered before the work; a
// 503 or 429 carries the fault's RetryAfter.
func beforeWork(status int, code, message string) func(Fault) requestEffect {
	return func(f Fault) requestEffect {
		return func(w http.ResponseWriter, _ *http.Request, _ http.HandlerFunc) {
			w = routedWriter(w)
			if status == http.StatusServiceUnavailable || status == http.StatusTooManyRequests {
				seconds := int64(math.Ceil(f.RetryAfter.Seconds()))
				w.Header().Set("Retry-After", strconv.FormatInt(seconds, 10))
			}
			writeError(w, &apiError{status: status, code: code, message: message})
		}
	}
}

// afterWork builds the effect of a fault that lets the route do its work into a
// buffer, then answers through answer.
func afterWork(answer func(w http.ResponseWriter, c *capturedResponse)) func(Fault) requestEffect {
	return func(Fault) requestEffect {
		return func(w http.ResponseWriter, r *http.Request, serve http.HandlerFunc) {
			c := &capturedResponse{header: http.Header{}, status: http.StatusOK}
			serve(c, r)
			answer(routedWriter(w), c)
		}
	}
}

// capturedResponse holds the answer of work whose answer a fault spoils.
type capturedResponse struct {
	header http.Header
	status int
	body   []byte
	wrote  bool
}

func (c *capturedResponse) Header() http.Header { return c.header }

func (c *capturedResponse) Write(b []byte) (int, error) {
	c.wrote = true
	c.body = append(c.body, b...)
	return len(b), nil
}

func (c *capturedResponse) WriteHeader(status int) {
	if !c.wrote {
		c.status, c.wrote = status, true
	}
}

// replay answers the captured status and headers, declaring the length of
// declared and sending sent.
func (c *capturedResponse) replay(w http.ResponseWriter, declared, sent []byte) {
	for k, v := range c.header {
		w.Header()[k] = v
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(declared)))
	w.WriteHeader(c.status)
	_, _ = w.Write(sent)
}

// withResponseCode returns the JSON body with its response code set to code
// (under the key the envelope already uses, in whatever case, else
// "responseCode"), success false where the envelope has it, and message set
// under its key. A body that is not a JSON object is returned unchanged.
func withResponseCode(body []byte, code, message string) []byte {
	var envelope map[string]json.RawMessage
	if err := json.Unmarshal(body, &envelope); err != nil {
		return body
	}
	set := func(key string, value any, always bool) {
		for k := range envelope {
			if strings.EqualFold(k, key) {
				envelope[k], _ = json.Marshal(value)
				return
			}
		}
		if always {
			envelope[key], _ = json.Marshal(value)
		}
	}
	set("responseCode", code, true)
	set("message", message, true)
	set("success", false, false)
	out, err := json.Marshal(envelope)
	if err != nil {
		return body
	}
	return append(out, '\n')
}

// armedFaults holds the injected faults of one family (requests, callbacks) in
// injection order, under its own lock so that requests and deliveries never
// wait for the store. Each fault counts down the requests or callbacks whose
// key it matches.
type armedFaults[E any] struct {
	mu    sync.Mutex
	armed []*armedFault[E]
	fired int
	known map[string]bool // the keys that exist (route patterns); nil when any may (references)
}

// armedFault is one injected fault counting down to the request or callback it hits.
type armedFault[E any] struct {
	key       string // the route or reference counted; "" counts every one
	remaining int
	effect    E
}

// arm adds a fault on the nth request or callback matching key from now.
func (t *armedFaults[E]) arm(key string, nth int, effect E) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.armed = append(t.armed, &armedFault[E]{key: key, remaining: max(nth, 1), effect: effect})
}

// take counts a request or callback with key against every fault matching it
// and returns the effect of the one it meets: the earliest injected of those
// due. A fault due at the same time as another waits for the next match.
func (t *armedFaults[E]) take(key string) (E, bool) { return t.takeAny([]string{key}, nil) }

// takeAny is take for a callback known by several keys (its client and
// service references), over only the faults whose effect match accepts (nil
// accepts every one): the others are neither counted nor hit.
func (t *armedFaults[E]) takeAny(keys []string, match func(E) bool) (E, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var hit *armedFault[E]
	for i := 0; i < len(t.armed); i++ {
		f := t.armed[i]
		if (f.key != "" && !slices.Contains(keys, f.key)) || (match != nil && !match(f.effect)) {
			continue
		}
		f.remaining--
		if f.remaining <= 0 && hit == nil {
			hit = f
			t.armed = append(t.armed[:i], t.armed[i+1:]...)
			i--
		}
	}
	if hit == nil {
		var none E
		return none, false
	}
	t.fired++
	return hit.effect, true
}

// know records key as one that exists.
func (t *armedFaults[E]) know(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.known == nil {
		t.known = map[string]bool{}
	}
	t.known[key] = true
}

// knows reports whether key was recorded by know.
func (t *armedFaults[E]) knows(key string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.known[key]
}

// counts returns how many faults wait to fire and how many have fired.
func (t *armedFaults[E]) counts() (armed, fired int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.armed), t.fired
}

// checkNth refuses an Nth that counts backwards.
func checkNth(nth int) error {
	if nth < 0 {
		return fmt.Errorf("sandbox: fault Nth must be 1 or more, not %d", nth)
	}
	return nil
}

// InjectFault arms f. Each request to f.Route counts down every fault armed
// for it; a request takes at most one fault, the earliest injected of those
// due, and a fault due at the same time as another waits for the next request.
func (s *Server) InjectFault(f Fault) error {
	build, ok := requestFaultKinds[f.Kind]
	if !ok {
		return fmt.Errorf("sandbox: unknown fault kind %q: use %s", f.Kind, strings.Join(FaultKindNames(), ", "))
	}
	if err := checkNth(f.Nth); err != nil {
		return err
	}
	if f.Latency < 0 || f.Latency > MaxLatency {
		return fmt.Errorf("sandbox: fault Latency must be between 0 and %s, not %s", MaxLatency, f.Latency)
	}
	if f.RetryAfter < 0 {
		return fmt.Errorf("sandbox: fault RetryAfter must not be negative, not %s", f.RetryAfter)
	}
	switch {
	case f.Status == 0:
	case f.Kind == FaultRedirect || f.Kind == FaultRedirectAfterWork:
		if f.Status < 300 || f.Status > 399 {
			return fmt.Errorf("sandbox: a redirect fault's Status must be 300 to 399, not %d", f.Status)
		}
	case f.Kind == FaultUnclassifiedAfterWork:
		// 1xx would be taken for an informational answer before the real one.
		if f.Status < 200 || f.Status > 599 {
			return fmt.Errorf("sandbox: an unclassified fault's Status must be 200 to 599, not %d", f.Status)
		}
	default:
		return fmt.Errorf("sandbox: fault kind %s takes no Status", f.Kind)
	}
	if !s.hasRoute(f.Route) {
		return fmt.Errorf("sandbox: no route %q; a fault names a route pattern such as \"POST /v1/payments/receive\"", f.Route)
	}
	s.faults.arm(f.Route, f.Nth, build(f))
	return nil
}

// FaultKindNames returns the names of the request fault kinds, sorted.
func FaultKindNames() []string {
	return []string{
		string(FaultCode0005), string(FaultHTTP429), string(FaultHTTP429AfterWork), string(FaultHTTP500), string(FaultHTTP502), string(FaultHTTP503),
		string(FaultLatency), string(FaultMalformedJSON), string(FaultRedirect), string(FaultRedirectAfterWork), string(FaultResetBeforeWork),
		string(FaultResponseLost), string(FaultTruncatedBody), string(FaultUnclassifiedAfterWork),
	}
}

// FaultCounts returns how many request faults wait for their request and how
// many have hit one.
func (s *Server) FaultCounts() (armed, fired int) { return s.faults.counts() }

// hasRoute reports whether the sandbox serves the route pattern.
func (s *Server) hasRoute(pattern string) bool { return s.faults.knows(pattern) }

// withFaults serves a route's requests through the faults armed for it. Every
// route is registered through it, so it also learns the patterns a fault may name.
func (s *Server) withFaults(pattern string, serve http.HandlerFunc) http.HandlerFunc {
	s.faults.know(pattern)
	return func(w http.ResponseWriter, r *http.Request) {
		if effect, ok := s.faults.take(pattern); ok {
			effect(w, r, serve)
			return
		}
		serve(w, r)
	}
}

// routedWriter strips the fallbackWriter from w, so that a fault's own 404 or
// 405 is not taken for the mux's.
func routedWriter(w http.ResponseWriter) http.ResponseWriter {
	if fw, ok := w.(*fallbackWriter); ok {
		return fw.ResponseWriter
	}
	return w
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

// faultRoutes serve the request fault control, mirrored by
// billingtest.Server.InjectFault.
func faultRoutes(s *Server) []route {
	return []route{
		{pattern: "POST /sandbox/faults", auth: authBilling, handler: s.injectFault},
	}
}

// injectFault arms a request fault: {"route": "POST /v1/payments/receive",
// "kind": "response-lost", "nth": 2, "latencyMs": 1500, "retryAfterSeconds":
// 5, "status": 308, "location": "https://elsewhere.test/", "body": "{}"};
// route and kind are required. It answers the fault as armed.
func (s *Server) injectFault(w http.ResponseWriter, r *http.Request) {
	f, err := decodeFields(r)
	if err != nil {
		writeError(w, err)
		return
	}
	f.require("route", "kind")
	route, _ := f.stringWhere("route", "a route pattern the sandbox serves, such as \"POST /v1/payments/receive\"", s.hasRoute)
	kind, _ := f.enum("kind", FaultKindNames()...)
	var nth, latencyMs, retryAfter int64
	if f.has("nth") {
		nth, _ = f.integerRange("nth", 1, 1_000_000)
	}
	if f.has("latencyMs") {
		latencyMs, _ = f.integerRange("latencyMs", 1, MaxLatency.Milliseconds())
	}
	if f.has("retryAfterSeconds") {
		retryAfter, _ = f.integerRange("retryAfterSeconds", 0, 24*60*60)
	}
	var status int64
	if f.has("status") {
		status, _ = f.integerRange("status", 200, 599)
	}
	location, _ := f.optionalString("location")
	body, _ := f.optionalString("body")
	if err := f.err(); err != nil {
		writeError(w, err)
		return
	}
	fault := Fault{Route: route, Nth: int(nth), Kind: FaultKind(kind),
		Latency: time.Duration(latencyMs) * time.Millisecond, RetryAfter: time.Duration(retryAfter) * time.Second,
		Status: int(status), Location: location, Body: body}
	if err := s.InjectFault(fault); err != nil {
		writeError(w, validationError("kind", "%s", err.Error()))
		return
	}
	writeData(w, http.StatusCreated, faultView{Route: route, Kind: kind, Nth: max(int(nth), 1), LatencyMs: latencyMs, RetryAfterSeconds: retryAfter,
		Status: int(status), Location: location, Body: body})
}

type faultView struct {
	Route             string `json:"route"`
	Kind              string `json:"kind"`
	Nth               int    `json:"nth"`
	LatencyMs         int64  `json:"latencyMs,omitempty"`
	RetryAfterSeconds int64  `json:"retryAfterSeconds,omitempty"`
	Status            int    `json:"status,omitempty"`
	Location          string `json:"location,omitempty"`
	Body              string `json:"body,omitempty"`
}

// ParseFaults reads the compact fault syntax of examples/sandbox -faults: items
// separated by ";", each ROUTE[#N]=KIND[:DURATION], where ROUTE is a route
// pattern, N the request number (default 1) and DURATION (Go syntax, "1.5s")
// the Latency of latency or the RetryAfter of http-503 and http-429:
//
//	POST /v1/payments/receive#2=response-lost; GET /v1/payments/{reference}=http-503:5s
//
// It checks the syntax only; InjectFault checks the route and the values.
func ParseFaults(spec string) ([]Fault, error) {
	var out []Fault
	err := parseFaultItems(spec, func(target string, nth int, kind string, d time.Duration, hasDuration bool) error {
		f := Fault{Route: target, Nth: nth, Kind: FaultKind(kind)}
		switch {
		case !hasDuration:
		case f.Kind == FaultLatency:
			f.Latency = d
		case f.Kind == FaultHTTP503, f.Kind == FaultHTTP429, f.Kind == FaultHTTP429AfterWork:
			f.RetryAfter = d
		default:
			return fmt.Errorf("%s takes no duration", kind)
		}
		out = append(out, f)
		return nil
	})
	return out, err
}

// parseFaultItems splits the compact syntax shared by request and callback
// faults, TARGET[#N]=KIND[:DURATION] separated by ";", and hands each item to add.
func parseFaultItems(spec string, add func(target string, nth int, kind string, d time.Duration, hasDuration bool) error) error {
	for item := range strings.SplitSeq(spec, ";") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		target, action, ok := strings.Cut(item, "=")
		if !ok {
			return fmt.Errorf("fault %q: want TARGET[#N]=KIND[:DURATION]", item)
		}
		target = strings.TrimSpace(target)
		nth := 1
		if at := strings.LastIndexByte(target, '#'); at >= 0 {
			n, err := strconv.Atoi(target[at+1:])
			if err != nil || n < 1 {
				return fmt.Errorf("fault %q: #N must be a request number, 1 or more", item)
			}
			target, nth = strings.TrimSpace(target[:at]), n
		}
		kind, duration, hasDuration := strings.Cut(strings.TrimSpace(action), ":")
		var d time.Duration
		if hasDuration {
			var err error
			if d, err = time.ParseDuration(duration); err != nil || d < 0 {
				return fmt.Errorf("fault %q: %q is not a duration such as 1.5s or 6m", item, duration)
			}
		}
		if err := add(target, nth, kind, d, hasDuration); err != nil {
			return fmt.Errorf("fault %q: %w", item, err)
		}
	}
	return nil
}
