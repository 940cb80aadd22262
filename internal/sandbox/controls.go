package sandbox

import (
	"net/http"
	"strings"
	"time"
)

// maxAdvanceSeconds bounds one clock move to 100 years, far inside time.Duration.
const maxAdvanceSeconds = 100 * 365 * 24 * 60 * 60

// controlRoutes are the sandbox-only controls under /sandbox/, taking the
// same credentials as the billing resources and no scope (DESIGN "The sandbox").
func controlRoutes(s *Server) []route {
	return []route{
		{pattern: "POST /sandbox/clock/advance", auth: authBilling, handler: s.advanceClock},
		{pattern: "POST /sandbox/payments/{reference}/complete", auth: authBilling, handler: s.completeCheckout},
		{pattern: "GET /sandbox/sms", auth: authBilling, handler: s.listSMS},
	}
}

// advanceClock moves the sandbox clock by {"seconds": N} or by {"duration":
// "1.5s"} (Go's duration syntax: any length, not only whole seconds) and
// answers the new time once the work that became due has run.
func (s *Server) advanceClock(w http.ResponseWriter, r *http.Request) {
	f, err := decodeFields(r)
	if err != nil {
		writeError(w, err)
		return
	}
	var d time.Duration
	if f.has("duration") {
		d = f.advanceDuration("duration")
		if f.has("seconds") {
			f.fail("seconds", "give seconds or duration, not both")
		}
	} else {
		f.require("seconds")
		seconds, _ := f.integerRange("seconds", 0, maxAdvanceSeconds)
		d = time.Duration(seconds) * time.Second
	}
	if err := f.err(); err != nil {
		writeError(w, err)
		return
	}
	s.Advance(d)
	writeData(w, http.StatusOK, newClockView(s.Now()))
}

// advanceDuration reads a clock move written in Go's duration syntax ("6m",
// "1.5s", "250ms"): from 0 to maxAdvanceSeconds.
func (f *fields) advanceDuration(name string) time.Duration {
	text, _ := f.optionalString(name)
	d, err := time.ParseDuration(text)
	if err != nil || d < 0 || d > maxAdvanceSeconds*time.Second {
		f.fail(name, "%s must be a duration such as 6m, 1.5s or 250ms, from 0 to 100 years", name)
		return 0
	}
	return d
}

// completeCheckout completes a PENDING checkout session as the hosted page
// would: {"method": "CARD"|"MOBILE_MONEY"|"BANK_TRANSFER", "outcome":
// "succeeded"|"failed"}. It answers the payment record.
func (s *Server) completeCheckout(w http.ResponseWriter, r *http.Request) {
	f, err := decodeFields(r)
	if err != nil {
		writeError(w, err)
		return
	}
	f.require("method", "outcome")
	method, _ := f.enum("method", checkoutMethods...)
	outcome, _ := f.enum("outcome", "succeeded", "failed")
	if err := f.err(); err != nil {
		writeError(w, err)
		return
	}
	reference := r.PathValue("reference")
	if err := s.CompleteCheckout(reference, method, outcome); err != nil {
		writeError(w, err)
		return
	}
	s.mu.Lock()
	p, ok := s.payments.checkouts.get(reference)
	if !ok {
		p = s.checkoutByClientReference(reference)
	}
	record := *p
	s.mu.Unlock()
	writeData(w, http.StatusOK, record)
}

// listSMS answers the messages sent to ?msisdn=, newest first.
func (s *Server) listSMS(w http.ResponseWriter, r *http.Request) {
	msisdn := strings.TrimPrefix(r.URL.Query().Get("msisdn"), "+")
	if !isMSISDN(msisdn) {
		writeError(w, validationError("msisdn", "msisdn must be an international number: 7 to 15 digits, e.g. 233241234567"))
		return
	}
	writeData(w, http.StatusOK, s.smsTo(msisdn))
}
