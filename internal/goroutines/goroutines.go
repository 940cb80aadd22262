// Package goroutines reads, for tests, how many goroutines the process has started, so
// that a test can hold a path to starting none, and which goroutine runs the caller.
package goroutines

import (
	"os"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"
)

// Created returns how many goroutines the process has created. Without the metric
// (before Go 1.26) the test is skipped, except under CI=true, where it fails. It runs a
// collection first: the first one in a process starts the collector's own workers, one
// per processor, which would otherwise count in the test that happened to trigger it.
func Created(t testing.TB) uint64 {
	t.Helper()
	runtime.GC()
	s := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		const why = "this Go has no /sched/goroutines-created metric: run the test with Go 1.26 or later"
		if os.Getenv("CI") == "true" {
			t.Fatal(why)
		}
		t.Skip(why)
	}
	return s[0].Value.Uint64()
}

// ID returns the number of the goroutine that calls it, as runtime.Stack writes it.
func ID() string {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	id, _, _ := strings.Cut(strings.TrimPrefix(string(buf), "goroutine "), " ")
	return id
}
