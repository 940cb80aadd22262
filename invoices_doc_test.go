package billing_test

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
)

// typeDoc returns the doc comment of the type name declared in the Go file path.
func typeDoc(t *testing.T, path, name string) string {
	t.Helper()
	file, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ParseComments)
	require.NoError(t, err)
	for _, decl := range file.Decls {
		gen, ok := decl.(*ast.GenDecl)
		if !ok || gen.Tok != token.TYPE {
			continue
		}
		for _, spec := range gen.Specs {
			if ts := spec.(*ast.TypeSpec); ts.Name.Name == name {
				return strings.Join(strings.Fields(gen.Doc.Text()), " ")
			}
		}
	}
	t.Fatalf("%s declares no type %s", path, name)
	return ""
}

// What SubscriptionsService's doc says of invoices is what the sandbox does: the
// places it names exist (the billingtest method, the control route, the row of
// docs/sandbox.md), and each moment it names compiles an invoice, while a trial
// compiles none.
func TestSubscriptionsDocSaysWhereInvoicesAre(t *testing.T) {
	doc := typeDoc(t, "subscriptions.go", "SubscriptionsService")
	const method, route = "billingtest.Server.Invoices", "GET /sandbox/subscriptions/{id}/invoices"
	require.Contains(t, doc, method)
	require.Contains(t, doc, route)
	require.Contains(t, doc, "none for a trial")
	_, ok := reflect.TypeFor[*billingtest.Server]().MethodByName("Invoices")
	require.True(t, ok, "the doc names %s", method)
	sandboxDoc, err := os.ReadFile("docs/sandbox.md")
	require.NoError(t, err)
	assert.Contains(t, string(sandboxDoc), "| `"+route+"` | `srv.Invoices(subscriptionID)` |", "the controls table of docs/sandbox.md")

	// The moments the doc names, each with the billing reason its invoice carries.
	moments := map[string]string{
		"Create without a trial": "CREATE", "the trial's end": "TRIAL_END", "each renewal": "RENEWAL", "Resume": "RESUME",
	}
	for phrase := range moments {
		require.Contains(t, doc, phrase)
	}

	ctx := context.Background()
	srv := billingtest.NewServer(t, billingtest.WithManualClock())
	c := srv.Client()
	cust, err := c.Customers.Create(ctx, &billing.CustomerCreateParams{Email: "esi@example.com", Name: "Esi"})
	require.NoError(t, err)
	product, err := c.Products.Create(ctx, &billing.ProductCreateParams{Name: "Pro"})
	require.NoError(t, err)
	price, err := c.Products.CreatePrice(ctx, product.ID, &billing.PriceCreateParams{UnitAmount: 900, IsRecurring: true, Interval: billing.PriceIntervalWeek})
	require.NoError(t, err)

	trial, err := c.Subscriptions.Create(ctx, &billing.SubscriptionCreateParams{CustomerID: cust.ID, PriceID: price.ID, TrialDays: billing.Value(3)})
	require.NoError(t, err)
	assert.Empty(t, srv.Invoices(trial.ID), "none for a trial")
	plain, err := c.Subscriptions.Create(ctx, &billing.SubscriptionCreateParams{CustomerID: cust.ID, PriceID: price.ID})
	require.NoError(t, err)
	srv.Advance(3 * 24 * time.Hour) // the trial ends
	srv.Advance(7 * 24 * time.Hour) // both renew
	_, err = c.Subscriptions.Pause(ctx, plain.ID)
	require.NoError(t, err)
	_, err = c.Subscriptions.Resume(ctx, plain.ID)
	require.NoError(t, err)

	seen := map[string]bool{}
	for _, id := range []string{trial.ID, plain.ID} {
		invoices := srv.Invoices(id)
		for _, inv := range invoices {
			seen[inv.BillingReason] = true
			assert.Equal(t, int64(900), inv.Amount)
			assert.Equal(t, cust.ID, inv.CustomerID)
		}
		req, err := http.NewRequest(http.MethodGet, srv.URL+strings.Replace(strings.TrimPrefix(route, "GET "), "{id}", id, 1), nil)
		require.NoError(t, err)
		req.SetBasicAuth(srv.ClientID, srv.ClientSecret)
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		res.Body.Close()
		assert.Equal(t, http.StatusOK, res.StatusCode, "the route the doc names answers")
	}
	for phrase, reason := range moments {
		assert.True(t, seen[reason], "%q compiled an invoice (%s)", phrase, reason)
	}
}
