package billing

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCustomersCreateSendsNormalisedBodyAndDecodesRecord(t *testing.T) {
	c, mock := newMockClient(t)
	var got map[string]any
	var auth string
	mock.RegisterResponder(http.MethodPost, mockBaseURL+"/v1/customers", func(r *http.Request) (*http.Response, error) {
		got, auth = requestBody(t, r), r.Header.Get("Authorization")
		return fixtureResponder(t, 201, "customers/customer.json")(r)
	})

	cust, err := c.Customers.Create(context.Background(), &CustomerCreateParams{
		Email: "ama.mensah@example.com", Name: "Ama Mensah", Phone: "+233 24 123 4567",
		ExternalID: "crm-1042", Metadata: Metadata{"segment": "retail"},
	})
	require.NoError(t, err)
	assert.Equal(t, map[string]any{
		"email": "ama.mensah@example.com", "name": "Ama Mensah", "phone": "+233241234567",
		"externalId": "crm-1042", "metadata": map[string]any{"segment": "retail"},
	}, got)
	assert.Equal(t, "Basic Y2xpZW50LWlkOmNsaWVudC1zZWNyZXQ=", auth)

	assert.Equal(t, "cust_8f3a2b1c9d0e4f5a6b7c8d9e", cust.ID)
	assert.Equal(t, CustomerStatusActive, cust.Status)
	assert.Equal(t, "+233241234567", cust.Phone)
	assert.Equal(t, Metadata{"segment": "retail", "tier": float64(2), "vip": false}, cust.Metadata)
	assert.Equal(t, time.Date(2026, 11, 21, 9, 15, 2, 123e6, time.UTC), cust.CreatedAt)
}

func TestBillingResourcesPreferTheSecretKey(t *testing.T) {
	c, mock := newMockClient(t, WithSecretKey("sk_test_abc"))
	var auth string
	mock.RegisterResponder(http.MethodGet, mockBaseURL+"/v1/customers/cust_1", func(r *http.Request) (*http.Response, error) {
		auth = r.Header.Get("Authorization")
		return fixtureResponder(t, 200, "customers/customer.json")(r)
	})
	_, err := c.Customers.Get(context.Background(), "cust_1")
	require.NoError(t, err)
	assert.Equal(t, "Bearer sk_test_abc", auth)
}

func TestCustomersGetRefusesAPathIDAndMapsNotFound(t *testing.T) {
	requireRefusedBeforeSending(t, map[string]refusal{
		"slash": {func(c *Client) error { _, err := c.Customers.Get(ctx(), "cust/../x"); return err }, "id"},
	})
	c, mock := newMockClient(t)
	mock.RegisterResponder(http.MethodGet, mockBaseURL+"/v1/customers/cust_missing", fixtureResponder(t, 404, "errors/not_found.json"))

	_, err := c.Customers.Get(context.Background(), "cust_missing")
	require.ErrorIs(t, err, ErrNotFound)
	var apiErr *APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, 404, apiErr.StatusCode)
	assert.Equal(t, ResponseCode("not_found"), apiErr.Code)
	assert.Equal(t, "customer cust_missing not found", apiErr.Message)
	assert.JSONEq(t, string(fixture(t, "errors/not_found.json")), string(apiErr.Body))
}

func TestCustomersUpdateSendsNullToClear(t *testing.T) {
	c, mock := newMockClient(t)
	var got map[string]any
	mock.RegisterResponder(http.MethodPatch, mockBaseURL+"/v1/customers/cust_1", func(r *http.Request) (*http.Response, error) {
		got = requestBody(t, r)
		return fixtureResponder(t, 200, "customers/customer_cleared.json")(r)
	})

	cust, err := c.Customers.Update(context.Background(), "cust_1", &CustomerUpdateParams{
		Phone: Null[string](), Description: Null[string](), Status: CustomerStatusBlocked, Metadata: Metadata{},
	})
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"phone": nil, "description": nil, "status": "BLOCKED", "metadata": map[string]any{}}, got)
	assert.Empty(t, cust.Phone)
	assert.Empty(t, cust.Description)
	assert.Nil(t, cust.Metadata)
	assert.Equal(t, CustomerStatusBlocked, cust.Status)
}

func TestCustomersUpdateNormalisesANewPhone(t *testing.T) {
	c, mock := newMockClient(t)
	var got map[string]any
	mock.RegisterResponder(http.MethodPatch, mockBaseURL+"/v1/customers/cust_1", func(r *http.Request) (*http.Response, error) {
		got = requestBody(t, r)
		return fixtureResponder(t, 200, "customers/customer.json")(r)
	})
	_, err := c.Customers.Update(context.Background(), "cust_1", &CustomerUpdateParams{Phone: Value("00233 24 123 4567")})
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"phone": "+233241234567"}, got)
}

