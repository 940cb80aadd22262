package billing

import (
	"net/http"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCreditsGetDecodesTheWallet(t *testing.T) {
	c, mock := newMockClient(t)
	mock.RegisterResponder(http.MethodGet, mockBaseURL+"/v1/credits/cust_1", fixtureResponder(t, 200, "credits/wallet.json"))

	w, err := c.Credits.Get(ctx(), "cust_1")
	require.NoError(t, err)
	assert.Equal(t, &CreditWallet{
		ID: "cwa_5d1e9a7c3b2f4e6a8c0d1e2f", Balance: 750, Currency: "GHS",
		CreatedAt: time.Date(2026, 11, 21, 9, 15, 2, 123e6, time.UTC),
		UpdatedAt: time.Date(2026, 11, 21, 10, 40, 0, 0, time.UTC),
	}, w)
}

func TestCreditsGrantSendsTheBodyAndDecodesTheChange(t *testing.T) {
	c, mock := newMockClient(t)
	var got map[string]any
	mock.RegisterResponder(http.MethodPost, mockBaseURL+"/v1/credits/cust_1/grant", func(r *http.Request) (*http.Response, error) {
		got = requestBody(t, r)
		return fixtureResponder(t, 200, "credits/grant.json")(r)
	})

	expires := time.Date(2027, 3, 1, 0, 0, 0, 0, time.UTC)
	change, err := c.Credits.Grant(ctx(), "cust_1", &CreditGrantParams{
		Amount: 1000, Description: "welcome bonus", ExpiresAt: expires, Metadata: Metadata{"campaign": "launch"},
	})
	require.NoError(t, err)
	assert.Equal(t, map[string]any{
		"amount": float64(1000), "description": "welcome bonus", "expiresAt": "2027-03-01T00:00:00Z",
		"metadata": map[string]any{"campaign": "launch"},
	}, got)
	assert.Equal(t, &CreditChange{
		Wallet: CreditWallet{ID: "cwa_5d1e9a7c3b2f4e6a8c0d1e2f", Balance: 1000, Currency: "GHS"},
		Transaction: CreditTransaction{
			ID: "ctx_0a1b2c3d4e5f60718293a4b5", Type: CreditTransactionTypeGrant, Amount: 1000,
			BalanceBefore: 0, BalanceAfter: 1000, Description: "welcome bonus", ExpiresAt: expires,
			Metadata: Metadata{"campaign": "launch"}, CreatedAt: time.Date(2026, 11, 21, 9, 15, 2, 123e6, time.UTC),
		},
	}, change)
}

func TestCreditsGrantSendsOnlyTheAmountWhenThatIsAllThereIs(t *testing.T) {
	c, mock := newMockClient(t)
	var got map[string]any
	mock.RegisterResponder(http.MethodPost, mockBaseURL+"/v1/credits/cust_1/grant", func(r *http.Request) (*http.Response, error) {
		got = requestBody(t, r)
		return fixtureResponder(t, 200, "credits/grant.json")(r)
	})
	_, err := c.Credits.Grant(ctx(), "cust_1", &CreditGrantParams{Amount: 5})
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"amount": float64(5)}, got)
}

func TestCreditsDeductDecodesTheUsageEntry(t *testing.T) {
	c, mock := newMockClient(t)
	var got map[string]any
	mock.RegisterResponder(http.MethodPost, mockBaseURL+"/v1/credits/cust_1/deduct", func(r *http.Request) (*http.Response, error) {
		got = requestBody(t, r)
		return fixtureResponder(t, 200, "credits/deduct.json")(r)
	})
	change, err := c.Credits.Deduct(ctx(), "cust_1", &CreditDeductParams{Amount: 250, Description: "api calls", Metadata: Metadata{"job": "j-7"}})
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"amount": float64(250), "description": "api calls", "metadata": map[string]any{"job": "j-7"}}, got)
	assert.Equal(t, int64(750), change.Wallet.Balance)
	assert.Equal(t, CreditTransactionTypeUsage, change.Transaction.Type)
	assert.Equal(t, [2]int64{1000, 750}, [2]int64{change.Transaction.BalanceBefore, change.Transaction.BalanceAfter})
	assert.True(t, change.Transaction.ExpiresAt.IsZero(), "null expiresAt")
}

func TestCreditsDeductBeyondTheBalanceIsItsOwnError(t *testing.T) {
	c, mock := newMockClient(t)
	mock.RegisterResponder(http.MethodPost, mockBaseURL+"/v1/credits/cust_1/deduct", fixtureResponder(t, 400, "credits/insufficient_credits.json"))
	_, err := c.Credits.Deduct(ctx(), "cust_1", &CreditDeductParams{Amount: 5000})
	require.ErrorIs(t, err, ErrInsufficientCredits)
	require.ErrorIs(t, err, ErrInvalidRequest, "still a refused request")
	var apiErr *APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, "amount", apiErr.Field)
	assert.Equal(t, "a deduct of 5000 credits exceeds the balance of 700", apiErr.Message)

	mock.RegisterResponder(http.MethodPost, mockBaseURL+"/v1/credits/cust_1/grant", fixtureResponder(t, 400, "errors/validation.json"))
	_, err = c.Credits.Grant(ctx(), "cust_1", &CreditGrantParams{Amount: 5})
	require.ErrorIs(t, err, ErrInvalidRequest)
	assert.NotErrorIs(t, err, ErrInsufficientCredits, "other 400s are not about the balance")
}

