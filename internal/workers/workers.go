// Package workers runs functions on goroutines kept between calls, for the Tracker's
// status checks, reports and bounded store calls and for pgstore's batched statements.
package workers

import "sync"

// Pool runs functions on goroutines kept between calls. Each function the Tracker or a
// store hands it grows its goroutine's stack to the depth of an HTTP client or a
// database driver: a goroutine that is used again keeps that stack, where a new one
// grows it anew every time. A function handed to Go runs on an idle worker when one is
// waiting, on a new goroutine otherwise; a worker that finishes while maxIdle others wait
// ends. A function that never returns holds its worker alone, as it would hold a
// goroutine of its own.
//
// The worker that waited last is the one handed the next function. So a steady load
// keeps as many workers busy as it needs, and their stacks grown, while the others wait
// untouched: the collector shrinks the stack of a goroutine that waits, and a load
// spread over every idle worker would grow each one's again after every collection.
type Pool struct {
	mu      sync.Mutex
	idle    []*worker // waiting, the latest last
	maxIdle int
}

// worker is one goroutine of a Pool: it waits for its next function on next.
type worker struct {
	next chan func() // buffered: the function is handed over without waiting
}

// Shared is the pool of every Tracker and store in the process: at most 64 wait idle.
var Shared = New(64)

// New returns a pool that keeps at most maxIdle workers waiting.
func New(maxIdle int) *Pool {
	return &Pool{maxIdle: maxIdle}
}

// Go runs fn on a worker. fn recovers its own panics, as it would on a goroutine of its
// own.
func (p *Pool) Go(fn func()) {
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		k := p.idle[n-1]
		p.idle[n-1] = nil
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		k.next <- fn
		return
	}
	p.mu.Unlock()
	go p.work(&worker{next: make(chan func(), 1)}, fn)
}

// work runs fn on k, then waits for the next while fewer than maxIdle workers wait.
func (p *Pool) work(k *worker, fn func()) {
	for {
		fn()
		p.mu.Lock()
		if len(p.idle) >= p.maxIdle {
			p.mu.Unlock()
			return
		}
		p.idle = append(p.idle, k)
		p.mu.Unlock()
		fn = <-k.next
	}
}

// Waiting returns how many workers wait idle.
func (p *Pool) Waiting() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.idle)
}
