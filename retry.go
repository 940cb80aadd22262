package billing

import (
	"bytes"
	"context"
	"crypto/x509"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-retryablehttp"
)

// retryClass says how far a request may be retried (DESIGN "Retries: never move money
// twice").
type retryClass uint8

const (
	// retryWrite: a write the service cannot dedupe. Re-sent only when it surely never
	// reached the server: the connection was never made, or the answer was 429.
	retryWrite retryClass = iota
	// retryRead: reads and writes that carry a server-side dedupe key. Also re-sent on
	// 5xx, timeouts, reset connections and unreadable bodies.
	retryRead
	// retryMoney: a money movement. Retried like retryWrite; any failure after the request
	// may have reached the server becomes ErrOutcomeUnknown.
	retryMoney
)

// attemptState is what the policy learned of the attempts of one call: whether the
// last may have been processed, and whether any may have arrived at the server. It lives
// in the request's context, so the shared transport keeps no per-request state.
type attemptState struct {
	class retryClass
	// sideEffects: the request changes state on the service, so no layer below the SDK
	// may send it again (see beginAttempt).
	sideEffects bool
	reached     bool // the last attempt may have been processed by the server
	attempts    int

	// delivered: the last attempt may have arrived at the server, whatever it answered
	// (a 429 arrived, though it did no work). resent: an attempt before the last one
	// had. A refusal of a re-sent money movement says nothing of the earlier attempt.
	delivered, resent bool

	// traced: the transport reports through httptrace when it has written the request's
	// headers (net/http's own does, for HTTP/1 and HTTP/2 alike), so an attempt that
	// never wrote them surely never reached the server. For any other transport only a
	// failed dial proves that.
	traced bool
	wrote  atomic.Bool // the current attempt wrote its headers; set by the trace
	trace  httptrace.ClientTrace

	ctx stateContext // the call's context carrying this state
	// attempt is an attempt's context carrying this state, when the attempt shares its
	// deadline with others (see attemptContext).
	attempt stateContext
}

type attemptKey struct{}

// stateContext is the call's context with its attemptState under attemptKey, as
// context.WithValue would make it, but held in the state rather than allocated beside it
// on every call.
type stateContext struct {
	context.Context
	st *attemptState
}

func (c *stateContext) Value(key any) any {
	if key == (attemptKey{}) {
		return c.st
	}
	return c.Context.Value(key)
}

// newAttemptState makes st the state of one call of class, and returns the context
// carrying it (and, for a request that must not be repeated, the trace telling whether
// an attempt wrote anything).
func (c *Client) newAttemptState(ctx context.Context, st *attemptState, class retryClass, sideEffects bool) context.Context {
	*st = attemptState{class: class, sideEffects: sideEffects}
	st.ctx = stateContext{Context: ctx, st: st}
	ctx = &st.ctx
	if class == retryRead {
		return ctx // a read may be sent again whether or not it was written
	}
	switch c.http.HTTPClient.Transport.(type) {
	case nil, *http.Transport:
		st.traced = true
		st.trace.WroteHeaders = st.wroteHeaders
		ctx = httptrace.WithClientTrace(ctx, &st.trace)
	}
	return ctx
}

func (st *attemptState) wroteHeaders() { st.wrote.Store(true) }

// mayHaveArrived reports whether an attempt that failed with err may have reached the
// server: not when its connection was never made, nor when the transport says it never
// wrote a byte of the request (a refused proxy, a request net/http would not send).
func (st *attemptState) mayHaveArrived(err error) bool {
	return !neverConnected(err) && (!st.traced || st.wrote.Load())
}

// beginAttempt is the transport's RequestLogHook, run before each attempt. It counts
// the attempt, remembers whether an earlier one may have arrived, and makes a request
// with side effects unrepeatable below the SDK, so that each SDK attempt reaches the
// wire at most once:
//   - net/http's HTTP/2 transport re-sends a request whose GetBody can rewind it after
//     the server reset the stream, even once the server has read it whole; without
//     GetBody it re-sends only what it never wrote;
//   - its HTTP/1 transport re-sends a request it deems replayable (a GET, HEAD,
//     OPTIONS or TRACE, or one with an Idempotency-Key header, whose body is nil or
//     rewindable) when a reused connection closes after the request was written. A
//     request with a body and no GetBody is not replayable, so a GET that changes
//     state gets an empty body of its own: net/http finds it empty and sends no body,
//     yet does not replay the request.
func (c *Client) beginAttempt(_ retryablehttp.Logger, req *http.Request, _ int) {
	st, _ := req.Context().Value(attemptKey{}).(*attemptState)
	if st == nil {
		return
	}
	st.attempts++
	st.resent = st.resent || st.delivered
	st.delivered = false
	st.wrote.Store(false)
	if st.sideEffects || st.class != retryRead {
		req.GetBody = nil
	}
	if st.sideEffects {
		if _, empty := req.Body.(emptyBody); empty || req.Body == nil || req.Body == http.NoBody {
			req.Body, req.ContentLength = emptyBody{}, 0
		}
	}
}

