package pgstore_test

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/billingsdk/billing-go/storekit"
)

// listStates are every state a list selects by, "" (all) included.
var listStates = []string{"", storekit.ListPending, storekit.ListOverdue, storekit.ListUnreported, storekit.ListFailing,
	storekit.ListSettled, storekit.ListContradicted, storekit.ListUntracked}

// pgstore lists and counts what the memory store does, for every state, kind and page
// size, over random movements: tracked, settled from every source, reported, failing,
// contradicted, and money no one tracked.
func TestListAndSummaryAgreeWithTheMemoryStore(t *testing.T) {
	ctx := context.Background()
	seed := uint64(38)
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, seed))
	pg := newStore(t)
	mem := storekit.NewMemoryStore(storekit.MemoryStoreOptions{})
	stores := []storekit.Store{mem, pg}
	t0 := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	now := t0.Add(2 * time.Hour)
	kinds := []string{storekit.KindReceive, storekit.KindSend, storekit.KindMandate}
	states := []string{storekit.StateSucceeded, storekit.StateFailed, storekit.StateUnknown, storekit.StateExpired}
	sources := []string{storekit.SourceCallback, storekit.SourceStatusCheck, storekit.SourceRequest}
	each := func(fn func(s storekit.Store) error) {
		t.Helper()
		for _, s := range stores {
			if err := fn(s); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i := range 80 {
		ref := fmt.Sprintf("m%02d_%d", i, r.IntN(3))
		kind := kinds[r.IntN(len(kinds))]
		start := t0.Add(time.Duration(r.IntN(240)) * time.Minute / 2)
		m := storekit.Movement{Kind: kind, ClientReference: ref, StartedAt: start, Deadline: start.Add(5 * time.Minute)}
		key := m.Key()
		switch r.IntN(5) {
		case 0: // money no one tracked, confirmed as its kind or not
			o := storekit.Outcome{State: storekit.StateSucceeded, Source: storekit.SourceStatusCheck, At: start}
			if r.IntN(3) > 0 {
				o.Kind = kind
			}
			each(func(s storekit.Store) error { _, _, err := s.Settle(ctx, key, o, nil); return err })
			continue
		default:
			each(func(s storekit.Store) error { _, _, err := s.Track(ctx, m); return err })
		}
		if r.IntN(3) == 0 {
			c := storekit.Contradiction{Key: key, Claimed: storekit.StateFailed, At: start.Add(time.Minute)}
			each(func(s storekit.Store) error {
				_, err := s.(storekit.ContradictionRecorder).RecordContradiction(ctx, c)
				return err
			})
		}
		for range r.IntN(3) {
			o := storekit.Outcome{State: states[r.IntN(len(states))], Source: sources[r.IntN(len(sources))], At: start.Add(time.Duration(1+r.IntN(9)) * time.Minute)}
			each(func(s storekit.Store) error { _, _, err := s.Settle(ctx, key, o, nil); return err })
		}
	}
	// Reports: some made, some failing.
	var claimed []storekit.Settlement
	for _, s := range stores {
		got, err := s.ClaimUnreported(ctx, "o", now, now.Add(time.Minute), 1000)
		if err != nil {
			t.Fatal(err)
		}
		slices.SortFunc(got, func(a, b storekit.Settlement) int { return cmp.Compare(a.ID, b.ID) })
		claimed = got
	}
	for i, st := range claimed {
		switch i % 3 {
		case 0:
			each(func(s storekit.Store) error { return s.MarkReported(ctx, st.ID, now) })
		case 1:
			each(func(s storekit.Store) error { return s.RetryReport(ctx, st.ID, "o", now.Add(time.Hour)) })
		}
	}

	keys := func(items []storekit.ListItem) []string {
		var out []string
		for _, it := range items {
			out = append(out, it.Key.Callback+"/"+it.Key.ClientReference+"/"+it.State(now))
		}
		return out
	}
	checked := 0
	for _, state := range listStates {
		for _, kind := range append([]string{""}, kinds...) {
			for _, limit := range []int{0, 7} {
				var lists [2][]string
				for i, s := range stores {
					q := storekit.ListQuery{State: state, Kind: kind, Now: now, Limit: limit}
					for {
						items, more, err := s.(storekit.Inspector).List(ctx, q)
						if err != nil {
							t.Fatal(err)
						}
						lists[i] = append(lists[i], keys(items)...)
						if !more {
							break
						}
						q.After = items[len(items)-1].Cursor
					}
				}
				if !slices.Equal(lists[0], lists[1]) {
					t.Fatalf("state %q kind %q limit %d:\nmemory   %v\npgstore  %v", state, kind, limit, lists[0], lists[1])
				}
				checked++
			}
		}
	}
	var sums [2]storekit.Summary
	for i, s := range stores {
		sum, err := s.(storekit.Inspector).Summarize(ctx, now)
		if err != nil {
			t.Fatal(err)
		}
		sum.OldestOverdue = sum.OldestOverdue.UTC()
		sums[i] = sum
	}
	if fmt.Sprint(sums[0]) != fmt.Sprint(sums[1]) {
		t.Fatalf("Summarize:\nmemory  %+v\npgstore %+v", sums[0], sums[1])
	}
	t.Logf("%d lists and the counts agree: %+v", checked, sums[0])
}
