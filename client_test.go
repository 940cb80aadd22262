package billing

import (
	"bytes"
	"context"
	"encoding/base64"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNewClientRefusesBadConfiguration(t *testing.T) {
	creds := WithClientCredentials("id", "secret")
	for name, opts := range map[string][]Option{
		"no base URL":          {creds},
		"relative base URL":    {WithBaseURL("/v1"), creds},
		"host only":            {WithBaseURL("api.example.com"), creds},
		"plain http to remote": {WithBaseURL("http://api.example.com"), creds},
		"other scheme":         {WithBaseURL("ftp://api.example.com"), creds},
		"no credentials":       {WithBaseURL("https://api.example.com")},
		"half credentials":     {WithBaseURL("https://api.example.com"), WithClientCredentials("id", "")},
		"empty secret key":     {WithBaseURL("https://api.example.com"), WithSecretKey("")},
		"bad retry":            {WithBaseURL("https://api.example.com"), creds, WithRetry(0, 0, 0)},
		"inverted waits":       {WithBaseURL("https://api.example.com"), creds, WithRetry(3, time.Second, time.Millisecond)},
		"negative timeout":     {WithBaseURL("https://api.example.com"), creds, WithTimeout(-time.Second)},
		"nil http client":      {WithBaseURL("https://api.example.com"), creds, WithHTTPClient(nil)},
	} {
		_, err := NewClient(opts...)
		assert.Error(t, err, name)
	}
}

func TestNewClientAcceptsLoopbackHTTPAndHTTPS(t *testing.T) {
	for _, u := range []string{"http://localhost:4010", "http://127.0.0.1:4010/", "http://[::1]:4010", "https://api.example.com/base/"} {
		c, err := NewClient(WithBaseURL(u), WithSecretKey("sk"))
		require.NoError(t, err, u)
		assert.False(t, strings.HasSuffix(c.base, "/"), "trailing slash trimmed")
	}
}

func TestAuthorizationFollowsTheEndpointKind(t *testing.T) {
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("id:secret"))
	for name, tc := range map[string]struct {
		opts                  []Option
		billing, money, short string // "" means refused
	}{
		"client credentials": {[]Option{WithClientCredentials("id", "secret")}, basic, basic, ""},
		"secret key":         {[]Option{WithSecretKey("sk")}, "Bearer sk", "", "Bearer sk"},
		"session token":      {[]Option{WithSessionToken("sess")}, "", "", "Bearer sess"},
		"all three":          {[]Option{WithClientCredentials("id", "secret"), WithSecretKey("sk"), WithSessionToken("sess")}, "Bearer sk", basic, "Bearer sess"},
	} {
		c, err := NewClient(append(tc.opts, WithBaseURL("https://api.example.com"))...)
		require.NoError(t, err)
		for kind, want := range map[authKind]string{authBilling: tc.billing, authBasic: tc.money, authSession: tc.short} {
			got, err := c.authorization(kind)
			if want == "" {
				assert.Error(t, err, "%s kind %d", name, kind)
				continue
			}
			assert.Equal(t, want, got, "%s kind %d", name, kind)
		}
	}
}

func TestTwoClientsWithDifferentCredentialsWorkSideBySide(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.Header.Get("Authorization")]++
		mu.Unlock()
		jsonAnswer(200, okCustomer)(w, r)
	}))
	defer srv.Close()
	a, err := NewClient(WithBaseURL(srv.URL), WithSecretKey("sk_a"))
	require.NoError(t, err)
	b, err := NewClient(WithBaseURL(srv.URL), WithSecretKey("sk_b"), WithUserAgent("shop/2"))
	require.NoError(t, err)

	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func(c *Client) {
			defer wg.Done()
			_, err := c.Customers.Get(context.Background(), "cust_1")
			assert.NoError(t, err)
		}([]*Client{a, b}[i%2])
	}
	wg.Wait()
	assert.Equal(t, map[string]int{"Bearer sk_a": 10, "Bearer sk_b": 10}, seen)
	assert.True(t, strings.HasPrefix(b.userAgent, "shop/2 billing-go/"+Version))
}

func TestMoneyEndpointsWithoutClientCredentialsSendNothing(t *testing.T) {
	srv := newScriptedServer(t, jsonAnswer(200, `{}`))
	c, err := NewClient(WithBaseURL(srv.URL), WithSecretKey("sk"))
	require.NoError(t, err)
	err = moneyCall(context.Background(), c, "ref1")
	assert.ErrorContains(t, err, "client credentials")
	assert.Zero(t, srv.hits.Load())
}

