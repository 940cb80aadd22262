package billing

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// acceptedReceive is a receive accepted the way the service answers it.
const acceptedReceive = `{"success":true,"message":"pending","responseCode":"0001","data":{"id":"pay_1","reference":"r1","status":"PROCESSING"}}`

// countingServer answers every request with answer and counts them, remembering the
// Authorization header each carried.
type countingServer struct {
	*httptest.Server
	hits atomic.Int32
	auth atomic.Value // the last Authorization header seen
}

func newCountingServer(t *testing.T, answer http.HandlerFunc) *countingServer {
	t.Helper()
	s := &countingServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		s.auth.Store(r.Header.Get("Authorization"))
		answer(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// deadAddress returns an address nothing listens on.
func deadAddress(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

func redirectTo(status int, location string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if location != "" {
			w.Header().Set("Location", location)
		}
		w.WriteHeader(status)
	}
}

func TestWritesFollowNoRedirect(t *testing.T) {
	elsewhere := newCountingServer(t, jsonAnswer(200, acceptedReceive))
	limited := newCountingServer(t, jsonAnswer(429, `{"success":false,"message":"slow down"}`, "Retry-After", "0"))
	targets := map[string]string{
		"elsewhere":     elsewhere.URL + "/v1/payments/receive",
		"a dead port":   "http://" + deadAddress(t) + "/v1/payments/receive",
		"a 429":         limited.URL + "/v1/payments/receive",
		"the same path": "/v1/payments/receive",
	}
	clients := map[string][]Option{
		"own client":      nil,
		"WithHTTPClient":  {WithHTTPClient(&http.Client{})},
		"WithHTTPClient2": {WithHTTPClient(&http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone(), CheckRedirect: func(*http.Request, []*http.Request) error { return nil }})},
	}
	for _, status := range []int{301, 302, 303, 307, 308} {
		for target, location := range targets {
			for clientName, opts := range clients {
				t.Run(fmt.Sprintf("%d to %s/%s", status, target, clientName), func(t *testing.T) {
					origin := newCountingServer(t, redirectTo(status, location))
					c, rec := newTestClient(t, origin.URL, opts...)
					before := elsewhere.hits.Load() + limited.hits.Load()

					err := moneyCall(context.Background(), c, "ref1")
					require.ErrorIs(t, err, ErrOutcomeUnknown, "a redirect answered a payout: the service may have done it")
					var unknown *OutcomeUnknownError
					require.ErrorAs(t, err, &unknown)
					assert.Equal(t, "ref1", unknown.ClientReference)
					assert.EqualValues(t, 1, origin.hits.Load(), "a payout is sent once")
					assert.Equal(t, before, elsewhere.hits.Load()+limited.hits.Load(), "and never to where the redirect points")
					assert.Empty(t, rec.recorded(), "nor sent again")

					_, err = c.Customers.Create(context.Background(), &CustomerCreateParams{Email: "ama@example.com", Name: "Ama"})
					assert.ErrorIs(t, err, ErrOutcomeUnknown, "a create answered by a redirect may have been done")
					assert.EqualValues(t, 2, origin.hits.Load(), "a create is sent once")
				})
			}
		}
	}
}

func TestReadsFollowOnlySameOriginRedirects(t *testing.T) {
	t.Run("same origin", func(t *testing.T) {
		var auth atomic.Value
		srv := newScriptedServer(t, redirectTo(http.StatusFound, "/v1/customers/cust_1"), func(w http.ResponseWriter, r *http.Request) {
			auth.Store(r.Header.Get("Authorization"))
			jsonAnswer(200, okCustomer)(w, r)
		})
		c, _ := newTestClient(t, srv.URL)
		cust, err := c.Customers.Get(context.Background(), "cust_old")
		require.NoError(t, err)
		assert.Equal(t, "cust_1", cust.ID)
		assert.EqualValues(t, 2, srv.hits.Load())
		assert.Equal(t, c.basicAuth, auth.Load(), "credentials stay with the origin")
	})
	elsewhere := newCountingServer(t, jsonAnswer(200, okCustomer))
	otherPort := newCountingServer(t, jsonAnswer(200, okCustomer))
	_, otherPortNumber, _ := net.SplitHostPort(strings.TrimPrefix(otherPort.URL, "http://"))
	for name, location := range map[string]string{
		"another host":                  strings.Replace(elsewhere.URL, "127.0.0.1", "localhost", 1) + "/v1/customers/cust_1",
		"another port of the same host": "http://127.0.0.1:" + otherPortNumber + "/v1/customers/cust_1",
	} {
		t.Run(name, func(t *testing.T) {
			origin := newCountingServer(t, redirectTo(http.StatusFound, location))
			c, _ := newTestClient(t, origin.URL)
			_, err := c.Customers.Get(context.Background(), "cust_1")
			var apiErr *APIError
			require.ErrorAs(t, err, &apiErr, "a redirect elsewhere is not followed: %v", err)
			assert.Equal(t, http.StatusFound, apiErr.StatusCode)
			assert.Zero(t, elsewhere.hits.Load()+otherPort.hits.Load(), "nothing, credentials least of all, goes to another origin")
		})
	}
}

// TestCredentialsNeverFollowARedirectToPlainHTTPOrASubdomain runs the client against
// https://api.billing.test, whose redirects point to plain http on the same host and to
// a subdomain; every name resolves to local test servers.
func TestCredentialsNeverFollowARedirectToPlainHTTPOrASubdomain(t *testing.T) {
	plain := newCountingServer(t, jsonAnswer(200, okCustomer))
	sub := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the subdomain got %s %s with Authorization %q", r.Method, r.URL, r.Header.Get("Authorization"))
	}))
	t.Cleanup(sub.Close)
	for name, location := range map[string]string{
		"plain http on the same host": "http://api.billing.test/v1/customers/cust_1",
		"a subdomain":                 "https://eu.api.billing.test/v1/customers/cust_1",
		"the parent domain":           "https://billing.test/v1/customers/cust_1",
	} {
		t.Run(name, func(t *testing.T) {
			origin := httptest.NewTLSServer(redirectTo(http.StatusFound, location))
			t.Cleanup(origin.Close)
			dial := map[string]string{
				"api.billing.test:443":    origin.Listener.Addr().String(),
				"api.billing.test:80":     plain.Listener.Addr().String(),
				"eu.api.billing.test:443": sub.Listener.Addr().String(),
				"billing.test:443":        sub.Listener.Addr().String(),
			}
			transport := &http.Transport{
				TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // test servers
				DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
					return (&net.Dialer{}).DialContext(ctx, network, dial[addr])
				},
			}
			for _, write := range []bool{false, true} {
				c, _ := newTestClient(t, "https://api.billing.test", WithHTTPClient(&http.Client{Transport: transport}), WithSecretKey("sk_live_secret"))
				var err error
				if write {
					_, err = c.Customers.Create(context.Background(), &CustomerCreateParams{Email: "ama@example.com", Name: "Ama"})
				} else {
					_, err = c.Customers.Get(context.Background(), "cust_1")
				}
				require.Error(t, err)
			}
			assert.Zero(t, plain.hits.Load(), "nothing went over plain http")
		})
	}
}

