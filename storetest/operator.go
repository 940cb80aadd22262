package storetest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/billingsdk/billing-go/storekit"
)

// This file checks the optional interfaces an operator's view stands on:
// storekit.Inspector with storekit.OperatorStore, and storekit.AttemptLog. Run runs each
// on a store that implements it.

// optional are the suite's checks of optional interfaces, each with whether a store
// implements what it checks.
var optional = []struct {
	name string
	has  func(storekit.Store) bool
	fn   func(*testing.T, storekit.Store)
}{
	{"OperatorStore", func(s storekit.Store) bool {
		_, in := s.(storekit.Inspector)
		_, ops := s.(storekit.OperatorStore)
		return in && ops
	}, testOperatorStore},
	{"AttemptLog", func(s storekit.Store) bool { _, ok := s.(storekit.AttemptLog); return ok }, testAttemptLog},
}

// testOperatorStore holds a store that is a storekit.Inspector and a
// storekit.OperatorStore to what an operator's view reads and writes: list and counts by
// state, untracked money in Reconcile, a resolve that never overrides a settled outcome,
// a report made again under the same id, and audit records that outlive a released
// movement.
func testOperatorStore(t *testing.T, kit storekit.Store) {
	s := struct {
		storekit.Store
		storekit.Inspector
		storekit.OperatorStore
	}{kit, kit.(storekit.Inspector), kit.(storekit.OperatorStore)}
	ctx := context.Background()
	track := func(ref string, at time.Time) storekit.MovementKey {
		m := storekit.Movement{Kind: storekit.KindSend, ClientReference: ref, StartedAt: at, Deadline: at.Add(5 * time.Minute)}
		if _, _, err := s.Track(ctx, m); err != nil {
			t.Fatal(err)
		}
		return m.Key()
	}
	lost := track("lost_1", t0)
	paid := track("paid1", t0.Add(time.Second))
	track("fresh1", t0.Add(9*time.Minute))
	if _, _, err := s.Settle(ctx, paid, storekit.Outcome{State: storekit.StateSucceeded, Source: storekit.SourceStatusCheck, At: t0.Add(6 * time.Minute)}, nil); err != nil {
		t.Fatal(err)
	}
	trig := storekit.MovementKey{Callback: storekit.CallbackPayout, ClientReference: "trig1"}
	if _, _, err := s.Settle(ctx, trig, storekit.Outcome{Kind: storekit.KindSend, State: storekit.StateSucceeded, Source: storekit.SourceStatusCheck, At: t0.Add(7 * time.Minute)}, nil); err != nil {
		t.Fatal(err)
	}
	now := t0.Add(10 * time.Minute)

	sum, err := s.Summarize(ctx, now)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Overdue != 1 || sum.Pending != 1 || sum.Unreported != 1 || sum.Untracked != 1 || sum.Settled[storekit.StateSucceeded] != 1 || !sum.OldestOverdue.Equal(t0) {
		t.Fatalf("Summarize = %+v", sum)
	}
	items, more, err := s.List(ctx, storekit.ListQuery{Now: now})
	if err != nil || more {
		t.Fatal(err, more)
	}
	var refs []string
	for _, it := range items {
		refs = append(refs, it.Key.ClientReference)
	}
	if strings.Join(refs, ",") != "fresh1,trig1,paid1,lost_1" {
		t.Fatalf("listed %v; want the latest first", refs)
	}
	page, more, err := s.List(ctx, storekit.ListQuery{Now: now, Limit: 2, After: items[1].Cursor})
	if err != nil || more || len(page) != 2 || page[0].Key != paid {
		t.Fatalf("after a cursor: %+v %v %v", page, more, err)
	}
	for state, want := range map[string]string{storekit.ListOverdue: "lost_1", storekit.ListUntracked: "trig1", storekit.ListPending: "fresh1", storekit.ListUnreported: "paid1"} {
		got, _, err := s.List(ctx, storekit.ListQuery{State: state, Now: now})
		if err != nil || len(got) != 1 || got[0].Key.ClientReference != want {
			t.Errorf("state %s: %+v %v", state, got, err)
		}
	}
	if got, _, _ := s.List(ctx, storekit.ListQuery{Reference: "lost_", Now: now}); len(got) != 1 {
		t.Errorf("a reference prefix with '_' lists %d", len(got))
	}
	if got, _, _ := s.List(ctx, storekit.ListQuery{Reference: "lostX", Now: now}); len(got) != 0 {
		t.Errorf("'_' is no wildcard: %d", len(got))
	}
	r, err := s.Reconcile(ctx, t0.Add(-time.Hour), now, now)
	if err != nil || len(r.Untracked) != 1 || r.Untracked[0].Key != trig {
		t.Fatalf("Reconcile.Untracked = %+v, %v", r.Untracked, err)
	}

	audit := storekit.AuditRecord{Key: lost, Action: storekit.ActionResolve, Actor: "alice", Reason: "no record", At: now, Before: "pending", After: "failed"}
	o := storekit.Outcome{State: storekit.StateFailed, Source: storekit.SourceOperator, At: now}
	st, changed, err := s.Resolve(ctx, lost, o, audit)
	if err != nil || !changed || st.Outcome.Source != storekit.SourceOperator {
		t.Fatalf("Resolve = %+v %v %v", st, changed, err)
	}
	if _, changed, err := s.Resolve(ctx, paid, o, audit); err != nil || changed {
		t.Fatalf("a resolve over a settled outcome changed it: %v %v", changed, err)
	}
	if _, _, err := s.Resolve(ctx, storekit.MovementKey{Callback: storekit.CallbackPayout, ClientReference: "never"}, o, audit); !errors.Is(err, storekit.ErrNotTracked) {
		t.Fatalf("resolving an untracked key: %v", err)
	}
	// A genuine success later does not replace it.
	if _, changed, err := s.Settle(ctx, lost, storekit.Outcome{State: storekit.StateSucceeded, Source: storekit.SourceCallback, At: now}, nil); err != nil || changed {
		t.Fatalf("a callback replaced the operator's outcome: %v %v", changed, err)
	}
	as, err := s.Audits(ctx, lost)
	if err != nil || len(as) != 1 || as[0].Actor != "alice" || as[0].OutcomeID != st.ID || !as[0].At.Equal(now) {
		t.Fatalf("Audits = %+v, %v", as, err)
	}

	ok, err := s.RequeueReport(ctx, st.ID, storekit.AuditRecord{Key: lost, Action: storekit.ActionReportAgain, Actor: "alice", At: now, Before: "failed", After: "failed"})
	if err != nil || ok {
		t.Fatalf("an unreported outcome was requeued: %v %v", ok, err)
	}
	if err := s.MarkReported(ctx, st.ID, now); err != nil {
		t.Fatal(err)
	}
	ok, err = s.RequeueReport(ctx, st.ID, storekit.AuditRecord{Key: lost, Action: storekit.ActionReportAgain, Actor: "alice", At: now, Before: "failed", After: "failed"})
	if err != nil || !ok {
		t.Fatalf("RequeueReport = %v %v", ok, err)
	}
	claimed, err := s.ClaimUnreported(ctx, "o", now, now.Add(time.Minute), 10)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range claimed {
		found = found || c.ID == st.ID
	}
	if !found {
		t.Fatalf("the requeued outcome is not claimed again: %+v", claimed)
	}

	fresh := storekit.MovementKey{Callback: storekit.CallbackPayout, ClientReference: "fresh1"}
	e, _ := s.Get(ctx, fresh)
	if ok, err := s.Release(ctx, fresh, e.Movement.StartedAt); err != nil || !ok {
		t.Fatal(ok, err)
	}
	if err := s.RecordAudit(ctx, storekit.AuditRecord{Key: fresh, Action: storekit.ActionRelease, Actor: "alice", Reason: "never sent", At: now, Before: "pending", After: "released"}); err != nil {
		t.Fatal(err)
	}
	if as, err := s.Audits(ctx, fresh); err != nil || len(as) != 1 {
		t.Fatalf("the audit of a released movement: %+v %v", as, err)
	}
}

