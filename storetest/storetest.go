// Package storetest checks a storekit.Store against the rules a Tracker relies on: the
// outbox (Track is idempotent), the precedence of final outcomes, callback dedupe with
// leases, claims of overdue movements and of unreported outcomes, reconciliation,
// retention, and all of it under concurrent use. Run it from a store's tests:
//
//	func TestStore(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) storekit.Store { return newEmptyStore(t) })
//	}
package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/storekit"
)

// Run runs the conformance suite as subtests of t. newStore returns an empty store for
// one subtest; stores of different subtests must not share data.
func Run(t *testing.T, newStore func(t *testing.T) storekit.Store) {
	tests := []struct {
		name string
		fn   func(*testing.T, storekit.Store)
	}{
		{"TrackIsIdempotent", testTrackIdempotent},
		{"BadInputChangesNothing", testBadInput},
		{"FirstFinalOutcomeStands", testFirstFinalStands},
		{"SuccessReplacesFailure", testSuccessReplacesFailure},
		{"CallbackBeforeTrack", testCallbackBeforeTrack},
		{"KeepsTheCallbackThatSettled", testKeepsCallback},
		{"ClaimsDueMovementsWithLeases", testClaimDue},
		{"SettlingEndsTheClaim", testSettleEndsClaim},
		{"ReportsAtLeastOnce", testReports},
		{"CallbackDedupe", testCallbackDedupe},
		{"CallbackBodiesForAudit", testCallbackBodies},
		{"Reconcile", testReconcile},
		{"ReconcileIsBounded", testReconcileIsBounded},
		{"PendingCountsUnsettledMovements", testPending},
		{"Purge", testPurge},
		{"ForgottenStaysForgotten", testForgotten},
		{"PurgeRacingAReuse", testPurgeRacingReuse},
		{"PurgeWhateverTheOrderOfReports", testPurgeReportOrder},
		{"TrackAgainAfterALostAnswer", testTrackAgain},
		{"KeepsWhatWasAskedAndConfirmed", testKeepsAskedAndConfirmed},
		{"ReleaseForgetsAMovementNeverSent", testRelease},
		{"ContradictedCallbacksAreListed", testContradictions},
		{"RecordReference", testRecordReference},
		{"RanksFinalStates", testRanks},
		{"TrackRefusesAnotherKindsOutcome", testTrackRefusesAnotherKindsOutcome},
		{"TrackEntryAndTrackNew", testEntryTracker},
		{"BeginCallbackEntryReadsTheMovement", testBeginCallbackEntry},
		{"ConcurrentTrack", testConcurrentTrack},
		{"ConcurrentClaimsHoldOneOwner", testConcurrentClaims},
		{"ConcurrentSettleFirstWins", testConcurrentSettle},
		{"ConcurrentCallbackDedupe", testConcurrentCallback},
		{"ConcurrentReportClaims", testConcurrentReports},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, newStore(t)) })
	}
	for _, tc := range optional {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			if !tc.has(s) {
				t.Logf("the store is no %s: nothing to check", tc.name)
				return
			}
			tc.fn(t, s)
		})
	}
}

// t0 is the suite's clock start; times are whole milliseconds, which every database
// keeps exactly.
var t0 = time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)

func at(d time.Duration) time.Time { return t0.Add(d) }

const wait = 5 * time.Minute

func movement(kind string, ref string, started time.Duration) storekit.Movement {
	return storekit.Movement{Kind: kind, ClientReference: ref, StartedAt: at(started), Deadline: at(started + wait)}
}

func key(t *testing.T, kind string, ref string) storekit.MovementKey {
	t.Helper()
	k := storekit.Movement{Kind: kind, ClientReference: ref}.Key()
	if k == (storekit.MovementKey{}) {
		t.Fatalf("no movement has the kind %q", kind)
	}
	return k
}

func outcome(state string, src string, when time.Duration) storekit.Outcome {
	return storekit.Outcome{State: state, Source: src, Code: "0000", TransactionID: "tx-" + state, Amount: 5000, Charges: 50, At: at(when)}
}

func track(t *testing.T, s storekit.Store, m storekit.Movement) {
	t.Helper()
	if _, _, err := s.Track(context.Background(), m); err != nil {
		t.Fatalf("Track(%s %s): %v", m.Kind, m.ClientReference, err)
	}
}

func settle(t *testing.T, s storekit.Store, k storekit.MovementKey, o storekit.Outcome, body []byte) (storekit.Settlement, bool) {
	t.Helper()
	st, changed, err := s.Settle(context.Background(), k, o, body)
	if err != nil {
		t.Fatalf("Settle(%s): %v", k.ClientReference, err)
	}
	return st, changed
}

func get(t *testing.T, s storekit.Store, k storekit.MovementKey) storekit.Entry {
	t.Helper()
	e, err := s.Get(context.Background(), k)
	if err != nil {
		t.Fatalf("Get(%s): %v", k.ClientReference, err)
	}
	return e
}

func claimDue(t *testing.T, s storekit.Store, owner string, now, until time.Duration) []storekit.Movement {
	t.Helper()
	ms, err := s.ClaimDue(context.Background(), owner, at(now), at(until), 100)
	if err != nil {
		t.Fatalf("ClaimDue(%s): %v", owner, err)
	}
	return ms
}

func refs(ms []storekit.Movement) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.ClientReference
	}
	return out
}

func wantRefs(t *testing.T, what string, got []storekit.Movement, want ...string) {
	t.Helper()
	g := refs(got)
	if fmt.Sprint(sorted(g)) != fmt.Sprint(sorted(want)) {
		t.Fatalf("%s = %v, want %v", what, g, want)
	}
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

func wantLeaseLost(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, storekit.ErrLeaseLost) {
		t.Fatalf("%s: err = %v, want ErrLeaseLost", what, err)
	}
}

func wantValidation(t *testing.T, what string, err error) {
	t.Helper()
	var ve *storekit.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("%s: err = %v, want *storekit.ValidationError", what, err)
	}
}

func testTrackIdempotent(t *testing.T, s storekit.Store) {
	ctx := context.Background()
	m := movement(storekit.KindSend, "pay1", 0)
	got, created, err := s.Track(ctx, m)
	if err != nil || !created {
		t.Fatalf("first Track: created=%v err=%v", created, err)
	}
	if !got.StartedAt.Equal(m.StartedAt) || !got.Deadline.Equal(m.Deadline) || !got.NextCheckAt.Equal(m.Deadline) || got.Checks != 0 {
		t.Fatalf("first Track stored %+v", got)
	}
	again := movement(storekit.KindSend, "pay1", time.Minute)
	got, created, err = s.Track(ctx, again)
	if err != nil || created {
		t.Fatalf("second Track: created=%v err=%v", created, err)
	}
	if !got.StartedAt.Equal(m.StartedAt) || !got.Deadline.Equal(m.Deadline) {
		t.Fatalf("second Track changed the movement: %+v", got)
	}
	e := get(t, s, m.Key())
	if !e.Tracked || e.Final != nil || e.Movement.Kind != storekit.KindSend || e.Movement.ClientReference != "pay1" || !e.Movement.StartedAt.Equal(m.StartedAt) {
		t.Fatalf("Get = %+v", e)
	}
	// A bank transfer with the same reference shares the payout callbacks, so it is the
	// same movement to the store.
	got, created, err = s.Track(ctx, movement(storekit.KindBankTransfer, "pay1", 0))
	if err != nil || created || got.Kind != storekit.KindSend {
		t.Fatalf("Track of the same key with another kind: %+v created=%v err=%v", got, created, err)
	}
	if e := get(t, s, key(t, storekit.KindReceive, "unknown")); e.Tracked || e.Final != nil {
		t.Fatalf("Get of an unknown key = %+v, want zero", e)
	}
}

func testBadInput(t *testing.T, s storekit.Store) {
	ctx := context.Background()
	bad := []storekit.Movement{
		{Kind: "wire", ClientReference: "bad1", StartedAt: at(0), Deadline: at(wait)},
		{Kind: storekit.KindSend, ClientReference: "", StartedAt: at(0), Deadline: at(wait)},
		{Kind: storekit.KindSend, ClientReference: "bad3", Deadline: at(wait)},
		{Kind: storekit.KindSend, ClientReference: "bad4", StartedAt: at(wait), Deadline: at(0)},
	}
	for _, m := range bad {
		_, _, err := s.Track(ctx, m)
		wantValidation(t, fmt.Sprintf("Track(%+v)", m), err)
	}
	k := key(t, storekit.KindSend, "bad4")
	if e := get(t, s, k); e.Tracked {
		t.Fatalf("a refused Track was recorded: %+v", e)
	}
	for _, o := range []storekit.Outcome{
		outcome(storekit.StatePending, storekit.SourceStatusCheck, 0),
		outcome(storekit.StateSucceeded, "", 0),
		{State: storekit.StateSucceeded, Source: storekit.SourceCallback},
		func() storekit.Outcome {
			o := outcome(storekit.StateSucceeded, storekit.SourceCallback, 0)
			o.ClientReference = "another"
			return o
		}(),
	} {
		_, _, err := s.Settle(ctx, k, o, nil)
		wantValidation(t, fmt.Sprintf("Settle(%+v)", o), err)
	}
	_, _, err := s.Settle(ctx, storekit.MovementKey{Callback: "subscription.trial", ClientReference: "x"}, outcome(storekit.StateSucceeded, storekit.SourceCallback, 0), nil)
	wantValidation(t, "Settle of a key that is no movement's", err)
	_, _, err = s.Settle(ctx, k, outcome(storekit.StateSucceeded, storekit.SourceCallback, 0), make([]byte, storekit.MaxBodyBytes+1))
	wantValidation(t, "Settle with a body too large", err)
	if e := get(t, s, k); e.Final != nil {
		t.Fatalf("a refused Settle was recorded: %+v", e)
	}
	_, err = s.ClaimDue(ctx, "", at(0), at(time.Minute), 1)
	wantValidation(t, "ClaimDue without an owner", err)
	_, err = s.ClaimDue(ctx, "a", at(time.Minute), at(time.Minute), 1)
	wantValidation(t, "ClaimDue with a lease ending now", err)
	_, err = s.ClaimDue(ctx, "a", at(0), at(time.Minute), 0)
	wantValidation(t, "ClaimDue of nothing", err)
	_, err = s.ClaimUnreported(ctx, "", at(0), at(time.Minute), 1)
	wantValidation(t, "ClaimUnreported without an owner", err)
	cb := storekit.Callback{Key: k, DedupeKey: "d", At: at(0)}
	_, err = s.BeginCallback(ctx, storekit.Callback{Key: k, At: at(0)}, "a", at(time.Minute))
	wantValidation(t, "BeginCallback without a dedupe key", err)
	_, err = s.BeginCallback(ctx, cb, "", at(time.Minute))
	wantValidation(t, "BeginCallback without an owner", err)
	_, err = s.BeginCallback(ctx, cb, "a", at(0))
	wantValidation(t, "BeginCallback with a lease ending now", err)
	big := cb
	big.Body = make([]byte, storekit.MaxBodyBytes+1)
	_, err = s.BeginCallback(ctx, big, "a", at(time.Minute))
	wantValidation(t, "BeginCallback with a body too large", err)
	if claim, err := s.BeginCallback(ctx, cb, "a", at(time.Minute)); err != nil || claim != storekit.CallbackClaimed {
		t.Fatalf("refused BeginCallbacks left a trace: %v %v", claim, err)
	}
	_, err = s.Reconcile(ctx, at(time.Hour), at(0), at(time.Hour))
	wantValidation(t, "Reconcile of an empty window", err)
}

