package sandbox

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// walletJSON and creditTxJSON decode a wallet and a ledger entry as a client would.
type walletJSON struct {
	ID        string `json:"id"`
	Balance   int64  `json:"balance"`
	Currency  string `json:"currency"`
	CreatedAt string `json:"createdAt"`
	UpdatedAt string `json:"updatedAt"`
}

type creditTxJSON struct {
	ID            string         `json:"id"`
	Type          string         `json:"type"`
	Amount        int64          `json:"amount"`
	BalanceBefore int64          `json:"balanceBefore"`
	BalanceAfter  int64          `json:"balanceAfter"`
	Description   *string        `json:"description"`
	ExpiresAt     *string        `json:"expiresAt"`
	Metadata      map[string]any `json:"metadata"`
	CreatedAt     string         `json:"createdAt"`
}

type creditChangeJSON struct {
	Wallet      walletJSON   `json:"wallet"`
	Transaction creditTxJSON `json:"transaction"`
}

type ledgerPage struct {
	Items      []creditTxJSON `json:"items"`
	NextCursor string         `json:"nextCursor"`
	HasMore    bool           `json:"hasMore"`
}

// newCustomerID creates a customer and returns its id.
func creditCustomer(tb testing.TB, s *Server) string {
	tb.Helper()
	return createCustomer(tb, s, map[string]any{"email": newID("c") + "@example.com", "name": "Wallet Owner"}).ID
}

func postGrant(tb testing.TB, s *Server, customerID string, body any) creditChangeJSON {
	tb.Helper()
	return decode[creditChangeJSON](tb, serve(tb, s, http.MethodPost, "/v1/credits/"+customerID+"/grant", basicHeader, body), http.StatusOK).Data
}

func postDeduct(tb testing.TB, s *Server, customerID string, body any) creditChangeJSON {
	tb.Helper()
	return decode[creditChangeJSON](tb, serve(tb, s, http.MethodPost, "/v1/credits/"+customerID+"/deduct", basicHeader, body), http.StatusOK).Data
}

func creditBalance(tb testing.TB, s *Server, customerID string) int64 {
	tb.Helper()
	return decode[walletJSON](tb, serve(tb, s, http.MethodGet, "/v1/credits/"+customerID, basicHeader, nil), http.StatusOK).Data.Balance
}

// creditLedger returns every entry of the customer's ledger, oldest first.
func creditLedger(tb testing.TB, s *Server, customerID string) []creditTxJSON {
	tb.Helper()
	var all []creditTxJSON
	cursor := ""
	for {
		p := decode[ledgerPage](tb, serve(tb, s, http.MethodGet, "/v1/credits/"+customerID+"/transactions?limit=100&cursor="+cursor, basicHeader, nil), http.StatusOK).Data
		all = append(all, p.Items...)
		if !p.HasMore {
			break
		}
		cursor = p.NextCursor
	}
	slices.Reverse(all)
	return all
}

// requireConsistentLedger checks that each entry starts where the one before
// ended, moves the balance by its amount in its type's direction, and that
// the last one ends at the balance.
func requireConsistentLedger(tb testing.TB, entries []creditTxJSON, balance int64) {
	tb.Helper()
	var running int64
	for i, e := range entries {
		require.Positive(tb, e.Amount, "entry %d", i)
		require.Equal(tb, running, e.BalanceBefore, "entry %d starts where the last ended", i)
		delta := e.Amount
		if e.Type != "GRANT" {
			delta = -delta
		}
		require.Equal(tb, e.BalanceBefore+delta, e.BalanceAfter, "entry %d (%s)", i, e.Type)
		running = e.BalanceAfter
	}
	require.Equal(tb, balance, running, "the ledger ends at the balance")
}

