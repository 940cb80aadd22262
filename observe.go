package billing

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/hashicorp/go-retryablehttp"
)

// Observer is told of every call a Client makes to the service and of each attempt
// within it, for tracing and metrics (package otelbilling implements it with
// OpenTelemetry). Install one with WithObserver; without one the Client does no work for
// it.
//
// A call is one method of the SDK reaching the pipeline (Customers.Get, Payouts.Send, one
// page of a List); an attempt is one sending of its request, so a call retried after a
// 503 has two attempts. Calls refused before sending (a *ValidationError) are not
// observed.
//
// The methods run on the caller's goroutine, in order: CallStart, then for each attempt
// AttemptStart and AttemptEnd, then CallEnd. They must be quick and must not call the
// Client. Many calls may be observed at the same time, so an Observer is safe for
// concurrent use. The CallInfo and AttemptInfo are the Observer's to keep once told.
type Observer interface {
	// CallStart is told of a call before its request is sent. The context it returns
	// (ctx itself, or one derived from it, say carrying a span) becomes the call's: its
	// attempts start from it, the transport below sees it, and CallEnd receives it.
	CallStart(ctx context.Context, call *CallInfo) context.Context
	// CallEnd is told how the call ended, in call's result fields.
	CallEnd(ctx context.Context, call *CallInfo)
	// AttemptStart is told of an attempt before its request is written. ctx is the
	// call's context; the one returned (ctx, or derived from it) is the context the
	// attempt is sent with, and AttemptEnd receives it.
	AttemptStart(ctx context.Context, attempt *AttemptInfo) context.Context
	// AttemptEnd is told how the attempt ended, in attempt's result fields.
	AttemptEnd(ctx context.Context, attempt *AttemptInfo)
}

// CallInfo describes one call to the service for an Observer. The fields above the
// line are set before CallStart; the result fields before CallEnd.
type CallInfo struct {
	// Method is the HTTP method, such as "POST".
	Method string
	// Route is the endpoint's path template relative to the base URL, such as
	// "/v1/customers/{id}": the same for every call of the endpoint, so group calls by
	// it. It carries no identifier, phone or account number of the call.
	Route string
	// ServerAddress and ServerPort are the host and port of the base URL (the port
	// implied by the scheme when the URL names none).
	ServerAddress string
	ServerPort    int
	// MoneyMovement marks a call that moves money (checkout, receive, send,
	// send-to-bank, direct-debit charge, mandate create): never sent twice once it may
	// have reached the service.
	MoneyMovement bool
	// ClientReference is the money movement's client reference; empty for other calls.
	ClientReference string

	// StatusCode is the HTTP status of the final response; 0 when none was received.
	StatusCode int
	// ResponseCode is the service's response code in the final response, if any.
	ResponseCode ResponseCode
	// RequestID is the service's id of the request (see RequestIDHeader), if sent.
	RequestID string
	// Attempts is how many times the request was sent.
	Attempts int
	// OutcomeUnknown reports that Err matches ErrOutcomeUnknown: a money movement was
	// sent and its result is not known.
	OutcomeUnknown bool
	// Err is the error the call returned, nil on success, with its text scrubbed as
	// AttemptInfo.Err is.
	Err error
}

// AttemptInfo describes one attempt of a call for an Observer. Call and Attempt are set
// before AttemptStart; the result fields before AttemptEnd.
type AttemptInfo struct {
	// Call is the call the attempt belongs to.
	Call *CallInfo
	// Attempt counts the attempts of the call from 1; Attempt-1 is the number of times
	// the request had been sent before (the resend count).
	Attempt int

	// StatusCode is the HTTP status of the attempt's response; 0 when none was received.
	StatusCode int
	// RequestID is the service's id of the attempt's request, if sent.
	RequestID string
	// Err is the transport's error (no connection, a reset, a timeout, an unreadable
	// body), nil when a whole response was received, whatever its status. Its text is
	// scrubbed (see Scrub) and names the call's Route where the transport wrote the
	// URL; errors.Is and errors.As reach the error beneath.
	Err error
	// Retryable reports that the retry policy judged the attempt worth repeating:
	// another attempt follows unless the attempts ran out or ctx ended first.
	Retryable bool
}

