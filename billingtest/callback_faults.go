package billingtest

import (
	"time"

	"github.com/billingsdk/billing-go/internal/sandbox"
)

// CallbackFaultKind is what an injected callback fault does to the callback or webhook
// it hits.
type CallbackFaultKind string

const (
	// CallbackDropped never delivers the callback, so the receiver must fall back to
	// the status check. The money moves all the same.
	CallbackDropped = CallbackFaultKind(sandbox.CallbackDropped)
	// CallbackDuplicated delivers the callback twice.
	CallbackDuplicated = CallbackFaultKind(sandbox.CallbackDuplicated)
	// CallbackStale delivers the callback, then a stale copy of it in the state before
	// the final one: ResponseCode 0001 and Message "pending", PreapprovalStatus
	// PENDING, or a checkout's data.status PENDING.
	CallbackStale = CallbackFaultKind(sandbox.CallbackStale)
	// CallbackDelayed holds the callback back for the fault's Delay of sandbox time
	// (six minutes when zero: past the five minutes after which a receiver asks the
	// status check).
	CallbackDelayed = CallbackFaultKind(sandbox.CallbackDelayed)
	// CallbackContradicted delivers the callback, then a copy claiming the opposite
	// final state: a failure (ResponseCode 2001, PreapprovalStatus FAILED, a
	// checkout's FAILED) after a success, a success after a failure. A receiver that
	// confirms successes against the status check (billing.WithStatusCheckConfirmation)
	// refuses the false success.
	CallbackContradicted = CallbackFaultKind(sandbox.CallbackContradicted)
	// CallbackForgedFailure forges a failure while the movement is still pending: when
	// the sandbox accepts a receive, send, send-to-bank, direct-debit charge or mandate,
	// before it resolves, the callback URL receives the failure callback the movement
	// would send if it failed (ResponseCode 2001, or PreapprovalStatus FAILED), in the
	// server's wire's shape. The movement goes on and its genuine callback follows. Nth
	// counts the matching movements accepted. A receiver that confirms failures against
	// the status check (the Tracker's Handler) answers it 503 "retry later" while the
	// status check says pending and settles nothing; a merchant who took it for the truth
	// and sent the movement again would move the money twice.
	CallbackForgedFailure = CallbackFaultKind(sandbox.CallbackForgedFailure)
	// CallbackForgedAmount delivers, just before the genuine callback, a copy claiming
	// success for a hundred times its amounts (a checkout's data.amount as well; a
	// mandate, which has no amount, gets only the success claim). A receiver that hands
	// its code the status check's amount refuses the copy with 403 and passes on the
	// genuine callback.
	CallbackForgedAmount = CallbackFaultKind(sandbox.CallbackForgedAmount)
)

// CallbackFault makes one callback or webhook go wrong in a chosen way.
type CallbackFault struct {
	// Kind is what happens to the callback.
	Kind CallbackFaultKind
	// Reference picks the callbacks of one operation by the merchant's client
	// reference, on both wires alike: the ClientReference of a receive, send,
	// send-to-bank or direct-debit charge, the clientReferenceId of a mandate,
	// the clientReference of a checkout session (its metadata.clientReference;
	// the session's own reference when it was created without one), the id of
	// a subscription. Empty (with ServiceReference empty too) matches every
	// callback and webhook.
	Reference string
	// ServiceReference picks the callbacks of one operation by the reference
	// the service gave it instead: a checkout session's reference (what
	// Payment.Reference holds; the provider's CheckoutId), the TransactionId
	// of a money movement, the servicePreApprovalId of a mandate. Set at most
	// one of Reference and ServiceReference.
	ServiceReference string
	// Nth picks the callback: 1 (or 0) is the next matching one from the injection
	// on, 2 the one after, and so on.
	Nth int
	// Delay is the hold of CallbackDelayed, in sandbox time.
	Delay time.Duration
}

// InjectCallbackFault arms f. Each callback takes at most one fault; two faults due on
// the same callback hit it and the next matching one, in injection order. Redeliveries
// after a non-2xx answer are not counted. It panics on an unknown kind, a negative Nth
// or Delay, or both Reference and ServiceReference set, as a test helper should.
//
// The same control is served over HTTP as POST /sandbox/callbacks/faults with
// {"kind": "drop"|"duplicate"|"stale"|"contradict"|"delay"|"forge-failure"|"forge-amount",
// "reference", "serviceReference", "nth", "delaySeconds"}.
func (s *Server) InjectCallbackFault(f CallbackFault) {
	err := s.sandbox.InjectCallbackFault(sandbox.CallbackFault{
		Kind: sandbox.CallbackFaultKind(f.Kind), Reference: f.Reference, ServiceReference: f.ServiceReference, Nth: f.Nth, Delay: f.Delay,
	})
	if err != nil {
		panic("billingtest: " + err.Error())
	}
}

// CallbackFaultsFired returns how many injected callback faults have hit a callback or
// webhook so far.
func (s *Server) CallbackFaultsFired() int {
	_, fired := s.sandbox.CallbackFaultCounts()
	return fired
}
