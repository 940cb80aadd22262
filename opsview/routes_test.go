package opsview_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/billingsdk/billing-go/opsview"
)

// Every page of the view, from its own route table: one that changes state is refused to
// any other method, to any cross-origin browser request and (JSON or form) to a body of
// another type, before it acts; one that reads is refused to any method but GET and HEAD.
// Every answer carries the strict headers.
func TestEveryRouteRefusesWhatItMust(t *testing.T) {
	f := newFixture(t, nil)
	body := `{"action":"resolve","id":"` + f.idOf(t, "lost1") + `","state":"failed","reason":"r"}`
	methods := []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions}
	crossSite := []map[string]string{
		{"Sec-Fetch-Site": "cross-site"},
		{"Sec-Fetch-Site": "same-site"},
		{"Origin": "https://evil.example"},
		{"Origin": "http://ops.example.evil.example"},
		{"Origin": "null"},
	}
	serve := func(method, page string, header map[string]string, ct string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(method, "http://ops.example/ops/"+page, strings.NewReader(body))
		r.Header.Set("X-User", "alice")
		if ct != "" {
			r.Header.Set("Content-Type", ct)
		}
		for k, v := range header {
			r.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		f.h.ServeHTTP(w, r)
		assert.Contains(t, w.Header().Get("Content-Security-Policy"), "default-src 'none'", "%s %s", method, page)
		assert.Equal(t, "nosniff", w.Header().Get("X-Content-Type-Options"))
		return w
	}
	routes := opsview.Routes()
	assert.NotEmpty(t, routes)
	for page, post := range routes {
		for _, m := range methods {
			allowed := m == http.MethodGet || m == http.MethodHead
			if post {
				allowed = m == http.MethodPost
			}
			if !allowed {
				assert.Equal(t, http.StatusMethodNotAllowed, serve(m, page, nil, "application/json").Code, "%s %q", m, page)
			}
		}
		if !post {
			continue
		}
		for _, h := range crossSite {
			assert.Equal(t, http.StatusForbidden, serve(http.MethodPost, page, h, "application/json").Code, "%q from %v", page, h)
		}
		for _, ct := range []string{"", "text/plain", "multipart/form-data; boundary=x", "application/json-seq"} {
			assert.Equal(t, http.StatusUnsupportedMediaType, serve(http.MethodPost, page, nil, ct).Code, "%q as %q", page, ct)
		}
	}
	var d struct{ Movement opsview.MovementView }
	f.getJSON(t, "api-movement?id="+f.idOf(t, "lost1"), &d)
	assert.Empty(t, d.Movement.Outcome, "no refused request acted")
}
