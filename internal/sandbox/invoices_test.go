package sandbox

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// invoiceJSON decodes an invoice as the control answers it.
type invoiceJSON struct {
	ID             string `json:"id"`
	SubscriptionID string `json:"subscriptionId"`
	CustomerID     string `json:"customerId"`
	PriceID        string `json:"priceId"`
	Quantity       int64  `json:"quantity"`
	Currency       string `json:"currency"`
	Amount         int64  `json:"amount"`
	PeriodStart    string `json:"periodStart"`
	PeriodEnd      string `json:"periodEnd"`
	Status         string `json:"status"`
	BillingReason  string `json:"billingReason"`
}

func invoicesOf(tb testing.TB, s *Server, subscriptionID string) []invoiceJSON {
	tb.Helper()
	return decode[[]invoiceJSON](tb, serve(tb, s, http.MethodGet, "/sandbox/subscriptions/"+subscriptionID+"/invoices", basicHeader, nil), http.StatusOK).Data
}

// For every interval of the price table and two interval counts, a subscription is
// driven through renewals by the manual clock: after each period end the newest
// invoice bills exactly the subscription's current period, the periods follow each
// other without gap, and there is one invoice per paid period begun.
func TestInvoiceAtEveryPeriodStartOfEveryInterval(t *testing.T) {
	for _, interval := range priceIntervals {
		for _, count := range []int{1, 3} {
			t.Run(fmt.Sprintf("%s×%d", interval, count), func(t *testing.T) {
				s := newTestServer(t, Config{})
				cat := newCatalog(t, s)
				p := createProduct(t, s, map[string]any{"name": "Seats"})
				pr := createPrice(t, s, p.ID, fmt.Sprintf(`{"unitAmount":1250,"currency":"usd","scheme":"PER_UNIT","isRecurring":true,"interval":%q,"intervalCount":%d}`, interval, count))
				sub := subscribe(t, s, map[string]any{"customerId": cat.customerID, "priceId": pr.ID, "quantity": 4})
				for renewals := 0; renewals < 4; renewals++ {
					current := getSubscription(t, s, sub.ID)
					invoices := invoicesOf(t, s, sub.ID)
					require.Len(t, invoices, renewals+1, "one invoice per paid period begun")
					last := invoices[len(invoices)-1]
					assert.Equal(t, *current.CurrentPeriodStart, last.PeriodStart, "renewal %d", renewals)
					assert.Equal(t, *current.CurrentPeriodEnd, last.PeriodEnd, "renewal %d", renewals)
					assert.Equal(t, invoiceJSON{ID: last.ID, SubscriptionID: sub.ID, CustomerID: cat.customerID, PriceID: pr.ID, Quantity: 4,
						Currency: "USD", Amount: 4 * 1250, PeriodStart: last.PeriodStart, PeriodEnd: last.PeriodEnd, Status: "PAID",
						BillingReason: map[bool]string{true: "CREATE", false: "RENEWAL"}[renewals == 0]}, last)
					assert.Regexp(t, `^inv_[0-9a-f]{24}$`, last.ID)
					for i := 1; i < len(invoices); i++ {
						assert.Equal(t, invoices[i-1].PeriodEnd, invoices[i].PeriodStart, "periods follow each other, oldest first")
					}
					end, err := time.Parse(timeLayout, *current.CurrentPeriodEnd)
					require.NoError(t, err)
					s.Advance(end.Sub(s.Now()))
				}
			})
		}
	}
}