func testFirstFinalStands(t *testing.T, s storekit.Store) {
	m := movement(storekit.KindReceive, "order1", 0)
	track(t, s, m)
	k := m.Key()
	first, changed := settle(t, s, k, outcome(storekit.StateSucceeded, storekit.SourceCallback, time.Minute), nil)
	if !changed || first.ID == "" || first.Outcome.Kind != storekit.KindReceive || first.Outcome.ClientReference != "order1" || !first.ByCallback || first.Disagreed {
		t.Fatalf("first Settle = %+v changed=%v", first, changed)
	}
	// The same success from the status check: agreed, changes no outcome.
	st, changed := settle(t, s, k, outcome(storekit.StateSucceeded, storekit.SourceStatusCheck, 2*time.Minute), nil)
	if changed || st.ID != first.ID || st.Disagreed || !st.ByStatusCheck || !st.ByCallback {
		t.Fatalf("agreeing Settle = %+v changed=%v", st, changed)
	}
	// A failure after the success: never a downgrade, and the disagreement is kept.
	st, changed = settle(t, s, k, outcome(storekit.StateFailed, storekit.SourceStatusCheck, 3*time.Minute), nil)
	if changed || st.ID != first.ID || !(st.Outcome.State == storekit.StateSucceeded) || !st.Disagreed {
		t.Fatalf("failure after success: %+v changed=%v", st, changed)
	}
	e := get(t, s, k)
	if e.Final == nil || e.Final.ID != first.ID || !(e.Final.Outcome.State == storekit.StateSucceeded) || !e.Final.Disagreed ||
		e.Final.Outcome.Source != storekit.SourceCallback || !e.Final.Outcome.At.Equal(at(time.Minute)) ||
		e.Final.Outcome.Amount != 5000 || e.Final.Outcome.Charges != 50 || e.Final.Outcome.Code != "0000" || e.Final.Outcome.TransactionID != "tx-succeeded" {
		t.Fatalf("Get after settling = %+v", e.Final)
	}
	// Two failures from callbacks: the first stands, no disagreement between sources.
	m2 := movement(storekit.KindSend, "pay2", 0)
	track(t, s, m2)
	f1, _ := settle(t, s, m2.Key(), outcome(storekit.StateFailed, storekit.SourceCallback, time.Minute), nil)
	o := outcome(storekit.StateFailed, storekit.SourceCallback, 2*time.Minute)
	o.Code = "4075"
	f2, changed := settle(t, s, m2.Key(), o, nil)
	if changed || f2.ID != f1.ID || f2.Outcome.Code != "0000" || f2.Disagreed {
		t.Fatalf("second failure: %+v changed=%v", f2, changed)
	}
}

