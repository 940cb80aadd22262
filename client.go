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

// WithUserAgent puts ua in front of the SDK's own User-Agent.
func WithUserAgent(ua string) Option {
	return func(c *config) error { c.userAgent = ua; return nil }
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
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("billing: base URL: %w", err)
	}
	if !u.IsAbs() || u.Host == "" {
		return nil, fmt.Errorf("billing: base URL %q is not absolute", raw)
	}
	switch u.Scheme {
	case "https":
	case "http":
		if !isLoopback(u.Hostname()) {
			return nil, fmt.Errorf("billing: base URL %q: plain http is allowed only to a loopback host; use https", raw)
		}
	default:
		return nil, fmt.Errorf("billing: base URL %q: scheme must be https", raw)
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawQuery, u.Fragment = "", ""
	return u, nil
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
	return &retryablehttp.Client{
		HTTPClient:   &hc,
		Logger:       nil, // the pipeline logs, with secrets and numbers kept out
		RetryWaitMin: cfg.minWait,
		RetryWaitMax: cfg.maxWait,
		RetryMax:     cfg.maxAttempts - 1,
		CheckRetry:   c.checkRetry,
		Backoff:      c.backoff,
		ErrorHandler: retryablehttp.PassthroughErrorHandler,
	}
}

func pooledTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 100
	t.MaxIdleConnsPerHost = 64
	t.IdleConnTimeout = 90 * time.Second
	return t
}

// authKind says which credentials an endpoint takes (SPEC "Authentication").
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
	query  any    // a struct encoded with go-querystring, or nil
	body   any    // encoded as JSON, or nil
	auth   authKind
	retry  retryClass
	// ipRestricted marks the endpoints behind the IP allowlist, whose 403 is
	// ErrIPNotAllowed.
	ipRestricted bool
	// clientReference is named in ErrOutcomeUnknown so the caller can resolve it.
	clientReference string
	// codeIsData marks a status check: its response code describes the transaction
	// asked about, not the request, so only a non-2xx HTTP status is an error.
	codeIsData bool
}

// newOp returns an op with the defaults of a billing-resource call: reads retried, writes
// not, billing credentials.
func newOp(method, path string) *op {
	o := &op{method: method, path: path, auth: authBilling, retry: retryWrite}
	if method == http.MethodGet {
		o.retry = retryRead
	}
	return o
}

// call sends a billing-resource request and returns the envelope's data.
func call[T any](ctx context.Context, c *Client, method, path string, body any) (*T, error) {
	o := newOp(method, path)
	o.body = body
	return send[T](ctx, c, o)
}

// send runs o through the pipeline and returns the envelope's data.
func send[T any](ctx context.Context, c *Client, o *op) (*T, error) {
	env := new(envelope[T])
	if err := c.do(ctx, o, env); err != nil {
		return nil, err
	}
	return &env.Data, nil
}

// envelopeHeader holds what the three envelope families of the spec say about the
// outcome: {success, data}, {message, responseCode, data} and {ResponseCode, Message,
// Data}. JSON keys match case-insensitively, so one struct reads all three, and error
// bodies ({success:false, message, code}) too.
type envelopeHeader struct {
	Success      *bool        `json:"success"`
	Message      string       `json:"message"`
	ResponseCode ResponseCode `json:"responseCode"`
	Code         ResponseCode `json:"code"`
	Field        string       `json:"field"`
}

// code is the response code of the body, whichever key carried it.
func (h *envelopeHeader) code() ResponseCode {
	if h.ResponseCode != "" {
		return h.ResponseCode
	}
	return h.Code
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

// decodeTarget is what the pipeline decodes a response into.
type decodeTarget interface {
	header() *envelopeHeader
	reset()
}

// do sends o and decodes the answer into out. It is the one path every call takes:
// encode, authenticate, send with the retry policy, decode, and turn failures into typed
// errors.
func (c *Client) do(ctx context.Context, o *op, out decodeTarget) error {
	auth, err := c.authorization(o.auth)
	if err != nil {
		return err
	}
	target, err := c.endpoint(o)
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
	st := &attemptState{class: o.retry}
	var res response
	ctx, observed := c.startCall(ctx, o)
	req, err := retryablehttp.NewRequestWithContext(context.WithValue(ctx, attemptKey{}, st), o.method, target, body)
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
	err = c.result(o, st, &res, out.header(), err)
	c.logResult(ctx, o, st, &res, out.header(), err, time.Since(start))
	observed.finish(st, &res, out.header(), err)
	return err
}

// result turns the outcome of the exchange into nil or a typed error.
func (c *Client) result(o *op, st *attemptState, res *response, h *envelopeHeader, err error) error {
	money := o.retry == retryMoney
	if err != nil {
		scrubURL(err)
		if !st.reached && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
			return err // nothing reached the server
		}
		if money && st.reached {
			return &OutcomeUnknownError{ClientReference: o.clientReference, Method: o.method, Path: maskNumbers(o.path), Err: err,
				RequestID: res.requestID()}
		}
		return fmt.Errorf("billing: %s %s: %w", o.method, maskNumbers(o.path), err)
	}
	ok := res.status >= 200 && res.status < 300
	if ok && (o.codeIsData || !h.failed()) {
		return nil
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
	if money && (res.status >= 500 || res.status == http.StatusRequestTimeout || apiErr.Code == CodeConnectionError) {
		return &OutcomeUnknownError{ClientReference: o.clientReference, Method: o.method, Path: apiErr.Path, Err: apiErr,
			RequestID: apiErr.RequestID}
	}
	return apiErr
}

// endpoint builds the absolute URL of o.
func (c *Client) endpoint(o *op) (string, error) {
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

// pathf builds a request path, escaping each argument as one path segment.
func pathf(format string, args ...string) string {
	escaped := make([]any, len(args))
	for i, a := range args {
		escaped[i] = url.PathEscape(a)
	}
	return fmt.Sprintf(format, escaped...)
}
