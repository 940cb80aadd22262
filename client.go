package billing

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"reflect"
	"runtime"
	"strings"
	"time"

	"github.com/google/go-querystring/query"
	"github.com/hashicorp/go-retryablehttp"
)

// Version is the SDK's version, sent in the User-Agent header.
const Version = "0.1.0"

// Defaults of the transport. WithRetry and WithTimeout change them.
const (
	DefaultMaxAttempts = 4
	DefaultMinWait     = 250 * time.Millisecond
	DefaultMaxWait     = 8 * time.Second
	DefaultTimeout     = 30 * time.Second
)

// Client talks to the billing and payments service. Create one with NewClient and share
// it: it is safe for concurrent use and pools its connections. There is no global
// client, so clients with different credentials work side by side.
type Client struct {
	base                string // the base URL, without a trailing slash
	basicAuth           string // "Basic …", empty without client credentials
	secretKeyAuth       string // "Bearer <secret key>", empty without one
	sessionAuth         string // "Bearer <session token>", empty without one
	disbursementAccount string
	userAgent           string
	logger              *slog.Logger
	http                *retryablehttp.Client
	maxRetryAfter       time.Duration

	// attemptTimeout bounds each attempt, from dialling to the end of the body (see
	// attemptContext); 0 leaves the bound to the http.Client the merchant gave.
	attemptTimeout time.Duration

	// retryWait receives each computed wait before the transport sleeps it; tests
	// replace it to observe the waits without sleeping.
	retryWait func(time.Duration) time.Duration

	observer *clientObserver // nil unless WithObserver

	// scrub is the gate every error, log record and Observer callback leaves through
	// (scrub.go), knowing the Client's own credentials.
	scrub *Scrubber

	// Customers registers and manages customers.
	Customers *CustomersService
	// Products keeps the catalog: products and their one-time or recurring prices.
	Products *ProductsService
	// Subscriptions subscribes customers to recurring prices.
	Subscriptions *SubscriptionsService
	// Credits runs the prepaid credit wallet of each customer.
	Credits *CreditsService
	// Meters defines usage meters and records usage events.
	Meters *MetersService
	// Licenses issues and manages software license keys.
	Licenses *LicensesService
	// Payments takes money in: hosted checkout and the mobile-money prompt.
	Payments *PaymentsService
	// Payouts sends money out: to mobile-money wallets and to bank accounts.
	Payouts *PayoutsService
	// Mandates sets up direct-debit mandates and charges under them.
	Mandates *MandatesService
}

// service is the one value every resource service shares (the go-github pattern).
type service struct{ client *Client }

type config struct {
	baseURL             string
	clientID            string
	clientSecret        string
	secretKey           string
	sessionToken        string
	disbursementAccount string
	httpClient          *http.Client
	logger              *slog.Logger
	userAgent           string
	maxAttempts         int
	minWait, maxWait    time.Duration
	timeout             time.Duration
	timeoutSet          bool
	observer            Observer
}

// Option configures a Client.
type Option func(*config) error

// WithBaseURL sets the service's base address, such as https://api.example.com. Plain
// http is accepted only for loopback hosts (a local sandbox).
func WithBaseURL(u string) Option {
	return func(c *config) error { c.baseURL = u; return nil }
}

// WithClientCredentials sets the client id and secret from the dashboard's developer
// settings. They authenticate with HTTP Basic and work on every endpoint; money movement,
// mandates and send-to-bank accept nothing else.
func WithClientCredentials(clientID, clientSecret string) Option {
	return func(c *config) error {
		if clientID == "" || clientSecret == "" {
			return errors.New("billing: WithClientCredentials needs both a client id and a client secret")
		}
		if err := headerSafe("WithClientCredentials", "client id", clientID); err != nil {
			return err
		}
		if err := headerSafe("WithClientCredentials", "client secret", clientSecret); err != nil {
			return err
		}
		c.clientID, c.clientSecret = clientID, clientSecret
		return nil
	}
}

// WithSecretKey sets a secret key. When set, billing resources (customers, products,
// credits, meters, licenses, subscriptions) authenticate with it as a Bearer token.
func WithSecretKey(key string) Option {
	return func(c *config) error {
		if key == "" {
			return errors.New("billing: WithSecretKey needs a key")
		}
		if err := headerSafe("WithSecretKey", "key", key); err != nil {
			return err
		}
		c.secretKey = key
		return nil
	}
}