// testAttemptLog holds a storekit.AttemptLog to its contract: each status check's
// attempt is kept by the write that counts it, numbered with the movement's Checks, and
// only while the owner holds the claim; the latest MaxAttempts of each kind are kept; a
// too long error is cut; a failed report's attempt is numbered with ReportAttempts and
// must name the outcome's movement; bad input changes nothing; and a key tracked again
// starts with none.
func testAttemptLog(t *testing.T, s storekit.Store) {
	ctx := context.Background()
	l := s.(storekit.AttemptLog)
	attempts := func(k storekit.MovementKey) []storekit.Attempt {
		t.Helper()
		as, err := l.Attempts(ctx, k)
		if err != nil {
			t.Fatalf("Attempts(%s): %v", k.ClientReference, err)
		}
		return as
	}
	for i, kind := range storekit.Kinds() {
		m := movement(kind, "att"+kind, time.Duration(i)*time.Second)
		track(t, s, m)
		k := key(t, kind, m.ClientReference)
		if as := attempts(k); len(as) != 0 {
			t.Fatalf("%s: a movement never checked has attempts %+v", kind, as)
		}
		claimDue(t, s, "a", wait+time.Minute, wait+2*time.Minute)
		if err := l.RescheduleAfter(ctx, k, "b", at(wait+90*time.Second), storekit.Attempt{At: at(wait + time.Minute), Answer: storekit.StatePending}); !errors.Is(err, storekit.ErrLeaseLost) {
			t.Fatalf("%s: another owner's RescheduleAfter: %v, want ErrLeaseLost", kind, err)
		}
		if err := l.RescheduleAfter(ctx, k, "a", at(wait+90*time.Second), storekit.Attempt{At: at(wait + time.Minute), Answer: strings.Repeat("x", storekit.MaxClaimedState+1)}); err == nil {
			t.Fatalf("%s: an answer longer than a state was kept", kind)
		}
		if err := l.RescheduleAfter(ctx, k, "a", at(wait+90*time.Second), storekit.Attempt{At: at(wait + time.Minute), Answer: storekit.StatePending}); err != nil {
			t.Fatalf("%s: RescheduleAfter: %v", kind, err)
		}
		e := get(t, s, k)
		as := attempts(k)
		if e.Movement.Checks != 1 || len(as) != 1 || as[0].N != 1 || as[0].What != storekit.AttemptStatusCheck ||
			as[0].Owner != "a" || as[0].Answer != storekit.StatePending || !as[0].At.Equal(at(wait+time.Minute)) || as[0].Key != k {
			t.Fatalf("%s: after one check: checks %d, attempts %+v", kind, e.Movement.Checks, as)
		}
		if !e.Movement.NextCheckAt.Equal(at(wait+90*time.Second)) || e.Movement.LeaseOwner != "" {
			t.Fatalf("%s: RescheduleAfter did not reschedule: %+v", kind, e.Movement)
		}
	}

	// The latest MaxAttempts are kept, numbered on; a long error is cut.
	m := movement(storekit.KindSend, "many1", time.Hour)
	track(t, s, m)
	k := m.Key()
	long := strings.Repeat("é", storekit.MaxAttemptError)
	n := storekit.MaxAttempts + 5
	for i := range n {
		now := time.Hour + wait + time.Duration(i)*time.Minute
		if ms := claimDue(t, s, "a", now, now+30*time.Second); !containsRef(ms, "many1") {
			t.Fatalf("check %d: many1 not claimed (%v)", i+1, refs(ms))
		}
		if err := l.RescheduleAfter(ctx, k, "a", at(now+time.Second), storekit.Attempt{At: at(now), Error: long}); err != nil {
			t.Fatal(err)
		}
	}
	as := attempts(k)
	if len(as) != storekit.MaxAttempts || as[0].N != n-storekit.MaxAttempts+1 || as[len(as)-1].N != n {
		t.Fatalf("after %d checks kept %d, numbered %d..%d; want the latest %d", n, len(as), as[0].N, as[len(as)-1].N, storekit.MaxAttempts)
	}
	if got := as[0].Error; len(got) > storekit.MaxAttemptError || !strings.HasSuffix(got, "…") || !strings.HasPrefix(long, strings.TrimSuffix(got, "…")) {
		t.Fatalf("a long error was kept as %d bytes: %q", len(got), got)
	}

	// A failed report: numbered with ReportAttempts, and only for the outcome's own
	// movement.
	st, _ := settle(t, s, k, outcome(storekit.StateSucceeded, storekit.SourceCallback, 3*time.Hour), nil)
	claimed, err := s.ClaimUnreported(ctx, "r", at(3*time.Hour), at(3*time.Hour+time.Minute), 100)
	if err != nil || !containsID(claimed, st.ID) {
		t.Fatalf("ClaimUnreported: %v %v", err, claimed)
	}
	other := key(t, storekit.KindReceive, "att"+storekit.KindReceive) // tracked above, as every kind
	if err := l.RetryReportAfter(ctx, st.ID, "r", at(3*time.Hour+time.Minute), storekit.Attempt{Key: other, At: at(3 * time.Hour), Error: "boom"}); !errors.Is(err, storekit.ErrLeaseLost) {
		t.Fatalf("a report's attempt kept under another movement: %v", err)
	}
	if err := l.RetryReportAfter(ctx, st.ID, "r", at(3*time.Hour+time.Minute), storekit.Attempt{Key: k, At: at(3 * time.Hour), Error: "OnOutcome: database down"}); err != nil {
		t.Fatal(err)
	}
	e := get(t, s, k)
	as = attempts(k)
	last := as[len(as)-1]
	if e.Final.ReportAttempts != 1 || last.What != storekit.AttemptReport || last.N != 1 || last.Error != "OnOutcome: database down" || last.Owner != "r" {
		t.Fatalf("after a failed report: attempts %d, last kept %+v", e.Final.ReportAttempts, last)
	}
	if len(as) != storekit.MaxAttempts+1 {
		t.Fatalf("a report's attempt dropped a status check's: %d kept", len(as))
	}

	// Released and tracked again: the key's earlier attempts are not its.
	r := movement(storekit.KindSend, "again1", 4*time.Hour)
	track(t, s, r)
	claimDue(t, s, "a", 4*time.Hour+wait, 4*time.Hour+wait+time.Minute)
	if err := l.RescheduleAfter(ctx, r.Key(), "a", at(4*time.Hour+wait+time.Second), storekit.Attempt{At: at(4*time.Hour + wait), Answer: storekit.StatePending}); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.Release(ctx, r.Key(), r.StartedAt); err != nil || !ok {
		t.Fatalf("Release: %v %v", ok, err)
	}
	r2 := movement(storekit.KindSend, "again1", 5*time.Hour)
	track(t, s, r2)
	if as := attempts(r2.Key()); len(as) != 0 {
		t.Fatalf("a key tracked again shows its earlier life's attempts: %+v", as)
	}
}

func containsRef(ms []storekit.Movement, ref string) bool {
	for _, m := range ms {
		if m.ClientReference == ref {
			return true
		}
	}
	return false
}

func containsID(ss []storekit.Settlement, id string) bool {
	for _, s := range ss {
		if s.ID == id {
			return true
		}
	}
	return false
}
