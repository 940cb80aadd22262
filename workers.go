package billing

import "sync/atomic"

// workers runs functions on goroutines kept between calls. The Tracker's status checks,
// reports and bounded store calls each need a goroutine of their own, and each grows its
// stack to the depth of an HTTP client or a database driver: a goroutine that is used
// again keeps that stack, where a new one grows it anew every time. A function handed to
// Go runs on an idle worker when one is waiting, on a new goroutine otherwise; a worker
// that finishes while maxIdle others wait ends. A function that never returns holds its
// worker alone, as it would hold a goroutine of its own.
type workers struct {
	tasks   chan func()
	idle    atomic.Int32
	maxIdle int32
}

// pool is the workers of every Tracker in the process: at most 64 wait idle.
var pool = newWorkers(64)

func newWorkers(maxIdle int32) *workers {
	return &workers{tasks: make(chan func()), maxIdle: maxIdle}
}

// Go runs fn on a worker. fn recovers its own panics, as it would on a goroutine of its
// own.
func (w *workers) Go(fn func()) {
	select {
	case w.tasks <- fn: // an idle worker took it
	default:
		go w.work(fn)
	}
}

// work runs fn, then waits for the next while fewer than maxIdle workers wait.
func (w *workers) work(fn func()) {
	for {
		fn()
		if w.idle.Add(1) > w.maxIdle {
			w.idle.Add(-1)
			return
		}
		fn = <-w.tasks
		w.idle.Add(-1)
	}
}