// WithSessionToken sets a session token for the short /subscriptions paths.
func WithSessionToken(token string) Option {
	return func(c *config) error {
		if token == "" {
			return errors.New("billing: WithSessionToken needs a token")
		}
		if err := headerSafe("WithSessionToken", "token", token); err != nil {
			return err
		}
		c.sessionToken = token
		return nil
	}
}

// WithHTTPClient uses hc's transport, cookie jar and timeout. The client is copied, so
// later changes to hc do not reach the billing Client.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *config) error {
		if hc == nil {
			return errors.New("billing: WithHTTPClient needs a client")
		}
		c.httpClient = hc
		return nil
	}
}

// WithLogger sends the client's logs to l. Without it the client is silent. Logs never
// carry credentials, and mask phone and account numbers.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) error { c.logger = l; return nil }
}

// WithUserAgent puts ua in front of the SDK's own User-Agent. It must be a header value:
// no CR, LF or other control character.
func WithUserAgent(ua string) Option {
	return func(c *config) error {
		if err := headerSafe("WithUserAgent", "user agent", ua); err != nil {
			return err
		}
		c.userAgent = ua
		return nil
	}
}

// headerSafe refuses a value bound for a request header that holds a control character:
// CR or LF would split the header, and net/http refuses to send such a request at all.
// The error names the option but never quotes the value, which may be a secret.
func headerSafe(option, what, value string) error {
	for i := 0; i < len(value); i++ {
		if b := value[i]; b < 0x20 || b == 0x7f {
			return fmt.Errorf("billing: %s: the %s contains a control character (CR, LF, NUL or another) at byte %d; a header value cannot carry it", option, what, i)
		}
	}
	return nil
}

// WithRetry sets how many attempts a request may take in all (1 disables retries) and the
// bounds of the exponential backoff between them. Which requests are retried at all is
// fixed by their kind: see the package documentation.
func WithRetry(maxAttempts int, minWait, maxWait time.Duration) Option {
	return func(c *config) error {
		if maxAttempts < 1 || minWait < 0 || maxWait < minWait {
			return fmt.Errorf("billing: WithRetry(%d, %s, %s): need at least one attempt and 0 <= minWait <= maxWait", maxAttempts, minWait, maxWait)
		}
		c.maxAttempts, c.minWait, c.maxWait = maxAttempts, minWait, maxWait
		return nil
	}
}

// WithTimeout bounds each attempt of a request, from dialling to the end of the body.
// The status checks a Tracker's Run makes share this deadline as its store calls share
// theirs: attempts that begin within a hundredth of d of one another end together, so
// each is bounded by d and by no less than 99% of it.
func WithTimeout(d time.Duration) Option {
	return func(c *config) error {
		if d < 0 {
			return fmt.Errorf("billing: WithTimeout(%s): negative", d)
		}
		c.timeout, c.timeoutSet = d, true
		return nil
	}
}

// WithDisbursementAccount sets the disbursement account number that send-to-bank pays
// out of, unless the call's params name another.
func WithDisbursementAccount(account string) Option {
	return func(c *config) error { c.disbursementAccount = account; return nil }
}

// NewClient builds a Client. It refuses a configuration that could not work: no base URL,
// a relative one, plain http to a host that is not loopback, or no credentials at all.
func NewClient(opts ...Option) (*Client, error) {
	cfg := config{
		maxAttempts: DefaultMaxAttempts,
		minWait:     DefaultMinWait,
		maxWait:     DefaultMaxWait,
		timeout:     DefaultTimeout,
	}
	for _, opt := range opts {
		if err := opt(&cfg); err != nil {
			return nil, err
		}
	}
	base, err := parseBaseURL(cfg.baseURL)
	if err != nil {
		return nil, err
	}
	if cfg.clientID == "" && cfg.secretKey == "" && cfg.sessionToken == "" {
		return nil, errors.New("billing: no credentials: use WithClientCredentials, WithSecretKey or WithSessionToken")
	}

	c := &Client{
		base:                base.String(),
		disbursementAccount: cfg.disbursementAccount,
		userAgent:           userAgent(cfg.userAgent),
		maxRetryAfter:       time.Minute,
		retryWait:           func(d time.Duration) time.Duration { return d },
	}
	basic := ""
	if cfg.clientID != "" {
		basic = base64.StdEncoding.EncodeToString([]byte(cfg.clientID + ":" + cfg.clientSecret))
		c.basicAuth = "Basic " + basic
	}
	c.scrub = NewScrubber(c.secrets(&cfg)...)
	c.logger = scrubLogger(cfg.logger, c.scrub)
	if c.logger == nil {
		c.logger = slog.New(slog.DiscardHandler)
	}
	if cfg.secretKey != "" {
		c.secretKeyAuth = "Bearer " + cfg.secretKey
	}
	if cfg.sessionToken != "" {
		c.sessionAuth = "Bearer " + cfg.sessionToken
	}
	c.http = c.newTransport(&cfg)
	c.setObserver(cfg.observer, c.base)

	common := &service{client: c}
	c.Customers = (*CustomersService)(common)
	c.Products = (*ProductsService)(common)
	c.Subscriptions = (*SubscriptionsService)(common)
	c.Credits = (*CreditsService)(common)
	c.Meters = (*MetersService)(common)
	c.Licenses = (*LicensesService)(common)
	c.Payments = (*PaymentsService)(common)
	c.Payouts = (*PayoutsService)(common)
	c.Mandates = (*MandatesService)(common)
	return c, nil
}

