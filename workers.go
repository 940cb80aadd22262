package billing

import "sync"

// workers runs functions on goroutines kept between calls. The Tracker's status checks,
// reports and bounded store calls each need a goroutine of their own, and each grows its
// stack to the depth of an HTTP client or a database driver: a goroutine that is used
// again keeps that stack, where a new one grows it anew every time. A function handed to
// Go runs on an idle worker when one is waiting, on a new goroutine otherwise; a worker
// that finishes while maxIdle others wait ends. A function that never returns holds its
// worker alone, as it would hold a goroutine of its own.
//
// The worker that waited last is the one handed the next function. So a steady load
// keeps as many workers busy as it needs, and their stacks grown, while the others wait
// untouched: the collector shrinks the stack of a goroutine that waits, and a load
// spread over every idle worker would grow each one's again after every collection.
type workers struct {
	mu      sync.Mutex
	idle    []*worker // waiting, the latest last
	maxIdle int
}

// worker is one goroutine of workers: it waits for its next function on next.
type worker struct {
	next chan func() // buffered: the function is handed over without waiting
}

// pool is the workers of every Tracker in the process: at most 64 wait idle.
var pool = newWorkers(64)

func newWorkers(maxIdle int) *workers {
	return &workers{maxIdle: maxIdle}
}

// Go runs fn on a worker. fn recovers its own panics, as it would on a goroutine of its
// own.
func (w *workers) Go(fn func()) {
	w.mu.Lock()
	if n := len(w.idle); n > 0 {
		k := w.idle[n-1]
		w.idle[n-1] = nil
		w.idle = w.idle[:n-1]
		w.mu.Unlock()
		k.next <- fn
		return
	}
	w.mu.Unlock()
	go w.work(&worker{next: make(chan func(), 1)}, fn)
}

// work runs fn on k, then waits for the next while fewer than maxIdle workers wait.
func (w *workers) work(k *worker, fn func()) {
	for {
		fn()
		w.mu.Lock()
		if len(w.idle) >= w.maxIdle {
			w.mu.Unlock()
			return
		}
		w.idle = append(w.idle, k)
		w.mu.Unlock()
		fn = <-k.next
	}
}

// waiting returns how many workers wait idle.
func (w *workers) waiting() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.idle)
}
