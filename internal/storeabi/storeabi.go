// Package storeabi holds what package billing and package storekit share without
// importing one another: storekit imports billing (its functions take billing's
// types), so billing reaches nothing of storekit's, and the sentinel, the bound and
// the rules both use live here. Package billing sets the hooks when it initialises,
// before any package that imports it, so storekit runs billing's own rules.
package storeabi

import (
	"errors"
	"time"
)

// ErrLeaseLost is storekit.ErrLeaseLost, the one sentinel both packages match.
var ErrLeaseLost = errors.New("billing: store lease lost")

// MaxClaim is storekit.MaxClaim.
const MaxClaim = 1000

// Package billing's rules, set by its init.
var (
	// MergeOutcome is billing's merge of final outcomes, a
	// func(*billing.Settlement, billing.MovementKey, billing.Outcome, []byte)
	// (billing.Settlement, bool, error); its type names billing's types, which this
	// package cannot.
	MergeOutcome any
	// ValidateClaim and ValidateOwner are billing's checks of a claim's arguments.
	ValidateClaim func(owner string, now, leaseUntil time.Time, limit int) (int, error)
	ValidateOwner func(owner string) error
)
