package billing

import (
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newOp returns an op outside the endpoints table, with the defaults of a billing
// resource: tests use it to drive the pipeline with a path of their own.
func newOp(method, path string) *op {
	o := &op{method: method, path: path, auth: authBilling, retry: retryWrite}
	if method == http.MethodGet {
		o.retry = retryRead
	}
	return o
}

// endpointNames reads the names of the endpointID constants from endpoints.go, in the
// order of their values.
func endpointNames(t *testing.T) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "endpoints.go", nil, 0)
	require.NoError(t, err)
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST || len(g.Specs) == 0 {
			continue
		}
		first := g.Specs[0].(*ast.ValueSpec)
		if id, ok := first.Type.(*ast.Ident); !ok || id.Name != "endpointID" {
			continue
		}
		var names []string
		for _, s := range g.Specs {
			names = append(names, s.(*ast.ValueSpec).Names[0].Name)
		}
		require.Equal(t, "endpointCount", names[len(names)-1])
		names = names[:len(names)-1]
		require.Len(t, names, int(endpointCount))
		return names
	}
	t.Fatal("no endpointID constants in endpoints.go")
	return nil
}

// endpointUse is one place the SDK builds a call from a row.
type endpointUse struct {
	builder  string // "op" or "movement"
	pathArgs int
	at       string
}

// endpointUses finds, in the package's non-test sources, every call built from a row of
// the table (epX.op(...), epX.movement(...), or through a pick of rows such as
// s.form(epX, epY).op(...)), and every op written as a literal instead.
func endpointUses(t *testing.T, names []string) (uses map[string][]endpointUse, literals []string) {
	t.Helper()
	isEndpoint := map[string]bool{}
	for _, n := range names {
		isEndpoint[n] = true
	}
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	uses = map[string][]endpointUse{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || name == "endpoints.go" {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		require.NoError(t, err)
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CompositeLit:
				if id, ok := n.Type.(*ast.Ident); ok && id.Name == "op" {
					literals = append(literals, fset.Position(n.Pos()).String())
				}
			case *ast.CallExpr:
				sel, ok := n.Fun.(*ast.SelectorExpr)
				if !ok || (sel.Sel.Name != "op" && sel.Sel.Name != "movement") {
					return true
				}
				var rows []string
				switch x := sel.X.(type) {
				case *ast.Ident:
					rows = append(rows, x.Name)
				case *ast.CallExpr:
					for _, a := range x.Args {
						if id, ok := a.(*ast.Ident); ok {
							rows = append(rows, id.Name)
						}
					}
				}
				fixed := 1 // params
				if sel.Sel.Name == "movement" {
					fixed = 2 // client reference, body
				}
				for _, r := range rows {
					if isEndpoint[r] {
						uses[r] = append(uses[r], endpointUse{sel.Sel.Name, len(n.Args) - fixed, fset.Position(n.Pos()).String()})
					}
				}
			}
			return true
		})
	}
	return uses, literals
}

// Every row of the table is used, with as many path arguments as its template has
// segments, money movements (and only they) through movement, and no call of the SDK
// builds its op by hand.
func TestEveryEndpointIsUsed(t *testing.T) {
	names := endpointNames(t)
	uses, literals := endpointUses(t, names)
	assert.Empty(t, literals, "an op written as a literal instead of built from the endpoints table")
	for id, name := range names {
		e := endpoints[id]
		if !assert.NotEmpty(t, uses[name], "%s is in the table but no method calls it", name) {
			continue
		}
		for _, u := range uses[name] {
			assert.Equal(t, strings.Count(e.path, "{"), u.pathArgs, "%s at %s: path arguments for %s", name, u.at, e.path)
			assert.Equal(t, e.retry == retryMoney, u.builder == "movement",
				"%s at %s: a money movement is built with movement (naming its client reference), any other call with op", name, u.at)
		}
	}
}