func TestGrantOpensTheWalletAndDeductDrawsOnIt(t *testing.T) {
	s := newTestServer(t, Config{})
	id := creditCustomer(t, s)
	requireError(t, serve(t, s, http.MethodGet, "/v1/credits/"+id, basicHeader, nil), http.StatusNotFound, CodeNotFound, "", "credit wallet of customer")
	assert.Empty(t, creditLedger(t, s, id), "no wallet, an empty ledger")

	g := postGrant(t, s, id, map[string]any{"amount": 500, "description": "welcome bonus", "metadata": map[string]any{"campaign": "launch"}})
	assert.Regexp(t, `^cwa_[0-9a-f]{24}$`, g.Wallet.ID)
	assert.Equal(t, int64(500), g.Wallet.Balance)
	assert.Equal(t, "GHS", g.Wallet.Currency)
	assert.Regexp(t, `^ctx_[0-9a-f]{24}$`, g.Transaction.ID)
	assert.Equal(t, creditTxJSON{ID: g.Transaction.ID, Type: "GRANT", Amount: 500, BalanceBefore: 0, BalanceAfter: 500,
		Description: creditStr("welcome bonus"), Metadata: map[string]any{"campaign": "launch"}, CreatedAt: "2025-01-02T03:04:05.000Z"}, g.Transaction)

	s.Advance(time.Minute)
	d := postDeduct(t, s, id, map[string]any{"amount": 200, "description": "api calls"})
	assert.Equal(t, g.Wallet.ID, d.Wallet.ID, "one wallet per customer")
	assert.Equal(t, int64(300), d.Wallet.Balance)
	assert.Equal(t, "USAGE", d.Transaction.Type)
	assert.Equal(t, [2]int64{500, 300}, [2]int64{d.Transaction.BalanceBefore, d.Transaction.BalanceAfter})
	assert.Nil(t, d.Transaction.ExpiresAt)

	w := decode[walletJSON](t, serve(t, s, http.MethodGet, "/v1/credits/"+id, secretHeader, nil), http.StatusOK).Data
	assert.Equal(t, walletJSON{ID: g.Wallet.ID, Balance: 300, Currency: "GHS", CreatedAt: "2025-01-02T03:04:05.000Z", UpdatedAt: "2025-01-02T03:05:05.000Z"}, w)

	entries := creditLedger(t, s, id)
	require.Len(t, entries, 2)
	assert.Equal(t, []string{"GRANT", "USAGE"}, []string{entries[0].Type, entries[1].Type})
	requireConsistentLedger(t, entries, 300)
}