func testSuccessReplacesFailure(t *testing.T, s storekit.Store) {
	ctx := context.Background()
	m := movement(storekit.KindSend, "pay1", 0)
	track(t, s, m)
	k := m.Key()
	failed, _ := settle(t, s, k, outcome(storekit.StateFailed, storekit.SourceStatusCheck, wait), nil)
	claimed, err := s.ClaimUnreported(ctx, "a", at(wait), at(wait+time.Minute), 10)
	if err != nil || len(claimed) != 1 || claimed[0].ID != failed.ID {
		t.Fatalf("ClaimUnreported = %+v, %v", claimed, err)
	}
	if err := s.MarkReported(ctx, failed.ID, at(wait+time.Second)); err != nil {
		t.Fatal(err)
	}
	won, changed := settle(t, s, k, outcome(storekit.StateSucceeded, storekit.SourceCallback, wait+time.Minute), []byte(`{"late":"success"}`))
	if !changed || won.ID == failed.ID || !(won.Outcome.State == storekit.StateSucceeded) || !won.Disagreed || !won.ReportedAt.IsZero() {
		t.Fatalf("success after failure: %+v changed=%v", won, changed)
	}
	// The success is a new outcome to report, under its own id; the failure's id is
	// done with.
	claimed, err = s.ClaimUnreported(ctx, "b", at(wait+time.Minute), at(wait+2*time.Minute), 10)
	if err != nil || len(claimed) != 1 || claimed[0].ID != won.ID || !(claimed[0].Outcome.State == storekit.StateSucceeded) {
		t.Fatalf("ClaimUnreported after the upgrade = %+v, %v", claimed, err)
	}
	if err := s.MarkReported(ctx, failed.ID, at(wait+2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if e := get(t, s, k); !e.Final.ReportedAt.IsZero() {
		t.Fatalf("marking the replaced failure reported marked the success: %+v", e.Final)
	}
}

func testCallbackBeforeTrack(t *testing.T, s storekit.Store) {
	ctx := context.Background()
	k := key(t, storekit.KindReceive, "early1")
	st, changed := settle(t, s, k, outcome(storekit.StateSucceeded, storekit.SourceCallback, 0), nil)
	if !changed || st.Outcome.Kind != "" {
		t.Fatalf("Settle before Track = %+v changed=%v", st, changed)
	}
	e := get(t, s, k)
	if e.Tracked || e.Final == nil || !(e.Final.Outcome.State == storekit.StateSucceeded) {
		t.Fatalf("Get before Track = %+v", e)
	}
	// Untracked, it is no one's to report.
	if got, err := s.ClaimUnreported(ctx, "a", at(time.Minute), at(2*time.Minute), 10); err != nil || len(got) != 0 {
		t.Fatalf("ClaimUnreported before Track = %+v, %v", got, err)
	}
	m := movement(storekit.KindDirectDebit, "early1", time.Second)
	_, created, err := s.Track(ctx, m)
	if err != nil || !created {
		t.Fatalf("Track after the callback: created=%v err=%v", created, err)
	}
	e = get(t, s, k)
	if !e.Tracked || e.Final == nil || e.Final.Outcome.Kind != storekit.KindDirectDebit || e.Final.ID != st.ID {
		t.Fatalf("Get after Track = %+v", e)
	}
	if got := claimDue(t, s, "a", wait+time.Hour, wait+2*time.Hour); len(got) != 0 {
		t.Fatalf("a settled movement was claimed for a status check: %v", refs(got))
	}
	got, err := s.ClaimUnreported(ctx, "a", at(time.Minute), at(2*time.Minute), 10)
	if err != nil || len(got) != 1 || got[0].ID != st.ID || got[0].Outcome.Kind != storekit.KindDirectDebit {
		t.Fatalf("ClaimUnreported after Track = %+v, %v", got, err)
	}
}

// transactionCallback is a callback of the spec, as the service sends it.
const transactionCallback = `{"ResponseCode":"0000","Message":"success","Data":{"Amount":50.00,"Charges":0.50,` +
	`"AmountAfterCharges":49.50,"Description":"Order 1042","ClientReference":"order1042",` +
	`"TransactionId":"7fd01221faeb41469e4b0d1d1c6e5c3e","ExternalTransactionId":"51234567890"}}`

func testKeepsCallback(t *testing.T, s storekit.Store) {
	ev, err := billing.ParseEvent([]byte(transactionCallback))
	if err != nil {
		t.Fatal(err)
	}
	k := storekit.MovementKey{Callback: string(ev.Kind()), ClientReference: ev.Reference()}
	track(t, s, movement(storekit.KindReceive, "order1042", 0))
	o := outcome(storekit.StateSucceeded, storekit.SourceCallback, time.Minute)
	body := []byte(transactionCallback)
	settle(t, s, k, o, body)
	body[0] = 'X' // the store keeps its own copy
	e := get(t, s, k)
	if e.Final == nil || string(e.Final.Body) != transactionCallback {
		t.Fatalf("kept body = %q", e.Final.Body)
	}
	if got := e.Final.Outcome; got.ClientReference != "order1042" || got.TransactionID != "tx-succeeded" || got.Amount != 5000 {
		t.Fatalf("kept outcome = %+v", got)
	}
	// An outcome from a status check has no callback body.
	m := movement(storekit.KindReceive, "order2", 0)
	track(t, s, m)
	st, _ := settle(t, s, m.Key(), outcome(storekit.StateFailed, storekit.SourceStatusCheck, time.Minute), []byte(transactionCallback))
	if st.Body != nil {
		t.Fatalf("a status check's settlement kept a callback: %+v", st)
	}
}

func testClaimDue(t *testing.T, s storekit.Store) {
	ctx := context.Background()
	a := movement(storekit.KindSend, "a1", 0)
	b := movement(storekit.KindReceive, "b1", time.Minute)
	track(t, s, a)
	track(t, s, b)
	if got := claimDue(t, s, "x", wait-time.Second, wait+time.Minute); len(got) != 0 {
		t.Fatalf("claimed before the callback deadline: %v", refs(got))
	}
	got := claimDue(t, s, "x", wait, wait+2*time.Minute)
	wantRefs(t, "claim at a's deadline", got, "a1")
	if got[0].LeaseOwner != "x" || !got[0].LeaseUntil.Equal(at(wait+2*time.Minute)) || got[0].Kind != storekit.KindSend {
		t.Fatalf("claimed movement = %+v", got[0])
	}
	// Held by x's live lease: y gets only b.
	got = claimDue(t, s, "y", wait+time.Minute, wait+time.Hour)
	wantRefs(t, "y's claim while x holds a", got, "b1")
	if err := s.RenewClaim(ctx, a.Key(), "x", at(wait+3*time.Minute)); err != nil {
		t.Fatalf("RenewClaim: %v", err)
	}
	if got := claimDue(t, s, "z", wait+2*time.Minute, wait+5*time.Minute); len(got) != 0 {
		t.Fatalf("claimed under a renewed lease: %v", refs(got))
	}
	// x dies: its lease ends and y takes a over; x can no longer act on it.
	got = claimDue(t, s, "y", wait+3*time.Minute, wait+4*time.Minute)
	wantRefs(t, "y's claim after x's lease ended", got, "a1")
	wantLeaseLost(t, "RenewClaim by the dead owner", s.RenewClaim(ctx, a.Key(), "x", at(wait+4*time.Minute)))
	wantLeaseLost(t, "Reschedule by the dead owner", s.Reschedule(ctx, a.Key(), "x", at(wait+4*time.Minute)))
	wantLeaseLost(t, "ReleaseClaim by the dead owner", s.ReleaseClaim(ctx, a.Key(), "x"))
	// y's check says pending: back off until the next check.
	next := at(wait + 10*time.Minute)
	if err := s.Reschedule(ctx, a.Key(), "y", next); err != nil {
		t.Fatalf("Reschedule: %v", err)
	}
	e := get(t, s, a.Key())
	if e.Movement.Checks != 1 || !e.Movement.NextCheckAt.Equal(next) || e.Movement.LeaseOwner != "" {
		t.Fatalf("after Reschedule: %+v", e.Movement)
	}
	wantLeaseLost(t, "Reschedule of a released claim", s.Reschedule(ctx, a.Key(), "y", next))
	if got := claimDue(t, s, "z", wait+10*time.Minute-time.Second, wait+20*time.Minute); len(got) != 0 {
		t.Fatalf("claimed before the rescheduled check: %v", refs(got))
	}
	got = claimDue(t, s, "z", wait+10*time.Minute, wait+20*time.Minute)
	wantRefs(t, "claim at the rescheduled check", got, "a1")
	if got[0].Checks != 1 {
		t.Fatalf("claimed movement lost its check count: %+v", got[0])
	}
	// A released claim is free at once.
	if err := s.ReleaseClaim(ctx, a.Key(), "z"); err != nil {
		t.Fatalf("ReleaseClaim: %v", err)
	}
	got = claimDue(t, s, "w", wait+10*time.Minute, wait+11*time.Minute)
	wantRefs(t, "claim after release", got, "a1")
	// The limit bounds a claim.
	for i := range 5 {
		track(t, s, movement(storekit.KindSend, fmt.Sprintf("lim%d", i), 0))
	}
	got, err := s.ClaimDue(ctx, "v", at(time.Hour), at(2*time.Hour), 2)
	if err != nil || len(got) != 2 {
		t.Fatalf("ClaimDue with limit 2 = %v, %v", refs(got), err)
	}
}

func testSettleEndsClaim(t *testing.T, s storekit.Store) {
	ctx := context.Background()
	m := movement(storekit.KindBankTransfer, "bank1", 0)
	track(t, s, m)
	wantRefs(t, "claim", claimDue(t, s, "x", wait, wait+time.Minute), "bank1")
	settle(t, s, m.Key(), outcome(storekit.StateSucceeded, storekit.SourceCallback, wait+time.Second), nil)
	wantLeaseLost(t, "RenewClaim after Settle", s.RenewClaim(ctx, m.Key(), "x", at(wait+2*time.Minute)))
	wantLeaseLost(t, "Reschedule after Settle", s.Reschedule(ctx, m.Key(), "x", at(wait+2*time.Minute)))
	if got := claimDue(t, s, "y", wait+time.Hour, wait+2*time.Hour); len(got) != 0 {
		t.Fatalf("a settled movement was claimed: %v", refs(got))
	}
	if e := get(t, s, m.Key()); e.Movement.LeaseOwner != "" {
		t.Fatalf("settled movement still leased: %+v", e.Movement)
	}
}

func testReports(t *testing.T, s storekit.Store) {
	ctx := context.Background()
	m := movement(storekit.KindMandate, "mandate1", 0)
	track(t, s, m)
	st, _ := settle(t, s, m.Key(), outcome(storekit.StateSucceeded, storekit.SourceCallback, time.Minute), nil)
	claim := func(owner string, now, until time.Duration) []storekit.Settlement {
		t.Helper()
		got, err := s.ClaimUnreported(ctx, owner, at(now), at(until), 10)
		if err != nil {
			t.Fatalf("ClaimUnreported(%s): %v", owner, err)
		}
		return got
	}
	got := claim("x", time.Minute, 2*time.Minute)
	if len(got) != 1 || got[0].ID != st.ID || got[0].Outcome.Kind != storekit.KindMandate || !(got[0].Outcome.State == storekit.StateSucceeded) {
		t.Fatalf("first claim = %+v", got)
	}
	if got := claim("y", 2*time.Minute-time.Second, 3*time.Minute); len(got) != 0 {
		t.Fatalf("claimed under x's live lease: %+v", got)
	}
	// x crashed in OnOutcome: once its lease ends, y reports it again.
	got = claim("y", 2*time.Minute, 3*time.Minute)
	if len(got) != 1 || got[0].ID != st.ID {
		t.Fatalf("claim after x's lease ended = %+v", got)
	}
	wantLeaseLost(t, "RetryReport by the dead owner", s.RetryReport(ctx, st.ID, "x", at(4*time.Minute)))
	// y's OnOutcome failed: retried from the given time, attempts counted.
	if err := s.RetryReport(ctx, st.ID, "y", at(5*time.Minute)); err != nil {
		t.Fatalf("RetryReport: %v", err)
	}
	if got := claim("z", 5*time.Minute-time.Second, 6*time.Minute); len(got) != 0 {
		t.Fatalf("claimed before the retry time: %+v", got)
	}
	got = claim("z", 5*time.Minute, 6*time.Minute)
	if len(got) != 1 || got[0].ReportAttempts != 1 {
		t.Fatalf("claim at the retry time = %+v", got)
	}
	if err := s.MarkReported(ctx, st.ID, at(5*time.Minute+time.Second)); err != nil {
		t.Fatalf("MarkReported: %v", err)
	}
	if got := claim("z", time.Hour, 2*time.Hour); len(got) != 0 {
		t.Fatalf("claimed after it was reported: %+v", got)
	}
	if e := get(t, s, m.Key()); !e.Final.ReportedAt.Equal(at(5*time.Minute + time.Second)) {
		t.Fatalf("ReportedAt = %v", e.Final.ReportedAt)
	}
	// Reporting twice (two owners racing past a lease) is harmless.
	if err := s.MarkReported(ctx, st.ID, at(time.Hour)); err != nil {
		t.Fatalf("second MarkReported: %v", err)
	}
	if err := s.MarkReported(ctx, "no-such-id", at(time.Hour)); err != nil {
		t.Fatalf("MarkReported of an unknown id: %v", err)
	}
}

func testCallbackDedupe(t *testing.T, s storekit.Store) {
	ctx := context.Background()
	k := key(t, storekit.KindReceive, "cb1")
	c := storekit.Callback{Key: k, DedupeKey: "transaction/cb1/succeeded/0000", Body: []byte(`{"one":1}`), At: at(0)}
	begin := func(owner string, now, until time.Duration) storekit.CallbackClaim {
		t.Helper()
		c.At = at(now)
		claim, err := s.BeginCallback(ctx, c, owner, at(until))
		if err != nil {
			t.Fatalf("BeginCallback(%s): %v", owner, err)
		}
		return claim
	}
	if got := begin("a", 0, time.Minute); got != storekit.CallbackClaimed {
		t.Fatalf("first delivery: %v", got)
	}
	if got := begin("b", time.Second, time.Minute); got != storekit.CallbackInFlight {
		t.Fatalf("delivery while the first is handled: %v", got)
	}
	// Merchant code failed: the key is forgotten and the next delivery handled.
	if err := s.FinishCallback(ctx, c.DedupeKey, "a", false, at(2*time.Second)); err != nil {
		t.Fatalf("FinishCallback(failed): %v", err)
	}
	if got := begin("b", 3*time.Second, time.Minute); got != storekit.CallbackClaimed {
		t.Fatalf("delivery after a failure: %v", got)
	}
	// b dies mid-handling: its lease ends and c's delivery takes over.
	if got := begin("c", time.Minute, 2*time.Minute); got != storekit.CallbackClaimed {
		t.Fatalf("delivery after the handler's lease ended: %v", got)
	}
	wantLeaseLost(t, "FinishCallback by the dead owner", s.FinishCallback(ctx, c.DedupeKey, "b", true, at(time.Minute+time.Second)))
	if err := s.FinishCallback(ctx, c.DedupeKey, "c", true, at(time.Minute+time.Second)); err != nil {
		t.Fatalf("FinishCallback(handled): %v", err)
	}
	if got := begin("d", time.Hour, 2*time.Hour); got != storekit.CallbackHandled {
		t.Fatalf("delivery after it was handled: %v", got)
	}
	wantLeaseLost(t, "FinishCallback of a handled callback", s.FinishCallback(ctx, c.DedupeKey, "d", false, at(time.Hour)))
	if got := begin("d", 2*time.Hour, 3*time.Hour); got != storekit.CallbackHandled {
		t.Fatalf("a late FinishCallback forgot a handled callback: %v", got)
	}
	wantLeaseLost(t, "FinishCallback of an unknown key", s.FinishCallback(ctx, "nothing", "a", true, at(0)))
}

func testCallbackBodies(t *testing.T, s storekit.Store) {
	ctx := context.Background()
	k := key(t, storekit.KindSend, "pay9")
	deliver := func(body string, now time.Duration, dedupe string) {
		t.Helper()
		c := storekit.Callback{Key: k, DedupeKey: dedupe, Body: []byte(body), At: at(now)}
		if _, err := s.BeginCallback(ctx, c, "a", at(now+time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	deliver(`{"state":"pending"}`, 0, "p")
	deliver(`{"state":"success"}`, time.Second, "s")
	deliver(`{"state":"success"}`, 2*time.Second, "s")
	deliver(`{"state":"success"}`, 3*time.Second, "s")
	other := key(t, storekit.KindReceive, "pay9") // the same reference under another callback kind
	if _, err := s.BeginCallback(ctx, storekit.Callback{Key: other, DedupeKey: "o", Body: []byte(`{}`), At: at(0)}, "a", at(time.Minute)); err != nil {
		t.Fatal(err)
	}
	got, err := s.Callbacks(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("Callbacks = %d, want the 2 distinct bodies: %+v", len(got), got)
	}
	p, sc := got[0], got[1]
	if string(p.Body) != `{"state":"pending"}` || p.Deliveries != 1 || !p.At.Equal(at(0)) || p.DedupeKey != "p" || p.Key != k {
		t.Fatalf("first callback = %+v", p)
	}
	if string(sc.Body) != `{"state":"success"}` || sc.Deliveries != 3 || !sc.At.Equal(at(time.Second)) || !sc.LastAt.Equal(at(3*time.Second)) {
		t.Fatalf("redelivered callback = %+v", sc)
	}
	if got, err := s.Callbacks(ctx, key(t, storekit.KindSend, "none")); err != nil || len(got) != 0 {
		t.Fatalf("Callbacks of an unknown key = %+v, %v", got, err)
	}
}

func testReconcile(t *testing.T, s storekit.Store) {
	ctx := context.Background()
	overdue := movement(storekit.KindSend, "overdue", 0)
	fresh := movement(storekit.KindSend, "fresh", 10*time.Minute) // deadline not passed at 12m
	disagreed := movement(storekit.KindReceive, "disagreed", time.Minute)
	statusOnly := movement(storekit.KindReceive, "statusonly", 2*time.Minute)
	byCallback := movement(storekit.KindReceive, "bycallback", 3*time.Minute)
	confirmed := movement(storekit.KindReceive, "confirmed", 4*time.Minute)
	outside := movement(storekit.KindSend, "outside", time.Hour)
	for _, m := range []storekit.Movement{overdue, fresh, disagreed, statusOnly, byCallback, confirmed, outside} {
		track(t, s, m)
	}
	settle(t, s, disagreed.Key(), outcome(storekit.StateSucceeded, storekit.SourceCallback, 2*time.Minute), nil)
	settle(t, s, disagreed.Key(), outcome(storekit.StateFailed, storekit.SourceStatusCheck, 7*time.Minute), nil)
	settle(t, s, statusOnly.Key(), outcome(storekit.StateFailed, storekit.SourceStatusCheck, 8*time.Minute), nil)
	settle(t, s, byCallback.Key(), outcome(storekit.StateSucceeded, storekit.SourceCallback, 4*time.Minute), nil)
	settle(t, s, confirmed.Key(), outcome(storekit.StateSucceeded, storekit.SourceStatusCheck, 9*time.Minute), nil)
	settle(t, s, confirmed.Key(), outcome(storekit.StateSucceeded, storekit.SourceCallback, 10*time.Minute), nil)
	r, err := s.Reconcile(ctx, at(0), at(time.Hour), at(12*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	wantRefs(t, "Overdue", r.Overdue, "overdue")
	if r.Truncated {
		t.Fatalf("a report of a few movements says Truncated")
	}
	if len(r.Disagreed) != 1 || r.Disagreed[0].Key.ClientReference != "disagreed" || !(r.Disagreed[0].Outcome.State == storekit.StateSucceeded) {
		t.Fatalf("Disagreed = %+v", r.Disagreed)
	}
	if len(r.StatusCheckOnly) != 1 || r.StatusCheckOnly[0].Key.ClientReference != "statusonly" || r.StatusCheckOnly[0].Outcome.Kind != storekit.KindReceive {
		t.Fatalf("StatusCheckOnly = %+v", r.StatusCheckOnly)
	}
	// The window bounds the report: the hour-old movement, now overdue, only in its own.
	r, err = s.Reconcile(ctx, at(time.Hour), at(2*time.Hour), at(2*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	wantRefs(t, "Overdue in the second hour", r.Overdue, "outside")
	if len(r.Disagreed)+len(r.StatusCheckOnly) != 0 {
		t.Fatalf("second hour reports settlements of the first: %+v", r)
	}
}

// testReconcileIsBounded: a window of more overdue movements than MaxClaim reports the
// MaxClaim that started first, and says it left the others out.
func testReconcileIsBounded(t *testing.T, s storekit.Store) {
	ctx := context.Background()
	n := storekit.MaxClaim + 2
	for i := range n {
		track(t, s, movement(storekit.KindSend, fmt.Sprintf("many%05d", i), time.Duration(n-i)*time.Second))
	}
	r, err := s.Reconcile(ctx, at(0), at(time.Hour), at(2*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Overdue) != storekit.MaxClaim || !r.Truncated {
		t.Fatalf("Reconcile of %d overdue movements: %d reported, Truncated %v; want %d and true", n, len(r.Overdue), r.Truncated, storekit.MaxClaim)
	}
	// The latest tracked started first.
	if first, last := r.Overdue[0].ClientReference, r.Overdue[len(r.Overdue)-1].ClientReference; first != fmt.Sprintf("many%05d", n-1) || last != fmt.Sprintf("many%05d", 2) {
		t.Fatalf("Reconcile reported %s to %s, want the earliest started first", first, last)
	}
}

func testPending(t *testing.T, s storekit.Store) {
	ctx := context.Background()
	wantPending := func(count int, oldest time.Time) {
		t.Helper()
		n, o, err := s.Pending(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n != count || !o.Equal(oldest) {
			t.Fatalf("Pending = %d, oldest %v; want %d, oldest %v", n, o, count, oldest)
		}
	}
	wantPending(0, time.Time{})
	first := movement(storekit.KindSend, "first", time.Minute)
	second := movement(storekit.KindReceive, "second", 3*time.Minute)
	track(t, s, first)
	track(t, s, second)
	// A callback for a movement nobody tracked is no pending movement.
	settle(t, s, key(t, storekit.KindReceive, "untracked"), outcome(storekit.StateSucceeded, storekit.SourceCallback, 2*time.Minute), nil)
	wantPending(2, first.StartedAt)
	settle(t, s, first.Key(), outcome(storekit.StateFailed, storekit.SourceCallback, 4*time.Minute), nil)
	wantPending(1, second.StartedAt)
	settle(t, s, second.Key(), outcome(storekit.StateSucceeded, storekit.SourceStatusCheck, 9*time.Minute), nil)
	wantPending(0, time.Time{})
}

func testPurge(t *testing.T, s storekit.Store) {
	ctx := context.Background()
	reported := movement(storekit.KindSend, "reported", 0)
	unreported := movement(storekit.KindSend, "unreported", 0)
	pending := movement(storekit.KindSend, "pending", 0)
	late := movement(storekit.KindSend, "late", 0)
	for _, m := range []storekit.Movement{reported, unreported, pending, late} {
		track(t, s, m)
	}
	st, _ := settle(t, s, reported.Key(), outcome(storekit.StateSucceeded, storekit.SourceCallback, time.Minute), []byte(`{"r":1}`))
	if _, err := s.BeginCallback(ctx, storekit.Callback{Key: reported.Key(), DedupeKey: "r", Body: []byte(`{"r":1}`), At: at(time.Minute)}, "a", at(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := s.FinishCallback(ctx, "r", "a", true, at(time.Minute)); err != nil {
		t.Fatal(err)
	}
	settle(t, s, unreported.Key(), outcome(storekit.StateSucceeded, storekit.SourceCallback, time.Minute), nil)
	lateSt, _ := settle(t, s, late.Key(), outcome(storekit.StateFailed, storekit.SourceCallback, time.Minute), nil)
	stray := key(t, storekit.KindReceive, "stray")
	settle(t, s, stray, outcome(storekit.StateSucceeded, storekit.SourceCallback, 2*time.Minute), nil)
	if err := s.MarkReported(ctx, st.ID, at(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := s.MarkReported(ctx, lateSt.ID, at(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	// Retention counts from the report: before it nothing goes.
	n, err := s.Purge(ctx, at(2*time.Minute))
	if err != nil || n != 0 {
		t.Fatalf("Purge at the report time = %d, %v", n, err)
	}
	n, err = s.Purge(ctx, at(time.Hour))
	if err != nil || n != 2 {
		t.Fatalf("Purge after an hour = %d, %v; want the reported movement and the stray callback", n, err)
	}
	for _, k := range []storekit.MovementKey{reported.Key(), stray} {
		if e := get(t, s, k); e.Tracked || e.Final != nil {
			t.Fatalf("purged %s still known: %+v", k.ClientReference, e)
		}
	}
	if got, err := s.Callbacks(ctx, reported.Key()); err != nil || len(got) != 0 {
		t.Fatalf("purged movement's callbacks kept: %+v, %v", got, err)
	}
	// The handled callback's dedupe record went with it: a redelivery is handled anew.
	claim, err := s.BeginCallback(ctx, storekit.Callback{Key: reported.Key(), DedupeKey: "r", At: at(time.Hour)}, "a", at(2*time.Hour))
	if err != nil || claim != storekit.CallbackClaimed {
		t.Fatalf("dedupe record after Purge: %v, %v", claim, err)
	}
	for _, m := range []storekit.Movement{unreported, pending, late} {
		if e := get(t, s, m.Key()); !e.Tracked {
			t.Fatalf("Purge forgot %s", m.ClientReference)
		}
	}
}

// testForgotten: a reported movement that Purge forgot leaves a tombstone, so that it
// is never tracked, asked and reported again; a callback never tracked, and a movement
// never reported, leave none.
func testForgotten(t *testing.T, s storekit.Store) {
	ctx := context.Background()
	reported := movement(storekit.KindSend, "forgotten", 0)
	track(t, s, reported)
	st, _ := settle(t, s, reported.Key(), outcome(storekit.StateSucceeded, storekit.SourceStatusCheck, time.Minute), nil)
	if err := s.MarkReported(ctx, st.ID, at(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	stray := key(t, storekit.KindReceive, "stray")
	settle(t, s, stray, outcome(storekit.StateSucceeded, storekit.SourceCallback, 2*time.Minute), nil)
	if e := get(t, s, reported.Key()); e.Forgotten {
		t.Fatalf("a movement not yet purged says Forgotten: %+v", e)
	}
	if n, err := s.Purge(ctx, at(time.Hour)); err != nil || n != 2 {
		t.Fatalf("Purge = %d, %v; want the reported movement and the stray callback", n, err)
	}
	if e := get(t, s, reported.Key()); !e.Forgotten || e.Tracked || e.Final != nil {
		t.Fatalf("the purged movement: %+v, want Forgotten alone", e)
	}
	if e := get(t, s, stray); e.Forgotten {
		t.Fatalf("a callback never tracked left a tombstone: %+v", e)
	}
	// Tracking it again (a later Await, or the reference reused) is refused, and
	// records nothing.
	for _, kind := range []string{storekit.KindSend, storekit.KindBankTransfer} {
		m := movement(kind, "forgotten", 2*time.Hour)
		if _, _, err := s.Track(ctx, m); !errors.Is(err, storekit.ErrForgotten) {
			t.Fatalf("Track(%s) of a forgotten key: %v, want ErrForgotten", kind, err)
		}
	}
	if e := get(t, s, reported.Key()); e.Tracked || !e.Forgotten {
		t.Fatalf("a refused Track changed the key: %+v", e)
	}
	if due, err := s.ClaimDue(ctx, "a", at(3*time.Hour), at(4*time.Hour), 10); err != nil || len(due) != 0 {
		t.Fatalf("a forgotten key claimed for a status check: %+v, %v", due, err)
	}
	// A late callback for it is held apart, untracked, and reported to nobody.
	settle(t, s, reported.Key(), outcome(storekit.StateSucceeded, storekit.SourceCallback, 3*time.Hour), []byte(`{}`))
	if e := get(t, s, reported.Key()); !e.Forgotten || e.Tracked || e.Final == nil {
		t.Fatalf("a late callback of a forgotten key: %+v", e)
	}
	if claimed, err := s.ClaimUnreported(ctx, "a", at(3*time.Hour), at(4*time.Hour), 10); err != nil || len(claimed) != 0 {
		t.Fatalf("a late callback of a forgotten key claimed for a report: %+v, %v", claimed, err)
	}
}

// testPurgeRacingReuse: references reused while the Purge that forgets them runs are
// never tracked again. Each reused reference's Track either comes before the Purge (it
// finds the movement tracked: created false), or after it (ErrForgotten); afterwards
// every key holds its tombstone alone, nothing is due, nothing to report. A late
// callback settled beside a tombstone is forgotten by the next Purge, the tombstone kept.
func testPurgeRacingReuse(t *testing.T, s storekit.Store) {
	ctx := context.Background()
	const n = 200
	var keys []storekit.MovementKey
	for i := range n {
		m := movement(storekit.KindSend, fmt.Sprintf("reuse%03d", i), 0)
		track(t, s, m)
		st, _ := settle(t, s, m.Key(), outcome(storekit.StateSucceeded, storekit.SourceCallback, time.Minute), nil)
		if err := s.MarkReported(ctx, st.ID, at(2*time.Minute)); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, m.Key())
	}
	type answer struct {
		created bool
		err     error
	}
	answers := make([]answer, n)
	parallel(workers+1, func(w int) {
		if w == workers {
			if got, err := s.Purge(ctx, at(time.Hour)); err != nil || got != n {
				t.Errorf("Purge = %d, %v; want %d", got, err, n)
			}
			return
		}
		for i := w; i < n; i += workers {
			reuse := movement(storekit.KindSend, keys[i].ClientReference, 31*time.Minute)
			var a answer
			if tn, ok := s.(storekit.EntryTracker); ok && i%2 == 0 {
				_, a.created, a.err = tn.TrackNew(ctx, reuse)
			} else {
				_, a.created, a.err = s.Track(ctx, reuse)
			}
			answers[i] = a
		}
	})
	for i, a := range answers {
		if a.created || (a.err != nil && !errors.Is(a.err, storekit.ErrForgotten)) {
			t.Errorf("%s reused during its purge: created %v, %v; want it found tracked, or ErrForgotten", keys[i].ClientReference, a.created, a.err)
		}
		if e := get(t, s, keys[i]); !e.Forgotten || e.Tracked || e.Final != nil {
			t.Errorf("%s after its purge and its reuse: %+v; want its tombstone alone", keys[i].ClientReference, e)
		}
	}
	if due, err := s.ClaimDue(ctx, "a", at(3*time.Hour), at(4*time.Hour), 1000); err != nil || len(due) != 0 {
		t.Fatalf("reused references claimed for a status check: %d, %v", len(due), err)
	}
	// A callback delivered again beside a tombstone goes with the next Purge; the
	// tombstone stays.
	settle(t, s, keys[0], outcome(storekit.StateSucceeded, storekit.SourceCallback, 3*time.Hour), []byte(`{}`))
	if _, err := s.Purge(ctx, at(5*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if e := get(t, s, keys[0]); !e.Forgotten || e.Tracked || e.Final != nil {
		t.Fatalf("a late callback beside a tombstone, purged: %+v; want the tombstone alone", e)
	}
	if _, _, err := s.Track(ctx, movement(storekit.KindSend, keys[0].ClientReference, 6*time.Hour)); !errors.Is(err, storekit.ErrForgotten) {
		t.Fatalf("Track after the second Purge: %v, want ErrForgotten", err)
	}
}

// testPurgeReportOrder: Purge forgets every outcome reported before its cut, whatever
// order the reports were recorded in (instances record theirs as their calls end).
func testPurgeReportOrder(t *testing.T, s storekit.Store) {
	ctx := context.Background()
	early, late := movement(storekit.KindSend, "reportedEarly", 0), movement(storekit.KindSend, "reportedLate", 0)
	ids := map[string]string{}
	for _, m := range []storekit.Movement{early, late} {
		track(t, s, m)
		st, _ := settle(t, s, m.Key(), outcome(storekit.StateSucceeded, storekit.SourceCallback, time.Minute), nil)
		ids[m.ClientReference] = st.ID
	}
	if err := s.MarkReported(ctx, ids["reportedLate"], at(10*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := s.MarkReported(ctx, ids["reportedEarly"], at(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Purge(ctx, at(5*time.Minute)); err != nil || n != 1 {
		t.Fatalf("Purge between the two reports = %d, %v; want the one reported first", n, err)
	}
	if e := get(t, s, early.Key()); !e.Forgotten || e.Tracked {
		t.Fatalf("the outcome reported before the cut, recorded last: %+v; want it forgotten", e)
	}
	if e := get(t, s, late.Key()); e.Forgotten || !e.Tracked {
		t.Fatalf("the outcome reported after the cut: %+v; want it kept", e)
	}
}

// testTrackAgain: a Track made again with the TrackID of the call that tracked the
// movement (that call's answer lost) is answered as that call, created true, so that the
// caller sends the movement it never sent; any other call finds it tracked. With
// TrackNew, an outcome the key holds since is another movement's: created false.
func testTrackAgain(t *testing.T, s storekit.Store) {
	ctx := context.Background()
	m := movement(storekit.KindSend, "again", 0)
	m.TrackID = "call-1"
	track(t, s, m)
	trackers := map[string]func(storekit.Movement) (bool, error){
		"Track": func(m storekit.Movement) (bool, error) { _, c, err := s.Track(ctx, m); return c, err },
	}
	if et, ok := s.(storekit.EntryTracker); ok {
		trackers["TrackEntry"] = func(m storekit.Movement) (bool, error) { _, c, err := et.TrackEntry(ctx, m); return c, err }
		trackers["TrackNew"] = func(m storekit.Movement) (bool, error) { _, c, err := et.TrackNew(ctx, m); return c, err }
	}
	for name, call := range trackers {
		later := m
		later.StartedAt = at(time.Minute) // a call made again may read the clock again
		for _, tc := range []struct {
			what string
			m    storekit.Movement
			want bool
		}{
			{"the same call", m, true},
			{"the same call, later", later, true},
			{"another call", func() storekit.Movement { o := m; o.TrackID = "call-2"; return o }(), false},
			{"a call naming none", func() storekit.Movement { o := m; o.TrackID = ""; return o }(), false},
			{"another kind", func() storekit.Movement { o := m; o.Kind = storekit.KindBankTransfer; return o }(), false},
		} {
			created, err := call(tc.m)
			if err != nil || created != tc.want {
				t.Fatalf("%s of %s: created %v, %v; want %v", name, tc.what, created, err, tc.want)
			}
		}
	}
	if e := get(t, s, m.Key()); !e.Tracked || e.Movement.TrackID != "call-1" || !e.Movement.StartedAt.Equal(m.StartedAt) {
		t.Fatalf("after the calls made again: %+v; want the first call's movement", e.Movement)
	}
	settle(t, s, m.Key(), outcome(storekit.StateSucceeded, storekit.SourceCallback, 2*time.Minute), nil)
	if call, ok := trackers["TrackNew"]; ok {
		if created, err := call(m); err != nil || created {
			t.Fatalf("TrackNew of the same call once the key holds an outcome: created %v, %v; want false", created, err)
		}
	}
	long := m
	long.TrackID = strings.Repeat("x", 65)
	if _, _, err := s.Track(ctx, long); err == nil {
		t.Fatal("Track took a TrackID of 65 characters")
	}
}

// parallel runs fn(i) for i in [0, n) on n goroutines started together.
func parallel(n int, fn func(i int)) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			fn(i)
		}()
	}
	close(start)
	wg.Wait()
}

const workers = 8

func testConcurrentTrack(t *testing.T, s storekit.Store) {
	var mu sync.Mutex
	created := 0
	var errs []error
	m := movement(storekit.KindSend, "once", 0)
	parallel(workers, func(int) {
		_, c, err := s.Track(context.Background(), m)
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			errs = append(errs, err)
		}
		if c {
			created++
		}
	})
	if len(errs) > 0 || created != 1 {
		t.Fatalf("concurrent Track: created %d times, errors %v", created, errs)
	}
}

func testConcurrentClaims(t *testing.T, s storekit.Store) {
	ctx := context.Background()
	const movements = 120
	for i := range movements {
		track(t, s, movement(storekit.KindSend, fmt.Sprintf("c%03d", i), 0))
	}
	var mu sync.Mutex
	holder := map[string]string{}
	checks := map[string]int{}
	var failures []string
	fail := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		failures = append(failures, fmt.Sprintf(format, args...))
	}
	// Every owner claims in rounds at the same instant, so no lease ends: each movement
	// must be held by one owner at a time, and each checked exactly three times.
	now, until := at(time.Hour), at(2*time.Hour)
	parallel(workers, func(i int) {
		owner := fmt.Sprintf("owner%d", i)
		for round := 0; round < 200; round++ {
			ms, err := s.ClaimDue(ctx, owner, now, until, 7)
			if err != nil {
				fail("ClaimDue: %v", err)
				return
			}
			if len(ms) == 0 {
				return
			}
			for _, m := range ms {
				mu.Lock()
				if h, ok := holder[m.ClientReference]; ok {
					failures = append(failures, fmt.Sprintf("%s claimed by %s while %s held it", m.ClientReference, owner, h))
				}
				holder[m.ClientReference] = owner
				checks[m.ClientReference]++
				n := checks[m.ClientReference]
				mu.Unlock()
				// The status check would run here, under the claim.
				mu.Lock()
				delete(holder, m.ClientReference)
				mu.Unlock()
				next := now // due again at once, until checked three times
				if n >= 3 {
					next = at(3 * time.Hour)
				}
				if err := s.Reschedule(ctx, m.Key(), owner, next); err != nil {
					fail("Reschedule(%s) by %s: %v", m.ClientReference, owner, err)
				}
			}
		}
	})
	if len(failures) > 0 {
		t.Fatalf("%d failures, first: %s", len(failures), failures[0])
	}
	for i := range movements {
		ref := fmt.Sprintf("c%03d", i)
		if checks[ref] != 3 {
			t.Fatalf("%s checked %d times, want 3", ref, checks[ref])
		}
		if e := get(t, s, key(t, storekit.KindSend, ref)); e.Movement.Checks != 3 {
			t.Fatalf("%s stored %d checks, want 3", ref, e.Movement.Checks)
		}
	}
}

func testConcurrentSettle(t *testing.T, s storekit.Store) {
	ctx := context.Background()
	const movements = 20
	for i := range movements {
		track(t, s, movement(storekit.KindReceive, fmt.Sprintf("s%02d", i), 0))
	}
	var mu sync.Mutex
	won := map[string]int{}
	ids := map[string]map[string]bool{}
	var errs []error
	parallel(workers, func(i int) {
		src := storekit.SourceCallback
		if i%2 == 1 {
			src = storekit.SourceStatusCheck
		}
		for j := range movements {
			k := key(t, storekit.KindReceive, fmt.Sprintf("s%02d", j))
			st, changed, err := s.Settle(ctx, k, outcome(storekit.StateSucceeded, src, time.Duration(i)*time.Second), nil)
			mu.Lock()
			if err != nil {
				errs = append(errs, err)
			}
			if changed {
				won[k.ClientReference]++
			}
			if ids[k.ClientReference] == nil {
				ids[k.ClientReference] = map[string]bool{}
			}
			ids[k.ClientReference][st.ID] = true
			mu.Unlock()
		}
	})
	if len(errs) > 0 {
		t.Fatalf("concurrent Settle: %v", errs[0])
	}
	for j := range movements {
		ref := fmt.Sprintf("s%02d", j)
		if won[ref] != 1 || len(ids[ref]) != 1 {
			t.Fatalf("%s: %d settles won, ids %v; want 1 winner, 1 id", ref, won[ref], ids[ref])
		}
		e := get(t, s, key(t, storekit.KindReceive, ref))
		if !e.Final.ByCallback || !e.Final.ByStatusCheck || e.Final.Disagreed {
			t.Fatalf("%s: sources lost under concurrency: %+v", ref, e.Final)
		}
	}
}

func testConcurrentCallback(t *testing.T, s storekit.Store) {
	ctx := context.Background()
	k := key(t, storekit.KindSend, "dup1")
	var mu sync.Mutex
	counts := map[storekit.CallbackClaim]int{}
	var errs []error
	body := []byte(`{"dup":1}`)
	parallel(workers, func(i int) {
		c := storekit.Callback{Key: k, DedupeKey: "payout/dup1/succeeded/0000", Body: body, At: at(time.Duration(i) * time.Millisecond)}
		claim, err := s.BeginCallback(ctx, c, fmt.Sprintf("owner%d", i), at(time.Minute))
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			errs = append(errs, err)
		}
		counts[claim]++
	})
	if len(errs) > 0 || counts[storekit.CallbackClaimed] != 1 || counts[storekit.CallbackInFlight] != workers-1 {
		t.Fatalf("concurrent deliveries: %v, errors %v; want one claimed, the rest in flight", counts, errs)
	}
	got, err := s.Callbacks(ctx, k)
	if err != nil || len(got) != 1 || got[0].Deliveries != workers || !bytes.Equal(got[0].Body, body) {
		t.Fatalf("Callbacks = %+v, %v; want one body delivered %d times", got, err, workers)
	}
}

func testConcurrentReports(t *testing.T, s storekit.Store) {
	ctx := context.Background()
	const movements = 60
	for i := range movements {
		m := movement(storekit.KindSend, fmt.Sprintf("r%02d", i), 0)
		track(t, s, m)
		settle(t, s, m.Key(), outcome(storekit.StateSucceeded, storekit.SourceCallback, time.Minute), nil)
	}
	var mu sync.Mutex
	reported := map[string]int{}
	var errs []error
	parallel(workers, func(i int) {
		for {
			got, err := s.ClaimUnreported(ctx, fmt.Sprintf("owner%d", i), at(time.Hour), at(2*time.Hour), 5)
			if err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
				return
			}
			if len(got) == 0 {
				return
			}
			for _, st := range got {
				mu.Lock()
				reported[st.ID]++
				mu.Unlock()
				if err := s.MarkReported(ctx, st.ID, at(time.Hour)); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		}
	})
	if len(errs) > 0 {
		t.Fatalf("concurrent reports: %v", errs[0])
	}
	if len(reported) != movements {
		t.Fatalf("%d outcomes reported, want %d", len(reported), movements)
	}
	for id, n := range reported {
		if n != 1 {
			t.Fatalf("%s reported %d times under live leases, want 1", id, n)
		}
	}
}

func testKeepsAskedAndConfirmed(t *testing.T, s storekit.Store) {
	m := movement(storekit.KindCheckout, "order7", 0)
	m.Amount, m.Currency = 5000, "GHS"
	track(t, s, m)
	e := get(t, s, m.Key())
	if e.Movement.Amount != 5000 || e.Movement.Currency != "GHS" || e.Movement.Kind != storekit.KindCheckout {
		t.Fatalf("Get = %+v, want the amount and currency asked", e.Movement)
	}
	o := outcome(storekit.StateMismatched, storekit.SourceStatusCheck, time.Minute)
	o.Currency, o.ServiceReference, o.Amount = "NGN", "ref_ABC123", 4000
	settle(t, s, m.Key(), o, nil)
	got := get(t, s, m.Key()).Final
	if got == nil || got.Outcome.State != storekit.StateMismatched || got.Outcome.Currency != "NGN" ||
		got.Outcome.ServiceReference != "ref_ABC123" || got.Outcome.Amount != 4000 || got.Outcome.Kind != storekit.KindCheckout {
		t.Fatalf("settled %+v, want the outcome as given", got)
	}
	for _, state := range []string{storekit.StateExpired, storekit.StateUnknown} {
		k := key(t, storekit.KindCheckout, "order8"+string(state))
		track(t, s, movement(storekit.KindCheckout, k.ClientReference, 0))
		if st, changed := settle(t, s, k, outcome(state, storekit.SourceStatusCheck, time.Minute), nil); !changed || st.Outcome.State != state {
			t.Fatalf("Settle(%s) = %+v, %v", state, st, changed)
		}
	}
}

func testRelease(t *testing.T, s storekit.Store) {
	ctx := context.Background()
	m := movement(storekit.KindReceive, "never1", 0)
	track(t, s, m)
	if ok, err := s.Release(ctx, m.Key(), at(time.Second)); err != nil || ok {
		t.Fatalf("Release of another start = %v, %v; want false", ok, err)
	}
	if ok, err := s.Release(ctx, m.Key(), m.StartedAt); err != nil || !ok {
		t.Fatalf("Release = %v, %v; want true", ok, err)
	}
	if e := get(t, s, m.Key()); e.Tracked || e.Final != nil {
		t.Fatalf("a released movement is still known: %+v", e)
	}
	if n, _, err := s.Pending(ctx); err != nil || n != 0 {
		t.Fatalf("Pending = %d, %v after Release", n, err)
	}
	if r, err := s.Reconcile(ctx, at(-time.Hour), at(time.Hour), at(time.Hour)); err != nil || len(r.Overdue) != 0 {
		t.Fatalf("Reconcile = %+v, %v after Release", r, err)
	}
	if _, created, err := s.Track(ctx, m); err != nil || !created {
		t.Fatalf("Track after Release: created=%v err=%v", created, err)
	}
	// A settled movement, or one a callback was kept for, is never released.
	settle(t, s, m.Key(), outcome(storekit.StateFailed, storekit.SourceRequest, time.Second), nil)
	if ok, err := s.Release(ctx, m.Key(), m.StartedAt); err != nil || ok {
		t.Fatalf("Release of a settled movement = %v, %v", ok, err)
	}
	heard := movement(storekit.KindReceive, "heard1", 0)
	track(t, s, heard)
	c := storekit.Callback{Key: heard.Key(), DedupeKey: "transaction/succeeded/heard1", Body: []byte(`{"x":1}`), At: at(time.Second)}
	if _, err := s.BeginCallback(ctx, c, "a", at(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.Release(ctx, heard.Key(), heard.StartedAt); err != nil || ok {
		t.Fatalf("Release of a movement with a callback = %v, %v", ok, err)
	}
	if ok, err := s.Release(ctx, key(t, storekit.KindSend, "unknown1"), at(0)); err != nil || ok {
		t.Fatalf("Release of an unknown key = %v, %v", ok, err)
	}
	_, err := s.Release(ctx, storekit.MovementKey{}, at(0))
	wantValidation(t, "Release of no key", err)
	_, err = s.Release(ctx, m.Key(), time.Time{})
	wantValidation(t, "Release without a start", err)
}

// testContradictions: a store that records contradicted callbacks
// (storekit.ContradictionRecorder) keeps one record per tracked movement, the first
// claim and body with a count, lists it in Reconcile while the movement is pending or
// settled without disagreement, settles and reports nothing for it, records nothing for
// a key nobody tracks, and still releases a movement never sent that holds one.
func testContradictions(t *testing.T, s storekit.Store) {
	rec, ok := s.(storekit.ContradictionRecorder)
	if !ok {
		t.Skip("the store records no contradicted callbacks (storekit.ContradictionRecorder is optional)")
	}
	ctx := context.Background()
	forged := []byte(`{"ResponseCode":"4075","Data":{"ClientReference":"forged1"}}`)
	pending := movement(storekit.KindSend, "forged1", 0)
	settled := movement(storekit.KindSend, "forged2", time.Minute)
	disagreed := movement(storekit.KindSend, "forged3", 2*time.Minute)
	never := movement(storekit.KindSend, "forged4", 3*time.Minute)
	for _, m := range []storekit.Movement{pending, settled, disagreed, never} {
		track(t, s, m)
	}
	record := func(k storekit.MovementKey, claimed string, body []byte, when time.Duration) bool {
		t.Helper()
		ok, err := rec.RecordContradiction(ctx, storekit.Contradiction{Key: k, Claimed: claimed, Body: body, At: at(when)})
		if err != nil {
			t.Fatalf("RecordContradiction %s: %v", k.ClientReference, err)
		}
		return ok
	}
	for _, m := range []storekit.Movement{pending, settled, disagreed, never} {
		if !record(m.Key(), storekit.StateFailed, forged, 4*time.Minute) {
			t.Fatalf("RecordContradiction of the tracked %s = false", m.ClientReference)
		}
	}
	record(pending.Key(), storekit.StateSucceeded, []byte(`{"other":1}`), 6*time.Minute)
	if record(key(t, storekit.KindSend, "untracked1"), storekit.StateFailed, forged, 4*time.Minute) {
		t.Fatalf("RecordContradiction of a key nobody tracks = true")
	}
	_, err := rec.RecordContradiction(ctx, storekit.Contradiction{Key: pending.Key(), At: at(0)})
	wantValidation(t, "RecordContradiction without a claimed state", err)
	_, err = rec.RecordContradiction(ctx, storekit.Contradiction{Key: pending.Key(), Claimed: storekit.StateFailed, At: at(0), Body: make([]byte, storekit.MaxBodyBytes+1)})
	wantValidation(t, "RecordContradiction of a body too large", err)

	if e := get(t, s, pending.Key()); e.Final != nil {
		t.Fatalf("a contradiction settled %s: %+v", pending.ClientReference, e.Final)
	}
	settle(t, s, settled.Key(), outcome(storekit.StateSucceeded, storekit.SourceStatusCheck, 5*time.Minute), nil)
	settle(t, s, disagreed.Key(), outcome(storekit.StateSucceeded, storekit.SourceCallback, 5*time.Minute), nil)
	settle(t, s, disagreed.Key(), outcome(storekit.StateFailed, storekit.SourceStatusCheck, 6*time.Minute), nil)
	if cs, err := s.Callbacks(ctx, pending.Key()); err != nil || len(cs) != 0 {
		t.Fatalf("Callbacks = %d, %v: a contradiction is no callback kept", len(cs), err)
	}

	// never was sent at no time: it is released with its record.
	if ok, err := s.Release(ctx, never.Key(), never.StartedAt); err != nil || !ok {
		t.Fatalf("Release of a movement never sent holding a contradiction = %v, %v; want true", ok, err)
	}
	r, err := s.Reconcile(ctx, at(0), at(time.Hour), at(7*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range r.Contradicted {
		got = append(got, c.Key.ClientReference)
	}
	if !slices.Equal(got, []string{"forged1", "forged2"}) {
		t.Fatalf("Contradicted = %v; want forged1 (pending) and forged2 (settled without disagreement), the earliest started first", got)
	}
	if len(r.Disagreed) != 1 || r.Disagreed[0].Key.ClientReference != "forged3" {
		t.Fatalf("Disagreed = %+v; want forged3 there alone", r.Disagreed)
	}
	c := r.Contradicted[0]
	if c.Key != pending.Key() || c.Claimed != storekit.StateFailed || !bytes.Equal(c.Body, forged) || c.Count != 2 ||
		!c.At.Equal(at(4*time.Minute)) || !c.LastAt.Equal(at(6*time.Minute)) {
		t.Fatalf("Contradicted[0] = %+v; want the first claim and body, two counted, from 4m to 6m", c)
	}
	if e := get(t, s, settled.Key()); e.Final == nil || e.Final.Disagreed || !(e.Final.Outcome.State == storekit.StateSucceeded) {
		t.Fatalf("the contradiction changed the settlement: %+v", e.Final)
	}
	// The report names one outcome of each settled movement, none for a contradiction.
	claimed, err := s.ClaimUnreported(ctx, "a", at(7*time.Minute), at(8*time.Minute), 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(claimed) != 2 {
		t.Fatalf("ClaimUnreported = %d outcomes; want the 2 settled", len(claimed))
	}
	// A window without them lists none.
	if r, err := s.Reconcile(ctx, at(time.Hour), at(2*time.Hour), at(2*time.Hour)); err != nil || len(r.Contradicted) != 0 {
		t.Fatalf("another window: Contradicted = %+v, %v", r.Contradicted, err)
	}
}

func testRecordReference(t *testing.T, s storekit.Store) {
	ctx := context.Background()
	k := key(t, storekit.KindCheckout, "order9")
	if _, err := s.RecordReference(ctx, k, "ref_A1"); !errors.Is(err, storekit.ErrNotTracked) {
		t.Fatalf("RecordReference of an untracked key: %v, want ErrNotTracked", err)
	}
	track(t, s, movement(storekit.KindCheckout, "order9", 0))
	m, err := s.RecordReference(ctx, k, "ref_A1")
	if err != nil || m.ServiceReference != "ref_A1" {
		t.Fatalf("RecordReference = %+v, %v", m, err)
	}
	if m, err = s.RecordReference(ctx, k, "ref_B2"); err != nil || m.ServiceReference != "ref_A1" {
		t.Fatalf("a second RecordReference = %+v, %v; the first stands", m, err)
	}
	if e := get(t, s, k); e.Movement.ServiceReference != "ref_A1" {
		t.Fatalf("Get = %+v", e.Movement)
	}
	due := claimDue(t, s, "a", wait, wait+time.Minute)
	if len(due) != 1 || due[0].ServiceReference != "ref_A1" {
		t.Fatalf("ClaimDue = %+v, want the reference recorded", due)
	}
	for _, bad := range []string{"", "a/b", strings.Repeat("x", 65)} {
		_, err := s.RecordReference(ctx, k, bad)
		wantValidation(t, fmt.Sprintf("RecordReference(%q)", bad), err)
	}
}

func testRanks(t *testing.T, s storekit.Store) {
	type step struct {
		state string
		src   string
		takes bool
	}
	for i, steps := range [][]step{
		{{storekit.StateUnknown, storekit.SourceStatusCheck, true}, {storekit.StateExpired, storekit.SourceStatusCheck, true}, {storekit.StateSucceeded, storekit.SourceCallback, true}, {storekit.StateFailed, storekit.SourceCallback, false}},
		{{storekit.StateSucceeded, storekit.SourceCallback, true}, {storekit.StateMismatched, storekit.SourceStatusCheck, false}},
		{{storekit.StateFailed, storekit.SourceRequest, true}, {storekit.StateSucceeded, storekit.SourceCallback, false}},
	} {
		k := key(t, storekit.KindCheckout, fmt.Sprintf("rank%d", i))
		track(t, s, movement(storekit.KindCheckout, k.ClientReference, 0))
		var ids []string
		for j, st := range steps {
			got, changed := settle(t, s, k, outcome(st.state, st.src, time.Duration(j+1)*time.Minute), nil)
			if changed != st.takes {
				t.Fatalf("sequence %d step %d (%s by %s): changed=%v, want %v", i, j, st.state, st.src, changed, st.takes)
			}
			if changed {
				ids = append(ids, got.ID)
			}
		}
		if len(ids) != len(slices.Compact(slices.Clone(ids))) {
			t.Fatalf("sequence %d: every replacement is a new outcome: %v", i, ids)
		}
	}
}

// An outcome settled before any Track keeps the kind it was settled as, through later
// outcomes that name none; Track of another kind under its key does not adopt it (it is
// another movement's) and tracks nothing, while Track of its own kind does.
func testTrackRefusesAnotherKindsOutcome(t *testing.T, s storekit.Store) {
	ctx := context.Background()
	k := key(t, storekit.KindReceive, "shared1")
	o := outcome(storekit.StateFailed, storekit.SourceStatusCheck, 0)
	o.Kind = storekit.KindReceive
	if st, _ := settle(t, s, k, o, nil); st.Outcome.Kind != storekit.KindReceive {
		t.Fatalf("Settle before Track kept the kind %q, want %q", st.Outcome.Kind, storekit.KindReceive)
	}
	st, changed := settle(t, s, k, outcome(storekit.StateSucceeded, storekit.SourceCallback, time.Second), []byte(`{"state":"success"}`))
	if !changed || st.Outcome.Kind != storekit.KindReceive {
		t.Fatalf("a success naming no kind replaced the failure as %+v (changed=%v), want it kept as a %s", st.Outcome, changed, storekit.KindReceive)
	}
	untracked := func(what string) {
		t.Helper()
		e := get(t, s, k)
		if e.Tracked || e.Final == nil || e.Final.ID != st.ID || e.Final.Outcome.Kind != storekit.KindReceive || !(e.Final.Outcome.State == storekit.StateSucceeded) {
			t.Fatalf("%s: Get = %+v, want the receive's outcome, untracked", what, e)
		}
	}
	untracked("before Track")

	got, created, err := s.Track(ctx, movement(storekit.KindDirectDebit, "shared1", 2*time.Second))
	if err != nil || created || got != (storekit.Movement{}) {
		t.Fatalf("Track of another kind = %+v created=%v err=%v, want nothing tracked", got, created, err)
	}
	untracked("after Track of another kind")
	if due := claimDue(t, s, "a", wait+time.Hour, wait+2*time.Hour); len(due) != 0 {
		t.Fatalf("the refused movement was claimed for a status check: %v", refs(due))
	}
	if n, _, err := s.Pending(ctx); err != nil || n != 0 {
		t.Fatalf("Pending after a refused Track = %d, %v; want 0", n, err)
	}
	if rep, err := s.ClaimUnreported(ctx, "a", at(time.Minute), at(2*time.Minute), 10); err != nil || len(rep) != 0 {
		t.Fatalf("the other movement's outcome was claimed to report: %+v, %v", rep, err)
	}

	if _, created, err := s.Track(ctx, movement(storekit.KindReceive, "shared1", 3*time.Second)); err != nil || !created {
		t.Fatalf("Track of the outcome's own kind: created=%v err=%v", created, err)
	}
	if e := get(t, s, k); !e.Tracked || e.Movement.Kind != storekit.KindReceive || e.Final == nil || e.Final.ID != st.ID || e.Final.Outcome.Kind != storekit.KindReceive {
		t.Fatalf("Get after Track of its own kind = %+v", e)
	}
}

// normalized is e with its times in UTC, to compare entries read in different calls.
func normalized(e storekit.Entry) storekit.Entry {
	m := &e.Movement
	m.StartedAt, m.Deadline, m.NextCheckAt, m.LeaseUntil = m.StartedAt.UTC(), m.Deadline.UTC(), m.NextCheckAt.UTC(), m.LeaseUntil.UTC()
	if e.Final != nil {
		f := *e.Final
		f.Outcome.At, f.ReportedAt = f.Outcome.At.UTC(), f.ReportedAt.UTC()
		e.Final = &f
	}
	return e
}

// entryString prints e, its final outcome in full, with times in UTC.
func entryString(e storekit.Entry) string {
	e = normalized(e)
	final := e.Final
	e.Final = nil
	if final == nil {
		return fmt.Sprintf("%+v, no outcome", e)
	}
	return fmt.Sprintf("%+v, outcome %+v", e, *final)
}

// wantEntry fails unless got is what Get returns for k now.
func wantEntry(t *testing.T, s storekit.Store, what string, k storekit.MovementKey, got storekit.Entry) {
	t.Helper()
	if g, w := entryString(got), entryString(get(t, s, k)); g != w {
		t.Fatalf("%s answered\n\t%s\nGet answers\n\t%s", what, g, w)
	}
}

// A store implementing storekit.EntryTracker answers, with TrackEntry and TrackNew, what
// the key holds, as Get does. TrackEntry follows Track's rules; TrackNew tracks nothing
// under a key holding an outcome, whatever its kind.
func testEntryTracker(t *testing.T, s storekit.Store) {
	et, ok := s.(storekit.EntryTracker)
	if !ok {
		t.Skip("the store does not implement storekit.EntryTracker")
	}
	ctx := context.Background()
	m := movement(storekit.KindSend, "new1", 0)
	e, created, err := et.TrackNew(ctx, m)
	if err != nil || !created || !e.Tracked || e.Final != nil || e.Movement.Kind != storekit.KindSend ||
		!e.Movement.StartedAt.Equal(m.StartedAt) || !e.Movement.NextCheckAt.Equal(m.Deadline) {
		t.Fatalf("TrackNew of a new key = %+v created=%v err=%v", e, created, err)
	}
	wantEntry(t, s, "TrackNew", m.Key(), e)
	for name, call := range map[string]func(context.Context, storekit.Movement) (storekit.Entry, bool, error){
		"TrackNew": et.TrackNew, "TrackEntry": et.TrackEntry,
	} {
		e, created, err := call(ctx, movement(storekit.KindBankTransfer, "new1", time.Minute))
		if err != nil || created || !e.Tracked || e.Movement.Kind != storekit.KindSend || !e.Movement.StartedAt.Equal(m.StartedAt) {
			t.Fatalf("%s of a tracked key = %+v created=%v err=%v, want the movement tracked first", name, e, created, err)
		}
		wantEntry(t, s, name+" of a tracked key", m.Key(), e)
		_, _, err = call(ctx, storekit.Movement{Kind: storekit.KindSend})
		wantValidation(t, name+" of an invalid movement", err)
	}

	// An outcome of no known kind settled first: TrackNew leaves it be, TrackEntry
	// adopts it.
	early := movement(storekit.KindReceive, "early3", time.Second)
	st, _ := settle(t, s, early.Key(), outcome(storekit.StateSucceeded, storekit.SourceCallback, 0), nil)
	e, created, err = et.TrackNew(ctx, early)
	if err != nil || created || e.Tracked || e.Final == nil || e.Final.ID != st.ID {
		t.Fatalf("TrackNew of a key holding an outcome = %+v created=%v err=%v, want it refused, answering the outcome", e, created, err)
	}
	wantEntry(t, s, "a refused TrackNew", early.Key(), e)
	e, created, err = et.TrackEntry(ctx, early)
	if err != nil || !created || !e.Tracked || e.Final == nil || e.Final.ID != st.ID || e.Final.Outcome.Kind != storekit.KindReceive {
		t.Fatalf("TrackEntry of a key holding an outcome = %+v created=%v err=%v, want it adopted", e, created, err)
	}
	wantEntry(t, s, "TrackEntry adopting an outcome", early.Key(), e)

	// Another kind's outcome: TrackEntry refuses it too, answering it.
	other := key(t, storekit.KindSend, "early4")
	o := outcome(storekit.StateFailed, storekit.SourceStatusCheck, 0)
	o.Kind = storekit.KindSend
	settle(t, s, other, o, nil)
	e, created, err = et.TrackEntry(ctx, movement(storekit.KindBankTransfer, "early4", time.Second))
	if err != nil || created || e.Tracked || e.Final == nil || e.Final.Outcome.Kind != storekit.KindSend {
		t.Fatalf("TrackEntry of a key holding another kind's outcome = %+v created=%v err=%v, want it refused", e, created, err)
	}
	wantEntry(t, s, "a refused TrackEntry", other, e)
}

// A store implementing storekit.CallbackEntryBeginner answers BeginCallbackEntry as
// BeginCallback, with what Get returns for the callback's key.
func testBeginCallbackEntry(t *testing.T, s storekit.Store) {
	b, ok := s.(storekit.CallbackEntryBeginner)
	if !ok {
		t.Skip("the store does not implement storekit.CallbackEntryBeginner")
	}
	ctx := context.Background()
	begin := func(k storekit.MovementKey, dedupe, owner string, now time.Duration, want storekit.CallbackClaim) storekit.Entry {
		t.Helper()
		c := storekit.Callback{Key: k, DedupeKey: dedupe, Body: []byte(`{"ref":"` + k.ClientReference + `"}`), At: at(now)}
		claim, e, err := b.BeginCallbackEntry(ctx, c, owner, at(now+time.Minute))
		if err != nil || claim != want {
			t.Fatalf("BeginCallbackEntry(%s, %s) = %v, %v; want %v", k.ClientReference, owner, claim, err, want)
		}
		wantEntry(t, s, "BeginCallbackEntry", k, e)
		return e
	}
	if e := begin(key(t, storekit.KindReceive, "cbe0"), "d0", "a", 0, storekit.CallbackClaimed); e.Tracked || e.Final != nil {
		t.Fatalf("BeginCallbackEntry of an unknown key answered %+v, want the zero Entry", e)
	}

	m := movement(storekit.KindDirectDebit, "cbe1", 0)
	track(t, s, m)
	if e := begin(m.Key(), "d1", "a", time.Second, storekit.CallbackClaimed); !e.Tracked || e.Movement.Kind != storekit.KindDirectDebit {
		t.Fatalf("BeginCallbackEntry of a tracked key answered %+v", e)
	}
	begin(m.Key(), "d1", "b", 2*time.Second, storekit.CallbackInFlight)
	if err := s.FinishCallback(ctx, "d1", "a", true, at(3*time.Second)); err != nil {
		t.Fatal(err)
	}
	begin(m.Key(), "d1", "b", 4*time.Second, storekit.CallbackHandled)
	if got, err := s.Callbacks(ctx, m.Key()); err != nil || len(got) != 1 || got[0].Deliveries != 3 {
		t.Fatalf("Callbacks after three deliveries = %+v, %v", got, err)
	}

	k := key(t, storekit.KindSend, "cbe2")
	o := outcome(storekit.StateSucceeded, storekit.SourceStatusCheck, 0)
	o.Kind = storekit.KindBankTransfer
	settle(t, s, k, o, nil)
	if e := begin(k, "d2", "a", time.Second, storekit.CallbackClaimed); e.Tracked || e.Final == nil || e.Final.Outcome.Kind != storekit.KindBankTransfer {
		t.Fatalf("BeginCallbackEntry of a key settled untracked answered %+v", e)
	}

	_, _, err := b.BeginCallbackEntry(ctx, storekit.Callback{}, "a", at(time.Minute))
	wantValidation(t, "BeginCallbackEntry of an empty callback", err)
	_, _, err = b.BeginCallbackEntry(ctx, storekit.Callback{Key: k, DedupeKey: "d3", At: at(0)}, "", at(time.Minute))
	wantValidation(t, "BeginCallbackEntry without an owner", err)
}
