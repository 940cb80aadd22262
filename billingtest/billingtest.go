// Package billingtest runs an in-memory sandbox of the billing and payments
// service for tests, the way net/http/httptest runs an HTTP server.
//
// The sandbox speaks the service's exact wire format: envelopes, status and
// response codes, validation, authentication and scopes, the IP allowlist and
// cursor pagination. It keeps its state in memory and forgets it when closed.
//
//	func TestSignup(t *testing.T) {
//		srv := billingtest.NewServer(t, billingtest.WithManualClock())
//		// Point the code under test at srv.URL with srv.ClientID and
//		// srv.ClientSecret (Basic) or srv.SecretKey (Bearer).
//		...
//		srv.Advance(14 * 24 * time.Hour) // run what falls due in two weeks
//	}
//
// By default the server listens on a loopback address, grants every scope,
// allowlists loopback callers and uses the wall clock, and money movements
// resolve right after their first response. Options change each of these.
// Programs that are not tests call Start and Close.
package billingtest

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/internal/sandbox"
)

// manualClockStart is where WithManualClock stops the sandbox's clock.
var manualClockStart = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// Server is a running sandbox. Its fields are the address and credentials
// to give the code under test.
type Server struct {
	// URL is the base URL of the service, e.g. http://127.0.0.1:41234,
	// without a trailing slash.
	URL string
	// ClientID and ClientSecret are the Basic client credentials; they work
	// on every endpoint.
	ClientID, ClientSecret string
	// SecretKey is the Bearer secret key of the billing resources.
	SecretKey string
	// SessionToken is a Bearer session token for the short /subscriptions paths.
	SessionToken string
	// DisbursementAccount is the account number of the send-to-bank paths.
	DisbursementAccount string
	// SalesAccount is the business's sales (POS) account: the {POS} of the
	// provider's paths, served under WithWire(WireProvider), and the
	// merchantAccountNumber of its checkout.
	SalesAccount string
	// PublicKey is the key a merchant's page gives the web SDK
	// (billing.NewWebCheckout); unlike the client secret it is safe in a browser.
	PublicKey string

	sandbox *sandbox.Server
	http    *httptest.Server
}

