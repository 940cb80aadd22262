package sandbox

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"
)

// Defaults of Config, also printed by examples/sandbox and billingtest
// (DESIGN "The sandbox").
const (
	DefaultClientID            = "sandbox-client"
	DefaultClientSecret        = "sandbox-secret"
	DefaultSecretKey           = "sk_test_sandbox"
	DefaultSessionToken        = "sess_test_sandbox"
	DefaultDisbursementAccount = "2020202"
	// DefaultSalesAccount is the business's sales (POS) account: the {POS} of
	// the provider's paths and the merchantAccountNumber of its checkout.
	DefaultSalesAccount = "1010101"
	// DefaultDisbursementBalance is 1,000,000.00 GHS in minor units.
	DefaultDisbursementBalance int64 = 100_000_000
	// DefaultPublicKey is the public key of the web SDK: safe in a browser.
	DefaultPublicKey = "pk_test_sandbox"
	// DefaultMerchantName is the business the hosted checkout page names.
	DefaultMerchantName = "Sandbox Merchant"
)

// The scopes of SPEC "Authentication".
const (
	ScopeCustomersRead            = "customers:read"
	ScopeCustomersWrite           = "customers:write"
	ScopeProductsRead             = "products:read"
	ScopeProductsWrite            = "products:write"
	ScopeCreditsRead              = "credits:read"
	ScopeCreditsWrite             = "credits:write"
	ScopeMetersRead               = "meters:read"
	ScopeMetersWrite              = "meters:write"
	ScopeLicensesRead             = "licenses:read"
	ScopeLicensesWrite            = "licenses:write"
	ScopePaymentsWrite            = "payments:write"
	ScopeMobileMoneyReceiveDirect = "mobilemoney-receive-direct"
)

// AllScopes returns every scope of the spec, the default grant.
func AllScopes() []string {
	return []string{
		ScopeCustomersRead, ScopeCustomersWrite, ScopeProductsRead, ScopeProductsWrite,
		ScopeCreditsRead, ScopeCreditsWrite, ScopeMetersRead, ScopeMetersWrite,
		ScopeLicensesRead, ScopeLicensesWrite, ScopePaymentsWrite, ScopeMobileMoneyReceiveDirect,
	}
}

// DefaultAllowIPs returns the default allowlist of the IP-restricted
// endpoints: the loopback addresses 127.0.0.0/8 and ::1.
func DefaultAllowIPs() []netip.Prefix {
	return []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}
}

// Config sets up a sandbox. Its zero value gives the defaults.
type Config struct {
	// ClientID and ClientSecret are the Basic client credentials.
	ClientID, ClientSecret string
	// SecretKey is the Bearer secret key of the billing resources.
	SecretKey string
	// SessionTokens are the Bearer session tokens accepted on the short
	// /subscriptions paths; nil means {DefaultSessionToken}. Empty tokens
	// are ignored.
	SessionTokens []string
	// Scopes granted to the credentials; nil grants all of AllScopes, an
	// empty non-nil slice grants none.
	Scopes []string
	// AllowIPs are the caller addresses admitted to the IP-restricted
	// endpoints (direct receive, send, send-to-bank, direct debit); nil means
	// DefaultAllowIPs. The sandbox reads the connection's address, never a
	// forwarding header.
	AllowIPs []netip.Prefix
	// ResolveAfter is how long a money movement stays pending before it
	// resolves; 0 resolves right after the first response.
	ResolveAfter time.Duration
	// WebhookURL receives the checkout webhooks (payment.succeeded); empty
	// sends none.
	WebhookURL string
	// CheckoutLifetime is how long, by the sandbox clock, a checkout session
	// stays payable; one still unpaid then ends FAILED with failure code
	// "expired" and sends no webhook. Zero means DefaultCheckoutLifetime (24h).
	CheckoutLifetime time.Duration
	// PublicKey is the key the web SDK presents from the payer's browser
	// (SPEC "Client checkout SDKs"); empty means DefaultPublicKey.
	PublicKey string
	// MerchantName is the business the hosted checkout page shows the payer;
	// empty means DefaultMerchantName.
	MerchantName string
	// SalesAccount is the business's sales (POS) account number, which the
	// provider's receive, status, pre-approval and checkout calls name;
	// empty means DefaultSalesAccount.
	SalesAccount string
	// DisbursementAccount is the account number of send-to-bank paths;
	// DisbursementBalance its starting balance in minor units.
	DisbursementAccount string
	DisbursementBalance int64
	// Clock tells the time; nil is the wall clock. With a *ManualClock time
	// moves only through Server.Advance; with any other clock a background
	// goroutine also runs scheduled work when it comes due.
	Clock Clock
	// Logger receives one debug record per request (method, route pattern,
	// status, duration, request id; never credentials); nil discards.
	Logger *slog.Logger
	// Wire is the wire format of the answers, callbacks and webhooks of the
	// money movements: WireSpec (also "") or WireProvider. New panics on
	// any other value; ParseWire checks a name first.
	Wire Wire
}

