package billing

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A money movement whose connection could never be made surely never reached the
// service: its error matches ErrNotSent (not ErrOutcomeUnknown), and the Tracker
// releases the movement it tracked, so its reference is free again.
func TestASendWhoseConnectionFailedIsNotSentAndReleased(t *testing.T) {
	c, err := NewClient(WithBaseURL("http://"+deadAddress(t)), WithClientCredentials("id", "secret"),
		WithRetry(2, time.Millisecond, time.Millisecond))
	require.NoError(t, err)
	tr := NewTracker(c, TrackerOptions{Clock: newFakeClock()})
	ctx := context.Background()
	send := func() error {
		_, err := tr.Send(ctx, &SendParams{Amount: 500, Phone: "233241234567", Provider: ProviderMTN,
			Description: "refund", ClientReference: "never1", CallbackURL: "https://shop.example/cb"})
		return err
	}
	err = send()
	require.ErrorIs(t, err, ErrNotSent)
	assert.False(t, errors.Is(err, ErrOutcomeUnknown), "nothing reached the service: the outcome is known")
	e, err := tr.store.Get(ctx, mustKey(t, KindSend, "never1"))
	require.NoError(t, err)
	assert.False(t, e.Tracked, "released: neither pending nor overdue")
	assert.NotErrorIs(t, send(), ErrAlreadyTracked, "the reference is usable again")

	r, err := tr.Reconcile(ctx, time.Time{}.Add(time.Nanosecond), time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	assert.Empty(t, r.Overdue)
}
