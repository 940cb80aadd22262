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
	// ForwardedTo is where the attempt went instead of URL: the forward target
	// then set (SetForwardTarget), or "" when it went to URL.
	ForwardedTo string
}

// Deliveries returns every callback and webhook attempt so far, oldest first.
// An attempt not answered with a 2xx is redelivered later by the sandbox
// clock, after 30s, 1m, 2m, 5m, 10m and 30m.
func (s *Server) Deliveries() []Delivery {
	attempts := s.sandbox.Deliveries()
	out := make([]Delivery, len(attempts))
	for i, d := range attempts {
		out[i] = Delivery{URL: d.URL, Body: d.Body, Attempt: d.Attempt, At: d.At, Status: d.Status, ForwardedTo: d.ForwardedTo}
	}
	return out
}

// FaultKind is what an injected fault does to the request it hits. "Before the work"
// means the sandbox never handles the request; "after the work" means it handles it in
// full (the money moves, the record is written) and only the answer goes wrong. The
// names are those of the HTTP control and of the standalone sandbox's -faults flag.
type FaultKind string

const (
	// FaultLatency holds the request for the fault's Latency of real time, then
	// serves it. If the caller hangs up first (its timeout or context ends), the
	// work is never done. Keep latencies short in tests, or give the client a
	// shorter timeout (billing.WithTimeout) to see what a timeout does.
	FaultLatency = FaultKind(sandbox.FaultLatency)
	// FaultHTTP500 answers 500 with the error body, before the work.
	FaultHTTP500 = FaultKind(sandbox.FaultHTTP500)
	// FaultHTTP502 answers 502 with a gateway's HTML page, before the work.
	FaultHTTP502 = FaultKind(sandbox.FaultHTTP502)
	// FaultHTTP503 answers 503 with the fault's RetryAfter, before the work.
	FaultHTTP503 = FaultKind(sandbox.FaultHTTP503)
	// FaultHTTP429 answers 429 with the fault's RetryAfter, before the work.
	FaultHTTP429 = FaultKind(sandbox.FaultHTTP429)
	// FaultResetBeforeWork resets the connection before any work is done.
	FaultResetBeforeWork = FaultKind(sandbox.FaultResetBeforeWork)
	// FaultResponseLost lets the sandbox do the work of the request, then
	// resets the connection with no response, so the client cannot tell
	// whether anything happened.
	FaultResponseLost = FaultKind(sandbox.FaultResponseLost)
	// FaultTruncatedBody does the work, then sends the status, headers with the
	// full Content-Length and half the body, and closes the connection.
	FaultTruncatedBody = FaultKind(sandbox.FaultTruncatedBody)
	// FaultMalformedJSON does the work, then sends a complete answer whose body is
	// the first half of the JSON.
	FaultMalformedJSON = FaultKind(sandbox.FaultMalformedJSON)
	// FaultCode0005 does the work, then answers with the route's own status and body
	// except that the envelope says success false and response code 0005 (connection
	// error to the network, final state unknown): what the service says checkout may
	// answer.
	FaultCode0005 = FaultKind(sandbox.FaultCode0005)
	// FaultRedirect answers the fault's Status (a 3xx, 307 by default) with its
	// Location (by default the request's own URL), before the work.
	FaultRedirect = FaultKind(sandbox.FaultRedirect)
	// FaultRedirectAfterWork does the work, then answers as FaultRedirect does.
	FaultRedirectAfterWork = FaultKind(sandbox.FaultRedirectAfterWork)
	// FaultUnclassifiedAfterWork does the work, then answers the fault's Status (200
	// by default) with its Body verbatim ("{}" by default): an answer that says
	// neither yes nor no.
	FaultUnclassifiedAfterWork = FaultKind(sandbox.FaultUnclassifiedAfterWork)
	// FaultHTTP429AfterWork does the work, then answers 429 with the fault's
	// RetryAfter: a client re-sending the request meets its own duplicate.
	FaultHTTP429AfterWork = FaultKind(sandbox.FaultHTTP429AfterWork)
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
	// Latency is the hold of FaultLatency, in real time: the SDK's timeout runs on
	// the real clock. Zero means one second; at most a minute.
	Latency time.Duration
	// RetryAfter is the Retry-After of FaultHTTP503, FaultHTTP429 and
	// FaultHTTP429AfterWork, sent in whole seconds rounded up. Zero sends
	// "Retry-After: 0": retry at once.
	RetryAfter time.Duration
	// Status is the status of the redirect faults (300 to 399) and of
	// FaultUnclassifiedAfterWork (200 to 599); zero means their default.
	Status int
	// Location is where the redirect faults point; empty means the request's own
	// URL. Body is the body of FaultUnclassifiedAfterWork; empty means "{}".
	Location, Body string
}

