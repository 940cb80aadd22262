package sandbox

import (
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var updateDocs = flag.Bool("update", false, "rewrite the route table of docs/sandbox.md from the sandbox's routes")

// routesDoc is the page holding the generated route table, between its markers.
const (
	routesDoc   = "../../docs/sandbox.md"
	routesBegin = "<!-- routes:begin (generated: go test ./internal/sandbox -run TestRouteTableOfTheDocs -update) -->"
	routesEnd   = "<!-- routes:end -->"
)

// credentialsOf names what an auth kind takes, as the docs say it.
var credentialsOf = map[authKind]string{
	authPublic:  "none",
	authBilling: "Basic or Bearer secret key",
	authBasic:   "Basic",
	authSession: "Bearer session token or secret key",
}

// routeTable writes the sandbox's route table as Markdown: one row per
// operation, its path on each wire and how the provider's body is read.
func routeTable(t *testing.T) string {
	t.Helper()
	s := newTestServer(t, Config{Wire: WireProvider})
	var b strings.Builder
	b.WriteString("| Spec's path (both wires) | Provider's path (`-wire provider` only) | Provider's body | Credentials | Scope | IP allowlist |\n")
	b.WriteString("|---|---|---|---|---|---|\n")
	code := func(s string) string {
		if s == "" {
			return ""
		}
		return "`" + s + "`"
	}
	for _, rt := range s.routes() {
		credentials, ok := credentialsOf[rt.auth]
		require.True(t, ok, "route %s: auth kind %d has no name in the docs", rt.pattern, rt.auth)
		ip := ""
		if rt.ipAllowlist {
			ip = "yes"
		}
		provider := code(rt.provider.pattern)
		if rt.provider.shared {
			provider += " (shared)"
		}
		b.WriteString("| " + strings.Join([]string{code(rt.pattern), provider, rt.provider.body, credentials, code(rt.scope), ip}, " | ") + " |\n")
	}
	return b.String()
}

// The route table of docs/sandbox.md is the sandbox's own, regenerated here:
// a route added or changed without the doc fails this test.
func TestRouteTableOfTheDocs(t *testing.T) {
	raw, err := os.ReadFile(routesDoc)
	require.NoError(t, err)
	doc := string(raw)
	before, rest, found := strings.Cut(doc, routesBegin+"\n")
	require.True(t, found, "%s has no line %s", routesDoc, routesBegin)
	_, after, found := strings.Cut(rest, routesEnd)
	require.True(t, found, "%s has no line %s after the table", routesDoc, routesEnd)
	want := before + routesBegin + "\n" + routeTable(t) + routesEnd + after
	if *updateDocs {
		require.NoError(t, os.WriteFile(routesDoc, []byte(want), 0o644))
		return
	}
	assert.Equal(t, want, doc, "the route table of %s is out of date: run go test ./internal/sandbox -run TestRouteTableOfTheDocs -update", routesDoc)
}

// Every provider call of REQUESTS.md is a provider path of the route table.
func TestRouteTableServesEveryDocumentedRequest(t *testing.T) {
	s := newTestServer(t, Config{Wire: WireProvider})
	paths := map[string]bool{}
	for _, rt := range s.routes() {
		paths[rt.provider.pattern] = true
	}
	for _, row := range documentedRequests(t) {
		path, _, _ := strings.Cut(row.path, "?")
		assert.True(t, paths[row.method+" "+path], "%s: %s %s is in no route row", row.operation, row.method, path)
	}
}
