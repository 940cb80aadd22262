package sandbox

import (
	"container/heap"
	"slices"
	"sync"
	"time"
)

// scheduler keeps the sandbox's now (the base clock plus an offset) and the
// work due at later moments. Tasks run one at a time in time order, without
// any lock of the scheduler or the store held, so a task takes the store lock
// itself and may schedule more tasks. A task must not call advance or close,
// which wait for it.
type scheduler struct {
	clock Clock

	mu      sync.Mutex // guards offset, queue, seq and current
	offset  time.Duration
	queue   taskQueue
	seq     uint64
	current *task // the task running now, if any

	// afterTask, when set, is called once each task has run, with no lock
	// held: the state file is written there (state.go).
	afterTask func()

	running sync.Mutex // held while tasks run, so Advance and the runner never interleave

	// The background runner, started for a clock other than *ManualClock.
	wake      chan struct{}
	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

func newScheduler(clock Clock) *scheduler {
	s := &scheduler{clock: clock, wake: make(chan struct{}, 1), stop: make(chan struct{})}
	if _, manual := clock.(*ManualClock); !manual {
		s.done = make(chan struct{})
		go s.runInBackground()
	}
	return s
}

// now returns the sandbox's time.
func (s *scheduler) now() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nowLocked()
}

func (s *scheduler) nowLocked() time.Time { return s.clock.Now().Add(s.offset) }

// schedule arranges for fn to run once the sandbox's time reaches at. A
// moment already past runs at the next opportunity: at once in the
// background with a real clock, at the next Advance with a ManualClock.
func (s *scheduler) schedule(at time.Time, fn func()) { s.scheduleJob(at, nil, fn) }

// scheduleJob is schedule for work kept as data: j is what run does, and what
// the state file writes of it (jobs.go).
func (s *scheduler) scheduleJob(at time.Time, j job, run func()) {
	s.mu.Lock()
	s.seq++
	heap.Push(&s.queue, &task{at: at, seq: s.seq, run: run, job: j})
	s.mu.Unlock()
	s.signal()
}

// jobs returns the jobs not yet done, in the order they will run: the one
// running now first, as it may not have finished its work, then the queue's.
// Work that is not a job (a waiter of After) is left out.
func (s *scheduler) jobs() []scheduledJob {
	s.mu.Lock()
	defer s.mu.Unlock()
	queued := slices.Clone(s.queue)
	slices.SortFunc(queued, func(a, b *task) int {
		if queued.less(a, b) {
			return -1
		}
		return 1
	})
	if s.current != nil {
		queued = slices.Insert(queued, 0, s.current)
	}
	var out []scheduledJob
	for _, t := range queued {
		if t.job != nil {
			out = append(out, scheduledJob{at: t.at, job: t.job})
		}
	}
	return out
}

// scheduledJob is a job and when it is due.
type scheduledJob struct {
	at  time.Time
	job job
}

// signal tells the background runner to look at the queue again.
func (s *scheduler) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// advance moves the sandbox's time forward by d (nothing for d <= 0) and runs
// every task due by then, in time order. Before each task runs, the time
// stands at that task's moment, so what the task schedules within the window
// runs too and times it records are its own.
func (s *scheduler) advance(d time.Duration) {
	d = max(d, 0)
	s.running.Lock()
	defer s.running.Unlock()

	s.mu.Lock()
	target := s.nowLocked().Add(d)
	final := s.offset + d
	s.mu.Unlock()

	s.runDue(target)

	s.mu.Lock()
	s.offset = max(s.offset, final)
	s.mu.Unlock()
	s.signal() // the background runner's next wake-up may now be sooner
}

// runDue runs the tasks due at or before target; s.running must be held.
func (s *scheduler) runDue(target time.Time) {
	for {
		s.mu.Lock()
		if len(s.queue) == 0 || s.queue[0].at.After(target) {
			s.mu.Unlock()
			return
		}
		next := heap.Pop(&s.queue).(*task)
		if now := s.nowLocked(); next.at.After(now) {
			s.offset += next.at.Sub(now)
		}
		s.current = next
		s.mu.Unlock()
		next.run()
		s.mu.Lock()
		s.current = nil
		after := s.afterTask
		s.mu.Unlock()
		if after != nil && next.job != nil {
			after()
		}
	}
}

// runInBackground runs tasks as the real clock reaches them, until close.
func (s *scheduler) runInBackground() {
	defer close(s.done)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		s.mu.Lock()
		pending := len(s.queue) > 0
		var wait time.Duration
		if pending {
			wait = s.queue[0].at.Sub(s.nowLocked())
		}
		s.mu.Unlock()

		if pending && wait <= 0 {
			s.running.Lock()
			s.runDue(s.now())
			s.running.Unlock()
			continue
		}
		var fire <-chan time.Time
		if pending {
			timer.Reset(wait)
			fire = timer.C
		}
		select {
		case <-s.stop:
			return
		case <-s.wake:
		case <-fire:
		}
		timer.Stop()
	}
}

// close stops the background runner and waits for it; tasks not yet run are dropped.
func (s *scheduler) close() {
	s.closeOnce.Do(func() {
		close(s.stop)
		if s.done != nil {
			<-s.done
		}
	})
}

// task is work due at a moment; seq keeps tasks due at the same moment in the
// order they were scheduled.
type task struct {
	at  time.Time
	seq uint64
	run func()
	job job // what run does, as data; nil for work the state file does not keep
}

// taskQueue is a min-heap of tasks by (at, seq).
type taskQueue []*task

func (q taskQueue) Len() int           { return len(q) }
func (q taskQueue) Less(i, j int) bool { return q.less(q[i], q[j]) }

func (taskQueue) less(a, b *task) bool {
	if !a.at.Equal(b.at) {
		return a.at.Before(b.at)
	}
	return a.seq < b.seq
}
func (q taskQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *taskQueue) Push(x any)   { *q = append(*q, x.(*task)) }
func (q *taskQueue) Pop() any {
	old := *q
	last := old[len(old)-1]
	old[len(old)-1] = nil
	*q = old[:len(old)-1]
	return last
}