func TestCustomersListWalksPagesWithoutTouchingParams(t *testing.T) {
	c, mock := newMockClient(t)
	var queries []string
	mock.RegisterResponder(http.MethodGet, mockBaseURL+"/v1/customers", func(r *http.Request) (*http.Response, error) {
		queries = append(queries, r.URL.RawQuery)
		if r.URL.Query().Get("cursor") == "" {
			return fixtureResponder(t, 200, "customers/list_page1.json")(r)
		}
		return fixtureResponder(t, 200, "customers/list_page2.json")(r)
	})

	params := &CustomerListParams{ListParams: ListParams{Limit: 2}, Email: "EXAMPLE"}
	var ids []string
	for cust, err := range c.Customers.List(context.Background(), params) {
		require.NoError(t, err)
		ids = append(ids, cust.ID)
	}
	assert.Equal(t, []string{"cust_a1", "cust_a2", "cust_a3"}, ids)
	assert.Equal(t, []string{"email=EXAMPLE&limit=2", "cursor=Y3VzdF9hMg&email=EXAMPLE&limit=2"}, queries)
	assert.Equal(t, &CustomerListParams{ListParams: ListParams{Limit: 2}, Email: "EXAMPLE"}, params, "params untouched")

	page, err := c.Customers.ListPage(context.Background(), &CustomerListParams{Status: CustomerStatusActive})
	require.NoError(t, err)
	assert.True(t, page.HasMore)
	assert.Equal(t, "Y3VzdF9hMg", page.NextCursor)
	assert.Len(t, page.Items, 2)
}

func TestCustomersListStopsFetchingWhenTheLoopBreaks(t *testing.T) {
	c, mock := newMockClient(t)
	mock.RegisterResponder(http.MethodGet, mockBaseURL+"/v1/customers", fixtureResponder(t, 200, "customers/list_page1.json"))
	for range c.Customers.List(context.Background(), nil) {
		break
	}
	assert.Equal(t, 1, mock.GetTotalCallCount())
}

func TestCustomersServiceErrorsAreTyped(t *testing.T) {
	for fixtureName, tc := range map[string]struct {
		status int
		is     error
		code   ResponseCode
	}{
		"errors/conflict.json":       {409, ErrConflict, "conflict"},
		"errors/validation.json":     {400, ErrInvalidRequest, CodeValidation},
		"errors/unauthorized.json":   {401, ErrUnauthorized, CodeKeysMismatch},
		"errors/scope_disabled.json": {403, ErrUnauthorized, CodeKeysMismatch},
	} {
		t.Run(fixtureName, func(t *testing.T) {
			c, mock := newMockClient(t)
			mock.RegisterResponder(http.MethodPost, mockBaseURL+"/v1/customers", fixtureResponder(t, tc.status, fixtureName))
			_, err := c.Customers.Create(context.Background(), &CustomerCreateParams{Email: "a@example.com", Name: "A"})
			require.ErrorIs(t, err, tc.is)
			var apiErr *APIError
			require.ErrorAs(t, err, &apiErr)
			assert.Equal(t, tc.code, apiErr.Code)
			assert.NotErrorIs(t, err, ErrIPNotAllowed, "customers are not behind the allowlist")
		})
	}
}

func TestCustomersValidationSendsNothing(t *testing.T) {
	long := make(Metadata)
	long["nested"] = map[string]any{"a": 1}
	requireRefusedBeforeSending(t, map[string]refusal{
		"create nil": {func(c *Client) error { _, err := c.Customers.Create(ctx(), nil); return err }, "params"},
		"email required": {func(c *Client) error {
			_, err := c.Customers.Create(ctx(), &CustomerCreateParams{Name: "A"})
			return err
		}, "email"},
		"email shape": {func(c *Client) error {
			_, err := c.Customers.Create(ctx(), &CustomerCreateParams{Email: "ama", Name: "A"})
			return err
		}, "email"},
		"name required": {func(c *Client) error {
			_, err := c.Customers.Create(ctx(), &CustomerCreateParams{Email: "a@b.co"})
			return err
		}, "name"},
		"local phone": {func(c *Client) error {
			_, err := c.Customers.Create(ctx(), &CustomerCreateParams{Email: "a@b.co", Name: "A", Phone: "0241234567"})
			return err
		}, "phone"},
		"nested metadata": {func(c *Client) error {
			_, err := c.Customers.Create(ctx(), &CustomerCreateParams{Email: "a@b.co", Name: "A", Metadata: long})
			return err
		}, "metadata.nested"},
		"get id":     {func(c *Client) error { _, err := c.Customers.Get(ctx(), ""); return err }, "id"},
		"update id":  {func(c *Client) error { _, err := c.Customers.Update(ctx(), " ", &CustomerUpdateParams{}); return err }, "id"},
		"update nil": {func(c *Client) error { _, err := c.Customers.Update(ctx(), "cust_1", nil); return err }, "params"},
		"update status": {func(c *Client) error {
			_, err := c.Customers.Update(ctx(), "cust_1", &CustomerUpdateParams{Status: "GONE"})
			return err
		}, "status"},
		"update phone": {func(c *Client) error {
			_, err := c.Customers.Update(ctx(), "cust_1", &CustomerUpdateParams{Phone: Value("024")})
			return err
		}, "phone"},
		"list limit zero+": {func(c *Client) error {
			_, err := c.Customers.ListPage(ctx(), &CustomerListParams{ListParams: ListParams{Limit: 101}})
			return err
		}, "limit"},
		"list limit neg": {func(c *Client) error {
			_, err := c.Customers.ListPage(ctx(), &CustomerListParams{ListParams: ListParams{Limit: -1}})
			return err
		}, "limit"},
		"list status": {func(c *Client) error {
			_, err := c.Customers.ListPage(ctx(), &CustomerListParams{Status: "active"})
			return err
		}, "status"},
		"list iterator too": {func(c *Client) error {
			return firstIterError(c.Customers.List(ctx(), &CustomerListParams{ListParams: ListParams{Limit: 500}}))
		}, "limit"},
	})

}

func ctx() context.Context { return context.Background() }

func firstIterError[T any](seq func(func(T, error) bool)) error {
	for _, err := range seq {
		return err
	}
	return nil
}
