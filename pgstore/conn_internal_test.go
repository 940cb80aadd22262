package pgstore

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/billingsdk/billing-go/storekit"
)

// A timestamp is written digit by digit exactly as the layout writes it, for every year
// that layout writes in four digits, at every precision and in every zone, and the
// layout writes the others.
func TestTimestampsWrittenAsTheLayoutWritesThem(t *testing.T) {
	seed := uint64(40)
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, seed))
	layout := func(t time.Time) string {
		return `"` + t.UTC().Truncate(time.Microsecond).Format("2006-01-02 15:04:05.999999Z07:00") + `"`
	}
	times := []time.Time{{}, time.Date(1, 1, 1, 0, 0, 0, 1000, time.UTC), time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(-1, 6, 1, 0, 0, 0, 0, time.UTC), time.Unix(0, 0),
		time.Date(2026, 11, 29, 10, 0, 0, 500, time.FixedZone("", 14*3600))}
	for range 200_000 {
		tm := time.Unix(r.Int64N(1<<39)-1<<38, 0).In(time.FixedZone("", (r.IntN(57)-28)*1800))
		switch r.IntN(4) {
		case 0: // whole seconds
		case 1:
			tm = tm.Add(time.Duration(r.IntN(1e6)) * time.Microsecond)
		case 2:
			tm = tm.Add(time.Duration(r.IntN(1e9)))
		case 3:
			tm = tm.Add(time.Duration(r.IntN(10)) * time.Duration([]int{1e3, 1e4, 1e5, 1e6, 1e7, 1e8}[r.IntN(6)]))
		}
		times = append(times, tm)
	}
	for _, tm := range times {
		if got, want := string(appendTimestamp(nil, tm)), layout(tm); got != want {
			t.Fatalf("%v: written %s, the layout writes %s", tm, got, want)
		}
	}
}

// The arguments of a batch of first outcomes, every column an array, cost one
// allocation once warm: the string all the literals share. No literal is boxed on its
// way into the argument list.
func TestArrayArgumentsCostOneAllocation(t *testing.T) {
	var cols firstColumns
	cols.reset(3)
	for i := range 3 {
		cols.add(firstOutcome{key: storekit.MovementKey{Callback: "payout", ClientReference: fmt.Sprintf("ref%d", i)},
			first: storekit.Settlement{ID: fmt.Sprintf("payout/%d", i), Outcome: storekit.Outcome{State: "succeeded", At: time.Unix(1_700_000_000, 0)}},
			now:   time.Unix(1_700_000_001, 0)})
	}
	c := conn{opts: []any{"an option"}}
	var a statementArgs // as the pool keeps them, without its drops under -race
	c.fill(&a, cols.args())
	allocs := testing.AllocsPerRun(100, func() { c.fill(&a, cols.args()) })
	if allocs != 1 {
		t.Errorf("the arguments of a batch cost %v allocations, want 1", allocs)
	}
}