func TestCreditsDeductIsNotResentAfterAServerError(t *testing.T) {
	c, mock := newMockClient(t, WithRetry(4, 0, 0))
	mock.RegisterResponder(http.MethodPost, mockBaseURL+"/v1/credits/cust_1/deduct", httpmock.NewStringResponder(503, `{"success":false,"message":"busy","code":"internal_error"}`))
	_, err := c.Credits.Deduct(ctx(), "cust_1", &CreditDeductParams{Amount: 5})
	var apiErr *APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, 503, apiErr.StatusCode)
	assert.Equal(t, 1, mock.GetTotalCallCount(), "a deduct could be applied twice")
}

func TestCreditsTransactionsWalksTheLedger(t *testing.T) {
	c, mock := newMockClient(t)
	var queries []string
	mock.RegisterResponder(http.MethodGet, mockBaseURL+"/v1/credits/cust_1/transactions", pagedResponder(t, "credits/transactions_page1.json", "credits/transactions_page2.json", &queries))

	params := &CreditTransactionListParams{ListParams: ListParams{Limit: 2}}
	var entries []*CreditTransaction
	for tx, err := range c.Credits.Transactions(ctx(), "cust_1", params) {
		require.NoError(t, err)
		entries = append(entries, tx)
	}
	require.Len(t, entries, 3)
	assert.Equal(t, []string{"limit=2", "cursor=Y3R4XzFiMmMzZDRlNWY2MDcxODI5M2E0YjVjNg&limit=2"}, queries)
	assert.Equal(t, &CreditTransactionListParams{ListParams: ListParams{Limit: 2}}, params, "params untouched")
	assert.Equal(t, CreditTransaction{
		ID: "ctx_2c3d4e5f60718293a4b5c6d7", Type: CreditTransactionTypeUsage, Amount: 50, BalanceBefore: 750,
		BalanceAfter: 700, Description: "report", CreatedAt: time.Date(2026, 11, 21, 11, 0, 0, 0, time.UTC),
	}, *entries[0])
	assert.Equal(t, CreditTransactionTypeGrant, entries[2].Type)
	assert.Empty(t, entries[2].Description, "null description")

	page, err := c.Credits.TransactionsPage(ctx(), "cust_1", &CreditTransactionListParams{Type: CreditTransactionTypeUsage})
	require.NoError(t, err)
	assert.Equal(t, "type=USAGE", queries[len(queries)-1])
	assert.True(t, page.HasMore)
	assert.Len(t, page.Items, 2)
}

func TestCreditsRefuseACustomerIDOfMoreThanOneSegment(t *testing.T) {
	requireRefusedBeforeSending(t, map[string]refusal{
		"slash": {func(c *Client) error { _, err := c.Credits.Get(ctx(), "cust/../x"); return err }, "customerId"},
	})
}

func TestCreditsValidationSendsNothing(t *testing.T) {
	requireRefusedBeforeSending(t, map[string]refusal{
		"get customer": {func(c *Client) error { _, err := c.Credits.Get(ctx(), " "); return err }, "customerId"},
		"grant customer": {func(c *Client) error {
			_, err := c.Credits.Grant(ctx(), "", &CreditGrantParams{Amount: 1})
			return err
		}, "customerId"},
		"grant nil":    {func(c *Client) error { _, err := c.Credits.Grant(ctx(), "cust_1", nil); return err }, "params"},
		"grant amount": {func(c *Client) error { _, err := c.Credits.Grant(ctx(), "cust_1", &CreditGrantParams{}); return err }, "amount"},
		"grant negative": {func(c *Client) error {
			_, err := c.Credits.Grant(ctx(), "cust_1", &CreditGrantParams{Amount: -10})
			return err
		}, "amount"},
		"grant metadata": {func(c *Client) error {
			_, err := c.Credits.Grant(ctx(), "cust_1", &CreditGrantParams{Amount: 1, Metadata: Metadata{"a": []int{1}}})
			return err
		}, "metadata.a"},
		"deduct customer": {func(c *Client) error {
			_, err := c.Credits.Deduct(ctx(), "", &CreditDeductParams{Amount: 1})
			return err
		}, "customerId"},
		"deduct nil":  {func(c *Client) error { _, err := c.Credits.Deduct(ctx(), "cust_1", nil); return err }, "params"},
		"deduct zero": {func(c *Client) error { _, err := c.Credits.Deduct(ctx(), "cust_1", &CreditDeductParams{}); return err }, "amount"},
		"deduct metadata": {func(c *Client) error {
			_, err := c.Credits.Deduct(ctx(), "cust_1", &CreditDeductParams{Amount: 1, Metadata: Metadata{"": 1}})
			return err
		}, "metadata"},
		"ledger customer": {func(c *Client) error { _, err := c.Credits.TransactionsPage(ctx(), "", nil); return err }, "customerId"},
		"ledger type": {func(c *Client) error {
			_, err := c.Credits.TransactionsPage(ctx(), "cust_1", &CreditTransactionListParams{Type: "usage"})
			return err
		}, "type"},
		"ledger limit": {func(c *Client) error {
			_, err := c.Credits.TransactionsPage(ctx(), "cust_1", &CreditTransactionListParams{ListParams: ListParams{Limit: 101}})
			return err
		}, "limit"},
		"ledger iterator": {func(c *Client) error {
			return firstIterError(c.Credits.Transactions(ctx(), "cust_1", &CreditTransactionListParams{Type: "BONUS"}))
		}, "type"},
	})
}

// pagedResponder answers a list request with the first fixture when it has no cursor and
// the second when it has one, recording each query string.
func pagedResponder(t *testing.T, first, second string, queries *[]string) httpmock.Responder {
	return func(r *http.Request) (*http.Response, error) {
		*queries = append(*queries, r.URL.RawQuery)
		if r.URL.Query().Get("cursor") == "" {
			return fixtureResponder(t, 200, first)(r)
		}
		return fixtureResponder(t, 200, second)(r)
	}
}
