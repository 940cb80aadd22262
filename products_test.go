package billing

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestProductsCreateSendsBodyAndDecodesProduct(t *testing.T) {
	c, mock := newMockClient(t)
	var got map[string]any
	mock.RegisterResponder(http.MethodPost, mockBaseURL+"/v1/products", func(r *http.Request) (*http.Response, error) {
		got = requestBody(t, r)
		return fixtureResponder(t, 201, "products/product.json")(r)
	})

	p, err := c.Products.Create(ctx(), &ProductCreateParams{
		Name: "Pro plan", Description: "Everything in Basic, and more", Type: ProductTypeDigital,
		ImageURL: "https://cdn.example.com/pro.png", Metadata: Metadata{"tier": "pro"},
	})
	require.NoError(t, err)
	assert.Equal(t, map[string]any{
		"name": "Pro plan", "description": "Everything in Basic, and more", "type": "DIGITAL",
		"imageUrl": "https://cdn.example.com/pro.png", "metadata": map[string]any{"tier": "pro"},
	}, got)
	assert.Equal(t, &Product{
		ID: "prod_8ea7d5138f6039b1025259ae", Name: "Pro plan", Description: "Everything in Basic, and more",
		Type: ProductTypeDigital, ImageURL: "https://cdn.example.com/pro.png", Metadata: Metadata{"tier": "pro"},
		Active: true, Prices: []Price{},
		CreatedAt: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC), UpdatedAt: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC),
	}, p)

	_, err = c.Products.Create(ctx(), &ProductCreateParams{Name: "Basic"})
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"name": "Basic"}, got, "optional fields are left out")
}

func TestProductsCreatePriceDecodesBothKinds(t *testing.T) {
	c, mock := newMockClient(t)
	var got map[string]any
	mock.RegisterResponder(http.MethodPost, mockBaseURL+"/v1/products/prod_1/prices", func(r *http.Request) (*http.Response, error) {
		got = requestBody(t, r)
		if got["isRecurring"] == true {
			return fixtureResponder(t, 201, "products/price.json")(r)
		}
		return fixtureResponder(t, 201, "products/price_one_time.json")(r)
	})

	recurring, err := c.Products.CreatePrice(ctx(), "prod_1", &PriceCreateParams{
		UnitAmount: 5000, Nickname: "Monthly", IsRecurring: true, Interval: PriceIntervalMonth, IntervalCount: 1,
		TrialPeriodDays: 14, Metadata: Metadata{"plan": "pro-monthly"},
	})
	require.NoError(t, err)
	assert.Equal(t, map[string]any{
		"unitAmount": float64(5000), "nickname": "Monthly", "isRecurring": true, "interval": "MONTH",
		"intervalCount": float64(1), "trialPeriodDays": float64(14), "metadata": map[string]any{"plan": "pro-monthly"},
	}, got)
	assert.Equal(t, &Price{
		ID: "price_011428d4ebd1e0eec0c5393e", Nickname: "Monthly", Currency: "GHS", UnitAmount: 5000, Scheme: PriceSchemeFlat,
		IsRecurring: true, Interval: PriceIntervalMonth, IntervalCount: 1, TrialPeriodDays: 14,
		Metadata: Metadata{"plan": "pro-monthly"}, Active: true, CreatedAt: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC),
	}, recurring)

	oneTime, err := c.Products.CreatePrice(ctx(), "prod_1", &PriceCreateParams{UnitAmount: 25000})
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"unitAmount": float64(25000)}, got)
	assert.Equal(t, &Price{
		ID: "price_7cff30e0fe61315f3cd37046", Currency: "GHS", UnitAmount: 25000, Scheme: PriceSchemeFlat,
		IntervalCount: 1, Active: true, CreatedAt: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC),
	}, oneTime, "nulls read as zero values")
}

func TestProductsArchivePrice(t *testing.T) {
	c, mock := newMockClient(t)
	mock.RegisterResponder(http.MethodDelete, mockBaseURL+"/v1/products/prod_1/prices/price_011428d4ebd1e0eec0c5393e", fixtureResponder(t, 200, "products/price_archived.json"))

	archived, err := c.Products.ArchivePrice(ctx(), "prod_1", "price_011428d4ebd1e0eec0c5393e")
	require.NoError(t, err)
	assert.Equal(t, &ArchivedPrice{ID: "price_011428d4ebd1e0eec0c5393e", Active: false}, archived)

	_, err = c.Products.ArchivePrice(ctx(), "prod/1", "price_1")
	assert.Equal(t, "productId", requireValidationError(t, err).Field, "an id is one path segment")
	_, err = c.Products.ArchivePrice(ctx(), "prod_1", "price?x")
	assert.Equal(t, "priceId", requireValidationError(t, err).Field, "an id is one path segment")
}

func TestProductsListActiveFilterIsThreeState(t *testing.T) {
	c, mock := newMockClient(t)
	var queries []string
	mock.RegisterResponder(http.MethodGet, mockBaseURL+"/v1/products", func(r *http.Request) (*http.Response, error) {
		queries = append(queries, r.URL.RawQuery)
		if r.URL.Query().Get("cursor") == "" {
			return fixtureResponder(t, 200, "products/list_page1.json")(r)
		}
		return fixtureResponder(t, 200, "products/list_page2.json")(r)
	})

	for _, p := range []*ProductListParams{nil, {Active: Value(true)}, {Active: Value(false), ListParams: ListParams{Limit: 2}}} {
		_, err := c.Products.ListPage(ctx(), p)
		require.NoError(t, err)
	}
	assert.Equal(t, []string{"", "active=true", "active=false&limit=2"}, queries)

	queries = nil
	params := &ProductListParams{Active: Value(true)}
	var names []string
	for p, err := range c.Products.List(ctx(), params) {
		require.NoError(t, err)
		names = append(names, p.Name)
	}
	assert.Equal(t, []string{"Add-on", "Basic plan", "Pro plan"}, names)
	assert.Equal(t, []string{"active=true", "active=true&cursor=cHJvZF8xYWE2MzUxMGYxY2VkYzU1OTkzNzAyYzg"}, queries)
	assert.Equal(t, &ProductListParams{Active: Value(true)}, params, "params untouched")

	page, err := c.Products.ListPage(ctx(), nil)
	require.NoError(t, err)
	assert.Equal(t, ProductSummary{ID: "prod_a9880f0de64013be301d2f73", Name: "Add-on", Active: true, CreatedAt: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)}, page.Items[0])
	assert.True(t, page.HasMore)
}

