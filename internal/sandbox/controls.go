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

// clockView is the answer of a clock move.
type clockView struct {
	Now timestamp `json:"now"`
}

// advanceClock moves the sandbox clock by {"seconds": N} and answers the new
// time once the work that became due has run.
func (s *Server) advanceClock(w http.ResponseWriter, r *http.Request) {
	f, err := decodeFields(r)
	if err != nil {
		writeError(w, err)
		return
	}
	f.require("seconds")
	seconds, _ := f.integerRange("seconds", 0, maxAdvanceSeconds)
	if err := f.err(); err != nil {
		writeError(w, err)
		return
	}
	s.Advance(time.Duration(seconds) * time.Second)
	writeData(w, http.StatusOK, clockView{Now: timestamp{s.Now()}})
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
	p, _ := s.payments.checkouts.get(reference)
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
