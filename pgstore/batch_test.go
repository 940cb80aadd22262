package pgstore

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/billingsdk/billing-go/internal/goroutines"
	"github.com/billingsdk/billing-go/internal/workers"
)

// batchLog is a batcher's run that doubles each item and records its batches. It fails
// a batch holding a negative item.
type batchLog struct {
	mu      sync.Mutex
	batches [][]int
}

func (l *batchLog) run(_ context.Context, items []int) ([]int, error) {
	l.mu.Lock()
	l.batches = append(l.batches, slices.Clone(items))
	l.mu.Unlock()
	out := make([]int, len(items))
	for i, v := range items {
		if v < 0 {
			return nil, fmt.Errorf("refused %d", v)
		}
		out[i] = 2 * v
	}
	return out, nil
}

func newTestBatcher(l *batchLog) *batcher[int, int] {
	// Items equal modulo 1000 have the same key.
	return &batcher[int, int]{key: func(v int) string { return fmt.Sprint(v % 1000) }, run: l.run, stall: time.Hour}
}

// doHeld makes the writes of items at once, letting them start only when all wait, and
// returns their results.
func doHeld(b *batcher[int, int], items []int) ([]int, []error) {
	b.hold()
	got := make([]int, len(items))
	errs := make([]error, len(items))
	var wg sync.WaitGroup
	for i, v := range items {
		wg.Add(1)
		go func() { defer wg.Done(); got[i], errs[i] = b.do(context.Background(), v) }()
	}
	waitQueued(b, len(items))
	for range batchLanes {
		go b.drain()
	}
	wg.Wait()
	return got, errs
}

// waitQueued waits, without sleeping, until n writes wait in b.
func waitQueued(b *batcher[int, int], n int) {
	for b.queued() < n {
		runtime.Gosched()
	}
}

// Writes that arrive while a statement runs go together in the next, at most maxBatch in
// one and never two of one key; every caller gets its own write's result.
func TestBatcherSharesStatements(t *testing.T) {
	var l batchLog
	b := newTestBatcher(&l)
	const n = 250
	items := make([]int, 0, n+2)
	for i := range n {
		items = append(items, i)
	}
	items = append(items, 1000, 2000) // the keys of 0, twice more
	got, errs := doHeld(b, items)
	for i, v := range items {
		if errs[i] != nil || got[i] != 2*v {
			t.Fatalf("do(%d) = %d, %v; want %d", v, got[i], errs[i], 2*v)
		}
	}
	if len(l.batches) < 3 {
		t.Fatalf("%d statements for %d writes: want 3 of at most %d", len(l.batches), len(items), maxBatch)
	}
	for _, batch := range l.batches {
		if len(batch) > maxBatch {
			t.Fatalf("a statement of %d writes, more than %d", len(batch), maxBatch)
		}
		if !slices.IsSortedFunc(batch, func(x, y int) int { return strings.Compare(b.key(x), b.key(y)) }) {
			t.Fatalf("a statement's writes out of their keys' order, which would lock rows in another order than the next: %v", batch)
		}
		keys := map[int]bool{}
		for _, v := range batch {
			if keys[v%1000] {
				t.Fatalf("two writes of key %d in one statement: %v", v%1000, batch)
			}
			keys[v%1000] = true
		}
	}
	if b.queued() != 0 {
		t.Fatalf("left %d writes queued", b.queued())
	}
}

// A write alone takes a statement of its own at once.
func TestBatcherLoneWrite(t *testing.T) {
	var l batchLog
	b := newTestBatcher(&l)
	for i := range 3 {
		if got, err := b.do(context.Background(), i); err != nil || got != 2*i {
			t.Fatalf("do(%d) = %d, %v", i, got, err)
		}
	}
	if len(l.batches) != 3 {
		t.Fatalf("batches %v, want one statement a write", l.batches)
	}
}

// A statement the database refuses for one write fails that write alone: the others
// are made again one by one.
func TestBatcherFailedStatementFailsOnlyItsCulprit(t *testing.T) {
	var l batchLog
	b := newTestBatcher(&l)
	items := []int{1, 2, -3, 4}
	got, errs := doHeld(b, items)
	for i, v := range items {
		switch {
		case v < 0 && (errs[i] == nil || errors.Is(errs[i], errAlone)):
			t.Fatalf("do(%d) = %v, want the database's refusal", v, errs[i])
		case v >= 0 && (errs[i] != nil || got[i] != 2*v):
			t.Fatalf("do(%d) = %d, %v", v, got[i], errs[i])
		}
	}
	if len(l.batches) != 1+len(items) {
		t.Fatalf("batches %v: want the shared one, then one a write", l.batches)
	}
}

// A write whose caller gave up before its statement started is not made.
func TestBatcherGoneCallerIsNotWritten(t *testing.T) {
	var l batchLog
	b := newTestBatcher(&l)
	b.hold()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := b.do(ctx, 7); done <- err }()
	waitQueued(b, 1)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("do = %v, want context.Canceled", err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); _, _ = b.do(context.Background(), 8) }()
	waitQueued(b, 2)
	for range batchLanes {
		go b.drain()
	}
	wg.Wait()
	if len(l.batches) != 1 || !slices.Equal(l.batches[0], []int{8}) {
		t.Fatalf("batches %v, want only [8]", l.batches)
	}
	if _, err := b.do(ctx, 9); !errors.Is(err, context.Canceled) {
		t.Fatalf("do with an ended ctx = %v", err)
	}
}

