package sandbox

import "time"

// Clock tells the sandbox the time. The sandbox's own now is the clock's
// time plus however far Server.Advance has moved it.
type Clock interface {
	Now() time.Time
}

// realClock is the wall clock, the default.
type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

// ManualClock is a clock that never moves by itself: with it the sandbox's
// time moves only through Server.Advance, and scheduled work (resolutions,
// callbacks, trial ends, renewals, expiries) runs only inside Advance, so a
// test decides exactly when.
type ManualClock struct {
	start time.Time
}

// NewManualClock returns a clock stopped at start.
func NewManualClock(start time.Time) *ManualClock { return &ManualClock{start: start} }

// Now returns the moment the clock was stopped at.
func (c *ManualClock) Now() time.Time { return c.start }
