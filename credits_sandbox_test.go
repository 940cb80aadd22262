package billing_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
)

// newWalletOwner registers a customer to hold a wallet.
func newWalletOwner(t *testing.T, c *billing.Client) string {
	t.Helper()
	cust, err := c.Customers.Create(context.Background(), &billing.CustomerCreateParams{
		Email: fmt.Sprintf("owner.%d@example.com", time.Now().UnixNano()), Name: "Wallet Owner",
	})
	require.NoError(t, err)
	return cust.ID
}

// walletLedger reads a customer's whole ledger through the SDK, oldest entry first.
func walletLedger(t *testing.T, c *billing.Client, customerID string) []billing.CreditTransaction {
	t.Helper()
	var entries []billing.CreditTransaction
	for tx, err := range c.Credits.Transactions(context.Background(), customerID, &billing.CreditTransactionListParams{ListParams: billing.ListParams{Limit: 100}}) {
		require.NoError(t, err)
		entries = append(entries, *tx)
	}
	slices.Reverse(entries)
	return entries
}

// requireLedgerChain checks every entry starts at the balance the previous one left,
// moves it by its amount in its type's direction, and that the chain ends at balance.
func requireLedgerChain(t *testing.T, entries []billing.CreditTransaction, balance int64) {
	t.Helper()
	var running int64
	for i, e := range entries {
		require.Equal(t, running, e.BalanceBefore, "entry %d (%s) starts where the last ended", i, e.Type)
		delta := -e.Amount
		if e.Type == billing.CreditTransactionTypeGrant {
			delta = e.Amount
		}
		require.Equal(t, e.BalanceBefore+delta, e.BalanceAfter, "entry %d (%s)", i, e.Type)
		running = e.BalanceAfter
	}
	require.Equal(t, balance, running)
}

func TestCreditsAgainstTheSandbox(t *testing.T) {
	srv := billingtest.NewServer(t, billingtest.WithManualClock())
	c := srv.Client(billing.WithSecretKey(srv.SecretKey))
	ctx := context.Background()
	id := newWalletOwner(t, c)

	_, err := c.Credits.Get(ctx, id)
	require.ErrorIs(t, err, billing.ErrNotFound, "no wallet before the first grant")

	expires := srv.Now().Add(30 * 24 * time.Hour)
	g, err := c.Credits.Grant(ctx, id, &billing.CreditGrantParams{Amount: 500, Description: "trial credits", ExpiresAt: expires, Metadata: billing.Metadata{"plan": "trial"}})
	require.NoError(t, err)
	assert.Equal(t, int64(500), g.Wallet.Balance)
	assert.Equal(t, "GHS", g.Wallet.Currency)
	assert.Equal(t, billing.CreditTransaction{
		ID: g.Transaction.ID, Type: billing.CreditTransactionTypeGrant, Amount: 500, BalanceBefore: 0, BalanceAfter: 500,
		Description: "trial credits", ExpiresAt: expires, Metadata: billing.Metadata{"plan": "trial"}, CreatedAt: srv.Now(),
	}, g.Transaction)

	_, err = c.Credits.Grant(ctx, id, &billing.CreditGrantParams{Amount: 200})
	require.NoError(t, err)
	srv.Advance(time.Hour)
	d, err := c.Credits.Deduct(ctx, id, &billing.CreditDeductParams{Amount: 100, Description: "report"})
	require.NoError(t, err)
	assert.Equal(t, g.Wallet.ID, d.Wallet.ID)
	assert.Equal(t, int64(600), d.Wallet.Balance)
	assert.Equal(t, billing.CreditTransactionTypeUsage, d.Transaction.Type)

	_, err = c.Credits.Deduct(ctx, id, &billing.CreditDeductParams{Amount: 601})
	require.ErrorIs(t, err, billing.ErrInsufficientCredits)
	w, err := c.Credits.Get(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, int64(600), w.Balance, "the refused deduct took nothing")
	assert.Equal(t, srv.Now(), w.UpdatedAt)
	require.Len(t, walletLedger(t, c, id), 3, "and wrote nothing")

	grants, err := c.Credits.TransactionsPage(ctx, id, &billing.CreditTransactionListParams{Type: billing.CreditTransactionTypeGrant})
	require.NoError(t, err)
	assert.Len(t, grants.Items, 2)

	// The trial grant expires: 100 was drawn from it (it expires first), so 400 is written off.
	srv.Advance(30 * 24 * time.Hour)
	w, err = c.Credits.Get(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, int64(200), w.Balance)
	entries := walletLedger(t, c, id)
	require.Len(t, entries, 4)
	assert.Equal(t, billing.CreditTransactionTypeExpiry, entries[3].Type)
	assert.Equal(t, int64(400), entries[3].Amount)
	assert.Equal(t, expires, entries[3].CreatedAt)
	requireLedgerChain(t, entries, 200)
}