// The table agrees with DESIGN.md's rules ("Retries: never move money twice",
// "Errors", SPEC "Authentication").
func TestEndpointsTableFollowsDesign(t *testing.T) {
	names := endpointNames(t)
	set := func(ids ...endpointID) map[string]bool {
		m := map[string]bool{}
		for _, id := range ids {
			m[names[id]] = true
		}
		return m
	}
	rows := func(keep func(e endpoint) bool) map[string]bool {
		m := map[string]bool{}
		for id, e := range endpoints {
			if keep(e) {
				m[names[id]] = true
			}
		}
		return m
	}

	for id, e := range endpoints {
		name := names[id]
		assert.Contains(t, []string{http.MethodGet, http.MethodPost, http.MethodPatch, http.MethodDelete}, e.method, name)
		assert.True(t, strings.HasPrefix(e.path, "/"), "%s: path %q is relative to the base URL", name, e.path)
		assert.Equal(t, strings.Count(e.path, "{"), strings.Count(e.path, "}"), "%s: template %q", name, e.path)
		assert.NotContains(t, e.path, "%", "%s: a template holds no escapes", name)

		// Who may call a path is the service's: billing resources take the secret key or
		// client credentials, money and mandates client credentials only, the short
		// subscription paths a session token or the secret key.
		switch p := e.path; {
		case strings.HasPrefix(p, "/v1/customers"), strings.HasPrefix(p, "/v1/products"), strings.HasPrefix(p, "/v1/credits"),
			strings.HasPrefix(p, "/v1/meters"), strings.HasPrefix(p, "/v1/licenses"):
			assert.Equal(t, authBilling, e.auth, "%s is a billing resource", name)
		case strings.HasPrefix(p, "/subscriptions"):
			assert.Equal(t, authSession, e.auth, name)
		case strings.HasPrefix(p, "/v1/subscriptions"), strings.HasPrefix(p, "/v1/payments"), strings.HasPrefix(p, "/v1/merchants"),
			strings.HasPrefix(p, "/v1/mandates"):
			assert.Equal(t, authBasic, e.auth, "%s takes client credentials only", name)
		default:
			t.Errorf("%s: %s belongs to no group of the spec", name, p)
		}

		// Reads are retried; a write only when the service dedupes it.
		switch {
		case e.method == http.MethodGet && e.retry != retryRead:
			assert.Equal(t, epMandateCancel, endpointID(id), "%s: only mandate cancel is a GET that changes state", name)
		case e.method != http.MethodGet && e.retry == retryRead:
			assert.Equal(t, epMeterEventRecordKeyed, endpointID(id), "%s: only a meter event with an idempotency key is a deduped write", name)
		}
	}

	// The money movements: never re-sent, client credentials, POST.
	assert.Equal(t, set(epCheckoutCreate, epReceive, epSend, epBankTransfer, epDirectDebit, epMandateCreate),
		rows(func(e endpoint) bool { return e.retry == retryMoney }))
	assert.Empty(t, rows(func(e endpoint) bool {
		return e.retry == retryMoney && (e.auth != authBasic || e.method != http.MethodPost)
	}), "money movements are POSTs with client credentials")

	// The status checks: their code is the transaction's, they are reads, and they take
	// client credentials.
	assert.Equal(t, set(epReceiveStatus, epSendStatus, epBankTransferStatus, epDirectDebitStatus, epMandateStatus),
		rows(func(e endpoint) bool { return e.flags&codeIsData != 0 }))
	assert.Empty(t, rows(func(e endpoint) bool {
		return e.flags&codeIsData != 0 && (e.retry != retryRead || e.auth != authBasic || e.method != http.MethodGet)
	}), "status checks are GETs, retried as reads, with client credentials")

	// The IP allowlist guards the money movements that reach a wallet or an account.
	assert.Equal(t, set(epReceive, epSend, epBankTransfer, epDirectDebit),
		rows(func(e endpoint) bool { return e.flags&ipRestricted != 0 }))
	assert.Equal(t, set(epCheckoutCreate), rows(func(e endpoint) bool { return e.flags&acceptedWithoutCode != 0 }))

	// One route has one access policy at the service, whichever SDK call reaches it.
	type access struct {
		auth authKind
		ip   bool
	}
	byRoute := map[string]access{}
	for id, e := range endpoints {
		route, a := e.method+" "+e.path, access{e.auth, e.flags&ipRestricted != 0}
		if seen, ok := byRoute[route]; ok {
			assert.Equal(t, seen, a, "%s: %s has another access policy in another row", names[id], route)
		}
		byRoute[route] = a
	}

	// The two subscription path forms are the same endpoints.
	for _, pair := range [][2]endpointID{
		{epSubscriptionCreate, epSubscriptionCreateV1}, {epSubscriptionGet, epSubscriptionGetV1},
		{epSubscriptionCancel, epSubscriptionCancelV1}, {epSubscriptionPause, epSubscriptionPauseV1},
		{epSubscriptionResume, epSubscriptionResumeV1},
	} {
		short, v1 := endpoints[pair[0]], endpoints[pair[1]]
		assert.Equal(t, "/v1"+short.path, v1.path)
		assert.Equal(t, short.method, v1.method)
		assert.Equal(t, short.retry, v1.retry)
	}
}