// A statement's context ends once every caller in its batch has given up, and not
// before: it is bounded by their deadlines, and no one caller's cancel ends the others'.
// Two callers on one context are watched as one, and end as one.
func TestBatcherStatementEndsWhenEveryCallerHasGone(t *testing.T) {
	started := make(chan context.Context, 1)
	finish := make(chan struct{})
	b := &batcher[int, int]{key: func(v int) string { return fmt.Sprint(v) }, stall: time.Hour,
		run: func(ctx context.Context, items []int) ([]int, error) {
			started <- ctx
			select {
			case <-finish:
				return make([]int, len(items)), nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}}
	b.hold()
	ctx1, cancel1 := context.WithCancel(context.Background())
	ctx2, cancel2 := context.WithCancel(context.Background())
	errs := make(chan error, 3)
	go func() { _, err := b.do(ctx1, 1); errs <- err }()
	go func() { _, err := b.do(ctx1, 3); errs <- err }()
	go func() { _, err := b.do(ctx2, 2); errs <- err }()
	waitQueued(b, 3)
	for range batchLanes {
		go b.drain()
	}
	stmt := <-started
	cancel1()
	for range 2 {
		if err := <-errs; !errors.Is(err, context.Canceled) {
			t.Fatalf("a caller on the first context = %v", err)
		}
	}
	if stmt.Err() != nil {
		t.Fatalf("the statement ended with one caller left: %v", stmt.Err())
	}
	cancel2()
	<-stmt.Done()
	if err := <-errs; !errors.Is(err, context.Canceled) {
		t.Fatalf("the second caller = %v", err)
	}
	close(finish)
}

// A statement held up (a connection gone silent, until its callers' deadlines end it)
// holds up no other write: the next takes another lane.
func TestBatcherHeldStatementHoldsUpNoOther(t *testing.T) {
	held := make(chan struct{})
	release := make(chan struct{})
	b := &batcher[int, int]{key: func(v int) string { return fmt.Sprint(v) }, stall: 0, // held at once
		run: func(_ context.Context, items []int) ([]int, error) {
			if items[0] == 1 {
				close(held)
				<-release
			}
			return make([]int, len(items)), nil
		}}
	done := make(chan error, 1)
	go func() { _, err := b.do(context.Background(), 1); done <- err }()
	<-held
	if _, err := b.do(context.Background(), 2); err != nil {
		t.Fatalf("a write beside a held statement = %v", err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// A statement that panics on a lane (a driver's bug) fails the writes of its batch
// instead of the process: each caller makes its write alone on its own goroutine, where
// the panic is the caller's, and the lanes keep serving later writes.
func TestABatchThatPanicsFailsItsWritesNotTheProcess(t *testing.T) {
	var panics sync.Once
	b := &batcher[int, int]{key: func(v int) string { return fmt.Sprint(v) }, stall: time.Hour,
		run: func(_ context.Context, items []int) ([]int, error) {
			if len(items) > 1 {
				panics.Do(func() { panic("driver bug") })
			}
			out := make([]int, len(items))
			for i, v := range items {
				out[i] = 2 * v
			}
			return out, nil
		}}
	got, errs := doHeld(b, []int{1, 2, 3})
	for i, err := range errs {
		if err != nil || got[i] != 2*(i+1) {
			t.Fatalf("write %d after a batch panicked: %d, %v; want it made alone", i+1, got[i], err)
		}
	}
	if v, err := b.do(context.Background(), 7); err != nil || v != 14 {
		t.Fatalf("a later write: %d, %v", v, err)
	}
	// The lanes end once they find the queue empty, after their writers were answered:
	// none is left counted as running, which would keep later writes from a lane.
	for range 10_000_000 {
		b.mu.Lock()
		running := b.running
		b.mu.Unlock()
		if running == 0 {
			return
		}
		runtime.Gosched()
	}
	t.Fatal("lanes still counted as running long after the queue emptied")
}

// Statements one after the other run on one lane, kept between them: no goroutine of
// its own for each statement.
func TestBatcherKeepsItsLaneBetweenStatements(t *testing.T) {
	var l batchLog
	b := newTestBatcher(&l)
	created := goroutines.Created(t)
	const writes = 50
	for i := range writes {
		if _, err := b.do(context.Background(), i); err != nil {
			t.Fatal(err)
		}
	}
	if n := goroutines.Created(t) - created; n > 2 {
		t.Fatalf("%d statements one after the other started %d goroutines; want one lane", writes, n)
	}
}

// A lane ends once its queue is empty, its goroutine back in the process's pool, and a
// later write opens another.
func TestBatcherLaneEndsWhenIdle(t *testing.T) {
	var l batchLog
	b := newTestBatcher(&l)
	if _, err := b.do(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; runtime.Gosched() {
		b.mu.Lock()
		running := b.running
		b.mu.Unlock()
		if running == 0 && workers.Shared.Waiting() > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a lane with nothing to write has not ended in 10 s (%d running)", running)
		}
	}
	if got, err := b.do(context.Background(), 2); err != nil || got != 4 {
		t.Fatalf("a write after the lane ended: %d, %v", got, err)
	}
}
