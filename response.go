package billing

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
)

// Size limits of response bodies. A success body larger than maxBodyBytes is refused; an
// error body is kept up to maxErrorBodyBytes.
const (
	maxBodyBytes      = 32 << 20
	maxErrorBodyBytes = 64 << 10
	// maxPreallocBytes bounds what a declared Content-Length reserves before the body
	// arrives.
	maxPreallocBytes = 64 << 10
)

// errUnreadableBody marks a response whose body could not be read or decoded. Reads are
// retried on it; for a money movement it means the outcome is unknown.
var errUnreadableBody = errors.New("unreadable response body")

// response is what the pipeline keeps of the final answer.
type response struct {
	done   bool
	status int
	body   []byte // kept for an *APIError
	header http.Header
	// from is the answer read: an earlier attempt's, when the retries then ran out on a
	// status the transport hands back unread.
	from *http.Response
	// limited reads the body through its size limit; kept here so that reading costs
	// no allocation of its own.
	limited io.LimitedReader
}

var bufferPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// read consumes resp: a 2xx body is decoded into out in one pass; any other body is kept
// (through a size limit) and its envelope header decoded for the error.
func (r *response) read(resp *http.Response, out decodeTarget) error {
	defer resp.Body.Close()
	r.done, r.status, r.body, r.header, r.from = true, resp.StatusCode, nil, resp.Header, resp
	out.reset()
	if resp.StatusCode < 200 {
		// A 1xx that reaches here is a 101 whose body is the upgraded connection: no
		// answer will come through it, so it is not read.
		return nil
	}

	ok := resp.StatusCode >= 200 && resp.StatusCode < 300
	limit := int64(maxErrorBodyBytes)
	if ok {
		limit = maxBodyBytes
	}
	buf := bufferPool.Get().(*bytes.Buffer)
	defer putBuffer(buf)
	buf.Reset()
	// The declared length only hints: the buffer grows with what arrives, so a body
	// that declares 32 MiB and sends one byte costs what one byte costs.
	if n := resp.ContentLength; n > 0 {
		buf.Grow(int(min(n, limit, maxPreallocBytes)))
	}
	if ok && streams(out) {
		// A page is decoded as it arrives, and no further than its bound: a page past
		// it is refused with the rest of the body unread. What was read is kept, for
		// the gate.
		body := io.TeeReader(io.LimitReader(resp.Body, limit), buf) // a longer body ends mid-JSON
		if streamed, err := out.decodeStream(body); streamed {
			if err != nil {
				// The gate's verdict comes first, as for every other answer: the
				// rest of a body the decoder refused is read (within the limit), and
				// one the gate refuses is refused as such. A page past its bound is
				// read no further.
				if !errors.Is(err, ErrPageTooLarge) {
					_, _ = io.Copy(io.Discard, body)
				}
				if _, gateErr := readInbound(buf.Bytes()); errors.Is(gateErr, ErrContradiction) {
					err = gateErr
				}
				out.reset()
				return fmt.Errorf("%w: %w", errUnreadableBody, err)
			}
			return r.gate(buf.Bytes(), out, true)
		}
	}
	r.limited = io.LimitedReader{R: resp.Body, N: limit + 1}
	n, err := buf.ReadFrom(&r.limited)
	r.limited = io.LimitedReader{}
	if err != nil {
		return fmt.Errorf("%w: %v", errUnreadableBody, err)
	}
	if !ok {
		r.body = bytes.Clone(buf.Bytes()[:min(n, limit)])
		// The inbound gate first (inbound.go): an error body that writes its code or
		// its success flag twice, disagreeing, says nothing either way.
		canonical, err := readInbound(r.body)
		if errors.Is(err, ErrContradiction) {
			return fmt.Errorf("%w: %w", errUnreadableBody, err)
		}
		_ = json.Unmarshal(canonical, out.header()) // best effort: the status speaks anyway
		return nil
	}
	if n > limit {
		return fmt.Errorf("%w: larger than %d bytes", errUnreadableBody, limit)
	}
	return r.gate(buf.Bytes(), out, false)
}

// gate passes a 2xx body through the inbound gate (inbound.go) and decodes its canonical
// form into out, unless out was decoded already as the body arrived (a page): then the
// gate's verdict stands over what was read, and a body written with escapes is read
// again in its canonical form, so that a page reads as every other answer does.
func (r *response) gate(body []byte, out decodeTarget, decoded bool) error {
	canonical, err := readInbound(body)
	if err != nil {
		out.reset()
		return fmt.Errorf("%w: %w", errUnreadableBody, err)
	}
	if !decoded || &canonical[0] != &body[0] {
		out.reset()
		if err := decodeJSON(canonical, out); err != nil {
			return fmt.Errorf("%w: %w", errUnreadableBody, err)
		}
	}
	if out.header().failed() {
		r.body = bytes.Clone(body[:min(len(body), maxErrorBodyBytes)])
	}
	return nil
}

// streams reports whether out decodes its data as it arrives (a page), so that read
// builds the reader that keeps the body's start only for such a target.
func streams(out decodeTarget) bool {
	s, ok := out.(interface{ streams() bool })
	return !ok || s.streams()
}

// streams reports whether e's data is a page, read by decodeStream.
func (e *envelope[T]) streams() bool {
	_, ok := any(&e.Data).(interface {
		decodeStream(r io.Reader, h *envelopeHeader) error
	})
	return ok
}

// putBuffer returns buf to the pool unless it grew too large to be worth keeping.
func putBuffer(buf *bytes.Buffer) {
	if buf.Cap() <= 1<<20 {
		bufferPool.Put(buf)
	}
}
