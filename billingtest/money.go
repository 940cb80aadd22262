package billingtest

import (
	"encoding/json"
	"time"

	"github.com/billingsdk/billing-go/internal/sandbox"
)

// CompleteCheckout completes the PENDING checkout session with the given
// reference as a payer on the hosted page would: method is "CARD",
// "MOBILE_MONEY" or "BANK_TRANSFER", outcome "succeeded" or "failed". A
// success sets method, fee, net and paidAt (plus mobileMoneyDetail or
// cardDetail) and sends payment.succeeded to the webhook URL; a failure sets
// status FAILED with a failure code. It fails for an unknown reference, a
// session that is no longer PENDING, or an unknown method or outcome.
func (s *Server) CompleteCheckout(reference, method, outcome string) error {
	return s.sandbox.CompleteCheckout(reference, method, outcome)
}

// SMS returns the text messages the sandbox sent to msisdn, newest first. A
// mandate's OTP arrives as the code alone, e.g. "ABCD-1234", ready for
// Mandates.VerifyOTP.
func (s *Server) SMS(msisdn string) []string { return s.sandbox.SMS(msisdn) }

// Movements returns how many money movements the sandbox accepted under
// clientReference, by any operation: receive, send, send-to-bank, direct-debit
// charge, mandate creation, and checkout sessions (counted under their own
// reference and under metadata clientReference). A request refused at once
// (a validation error, a duplicate reference, a decline) moved nothing and
// counts nothing. After a lost response it tells whether the work was done.
func (s *Server) Movements(clientReference string) int {
	return len(s.sandbox.Movements(clientReference))
}

// DisbursementBalance returns the balance of the disbursement account in
// minor units. An accepted payout (send or send-to-bank) takes its amount plus
// fee at once, and a payout that fails gives it back.
func (s *Server) DisbursementBalance() int64 { return s.sandbox.DisbursementBalance() }

// Delivery is one attempt at posting a callback or webhook.
type Delivery struct {
	// URL is where it was posted.
	URL string
	// Body is the JSON posted.
	Body json.RawMessage
	// Attempt is 1 for the first attempt, 2 for the first redelivery, and so on.
	Attempt int
	// At is the sandbox time of the attempt.
	At time.Time
	// Status is the receiver's HTTP status, or 0 when it could not be reached.
	Status int
}

// Deliveries returns every callback and webhook attempt so far, oldest first.
// An attempt not answered with a 2xx is redelivered later by the sandbox
// clock, after 30s, 1m, 2m, 5m, 10m and 30m.
func (s *Server) Deliveries() []Delivery {
	attempts := s.sandbox.Deliveries()
	out := make([]Delivery, len(attempts))
	for i, d := range attempts {
		out[i] = Delivery{URL: d.URL, Body: d.Body, Attempt: d.Attempt, At: d.At, Status: d.Status}
	}
	return out
}

// FaultKind is what an injected fault does to the request it hits.
type FaultKind int

const (
	// FaultResponseLost lets the sandbox do the work of the request, then
	// resets the connection with no response, so the client cannot tell
	// whether anything happened.
	FaultResponseLost FaultKind = FaultKind(sandbox.FaultResponseLost)
	// FaultResetBeforeWork resets the connection before any work is done.
	FaultResetBeforeWork FaultKind = FaultKind(sandbox.FaultResetBeforeWork)
)

// Fault makes one request to a route fail in a chosen way.
type Fault struct {
	// Route is the route as the sandbox registers it: method, a space and
	// the path pattern, e.g. "POST /v1/payments/receive" or
	// "POST /v1/merchants/{account}/send/bank/gh/{bankCode}".
	Route string
	// Nth picks the request: 1 (or 0) is the next request to Route from the
	// injection on, 2 the one after, and so on.
	Nth int
	// Kind is what happens to that request.
	Kind FaultKind
}

// InjectFault arms f. Each request takes at most one fault; two faults due on
// the same request hit it and the one after, in injection order. It panics
// on a route the sandbox does not serve or an unknown kind, as a test helper
// should.
func (s *Server) InjectFault(f Fault) {
	if err := s.sandbox.InjectFault(sandbox.Fault{Route: f.Route, Nth: f.Nth, Kind: sandbox.FaultKind(f.Kind)}); err != nil {
		panic("billingtest: " + err.Error())
	}
}

// WithDisbursementBalance sets the starting balance of the disbursement
// account in minor units; by default it holds 100000000 (1,000,000.00 GHS).
// Zero keeps the default: for a nearly empty account give 1.
func WithDisbursementBalance(minorUnits int64) Option {
	return Option{func(c *sandbox.Config) { c.DisbursementBalance = minorUnits }}
}