// NewServer starts a sandbox for the test and closes it when the test and
// its subtests end.
func NewServer(t testing.TB, opts ...Option) *Server {
	t.Helper()
	s, err := Start(opts...)
	if err != nil {
		t.Fatalf("billingtest: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

// Start starts a sandbox on a loopback address for a program that is not a
// test. The caller must Close it.
func Start(opts ...Option) (*Server, error) {
	var cfg sandbox.Config
	for _, opt := range opts {
		opt.apply(&cfg)
	}
	if err := checkWire(cfg); err != nil {
		return nil, fmt.Errorf("starting the sandbox: %w", err)
	}
	if cfg.CheckoutLifetime < 0 {
		return nil, fmt.Errorf("starting the sandbox: WithCheckoutLifetime must not be negative, not %s", cfg.CheckoutLifetime)
	}
	listener, err := listenLoopback()
	if err != nil {
		return nil, fmt.Errorf("starting the sandbox: %w", err)
	}
	sb := sandbox.New(cfg)
	ts := &httptest.Server{Listener: listener, Config: &http.Server{Handler: sb}}
	ts.Start()
	applied := sb.Config()
	s := &Server{
		URL:                 ts.URL,
		ClientID:            applied.ClientID,
		ClientSecret:        applied.ClientSecret,
		SecretKey:           applied.SecretKey,
		DisbursementAccount: applied.DisbursementAccount,
		SalesAccount:        applied.SalesAccount,
		PublicKey:           applied.PublicKey,
		sandbox:             sb,
		http:                ts,
	}
	if len(applied.SessionTokens) > 0 {
		s.SessionToken = applied.SessionTokens[0]
	}
	return s, nil
}

// listenLoopback listens on a free port of 127.0.0.1, or of ::1 on a
// machine without IPv4.
func listenLoopback() (net.Listener, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err == nil {
		return l, nil
	}
	l, err6 := net.Listen("tcp", "[::1]:0")
	if err6 == nil {
		return l, nil
	}
	return nil, errors.Join(err, err6)
}

// Client returns an SDK client for this sandbox, authenticated with its client
// credentials (which every endpoint accepts) and paying out of its disbursement account.
// opts come after those defaults, so they can change any of them. It panics if opts make
// the configuration invalid, as a test helper should.
func (s *Server) Client(opts ...billing.Option) *billing.Client {
	c, err := billing.NewClient(append([]billing.Option{
		billing.WithBaseURL(s.URL),
		billing.WithClientCredentials(s.ClientID, s.ClientSecret),
		billing.WithDisbursementAccount(s.DisbursementAccount),
	}, opts...)...)
	if err != nil {
		panic("billingtest: " + err.Error())
	}
	return c
}

// Advance moves the sandbox's clock forward by d and returns once the work
// that became due has run: money-movement resolutions, callbacks and their
// retries, trial ends, renewals, expiries.
func (s *Server) Advance(d time.Duration) { s.sandbox.Advance(d) }

// Now returns the sandbox's time, which every timestamp it writes is based on.
func (s *Server) Now() time.Time { return s.sandbox.Now() }

// Close shuts the server down, waiting for requests in flight, and stops
// the sandbox's background work. Calling it again does nothing.
func (s *Server) Close() {
	s.http.Close()
	s.sandbox.Close()
}

// Option changes how NewServer and Start set up the sandbox.
type Option struct {
	apply func(*sandbox.Config)
}

// WithManualClock stops the sandbox's clock at 2025-01-01T00:00:00Z: time then
// moves only through Server.Advance, and scheduled work runs only inside it,
// so the test decides exactly when trials end or payments resolve.
//
// Every callback and webhook is scheduled work too, even one due at once (a
// movement resolving with WithResolveAfter 0, a checkout paid through
// CompleteCheckout, a subscription's trial webhook): it is held until the next
// Advance. Advance(0) moves no time and releases what is due now.
func WithManualClock() Option {
	return Option{func(c *sandbox.Config) { c.Clock = sandbox.NewManualClock(manualClockStart) }}
}

// WithScopes grants only the given scopes (by default every scope is
// granted); a call outside them answers HTTP 403 with code 4101. The names
// are the service's: customers:read, customers:write, products:read,
// products:write, credits:read, credits:write, meters:read, meters:write,
// licenses:read, licenses:write, payments:write, mobilemoney-receive-direct.
// With no arguments no scope is granted.
func WithScopes(scopes ...string) Option {
	return Option{func(c *sandbox.Config) { c.Scopes = append([]string{}, scopes...) }}
}

// WithAllowIPs sets the caller addresses admitted to the IP-restricted
// endpoints (direct receive, send, send-to-bank, direct debit); by default
// loopback callers are. Others answer HTTP 403.
func WithAllowIPs(prefixes ...netip.Prefix) Option {
	return Option{func(c *sandbox.Config) { c.AllowIPs = append([]netip.Prefix{}, prefixes...) }}
}

// WithResolveAfter sets how long a money movement stays pending before its
// final state; by default it resolves right after the first response.
func WithResolveAfter(d time.Duration) Option {
	return Option{func(c *sandbox.Config) { c.ResolveAfter = d }}
}

// WithWebhookURL sets where the sandbox delivers checkout webhooks
// (payment.succeeded), like the URL registered in the dashboard.
func WithWebhookURL(u string) Option {
	return Option{func(c *sandbox.Config) { c.WebhookURL = u }}
}

// WithCheckoutLifetime sets how long, by the sandbox's clock, a checkout session
// stays payable (24 hours by default). A session still unpaid then ends FAILED with
// FailureCode "expired", and no webhook is sent for it.
func WithCheckoutLifetime(d time.Duration) Option {
	return Option{func(c *sandbox.Config) { c.CheckoutLifetime = d }}
}

// WithSessionToken sets the Bearer session token accepted on the short
// /subscriptions paths, in place of the default. An empty token keeps the default.
func WithSessionToken(token string) Option {
	return Option{func(c *sandbox.Config) {
		if token != "" {
			c.SessionTokens = []string{token}
		}
	}}
}
