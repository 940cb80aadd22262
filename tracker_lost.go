package billing

import (
	"errors"
	"math/rand/v2"
	"strconv"
	"sync"

	"github.com/billingsdk/billing-go/storekit"
)

// maxLostTracks bounds the Track calls a Tracker remembers.
const maxLostTracks = 1024

// lostTracks remembers the Track calls of this Tracker that failed, each of which may
// have been stored all the same (its commit's answer lost): nothing was sent after them.
// The next Track of the same movement makes that call again, with its TrackID, and the
// store answers it as the call that tracked the movement, so a send helper called again
// sends the movement once. Each is taken by one call only, so two calls at once do not
// both send; after an answer, it is forgotten.
type lostTracks struct {
	mu    sync.Mutex
	calls map[movementKey]movement
}

// newTrackID names a Track call.
func newTrackID() string {
	return strconv.FormatUint(rand.Uint64(), 36) + strconv.FormatUint(rand.Uint64(), 36)
}

// retry returns the Track call of m's movement whose answer was lost, taking it, or m
// when there is none: the same kind, amount and currency.
func (l *lostTracks) retry(m movement) movement {
	l.mu.Lock()
	defer l.mu.Unlock()
	key := m.Key()
	if prev, ok := l.calls[key]; ok && prev.Kind == m.Kind && prev.Amount == m.Amount && prev.Currency == m.Currency {
		delete(l.calls, key)
		return prev
	}
	return m
}

// note remembers m, a Track call that failed with err, unless err says that nothing was
// stored.
func (l *lostTracks) note(m movement, err error) {
	var invalid *ValidationError
	if errors.As(err, &invalid) || errors.Is(err, ErrForgotten) || errors.Is(err, storekit.ErrStoreFull) {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.calls == nil {
		l.calls = make(map[movementKey]movement)
	}
	if len(l.calls) >= maxLostTracks {
		for k := range l.calls { // any one: these are rare
			delete(l.calls, k)
			break
		}
	}
	l.calls[m.Key()] = m
}
