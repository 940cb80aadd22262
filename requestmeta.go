package billing

import (
	"context"
	"net/http"
)

// RequestIDHeader is the response header in which the service names each request it
// answered. Quote its value (APIError.RequestID, OutcomeUnknownError.RequestID,
// ResponseMeta.RequestID) when asking support about a call.
const RequestIDHeader = "X-Request-Id"

// maxRequestIDLen bounds the request id the SDK keeps and writes into error text: an id
// is a short token, and error text ends up in logs.
const maxRequestIDLen = 128

// ResponseMeta is what the service's final answer to a call said besides its data. Ask
// for it with WithResponseMeta.
type ResponseMeta struct {
	// RequestID is the service's id of the request (the X-Request-Id response header),
	// to quote to support. Empty when the service sent none, or sent one longer than
	// 128 bytes or with characters other than printable ASCII.
	RequestID string
	// StatusCode is the HTTP status of the final response; 0 when no response was
	// received (the connection failed, or ctx ended first).
	StatusCode int
	// Header is the header of the final response, as received; nil without one.
	Header http.Header
	// Attempts is how many times the request was sent: 1 unless it was retried.
	Attempts int
}

type responseMetaKey struct{}

// WithResponseMeta returns a context that makes each call it is passed to fill *meta
// when the call returns, on success and on failure alike: the service's request id, the
// HTTP status and header of its final response, and the number of attempts. A call
// refused before sending (a *ValidationError, missing credentials) leaves *meta as it
// was; a call that walks several pages (List) leaves what the last page's request said.
//
// Give each goroutine its own ResponseMeta: calls running at the same time must not share
// one. Without WithResponseMeta the pipeline does no work for it. A nil ctx is returned
// unchanged: the call refuses it with a *ValidationError.
func WithResponseMeta(ctx context.Context, meta *ResponseMeta) context.Context {
	if meta == nil || ctx == nil {
		return ctx // a nil ctx is the call's to refuse, with a ValidationError
	}
	return context.WithValue(ctx, responseMetaKey{}, meta)
}

// responseMetaOf returns the ResponseMeta ctx asks the call to fill, or nil.
func responseMetaOf(ctx context.Context) *ResponseMeta {
	m, _ := ctx.Value(responseMetaKey{}).(*ResponseMeta)
	return m
}

// requestIDOf returns the request id of a response header, or "" when there is none or
// it is not a short printable token: the value comes from the network and is written
// into error text.
func requestIDOf(h http.Header) string {
	v := h[RequestIDHeader]
	if len(v) == 0 || len(v[0]) > maxRequestIDLen {
		return ""
	}
	id := v[0]
	for i := 0; i < len(id); i++ {
		if id[i] < 0x21 || id[i] > 0x7e {
			return ""
		}
	}
	return id
}

// requestID is the request id of the response r read, if it read one.
func (r *response) requestID() string {
	if !r.done {
		return ""
	}
	return requestIDOf(r.header)
}
