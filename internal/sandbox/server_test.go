package sandbox

import (
	"bytes"
	"encoding/base64"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAuthKinds(t *testing.T) {
	s := newTestServer(t, Config{})
	for _, rt := range []route{
		{pattern: "GET /test/public", auth: authPublic, handler: okHandler},
		{pattern: "GET /test/billing", auth: authBilling, handler: okHandler},
		{pattern: "GET /test/basic", auth: authBasic, handler: okHandler},
		{pattern: "GET /test/session", auth: authSession, handler: okHandler},
	} {
		s.register(rt)
	}
	wrongBasic := "Basic " + base64.StdEncoding.EncodeToString([]byte(DefaultClientID+":nope"))
	swappedBasic := "Basic " + base64.StdEncoding.EncodeToString([]byte(DefaultClientSecret+":"+DefaultClientID))
	headers := []struct {
		name   string
		header string
	}{
		{"none", ""},
		{"basic", basicHeader},
		{"bearer secret key", secretHeader},
		{"bearer session token", sessionHeader},
		{"lower-case scheme", "bearer " + DefaultSecretKey},
		{"wrong basic secret", wrongBasic},
		{"swapped basic", swappedBasic},
		{"malformed basic", "Basic !!!"},
		{"wrong bearer", "Bearer sk_live_nope"},
		{"unknown scheme", "Token " + DefaultSecretKey},
	}
	// want[path][header name] is the expected status.
	want := map[string]map[string]int{
		"/test/public":  {"none": 200, "basic": 200, "bearer secret key": 200, "bearer session token": 200, "lower-case scheme": 200, "wrong basic secret": 200, "swapped basic": 200, "malformed basic": 200, "wrong bearer": 200, "unknown scheme": 200},
		"/test/billing": {"none": 401, "basic": 200, "bearer secret key": 200, "bearer session token": 401, "lower-case scheme": 200, "wrong basic secret": 401, "swapped basic": 401, "malformed basic": 401, "wrong bearer": 401, "unknown scheme": 401},
		"/test/basic":   {"none": 401, "basic": 200, "bearer secret key": 401, "bearer session token": 401, "lower-case scheme": 401, "wrong basic secret": 401, "swapped basic": 401, "malformed basic": 401, "wrong bearer": 401, "unknown scheme": 401},
		"/test/session": {"none": 401, "basic": 401, "bearer secret key": 200, "bearer session token": 200, "lower-case scheme": 200, "wrong basic secret": 401, "swapped basic": 401, "malformed basic": 401, "wrong bearer": 401, "unknown scheme": 401},
	}
	for path, byHeader := range want {
		for _, h := range headers {
			t.Run(path+"/"+h.name, func(t *testing.T) {
				rec := serve(t, s, http.MethodGet, path, h.header, nil)
				status := byHeader[h.name]
				if status == http.StatusOK {
					assert.Equal(t, "ok", decode[string](t, rec, 200).Data)
					return
				}
				requireError(t, rec, status, CodeKeysMismatch, "", "credentials")
			})
		}
	}
}

func TestUnauthorizedMessageSaysWhatTheEndpointTakes(t *testing.T) {
	s := newTestServer(t, Config{})
	s.register(route{pattern: "GET /test/basic", auth: authBasic, handler: okHandler})
	requireError(t, serve(t, s, http.MethodGet, "/test/basic", "", nil), 401, CodeKeysMismatch, "", "missing credentials: this endpoint takes Basic client credentials")
	requireError(t, serve(t, s, http.MethodGet, "/test/basic", secretHeader, nil), 401, CodeKeysMismatch, "", "wrong kind of credentials")
	requireError(t, serve(t, s, http.MethodGet, "/v1/customers", "Bearer nope", nil), 401, CodeKeysMismatch, "", "invalid credentials: this endpoint takes Basic client credentials or a Bearer secret key")
}

func TestConfiguredCredentials(t *testing.T) {
	s := newTestServer(t, Config{ClientID: "id", ClientSecret: "secret", SecretKey: "sk", SessionTokens: []string{"s1", "s2"}})
	s.register(route{pattern: "GET /test/session", auth: authSession, handler: okHandler})
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("id:secret"))
	assert.Equal(t, 200, serve(t, s, http.MethodGet, "/v1/customers", basic, nil).Code)
	assert.Equal(t, 200, serve(t, s, http.MethodGet, "/v1/customers", "Bearer sk", nil).Code)
	assert.Equal(t, 401, serve(t, s, http.MethodGet, "/v1/customers", basicHeader, nil).Code, "the default credentials no longer work")
	assert.Equal(t, 200, serve(t, s, http.MethodGet, "/test/session", "Bearer s2", nil).Code)
	assert.Equal(t, 401, serve(t, s, http.MethodGet, "/test/session", sessionHeader, nil).Code)

	blank := newTestServer(t, Config{SessionTokens: []string{""}})
	blank.register(route{pattern: "GET /test/session", auth: authSession, handler: okHandler})
	assert.Equal(t, 401, serve(t, blank, http.MethodGet, "/test/session", "Bearer ", nil).Code, "an empty token admits nobody")
	assert.Empty(t, blank.Config().SessionTokens)
}