func parseBaseURL(raw string) (*url.URL, error) {
	if raw == "" {
		return nil, errors.New("billing: no base URL: use WithBaseURL")
	}
	// Errors quote the URL without its userinfo, query values and fragment: a password
	// or a token in them must not reach logs.
	shown := redactQuery(redactUserinfo(raw))
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // url.Error quotes the raw URL, password included
		}
		if shown != raw {
			// The parser's own words may quote a piece of the password (an "invalid
			// port" cut from it at a ':').
			err = errors.New("it does not parse as a URL")
		}
		return nil, fmt.Errorf("billing: base URL %q: %w", shown, err)
	}
	if !u.IsAbs() || u.Host == "" {
		return nil, fmt.Errorf("billing: base URL %q is not absolute", shown)
	}
	if u.User != nil {
		return nil, fmt.Errorf("billing: base URL %q carries credentials; use WithClientCredentials, WithSecretKey or WithSessionToken", shown)
	}
	switch u.Scheme {
	case "https":
	case "http":
		if !isLoopback(u.Hostname()) {
			return nil, fmt.Errorf("billing: base URL %q: plain http is allowed only to a loopback host; use https", shown)
		}
	default:
		return nil, fmt.Errorf("billing: base URL %q: scheme must be https", shown)
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawQuery, u.Fragment = "", ""
	return u, nil
}

// secrets returns every secret the Client holds, for its Scrubber: the credentials it
// was given (the client id and secret and their Basic pair, the API key, the session
// token) and the disbursement account.
func (c *Client) secrets(cfg *config) []string {
	basic := ""
	if cfg.clientID != "" {
		basic = cfg.clientID + ":" + cfg.clientSecret
	}
	secrets := []string{cfg.clientID, cfg.clientSecret, basic, cfg.secretKey, cfg.sessionToken, cfg.disbursementAccount}
	// The base URL's query is not sent, but a token put there is a secret all the same.
	if _, query, ok := strings.Cut(cfg.baseURL, "?"); ok {
		query, _, _ = strings.Cut(query, "#")
		for _, kv := range strings.Split(query, "&") {
			_, v, _ := strings.Cut(kv, "=")
			if d, err := url.QueryUnescape(v); err == nil && d != v {
				secrets = append(secrets, d)
			}
			secrets = append(secrets, v)
		}
	}
	return secrets
}

// Scrubber returns the Client's own Scrubber: the one every error, log record, Observer
// callback and span of the Client leaves through, knowing the credentials the Client
// was given. Pass through it any text a program prints beside what the SDK prints.
func (c *Client) Scrubber() *Scrubber {
	if c == nil {
		return nil
	}
	return c.scrub
}

// redactUserinfo returns raw with the userinfo of its authority (user:password@) replaced,
// working on the text so that it also serves a URL that does not parse.
func redactUserinfo(raw string) string {
	rest := raw
	prefix := ""
	if i := strings.Index(rest, "//"); i >= 0 {
		prefix, rest = rest[:i+2], rest[i+2:]
	}
	// The userinfo runs to the last '@': a password may hold '/', '?', '#' and '@' too,
	// and hiding a path with it is better than quoting a password.
	at := strings.LastIndexByte(rest, '@')
	if at < 0 {
		return raw
	}
	return prefix + "redacted@" + rest[at+1:]
}