func TestCreditsUnknownCustomer(t *testing.T) {
	srv := billingtest.NewServer(t)
	c := srv.Client()
	_, err := c.Credits.Grant(context.Background(), "cust_missing", &billing.CreditGrantParams{Amount: 1})
	require.ErrorIs(t, err, billing.ErrNotFound)
	_, err = c.Credits.TransactionsPage(context.Background(), "cust_missing", nil)
	require.ErrorIs(t, err, billing.ErrNotFound)
}

func TestCreditsSandboxRefusesAnExpiryInThePast(t *testing.T) {
	srv := billingtest.NewServer(t, billingtest.WithManualClock())
	c := srv.Client()
	id := newWalletOwner(t, c)
	_, err := c.Credits.Grant(context.Background(), id, &billing.CreditGrantParams{Amount: 1, ExpiresAt: srv.Now().Add(-time.Second)})
	var apiErr *billing.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, "expiresAt", apiErr.Field)
	assert.ErrorIs(t, err, billing.ErrInvalidRequest)
}

func TestCreditsConcurrentGrantsAndDeductsThroughTheSDK(t *testing.T) {
	srv := billingtest.NewServer(t)
	c := srv.Client()
	ctx := context.Background()
	id := newWalletOwner(t, c)
	const start = 10_000
	_, err := c.Credits.Grant(ctx, id, &billing.CreditGrantParams{Amount: start})
	require.NoError(t, err)

	const workers, rounds = 16, 20
	var wg sync.WaitGroup
	var mu sync.Mutex
	want := int64(start)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				amount := int64(1 + (w*rounds+r)%7)
				var err error
				if (w+r)%2 == 0 {
					_, err = c.Credits.Grant(ctx, id, &billing.CreditGrantParams{Amount: amount})
					amount = -amount
				} else {
					_, err = c.Credits.Deduct(ctx, id, &billing.CreditDeductParams{Amount: amount})
				}
				if !assert.NoError(t, err) {
					return
				}
				mu.Lock()
				want -= amount
				mu.Unlock()
			}
		}()
	}
	wg.Wait()

	w, err := c.Credits.Get(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, want, w.Balance, "no update lost")
	entries := walletLedger(t, c, id)
	assert.Len(t, entries, 1+workers*rounds)
	requireLedgerChain(t, entries, want)
}

func TestCreditsRacingDeductsNeverOverdrawThroughTheSDK(t *testing.T) {
	srv := billingtest.NewServer(t)
	c := srv.Client()
	ctx := context.Background()
	id := newWalletOwner(t, c)
	_, err := c.Credits.Grant(ctx, id, &billing.CreditGrantParams{Amount: 90})
	require.NoError(t, err)

	var wg sync.WaitGroup
	var mu sync.Mutex
	var ok, refused int
	for range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := c.Credits.Deduct(ctx, id, &billing.CreditDeductParams{Amount: 10})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				ok++
			case assert.ErrorIs(t, err, billing.ErrInsufficientCredits):
				refused++
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, [2]int{9, 31}, [2]int{ok, refused})
	w, err := c.Credits.Get(ctx, id)
	require.NoError(t, err)
	assert.Zero(t, w.Balance)
	requireLedgerChain(t, walletLedger(t, c, id), 0)
}