// emptyBody is the body of a request with side effects that has none: it is not
// http.NoBody, so net/http does not count the request replayable (see beginAttempt).
type emptyBody struct{}

func (emptyBody) Read([]byte) (int, error) { return 0, io.EOF }
func (emptyBody) Close() error             { return nil }

// checkRetry is the transport's CheckRetry. It decides per attempt and records whether
// the request may have reached the server, which the pipeline uses to tell a clean
// failure from an unknown outcome.
func (c *Client) checkRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	st, _ := ctx.Value(attemptKey{}).(*attemptState)
	if st == nil {
		st = &attemptState{class: retryWrite}
	}
	if err != nil {
		c.scrub.scrubURL(err) // before an Observer or a log sees it
		st.reached = st.mayHaveArrived(err)
		st.delivered = st.delivered || st.reached
		if ctxErr := ctx.Err(); ctxErr != nil {
			return false, ctxErr
		}
		if !st.reached {
			return true, nil
		}
		if errors.Is(err, ErrPageTooLarge) {
			return false, nil // the service's answer, which another attempt repeats
		}
		if errors.Is(err, errUnreadableBody) {
			return st.class == retryRead, nil
		}
		return st.class == retryRead && !permanentTransportError(err), nil
	}
	st.delivered = true
	// A response is judged on its own, even if ctx ended meanwhile: a definite answer
	// stays definite, and the transport's wait before a retry honours ctx itself.
	switch code := resp.StatusCode; {
	case code == http.StatusTooManyRequests:
		// Refused before any work: safe to re-send for every class, unless the service
		// asks for a longer pause than we are willing to hold the caller.
		st.reached = false
		wait, ok := retryAfter(resp, time.Now())
		return !ok || wait <= c.maxRetryAfter, nil
	case code >= 500 && code != http.StatusNotImplemented, code == http.StatusRequestTimeout:
		st.reached = true
		if wait, ok := retryAfter(resp, time.Now()); ok && wait > c.maxRetryAfter {
			return false, nil // the service asks for a longer pause than we hold the caller
		}
		return st.class == retryRead, nil
	default:
		// A definite answer: the pipeline reports it as it is.
		st.reached = true
		return false, nil
	}
}

// backoff is the transport's Backoff: Retry-After when the service gives one, otherwise
// exponential growth from min to max with jitter.
func (c *Client) backoff(min, max time.Duration, attempt int, resp *http.Response) time.Duration {
	if resp != nil {
		if wait, ok := retryAfter(resp, time.Now()); ok {
			return c.retryWait(wait)
		}
	}
	return c.retryWait(exponentialJitter(min, max, attempt))
}

// exponentialJitter returns a wait in [d/2, d] where d = min·2^attempt, capped at max.
func exponentialJitter(min, max time.Duration, attempt int) time.Duration {
	if max <= 0 {
		return 0
	}
	d := min
	for i := 0; i < attempt && d < max; i++ {
		d *= 2
	}
	if d > max || d <= 0 {
		d = max
	}
	half := d / 2
	return half + rand.N(d-half+1)
}

// maxRetryAfterHint bounds a Retry-After: any longer pause, up to one too large to
// count, reads as this one, far beyond what the client waits, so it is never retried.
const maxRetryAfterHint = 24 * time.Hour

// retryAfter reads a Retry-After header on 429 and 503 answers, in seconds or as an HTTP
// date, capped at maxRetryAfterHint.
func retryAfter(resp *http.Response, now time.Time) (time.Duration, bool) {
	if resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != http.StatusServiceUnavailable {
		return 0, false
	}
	v := resp.Header.Get("Retry-After")
	if v == "" {
		return 0, false
	}
	if isDigits(v) {
		// Compare in seconds before converting: 9223372037 seconds and more overflow
		// a Duration into a negative, that is an immediate, wait.
		secs, err := strconv.ParseUint(v, 10, 64)
		if err != nil || secs > uint64(maxRetryAfterHint/time.Second) {
			return maxRetryAfterHint, true
		}
		return time.Duration(secs) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return min(d, maxRetryAfterHint), true
		}
		return 0, true
	}
	return 0, false
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return s != ""
}

// neverConnected reports whether err shows that no connection was made, so the request
// cannot have reached the server.
func neverConnected(err error) bool {
	var opErr *net.OpError
	if errors.As(err, &opErr) && opErr.Op == "dial" {
		return true
	}
	var dnsErr *net.DNSError
	return errors.As(err, &dnsErr)
}

// permanentTransportError reports errors that another attempt will not fix.
func permanentTransportError(err error) bool {
	var unknownAuthority x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	return errors.As(err, &unknownAuthority) || errors.As(err, &hostname) || errors.As(err, &invalid)
}

// outgoing is the request of one call as each attempt sends it, and where its answer is
// read to.
type outgoing struct {
	method, url string
	body        []byte   // nil for none; each attempt sends it from its start
	header      []string // Authorization, User-Agent and Content-Type, in that order
	st          *attemptState
	res         *response
	out         decodeTarget
	// unbuilt: net/http refused to build the request (a method or URL it cannot send),
	// so no attempt was made.
	unbuilt bool
}