// redactQuery returns raw with the value of every parameter of its query, and its
// fragment, replaced: "?token=[redacted]&limit=[redacted]". The names stay, to say which
// parameter is refused.
func redactQuery(raw string) string {
	rest, fragment, hasFragment := strings.Cut(raw, "#")
	base, query, hasQuery := strings.Cut(rest, "?")
	if !hasQuery && !hasFragment {
		return raw
	}
	shown := base
	if hasQuery {
		params := strings.Split(query, "&")
		for i, kv := range params {
			if k, v, ok := strings.Cut(kv, "="); ok && v != "" {
				params[i] = k + "=" + redacted
			} else if !ok && kv != "" {
				params[i] = redacted
			}
		}
		shown += "?" + strings.Join(params, "&")
	}
	if hasFragment && fragment != "" {
		shown += "#" + redacted
	}
	return shown
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func userAgent(prefix string) string {
	ua := "billing-go/" + Version + " " + runtime.Version()
	if prefix != "" {
		ua = prefix + " " + ua
	}
	return ua
}

// newTransport builds the retrying transport: our retry policy and backoff, error bodies
// passed through to the pipeline, and a connection pool large enough that concurrent
// callers reuse connections instead of opening new ones.
func (c *Client) newTransport(cfg *config) *retryablehttp.Client {
	var hc http.Client
	if cfg.httpClient != nil {
		// The merchant's client keeps its Timeout unless WithTimeout says otherwise.
		hc = *cfg.httpClient
		if cfg.timeoutSet {
			hc.Timeout = cfg.timeout
		}
	} else {
		// The SDK's own client bounds each attempt with a deadline on the attempt's
		// context instead of http.Client.Timeout: the same bound, without net/http
		// deriving a context, forking the request and wrapping the body for it on
		// every request.
		hc.Transport = pooledTransport()
		c.attemptTimeout = cfg.timeout
	}
	// Ours replaces a WithHTTPClient client's own policy: redirects are a money question.
	hc.CheckRedirect = checkRedirect
	// The policy sendWithRetries follows; its loop, not retryablehttp's Do, sends, so
	// nothing here logs (the pipeline does, with secrets and numbers kept out) and the
	// last attempt's answer or error passes through as it is.
	return &retryablehttp.Client{
		HTTPClient:     &hc,
		RetryWaitMin:   cfg.minWait,
		RetryWaitMax:   cfg.maxWait,
		RetryMax:       cfg.maxAttempts - 1,
		CheckRetry:     c.checkRetry,
		Backoff:        c.backoff,
		RequestLogHook: c.beginAttempt,
	}
}

// maxRedirects is how many same-origin redirects a read follows, as net/http does.
const maxRedirects = 10

// checkRedirect is the redirect policy of every http.Client the SDK uses (DESIGN
// "Transport: redirects and replays"). A write follows no redirect: its 3xx comes back
// to the pipeline, which reports it as an unknown outcome, since the server may have
// done the work before answering it; following it would send the write again, or turn
// it into a GET whose answer would pass for the write's. A read follows a redirect only
// within its origin (scheme, host and port), so credentials never travel to another
// host, a subdomain or plain http; another origin's 3xx is the read's answer.
func checkRedirect(req *http.Request, via []*http.Request) error {
	first := via[0]
	if first.Method != http.MethodGet && first.Method != http.MethodHead {
		return http.ErrUseLastResponse
	}
	if st, _ := first.Context().Value(attemptKey{}).(*attemptState); st != nil && st.sideEffects {
		return http.ErrUseLastResponse // a GET that changes state is a write
	}
	if !sameOrigin(first.URL, req.URL) {
		return http.ErrUseLastResponse
	}
	if len(via) >= maxRedirects {
		return fmt.Errorf("stopped after %d redirects", maxRedirects)
	}
	return nil
}

// sameOrigin reports whether a and b share scheme, host and port (RFC 6454).
func sameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Hostname(), b.Hostname()) && originPort(a) == originPort(b)
}

func originPort(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if strings.EqualFold(u.Scheme, "http") {
		return "80"
	}
	return "443"
}

func pooledTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 100
	t.MaxIdleConnsPerHost = 64
	t.IdleConnTimeout = 90 * time.Second
	return t
}

// authKind says which credentials an endpoint takes.
type authKind uint8

const (
	// authBilling: billing resources take the secret key as Bearer when configured,
	// otherwise the client credentials.
	authBilling authKind = iota
	// authBasic: money movement, mandates and send-to-bank take client credentials only.
	authBasic
	// authSession: the short /subscriptions paths take a session token or the secret key.
	authSession
)

