package sandbox

import (
	"cmp"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"time"
)

// Headers the sandbox adds to a callback or webhook it posts to the forward
// target, so a forwarder can tell where the sandbox would have posted it.
const (
	// ForwardedForHeader carries the URL the callback or webhook was meant
	// for: the request's callback URL or the webhook URL.
	ForwardedForHeader = "Billing-Sandbox-Forwarded-For"
	// AttemptHeader carries the attempt number: 1, then 2 for the first
	// redelivery, and so on.
	AttemptHeader = "Billing-Sandbox-Attempt"
)

// defaultListLimit and maxListLimit size one page of the movement and delivery lists.
const (
	defaultListLimit = 100
	maxListLimit     = 1000
)

// inspectControlRoutes are the sandbox-only controls that show what the
// sandbox did and where its callbacks go: the clock, the forward target, the
// money movements and the delivery attempts.
func inspectControlRoutes(s *Server) []route {
	return []route{
		{pattern: "GET /sandbox/clock", auth: authBilling, handler: s.showClock},
		{pattern: "GET /sandbox/forward", auth: authBilling, handler: s.showForward},
		{pattern: "PUT /sandbox/forward", auth: authBilling, handler: s.setForward},
		{pattern: "DELETE /sandbox/forward", auth: authBilling, handler: s.clearForward},
		{pattern: "GET /sandbox/movements", auth: authBilling, handler: s.listMovements},
		{pattern: "GET /sandbox/deliveries", auth: authBilling, handler: s.listDeliveries},
		{pattern: "POST /sandbox/deliveries/{seq}/resend", auth: authBilling, handler: s.resendDelivery},
		{pattern: "GET /sandbox/identity", auth: authBilling, handler: s.showIdentity},
	}
}

// showClock answers the sandbox's time without moving it.
func (s *Server) showClock(w http.ResponseWriter, _ *http.Request) {
	writeData(w, http.StatusOK, newClockView(s.Now()))
}

// forwardTarget is where every callback and webhook goes while it is set,
// instead of the URL it was meant for. It has a lock of its own: deliveries
// read it from the scheduler's tasks.
type forwardTarget struct {
	mu  sync.Mutex
	url string
}

// of returns where a delivery meant for dest goes: the forward target when
// one is set, else dest.
func (f *forwardTarget) of(dest string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.url != "" {
		return f.url
	}
	return dest
}

func (f *forwardTarget) get() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.url
}

func (f *forwardTarget) set(u string) {
	f.mu.Lock()
	f.url = u
	f.mu.Unlock()
}

// forwardView is the answer of the forward controls; url is "" when none is set.
type forwardView struct {
	URL string `json:"url"`
}

// SetForwardTarget sends every callback and webhook from now on to target
// instead of the URL it was meant for (the request's callback URL, the
// webhook URL), with the body unchanged and the headers ForwardedForHeader and
// AttemptHeader added; redeliveries after a non-2xx answer follow the usual
// schedule. A delivery that had no URL is still not sent. An empty target
// clears it: deliveries go where they were meant again.
func (s *Server) SetForwardTarget(target string) error {
	if target != "" && !isAbsoluteURL(target) {
		return validationError("url", "url must be an absolute http or https URL")
	}
	s.forward.set(target)
	return nil
}

// claimForwardTarget sets the forward target to target unless another is set.
func (s *Server) claimForwardTarget(target string) error {
	if !isAbsoluteURL(target) {
		return validationError("url", "url must be an absolute http or https URL")
	}
	s.forward.mu.Lock()
	defer s.forward.mu.Unlock()
	if s.forward.url != "" && s.forward.url != target {
		return conflictError("another listener receives the callbacks and webhooks: %s; stop it first", s.forward.url)
	}
	s.forward.url = target
	return nil
}

// ForwardTarget returns the forward target, or "" when none is set.
func (s *Server) ForwardTarget() string { return s.forward.get() }

