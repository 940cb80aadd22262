package storekit_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/billingsdk/billing-go/storekit"
)

// The in-memory store is built on the same rules and answers in the same terms: its
// lease errors match ErrLeaseLost, it renews report claims, and it never claims more
// than MaxClaim at once.
func TestTheMemoryStoreSpeaksStorekit(t *testing.T) {
	ctx := context.Background()
	s := storekit.NewMemoryStore(storekit.MemoryStoreOptions{MaxMovements: 2 * storekit.MaxClaim})
	renewer, ok := s.(storekit.ReportLeaseRenewer)
	if !ok {
		t.Fatalf("the in-memory store does not renew report claims")
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := renewer.RenewReport(ctx, "receive/succeeded/nobody", "a", now.Add(time.Minute)); !errors.Is(err, storekit.ErrLeaseLost) {
		t.Errorf("renewing an outcome nobody claimed: %v, want ErrLeaseLost", err)
	}
	for i := range storekit.MaxClaim + 5 {
		m := storekit.Movement{Kind: storekit.KindReceive, ClientReference: fmt.Sprintf("r%d", i), StartedAt: now, Deadline: now}
		if _, _, err := s.Track(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	claimed, err := s.ClaimDue(ctx, "a", now, now.Add(time.Minute), storekit.MaxClaim+5)
	if err != nil || len(claimed) != storekit.MaxClaim {
		t.Errorf("ClaimDue of %d: %d claimed, %v; want MaxClaim (%d)", storekit.MaxClaim+5, len(claimed), err, storekit.MaxClaim)
	}
}

func TestValidateClaim(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		owner      string
		now, until time.Time
		limit      int
		field      string
	}{
		{"", now, now.Add(time.Second), 1, "owner"},
		{" ", now, now.Add(time.Second), 1, "owner"},
		{"a", time.Time{}, now, 1, "now"},
		{"a", now, now, 1, "leaseUntil"},
		{"a", now, now.Add(time.Second), 0, "limit"},
	} {
		_, err := storekit.ValidateClaim(c.owner, c.now, c.until, c.limit)
		var verr *storekit.ValidationError
		if !errors.As(err, &verr) || verr.Field != c.field {
			t.Errorf("ValidateClaim(%q, %v, %v, %d) = %v, want a ValidationError of %s", c.owner, c.now, c.until, c.limit, err, c.field)
		}
	}
	if n, err := storekit.ValidateClaim("a", now, now.Add(time.Second), storekit.MaxClaim*3); err != nil || n != storekit.MaxClaim {
		t.Errorf("a limit past MaxClaim: %d, %v; want %d", n, err, storekit.MaxClaim)
	}
	if err := storekit.ValidateOwner("\t"); err == nil {
		t.Errorf("ValidateOwner of a blank owner: nil, want an error")
	}
}

func TestMergeOutcomeRanks(t *testing.T) {
	key := storekit.MovementKey{Callback: storekit.CallbackTransaction, ClientReference: "ord-1"}
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	failed := storekit.Outcome{State: storekit.StateFailed, Source: storekit.SourceStatusCheck, At: at}
	s, changed, err := storekit.MergeOutcome(nil, key, failed, nil)
	if err != nil || !changed || s.Outcome.State != storekit.StateFailed {
		t.Fatalf("a first outcome: %+v, %v, %v", s, changed, err)
	}
	succeeded := storekit.Outcome{State: storekit.StateSucceeded, Source: storekit.SourceCallback, At: at.Add(time.Second)}
	next, changed, err := storekit.MergeOutcome(&s, key, succeeded, []byte(`{}`))
	if err != nil || !changed || next.Outcome.State != storekit.StateSucceeded || next.ID == s.ID || !next.Disagreed {
		t.Errorf("a success over a failure: %+v, %v, %v; want it to replace the failure under a new ID, disagreeing", next, changed, err)
	}
	if _, _, err := storekit.MergeOutcome(nil, key, storekit.Outcome{State: storekit.StatePending, Source: storekit.SourceCallback, At: at}, nil); err == nil {
		t.Errorf("a pending outcome merged without error")
	}
}