// A path argument fills exactly one segment: one that could reach another segment or the
// query is refused, naming its field, and the op carries the refusal.
func TestEndpointPathArgumentsAreOneSegment(t *testing.T) {
	o := epPriceArchive.op(nil, seg("productId", "prod/../1"), seg("priceId", "price_1"))
	assert.Equal(t, "productId", requireValidationError(t, o.refused).Field)
	o = epPriceArchive.op(nil, seg("productId", "prod_1"), seg("priceId", "price?x=1#y"))
	assert.Equal(t, "priceId", requireValidationError(t, o.refused).Field)
	o = epPriceArchive.op(nil, seg("productId", "prod_1"), seg("priceId", "price_1"))
	require.NoError(t, o.refused)
	assert.Equal(t, "/v1/products/prod_1/prices/price_1", o.path)
	assert.Equal(t, "/v1/products/{id}/prices/{priceId}", o.route())
	assert.Equal(t, "/v1/customers", epCustomerList.op(nil).path)
	assert.Panics(t, func() { epCustomerGet.op(nil) }, "a missing path argument is a bug of the SDK")
	assert.Panics(t, func() { epCustomerList.op(nil, seg("id", "extra")) }, "a path argument too many is a bug of the SDK")

	get := epBankTransferStatus.op(&BankTransferStatusParams{ClientReference: "r1"}, seg("disbursementAccount", "2020202"))
	assert.Equal(t, http.MethodGet, get.method)
	assert.NotNil(t, get.query, "a GET's params are its query")
	assert.Nil(t, get.body)
	post := epMandateCreate.movement("ref1", &MandateCreateParams{})
	assert.Nil(t, post.query)
	assert.NotNil(t, post.body, "a POST's params are its body")
	assert.Equal(t, "ref1", post.clientReference)
	assert.Equal(t, retryMoney, post.retry)
}

// The Observer is told each call's route template, never the concrete path with its
// ids, phone and account numbers, while the request itself goes to the concrete path.
func TestObserverSeesEndpointTemplate(t *testing.T) {
	var mu sync.Mutex
	var paths []string
	srv := newScriptedServer(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.EscapedPath())
		mu.Unlock()
		jsonAnswer(500, `{"success":false,"message":"down"}`)(w, r)
	})
	obs := &recordingObserver{}
	c, _ := newTestClient(t, srv.URL, WithObserver(obs), WithRetry(1, 0, 0), WithDisbursementAccount("2020202"))

	_, _ = c.Customers.Get(ctx(), "cust_1")
	_, _ = c.Mandates.Cancel(ctx(), "233241234567")
	_, _ = c.Payouts.SendStatus(ctx(), "ref-1")
	_, _ = c.Payouts.BankTransferStatus(ctx(), &BankTransferStatusParams{ClientReference: "ref1"})
	_, _ = c.Subscriptions.Pause(ctx(), "sub_1")

	var routes []string
	for _, call := range obs.calls {
		routes = append(routes, call.Method+" "+call.Route)
	}
	assert.Equal(t, []string{
		"GET /v1/customers/{id}",
		"GET /v1/mandates/preapproval/{customerMsisdn}/cancel",
		"GET /v1/payments/{reference}",
		"GET /v1/merchants/{account}/transactions/status",
		"PATCH /v1/subscriptions/{id}/pause",
	}, routes)
	assert.Equal(t, []string{
		"/v1/customers/cust_1",
		"/v1/mandates/preapproval/233241234567/cancel",
		"/v1/payments/ref-1",
		"/v1/merchants/2020202/transactions/status",
		"/v1/subscriptions/sub_1/pause",
	}, paths)

	// An op from outside the table has no template: its path stands in, numbers masked.
	assert.Equal(t, "/v1/mandates/preapproval/*********567/cancel", newOp(http.MethodGet, "/v1/mandates/preapproval/233241234567/cancel").route())
}
