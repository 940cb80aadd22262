package sandbox

import (
	"sync"
	"time"
)

// waiters are the channels of After not yet fired.
type waiters struct {
	mu      sync.Mutex
	pending map[chan time.Time]struct{}
}

// After returns a channel that receives the sandbox's time once it has moved d
// past now: inside Advance with a ManualClock, or as the wall clock passes
// otherwise. It lets code outside the sandbox wait by the sandbox's time, as
// billingtest's clock for a Tracker does.
//
// The channel also receives, early, at the end of every Advance. A waiter whose
// time was computed before an Advance that ran concurrently would otherwise
// wait for the next one; woken instead, it reads the time again.
func (s *Server) After(d time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	s.waiters.mu.Lock()
	if s.waiters.pending == nil {
		s.waiters.pending = make(map[chan time.Time]struct{})
	}
	s.waiters.pending[ch] = struct{}{}
	s.waiters.mu.Unlock()
	s.schedule(s.Now().Add(max(d, 0)), func() { s.fire(ch) })
	return ch
}

// fire sends the time on ch unless it has fired already.
func (s *Server) fire(ch chan time.Time) {
	s.waiters.mu.Lock()
	defer s.waiters.mu.Unlock()
	if _, ok := s.waiters.pending[ch]; ok {
		delete(s.waiters.pending, ch)
		ch <- s.Now()
	}
}

// wakeWaiters fires every pending channel of After: the end of an Advance.
func (s *Server) wakeWaiters() {
	s.waiters.mu.Lock()
	defer s.waiters.mu.Unlock()
	now := s.Now()
	for ch := range s.waiters.pending {
		ch <- now
	}
	clear(s.waiters.pending)
}
