package proptest_test

import (
	"flag"
	"strconv"
	"testing"
	"time"
)

// nameSeed makes the rapid run of t name its seed in the log: rapid draws one it does not
// show, so one is chosen here when -rapid.seed is not given.
func nameSeed(t *testing.T) {
	t.Helper()
	seedFlag := flag.Lookup("rapid.seed")
	if seedFlag != nil && seedFlag.Value.String() == "0" {
		seed := uint64(time.Now().UnixNano())
		if err := flag.Set("rapid.seed", strconv.FormatUint(seed, 10)); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = flag.Set("rapid.seed", "0") })
	}
	t.Logf("seed %s (run again with -rapid.seed=%s)", seedFlag.Value, seedFlag.Value)
}