// switchingProtocols answers 101 on a hijacked connection and holds it open until the
// test ends: a client reading a body from it would wait for its timeout.
func switchingProtocols(t *testing.T) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			panic(err)
		}
		t.Cleanup(func() { conn.Close() })
		_, _ = buf.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
		_ = buf.Flush()
	}
}

func TestMoneyMovementUnclassifiedAnswersAreOutcomeUnknown(t *testing.T) {
	for name, answer := range map[string]http.HandlerFunc{
		"101":                       switchingProtocols(t),
		"300":                       jsonAnswer(300, `{}`),
		"304":                       redirectTo(304, ""),
		"307 without Location":      redirectTo(307, ""),
		"302 without Location":      redirectTo(302, ""),
		"200 empty body":            jsonAnswer(200, ``),
		"200 null":                  jsonAnswer(200, `null`),
		"200 {}":                    jsonAnswer(200, `{}`),
		"200 data null":             jsonAnswer(200, `{"data":null}`),
		"200 success and data null": jsonAnswer(200, `{"success":true,"responseCode":"0001","data":null}`),
		"200 data empty":            jsonAnswer(200, `{"success":true,"responseCode":"0001","data":{}}`),
		"200 no response code":      jsonAnswer(200, `{"success":true,"data":{"id":"pay_1","status":"PROCESSING"}}`),
		"201 no response code":      jsonAnswer(201, `{"success":true,"message":"created","data":{"id":"pay_1"}}`),
		"200 data not an object":    jsonAnswer(200, `{"responseCode":"0001","data":"ok"}`),
		"204":                       jsonAnswer(204, ``),
		"202 array":                 jsonAnswer(202, `[{"responseCode":"0001"}]`),
	} {
		t.Run(name, func(t *testing.T) {
			srv := newScriptedServer(t, answer)
			c, rec := newTestClient(t, srv.URL, WithTimeout(10*time.Second))
			err := moneyCall(context.Background(), c, "ref1")
			require.ErrorIs(t, err, ErrOutcomeUnknown)
			var unknown *OutcomeUnknownError
			require.ErrorAs(t, err, &unknown)
			assert.Equal(t, "ref1", unknown.ClientReference)
			var apiErr *APIError
			assert.True(t, errors.As(err, &apiErr) || errors.Is(err, errUnreadableBody), "the answer itself is the cause: %v", err)
			var netErr net.Error
			assert.False(t, errors.As(err, &netErr) && netErr.Timeout(), "not a timeout waiting for a body: %v", err)
			assert.Equal(t, srv.hits.Load(), int32(1))
			assert.Empty(t, rec.recorded())
		})
	}
}

