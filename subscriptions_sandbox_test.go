package billing_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
)

const day = 24 * time.Hour

// subscriptionCatalog registers a customer and a product with a monthly price and a
// monthly price with a 14-day trial.
func subscriptionCatalog(t *testing.T, c *billing.Client) (customerID, monthly, trial string) {
	t.Helper()
	ctx := context.Background()
	customerID = newWalletOwner(t, c)
	p, err := c.Products.Create(ctx, &billing.ProductCreateParams{Name: "Pro"})
	require.NoError(t, err)
	m, err := c.Products.CreatePrice(ctx, p.ID, &billing.PriceCreateParams{UnitAmount: 5000, IsRecurring: true, Interval: billing.PriceIntervalMonth})
	require.NoError(t, err)
	tr, err := c.Products.CreatePrice(ctx, p.ID, &billing.PriceCreateParams{UnitAmount: 5000, IsRecurring: true, Interval: billing.PriceIntervalMonth, TrialPeriodDays: 14})
	require.NoError(t, err)
	return customerID, m.ID, tr.ID
}

func TestSubscriptionLifecycleAgainstTheSandbox(t *testing.T) {
	hook := callbackSink(t)
	srv := billingtest.NewServer(t, billingtest.WithManualClock(), billingtest.WithWebhookURL(hook))
	c := srv.Client()
	ctx := context.Background()
	customerID, _, trialPrice := subscriptionCatalog(t, c)
	start := srv.Now()

	sub, err := c.Subscriptions.Create(ctx, &billing.SubscriptionCreateParams{CustomerID: customerID, PriceID: trialPrice})
	require.NoError(t, err)
	assert.Equal(t, billing.SubscriptionStatusTrialing, sub.Status)
	assert.Equal(t, 1, sub.Quantity)
	assert.Equal(t, start.Add(14*day), sub.TrialEnd)
	assert.Equal(t, sub.TrialEnd, sub.CurrentPeriodEnd)

	// The trial start goes to the webhook URL, and ParseEvent reads it.
	srv.Advance(0)
	delivered := srv.Deliveries()
	require.Len(t, delivered, 1)
	assert.Equal(t, hook, delivered[0].URL)
	ev, err := billing.ParseEvent(delivered[0].Body)
	require.NoError(t, err)
	require.IsType(t, &billing.SubscriptionTrialEvent{}, ev)
	assert.Equal(t, sub.ID, ev.Reference())
	var body struct {
		Data billing.Subscription `json:"data"`
	}
	require.NoError(t, json.Unmarshal(delivered[0].Body, &body))
	assert.Equal(t, *sub, body.Data, "the event carries the subscription as created")

	srv.Advance(14 * day)
	got, err := c.Subscriptions.Get(ctx, sub.ID)
	require.NoError(t, err)
	assert.Equal(t, billing.SubscriptionStatusActive, got.Status, "the trial ended")
	assert.Equal(t, sub.TrialEnd, got.CurrentPeriodStart)
	assert.Equal(t, sub.TrialEnd.AddDate(0, 1, 0), got.CurrentPeriodEnd)

	srv.Advance(31 * day)
	renewed, err := c.Subscriptions.Get(ctx, sub.ID)
	require.NoError(t, err)
	assert.Equal(t, got.CurrentPeriodEnd, renewed.CurrentPeriodStart, "renewed for another month")

	state, err := c.Subscriptions.Cancel(ctx, sub.ID, &billing.SubscriptionCancelParams{AtPeriodEnd: true})
	require.NoError(t, err)
	assert.Equal(t, billing.SubscriptionStatusActive, state.Status)
	assert.Equal(t, renewed.CurrentPeriodEnd, state.CancelAt)
	assert.Equal(t, srv.Now(), state.CanceledAt)

	srv.Advance(state.CancelAt.Sub(srv.Now()))
	ended, err := c.Subscriptions.Get(ctx, sub.ID)
	require.NoError(t, err)
	assert.Equal(t, billing.SubscriptionStatusCanceled, ended.Status, "cancelled at the period end")

	for name, call := range map[string]func() error{
		"cancel again": func() error { _, err := c.Subscriptions.Cancel(ctx, sub.ID, nil); return err },
		"resume":       func() error { _, err := c.Subscriptions.Resume(ctx, sub.ID); return err },
		"pause":        func() error { _, err := c.Subscriptions.Pause(ctx, sub.ID); return err },
	} {
		err := call()
		assert.ErrorIs(t, err, billing.ErrConflict, name)
		var apiErr *billing.APIError
		if assert.True(t, errors.As(err, &apiErr), name) {
			assert.Equal(t, billing.ResponseCode("invalid_state"), apiErr.Code, name)
		}
	}
	after, err := c.Subscriptions.Get(ctx, sub.ID)
	require.NoError(t, err)
	assert.Equal(t, ended, after, "refused transitions change nothing")
}

