package billingtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/billingsdk/billing-go/internal/sandbox"
)

// call sends a request to the sandbox with Basic credentials (or the given
// Authorization header) and returns the status and decoded body.
func call(t *testing.T, s *Server, method, path, body string, auth ...string) (int, map[string]any) {
	t.Helper()
	status, _, raw := send(t, s, method, path, body, auth...)
	var decoded map[string]any
	require.NoError(t, json.Unmarshal(raw, &decoded), "body: %s", raw)
	return status, decoded
}

// send sends a request as call does and returns the status, the headers and
// the body as it came.
func send(t *testing.T, s *Server, method, path, body string, auth ...string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, s.URL+path, strings.NewReader(body))
	require.NoError(t, err)
	if len(auth) > 0 {
		req.Header.Set("Authorization", auth[0])
	} else {
		req.SetBasicAuth(s.ClientID, s.ClientSecret)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header, raw
}

func TestNewServerServesTheSandboxWithDefaultCredentials(t *testing.T) {
	s := NewServer(t)
	u, err := url.Parse(s.URL)
	require.NoError(t, err)
	assert.Equal(t, "http", u.Scheme)
	addr, err := netip.ParseAddrPort(u.Host)
	require.NoError(t, err)
	assert.True(t, addr.Addr().IsLoopback())
	assert.Equal(t, sandbox.DefaultClientID, s.ClientID)
	assert.Equal(t, sandbox.DefaultClientSecret, s.ClientSecret)
	assert.Equal(t, sandbox.DefaultSecretKey, s.SecretKey)
	assert.Equal(t, sandbox.DefaultSessionToken, s.SessionToken)
	assert.Equal(t, sandbox.DefaultDisbursementAccount, s.DisbursementAccount)
	assert.Equal(t, sandbox.DefaultPublicKey, s.PublicKey)

	status, body := call(t, s, http.MethodPost, "/v1/customers", `{"email":"ada@example.com","name":"Ada"}`)
	require.Equal(t, http.StatusCreated, status, body)
	id := body["data"].(map[string]any)["id"].(string)

	status, body = call(t, s, http.MethodGet, "/v1/customers/"+id, "", "Bearer "+s.SecretKey)
	require.Equal(t, http.StatusOK, status, body)
	assert.Equal(t, "ada@example.com", body["data"].(map[string]any)["email"])

	status, body = call(t, s, http.MethodGet, "/v1/customers/"+id, "", "Bearer wrong")
	assert.Equal(t, http.StatusUnauthorized, status)
	assert.Equal(t, sandbox.CodeKeysMismatch, body["code"])
}

func TestDefaultConfiguration(t *testing.T) {
	s := NewServer(t)
	cfg := s.sandbox.Config()
	assert.Zero(t, cfg.ResolveAfter, "money movements resolve right after their response")
	assert.Equal(t, sandbox.AllScopes(), cfg.Scopes)
	assert.Equal(t, sandbox.DefaultAllowIPs(), cfg.AllowIPs)
	assert.WithinDuration(t, time.Now(), s.Now(), time.Minute, "the wall clock")
}

func TestWithManualClock(t *testing.T) {
	s := NewServer(t, WithManualClock())
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	assert.Equal(t, start, s.Now())
	s.Advance(36 * time.Hour)
	assert.Equal(t, start.Add(36*time.Hour), s.Now())

	status, body := call(t, s, http.MethodPost, "/v1/customers", `{"email":"ada@example.com","name":"Ada"}`)
	require.Equal(t, http.StatusCreated, status)
	assert.Equal(t, "2025-01-02T12:00:00.000Z", body["data"].(map[string]any)["createdAt"])

	status, body = call(t, s, http.MethodPost, "/sandbox/clock/advance", `{"seconds":60}`)
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, "2025-01-02T12:01:00.000Z", body["data"].(map[string]any)["now"])
	assert.Equal(t, start.Add(36*time.Hour+time.Minute), s.Now())
}

func TestWithScopes(t *testing.T) {
	s := NewServer(t, WithScopes(sandbox.ScopeCustomersRead))
	status, _ := call(t, s, http.MethodGet, "/v1/customers", "")
	assert.Equal(t, http.StatusOK, status)
	status, body := call(t, s, http.MethodPost, "/v1/customers", `{"email":"ada@example.com","name":"Ada"}`)
	assert.Equal(t, http.StatusForbidden, status)
	assert.Equal(t, sandbox.CodeKeysMismatch, body["code"])
	assert.Contains(t, body["message"], "customers:write")

	none := NewServer(t, WithScopes())
	status, _ = call(t, none, http.MethodGet, "/v1/customers", "")
	assert.Equal(t, http.StatusForbidden, status, "no arguments grant no scope")
}

func TestOptionsReachTheSandbox(t *testing.T) {
	office := netip.MustParsePrefix("203.0.113.0/24")
	s := NewServer(t,
		WithAllowIPs(office),
		WithResolveAfter(30*time.Second),
		WithWebhookURL("http://127.0.0.1:9/hooks"),
		WithSessionToken("sess_custom"),
	)
	cfg := s.sandbox.Config()
	assert.Equal(t, []netip.Prefix{office}, cfg.AllowIPs)
	assert.Equal(t, 30*time.Second, cfg.ResolveAfter)
	assert.Equal(t, "http://127.0.0.1:9/hooks", cfg.WebhookURL)
	assert.Equal(t, []string{"sess_custom"}, cfg.SessionTokens)
	assert.Equal(t, "sess_custom", s.SessionToken)

	assert.Equal(t, sandbox.DefaultSessionToken, NewServer(t, WithSessionToken("")).SessionToken, "an empty token keeps the default")
}

func TestStartAndClose(t *testing.T) {
	s, err := Start()
	require.NoError(t, err)
	status, _ := call(t, s, http.MethodGet, "/v1/customers", "")
	assert.Equal(t, http.StatusOK, status)
	s.Close()
	s.Close() // a second Close does nothing

	_, err = http.Get(s.URL + "/v1/customers")
	assert.Error(t, err, "the server is gone")
}

func TestServersAreIndependent(t *testing.T) {
	a, b := NewServer(t), NewServer(t)
	assert.NotEqual(t, a.URL, b.URL)
	status, _ := call(t, a, http.MethodPost, "/v1/customers", `{"email":"ada@example.com","name":"Ada"}`)
	require.Equal(t, http.StatusCreated, status)
	status, _ = call(t, b, http.MethodPost, "/v1/customers", `{"email":"ada@example.com","name":"Ada"}`)
	assert.Equal(t, http.StatusCreated, status, "state is per server")
}

func ExampleStart() {
	srv, err := Start(WithManualClock())
	if err != nil {
		panic(err)
	}
	defer srv.Close()

	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/customers", strings.NewReader(`{"email":"ada@example.com","name":"Ada"}`))
	req.SetBasicAuth(srv.ClientID, srv.ClientSecret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	fmt.Println(resp.Status)
	fmt.Println(srv.Now().Format(time.RFC3339))
	// Output:
	// 201 Created
	// 2025-01-01T00:00:00Z
}