func TestMoneyMovementRecognisableAcceptancesAreSuccesses(t *testing.T) {
	for name, body := range map[string]string{
		"spec":                       acceptedReceive,
		"provider send":              `{"ResponseCode":"0001","Data":{"AmountDebited":0.0,"TransactionId":"09f84e20a283942e807128e8c21d0303","ClientReference":"pay101","Amount":0.8}}`,
		"provider receive":           `{"Message":"Transaction pending. Expect callback request for final state","ResponseCode":"0001","Data":{"TransactionId":"09f84e20","ClientReference":"3jL2KlUy3vt21","Amount":0.8}}`,
		"mandate acknowledged":       `{"message":"Request received! Pending preapproval","responseCode":"2000","data":{"servicePreApprovalId":"5f20","preapprovalStatus":"PENDING"}}`,
		"processed at once":          `{"responseCode":"0000","data":{"id":"pay_1"}}`,
		"code under code":            `{"code":"0001","data":{"id":"pay_1"}}`,
		"with whitespace and a tail": " \n{\"responseCode\":\"0001\",\"data\":{ \"id\" : \"pay_1\" }}\n",
	} {
		t.Run(name, func(t *testing.T) {
			srv := newScriptedServer(t, jsonAnswer(200, body))
			c, _ := newTestClient(t, srv.URL)
			require.NoError(t, moneyCall(context.Background(), c, "ref1"))
		})
	}
	t.Run("checkout, which carries no response code", func(t *testing.T) {
		srv := newScriptedServer(t, jsonAnswer(201, `{"success":true,"data":{"reference":"pay_1","status":"PENDING","checkoutUrl":"https://pay.test/c/pay_1"}}`))
		c, _ := newTestClient(t, srv.URL)
		p, err := c.Payments.CreateCheckout(context.Background(), &CheckoutParams{Amount: 100})
		require.NoError(t, err)
		assert.Equal(t, "pay_1", p.Reference)
	})
	for name, body := range map[string]string{
		"{}":                 `{}`,
		"data null":          `{"success":true,"data":null}`,
		"data empty":         `{"success":true,"data":{}}`,
		"no success":         `{"data":{"reference":"pay_1"}}`,
		"empty body":         ``,
		"success false":      `{"success":false,"data":{"reference":"pay_1"}}`,
		"success not a bool": `{"success":"yes","data":{"reference":"pay_1"}}`,
	} {
		t.Run("checkout "+name, func(t *testing.T) {
			srv := newScriptedServer(t, jsonAnswer(201, body))
			c, _ := newTestClient(t, srv.URL)
			_, err := c.Payments.CreateCheckout(context.Background(), &CheckoutParams{Amount: 100})
			if name == "success false" {
				var apiErr *APIError
				require.ErrorAs(t, err, &apiErr, "a refusal stays a refusal")
				return
			}
			require.ErrorIs(t, err, ErrOutcomeUnknown)
		})
	}
}

