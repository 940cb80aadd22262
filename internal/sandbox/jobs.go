package sandbox

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// A job is work the sandbox has scheduled, kept as data: its kind names what
// runs it and its fields are all it needs, records being found again by id.
// The state file (state.go) writes the queue of jobs, and a restart schedules
// them again, so a resolution, an expiry or a redelivery due while the
// sandbox was down runs when it comes back.
//
// Its moments are timestamps, kept in the state file to the millisecond as
// the records they are compared with are.
//
// A job finds its records under s.mu itself, as any task does, and does
// nothing when what it was for has changed since (a newer schedule, a
// cancel), so running one twice is harmless.
type job interface {
	kind() string
	run(s *Server)
}

// jobKinds is every kind of job, by the name the state file writes, with
// what reads one back. Each kind is scheduled by one function of this
// package, the one named in its comment, which creation and a restart share.
var jobKinds = map[string]func(json.RawMessage) (job, error){
	resolveMovementJob{}.kind():    decodeJob[resolveMovementJob],
	answerMandateJob{}.kind():      decodeJob[answerMandateJob],
	expireCreditsJob{}.kind():      decodeJob[expireCreditsJob],
	expireLicenseJob{}.kind():      decodeJob[expireLicenseJob],
	endPeriodJob{}.kind():          decodeJob[endPeriodJob],
	cancelSubscriptionJob{}.kind(): decodeJob[cancelSubscriptionJob],
	expireCheckoutJob{}.kind():     decodeJob[expireCheckoutJob],
	deliveryAttemptJob{}.kind():    decodeJob[deliveryAttemptJob],
}

// decodeJob reads a job of type J, refusing a field J does not have.
func decodeJob[J job](raw json.RawMessage) (job, error) {
	var j J
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return nil, fmt.Errorf("%s job: %w", j.kind(), err)
	}
	return j, nil
}

// scheduleJob arranges for j to run when the sandbox's time reaches at.
func (s *Server) scheduleJob(at time.Time, j job) {
	s.sched.scheduleJob(at, j, func() { j.run(s) })
}

// resolveMovementJob makes an accepted money movement final (resolveLater).
type resolveMovementJob struct {
	Kind      string `json:"kind"`
	Reference string `json:"reference"`
	Code      string `json:"code"`
	Silent    bool   `json:"silent,omitempty"`
}

func (resolveMovementJob) kind() string { return "resolve-movement" }

func (j resolveMovementJob) run(s *Server) {
	s.mu.Lock()
	var target string
	var body any
	m := s.money.byKey[movementKey{movementKind(j.Kind), j.Reference}]
	if m != nil && s.money.settle(m, j.Code, s.Now()) && !j.Silent && m.callback != nil {
		target, body = m.callbackURL, m.callback()
	}
	s.mu.Unlock()
	s.deliver(target, body)
}

// answerMandateJob has the customer answer a mandate's approval request
// (approveLater).
type answerMandateJob struct {
	ID      string `json:"id"`
	Request int    `json:"request"`
}

func (answerMandateJob) kind() string { return "answer-mandate" }

func (j answerMandateJob) run(s *Server) {
	s.mu.Lock()
	var body any
	var target string
	if m := s.mandates.byID[j.ID]; m != nil && m.request == j.Request && m.Status == mandatePending {
		now := s.Now()
		code := mandateOutcomes.of(m.Msisdn).code
		m.Status = mandateApproved
		if code != CodeSuccess {
			m.Status = mandateFailed
		}
		s.money.settle(m.movement, code, now)
		body, target = s.shapes.mandateCallback(m, now), m.callbackURL
	}
	s.mu.Unlock()
	if body != nil {
		s.deliver(target, body)
	}
}

// expireCreditsJob expires a wallet's lots that are due (addGrant).
type expireCreditsJob struct {
	Customer string `json:"customer"`
}

func (expireCreditsJob) kind() string { return "expire-credits" }

func (j expireCreditsJob) run(s *Server) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if wallet := s.credits.byCustomer[j.Customer]; wallet != nil {
		wallet.expireLots(s.Now())
	}
}

// expireLicenseJob expires a license at its expiresAt, unless that has moved
// (scheduleExpiry).
type expireLicenseJob struct {
	ID string    `json:"id"`
	At timestamp `json:"at"`
}

func (expireLicenseJob) kind() string { return "expire-license" }

func (j expireLicenseJob) run(s *Server) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l, ok := s.licenses.table.get(j.ID); ok && l.ExpiresAt != nil && l.ExpiresAt.Equal(j.At.Time) {
		expireIfDue(l, j.At.Time)
	}
}

// endPeriodJob ends a subscription's period or trial, unless its schedule
// has changed since (scheduleSubscription).
type endPeriodJob struct {
	ID    string    `json:"id"`
	Epoch int       `json:"epoch"`
	At    timestamp `json:"at"`
}

func (endPeriodJob) kind() string { return "end-period" }

func (j endPeriodJob) run(s *Server) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sub, ok := s.subscriptions.table.get(j.ID); ok && sub.epoch == j.Epoch {
		s.periodEnded(sub, j.At.Time)
	}
}

// cancelSubscriptionJob cancels a subscription at its cancelAt, unless that
// has moved (scheduleCancel).
type cancelSubscriptionJob struct {
	ID string    `json:"id"`
	At timestamp `json:"at"`
}

func (cancelSubscriptionJob) kind() string { return "cancel-subscription" }

func (j cancelSubscriptionJob) run(s *Server) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sub, ok := s.subscriptions.table.get(j.ID); ok && sub.Status != subscriptionCanceled && sub.CancelAt != nil && sub.CancelAt.Equal(j.At.Time) {
		sub.Status = subscriptionCanceled
		sub.epoch++
	}
}

// expireCheckoutJob ends a checkout session still unpaid at the end of its
// lifetime (createCheckoutSession).
type expireCheckoutJob struct {
	Reference string `json:"reference"`
}

func (expireCheckoutJob) kind() string { return "expire-checkout" }

func (j expireCheckoutJob) run(s *Server) { s.expireCheckout(j.Reference) }

// deliveryAttemptJob is one attempt at a callback or webhook: a first one
// held back by a callback fault (firstAttemptAt) or a redelivery
// (attemptDelivery).
type deliveryAttemptJob struct {
	URL     string          `json:"url"`
	Body    json.RawMessage `json:"body"`
	Attempt int             `json:"attempt"`
}

func (deliveryAttemptJob) kind() string { return "delivery-attempt" }

func (j deliveryAttemptJob) run(s *Server) { s.attemptDelivery(j.URL, j.Body, j.Attempt) }
