package billing

import (
	"context"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A movement settled, reported and forgotten after Retention is never asked or reported
// again: Await, Track and the send helpers say ErrForgotten, with no request sent.
func TestAwaitAfterRetentionSaysForgotten(t *testing.T) {
	tr, mock, clock := newTestTracker(t, TrackerOptions{Retention: time.Hour})
	mock.RegisterRegexpResponder(http.MethodGet, regexp.MustCompile(`/v1/payments/[\w-]+$`), fixtureAsked(t, http.StatusOK, "payments/receive_status_paid.json"))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // a bound on a failure, not a timing
	defer cancel()

	const ref = "ord-forgotten"
	require.NoError(t, tr.Track(ctx, KindReceive, ref))
	ev, err := ParseEvent([]byte(`{"ResponseCode":"0000","Message":"success","Data":{"ClientReference":"` + ref + `","PaymentDate":"x"}}`))
	require.NoError(t, err)
	require.NoError(t, tr.Deliver(ctx, ev))
	o, err := tr.Await(ctx, KindReceive, ref)
	require.NoError(t, err)
	require.True(t, o.Succeeded())
	asked := mock.GetTotalCallCount()

	// Past Retention, the next movement purges it.
	clock.Advance(time.Hour + 2*time.Minute)
	require.NoError(t, tr.Track(ctx, KindReceive, "ord-next"))
	e, err := tr.store.Get(ctx, movementKey{Callback: EventKindTransaction, ClientReference: ref})
	require.NoError(t, err)
	require.True(t, e.Forgotten, "purged after Retention: %+v", e)

	r := <-awaitAsync(ctx, tr, KindReceive, ref)
	assert.ErrorIs(t, r.err, ErrForgotten)
	assert.Nil(t, r.outcome, "no outcome is made up for a forgotten movement")
	assert.ErrorIs(t, tr.Track(ctx, KindReceive, ref), ErrForgotten)
	assert.ErrorIs(t, tr.TrackAmount(ctx, KindReceive, ref, Money{Amount: 100, Currency: "GHS"}), ErrForgotten)
	_, err = tr.Receive(ctx, &ReceiveParams{Amount: 100, Phone: "233201234567", Provider: ProviderMTN,
		Description: "again", ClientReference: ref, CallbackURL: "https://shop.example/cb"})
	assert.ErrorIs(t, err, ErrForgotten)
	assert.Equal(t, asked, mock.GetTotalCallCount(), "no status check, no request: %v", mock.GetCallCountInfo())

	n, _, err := tr.store.Pending(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, n, "only ord-next is pending; the forgotten movement was not tracked again")
}