func TestLogsAndErrorsNeverCarrySecretsOrFullNumbers(t *testing.T) {
	const (
		clientSecret = "cs_live_7f2e9c1a"
		secretKey    = "sk_live_91b3d2e0"
		msisdn       = "233241234567"
		account      = "1020304050607"
	)
	basicValue := base64.StdEncoding.EncodeToString([]byte("client-id:" + clientSecret))
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))

	srv := newScriptedServer(t,
		jsonAnswer(201, okCustomer),
		jsonAnswer(404, `{"success":false,"message":"customer not found","code":"not_found"}`),
		jsonAnswer(500, serverFailure),
		resetConnection,
	)
	c, err := NewClient(WithBaseURL(srv.URL), WithClientCredentials("client-id", clientSecret), WithSecretKey(secretKey),
		WithLogger(logger), WithRetry(2, 0, 0))
	require.NoError(t, err)
	c.retryWait = func(time.Duration) time.Duration { return 0 }

	var errs []string
	_, err = c.Customers.Create(ctx(), &CustomerCreateParams{Email: "ama@example.com", Name: "Ama", Phone: "+" + msisdn})
	require.NoError(t, err)
	_, err = c.Customers.Get(ctx(), "cust_missing")
	errs = append(errs, err.Error())
	for _, path := range []string{"/v1/mandates/preapproval/" + msisdn + "/cancel", "/v1/merchants/" + account + "/send/bank/gh/300302"} {
		o := &op{method: http.MethodPost, path: path, auth: authBasic, retry: retryMoney, clientReference: "ref1"}
		_, err = send[map[string]any](ctx(), c, o)
		require.Error(t, err)
		errs = append(errs, err.Error())
	}

	all := logs.String() + strings.Join(errs, "\n")
	require.Contains(t, logs.String(), "billing request", "the flow was logged")
	for _, secret := range []string{clientSecret, secretKey, basicValue, msisdn, account} {
		assert.NotContains(t, all, secret)
	}
	assert.Contains(t, all, "*********567", "numbers are masked, not dropped")
}

func TestMaskNumbers(t *testing.T) {
	for in, want := range map[string]string{
		"/v1/customers/cust_1":                            "/v1/customers/cust_1",
		"/v1/mandates/preapproval/233241234567/cancel":    "/v1/mandates/preapproval/*********567/cancel",
		"/v1/merchants/2020202/send/bank/gh/300302":       "/v1/merchants/****202/send/bank/gh/300302",
		"http://127.0.0.1:4010/v1/payments/ref0001234567": "http://127.0.0.1:4010/v1/payments/ref0001234567",
		"/v1/subscriptions/sub_b12345678a9/cancel":        "/v1/subscriptions/sub_b12345678a9/cancel",
		"233245550108 has no approved mandate":            "*********108 has no approved mandate",
		"+233241234567, 0241234567":                       "+*********567, *******567",
		// Numbers written in groups, or after a word that names them.
		"call +233 55 777 1234 now":              "call +*** ** *** *234 now",
		"233-557-771-234":                        "***-***-***-234",
		"msisdn233557771234":                     "msisdn*********234",
		"ACC9988776655":                          "ACC*******655",
		"customerMsisdn=233241234567":            "customerMsisdn=*********567",
		"accountNumber1020304050607":             "accountNumber**********607",
		"wallet 024 123 4567":                    "wallet *** *** *567",
		"(024) 123-4567 has no approved mandate": "(024) ***-*567 has no approved mandate",
		// Ids, references, dates and small numbers stay readable.
		"cus_01HQ3K9ZB8Y7X6W5V4T3S2R1P0":   "cus_01HQ3K9ZB8Y7X6W5V4T3S2R1P0",
		"ORDER-2291-A":                     "ORDER-2291-A",
		"order 1234 of 5678":               "order 1234 of 5678",
		"expired on 2025-01-15 at 10:30":   "expired on 2025-01-15 at 10:30",
		"ref0001234567 and INV2024000123":  "ref0001234567 and INV2024000123",
		"3jL2KlUy3vt21debitC":              "3jL2KlUy3vt21debitC",
		"amount 1200 fee 30 balance 99":    "amount 1200 fee 30 balance 99",
		"dial tcp 127.0.0.1:4010: refused": "dial tcp 127.0.0.1:4010: refused",
		"bank 300302 account 12-34":        "bank 300302 account 12-34",
		"piano1234567x":                    "piano1234567x",
	} {
		assert.Equal(t, want, maskNumbers(in))
	}
}
