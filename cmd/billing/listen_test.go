package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
)

// startListen runs billing listen in-process against srv and waits until it
// registered; it returns its output and the function that stops it, which
// requires exit status 0.
func startListen(t *testing.T, srv *billingtest.Server, args ...string) (*lockedWriter, func()) {
	t.Helper()
	out := &lockedWriter{w: &bytes.Buffer{}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	e := &env{stdout: out, stderr: out, getenv: func(string) string { return "" }}
	go func() {
		done <- run(ctx, append([]string{"listen", "--sandbox", srv.URL, "--client-id", srv.ClientID, "--client-secret", srv.ClientSecret}, args...), e)
	}()
	deadline := time.Now().Add(eventually)
	for srv.ForwardTarget() == "" {
		require.True(t, time.Now().Before(deadline), "listen did not register: %s", out.w)
		time.Sleep(5 * time.Millisecond) // a poll of the listener's goroutine, bounded by the deadline
	}
	return out, func() {
		cancel()
		select {
		case code := <-done:
			require.Equal(t, 0, code, "%s", out.w)
		case <-time.After(eventually):
			t.Fatal("listen did not stop when its context ended")
		}
	}
}

func (l *lockedWriter) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.String()
}

// The listener answers the sandbox with the app's status, so the sandbox's
// retry rules hold: a 500 is delivered again 30 seconds later.
func TestListenKeepsTheSandboxRetryRules(t *testing.T) {
	srv := billingtest.NewServer(t, billingtest.WithManualClock())
	var calls atomic.Int32
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if calls.Add(1) == 1 {
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	defer app.Close()
	out, stop := startListen(t, srv, "--forward-to", app.URL, "--json")

	_, err := srv.Client().Payments.Receive(context.Background(), &billing.ReceiveParams{Amount: 100, Phone: "233241234567",
		Provider: billing.ProviderMTN, Description: "Order", ClientReference: "retry1", CallbackURL: "http://127.0.0.1:1/never"})
	require.NoError(t, err)
	srv.Advance(0) // the first attempt, forwarded before Advance returns
	deliveries := srv.Deliveries()
	require.Len(t, deliveries, 1)
	assert.Equal(t, http.StatusInternalServerError, deliveries[0].Status, "the sandbox heard the app's 500")
	srv.Advance(29 * time.Second)
	assert.Len(t, srv.Deliveries(), 1, "no redelivery before its time")
	srv.Advance(time.Second)
	deliveries = srv.Deliveries()
	require.Len(t, deliveries, 2)
	assert.Equal(t, 2, deliveries[1].Attempt)
	assert.Equal(t, http.StatusOK, deliveries[1].Status)
	assert.Equal(t, int32(2), calls.Load())

	app.Close() // the app is down: the sandbox hears 502 and retries
	_, err = srv.Client().Payouts.Send(context.Background(), &billing.SendParams{Amount: 100, Phone: "233241234567", Provider: billing.ProviderMTN,
		Name: "Ama", Description: "Refund", ClientReference: "down1", CallbackURL: "http://127.0.0.1:1/never"})
	require.NoError(t, err)
	srv.Advance(0)
	deliveries = srv.Deliveries()
	require.Len(t, deliveries, 3)
	assert.Equal(t, http.StatusBadGateway, deliveries[2].Status)

	stop()
	assert.Empty(t, srv.ForwardTarget(), "unregistered")
	var lines []forwardedLine
	for _, text := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var line forwardedLine
		if json.Unmarshal([]byte(text), &line) == nil && line.Kind != "" {
			lines = append(lines, line)
		}
	}
	require.Len(t, lines, 3, out.String())
	assert.Equal(t, []int{500, 200, 0}, []int{lines[0].Status, lines[1].Status, lines[2].Status})
	assert.Equal(t, []int{1, 2, 1}, []int{lines[0].Attempt, lines[1].Attempt, lines[2].Attempt})
	assert.Equal(t, []string{"transaction", "transaction", "payout"}, []string{lines[0].Kind, lines[1].Kind, lines[2].Kind})
	assert.Equal(t, "retry1", lines[0].Reference)
	assert.Equal(t, "http://127.0.0.1:1/never", lines[0].MeantFor)
	assert.Contains(t, lines[2].Error, "could not be reached")
}

// A listener that stops leaves a target another listener set since alone.
func TestListenLeavesAnotherListenersTarget(t *testing.T) {
	srv := billingtest.NewServer(t, billingtest.WithManualClock())
	_, stop := startListen(t, srv, "--forward-to", "http://127.0.0.1:1/app")
	require.NoError(t, srv.SetForwardTarget("http://127.0.0.1:2/other"))
	stop()
	assert.Equal(t, "http://127.0.0.1:2/other", srv.ForwardTarget())
}
