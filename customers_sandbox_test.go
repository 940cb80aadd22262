package billing_test

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countingTransport counts the requests a client sends.
type countingTransport struct {
	next http.RoundTripper
	n    atomic.Int32
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.next.RoundTrip(r)
}

func countingClient(srv *billingtest.Server, opts ...billing.Option) (*billing.Client, *countingTransport) {
	ct := &countingTransport{next: http.DefaultTransport.(*http.Transport).Clone()}
	return srv.Client(append(opts, billing.WithHTTPClient(&http.Client{Transport: ct}))...), ct
}

func TestCustomersEndToEnd(t *testing.T) {
	srv := billingtest.NewServer(t)
	c := srv.Client()
	ctx := context.Background()

	cust, err := c.Customers.Create(ctx, &billing.CustomerCreateParams{
		Email: "Ama.Mensah@Example.com", Name: "Ama Mensah", Phone: "+233 24 123 4567",
		Description: "VIP", ExternalID: "crm-1", Metadata: billing.Metadata{"tier": "gold", "visits": 3},
	})
	require.NoError(t, err)
	assert.Regexp(t, `^cust_`, cust.ID)
	assert.Equal(t, billing.CustomerStatusActive, cust.Status)
	assert.Equal(t, "+233241234567", cust.Phone)
	assert.Equal(t, "GHS", cust.Currency)
	assert.False(t, cust.CreatedAt.IsZero())

	got, err := c.Customers.Get(ctx, cust.ID)
	require.NoError(t, err)
	assert.Equal(t, cust, got)

	_, err = c.Customers.Create(ctx, &billing.CustomerCreateParams{Email: "ama.mensah@example.COM", Name: "Twin"})
	assert.ErrorIs(t, err, billing.ErrConflict, "emails are unique ignoring case")

	updated, err := c.Customers.Update(ctx, cust.ID, &billing.CustomerUpdateParams{
		Phone: billing.Null[string](), Description: billing.Null[string](),
		Status: billing.CustomerStatusInactive, Metadata: billing.Metadata{"tier": "silver"},
	})
	require.NoError(t, err)
	assert.Empty(t, updated.Phone)
	assert.Empty(t, updated.Description)
	assert.Equal(t, billing.Metadata{"tier": "silver"}, updated.Metadata, "metadata replaced wholesale")
	assert.Equal(t, billing.CustomerStatusInactive, updated.Status)
	assert.Equal(t, "crm-1", updated.ExternalID, "fields not sent stay")
	assert.False(t, updated.UpdatedAt.Before(cust.UpdatedAt))

	_, err = c.Customers.Get(ctx, "cust_missing")
	assert.ErrorIs(t, err, billing.ErrNotFound)
}

func TestCustomersListOverManyPagesYieldsEachOnce(t *testing.T) {
	srv := billingtest.NewServer(t)
	c, counter := countingClient(srv)
	ctx := context.Background()
	const n = 230
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := c.Customers.Create(ctx, &billing.CustomerCreateParams{Email: fmt.Sprintf("c%03d@shop.example", i), Name: "C"})
			assert.NoError(t, err)
		}()
	}
	wg.Wait()
	_, err := c.Customers.Create(ctx, &billing.CustomerCreateParams{Email: "other@elsewhere.example", Name: "O"})
	require.NoError(t, err)

	counter.n.Store(0)
	seen := map[string]int{}
	for cust, err := range c.Customers.List(ctx, &billing.CustomerListParams{ListParams: billing.ListParams{Limit: 100}, Email: "SHOP.EXAMPLE"}) {
		require.NoError(t, err)
		seen[cust.Email]++
	}
	assert.Len(t, seen, n)
	for email, times := range seen {
		assert.Equal(t, 1, times, email)
	}
	assert.EqualValues(t, 3, counter.n.Load(), "230 customers in pages of 100")

	counter.n.Store(0)
	for range c.Customers.List(ctx, &billing.CustomerListParams{ListParams: billing.ListParams{Limit: 10}}) {
		break
	}
	assert.EqualValues(t, 1, counter.n.Load(), "breaking out sends no further request")
}