func (s *Server) showForward(w http.ResponseWriter, _ *http.Request) {
	writeData(w, http.StatusOK, forwardView{URL: s.forward.get()})
}

// setForward sets the forward target from {"url": "http://..."}. With
// "exclusive": true it is refused (409) while another target is set, so a
// second listener cannot take over the first in silence.
func (s *Server) setForward(w http.ResponseWriter, r *http.Request) {
	f, err := decodeFields(r)
	if err != nil {
		writeError(w, err)
		return
	}
	f.require("url")
	target, _ := f.callbackURL("url")
	exclusive := false
	if f.has("exclusive") {
		exclusive, _ = f.boolean("exclusive")
	}
	if err := f.err(); err != nil {
		writeError(w, err)
		return
	}
	if exclusive {
		if err := s.claimForwardTarget(target); err != nil {
			writeError(w, err)
			return
		}
		writeData(w, http.StatusOK, forwardView{URL: target})
		return
	}
	if err := s.SetForwardTarget(target); err != nil {
		writeError(w, err)
		return
	}
	writeData(w, http.StatusOK, forwardView{URL: target})
}

func (s *Server) clearForward(w http.ResponseWriter, _ *http.Request) {
	s.forward.set("")
	writeData(w, http.StatusOK, forwardView{})
}

// movementView is a Movement on the wire of the controls: amounts in minor
// units, resolvedAt null while pending.
type movementView struct {
	Kind            string     `json:"kind"`
	ClientReference string     `json:"clientReference"`
	TransactionID   string     `json:"transactionId"`
	State           string     `json:"state"`
	ResponseCode    string     `json:"responseCode"`
	Amount          int64      `json:"amount"`
	Fee             int64      `json:"fee"`
	CreatedAt       timestamp  `json:"createdAt"`
	ResolvedAt      *timestamp `json:"resolvedAt"`
}

// AllMovements returns every money movement the sandbox accepted, by any
// operation, oldest first (ties by kind and client reference).
func (s *Server) AllMovements() []Movement {
	s.mu.Lock()
	all := make([]Movement, 0, len(s.money.byKey))
	for _, m := range s.money.byKey {
		all = append(all, m.Movement)
	}
	s.mu.Unlock()
	slices.SortFunc(all, func(a, b Movement) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.ClientReference, b.ClientReference))
	})
	return all
}

// listMovements answers the money movements, oldest first: those under
// ?clientReference= (as Movements counts them) or all of them, the last
// ?limit= (default 100, at most 1000).
func (s *Server) listMovements(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit, err := listLimit(q)
	if err != nil {
		writeError(w, err)
		return
	}
	var found []Movement
	if q.Has("clientReference") {
		found = s.Movements(q.Get("clientReference"))
	} else {
		found = s.AllMovements()
	}
	found = found[max(0, len(found)-limit):]
	views := make([]movementView, len(found))
	for i, m := range found {
		views[i] = movementView{Kind: m.Kind, ClientReference: m.ClientReference, TransactionID: m.TransactionID,
			State: m.State, ResponseCode: m.ResponseCode, Amount: m.Amount, Fee: m.Fee, CreatedAt: timestamp{m.CreatedAt}}
		if !m.ResolvedAt.IsZero() {
			views[i].ResolvedAt = &timestamp{m.ResolvedAt}
		}
	}
	writeData(w, http.StatusOK, views)
}

// deliveryView is a Delivery on the wire of the controls. Seq numbers the
// attempts from 1 in the order they were made, for ?after=.
type deliveryView struct {
	Seq         int       `json:"seq"`
	URL         string    `json:"url"`
	ForwardedTo string    `json:"forwardedTo,omitempty"`
	Reference   string    `json:"reference"`
	Attempt     int       `json:"attempt"`
	At          timestamp `json:"at"`
	Status      int       `json:"status"`
	// Body is the JSON posted, as it was posted.
	Body json.RawMessage `json:"body"`
}