func (c *Client) authorization(k authKind) (string, error) {
	switch k {
	case authBasic:
		if c.basicAuth != "" {
			return c.basicAuth, nil
		}
		return "", errors.New("billing: this endpoint needs client credentials (WithClientCredentials)")
	case authSession:
		if c.sessionAuth != "" {
			return c.sessionAuth, nil
		}
		if c.secretKeyAuth != "" {
			return c.secretKeyAuth, nil
		}
		return "", errors.New("billing: this endpoint needs a session token or a secret key")
	default:
		if c.secretKeyAuth != "" {
			return c.secretKeyAuth, nil
		}
		if c.basicAuth != "" {
			return c.basicAuth, nil
		}
		return "", errors.New("billing: this endpoint needs a secret key or client credentials")
	}
}

// op is one call to the service: everything the pipeline needs besides the context.
type op struct {
	method string
	path   string // escaped, relative to the base URL
	// template is the endpoint's path template, the call's route for an Observer; empty
	// for an op not built from the endpoints table.
	template string
	query    any // a struct encoded with go-querystring, or nil
	body     any // encoded as JSON, or nil
	auth     authKind
	retry    retryClass
	// ipRestricted marks the endpoints behind the IP allowlist, whose 403 is
	// ErrIPNotAllowed.
	ipRestricted bool
	// clientReference is named in ErrOutcomeUnknown so the caller can resolve it.
	clientReference string
	// codeIsData marks a status check: its response code describes the transaction
	// asked about, not the request, so only a non-2xx HTTP status is an error.
	codeIsData bool
	// acceptedWithoutCode marks a money movement whose acceptance carries no response
	// code (checkout create answers {success, data}); every other one must answer an
	// accepting code (see accepted).
	acceptedWithoutCode bool
	// changesState marks a GET that changes state on the service (the endpoint's
	// changesState flag). Nothing in its method says so, so its caller is told
	// ErrOutcomeUnknown when it failed after it was written.
	changesState bool
	// refused is the path builder's refusal of a path argument: the call is not made.
	refused error
	// operation and findOut are the endpoint's words (endpoint_words.go): what its
	// errors call it, and where to look when its answer was lost.
	operation, findOut string
}

// sideEffects reports whether o changes state on the service (see endpoint.sideEffects).
func (o *op) sideEffects() bool {
	return o.changesState || (o.method != http.MethodGet && o.method != http.MethodHead)
}

// send runs o through the pipeline and returns the envelope's data.
func send[T any](ctx context.Context, c *Client, o *op) (*T, error) {
	env := new(envelope[T])
	if p, ok := any(&env.Data).(itemBounded); ok {
		p.boundItems(pageLimit(o.query))
	}
	if err := c.do(ctx, o, env); err != nil {
		return nil, err
	}
	return &env.Data, nil
}

// envelopeHeader holds what the three envelope families of the service say about the
// outcome: {success, data}, {message, responseCode, data} and {ResponseCode, Message,
// Data}. JSON keys match case-insensitively, so one struct reads all three, and error
// bodies ({success:false, message, code}) too; the code is read by wireCode, under
// responseCode or code.
type envelopeHeader struct {
	Success *bool  `json:"success"`
	Message string `json:"message"`
	wireCode
	Field string `json:"field"`
}

// failed reports whether a 2xx body nevertheless reports a failure.
func (h *envelopeHeader) failed() bool {
	return (h.Success != nil && !*h.Success) || h.code().IsFailure()
}

// envelope is a response body decoded in one pass: the header and the typed data.
type envelope[T any] struct {
	envelopeHeader
	Data T `json:"data"`
}

func (e *envelope[T]) header() *envelopeHeader { return &e.envelopeHeader }

// reset empties e for another attempt's answer; a page keeps its bound.
func (e *envelope[T]) reset() {
	e.envelopeHeader = envelopeHeader{}
	if p, ok := any(&e.Data).(itemBounded); ok {
		p.resetData()
		return
	}
	var zero T
	e.Data = zero
}

// hasData reports whether the body's data gave the result anything: not absent, null,
// {}, or only fields the SDK does not read.
func (e *envelope[T]) hasData() bool {
	v := reflect.ValueOf(&e.Data).Elem()
	switch v.Kind() {
	case reflect.Map, reflect.Slice:
		return v.Len() > 0
	}
	return !v.IsZero()
}