func TestProductsValidationSendsNothing(t *testing.T) {
	requireRefusedBeforeSending(t, map[string]refusal{
		"create nil": {func(c *Client) error { _, err := c.Products.Create(ctx(), nil); return err }, "params"},
		"name required": {func(c *Client) error {
			_, err := c.Products.Create(ctx(), &ProductCreateParams{Name: " "})
			return err
		}, "name"},
		"type enum": {func(c *Client) error {
			_, err := c.Products.Create(ctx(), &ProductCreateParams{Name: "A", Type: "service"})
			return err
		}, "type"},
		"image url relative": {func(c *Client) error {
			_, err := c.Products.Create(ctx(), &ProductCreateParams{Name: "A", ImageURL: "/pro.png"})
			return err
		}, "imageUrl"},
		"metadata nested": {func(c *Client) error {
			_, err := c.Products.Create(ctx(), &ProductCreateParams{Name: "A", Metadata: Metadata{"a": []string{"b"}}})
			return err
		}, "metadata.a"},
		"list active null": {func(c *Client) error {
			_, err := c.Products.ListPage(ctx(), &ProductListParams{Active: Null[bool]()})
			return err
		}, "active"},
		"list limit": {func(c *Client) error {
			return firstIterError(c.Products.List(ctx(), &ProductListParams{ListParams: ListParams{Limit: 101}}))
		}, "limit"},
		"price product id": {func(c *Client) error {
			_, err := c.Products.CreatePrice(ctx(), "", &PriceCreateParams{UnitAmount: 1})
			return err
		}, "productId"},
		"price nil": {func(c *Client) error { _, err := c.Products.CreatePrice(ctx(), "prod_1", nil); return err }, "params"},
		"unit amount zero": {func(c *Client) error {
			_, err := c.Products.CreatePrice(ctx(), "prod_1", &PriceCreateParams{})
			return err
		}, "unitAmount"},
		"unit amount negative": {func(c *Client) error {
			_, err := c.Products.CreatePrice(ctx(), "prod_1", &PriceCreateParams{UnitAmount: -1})
			return err
		}, "unitAmount"},
		"currency": {func(c *Client) error {
			_, err := c.Products.CreatePrice(ctx(), "prod_1", &PriceCreateParams{UnitAmount: 1, Currency: "cedi"})
			return err
		}, "currency"},
		"scheme": {func(c *Client) error {
			_, err := c.Products.CreatePrice(ctx(), "prod_1", &PriceCreateParams{UnitAmount: 1, Scheme: "STAIRS"})
			return err
		}, "scheme"},
		"interval required": {func(c *Client) error {
			_, err := c.Products.CreatePrice(ctx(), "prod_1", &PriceCreateParams{UnitAmount: 1, IsRecurring: true})
			return err
		}, "interval"},
		"interval enum": {func(c *Client) error {
			_, err := c.Products.CreatePrice(ctx(), "prod_1", &PriceCreateParams{UnitAmount: 1, IsRecurring: true, Interval: "month"})
			return err
		}, "interval"},
		"interval count negative": {func(c *Client) error {
			_, err := c.Products.CreatePrice(ctx(), "prod_1", &PriceCreateParams{UnitAmount: 1, IsRecurring: true, Interval: PriceIntervalDay, IntervalCount: -1})
			return err
		}, "intervalCount"},
		"interval count big": {func(c *Client) error {
			_, err := c.Products.CreatePrice(ctx(), "prod_1", &PriceCreateParams{UnitAmount: 1, IsRecurring: true, Interval: PriceIntervalDay, IntervalCount: MaxIntervalCount + 1})
			return err
		}, "intervalCount"},
		"trial negative": {func(c *Client) error {
			_, err := c.Products.CreatePrice(ctx(), "prod_1", &PriceCreateParams{UnitAmount: 1, IsRecurring: true, Interval: PriceIntervalDay, TrialPeriodDays: -1})
			return err
		}, "trialPeriodDays"},
		"trial big": {func(c *Client) error {
			_, err := c.Products.CreatePrice(ctx(), "prod_1", &PriceCreateParams{UnitAmount: 1, IsRecurring: true, Interval: PriceIntervalDay, TrialPeriodDays: MaxTrialDays + 1})
			return err
		}, "trialPeriodDays"},
		"price metadata": {func(c *Client) error {
			_, err := c.Products.CreatePrice(ctx(), "prod_1", &PriceCreateParams{UnitAmount: 1, Metadata: Metadata{"": 1}})
			return err
		}, "metadata"},
		"archive product id": {func(c *Client) error { _, err := c.Products.ArchivePrice(ctx(), "", "price_1"); return err }, "productId"},
		"archive price id":   {func(c *Client) error { _, err := c.Products.ArchivePrice(ctx(), "prod_1", ""); return err }, "priceId"},
	})
}

// refusal is a call that must fail validation on field before anything is sent.
