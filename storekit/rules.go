package storekit

import (
	"fmt"
	"strings"
	"time"
)

// MergeOutcome applies the precedence rules of final outcomes: o, a final outcome for
// key, arrives where prev (nil when none) is stored. It returns the settlement to store
// next and whether o became its outcome. A Store's Settle stores what it returns.
//
// Final states are ranked (Rank): money moved (succeeded, mismatched) outranks nothing
// moved (failed, expired), which outranks not knowing (unknown). A state of higher rank
// replaces one of lower rank under a new ID, unreported, so it is reported again; at
// equal rank the first stands. Two exceptions: a refusal of the movement's own request
// (Source SourceRequest) is never replaced, since the service refused the only request
// made under it, so a success reported later under that reference is another
// movement's (a reused reference); and an operator's decision (SourceOperator) is never
// replaced, so that it is reported once, and what disagrees with it later is only
// remembered. A final state from another source that differs sets
// Disagreed. o that is not final, has no source or no time is a *ValidationError.
func MergeOutcome(prev *Settlement, key MovementKey, o Outcome, body []byte) (Settlement, bool, error) {
	if err := validateSettle(key, o, body); err != nil {
		return Settlement{}, false, err
	}
	o.ClientReference = key.ClientReference
	if o.Source != SourceCallback {
		body = nil
	}
	if prev == nil {
		s := Settlement{ID: OutcomeID(key, o.State), Key: key, Outcome: o, Body: body}
		s.noteSource(o.Source)
		return s, true, nil
	}
	s := *prev
	s.noteSource(o.Source)
	if o.State != s.Outcome.State && o.Source != s.Outcome.Source {
		s.Disagreed = true
	}
	if finalRank[o.State] > finalRank[s.Outcome.State] && s.Outcome.Source != SourceRequest && s.Outcome.Source != SourceOperator {
		kind := s.Outcome.Kind
		s.ID, s.Outcome, s.Body = OutcomeID(key, o.State), o, body
		if s.Outcome.Kind == "" {
			s.Outcome.Kind = kind
		}
		s.ReportedAt, s.ReportAttempts = time.Time{}, 0
		return s, true, nil
	}
	return s, false, nil
}

func (s *Settlement) noteSource(src string) {
	switch src {
	case SourceCallback:
		s.ByCallback = true
	case SourceStatusCheck:
		s.ByStatusCheck = true
	}
}

// OutcomeID is the ID MergeOutcome gives the final state of key's movement: stable, so
// that two instances settling the same outcome give it the same name.
func OutcomeID(key MovementKey, state string) string {
	return key.Callback + "/" + state + "/" + key.ClientReference
}

func validateSettle(key MovementKey, o Outcome, body []byte) error {
	if err := key.Validate(); err != nil {
		return err
	}
	switch {
	case o.ClientReference != "" && o.ClientReference != key.ClientReference:
		return invalid("outcome.clientReference", "must be the key's client reference")
	case !IsFinal(o.State):
		return invalid("outcome.state", "must be final: succeeded, failed, mismatched, expired or unknown")
	case o.Source != SourceCallback && o.Source != SourceStatusCheck && o.Source != SourceRequest && o.Source != SourceOperator:
		return invalid("outcome.source", "must be callback, status_check, request or operator")
	case o.At.IsZero():
		return invalid("outcome.at", "is required")
	case len(body) > MaxBodyBytes:
		return invalid("body", fmt.Sprintf("must be at most %d bytes", MaxBodyBytes))
	}
	return nil
}

// ValidateClaim returns a *ValidationError for a claim a Store must refuse: an empty
// owner, no now, a lease that ends at or before now, or a limit below one. It returns
// the limit capped at MaxClaim.
func ValidateClaim(owner string, now, leaseUntil time.Time, limit int) (int, error) {
	switch {
	case strings.TrimSpace(owner) == "":
		return 0, invalid("owner", "is required")
	case now.IsZero():
		return 0, invalid("now", "is required")
	case !leaseUntil.After(now):
		return 0, invalid("leaseUntil", "must be after now")
	case limit < 1:
		return 0, invalid("limit", "must be at least 1")
	}
	return min(limit, MaxClaim), nil
}

// ValidateOwner returns a *ValidationError for an empty owner.
func ValidateOwner(owner string) error {
	if strings.TrimSpace(owner) == "" {
		return invalid("owner", "is required")
	}
	return nil
}

// SettledAsOther reports whether final, settled for a key before any Track, is the
// outcome of a movement of another kind than kind: its status check confirmed it as
// that kind, so a movement of kind tracked under the key now is another movement, and
// Track refuses to adopt it.
func SettledAsOther(final *Settlement, kind string) bool {
	return final != nil && final.Outcome.Kind != "" && final.Outcome.Kind != kind
}
