package billing_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
)

// rawCall sends body to the sandbox with its client credentials, past every check of
// the SDK, and returns the status and the decoded answer.
func rawCall(t *testing.T, srv *billingtest.Server, method, path, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	require.NoError(t, err)
	req.SetBasicAuth(srv.ClientID, srv.ClientSecret)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var decoded map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&decoded))
	return resp.StatusCode, decoded
}

// archiveProduct archives a product through the sandbox control: the spec names
// archived products but no endpoint that archives one.
func archiveProduct(t *testing.T, srv *billingtest.Server, productID string) {
	t.Helper()
	status, body := rawCall(t, srv, http.MethodPost, "/sandbox/products/"+productID+"/archive", "")
	require.Equal(t, http.StatusOK, status, "%v", body)
}

func TestProductsAgainstTheSandbox(t *testing.T) {
	srv := billingtest.NewServer(t, billingtest.WithManualClock())
	c := srv.Client(billing.WithSecretKey(srv.SecretKey))
	ctx := context.Background()

	pro, err := c.Products.Create(ctx, &billing.ProductCreateParams{Name: "Pro", Type: billing.ProductTypeDigital, ImageURL: "https://cdn.example.com/pro.png"})
	require.NoError(t, err)
	assert.True(t, pro.Active)
	assert.Empty(t, pro.Prices)
	assert.Equal(t, srv.Now(), pro.CreatedAt)

	quarterly, err := c.Products.CreatePrice(ctx, pro.ID, &billing.PriceCreateParams{
		UnitAmount: 15000, Currency: "usd", IsRecurring: true, Interval: billing.PriceIntervalMonth, IntervalCount: 3, TrialPeriodDays: 7,
	})
	require.NoError(t, err)
	assert.Equal(t, "USD", quarterly.Currency)
	assert.Equal(t, 3, quarterly.IntervalCount)
	assert.Equal(t, 7, quarterly.TrialPeriodDays)
	assert.Equal(t, billing.PriceSchemeFlat, quarterly.Scheme)

	once, err := c.Products.CreatePrice(ctx, pro.ID, &billing.PriceCreateParams{UnitAmount: 900})
	require.NoError(t, err)
	assert.False(t, once.IsRecurring)
	assert.Empty(t, once.Interval)
	assert.Equal(t, 1, once.IntervalCount)

	archived, err := c.Products.ArchivePrice(ctx, pro.ID, quarterly.ID)
	require.NoError(t, err)
	assert.Equal(t, &billing.ArchivedPrice{ID: quarterly.ID, Active: false}, archived)
	_, err = c.Products.ArchivePrice(ctx, pro.ID, "price_missing")
	assert.ErrorIs(t, err, billing.ErrNotFound)

	basic, err := c.Products.Create(ctx, &billing.ProductCreateParams{Name: "Basic"})
	require.NoError(t, err)
	legacy, err := c.Products.Create(ctx, &billing.ProductCreateParams{Name: "Legacy"})
	require.NoError(t, err)
	archiveProduct(t, srv, legacy.ID)
	_, err = c.Products.CreatePrice(ctx, legacy.ID, &billing.PriceCreateParams{UnitAmount: 1})
	assert.ErrorIs(t, err, billing.ErrConflict, "an archived product takes no new prices")

	names := func(active billing.Nullable[bool]) []string {
		var out []string
		for p, err := range c.Products.List(ctx, &billing.ProductListParams{Active: active, ListParams: billing.ListParams{Limit: 1}}) {
			require.NoError(t, err)
			out = append(out, p.Name)
		}
		return out
	}
	assert.Equal(t, []string{"Legacy", "Basic", "Pro"}, names(billing.Nullable[bool]{}), "unset: every product, newest first")
	assert.Equal(t, []string{"Basic", "Pro"}, names(billing.Value(true)))
	assert.Equal(t, []string{"Legacy"}, names(billing.Value(false)))
	assert.NotEmpty(t, basic.ID)
}

func TestProductsSandboxRefusesWhatTheSDKWouldRefuse(t *testing.T) {
	srv := billingtest.NewServer(t, billingtest.WithManualClock())
	c := srv.Client()
	p, err := c.Products.Create(context.Background(), &billing.ProductCreateParams{Name: "Pro"})
	require.NoError(t, err)

	// The same bad inputs, sent raw past the SDK's own checks.
	for body, field := range map[string]string{
		`{"unitAmount":0}`:                      "unitAmount",
		`{"unitAmount":1,"isRecurring":true}`:   "interval",
		`{"unitAmount":1,"intervalCount":0}`:    "intervalCount",
		`{"unitAmount":1,"trialPeriodDays":-1}`: "trialPeriodDays",
		`{"unitAmount":1,"scheme":"STAIRS"}`:    "scheme",
	} {
		status, got := rawCall(t, srv, http.MethodPost, "/v1/products/"+p.ID+"/prices", body)
		assert.Equal(t, http.StatusBadRequest, status, body)
		assert.Equal(t, "4000", got["code"], body)
		assert.Equal(t, field, got["field"], body)
	}
	status, got := rawCall(t, srv, http.MethodPost, "/v1/products", `{"name":"A","imageUrl":"/relative.png"}`)
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, "imageUrl", got["field"])
}
