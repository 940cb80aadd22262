package sandbox

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"
)

// redeliveryWaits are the pauses, by the sandbox clock, before each new attempt at a
// callback or webhook that was not answered with a 2xx. After the last one the sandbox
// gives up, as the real service does after its own schedule.
var redeliveryWaits = []time.Duration{
	30 * time.Second, time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 30 * time.Minute,
}

// deliveryTimeout bounds one attempt. Tasks run one at a time, so a receiver that hangs
// must not hold up the rest of the sandbox for long.
const deliveryTimeout = 5 * time.Second

// Delivery is one attempt at posting a callback or webhook.
type Delivery struct {
	URL string // where it was meant to go
	// ForwardedTo is where it went instead, the forward target then set
	// (SetForwardTarget); "" when it went to URL.
	ForwardedTo string
	Body        json.RawMessage
	Attempt     int       // 1 for the first attempt
	At          time.Time // sandbox time of the attempt
	Status      int       // the receiver's HTTP status; 0 when it could not be reached
}

// maxDeliveryLog bounds the attempts the sandbox keeps: the oldest go first.
const maxDeliveryLog = 10000

// deliveries records the last maxDeliveryLog attempts, for tests and the
// sandbox's own controls. dropped counts those let go, so an attempt's seq
// (its number from 1 in the order made) stays the same.
type deliveries struct {
	mu      sync.Mutex
	log     []Delivery
	dropped int
}

// add records d and returns its seq.
func (l *deliveries) add(d Delivery) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.log) == maxDeliveryLog {
		l.log = slices.Delete(l.log, 0, maxDeliveryLog/10)
		l.dropped += maxDeliveryLog / 10
	}
	l.log = append(l.log, d)
	return l.dropped + len(l.log)
}

// bySeq returns the attempt numbered seq, while the log holds it.
func (l *deliveries) bySeq(seq int) (Delivery, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	i := seq - l.dropped - 1
	if i < 0 || i >= len(l.log) {
		return Delivery{}, false
	}
	return l.log[i], true
}

// after returns at most limit attempts numbered after seq, and the seq of the first.
func (l *deliveries) after(seq, limit int) ([]Delivery, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	i := max(0, seq-l.dropped)
	if i >= len(l.log) {
		return nil, 0
	}
	return slices.Clone(l.log[i:min(len(l.log), i+limit)]), l.dropped + i + 1
}

var deliveryClient = &http.Client{Timeout: deliveryTimeout}

// deliver posts body as JSON to url as soon as the sandbox clock allows (the next
// Advance with a manual clock), and again on the redelivery schedule until the receiver
// answers 2xx. An empty url sends nothing, unless a forward target is set: a listener
// hears every callback and webhook, those nobody named a URL for included.
func (s *Server) deliver(url string, body any) {
	if body == nil || url == "" && s.forward.get() == "" {
		return
	}
	payload, err := json.Marshal(body)
	if err != nil {
		panic("sandbox: callback body does not encode: " + err.Error()) // our own types: a bug
	}
	s.dispatch(url, payload) // through the callback faults (callback_faults.go)
}

// attemptDelivery makes one attempt and returns its seq (0 when nothing was sent).
func (s *Server) attemptDelivery(url string, payload []byte, attempt int) int {
	d := Delivery{URL: url, Body: payload, Attempt: attempt, At: s.Now()}
	header := http.Header{}
	if target := s.forward.of(url); target != url {
		d.ForwardedTo = target
		header.Set(ForwardedForHeader, url)
		header.Set(AttemptHeader, strconv.Itoa(attempt))
	}
	if d.ForwardedTo == "" && url == "" {
		return 0 // meant for no URL, and the listener it was for is gone
	}
	d.Status = post(cmp.Or(d.ForwardedTo, url), payload, header)
	status := d.Status
	seq := s.deliveries.add(d)
	if status >= 200 && status < 300 {
		return seq
	}
	if attempt > len(redeliveryWaits) {
		s.cfg.Logger.Warn("sandbox gave up delivering a callback", slog.Int("attempts", attempt), slog.Int("status", status))
		return seq
	}
	s.scheduleJob(s.Now().Add(redeliveryWaits[attempt-1]), deliveryAttemptJob{URL: url, Body: payload, Attempt: attempt + 1})
	return seq
}

// post sends one attempt, with header added, and returns the receiver's status, or 0
// when it could not be reached.
func post(url string, payload []byte, header http.Header) int {
	ctx, cancel := context.WithTimeout(context.Background(), deliveryTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(payload))
	if err != nil {
		return 0
	}
	for name, values := range header {
		req.Header[name] = values
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := deliveryClient.Do(req)
	if err != nil {
		return 0
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	return resp.StatusCode
}

// Deliveries returns every callback and webhook attempt so far, oldest first.
func (s *Server) Deliveries() []Delivery {
	s.deliveries.mu.Lock()
	defer s.deliveries.mu.Unlock()
	return append([]Delivery(nil), s.deliveries.log...)
}

// Resend posts the callback or webhook of attempt seq again, body unchanged, now:
// to the forward target when one is set, else where it was meant; an answer
// other than 2xx is redelivered on the usual schedule. It returns the new
// attempt's seq.
func (s *Server) Resend(seq int) (int, error) {
	d, ok := s.deliveries.bySeq(seq)
	if !ok {
		return 0, notFoundError("delivery", strconv.Itoa(seq))
	}
	if d.URL == "" && s.forward.get() == "" {
		return 0, conflictError("delivery %d was meant for no URL and no listener is registered to hear it again", seq)
	}
	return s.attemptDelivery(d.URL, d.Body, 1), nil
}