// decodeStream reads a 2xx body from r when e's data is a page, which is read item by
// item and no further than its bound; streamed is false for any other data, which
// response.read decodes from the whole body.
func (e *envelope[T]) decodeStream(r io.Reader) (streamed bool, err error) {
	p, ok := any(&e.Data).(interface {
		decodeStream(r io.Reader, h *envelopeHeader) error
	})
	if !ok {
		return false, nil
	}
	return true, p.decodeStream(r, &e.envelopeHeader)
}

// decodeTarget is what the pipeline decodes a response into.
type decodeTarget interface {
	header() *envelopeHeader
	reset()
	hasData() bool
	decodeStream(r io.Reader) (streamed bool, err error)
}

// do sends o and decodes the answer into out. It is the one path every call takes:
// encode, authenticate, send with the retry policy, decode, and turn failures into typed
// errors.
func (c *Client) do(ctx context.Context, o *op, out decodeTarget) error {
	if ctx == nil {
		return errNilContext()
	}
	if o.refused != nil {
		return o.refused
	}
	auth, err := c.authorization(o.auth)
	if err != nil {
		return err
	}
	target, err := c.requestURL(o)
	if err != nil {
		return err
	}
	var body []byte
	if o.body != nil {
		b, err := json.Marshal(o.body)
		if err != nil {
			return fmt.Errorf("billing: encoding %s %s: %w", o.method, o.path, err)
		}
		body = b // a []byte body is replayable and has a known Content-Length
	}
	call := new(callState)
	st, res := &call.attempts, &call.res
	ctx, observed := c.startCall(ctx, o)
	ctx = c.newAttemptState(ctx, st, o.retry, o.sideEffects())
	// One backing array for the header values every attempt sends, rather than one each
	// (as Header.Set makes): the keys are already canonical.
	call.header = [3]string{auth, c.userAgent, "application/json"}
	req := outgoing{method: o.method, url: target, body: body, header: call.header[:], st: st, res: res, out: out}
	start := time.Now()
	err = c.sendWithRetries(ctx, &req)
	if req.unbuilt {
		err = fmt.Errorf("billing: building %s %s: %w", o.method, o.path, err)
		observed.finish(st, res, nil, err)
		return err
	}
	err = c.result(o, st, res, out, err)
	c.logResult(ctx, o, st, res, out.header(), err, time.Since(start))
	observed.finish(st, res, out.header(), err)
	return err
}

// callState is what one call keeps on its way through the pipeline, in one allocation:
// what the retry policy learns of its attempts, the header values each attempt sends,
// and the answer read.
type callState struct {
	attempts attemptState
	res      response
	header   [3]string
}

// result turns the outcome of the exchange into nil or a typed error.
//
// A money movement's answer is classified by classifyMoney, the one rule of what such an
// answer says (see moneyResult); a failure after it may have reached the service is
// ErrOutcomeUnknown. For any other write, an answer the SDK cannot classify (a 1xx, a
// 3xx, since writes follow no redirect, or any other status outside 2xx, 4xx and 5xx)
// may come after the work was done: ErrOutcomeUnknown too, as is a failure after a GET
// that changes state was written.
func (c *Client) result(o *op, st *attemptState, res *response, out decodeTarget, err error) error {
	h := out.header()
	if err != nil {
		c.scrub.scrubURL(err)
		if !st.reached && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
			return err // nothing reached the server
		}
		if st.reached && o.retry != retryRead {
			// A write the service cannot dedupe may have been done: its caller must look
			// before doing it again.
			return c.unknown(o, res, err)
		}
		if st.class != retryRead && !st.reached && !st.delivered && !st.resent {
			// No attempt wrote a byte of the request: it never reached the service.
			return fmt.Errorf("billing: %s %s: %w: %w", o.method, c.scrub.Text(o.path), ErrNotSent, err)
		}
		return fmt.Errorf("billing: %s %s: %w", o.method, c.scrub.Text(o.path), err)
	}
	ok := res.status >= 200 && res.status < 300
	if ok && o.codeIsData {
		return nil
	}
	if o.retry == retryMoney {
		return c.moneyResult(o, st, res, out)
	}
	if ok && !h.failed() {
		return nil
	}
	apiErr := c.apiError(o, res, h)
	if o.retry != retryRead && !classifiedStatus(res.status) {
		return c.unknown(o, res, apiErr)
	}
	return apiErr
}