// listDeliveries answers the callback and webhook attempts after ?after= (a
// seq; 0, the default, for the first), oldest first, at most ?limit= (default
// 100, at most 1000) of them.
func (s *Server) listDeliveries(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit, err := listLimit(q)
	if err != nil {
		writeError(w, err)
		return
	}
	after := 0
	if q.Has("after") {
		n, err := strconv.Atoi(q.Get("after"))
		if err != nil || n < 0 {
			writeError(w, validationError("after", "after must be a delivery's seq: an integer from 0"))
			return
		}
		after = n
	}
	page, first := s.deliveries.after(after, limit)
	views := make([]deliveryView, len(page))
	for i, d := range page {
		views[i] = deliveryView{Seq: first + i, URL: d.URL, ForwardedTo: d.ForwardedTo, Reference: callbackReference(d.Body),
			Attempt: d.Attempt, At: timestamp{d.At}, Status: d.Status, Body: d.Body}
		if !json.Valid(d.Body) { // never one of the sandbox's own bodies; still a valid answer
			views[i].Body, _ = json.Marshal(string(d.Body))
		}
	}
	writeData(w, http.StatusOK, views)
}

// listLimit reads ?limit=: 1 to maxListLimit, defaultListLimit when absent.
func listLimit(q url.Values) (int, error) {
	if !q.Has("limit") {
		return defaultListLimit, nil
	}
	n, err := strconv.Atoi(q.Get("limit"))
	if err != nil || n < 1 || n > maxListLimit {
		return 0, validationError("limit", "limit must be an integer from 1 to %d", maxListLimit)
	}
	return n, nil
}

// clockView is the answer of the clock controls: now in the sandbox's
// timestamp format (milliseconds), and exact to the nanosecond.
type clockView struct {
	Now   timestamp `json:"now"`
	Exact string    `json:"exact"`
}

func newClockView(now time.Time) clockView {
	return clockView{Now: timestamp{now}, Exact: now.UTC().Format(time.RFC3339Nano)}
}

// IdentityName is what GET /sandbox/identity answers as "sandbox": no live
// service answers it, so a development tool that moves money checks it first.
const IdentityName = "billing-sandbox"

// identityView is the answer of GET /sandbox/identity. Instance is new at
// every start of the sandbox: a listener that sees it change knows the
// sandbox restarted and forgot its registration.
type identityView struct {
	Sandbox   string    `json:"sandbox"`
	Instance  string    `json:"instance"`
	StartedAt timestamp `json:"startedAt"`
	// State names the state file, when one is kept: a listener then knows a
	// restart forgot nothing.
	State *stateView `json:"state,omitempty"`
}

// Instance returns this run's identity: new at every start.
func (s *Server) Instance() string { return s.instance }

func (s *Server) showIdentity(w http.ResponseWriter, _ *http.Request) {
	writeData(w, http.StatusOK, identityView{Sandbox: IdentityName, Instance: s.instance, StartedAt: timestamp{s.startedAt}, State: s.stateShown()})
}

// newInstanceID returns 16 random hex digits.
func newInstanceID() string {
	b := make([]byte, 8)
	random(b)
	return hex.EncodeToString(b)
}

// resendView is the answer of the resend control: the new attempt.
type resendView struct {
	Seq int `json:"seq"`
}

// resendDelivery posts attempt {seq}'s body again, now (Resend).
func (s *Server) resendDelivery(w http.ResponseWriter, r *http.Request) {
	seq, err := strconv.Atoi(r.PathValue("seq"))
	if err != nil || seq < 1 {
		writeError(w, validationError("seq", "seq must be a delivery's seq: an integer from 1"))
		return
	}
	next, err := s.Resend(seq)
	if err != nil {
		writeError(w, err)
		return
	}
	writeData(w, http.StatusOK, resendView{Seq: next})
}
