package sandboxctl_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
	"github.com/billingsdk/billing-go/billingtest/sandboxctl"
)

// The controls over HTTP tell what billingtest's in-process methods tell.
func TestClientMirrorsTheInProcessServer(t *testing.T) {
	srv := billingtest.NewServer(t, billingtest.WithManualClock())
	ctx := context.Background()
	ctl := sandboxctl.New(srv.URL+"/", srv.ClientID, srv.ClientSecret)

	var mu sync.Mutex
	var received []string
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		received = append(received, string(b))
		mu.Unlock()
	}))
	defer app.Close()

	now, err := ctl.Now(ctx)
	require.NoError(t, err)
	assert.Equal(t, srv.Now(), now)

	require.NoError(t, ctl.SetForwardTarget(ctx, app.URL))
	target, err := ctl.ForwardTarget(ctx)
	require.NoError(t, err)
	assert.Equal(t, app.URL, target)
	assert.Equal(t, app.URL, srv.ForwardTarget())

	_, err = srv.Client().Payments.Receive(ctx, &billing.ReceiveParams{Amount: 2500, Phone: "233241234567", Provider: billing.ProviderMTN,
		Description: "Order 1", ClientReference: "ctl1", CallbackURL: "http://127.0.0.1:1/never"})
	require.NoError(t, err)
	now, err = ctl.Advance(ctx, 1500*time.Millisecond)
	require.NoError(t, err)
	assert.Equal(t, srv.Now(), now)

	movements, err := ctl.Movements(ctx, "")
	require.NoError(t, err)
	inProcess := srv.AllMovements()
	require.Len(t, movements, len(inProcess))
	require.Len(t, movements, 1)
	assert.Equal(t, inProcess[0].ClientReference, movements[0].ClientReference)
	assert.Equal(t, inProcess[0].State, movements[0].State)
	assert.Equal(t, "succeeded", movements[0].State)
	require.NotNil(t, movements[0].ResolvedAt)
	one, err := ctl.Movements(ctx, "ctl1")
	require.NoError(t, err)
	assert.Equal(t, movements, one)

	deliveries, err := ctl.Deliveries(ctx, 0, 0)
	require.NoError(t, err)
	inProcessDeliveries := srv.Deliveries()
	require.Len(t, deliveries, 1)
	require.Len(t, inProcessDeliveries, 1)
	assert.Equal(t, "http://127.0.0.1:1/never", deliveries[0].URL)
	assert.Equal(t, app.URL, deliveries[0].ForwardedTo)
	assert.Equal(t, inProcessDeliveries[0].ForwardedTo, deliveries[0].ForwardedTo)
	assert.Equal(t, "ctl1", deliveries[0].Reference)
	assert.Equal(t, http.StatusOK, deliveries[0].Status)
	assert.JSONEq(t, string(inProcessDeliveries[0].Body), string(deliveries[0].Body))
	mu.Lock()
	require.Len(t, received, 1)
	assert.JSONEq(t, received[0], string(deliveries[0].Body), "forwarded unchanged")
	mu.Unlock()
	later, err := ctl.Deliveries(ctx, 1, 10)
	require.NoError(t, err)
	assert.Empty(t, later)

	require.NoError(t, ctl.ClearForwardTarget(ctx))
	assert.Empty(t, srv.ForwardTarget())
}

func TestClientCompletesCheckoutsAndReadsTexts(t *testing.T) {
	srv := billingtest.NewServer(t, billingtest.WithManualClock())
	ctx := context.Background()
	ctl := sandboxctl.New(srv.URL, srv.ClientID, srv.ClientSecret)
	p, err := srv.Client().Payments.CreateCheckout(ctx, &billing.CheckoutParams{Amount: 5000, Description: "Book"})
	require.NoError(t, err)
	require.NoError(t, ctl.CompleteCheckout(ctx, p.Reference, sandboxctl.MethodCard, sandboxctl.OutcomeSucceeded))
	got, err := srv.Client().Payments.Get(ctx, p.Reference)
	require.NoError(t, err)
	assert.Equal(t, billing.PaymentStatusSucceeded, got.Status)

	err = ctl.CompleteCheckout(ctx, p.Reference, sandboxctl.MethodCard, sandboxctl.OutcomeSucceeded)
	var refused *sandboxctl.Error
	require.ErrorAs(t, err, &refused)
	assert.Equal(t, http.StatusConflict, refused.Status)

	texts, err := ctl.SMS(ctx, "233241234567")
	require.NoError(t, err)
	assert.Empty(t, texts)
}

func TestClientSaysWhatWentWrong(t *testing.T) {
	srv := billingtest.NewServer(t, billingtest.WithManualClock())
	ctx := context.Background()

	_, err := sandboxctl.New(srv.URL, srv.ClientID, "wrong").Now(ctx)
	var refused *sandboxctl.Error
	require.ErrorAs(t, err, &refused)
	assert.Equal(t, http.StatusUnauthorized, refused.Status)
	assert.Contains(t, err.Error(), "BILLING_CLIENT_SECRET")

	ctl := sandboxctl.New(srv.URL, srv.ClientID, srv.ClientSecret)
	err = ctl.SetForwardTarget(ctx, "not a url")
	require.ErrorAs(t, err, &refused)
	assert.Equal(t, "url", refused.Field)
	_, err = ctl.Advance(ctx, -time.Second)
	assert.ErrorContains(t, err, "from 0")
	assert.Error(t, ctl.CompleteCheckout(ctx, "", sandboxctl.MethodCard, sandboxctl.OutcomeFailed))

	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	_, err = sandboxctl.New(down.URL, "a", "b").Now(ctx)
	assert.ErrorContains(t, err, "is it running?")

	notSandbox := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "<html>") }))
	defer notSandbox.Close()
	_, err = sandboxctl.New(notSandbox.URL, "a", "b").Now(ctx)
	assert.ErrorContains(t, err, "is "+notSandbox.URL+" a sandbox?")
	assert.False(t, errors.As(err, &refused))
}

func TestFromEnv(t *testing.T) {
	env := map[string]string{}
	getenv := func(name string) string { return env[name] }
	assert.Equal(t, sandboxctl.DefaultURL, sandboxctl.FromEnv(getenv).URL())
	env["BILLING_BASE_URL"] = "http://sandbox.test:9/"
	assert.Equal(t, "http://sandbox.test:9", sandboxctl.FromEnv(getenv).URL())
}