// moneyResult reads the answer to a money movement as classifyMoney says: accepted is
// nil, refused an *APIError, unknown an *OutcomeUnknownError. Beside the table, a refusal
// that answers a re-send and does not judge the request itself is unknown too (see
// resentRefusal): the earlier attempt may be what it refuses.
func (c *Client) moneyResult(o *op, st *attemptState, res *response, out decodeTarget) error {
	h := out.header()
	verdict := classifyMoney(answerOf(o, res, out))
	if verdict == verdictAccepted {
		return nil
	}
	apiErr := c.apiError(o, res, h)
	if verdict == verdictRefused && !resentRefusal(st, res.status, apiErr.Code) {
		return apiErr
	}
	if res.status >= 200 && res.status < 300 {
		apiErr.Message = unknownReason(h, out.hasData(), apiErr.Message)
	}
	return c.unknown(o, res, apiErr)
}

// unknownReason says why a 2xx answer to a money movement is no definite answer,
// keeping the service's own message after it.
func unknownReason(h *envelopeHeader, data bool, message string) string {
	reason := "answered without a recognisable acceptance (no accepting response code, or no data)"
	switch flag, code := successFlagOf(h), h.code().class(); {
	case code == codeConnectionError:
		reason = "answered code 0005: the network could not be reached, the final state is unknown"
	case (flag == successTrue && code == codeFailure) || (flag == successFalse && code == codeAccepting):
		reason = "answered with a success flag and a response code that contradict each other"
	case flag == successFalse && data:
		reason = "answered success false with the movement's data"
	}
	if message != "" {
		reason += ": " + message
	}
	return reason
}

// apiError is the *APIError of an answer the pipeline read.
func (c *Client) apiError(o *op, res *response, h *envelopeHeader) *APIError {
	apiErr := &APIError{
		Operation:    o.operation,
		StatusCode:   res.status,
		Code:         h.code(),
		Message:      h.Message,
		Field:        h.Field,
		Body:         res.body,
		Method:       o.method,
		Path:         c.scrub.Text(o.path),
		ipRestricted: o.ipRestricted,
		RequestID:    res.requestID(),
		Header:       res.header,
		scrub:        c.scrub,
	}
	if apiErr.Message == "" && (res.status < 200 || res.status >= 300) {
		apiErr.Message = http.StatusText(res.status)
	}
	return apiErr
}

// unknown wraps err as the unknown outcome of o.
func (c *Client) unknown(o *op, res *response, err error) error {
	return &OutcomeUnknownError{Operation: o.operation, findOut: o.findOut, ClientReference: o.clientReference, Method: o.method, Path: c.scrub.Text(o.path), Err: err,
		RequestID: res.requestID(), scrub: c.scrub}
}

// classifiedStatus reports whether status is one the SDK reads as a definite answer:
// 2xx, 4xx or 5xx.
func classifiedStatus(status int) bool {
	return (status >= 200 && status < 300) || (status >= 400 && status < 600)
}

// verdict is what an answer to a money movement says of the money.
type verdict uint8

const (
	// verdictUnknown: the money may or may not have moved. The zero value, so that
	// anything not decided is the safe answer.
	verdictUnknown verdict = iota
	// verdictAccepted: the service took the movement.
	verdictAccepted
	// verdictRefused: the service refused it; nothing moved.
	verdictRefused
)

func (v verdict) String() string {
	switch v {
	case verdictAccepted:
		return "accepted"
	case verdictRefused:
		return "refused"
	}
	return "unknown"
}

// statusClass sorts HTTP statuses as an answer to a money movement reads them.
type statusClass uint8

const (
	statusInformational  statusClass = iota // 1xx
	statusSuccess                           // 2xx
	statusRedirect                          // 3xx, never followed by a write
	statusClientError                       // 4xx but 408, 429 included
	statusRequestTimeout                    // 408
	statusServerError                       // 5xx
	statusUnclassified                      // anything else
	statusClassCount
)

func statusClassOf(status int) statusClass {
	switch {
	case status == http.StatusRequestTimeout:
		return statusRequestTimeout
	case status >= 100 && status < 200:
		return statusInformational
	case status >= 200 && status < 300:
		return statusSuccess
	case status >= 300 && status < 400:
		return statusRedirect
	case status >= 400 && status < 500:
		return statusClientError
	case status >= 500 && status < 600:
		return statusServerError
	}
	return statusUnclassified
}

// successFlag is the body's success field: absent, true or false.
type successFlag uint8

