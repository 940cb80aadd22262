package sandbox

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAfterFiresWhenTheSandboxTimeComes(t *testing.T) {
	s := newTestServer(t, Config{})
	due := s.After(5 * time.Minute)
	var fired time.Time
	s.schedule(testStart.Add(5*time.Minute), func() {
		select {
		case fired = <-due:
		default:
		}
	})
	s.Advance(10 * time.Minute)
	assert.Equal(t, testStart.Add(5*time.Minute), fired, "fired by the sandbox's own task, at its moment")
	assert.Empty(t, s.waiters.pending)
}

func TestAfterWakesEveryWaiterAtTheEndOfAnAdvance(t *testing.T) {
	s := newTestServer(t, Config{})
	early := s.After(time.Hour)
	s.Advance(time.Minute)
	select {
	case at := <-early:
		assert.Equal(t, testStart.Add(time.Minute), at, "woken early with the time, to read it again")
	default:
		t.Fatal("a waiter must be woken at the end of an Advance")
	}
	s.Advance(2 * time.Hour)
	assert.Empty(t, early, "a channel fires once")
	require.Empty(t, s.waiters.pending)
}