// WithObserver makes the Client tell o of every call and attempt (see Observer).
func WithObserver(o Observer) Option {
	return func(c *config) error {
		if o == nil {
			return errors.New("billing: WithObserver needs an observer")
		}
		c.observer = o
		return nil
	}
}

// clientObserver is a Client's Observer with what it says of every call.
type clientObserver struct {
	Observer
	address string
	port    int
	scrub   *Scrubber // the Client's: every error an Observer is told is scrubbed
	baseURL string    // the Client's base URL, which transport errors quote
}

type observedCallKey struct{}

// callObservation follows one call for the ResponseMeta its context asks for and the
// Client's Observer. The hooks of the transport find it in the request's context; a
// call's attempts run one after another on one goroutine, so it needs no lock.
type callObservation struct {
	meta *ResponseMeta
	obs  *clientObserver
	info CallInfo
	ctx  context.Context // CallStart's, the call's context from then on

	path       string       // the call's path, which errors quote: an Observer is told the route
	attempt    *AttemptInfo // the attempt under way, nil between attempts
	attemptCtx context.Context
	looks      int // times the transport judged the attempt under way
}

// setObserver installs o on the Client and its transport's per-attempt hooks, beside any
// hooks already there.
func (c *Client) setObserver(o Observer, base string) {
	if o == nil {
		return
	}
	co := &clientObserver{Observer: o, scrub: c.scrub, baseURL: base}
	if u, err := url.Parse(base); err == nil {
		co.address = u.Hostname()
		co.port, _ = strconv.Atoi(u.Port())
		if co.port == 0 {
			co.port = map[string]int{"https": 443, "http": 80}[u.Scheme]
		}
	}
	c.observer = co

	logHook := c.http.RequestLogHook
	c.http.RequestLogHook = func(l retryablehttp.Logger, r *http.Request, retryNumber int) {
		if logHook != nil {
			logHook(l, r, retryNumber)
		}
		if call, _ := r.Context().Value(observedCallKey{}).(*callObservation); call != nil {
			call.startAttempt(r, retryNumber)
		}
	}
	checkRetry := c.http.CheckRetry
	c.http.CheckRetry = func(ctx context.Context, resp *http.Response, err error) (bool, error) {
		retry, checkErr := checkRetry(ctx, resp, err)
		if call, _ := ctx.Value(observedCallKey{}).(*callObservation); call != nil {
			call.judged(resp, err, retry)
		}
		return retry, checkErr
	}
}

// startCall begins observing a call when its context asks for a ResponseMeta or the
// Client has an Observer; otherwise it returns ctx and nil, having done nothing else.
// The context returned is the one to send the call with.
func (c *Client) startCall(ctx context.Context, o *op) (context.Context, *callObservation) {
	meta := responseMetaOf(ctx)
	if meta == nil && c.observer == nil {
		return ctx, nil
	}
	call := &callObservation{meta: meta}
	if c.observer != nil {
		call.obs = c.observer
		call.info = CallInfo{
			Method:          o.method,
			Route:           o.route(),
			ServerAddress:   c.observer.address,
			ServerPort:      c.observer.port,
			MoneyMovement:   o.retry == retryMoney,
			ClientReference: o.clientReference,
		}
		if cctx := c.observer.CallStart(ctx, &call.info); cctx != nil {
			ctx = cctx
		}
		call.ctx = ctx
		call.path = o.path
		ctx = context.WithValue(ctx, observedCallKey{}, call)
	}
	return ctx, call
}

