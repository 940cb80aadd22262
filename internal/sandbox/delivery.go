package sandbox

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
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

// deliveries records every attempt, for tests and the sandbox's own controls.
type deliveries struct {
	mu  sync.Mutex
	log []Delivery
}

var deliveryClient = &http.Client{Timeout: deliveryTimeout}

// deliver posts body as JSON to url as soon as the sandbox clock allows (the next
// Advance with a manual clock), and again on the redelivery schedule until the receiver
// answers 2xx. An empty url sends nothing.
func (s *Server) deliver(url string, body any) {
	if url == "" {
		return
	}
	payload, err := json.Marshal(body)
	if err != nil {
		panic("sandbox: callback body does not encode: " + err.Error()) // our own types: a bug
	}
	s.dispatch(url, payload) // through the callback faults (callback_faults.go)
}

func (s *Server) attemptDelivery(url string, payload []byte, attempt int) {
	d := Delivery{URL: url, Body: payload, Attempt: attempt, At: s.Now()}
	header := http.Header{}
	if target := s.forward.of(url); target != url {
		d.ForwardedTo = target
		header.Set(ForwardedForHeader, url)
		header.Set(AttemptHeader, strconv.Itoa(attempt))
	}
	d.Status = post(cmp.Or(d.ForwardedTo, url), payload, header)
	status := d.Status
	s.deliveries.mu.Lock()
	s.deliveries.log = append(s.deliveries.log, d)
	s.deliveries.mu.Unlock()
	if status >= 200 && status < 300 {
		return
	}
	if attempt > len(redeliveryWaits) {
		s.cfg.Logger.Warn("sandbox gave up delivering a callback", slog.Int("attempts", attempt), slog.Int("status", status))
		return
	}
	s.schedule(s.Now().Add(redeliveryWaits[attempt-1]), func() { s.attemptDelivery(url, payload, attempt+1) })
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