func TestSubscriptionPauseResumeAgainstTheSandbox(t *testing.T) {
	srv := billingtest.NewServer(t, billingtest.WithManualClock())
	c := srv.Client()
	ctx := context.Background()
	customerID, monthly, _ := subscriptionCatalog(t, c)

	sub, err := c.Subscriptions.Create(ctx, &billing.SubscriptionCreateParams{CustomerID: customerID, PriceID: monthly, Quantity: 3})
	require.NoError(t, err)
	assert.Equal(t, billing.SubscriptionStatusActive, sub.Status, "no trial: active at once")
	assert.Equal(t, 3, sub.Quantity)
	assert.True(t, sub.TrialStart.IsZero())

	_, err = c.Subscriptions.Resume(ctx, sub.ID)
	assert.ErrorIs(t, err, billing.ErrConflict, "only a paused subscription resumes")

	paused, err := c.Subscriptions.Pause(ctx, sub.ID)
	require.NoError(t, err)
	assert.Equal(t, &billing.SubscriptionState{ID: sub.ID, Status: billing.SubscriptionStatusPaused}, paused)
	srv.Advance(40 * day)
	got, err := c.Subscriptions.Get(ctx, sub.ID)
	require.NoError(t, err)
	assert.Equal(t, sub.CurrentPeriodEnd, got.CurrentPeriodEnd, "no renewal while paused")

	_, err = c.Subscriptions.Cancel(ctx, sub.ID, &billing.SubscriptionCancelParams{AtPeriodEnd: true})
	assert.ErrorIs(t, err, billing.ErrConflict, "a paused subscription has no period to end")

	resumed, err := c.Subscriptions.Resume(ctx, sub.ID)
	require.NoError(t, err)
	assert.Equal(t, billing.SubscriptionStatusActive, resumed.Status)
	got, err = c.Subscriptions.Get(ctx, sub.ID)
	require.NoError(t, err)
	assert.Equal(t, srv.Now(), got.CurrentPeriodStart, "a new period from the resume")

	canceled, err := c.Subscriptions.Cancel(ctx, sub.ID, nil)
	require.NoError(t, err)
	assert.Equal(t, billing.SubscriptionStatusCanceled, canceled.Status)
	assert.True(t, canceled.CancelAt.IsZero())
	assert.Equal(t, srv.Now(), canceled.CanceledAt)
}

func TestSubscriptionsShortFormAgainstTheSandbox(t *testing.T) {
	all := []string{"customers:write", "products:write", "products:read", "licenses:read"}
	srv := billingtest.NewServer(t, billingtest.WithManualClock(), billingtest.WithScopes(all...))
	customerID, monthly, _ := subscriptionCatalog(t, srv.Client())
	ctx := context.Background()

	_, err := srv.Client().Subscriptions.Create(ctx, &billing.SubscriptionCreateParams{CustomerID: customerID, PriceID: monthly})
	assert.ErrorIs(t, err, billing.ErrUnauthorized, "the /v1 form needs payments:write")

	for name, opt := range map[string]billing.Option{
		"session token": billing.WithSessionToken(srv.SessionToken),
		"secret key":    billing.WithSecretKey(srv.SecretKey),
	} {
		t.Run(name, func(t *testing.T) {
			c, err := billing.NewClient(billing.WithBaseURL(srv.URL), opt)
			require.NoError(t, err)
			sub, err := c.Subscriptions.Create(ctx, &billing.SubscriptionCreateParams{CustomerID: customerID, PriceID: monthly, TrialDays: billing.Value(5)})
			require.NoError(t, err, "the short form takes no scope")
			assert.Equal(t, billing.SubscriptionStatusTrialing, sub.Status)
			_, err = c.Subscriptions.Pause(ctx, sub.ID)
			require.NoError(t, err)
			_, err = c.Subscriptions.Resume(ctx, sub.ID)
			require.NoError(t, err)
			got, err := c.Subscriptions.Get(ctx, sub.ID)
			require.NoError(t, err)
			assert.Equal(t, billing.SubscriptionStatusActive, got.Status, "resumed out of the trial")
		})
	}
}

func TestSubscriptionsToAnArchivedPriceAgainstTheSandbox(t *testing.T) {
	srv := billingtest.NewServer(t, billingtest.WithManualClock())
	c := srv.Client()
	ctx := context.Background()
	customerID := newWalletOwner(t, c)
	p, err := c.Products.Create(ctx, &billing.ProductCreateParams{Name: "Pro"})
	require.NoError(t, err)
	price, err := c.Products.CreatePrice(ctx, p.ID, &billing.PriceCreateParams{UnitAmount: 700, IsRecurring: true, Interval: billing.PriceIntervalWeek, IntervalCount: 2})
	require.NoError(t, err)
	once, err := c.Products.CreatePrice(ctx, p.ID, &billing.PriceCreateParams{UnitAmount: 700})
	require.NoError(t, err)

	existing, err := c.Subscriptions.Create(ctx, &billing.SubscriptionCreateParams{CustomerID: customerID, PriceID: price.ID})
	require.NoError(t, err)
	assert.Equal(t, existing.CurrentPeriodStart.Add(14*day), existing.CurrentPeriodEnd, "two weeks")
	_, err = c.Products.ArchivePrice(ctx, p.ID, price.ID)
	require.NoError(t, err)

	_, err = c.Subscriptions.Create(ctx, &billing.SubscriptionCreateParams{CustomerID: customerID, PriceID: price.ID})
	var apiErr *billing.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, billing.ResponseCode("price_archived"), apiErr.Code)
	assert.ErrorIs(t, err, billing.ErrConflict)

	_, err = c.Subscriptions.Create(ctx, &billing.SubscriptionCreateParams{CustomerID: customerID, PriceID: once.ID})
	assert.ErrorIs(t, err, billing.ErrInvalidRequest, "a one-time price cannot be subscribed to")
	_, err = c.Subscriptions.Create(ctx, &billing.SubscriptionCreateParams{CustomerID: "cust_missing", PriceID: price.ID})
	assert.ErrorIs(t, err, billing.ErrNotFound)

	srv.Advance(15 * day)
	got, err := c.Subscriptions.Get(ctx, existing.ID)
	require.NoError(t, err)
	assert.Equal(t, billing.SubscriptionStatusActive, got.Status, "existing subscriptions are unaffected")
	assert.Equal(t, existing.CurrentPeriodEnd, got.CurrentPeriodStart, "and renew")
}