const (
	successAbsent successFlag = iota
	successTrue
	successFalse
	successFlagCount
)

func successFlagOf(h *envelopeHeader) successFlag {
	switch {
	case h.Success == nil:
		return successAbsent
	case *h.Success:
		return successTrue
	}
	return successFalse
}

// moneyAnswer is what classifyMoney reads of an answer to a money movement.
type moneyAnswer struct {
	status  statusClass
	success successFlag
	code    codeClass
	// data: the body's data gave the result something (not absent, null or {}). Read
	// on 2xx answers only: an error body's data is not decoded.
	data bool
	// codeDue: the endpoint accepts with a response code; checkout create alone
	// accepts with {success: true, data} and no code.
	codeDue bool
}

func answerOf(o *op, res *response, out decodeTarget) moneyAnswer {
	h := out.header()
	return moneyAnswer{
		status:  statusClassOf(res.status),
		success: successFlagOf(h),
		code:    h.code().class(),
		data:    res.status >= 200 && res.status < 300 && out.hasData(),
		codeDue: !o.acceptedWithoutCode,
	}
}

// classifyMoney is the one rule of what an answer to a money movement says; its truth
// table is written in docs/money-safety.md. An answer is a refusal only when something
// in it says no and nothing says yes; it is an acceptance only when it says yes in the
// form the endpoint accepts in, with data, and nothing says no. Everything else,
// contradictions first, is unknown, since a false "refused" invites a second payment:
//   - 1xx, 3xx, 408, 5xx and statuses outside 100-599 are unknown whatever the body
//     says: the work may have been done before the answer;
//   - code 0005 (the network could not be reached) is unknown;
//   - yes is success true or an accepting code (0000, 0001, 2000); no is success false,
//     a failure code, or a 4xx status (429 included: it did no work);
//   - yes and no together are unknown;
//   - no alone is refused;
//   - yes alone is accepted with data and an accepting code, or, where the endpoint
//     accepts without a code, with success true and no code at all;
//   - a code the SDK does not know says neither yes nor no.
func classifyMoney(a moneyAnswer) verdict {
	if a.status != statusSuccess && a.status != statusClientError {
		return verdictUnknown
	}
	if a.code == codeConnectionError {
		return verdictUnknown
	}
	yes := a.success == successTrue || a.code == codeAccepting
	no := a.success == successFalse || a.code == codeFailure || a.status == statusClientError
	switch {
	case yes && no:
		return verdictUnknown
	case no:
		return verdictRefused
	case a.data && (a.code == codeAccepting || (a.code == codeNone && !a.codeDue && a.success == successTrue)):
		return verdictAccepted
	}
	return verdictUnknown
}

// resentRefusal reports whether a refusal with status and code answers a money movement
// that was sent more than once, an earlier attempt having (perhaps) arrived at the
// server, and says nothing of that attempt. A refusal speaks for the attempt it answers:
// if it depends on what the service holds, the earlier attempt may be what it holds (a
// 2001 "duplicate client reference", a 4075 because the first attempt spent the
// balance, a 409), and a 429 says only that this attempt did no work: the earlier one,
// answered 429 as well (the one answer after which a money movement is sent again), may
// have gone through the limiter and done its work. Definite still are the refusals that
// judge the request itself, its content or its caller, identical in every attempt: 4000
// validation, 4101 keys, 4103 channel, 3050 not registered, 4070 declined, and HTTP 401
// and 403. An earlier attempt that surely never arrived (its dial failed, or it wrote
// nothing) does not count: a duplicate then is one of an earlier call, a true refusal.
func resentRefusal(st *attemptState, status int, code ResponseCode) bool {
	if !st.resent {
		return false
	}
	switch code {
	case CodeValidation, CodeKeysMismatch, CodeChannelNotAllowed, CodeNotRegistered, CodeDeclined:
		return false
	}
	switch status {
	case http.StatusUnauthorized, http.StatusForbidden:
		return false
	}
	return true
}

// requestURL builds the absolute URL of o, with its query.
func (c *Client) requestURL(o *op) (string, error) {
	u := c.base + o.path
	if o.query == nil {
		return u, nil
	}
	v, err := query.Values(o.query)
	if err != nil {
		return "", fmt.Errorf("billing: encoding query of %s: %w", o.path, err)
	}
	q, err := encodeQuery(v)
	if err != nil {
		return "", err
	}
	if q != "" {
		u += "?" + q
	}
	return u, nil
}