func TestLedgerListShowsTheSpecFieldsAndFiltersByType(t *testing.T) {
	s := newTestServer(t, Config{})
	id := creditCustomer(t, s)
	postGrant(t, s, id, map[string]any{"amount": 100, "expiresAt": "2025-02-01T00:00:00Z", "metadata": map[string]any{"k": "v"}})
	postDeduct(t, s, id, map[string]any{"amount": 30})
	postDeduct(t, s, id, map[string]any{"amount": 20})

	rec := serve(t, s, http.MethodGet, "/v1/credits/"+id+"/transactions?type=USAGE&limit=1", basicHeader, nil)
	var raw struct {
		Data struct {
			Items      []map[string]any `json:"items"`
			NextCursor string           `json:"nextCursor"`
			HasMore    bool             `json:"hasMore"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &raw))
	require.Len(t, raw.Data.Items, 1)
	assert.ElementsMatch(t, []string{"id", "type", "amount", "balanceBefore", "balanceAfter", "description", "createdAt"},
		slices.Collect(maps.Keys(raw.Data.Items[0])), "the list shows the spec's fields")
	assert.Equal(t, float64(20), raw.Data.Items[0]["amount"], "newest first")
	assert.True(t, raw.Data.HasMore)

	next := decode[ledgerPage](t, serve(t, s, http.MethodGet, "/v1/credits/"+id+"/transactions?type=USAGE&limit=1&cursor="+raw.Data.NextCursor, basicHeader, nil), http.StatusOK).Data
	require.Len(t, next.Items, 1)
	assert.Equal(t, int64(30), next.Items[0].Amount)
	assert.False(t, next.HasMore)

	grants := decode[ledgerPage](t, serve(t, s, http.MethodGet, "/v1/credits/"+id+"/transactions?type=GRANT", basicHeader, nil), http.StatusOK).Data
	require.Len(t, grants.Items, 1)
	assert.Equal(t, "GRANT", grants.Items[0].Type)
	none := decode[ledgerPage](t, serve(t, s, http.MethodGet, "/v1/credits/"+id+"/transactions?type=REFUND", basicHeader, nil), http.StatusOK).Data
	assert.Empty(t, none.Items)
}

func TestDeductBeyondTheBalanceIsRefusedAndWritesNothing(t *testing.T) {
	s := newTestServer(t, Config{})
	id := creditCustomer(t, s)

	rec := serve(t, s, http.MethodPost, "/v1/credits/"+id+"/deduct", basicHeader, map[string]any{"amount": 1})
	requireError(t, rec, http.StatusBadRequest, CodeInsufficientCredits, "amount", "exceeds the balance of 0")
	requireError(t, serve(t, s, http.MethodGet, "/v1/credits/"+id, basicHeader, nil), http.StatusNotFound, CodeNotFound, "", "credit wallet")

	postGrant(t, s, id, map[string]any{"amount": 100})
	rec = serve(t, s, http.MethodPost, "/v1/credits/"+id+"/deduct", basicHeader, map[string]any{"amount": 101})
	requireError(t, rec, http.StatusBadRequest, CodeInsufficientCredits, "amount", "a deduct of 101 credits exceeds the balance of 100")
	assert.Equal(t, int64(100), creditBalance(t, s, id))
	assert.Len(t, creditLedger(t, s, id), 1, "no entry for the refused deduct")

	assert.Equal(t, int64(0), postDeduct(t, s, id, map[string]any{"amount": 100}).Wallet.Balance, "the whole balance can be spent")
}

func TestCreditRules(t *testing.T) {
	s := newTestServer(t, Config{})
	id := creditCustomer(t, s)
	postGrant(t, s, id, map[string]any{"amount": 50})
	for _, tc := range []struct {
		name, op, body, field, message string
	}{
		{"grant amount missing", "grant", `{}`, "amount", "amount is required"},
		{"grant amount null", "grant", `{"amount":null}`, "amount", "amount is required"},
		{"grant amount zero", "grant", `{"amount":0}`, "amount", "amount must be a positive integer"},
		{"grant amount negative", "grant", `{"amount":-5}`, "amount", "amount must be a positive integer"},
		{"grant amount decimal", "grant", `{"amount":10.5}`, "amount", "amount must be a positive integer"},
		{"grant amount exponent", "grant", `{"amount":1e3}`, "amount", "amount must be a positive integer"},
		{"grant amount string", "grant", `{"amount":"10"}`, "amount", "amount must be a positive integer"},
		{"grant amount too large", "grant", `{"amount":9223372036854775807}`, "amount", "beyond"},
		{"grant description type", "grant", `{"amount":1,"description":5}`, "description", "description must be a string"},
		{"grant expiresAt shape", "grant", `{"amount":1,"expiresAt":"next week"}`, "expiresAt", "RFC 3339"},
		{"grant expiresAt now", "grant", `{"amount":1,"expiresAt":"2025-01-02T03:04:05Z"}`, "expiresAt", "expiresAt must be in the future"},
		{"grant expiresAt past", "grant", `{"amount":1,"expiresAt":"2024-12-31T00:00:00Z"}`, "expiresAt", "expiresAt must be in the future"},
		{"grant metadata nested", "grant", `{"amount":1,"metadata":{"a":{"b":1}}}`, "metadata", "must be flat"},
		{"grant not an object", "grant", `[1]`, "", "JSON object"},
		{"deduct amount missing", "deduct", `{"description":"x"}`, "amount", "amount is required"},
		{"deduct amount zero", "deduct", `{"amount":0}`, "amount", "amount must be a positive integer"},
		{"deduct amount decimal", "deduct", `{"amount":0.5}`, "amount", "amount must be a positive integer"},
		{"deduct metadata array", "deduct", `{"amount":1,"metadata":[1]}`, "metadata", "metadata must be an object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := serve(t, s, http.MethodPost, "/v1/credits/"+id+"/"+tc.op, basicHeader, tc.body)
			requireError(t, rec, http.StatusBadRequest, CodeValidation, tc.field, tc.message)
			assert.Equal(t, int64(50), creditBalance(t, s, id), "nothing changed")
			assert.Len(t, creditLedger(t, s, id), 1, "nothing written")
		})
	}
}

func TestCreditsOfAnUnknownCustomer(t *testing.T) {
	s := newTestServer(t, Config{})
	for _, tc := range []struct{ method, path, body string }{
		{http.MethodGet, "/v1/credits/cust_missing", ""},
		{http.MethodPost, "/v1/credits/cust_missing/grant", `{"amount":1}`},
		{http.MethodPost, "/v1/credits/cust_missing/deduct", `{"amount":1}`},
		{http.MethodGet, "/v1/credits/cust_missing/transactions", ""},
	} {
		var body any
		if tc.body != "" {
			body = tc.body
		}
		requireError(t, serve(t, s, tc.method, tc.path, basicHeader, body), http.StatusNotFound, CodeNotFound, "", `customer "cust_missing" not found`)
	}
	assert.Empty(t, s.credits.byCustomer, "no wallet was opened")
}

func TestLedgerQueryRules(t *testing.T) {
	s := newTestServer(t, Config{})
	id := creditCustomer(t, s)
	for query, field := range map[string]string{
		"type=usage":   "type",
		"type=BONUS":   "type",
		"limit=0":      "limit",
		"limit=101":    "limit",
		"cursor=bogus": "cursor",
	} {
		rec := serve(t, s, http.MethodGet, "/v1/credits/"+id+"/transactions?"+query, basicHeader, nil)
		requireError(t, rec, http.StatusBadRequest, CodeValidation, field, field)
	}
}

func TestCreditScopes(t *testing.T) {
	s := newTestServer(t, Config{Scopes: []string{ScopeCustomersWrite, ScopeCreditsRead}})
	id := creditCustomer(t, s)
	requireError(t, serve(t, s, http.MethodPost, "/v1/credits/"+id+"/grant", basicHeader, `{"amount":1}`), http.StatusForbidden, CodeKeysMismatch, "", ScopeCreditsWrite)
	requireError(t, serve(t, s, http.MethodPost, "/v1/credits/"+id+"/deduct", basicHeader, `{"amount":1}`), http.StatusForbidden, CodeKeysMismatch, "", ScopeCreditsWrite)
	assert.Empty(t, creditLedger(t, s, id), "reads stay open with credits:read")

	readOnly := newTestServer(t, Config{Scopes: []string{ScopeCreditsWrite}})
	requireError(t, serve(t, readOnly, http.MethodGet, "/v1/credits/cust_1", basicHeader, nil), http.StatusForbidden, CodeKeysMismatch, "", ScopeCreditsRead)
	requireError(t, serve(t, readOnly, http.MethodGet, "/v1/credits/cust_1/transactions", basicHeader, nil), http.StatusForbidden, CodeKeysMismatch, "", ScopeCreditsRead)
}

func TestDeductsDrawOnTheSoonestExpiringGrantAndTheRestExpires(t *testing.T) {
	s := newTestServer(t, Config{})
	id := creditCustomer(t, s)
	day := 24 * time.Hour
	at := func(d time.Duration) string { return testStart.Add(d).Format(time.RFC3339) }

	a := postGrant(t, s, id, map[string]any{"amount": 100, "expiresAt": at(10 * day)}).Transaction
	assert.Equal(t, creditStr("2025-01-12T03:04:05.000Z"), a.ExpiresAt, "a grant entry carries its expiry")
	b := postGrant(t, s, id, map[string]any{"amount": 100, "expiresAt": at(5 * day)}).Transaction
	postGrant(t, s, id, map[string]any{"amount": 50})                                            // never expires: drawn last
	c := postGrant(t, s, id, map[string]any{"amount": 30, "expiresAt": at(5 * day)}).Transaction // same expiry as b: after b
	require.Equal(t, int64(280), creditBalance(t, s, id))

	// 120 takes all of b (soonest, granted first), then 20 of c; a and the open grant are untouched.
	postDeduct(t, s, id, map[string]any{"amount": 120})

	s.Advance(5*day - time.Second)
	assert.Equal(t, int64(160), creditBalance(t, s, id), "nothing expires before its moment")

	s.Advance(time.Second)
	entries := creditLedger(t, s, id)
	require.Len(t, entries, 6, "b was used up and expires silently; c's remaining 10 expire")
	expiry := entries[5]
	assert.Equal(t, "EXPIRY", expiry.Type)
	assert.Equal(t, int64(10), expiry.Amount)
	assert.Equal(t, "2025-01-07T03:04:05.000Z", expiry.CreatedAt, "dated at the grant's expiry")
	assert.Equal(t, "unused credits of grant "+c.ID+" expired", *expiry.Description)
	assert.NotContains(t, *expiry.Description, b.ID)
	assert.Equal(t, int64(150), creditBalance(t, s, id))

	s.Advance(5 * day)
	entries = creditLedger(t, s, id)
	require.Len(t, entries, 7)
	assert.Equal(t, "unused credits of grant "+a.ID+" expired", *entries[6].Description)
	assert.Equal(t, int64(100), entries[6].Amount)
	assert.Equal(t, int64(50), creditBalance(t, s, id), "only the grant without expiry is left")
	requireConsistentLedger(t, entries, 50)

	requireError(t, serve(t, s, http.MethodPost, "/v1/credits/"+id+"/deduct", basicHeader, `{"amount":51}`), http.StatusBadRequest, CodeInsufficientCredits, "amount", "balance of 50")
	postDeduct(t, s, id, map[string]any{"amount": 50})
	s.Advance(365 * day)
	assert.Equal(t, int64(0), creditBalance(t, s, id))
}

func TestGrantsInterleavedWithDeductsExpireOnlyTheirOwnRemainder(t *testing.T) {
	s := newTestServer(t, Config{})
	id := creditCustomer(t, s)
	hour := time.Hour
	postGrant(t, s, id, map[string]any{"amount": 40, "expiresAt": testStart.Add(2 * hour).Format(time.RFC3339)})
	postDeduct(t, s, id, map[string]any{"amount": 25})
	s.Advance(hour)
	postGrant(t, s, id, map[string]any{"amount": 40, "expiresAt": testStart.Add(3 * hour).Format(time.RFC3339)})
	postDeduct(t, s, id, map[string]any{"amount": 25}) // 15 from the first grant, 10 from the second
	s.Advance(hour)
	assert.Equal(t, int64(30), creditBalance(t, s, id), "the first grant was used up: nothing left to expire")
	s.Advance(hour)
	entries := creditLedger(t, s, id)
	assert.Equal(t, "EXPIRY", entries[len(entries)-1].Type)
	assert.Equal(t, int64(30), entries[len(entries)-1].Amount)
	requireConsistentLedger(t, entries, 0)
}

// creditLateClock is a clock other than ManualClock, so the sandbox's background
// runner is the one meant to run due work; the test moves it by hand.
type creditLateClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *creditLateClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *creditLateClock) step(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func TestExpiredCreditsAreNotSpentWhileTheExpiryTaskIsLate(t *testing.T) {
	clock := &creditLateClock{now: testStart}
	s := newTestServer(t, Config{Clock: clock})
	id := creditCustomer(t, s)
	postGrant(t, s, id, map[string]any{"amount": 70, "expiresAt": testStart.Add(time.Hour).Format(time.RFC3339)})
	postGrant(t, s, id, map[string]any{"amount": 5})

	// The runner sleeps on an hour-long real timer; the sandbox time jumps past the
	// expiry without waking it, as a late wake-up would look.
	clock.step(2 * time.Hour)
	rec := serve(t, s, http.MethodPost, "/v1/credits/"+id+"/deduct", basicHeader, `{"amount":10}`)
	requireError(t, rec, http.StatusBadRequest, CodeInsufficientCredits, "amount", "balance of 5")
	entries := creditLedger(t, s, id)
	require.Len(t, entries, 3)
	assert.Equal(t, "EXPIRY", entries[2].Type)
	assert.Equal(t, "2025-01-02T04:04:05.000Z", entries[2].CreatedAt)
	requireConsistentLedger(t, entries, 5)
}

func TestConcurrentGrantsAndDeductsLoseNoUpdate(t *testing.T) {
	s := newTestServer(t, Config{})
	id := creditCustomer(t, s)
	postGrant(t, s, id, map[string]any{"amount": 1000})
	const workers, rounds = 16, 25
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				path := "/v1/credits/" + id + "/grant"
				if (w+r)%2 == 1 {
					path = "/v1/credits/" + id + "/deduct"
				}
				rec := serve(t, s, http.MethodPost, path, basicHeader, fmt.Sprintf(`{"amount":%d}`, 1+w%3))
				if rec.Code != http.StatusOK {
					t.Errorf("%s: %d %s", path, rec.Code, rec.Body)
				}
			}
		}()
	}
	wg.Wait()
	var want int64 = 1000
	for w := range workers {
		for r := range rounds {
			if (w+r)%2 == 1 {
				want -= int64(1 + w%3)
			} else {
				want += int64(1 + w%3)
			}
		}
	}
	assert.Equal(t, want, creditBalance(t, s, id))
	entries := creditLedger(t, s, id)
	assert.Len(t, entries, 1+workers*rounds)
	requireConsistentLedger(t, entries, want)
}

func TestRacingDeductsNeverOverdraw(t *testing.T) {
	s := newTestServer(t, Config{})
	id := creditCustomer(t, s)
	postGrant(t, s, id, map[string]any{"amount": 100})
	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses := map[int]int{}
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rec := serve(t, s, http.MethodPost, "/v1/credits/"+id+"/deduct", basicHeader, `{"amount":10}`)
			mu.Lock()
			statuses[rec.Code]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	assert.Equal(t, map[int]int{http.StatusOK: 10, http.StatusBadRequest: 40}, statuses)
	assert.Equal(t, int64(0), creditBalance(t, s, id))
	requireConsistentLedger(t, creditLedger(t, s, id), 0)
}

// requireWireShapeOf checks that a recorded fixture of the SDK's tests has the
// same object keys, at every depth, as the sandbox's answer, so the fixtures
// cannot drift from the wire the sandbox speaks.
func requireWireShapeOf(tb testing.TB, fixture string, body []byte) {
	tb.Helper()
	recorded, err := os.ReadFile(filepath.Join("..", "..", "testdata", fixture))
	require.NoError(tb, err)
	var want, got any
	require.NoError(tb, json.Unmarshal(recorded, &want))
	require.NoError(tb, json.Unmarshal(body, &got))
	require.Equal(tb, wireShape(want), wireShape(got), "fixture %s against %s", fixture, body)
}

// wireShape keeps the keys of a JSON value and the kinds of its leaves; an
// array is shown by its first element, null as "null".
func wireShape(v any) any {
	switch x := v.(type) {
	case map[string]any:
		shape := make(map[string]any, len(x))
		for k, e := range x {
			shape[k] = wireShape(e)
		}
		return shape
	case []any:
		if len(x) == 0 {
			return []any{}
		}
		return []any{wireShape(x[0])}
	case nil:
		return "null"
	default:
		return fmt.Sprintf("%T", x)
	}
}

func TestCreditFixturesMatchTheSandbox(t *testing.T) {
	s := newTestServer(t, Config{})
	id := creditCustomer(t, s)
	g := serve(t, s, http.MethodPost, "/v1/credits/"+id+"/grant", basicHeader,
		`{"amount":1000,"description":"welcome bonus","expiresAt":"2025-03-01T00:00:00Z","metadata":{"campaign":"launch"}}`)
	requireWireShapeOf(t, "credits/grant.json", g.Body.Bytes())
	d := serve(t, s, http.MethodPost, "/v1/credits/"+id+"/deduct", basicHeader, `{"amount":250,"description":"api calls","metadata":{"job":"j-7"}}`)
	requireWireShapeOf(t, "credits/deduct.json", d.Body.Bytes())
	requireWireShapeOf(t, "credits/wallet.json", serve(t, s, http.MethodGet, "/v1/credits/"+id, basicHeader, nil).Body.Bytes())
	postDeduct(t, s, id, map[string]any{"amount": 50, "description": "report"})
	page1 := serve(t, s, http.MethodGet, "/v1/credits/"+id+"/transactions?limit=2", basicHeader, nil)
	requireWireShapeOf(t, "credits/transactions_page1.json", page1.Body.Bytes())

	bare := creditCustomer(t, s)
	postGrant(t, s, bare, map[string]any{"amount": 1000})
	requireWireShapeOf(t, "credits/transactions_page2.json", serve(t, s, http.MethodGet, "/v1/credits/"+bare+"/transactions", basicHeader, nil).Body.Bytes())
	requireWireShapeOf(t, "credits/insufficient_credits.json", serve(t, s, http.MethodPost, "/v1/credits/"+id+"/deduct", basicHeader, `{"amount":5000}`).Body.Bytes())
}

func creditStr(s string) *string { return &s }

// BenchmarkSandboxGrantAndDeductOneWallet alternates grants and deducts on one
// wallet from parallel goroutines: the contended case, every call serialised.
func BenchmarkSandboxGrantAndDeductOneWallet(b *testing.B) {
	s := newTestServer(b, Config{})
	id := creditCustomer(b, s)
	postGrant(b, s, id, map[string]any{"amount": 1_000_000})
	var n atomic.Int64
	benchmarkRequests(b, s, http.StatusOK, func() *http.Request {
		op := "grant"
		if n.Add(1)%2 == 0 {
			op = "deduct"
		}
		return authorized(http.MethodPost, "/v1/credits/"+id+"/"+op, strings.NewReader(`{"amount":3,"description":"bench"}`))
	})
}