func TestScopeRefused(t *testing.T) {
	s := newTestServer(t, Config{Scopes: []string{ScopeCustomersRead}})
	assert.Equal(t, 200, serve(t, s, http.MethodGet, "/v1/customers", basicHeader, nil).Code)
	rec := serve(t, s, http.MethodPost, "/v1/customers", basicHeader, map[string]any{"email": "a@example.com", "name": "A"})
	requireError(t, rec, 403, CodeKeysMismatch, "", "scope customers:write is not granted")

	none := newTestServer(t, Config{Scopes: []string{}})
	requireError(t, serve(t, none, http.MethodGet, "/v1/customers", secretHeader, nil), 403, CodeKeysMismatch, "", "customers:read")
	assert.Equal(t, 200, serve(t, none, http.MethodPost, "/sandbox/clock/advance", secretHeader, `{"seconds":0}`).Code, "sandbox controls need no scope")
}

func TestCredentialsAreCheckedBeforeScope(t *testing.T) {
	s := newTestServer(t, Config{Scopes: []string{}})
	requireError(t, serve(t, s, http.MethodGet, "/v1/customers", "", nil), 401, CodeKeysMismatch, "", "missing credentials")
}

func TestIPAllowlist(t *testing.T) {
	s := newTestServer(t, Config{AllowIPs: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("2001:db8::/32")}})
	s.register(route{pattern: "POST /test/send", auth: authBasic, ipAllowlist: true, handler: okHandler})
	for _, tc := range []struct {
		remoteAddr string
		want       int
	}{
		{"10.1.2.3:40000", 200},
		{"[::ffff:10.1.2.3]:40000", 200}, // IPv4-mapped
		{"[2001:db8::7]:40000", 200},
		{"10.9.9.9", 200}, // no port
		{"127.0.0.1:40000", 403},
		{"[::1]:40000", 403},
		{"11.0.0.1:40000", 403},
		{"not-an-address", 403},
	} {
		t.Run(tc.remoteAddr, func(t *testing.T) {
			req := request(t, http.MethodPost, "/test/send", basicHeader, nil)
			req.RemoteAddr = tc.remoteAddr
			rec := httptest.NewRecorder()
			s.ServeHTTP(rec, req)
			if tc.want == http.StatusOK {
				assert.Equal(t, 200, rec.Code, rec.Body.String())
				return
			}
			requireError(t, rec, 403, CodeIPNotAllowed, "", "IP address is not in the allowlist")
		})
	}
	t.Run("checked before credentials", func(t *testing.T) {
		requireError(t, serve(t, s, http.MethodPost, "/test/send", "", nil), 403, CodeIPNotAllowed, "", "allowlist")
	})
	t.Run("unrestricted routes ignore it", func(t *testing.T) {
		assert.Equal(t, 200, serve(t, s, http.MethodGet, "/v1/customers", basicHeader, nil).Code)
	})
}

func TestDefaultAllowlistAdmitsLoopbackOverTheNetwork(t *testing.T) {
	s := newTestServer(t, Config{})
	s.register(route{pattern: "POST /test/send", auth: authBasic, ipAllowlist: true, handler: okHandler})
	ts := httptest.NewServer(s)
	defer ts.Close()
	req, err := http.NewRequest(http.MethodPost, ts.URL+"/test/send", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", basicHeader)
	resp, err := ts.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
}

func TestUnknownRouteAndWrongMethodAnswerTheErrorBody(t *testing.T) {
	s := newTestServer(t, Config{})
	requireError(t, serve(t, s, http.MethodGet, "/v1/nothing", basicHeader, nil), 404, CodeNotFound, "", "no route matches GET /v1/nothing")
	rec := serve(t, s, http.MethodDelete, "/v1/customers/cust_1", basicHeader, nil)
	requireError(t, rec, 405, CodeMethodNotAllowed, "", "DELETE is not allowed on /v1/customers/cust_1")
	assert.Contains(t, rec.Header().Get("Allow"), http.MethodPatch)
}

func TestRegisterRefusesARouteWithoutAuthKind(t *testing.T) {
	s := newTestServer(t, Config{})
	assert.Panics(t, func() { s.register(route{pattern: "GET /test/open", handler: okHandler}) })
}

func TestConfigDefaults(t *testing.T) {
	s := New(Config{})
	defer s.Close()
	cfg := s.Config()
	assert.Equal(t, DefaultClientID, cfg.ClientID)
	assert.Equal(t, DefaultClientSecret, cfg.ClientSecret)
	assert.Equal(t, DefaultSecretKey, cfg.SecretKey)
	assert.Equal(t, []string{DefaultSessionToken}, cfg.SessionTokens)
	assert.Equal(t, AllScopes(), cfg.Scopes)
	assert.Len(t, cfg.Scopes, 12)
	assert.Equal(t, DefaultAllowIPs(), cfg.AllowIPs)
	assert.Equal(t, DefaultDisbursementAccount, cfg.DisbursementAccount)
	assert.Equal(t, int64(100_000_000), cfg.DisbursementBalance)
	assert.Zero(t, cfg.ResolveAfter)
	assert.WithinDuration(t, time.Now(), s.Now(), time.Minute, "the default clock is the wall clock")

	cfg.Scopes[0] = "changed"
	assert.Equal(t, ScopeCustomersRead, s.Config().Scopes[0], "Config returns a copy")
}

func TestRequestLogNamesTheRouteNotThePathOrCredentials(t *testing.T) {
	var logs bytes.Buffer
	s := newTestServer(t, Config{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	serve(t, s, http.MethodGet, "/v1/customers/cust_233241234567", basicHeader, nil)
	line := logs.String()
	assert.Contains(t, line, `route="GET /v1/customers/{id}"`)
	assert.Contains(t, line, "status=404")
	assert.NotContains(t, line, "233241234567")
	assert.NotContains(t, line, "Basic")
}
