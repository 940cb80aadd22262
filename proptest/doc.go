// Package proptest holds the property-based tests of the billing SDK's money truth: a
// state machine (pgregory.net/rapid) drives random interleavings of money movements of
// every kind through a Tracker against billingtest's sandbox, on either wire, with
// genuine, forged, duplicated, delayed and reordered callbacks, status-check faults,
// lost answers, restarts on a shared store and clock moves (past the Tracker's Retention
// too), and checks after every step that merchant code is told each movement's truth,
// once per outcome, never a forged value, that no money moves twice, and that an outcome
// forgotten after Retention leaves a tombstone: its reference, used again, is refused
// with ErrForgotten and moves nothing.
//
// It is a module of its own, so no merchant's go.sum fetches rapid. The package holds
// no code besides its tests; run them from this directory:
//
//	go test ./...                                  // the default budget
//	go test -run TestMoneyTruth -rapid.checks=2000 // a longer run by hand
//	go test -run TestMoneyTruth -rapid.seed=42     // one seed again
//
// Every run prints its seed. A failing run leaves a fail file under testdata/rapid,
// which every later run replays first: commit it as the regression test of that bug.
package proptest