// withDefaults fills the zero fields of c and copies its slices, so the
// caller's later changes do not reach the server. A zero
// DisbursementBalance also means the default.
func (c Config) withDefaults() Config {
	orDefault := func(v *string, def string) {
		if *v == "" {
			*v = def
		}
	}
	orDefault(&c.ClientID, DefaultClientID)
	orDefault(&c.ClientSecret, DefaultClientSecret)
	orDefault(&c.SecretKey, DefaultSecretKey)
	orDefault(&c.DisbursementAccount, DefaultDisbursementAccount)
	orDefault(&c.SalesAccount, DefaultSalesAccount)
	orDefault(&c.PublicKey, DefaultPublicKey)
	orDefault(&c.MerchantName, DefaultMerchantName)
	if c.SessionTokens == nil {
		c.SessionTokens = []string{DefaultSessionToken}
	}
	// An empty token would admit "Authorization: Bearer " on the session routes.
	c.SessionTokens = slices.DeleteFunc(slices.Clone(c.SessionTokens), func(tok string) bool { return tok == "" })
	if c.Scopes == nil {
		c.Scopes = AllScopes()
	}
	if c.AllowIPs == nil {
		c.AllowIPs = DefaultAllowIPs()
	}
	if c.DisbursementBalance == 0 {
		c.DisbursementBalance = DefaultDisbursementBalance
	}
	if c.Clock == nil {
		c.Clock = realClock{}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Wire == "" {
		c.Wire = WireSpec
	}
	return c.copied()
}

// copied returns c with slices of its own.
func (c Config) copied() Config {
	c.SessionTokens = slices.Clone(c.SessionTokens)
	c.Scopes = slices.Clone(c.Scopes)
	c.AllowIPs = slices.Clone(c.AllowIPs)
	return c
}

// Server is an in-memory billing and payments service. It is an
// http.Handler; serve it with net/http or httptest. Close it when done.
type Server struct {
	cfg     Config
	mux     *http.ServeMux
	creds   credentials
	granted map[string]bool
	sched   *scheduler
	shapes  *shapes // the wire's renderings of answers and callbacks (wire.go)

	deliveries deliveries                 // every callback and webhook attempt
	forward    forwardTarget              // where every delivery goes instead, while set (controls_listen.go)
	instance   string                     // this run's identity, new at every start (GET /sandbox/identity)
	startedAt  time.Time                  // wall time of New
	faults     armedFaults[requestEffect] // injected request faults, under their own lock (faults.go)

	callbackFaults armedFaults[callbackEffect] // injected callback faults, under their own lock
	waiters        waiters                     // channels of After, under their own lock
	keeper         *keeper                     // the state file, when KeepState was called (state_file.go)

	mu            sync.Mutex // guards the resource state below; held briefly by handlers and tasks
	customers     customerStore
	products      productStore
	subscriptions subscriptionStore
	licenses      licenseStore
	credits       creditStore
	meters        meterStore
	money         ledger       // accepted movements by client reference, the disbursement balance (money.go)
	payments      paymentStore // checkout sessions and receives
	payouts       payoutStore  // sends and send-to-bank
	mandates      mandateStore // mandates and direct-debit charges
	sms           smsOutbox    // texts "sent" to customers: mandate OTPs
}

// New returns a sandbox configured by cfg, its zero fields set to the defaults.
func New(cfg Config) *Server {
	cfg = cfg.withDefaults()
	wire, ok := wires[cfg.Wire]
	if !ok {
		panic(fmt.Sprintf("sandbox: unknown wire %q: use %s", cfg.Wire, strings.Join(WireNames(), " or ")))
	}
	s := &Server{
		shapes:  wire,
		cfg:     cfg,
		mux:     http.NewServeMux(),
		creds:   newCredentials(cfg),
		granted: make(map[string]bool, len(cfg.Scopes)),
		sched:   newScheduler(cfg.Clock),
		money:   newLedger(cfg.DisbursementBalance),

		instance:  newInstanceID(),
		startedAt: time.Now().UTC(),
	}
	for _, scope := range cfg.Scopes {
		s.granted[scope] = true
	}
	s.registerAll()
	return s
}

// Config returns the configuration in force, defaults applied.
func (s *Server) Config() Config { return s.cfg.copied() }

// Now returns the sandbox's time: the clock's time plus every Advance so far.
func (s *Server) Now() time.Time { return s.sched.now() }

// Advance moves the sandbox's time forward by d and, before returning, runs
// the work that became due (resolutions, callbacks and their retries, trial
// ends, renewals, expiries) in time order, including work scheduled by that
// work within the window.
func (s *Server) Advance(d time.Duration) {
	s.sched.advance(d)
	s.wakeWaiters() // see After
}

// Close stops the background work of the sandbox. Work not yet due is dropped.
func (s *Server) Close() { s.sched.close() }

// schedule arranges for fn to run when the sandbox's time reaches at; fn
// takes s.mu itself when it touches resource state.
func (s *Server) schedule(at time.Time, fn func()) { s.sched.schedule(at, fn) }
