package storekit

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// The tries an Attempt records (Attempt.What).
const (
	// AttemptStatusCheck is a status check that left its movement unsettled: it
	// answered pending, or gave no answer.
	AttemptStatusCheck = "status_check"
	// AttemptReport is an OnOutcome call that failed, or a report given back unmade
	// because its instance stopped.
	AttemptReport = "report"
)

// Bounds of what an AttemptLog keeps.
const (
	// MaxAttempts, 20, is how many attempts of each kind a store keeps for one
	// movement: the latest. The movement's own counters (Movement.Checks,
	// Settlement.ReportAttempts) say how many there were in all.
	MaxAttempts = 20
	// MaxAttemptError is the longest Attempt.Error kept, in bytes; a longer one is cut
	// (at a rune boundary) and ends with "…".
	MaxAttemptError = 300
)

// Attempt is one try of the Tracker on a movement that came back without settling it or
// being accepted: what each status check answered, and why each failed report failed.
// Its Error is text the Tracker has passed through its Client's scrubber.
type Attempt struct {
	Key  MovementKey
	What string // AttemptStatusCheck or AttemptReport
	// N numbers the attempts of one kind of one movement from 1: the movement's
	// Checks, or its settlement's ReportAttempts, once this attempt is counted. The
	// store sets it.
	N     int
	At    time.Time
	Owner string // the instance that tried
	// Answer is the state a status check answered (StatePending, or a final state it
	// could not settle with); empty when it gave no answer, and for a report.
	Answer string
	// Error is why the try came back without an answer, or why OnOutcome refused.
	Error string
}

// Validate returns a *ValidationError when a cannot be recorded. A too long Error is
// no error: the store keeps its first MaxAttemptError bytes (see TrimAttemptError).
func (a Attempt) Validate() error {
	if err := a.Key.Validate(); err != nil {
		return err
	}
	switch {
	case a.What != AttemptStatusCheck && a.What != AttemptReport:
		return invalid("attempt.what", fmt.Sprintf("unknown attempt %q", a.What))
	case a.At.IsZero():
		return invalid("attempt.at", "is required")
	case len(a.Answer) > MaxClaimedState:
		return invalid("attempt.answer", fmt.Sprintf("must be at most %d characters", MaxClaimedState))
	}
	return ValidateOwner(a.Owner)
}

// TrimAttemptError returns s cut to at most MaxAttemptError bytes, at a rune boundary,
// ending with "…" when it was cut.
func TrimAttemptError(s string) string {
	if len(s) <= MaxAttemptError {
		return s
	}
	const ellipsis = "…"
	cut := MaxAttemptError - len(ellipsis)
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return strings.ToValidUTF8(s[:cut], "") + ellipsis
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// AttemptLog is implemented by a Store that keeps the Tracker's unsuccessful tries on
// each movement, so that an operator sees what every status check answered and why
// every report failed, not only how many there were. It is optional: with a store
// without it the Tracker calls Reschedule and RetryReport, and keeps the counts alone.
// Each write is the Store's own write with the attempt kept in the same step, so that
// keeping it costs no round trip of its own. A store keeps the latest MaxAttempts of
// each kind per movement, and forgets them with the movement (Purge, Release) or when
// its key is tracked again.
type AttemptLog interface {
	// RescheduleAfter is Reschedule (key, owner, next) that keeps a, the status check's
	// attempt, numbered with the movement's Checks after it.
	RescheduleAfter(ctx context.Context, key MovementKey, owner string, next time.Time, a Attempt) error

	// RetryReportAfter is RetryReport (id, owner, next) that keeps a, the report's
	// attempt, numbered with the settlement's ReportAttempts after it. a.Key is the
	// movement whose outcome id is.
	RetryReportAfter(ctx context.Context, id, owner string, next time.Time, a Attempt) error

	// Attempts returns the attempts kept for key, oldest first: at most MaxAttempts of
	// each kind.
	Attempts(ctx context.Context, key MovementKey) ([]Attempt, error)
}

var _ AttemptLog = (*memoryStore)(nil)

func (s *memoryStore) RescheduleAfter(ctx context.Context, key MovementKey, owner string, next time.Time, a Attempt) error {
	a.Key, a.What, a.Owner = key, AttemptStatusCheck, owner
	if err := a.Validate(); err != nil {
		return err
	}
	return s.reschedule(key, owner, next, func(e *memEntry) {
		a.N = e.m.Checks
		s.keepAttemptLocked(e, a)
	})
}

func (s *memoryStore) RetryReportAfter(ctx context.Context, id, owner string, next time.Time, a Attempt) error {
	a.What, a.Owner = AttemptReport, owner
	if err := a.Validate(); err != nil {
		return err
	}
	return s.retryReport(id, owner, next, func(e *memEntry) error {
		if e.key != a.Key {
			return fmt.Errorf("%w: outcome %q is not of %s %q", ErrLeaseLost, id, a.Key.Callback, a.Key.ClientReference)
		}
		a.N = e.final.ReportAttempts + 1
		s.keepAttemptLocked(e, a)
		return nil
	})
}

func (s *memoryStore) Attempts(_ context.Context, key MovementKey) ([]Attempt, error) {
	if err := key.Validate(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.entries[key]
	if e == nil || !e.tracked {
		return nil, nil
	}
	return slices.Clone(e.attempts), nil
}

// keepAttemptLocked keeps a in e, dropping the oldest of its kind beyond MaxAttempts.
func (s *memoryStore) keepAttemptLocked(e *memEntry, a Attempt) {
	a.Error = TrimAttemptError(a.Error)
	same := 0
	for _, b := range e.attempts {
		if b.What == a.What {
			same++
		}
	}
	if same >= MaxAttempts {
		i := slices.IndexFunc(e.attempts, func(b Attempt) bool { return b.What == a.What })
		s.resizeLocked(e, -attemptBytes(e.attempts[i]))
		e.attempts = slices.Delete(e.attempts, i, i+1)
	}
	e.attempts = append(e.attempts, a)
	s.resizeLocked(e, attemptBytes(a))
}

// dropAttemptsLocked forgets e's attempts: its key is tracked again.
func (s *memoryStore) dropAttemptsLocked(e *memEntry) {
	for _, a := range e.attempts {
		s.resizeLocked(e, -attemptBytes(a))
	}
	e.attempts = nil
}

// resizeLocked accounts n more bytes (or fewer) to e.
func (s *memoryStore) resizeLocked(e *memEntry, n int) {
	e.size += n
	s.used += n
}

// attemptBytes is what a kept attempt holds whose size its sender chooses, and a little.
func attemptBytes(a Attempt) int { return 64 + len(a.Owner) + len(a.Answer) + len(a.Error) }
