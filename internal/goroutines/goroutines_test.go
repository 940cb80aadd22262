package goroutines

import (
	"sync"
	"testing"
)

func TestCreatedCountsEveryGoroutineStarted(t *testing.T) {
	before := Created(t)
	var wg sync.WaitGroup
	for range 10 {
		wg.Add(1)
		go wg.Done()
	}
	wg.Wait()
	if n := Created(t) - before; n < 10 {
		t.Fatalf("10 goroutines started, %d counted", n)
	}
}