func TestDuplicateAfterAResendIsOutcomeUnknown(t *testing.T) {
	duplicate := jsonAnswer(200, `{"success":false,"responseCode":"2001","message":"duplicate client reference"}`)
	for name, first := range map[string]http.HandlerFunc{
		"429":                   jsonAnswer(429, `{"success":false,"message":"slow down"}`, "Retry-After", "0"),
		"429 without a body":    jsonAnswer(429, ``),
		"429 then insufficient": jsonAnswer(429, ``),
	} {
		t.Run(name, func(t *testing.T) {
			second := duplicate
			if name == "429 then insufficient" {
				second = jsonAnswer(200, `{"ResponseCode":"4075","Message":"insufficient balance","Data":null}`)
			}
			srv := newScriptedServer(t, first, second)
			c, _ := newTestClient(t, srv.URL)
			err := moneyCall(context.Background(), c, "ref1")
			require.ErrorIs(t, err, ErrOutcomeUnknown, "the first attempt may be the one the service has")
			var apiErr *APIError
			require.ErrorAs(t, err, &apiErr, "the refusal is kept as the cause")
			assert.EqualValues(t, 2, srv.hits.Load())
		})
	}
	for name, refusal := range map[string]http.HandlerFunc{
		"validation":     jsonAnswer(400, `{"success":false,"message":"amount is required","code":"4000","field":"amount"}`),
		"declined":       jsonAnswer(200, `{"message":"declined","responseCode":"4070"}`),
		"not registered": jsonAnswer(200, `{"ResponseCode":"3050","Message":"not registered"}`),
		"ip allowlist":   jsonAnswer(403, `{"success":false,"message":"forbidden","code":"ip_not_allowed"}`),
		"credentials":    jsonAnswer(401, `{"success":false,"message":"bad credentials"}`),
	} {
		t.Run("a refusal of the request itself: "+name, func(t *testing.T) {
			srv := newScriptedServer(t, jsonAnswer(429, ``, "Retry-After", "0"), refusal)
			c, _ := newTestClient(t, srv.URL)
			err := moneyCall(context.Background(), c, "ref1")
			var apiErr *APIError
			require.ErrorAs(t, err, &apiErr)
			assert.NotErrorIs(t, err, ErrOutcomeUnknown, "the same request was refused alike the first time")
		})
	}
	t.Run("429s to the last attempt: unknown, rate limited as its cause", func(t *testing.T) {
		// Each 429 speaks for its own attempt: a limiter may have let an earlier one
		// through to do its work before answering it 429.
		srv := newScriptedServer(t, jsonAnswer(429, ``, "Retry-After", "0"))
		c, _ := newTestClient(t, srv.URL)
		err := moneyCall(context.Background(), c, "ref1")
		require.ErrorIs(t, err, ErrOutcomeUnknown)
		assert.ErrorIs(t, err, ErrRateLimited)
		assert.EqualValues(t, 4, srv.hits.Load())
	})
	t.Run("a first attempt that never connected", func(t *testing.T) {
		addr := deadAddress(t)
		c, rec := newTestClient(t, "http://"+addr)
		var hits atomic.Int32
		rec.hook = func(n int) {
			if n != 1 {
				return
			}
			l, err := net.Listen("tcp", addr)
			require.NoError(t, err)
			srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				hits.Add(1)
				duplicate(w, r)
			})}
			go func() { _ = srv.Serve(l) }()
			t.Cleanup(func() { _ = srv.Close() })
		}
		err := moneyCall(context.Background(), c, "ref1")
		var apiErr *APIError
		require.ErrorAs(t, err, &apiErr)
		assert.NotErrorIs(t, err, ErrOutcomeUnknown, "nothing of this call reached the service before: the duplicate is an earlier call's")
		assert.Equal(t, CodeFailed, apiErr.Code)
		assert.EqualValues(t, 1, hits.Load())
	})
}

