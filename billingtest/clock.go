package billingtest

import (
	"time"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/internal/sandbox"
)

// Clock returns a billing.Clock that keeps the sandbox's time. Give it to a Tracker
// (billing.TrackerOptions.Clock) and Advance moves the Tracker's waits along with the
// sandbox, so a test that advances five minutes sees the Tracker fall back to the status
// check at once, with no real waiting:
//
//	tr := billing.NewTracker(c, billing.TrackerOptions{Clock: srv.Clock()})
//	tr.Receive(ctx, params) // tracks the movement, then sends it
//	srv.Advance(5 * time.Minute)
//	outcome, err := tr.Await(ctx, billing.KindReceive, ref) // asks the status check now
func (s *Server) Clock() billing.Clock { return sandboxClock{s.sandbox} }

type sandboxClock struct{ s *sandbox.Server }

func (c sandboxClock) Now() time.Time { return c.s.Now() }

// After fires when the sandbox's time has moved d on, and early at the end of every
// Advance, which the Tracker allows for (see billing.Clock).
func (c sandboxClock) After(d time.Duration) <-chan time.Time { return c.s.After(d) }