// A trial bills nothing: the first invoice is compiled when the trial ends. A paused
// subscription renews nothing; resuming starts a period, and its invoice. A cancel at
// the period end compiles no invoice for a period that never begins. FLAT bills its
// unit amount whatever the quantity.
func TestInvoicesFollowTrialsPausesAndCancels(t *testing.T) {
	s := newTestServer(t, Config{})
	cat := newCatalog(t, s)

	trialing := subscribe(t, s, map[string]any{"customerId": cat.customerID, "priceId": cat.trial, "quantity": 2})
	assert.Empty(t, invoicesOf(t, s, trialing.ID), "nothing is billed during the trial")
	s.Advance(14 * day)
	invoices := invoicesOf(t, s, trialing.ID)
	require.Len(t, invoices, 1)
	assert.Equal(t, "TRIAL_END", invoices[0].BillingReason)
	assert.Equal(t, *at(14 * day), invoices[0].PeriodStart)
	assert.Equal(t, int64(5000), invoices[0].Amount, "a FLAT price bills its unit amount, whatever the quantity")
	assert.Equal(t, "USD", invoices[0].Currency)

	paused := subscribe(t, s, map[string]any{"customerId": cat.customerID, "priceId": cat.monthly})
	require.Equal(t, http.StatusOK, patchSubscription(t, s, paused.ID, "pause", nil).Code)
	s.Advance(40 * day)
	require.Len(t, invoicesOf(t, s, paused.ID), 1, "no renewal while paused")
	require.Equal(t, http.StatusOK, patchSubscription(t, s, paused.ID, "resume", nil).Code)
	invoices = invoicesOf(t, s, paused.ID)
	require.Len(t, invoices, 2)
	assert.Equal(t, "RESUME", invoices[1].BillingReason)
	assert.Equal(t, s.Now().UTC().Format(timeLayout), invoices[1].PeriodStart, "a new period from the resume")

	ending := subscribe(t, s, map[string]any{"customerId": cat.customerID, "priceId": cat.weekly2})
	require.Equal(t, http.StatusOK, patchSubscription(t, s, ending.ID, "cancel", map[string]any{"atPeriodEnd": true}).Code)
	s.Advance(15 * day)
	assert.Equal(t, subscriptionCanceled, getSubscription(t, s, ending.ID).Status)
	require.Len(t, invoicesOf(t, s, ending.ID), 1, "no invoice for a period after the cancel")
}

// The control answers 404 for a subscription that does not exist, takes the
// controls' credentials, and the Go method answers what the route does.
func TestInvoicesControl(t *testing.T) {
	s := newTestServer(t, Config{})
	cat := newCatalog(t, s)
	sub := subscribe(t, s, map[string]any{"customerId": cat.customerID, "priceId": cat.monthly})
	requireError(t, serve(t, s, http.MethodGet, "/sandbox/subscriptions/sub_missing/invoices", basicHeader, nil),
		http.StatusNotFound, CodeNotFound, "", "sub_missing")
	requireError(t, serve(t, s, http.MethodGet, "/sandbox/subscriptions/"+sub.ID+"/invoices", "", nil),
		http.StatusUnauthorized, CodeKeysMismatch, "", "")
	assert.Len(t, decode[[]invoiceJSON](t, serve(t, s, http.MethodGet, "/sandbox/subscriptions/"+sub.ID+"/invoices", secretHeader, nil), http.StatusOK).Data, 1)

	got, ok := s.Invoices(sub.ID)
	require.True(t, ok)
	require.Len(t, got, 1)
	wire := invoicesOf(t, s, sub.ID)[0]
	assert.Equal(t, wire.ID, got[0].ID)
	assert.Equal(t, wire.PeriodStart, got[0].PeriodStart.UTC().Format(timeLayout))
	assert.Equal(t, int64(5000), got[0].Amount)
	_, ok = s.Invoices("sub_missing")
	assert.False(t, ok)
}

// A subscription whose period would bill more than the largest amount is refused,
// and nothing is written.
func TestSubscriptionBillingMoreThanTheLargestAmountIsRefused(t *testing.T) {
	s := newTestServer(t, Config{})
	cat := newCatalog(t, s)
	p := createProduct(t, s, map[string]any{"name": "Seats"})
	seat := createPrice(t, s, p.ID, `{"unitAmount":100000000000000,"scheme":"PER_UNIT","isRecurring":true,"interval":"DAY"}`)
	requireError(t, serve(t, s, http.MethodPost, "/v1/subscriptions", basicHeader, map[string]any{"customerId": cat.customerID, "priceId": seat.ID, "quantity": 2}),
		http.StatusBadRequest, CodeValidation, "quantity", "more than the largest amount")
	huge := createPrice(t, s, p.ID, `{"unitAmount":100000000000001,"isRecurring":true,"interval":"DAY"}`)
	requireError(t, serve(t, s, http.MethodPost, "/v1/subscriptions", basicHeader, map[string]any{"customerId": cat.customerID, "priceId": huge.ID}),
		http.StatusBadRequest, CodeValidation, "priceId", "more than the largest amount")
	one := subscribe(t, s, map[string]any{"customerId": cat.customerID, "priceId": seat.ID})
	assert.Equal(t, maxAmount, invoicesOf(t, s, one.ID)[0].Amount)
	s.mu.Lock()
	defer s.mu.Unlock()
	assert.Equal(t, 1, s.subscriptions.table.len(), "the refused subscriptions were not written")
}
