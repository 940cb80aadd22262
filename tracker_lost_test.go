package billing_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
	"github.com/billingsdk/billing-go/storekit"
)

// answerLostOnce stores the first Track, then answers as if the answer to its commit was
// lost: the movement is recorded, the caller sees an error.
type answerLostOnce struct {
	storekit.Store
	mu   sync.Mutex
	lost bool
}

func (s *answerLostOnce) Track(ctx context.Context, m storekit.Movement) (storekit.Movement, bool, error) {
	stored, created, err := s.Store.Track(ctx, m)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil && !s.lost {
		s.lost = true
		return storekit.Movement{}, false, errors.New("connection reset after COMMIT")
	}
	return stored, created, err
}

// A send helper whose Track's answer was lost sent nothing; called again with the same
// payout, several times at once, it sends it once: one call sends, the others answer
// ErrAlreadyTracked. Before, every later call answered ErrAlreadyTracked and the payout
// was never sent.
func TestSendAgainAfterTracksAnswerWasLost(t *testing.T) {
	srv := billingtest.NewServer(t, billingtest.WithManualClock())
	tr := billing.NewTracker(srv.Client(), billing.TrackerOptions{Clock: srv.Clock(), Store: &answerLostOnce{Store: billing.NewMemoryStore(0)}})
	ctx := context.Background()
	params := &billing.SendParams{Amount: 2000, Phone: "233201234567", Provider: billing.ProviderTelecel, Name: "Ama",
		Description: "Refund", ClientReference: "lostAnswer1", CallbackURL: "http://127.0.0.1:1/callbacks"}
	_, err := tr.Send(ctx, params)
	require.Error(t, err)
	require.Zero(t, srv.Movements("lostAnswer1"), "nothing is sent after a Track that failed")

	const calls = 4
	errs := make([]error, calls)
	var wg sync.WaitGroup
	for i := range calls {
		wg.Add(1)
		go func() { defer wg.Done(); _, errs[i] = tr.Send(ctx, params) }()
	}
	wg.Wait()
	sent := 0
	for _, err := range errs {
		if err == nil {
			sent++
		} else {
			assert.ErrorIs(t, err, billing.ErrAlreadyTracked)
		}
	}
	assert.Equal(t, 1, sent, "calls that sent: %v", errs)
	assert.Equal(t, 1, srv.Movements("lostAnswer1"), "payouts the sandbox made")
}