// InjectFault arms f. Each request takes at most one fault; two faults due on
// the same request hit it and the one after, in injection order. It panics
// on a route the sandbox does not serve, an unknown kind or a bad value, as a
// test helper should.
//
// The same control is served over HTTP as POST /sandbox/faults with {"route",
// "kind", "nth", "latencyMs", "retryAfterSeconds"}.
func (s *Server) InjectFault(f Fault) {
	err := s.sandbox.InjectFault(sandbox.Fault{
		Route: f.Route, Nth: f.Nth, Kind: sandbox.FaultKind(f.Kind), Latency: f.Latency, RetryAfter: f.RetryAfter,
		Status: f.Status, Location: f.Location, Body: f.Body,
	})
	if err != nil {
		panic("billingtest: " + err.Error())
	}
}

// FaultsFired returns how many injected request faults have hit a request so far.
// A test that checks it knows its fault named a route the calls really take.
func (s *Server) FaultsFired() int {
	_, fired := s.sandbox.FaultCounts()
	return fired
}

// Movement is the sandbox's record of one accepted money movement: the truth a
// client's belief is checked against.
type Movement struct {
	// Kind is the operation: "checkout", "receive", "send", "send-to-bank",
	// "direct-debit" or "mandate".
	Kind string
	// ClientReference is the merchant's reference (a checkout session's own
	// reference).
	ClientReference string
	// TransactionID is the service's id of the movement (a mandate's
	// servicePreApprovalId, a checkout session's payment id).
	TransactionID string
	// State is "pending", "succeeded" or "failed".
	State string
	// ResponseCode is 0001 while pending, then 0000 or the failure code.
	ResponseCode string
	// Amount and Fee are in minor units.
	Amount, Fee int64
	// CreatedAt is when it was accepted, ResolvedAt when it became final (zero
	// while pending), by the sandbox clock.
	CreatedAt, ResolvedAt time.Time
}

// MovementRecords returns the money movements the sandbox accepted under
// clientReference, oldest first, counted as Movements counts them.
func (s *Server) MovementRecords(clientReference string) []Movement {
	found := s.sandbox.Movements(clientReference)
	out := make([]Movement, len(found))
	for i, m := range found {
		out[i] = Movement(m)
	}
	return out
}

// AllMovements returns every money movement the sandbox accepted, by any
// operation, oldest first: what GET /sandbox/movements answers.
func (s *Server) AllMovements() []Movement {
	found := s.sandbox.AllMovements()
	out := make([]Movement, len(found))
	for i, m := range found {
		out[i] = Movement(m)
	}
	return out
}

// SetForwardTarget sends every callback and webhook from now on to target
// instead of the URL it was meant for, as PUT /sandbox/forward does (billing
// listen registers itself so): the body is unchanged, the headers
// Billing-Sandbox-Forwarded-For (the URL it was meant for) and
// Billing-Sandbox-Attempt are added, and an answer other than 2xx is
// redelivered on the usual schedule. An empty target clears it. It fails for
// a target that is not an absolute http or https URL, changing nothing.
func (s *Server) SetForwardTarget(target string) error { return s.sandbox.SetForwardTarget(target) }

// ForwardTarget returns the forward target, or "" when none is set.
func (s *Server) ForwardTarget() string { return s.sandbox.ForwardTarget() }

// WithDisbursementBalance sets the starting balance of the disbursement
// account in minor units; by default it holds 100000000 (1,000,000.00 GHS).
// Zero keeps the default: for a nearly empty account give 1.
func WithDisbursementBalance(minorUnits int64) Option {
	return Option{func(c *sandbox.Config) { c.DisbursementBalance = minorUnits }}
}