// route is the endpoint's path template, by which calls are grouped. An op built
// without a row of the endpoints table falls back to its path, with the digit runs of
// phone and account numbers masked.
func (o *op) route() string {
	if o.template != "" {
		return o.template
	}
	return maskNumbers(o.path)
}

// startAttempt tells the Observer of an attempt and sends r with the context it returns.
func (call *callObservation) startAttempt(r *http.Request, retryNumber int) {
	if call.attempt != nil {
		call.endAttempt(nil, nil) // never judged: close it before the next one
	}
	// Each attempt's request is built for it, with the call's context under the
	// attempt's own deadline: the Observer's context derives from that one.
	base := r.Context()
	a := &AttemptInfo{Call: &call.info, Attempt: retryNumber + 1}
	call.attempt, call.looks = a, 0
	actx := call.obs.AttemptStart(base, a)
	if actx == nil {
		actx = base
	}
	call.attemptCtx = actx
	// The transport sends this very request next; it holds no other reference to it.
	*r = *r.WithContext(actx)
}

// judged follows the retry policy's verdicts to the end of each attempt. The transport
// judges an answer twice when it goes on to read its body (on its status, then after the
// read, with the read's error): the attempt ends with the second verdict.
func (call *callObservation) judged(resp *http.Response, err error, retry bool) {
	if call.attempt == nil {
		return
	}
	call.looks++
	if call.looks == 1 && err == nil && !retry {
		return // the body is read next, and judged again
	}
	call.attempt.Retryable = retry
	call.endAttempt(resp, err)
}

func (call *callObservation) endAttempt(resp *http.Response, err error) {
	a := call.attempt
	call.attempt = nil
	if resp != nil {
		a.StatusCode, a.RequestID = resp.StatusCode, requestIDOf(resp.Header)
	}
	a.Err = call.scrubbed(err)
	call.obs.AttemptEnd(call.attemptCtx, a)
}

// finish reports how the call ended: it fills the ResponseMeta and tells the Observer.
// A nil call observes nothing.
func (call *callObservation) finish(st *attemptState, res *response, h *envelopeHeader, err error) {
	if call == nil {
		return
	}
	var header http.Header
	status := 0
	if res.done {
		header, status = res.header, res.status
	}
	if m := call.meta; m != nil {
		*m = ResponseMeta{RequestID: requestIDOf(header), StatusCode: status, Header: header, Attempts: st.attempts}
	}
	if call.obs == nil {
		return
	}
	if call.attempt != nil {
		call.endAttempt(nil, err)
	}
	i := &call.info
	i.StatusCode, i.RequestID, i.Attempts, i.Err = status, requestIDOf(header), st.attempts, call.scrubbed(err)
	if h != nil {
		i.ResponseCode = h.code()
	}
	i.OutcomeUnknown = errors.Is(err, ErrOutcomeUnknown)
	call.obs.CallEnd(call.ctx, i)
}

// scrubbed returns err as the Observer is told it: scrubbed (scrub.go), with every URL of
// the service and the call's own path in its text written as the call's route, so that a
// span or a metric holds no id, number or query of the call (OpenTelemetry's url.template,
// never url.full). Its chain stays intact for errors.Is and errors.As.
func (call *callObservation) scrubbed(err error) error {
	if err == nil {
		return nil
	}
	text := call.obs.scrub.Text(err.Error())
	route := call.info.Route
	if base := call.obs.baseURL; base != "" && strings.Contains(text, base) {
		var b strings.Builder
		for {
			i := strings.Index(text, base)
			if i < 0 {
				break
			}
			end := i + len(base)
			for end < len(text) && !urlStop(text[end]) {
				end++
			}
			b.WriteString(text[:i])
			b.WriteString(route)
			text = text[end:]
		}
		b.WriteString(text)
		text = b.String()
	}
	if p := call.obs.scrub.Text(call.path); p != "" && p != route {
		text = strings.ReplaceAll(text, p, route)
	}
	return &scrubbedError{text: text, err: err, s: call.obs.scrub}
}
