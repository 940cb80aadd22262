package billing

import (
	"bytes"
	"context"
	"encoding/base64"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
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

// stallMidBody answers 200 with a Content-Length, sends the first half of body, and
// then writes nothing more until the test ends: the client has its headers and part of
// its body, and waits for the rest.
func stallMidBody(t *testing.T, body string) func(http.ResponseWriter, *http.Request) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) }) // runs before the server's Close, which waits for handlers
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, body[:len(body)/2])
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}
}

// returnsWithin runs call and fails the test if it is still running after bound: a bound
// on a failure, not a timing.
func returnsWithin(t *testing.T, bound time.Duration, call func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- call() }()
	select {
	case err := <-done:
		return err
	case <-time.After(bound):
		t.Fatalf("the call was still running after %s", bound)
		return nil
	}
}

// WithTimeout bounds each attempt to the end of its body: a server that sends the
// headers and half the body, then stalls, does not hold the call past it.
func TestTimeoutBoundsTheBodyRead(t *testing.T) {
	srv := newScriptedServer(t, stallMidBody(t, okCustomer))
	c, _ := newTestClient(t, srv.URL, WithTimeout(100*time.Millisecond), WithRetry(1, 0, 0))

	err := returnsWithin(t, 10*time.Second, func() error {
		_, err := c.Customers.Get(ctx(), "cust_1")
		return err
	})
	require.ErrorIs(t, err, errUnreadableBody)
	assert.ErrorContains(t, err, "deadline exceeded")
	assert.Equal(t, int32(1), srv.hits.Load())
}

// The bound is per attempt, not per call: a read whose first answer stalls mid-body is
// sent again and takes the second answer.
func TestTimeoutBoundsEachAttemptOfARead(t *testing.T) {
	srv := newScriptedServer(t, stallMidBody(t, okCustomer), jsonAnswer(200, okCustomer))
	c, rec := newTestClient(t, srv.URL, WithTimeout(100*time.Millisecond))

	err := returnsWithin(t, 10*time.Second, func() error {
		cust, err := c.Customers.Get(ctx(), "cust_1")
		if err == nil {
			assert.Equal(t, "cust_1", cust.ID)
		}
		return err
	})
	require.NoError(t, err)
	assert.Equal(t, int32(2), srv.hits.Load())
	assert.Len(t, rec.recorded(), 1)
}

// A money movement whose answer stalls mid-body has reached the service: its outcome is
// unknown, and it is not sent again.
func TestTimeoutMidBodyOfAMoneyMovementIsOutcomeUnknown(t *testing.T) {
	srv := newScriptedServer(t, stallMidBody(t, acceptedReceive))
	c, _ := newTestClient(t, srv.URL, WithTimeout(100*time.Millisecond))

	err := returnsWithin(t, 10*time.Second, func() error {
		return moneyCall(ctx(), c, "ref1")
	})
	require.ErrorIs(t, err, ErrOutcomeUnknown)
	assert.ErrorContains(t, err, "deadline exceeded")
	assert.Equal(t, int32(1), srv.hits.Load())
}

// The SDK's own http.Client has no Timeout: the attempt's context carries the bound. A
// merchant's client keeps its Timeout, unless WithTimeout replaces it.
func TestTimeoutWhereItLives(t *testing.T) {
	base := []Option{WithBaseURL("https://api.example.com"), WithSecretKey("sk")}
	own, err := NewClient(base...)
	require.NoError(t, err)
	assert.Zero(t, own.http.HTTPClient.Timeout)
	assert.Equal(t, DefaultTimeout, own.attemptTimeout)

	shorter, err := NewClient(append(base, WithTimeout(time.Second))...)
	require.NoError(t, err)
	assert.Equal(t, time.Second, shorter.attemptTimeout)

	theirs, err := NewClient(append(base, WithHTTPClient(&http.Client{Timeout: 7 * time.Second}))...)
	require.NoError(t, err)
	assert.Equal(t, 7*time.Second, theirs.http.HTTPClient.Timeout)
	assert.Zero(t, theirs.attemptTimeout)

	replaced, err := NewClient(append(base, WithHTTPClient(&http.Client{Timeout: 7 * time.Second}), WithTimeout(time.Second))...)
	require.NoError(t, err)
	assert.Equal(t, time.Second, replaced.http.HTTPClient.Timeout)
	assert.Zero(t, replaced.attemptTimeout)
}

// A merchant's client's own Timeout bounds the body read as before.
func TestMerchantClientTimeoutBoundsTheBodyRead(t *testing.T) {
	srv := newScriptedServer(t, stallMidBody(t, okCustomer))
	c, _ := newTestClient(t, srv.URL, WithHTTPClient(&http.Client{Timeout: 100 * time.Millisecond}), WithRetry(1, 0, 0))

	err := returnsWithin(t, 10*time.Second, func() error {
		_, err := c.Customers.Get(ctx(), "cust_1")
		return err
	})
	require.ErrorIs(t, err, errUnreadableBody)
	assert.ErrorContains(t, err, "deadline exceeded")
}