// sendWithRetries sends req under the retry policy held in c.http (its RequestLogHook,
// CheckRetry, Backoff, RetryMax and waits), in the loop of go-retryablehttp's Client.Do
// with PassthroughErrorHandler. The loop runs here rather than there so that each
// attempt is one net/http request built for it, with no wrapper or body copy around it,
// and its answer is read (into req.res and req.out) before the next attempt begins. The
// error is the one Client.Do would return: the policy's, else the read's, else the
// transport's.
func (c *Client) sendWithRetries(ctx context.Context, req *outgoing) error {
	policy := c.http
	var (
		resp                     *http.Response
		shouldRetry              bool
		doErr, respErr, checkErr error
		endAttempt               context.CancelFunc
	)
	for i := 0; ; i++ {
		doErr, respErr = nil, nil
		var attemptCtx context.Context
		attemptCtx, endAttempt = c.attemptContext(ctx, req.st)
		r, err := req.build(attemptCtx)
		if err != nil {
			endAttempt()
			// Every attempt builds the same method and URL: only the first can fail.
			req.unbuilt = i == 0
			return err
		}
		if policy.RequestLogHook != nil {
			policy.RequestLogHook(nil, r, i)
		}
		resp, doErr = policy.HTTPClient.Do(r)
		shouldRetry, checkErr = policy.CheckRetry(ctx, resp, doErr)
		if !shouldRetry && doErr == nil {
			respErr = req.res.read(resp, req.out)
			shouldRetry, checkErr = policy.CheckRetry(ctx, resp, respErr)
		}
		if !shouldRetry || policy.RetryMax-i <= 0 {
			break
		}
		if doErr == nil {
			drainBody(resp.Body) // so that the connection is reused
		}
		endAttempt()
		wait := policy.Backoff(policy.RetryWaitMin, policy.RetryWaitMax, i, resp)
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			policy.HTTPClient.CloseIdleConnections()
			return ctx.Err()
		case <-timer.C:
		}
	}
	// The last attempt's deadline holds until its answer is read, here or above.
	defer endAttempt()
	if doErr == nil && respErr == nil && checkErr == nil && !shouldRetry {
		return nil
	}
	policy.HTTPClient.CloseIdleConnections()
	err := doErr
	switch {
	case checkErr != nil:
		err = checkErr
	case respErr != nil:
		err = respErr
	}
	if resp != nil && req.res.from != resp {
		if err == nil {
			// The retries ran out on a retryable status: the last answer is the result.
			return req.res.read(resp, req.out)
		}
		resp.Body.Close()
	}
	return err
}

// attemptContext returns the context of one attempt of the call whose state is st:
// ctx bounded by the Client's timeout (WithTimeout), as http.Client.Timeout would bound
// it, from dialling to the end of the body, since the attempt's answer is read before
// its context ends. The policy judges each attempt with ctx, the call's: an attempt that
// ran out of time is a failed attempt like any other (a read is sent again), not the end
// of the call.
//
// A read made under a Tracker's Run (a status check) shares its deadline as Run's store
// calls do (see sharedDeadlines): the attempts that begin within a hundredth of the
// timeout of one another have one context, which ends with the call's or the timeout
// after the first began, and one timer between them rather than one each.
func (c *Client) attemptContext(ctx context.Context, st *attemptState) (context.Context, context.CancelFunc) {
	if c.attemptTimeout <= 0 {
		return ctx, noCancel
	}
	if run, ok := st.ctx.Context.(*sharingContext); ok && ctx == context.Context(&st.ctx) { // nothing else wraps the state
		shared, cancel := run.deadlines.deadline(run, c.attemptTimeout)
		if st.attempt.Context != nil {
			// A later attempt: net/http may still be letting go of the last one's
			// context, which it reads as the parent of its own, so that one stays as it is.
			return &stateContext{Context: shared, st: st}, cancel
		}
		st.attempt = stateContext{Context: shared, st: st}
		return &st.attempt, cancel
	}
	return context.WithTimeout(ctx, c.attemptTimeout)
}

func noCancel() {}

// build makes the net/http request of one attempt.
func (req *outgoing) build(ctx context.Context) (*http.Request, error) {
	var body io.Reader
	if req.body != nil {
		body = bytes.NewReader(req.body)
	}
	r, err := http.NewRequestWithContext(ctx, req.method, req.url, body)
	if err != nil {
		return nil, err
	}
	r.Header["Authorization"] = req.header[0:1:1]
	r.Header["User-Agent"] = req.header[1:2:2]
	if req.body != nil {
		r.Header["Content-Type"] = req.header[2:3:3]
	}
	return r, nil
}

// drainBodyLimit is how much of an answer that is retried is read to keep its
// connection, as go-retryablehttp reads.
const drainBodyLimit = 4096

func drainBody(body io.ReadCloser) {
	defer body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(body, drainBodyLimit))
}