func TestCustomersListFiltersByStatus(t *testing.T) {
	srv := billingtest.NewServer(t)
	c := srv.Client()
	ctx := context.Background()
	a, err := c.Customers.Create(ctx, &billing.CustomerCreateParams{Email: "a@example.com", Name: "A"})
	require.NoError(t, err)
	_, err = c.Customers.Create(ctx, &billing.CustomerCreateParams{Email: "b@example.com", Name: "B"})
	require.NoError(t, err)
	_, err = c.Customers.Update(ctx, a.ID, &billing.CustomerUpdateParams{Status: billing.CustomerStatusBlocked})
	require.NoError(t, err)

	page, err := c.Customers.ListPage(ctx, &billing.CustomerListParams{Status: billing.CustomerStatusBlocked})
	require.NoError(t, err)
	require.Len(t, page.Items, 1)
	assert.Equal(t, a.ID, page.Items[0].ID)
	assert.False(t, page.HasMore)
}

func TestCustomersAuthAndScopesAgainstTheSandbox(t *testing.T) {
	ctx := context.Background()
	t.Run("secret key", func(t *testing.T) {
		srv := billingtest.NewServer(t)
		c, err := billing.NewClient(billing.WithBaseURL(srv.URL), billing.WithSecretKey(srv.SecretKey))
		require.NoError(t, err)
		_, err = c.Customers.Create(ctx, &billing.CustomerCreateParams{Email: "a@example.com", Name: "A"})
		assert.NoError(t, err)
	})
	t.Run("wrong secret", func(t *testing.T) {
		srv := billingtest.NewServer(t)
		c := srv.Client(billing.WithClientCredentials(srv.ClientID, "wrong"))
		_, err := c.Customers.Get(ctx, "cust_1")
		assert.ErrorIs(t, err, billing.ErrUnauthorized)
	})
	t.Run("scope not granted", func(t *testing.T) {
		srv := billingtest.NewServer(t, billingtest.WithScopes("customers:read"))
		c := srv.Client()
		_, err := c.Customers.Create(ctx, &billing.CustomerCreateParams{Email: "a@example.com", Name: "A"})
		var apiErr *billing.APIError
		require.ErrorAs(t, err, &apiErr)
		assert.Equal(t, billing.CodeKeysMismatch, apiErr.Code)
		assert.Equal(t, http.StatusForbidden, apiErr.StatusCode)
		assert.ErrorIs(t, err, billing.ErrUnauthorized)
		_, err = c.Customers.ListPage(ctx, nil)
		assert.NoError(t, err, "the read scope is granted")
	})
	t.Run("allowlist does not apply to customers", func(t *testing.T) {
		srv := billingtest.NewServer(t, billingtest.WithAllowIPs(netip.MustParsePrefix("10.0.0.0/8")))
		_, err := srv.Client().Customers.ListPage(ctx, nil)
		assert.NoError(t, err)
	})
}

func TestSandboxRefusesWhatTheSDKWouldHaveCaught(t *testing.T) {
	// The SDK refuses these before sending; the sandbox refuses the same raw JSON on its
	// own, so neither side's validation hides a gap in the other.
	srv := billingtest.NewServer(t)
	for body, field := range map[string]string{
		`{"name":"A"}`:                "email",
		`{"email":"nope","name":"A"}`: "email",
		`{"email":"a@example.com"}`:   "name",
		`{"email":"a@example.com","name":"A","metadata":{"x":{"y":1}}}`: "metadata",
		`{"email":"a@example.com","name":"A","phone":"0241234567"}`:     "phone",
	} {
		req, err := http.NewRequest(http.MethodPost, srv.URL+"/v1/customers", stringsReader(body))
		require.NoError(t, err)
		req.SetBasicAuth(srv.ClientID, srv.ClientSecret)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		var env struct {
			Success bool   `json:"success"`
			Code    string `json:"code"`
			Field   string `json:"field"`
			Message string `json:"message"`
		}
		require.NoError(t, decodeJSON(resp, &env))
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode, body)
		assert.False(t, env.Success)
		assert.Equal(t, "4000", env.Code, body)
		assert.Contains(t, env.Field, field, body)
		assert.NotEmpty(t, env.Message)
	}
	page, err := srv.Client().Customers.ListPage(context.Background(), nil)
	require.NoError(t, err)
	assert.Empty(t, page.Items, "nothing was created")
}
