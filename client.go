package billing

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
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

	// retryWait receives each computed wait before the transport sleeps it; tests
	// replace it to observe the waits without sleeping.
	retryWait func(time.Duration) time.Duration

	observer *clientObserver // nil unless WithObserver

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
		logger:              cfg.logger,
		maxRetryAfter:       time.Minute,
		retryWait:           func(d time.Duration) time.Duration { return d },
	}
	if c.logger == nil {
		c.logger = slog.New(slog.DiscardHandler)
	}
	if cfg.clientID != "" {
		c.basicAuth = "Basic " + base64.StdEncoding.EncodeToString([]byte(cfg.clientID+":"+cfg.clientSecret))
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
	// Errors quote the URL without its userinfo: a password in it must not reach logs.
	shown := redactUserinfo(raw)
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // url.Error quotes the raw URL, password included
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

// redactUserinfo returns raw with the userinfo of its authority (user:password@) replaced,
// working on the text so that it also serves a URL that does not parse.
func redactUserinfo(raw string) string {
	rest := raw
	prefix := ""
	if i := strings.Index(rest, "//"); i >= 0 {
		prefix, rest = rest[:i+2], rest[i+2:]
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	at := strings.LastIndexByte(rest[:end], '@')
	if at < 0 {
		return raw
	}
	return prefix + "redacted@" + rest[at+1:]
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
		hc = *cfg.httpClient
	} else {
		hc.Transport = pooledTransport()
		hc.Timeout = DefaultTimeout
	}
	if cfg.timeoutSet || cfg.httpClient == nil {
		hc.Timeout = cfg.timeout
	}
	// Ours replaces a WithHTTPClient client's own policy: redirects are a money question.
	hc.CheckRedirect = checkRedirect
	return &retryablehttp.Client{
		HTTPClient:     &hc,
		Logger:         nil, // the pipeline logs, with secrets and numbers kept out
		RetryWaitMin:   cfg.minWait,
		RetryWaitMax:   cfg.maxWait,
		RetryMax:       cfg.maxAttempts - 1,
		CheckRetry:     c.checkRetry,
		Backoff:        c.backoff,
		RequestLogHook: c.beginAttempt,
		ErrorHandler:   retryablehttp.PassthroughErrorHandler,
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
}

// send runs o through the pipeline and returns the envelope's data.
func send[T any](ctx context.Context, c *Client, o *op) (*T, error) {
	env := new(envelope[T])
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
func (e *envelope[T]) reset()                  { *e = envelope[T]{} }

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

// decodeTarget is what the pipeline decodes a response into.
type decodeTarget interface {
	header() *envelopeHeader
	reset()
	hasData() bool
}

// do sends o and decodes the answer into out. It is the one path every call takes:
// encode, authenticate, send with the retry policy, decode, and turn failures into typed
// errors.
func (c *Client) do(ctx context.Context, o *op, out decodeTarget) error {
	auth, err := c.authorization(o.auth)
	if err != nil {
		return err
	}
	target, err := c.requestURL(o)
	if err != nil {
		return err
	}
	var body any
	if o.body != nil {
		b, err := json.Marshal(o.body)
		if err != nil {
			return fmt.Errorf("billing: encoding %s %s: %w", o.method, o.path, err)
		}
		body = b // a []byte body is replayable and has a known Content-Length
	}
	var res response
	ctx, observed := c.startCall(ctx, o)
	st, ctx := c.newAttemptState(ctx, o.retry)
	req, err := retryablehttp.NewRequestWithContext(ctx, o.method, target, body)
	if err != nil {
		err = fmt.Errorf("billing: building %s %s: %w", o.method, o.path, err)
		observed.finish(st, &res, nil, err)
		return err
	}
	req.Header.Set("Authorization", auth)
	req.Header.Set("User-Agent", c.userAgent)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.SetResponseHandler(func(resp *http.Response) error { return res.read(resp, out) })

	start := time.Now()
	resp, err := c.http.Do(req)
	if resp != nil && res.from != resp {
		if err == nil {
			// The retries ran out on a retryable status: the last answer is the result.
			err = res.read(resp, out)
		} else {
			resp.Body.Close()
		}
	}
	err = c.result(o, st, &res, out, err)
	c.logResult(ctx, o, st, &res, out.header(), err, time.Since(start))
	observed.finish(st, &res, out.header(), err)
	return err
}

// result turns the outcome of the exchange into nil or a typed error.
//
// For a request that must not be repeated, only an answer the SDK can classify is
// definite. A 1xx, a 3xx (writes follow no redirect) or any other status outside 2xx,
// 4xx and 5xx may come after the work was done: ErrOutcomeUnknown. A money movement
// is also unknown when it is answered 2xx without a recognisable acceptance, 5xx, 408
// or code 0005, and when a refusal answers a re-send (see resentRefusal).
func (c *Client) result(o *op, st *attemptState, res *response, out decodeTarget, err error) error {
	money, h := o.retry == retryMoney, out.header()
	if err != nil {
		scrubURL(err)
		if !st.reached && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
			return err // nothing reached the server
		}
		if money && st.reached {
			return c.unknown(o, res, err)
		}
		return fmt.Errorf("billing: %s %s: %w", o.method, maskNumbers(o.path), err)
	}
	ok := res.status >= 200 && res.status < 300
	if ok && o.codeIsData {
		return nil
	}
	if ok && !h.failed() {
		if !money || accepted(o, h, out) {
			return nil
		}
	}
	apiErr := &APIError{
		StatusCode:   res.status,
		Code:         h.code(),
		Message:      h.Message,
		Field:        h.Field,
		Body:         res.body,
		Method:       o.method,
		Path:         maskNumbers(o.path),
		ipRestricted: o.ipRestricted,
		RequestID:    res.requestID(),
		Header:       res.header,
	}
	if apiErr.Message == "" && !ok {
		apiErr.Message = http.StatusText(res.status)
	}
	switch {
	case ok && !h.failed():
		// Only a money movement gets here: 2xx, yet nothing says the service took it.
		apiErr.Message = "answered without a recognisable acceptance (no accepting response code, or no data)"
		return c.unknown(o, res, apiErr)
	case o.retry != retryRead && !classifiedStatus(res.status):
		return c.unknown(o, res, apiErr)
	case money && (res.status >= 500 || res.status == http.StatusRequestTimeout || apiErr.Code == CodeConnectionError):
		return c.unknown(o, res, apiErr)
	case money && resentRefusal(st, res.status, apiErr.Code):
		return c.unknown(o, res, apiErr)
	}
	return apiErr
}

// unknown wraps err as the unknown outcome of o.
func (c *Client) unknown(o *op, res *response, err error) error {
	return &OutcomeUnknownError{ClientReference: o.clientReference, Method: o.method, Path: maskNumbers(o.path), Err: err,
		RequestID: res.requestID()}
}

// classifiedStatus reports whether status is one the SDK reads as a definite answer:
// 2xx, 4xx or 5xx.
func classifiedStatus(status int) bool {
	return (status >= 200 && status < 300) || (status >= 400 && status < 600)
}

// resentRefusal reports whether a refusal with status and code answers a money movement
// that was sent more than once, an earlier attempt having (perhaps) arrived at the
// server, and says nothing of that attempt. A refusal speaks for the attempt it answers:
// if it depends on what the service holds, the earlier attempt may be what it holds (a
// 2001 "duplicate client reference", a 4075 because the first attempt spent the
// balance, a 409). Definite still are a 429, which does no work, and the refusals that
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
	case http.StatusTooManyRequests, http.StatusUnauthorized, http.StatusForbidden:
		return false
	}
	return true
}

// accepted reports whether a 2xx answer to a money movement, which reports no failure,
// recognisably says the service took it: its data gave the result something, and its
// response code accepts (0000, 0001, or 2000 for a mandate), or, for a movement that
// carries no code, it says success true. An empty body, null, {}, data null or a missing
// code could come from anything between the SDK and the service, and is no acceptance.
func accepted(o *op, h *envelopeHeader, out decodeTarget) bool {
	if !out.hasData() {
		return false
	}
	switch h.code() {
	case CodeSuccess, CodeAccepted, CodePreapprovalOK:
		return true
	case "":
		return o.acceptedWithoutCode && h.Success != nil && *h.Success
	}
	return false
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
	if q := v.Encode(); q != "" {
		u += "?" + q
	}
	return u, nil
}
