package billing

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// untrackedKinds are the kinds the recorded genuine callbacks (forgeCases) are
// confirmed as, by their status checks; a checkout's has its own event types.
var untrackedKinds = map[string]Kind{
	"events/transaction_success.json":  KindReceive,
	"events/direct_debit_success.json": KindDirectDebit,
	"events/send_success.json":         KindSend,
	"events/send_failed_4075.json":     KindSend,
	"events/send_to_bank_success.json": KindBankTransfer,
	"events/mandate_approved.json":     KindMandate,
}

// The confirmed callback of every kind of money movement that no Tracker tracks reaches
// the event function as an *UntrackedMovementEvent holding the status check's truth,
// marked untracked, never as a tracked outcome; its outcome is settled all the same.
func TestUntrackedMovementReachesTheEventFunction(t *testing.T) {
	covered := 0
	for _, fc := range forgeCases {
		kind, ok := untrackedKinds[fc.event]
		if !ok {
			require.Contains(t, fc.event, "payment_succeeded", "%s: a movement callback without its kind here", fc.event)
			continue
		}
		covered++
		t.Run(fc.event, func(t *testing.T) {
			tr, mock, _ := newTestTracker(t, TrackerOptions{})
			for path, name := range fc.checks {
				registerStatus(t, mock, path, name)
			}
			var in eventLog
			h := tr.Handler(WithEventHandler(in.handle), WithDedupe(0))
			body := fixture(t, fc.event)
			claim, err := ParseEvent(body)
			require.NoError(t, err)
			for range 2 { // a redelivery is answered, and handed on once
				assert.Equal(t, http.StatusOK, post(t, h, body).Code)
			}

			got := in.all()
			require.Len(t, got, 1, "the untracked movement reaches the event function once")
			ev, ok := got[0].(*UntrackedMovementEvent)
			require.True(t, ok, "handed on as %T", got[0])
			assert.True(t, ev.Untracked)
			assert.Equal(t, EventKindUntrackedMovement, ev.Kind())
			assert.Equal(t, claim.Reference(), ev.Reference())
			assert.Equal(t, claim.State(), ev.State(), "the status check confirms the claimed state")
			assert.Equal(t, kind, ev.Outcome.Kind)
			assert.Equal(t, SourceCallback, ev.Outcome.Source)
			assert.NotEmpty(t, ev.Outcome.ID)
			require.NotNil(t, ev.Outcome.Event, "the confirmed event of its kind")
			assert.Equal(t, claim.Kind(), ev.Outcome.Event.Kind())

			awaited, err := tr.Await(context.Background(), kind, claim.Reference())
			require.NoError(t, err, "the outcome is settled as before")
			assert.Equal(t, ev.Outcome.ID, awaited.ID)
			assert.Equal(t, ev.Outcome.State, awaited.State)
		})
	}
	assert.Len(t, untrackedKinds, covered, "every kind listed has its recorded callback")
}

// A tracked movement's callback settles it and reaches no event function.
func TestTrackedMovementNeverReachesTheEventFunction(t *testing.T) {
	tr, mock, _ := newTestTracker(t, TrackerOptions{})
	registerStatus(t, mock, "/v1/payments/order1042", "confirm/receive_status_order1042.json")
	require.NoError(t, tr.Track(context.Background(), KindReceive, "order1042"))
	var in eventLog
	assert.Equal(t, http.StatusOK, post(t, tr.Handler(WithEventHandler(in.handle)), fixture(t, "events/transaction_success.json")).Code)
	assert.Empty(t, in.all())
	o := settledNow(t, tr, KindReceive, "order1042")
	require.NotNil(t, o)
	assert.True(t, o.Succeeded())
}

// Without an event function, an untracked movement is logged at warning level, never
// dropped in silence: by the handler, and by Deliver.
func TestUntrackedMovementWithoutAnEventFunctionIsLogged(t *testing.T) {
	for _, via := range []string{"Handler", "Deliver"} {
		t.Run(via, func(t *testing.T) {
			var logs bytes.Buffer
			tr, mock, _ := newTestTracker(t, TrackerOptions{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			registerStatus(t, mock, "/v1/payments/order1042", "confirm/receive_status_order1042.json")
			body := fixture(t, "events/transaction_success.json")
			if via == "Handler" {
				assert.Equal(t, http.StatusOK, post(t, tr.Handler(), body).Code)
			} else {
				ev, err := ParseEvent(body)
				require.NoError(t, err)
				require.NoError(t, tr.Deliver(context.Background(), ev))
			}
			var line string
			for l := range strings.SplitSeq(logs.String(), "\n") {
				if strings.Contains(l, "no tracker tracks") {
					line = l
				}
			}
			require.NotEmpty(t, line, "nothing logged of the untracked movement: %s", logs.String())
			assert.Contains(t, line, "level=WARN")
			assert.Contains(t, line, "reference=order1042")
			assert.Contains(t, line, "kind=receive")
			assert.Contains(t, line, "untracked=true")
		})
	}
}

// An untracked movement whose event function fails is answered 500, so the sender
// delivers it again, and handed on again then.
func TestUntrackedMovementEventFunctionErrorIsRetried(t *testing.T) {
	tr, mock, _ := newTestTracker(t, TrackerOptions{})
	registerStatus(t, mock, "/v1/payments/order1042", "confirm/receive_status_order1042.json")
	calls := 0
	h := tr.Handler(WithEventHandler(func(_ context.Context, ev Event) error {
		calls++
		if calls == 1 {
			return assert.AnError
		}
		return nil
	}))
	body := fixture(t, "events/transaction_success.json")
	assert.Equal(t, http.StatusInternalServerError, post(t, h, body).Code)
	assert.Equal(t, http.StatusOK, post(t, h, body).Code)
	assert.Equal(t, 2, calls)
}
