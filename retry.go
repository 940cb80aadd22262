package billing

import (
	"context"
	"crypto/x509"
	"errors"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"time"
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

// attemptState is what the policy learned of the last attempt: whether the request may
// have reached the server. It lives in the request's context, so the shared transport
// keeps no per-request state.
type attemptState struct {
	class    retryClass
	reached  bool // the last attempt may have been processed by the server
	attempts int
	// judged is the answer last judged: the transport judges an answer twice when it
	// goes on to read its body (on its status, then after the read), and that is still
	// one attempt.
	judged *http.Response
}

type attemptKey struct{}

// checkRetry is the transport's CheckRetry. It decides per attempt and records whether
// the request may have reached the server, which the pipeline uses to tell a clean
// failure from an unknown outcome.
func (c *Client) checkRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	st, _ := ctx.Value(attemptKey{}).(*attemptState)
	if st == nil {
		st = &attemptState{class: retryWrite}
	}
	if resp == nil || resp != st.judged {
		st.attempts++
	}
	st.judged = resp
	if err != nil {
		st.reached = !neverConnected(err)
		if ctxErr := ctx.Err(); ctxErr != nil {
			return false, ctxErr
		}
		if !st.reached {
			return true, nil
		}
		if errors.Is(err, errUnreadableBody) {
			return st.class == retryRead, nil
		}
		return st.class == retryRead && !permanentTransportError(err), nil
	}
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

// retryAfter reads a Retry-After header on 429 and 503 answers, in seconds or as an HTTP
// date.
func retryAfter(resp *http.Response, now time.Time) (time.Duration, bool) {
	if resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != http.StatusServiceUnavailable {
		return 0, false
	}
	v := resp.Header.Get("Retry-After")
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.Atoi(v); err == nil && secs >= 0 {
		return time.Duration(secs) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d, true
		}
		return 0, true
	}
	return 0, false
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
