package billing

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/billingsdk/billing-go/storekit"
)

// lostCommitStore stores a Track, then answers as if the commit's answer was lost: the
// caller sees an error although the movement is recorded.
type lostCommitStore struct {
	storekit.Store
	lost bool
}

var errCommitAnswerLost = errors.New("connection reset after COMMIT")

func (s *lostCommitStore) Track(ctx context.Context, m storekit.Movement) (storekit.Movement, bool, error) {
	stored, created, err := s.Store.Track(ctx, m)
	if err == nil && !s.lost {
		s.lost = true
		return storekit.Movement{}, false, errCommitAnswerLost
	}
	return stored, created, err
}

// Track is idempotent for the same movement: after an error whose commit was stored all
// the same, tracking it again succeeds; another movement under the same key is refused.
func TestTrackIsIdempotentForTheSameMovement(t *testing.T) {
	clock := newFakeClock()
	store := &lostCommitStore{Store: NewMemoryStore(100)}
	tr := NewTracker(storeOnlyClient(t), TrackerOptions{Store: store, Clock: clock})
	ctx := context.Background()

	err := tr.TrackAmount(ctx, KindSend, "pay1", Money{Amount: 5000, Currency: "GHS"})
	require.ErrorIs(t, err, errCommitAnswerLost, "the first answer is lost")
	require.NoError(t, tr.TrackAmount(ctx, KindSend, "pay1", Money{Amount: 5000, Currency: "ghs"}), "the same movement again")
	require.NoError(t, tr.Track(ctx, KindSend, "pay1"), "an amount not given is not compared")

	for name, track := range map[string]func() error{
		"another amount":   func() error { return tr.TrackAmount(ctx, KindSend, "pay1", Money{Amount: 5001, Currency: "GHS"}) },
		"another currency": func() error { return tr.TrackAmount(ctx, KindSend, "pay1", Money{Amount: 5000, Currency: "XOF"}) },
		"another kind":     func() error { return tr.Track(ctx, KindBankTransfer, "pay1") },
	} {
		assert.ErrorIs(t, track(), ErrAlreadyTracked, name)
	}
	e, err := gateOf(store).Get(ctx, mustKey(t, KindSend, "pay1"))
	require.NoError(t, err)
	assert.Equal(t, KindSend, e.Movement.Kind, "a refused Track changes nothing")
	assert.Equal(t, int64(5000), e.Movement.Amount)
}