func TestARequestNeverWrittenIsNotOutcomeUnknown(t *testing.T) {
	srv := newCountingServer(t, jsonAnswer(200, acceptedReceive))
	refused := errors.New("proxy refused")
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.Proxy = func(*http.Request) (*url.URL, error) { return nil, refused }
	c, rec := newTestClient(t, srv.URL, WithHTTPClient(&http.Client{Transport: transport}))
	err := moneyCall(context.Background(), c, "ref1")
	require.ErrorIs(t, err, refused)
	assert.NotErrorIs(t, err, ErrOutcomeUnknown, "not a byte was written: nothing can have moved")
	assert.Len(t, rec.recorded(), 3, "and a request never written may be sent again")
	assert.Zero(t, srv.hits.Load())
}

func TestNewClientRefusesControlCharactersInHeaderValues(t *testing.T) {
	const secret = "sk_live_91b3\r\nX-Evil: 1"
	for name, opt := range map[string]Option{
		"WithUserAgent":             WithUserAgent("shop/1.0\r\nX-Evil: 1"),
		"WithClientCredentials":     WithClientCredentials("id\n", secret),
		"WithClientCredentials(id)": WithClientCredentials("id\x00", "secret"),
		"WithSecretKey":             WithSecretKey(secret),
		"WithSessionToken":          WithSessionToken("tok\x7f" + secret),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := NewClient(WithBaseURL("https://api.billing.test"), WithClientCredentials("id", "s"), opt)
			require.Error(t, err)
			assert.Contains(t, err.Error(), strings.TrimSuffix(name, "(id)"))
			assert.NotContains(t, err.Error(), "sk_live")
			assert.NotContains(t, err.Error(), "X-Evil")
		})
	}
	_, err := NewClient(WithBaseURL("https://api.billing.test"), WithClientCredentials("id", "s"), WithUserAgent("shop/1.0 (+https://shop.example)"))
	assert.NoError(t, err, "an ordinary product token is fine")
}

func TestNewClientErrorsNeverEchoABaseURLPassword(t *testing.T) {
	for _, raw := range []string{
		"https://merchant:hunter2secret@api.example.com",
		"http://merchant:hunter2secret@api.example.com",
		"ftp://merchant:hunter2secret@api.example.com",
		"https://merchant:hunter2secret@api.example.com/%zz",
		"//merchant:hunter2secret@api.example.com",
		"https://merchant:hunter2secret@api.example.com:port",
	} {
		_, err := NewClient(WithBaseURL(raw), WithClientCredentials("id", "s"))
		require.Error(t, err, raw)
		assert.NotContains(t, err.Error(), "hunter2secret", raw)
	}
}

func TestRetryAfterBeyondAnyWaitIsNeverAShortOne(t *testing.T) {
	for _, v := range []string{"9223372037", "9223372036854775807", "99999999999999999999999", "3600"} {
		t.Run(v, func(t *testing.T) {
			srv := newScriptedServer(t, jsonAnswer(429, `{"success":false,"message":"later"}`, "Retry-After", v), jsonAnswer(200, okCustomer))
			c, rec := newTestClient(t, srv.URL)
			_, err := c.Customers.Get(context.Background(), "cust_1")
			assert.ErrorIs(t, err, ErrRateLimited, "longer than the client waits: it gives up at once")
			assert.Empty(t, rec.recorded())
			assert.EqualValues(t, 1, srv.hits.Load())
		})
	}
	wait, ok := retryAfter(&http.Response{StatusCode: 429, Header: http.Header{"Retry-After": {"9223372037"}}}, time.Now())
	assert.True(t, ok)
	assert.GreaterOrEqual(t, wait, 24*time.Hour)
}

func TestResponseReaderGrowsWithWhatArrives(t *testing.T) {
	const declared = 32 << 20
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range 16 {
		var res response
		resp := &http.Response{StatusCode: 200, ContentLength: declared, Body: io.NopCloser(strings.NewReader(`{`))}
		err := res.read(resp, new(envelope[map[string]any]))
		require.ErrorIs(t, err, errUnreadableBody)
	}
	runtime.ReadMemStats(&after)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(4<<20), "16 one-byte bodies declaring 32 MiB each")
}
