// Package sandboxctl drives a sandbox running in another process (billing
// sandbox, go run ./examples/sandbox, a shared one on a test host) through its
// /sandbox/ controls, so a test suite or a program need not write raw HTTP.
// billingtest.Server offers the same controls for a sandbox in the test's own
// process.
//
//	ctl := sandboxctl.New(sandboxctl.DefaultURL, sandboxctl.DefaultClientID, sandboxctl.DefaultClientSecret)
//	now, err := ctl.Advance(ctx, 6*time.Minute) // due resolutions and callbacks run
//	deliveries, err := ctl.Deliveries(ctx, 0, 100)
//
// Every method takes a context, sends one request and returns the sandbox's
// refusal as an *Error. Answers are read up to MaxAnswerBytes.
package sandboxctl

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// The standalone sandbox's address and credentials when it runs with its
// defaults (billing sandbox, go run ./examples/sandbox).
const (
	DefaultURL          = "http://127.0.0.1:4010"
	DefaultClientID     = "sandbox-client"
	DefaultClientSecret = "sandbox-secret"
)

// MaxAnswerBytes bounds the answer the client reads to one request: a page of
// 1,000 deliveries with their bodies fits well inside it.
const MaxAnswerBytes = 64 << 20

// MaxPage is the most movements or deliveries one call returns.
const MaxPage = 1000

// Client drives one sandbox. Its zero value is not usable: build it with New
// or FromEnv. It is safe for use by many goroutines.
type Client struct {
	baseURL          string
	clientID, secret string
	httpClient       *http.Client
}

// New returns a client for the sandbox at baseURL (scheme and host, such as
// DefaultURL) authenticating with the Basic client credentials.
func New(baseURL, clientID, clientSecret string) *Client {
	return &Client{baseURL: strings.TrimRight(baseURL, "/"), clientID: clientID, secret: clientSecret,
		httpClient: &http.Client{Timeout: 30 * time.Second}}
}

// FromEnv returns a client for the sandbox that BILLING_BASE_URL,
// BILLING_CLIENT_ID and BILLING_CLIENT_SECRET name (the variables the
// examples read), each defaulting to the standalone sandbox's own
// (DefaultURL, DefaultClientID, DefaultClientSecret). getenv is os.Getenv in
// a program.
func FromEnv(getenv func(string) string) *Client {
	or := func(name, def string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return def
	}
	return New(or("BILLING_BASE_URL", DefaultURL), or("BILLING_CLIENT_ID", DefaultClientID), or("BILLING_CLIENT_SECRET", DefaultClientSecret))
}

// WithHTTPClient returns a copy of c that sends its requests with hc, for a
// timeout or a transport of the caller's.
func (c *Client) WithHTTPClient(hc *http.Client) *Client {
	copied := *c
	copied.httpClient = hc
	return &copied
}

// URL returns the sandbox's base URL.
func (c *Client) URL() string { return c.baseURL }

// Error is a refusal of the sandbox: its HTTP status and error body.
type Error struct {
	// Status is the HTTP status.
	Status int
	// Code is the sandbox's error code, such as 4000 (validation) or 4101
	// (credentials).
	Code string
	// Message says what was wrong.
	Message string
	// Field names the field at fault, when one is.
	Field string
}

// Error says what the sandbox refused.
func (e *Error) Error() string {
	msg := fmt.Sprintf("sandbox answered HTTP %d", e.Status)
	if e.Code != "" {
		msg += " code " + e.Code
	}
	if e.Message != "" {
		msg += ": " + e.Message
	}
	if e.Status == http.StatusUnauthorized {
		msg += " (check the client id and secret: BILLING_CLIENT_ID, BILLING_CLIENT_SECRET)"
	}
	return msg
}

// Now returns the sandbox's time, without moving it.
func (c *Client) Now(ctx context.Context) (time.Time, error) {
	var v clockView
	if err := c.do(ctx, http.MethodGet, "/sandbox/clock", nil, &v); err != nil {
		return time.Time{}, err
	}
	return v.time()
}

// Advance moves the sandbox's clock forward by d (any duration from 0 to 100
// years) and returns its new time once the work that became due has run:
// resolutions, callbacks and their retries, trial ends, renewals, expiries.
// Advance(0) releases what is due now without moving time.
func (c *Client) Advance(ctx context.Context, d time.Duration) (time.Time, error) {
	if d < 0 {
		return time.Time{}, fmt.Errorf("sandboxctl: Advance takes a duration from 0, not %s", d)
	}
	var v clockView
	if err := c.do(ctx, http.MethodPost, "/sandbox/clock/advance", map[string]string{"duration": d.String()}, &v); err != nil {
		return time.Time{}, err
	}
	return v.time()
}

// Checkout payment methods and outcomes of CompleteCheckout.
const (
	MethodCard         = "CARD"
	MethodMobileMoney  = "MOBILE_MONEY"
	MethodBankTransfer = "BANK_TRANSFER"
	OutcomeSucceeded   = "succeeded"
	OutcomeFailed      = "failed"
)

// CompleteCheckout completes the PENDING checkout session with the given
// reference as a payer on the hosted page would: method is MethodCard,
// MethodMobileMoney or MethodBankTransfer, outcome OutcomeSucceeded or
// OutcomeFailed. A session no longer PENDING is refused (HTTP 409).
func (c *Client) CompleteCheckout(ctx context.Context, reference, method, outcome string) error {
	if reference == "" {
		return errors.New("sandboxctl: CompleteCheckout needs the checkout session's reference")
	}
	return c.do(ctx, http.MethodPost, "/sandbox/payments/"+url.PathEscape(reference)+"/complete",
		map[string]string{"method": method, "outcome": outcome}, nil)
}

// SMS is a text message the sandbox "sent" to a phone.
type SMS struct {
	// Message is the text; a mandate OTP is the code alone, ABCD-1234.
	Message string `json:"message"`
	// SentAt is the sandbox time it was sent.
	SentAt time.Time `json:"sentAt"`
}

// SMS returns the messages sent to msisdn (international: 233241234567),
// newest first.
func (c *Client) SMS(ctx context.Context, msisdn string) ([]SMS, error) {
	var out []SMS
	err := c.do(ctx, http.MethodGet, "/sandbox/sms?"+url.Values{"msisdn": {msisdn}}.Encode(), nil, &out)
	return out, err
}

// Movement is the sandbox's record of one accepted money movement.
type Movement struct {
	// Kind is the operation: checkout, receive, send, send-to-bank,
	// direct-debit or mandate.
	Kind string `json:"kind"`
	// ClientReference is the merchant's reference (a checkout's own reference).
	ClientReference string `json:"clientReference"`
	// TransactionID is the service's id of the movement.
	TransactionID string `json:"transactionId"`
	// State is pending, succeeded or failed.
	State string `json:"state"`
	// ResponseCode is 0001 while pending, then 0000 or the failure code.
	ResponseCode string `json:"responseCode"`
	// Amount and Fee are in minor units.
	Amount int64 `json:"amount"`
	Fee    int64 `json:"fee"`
	// CreatedAt is when it was accepted, by the sandbox clock.
	CreatedAt time.Time `json:"createdAt"`
	// ResolvedAt is when it became final; nil while pending.
	ResolvedAt *time.Time `json:"resolvedAt"`
}

// Movements returns the money movements the sandbox accepted under
// clientReference (by any operation), or every one when clientReference is
// "", oldest first: the newest MaxPage of them at most.
func (c *Client) Movements(ctx context.Context, clientReference string) ([]Movement, error) {
	q := url.Values{"limit": {strconv.Itoa(MaxPage)}}
	if clientReference != "" {
		q.Set("clientReference", clientReference)
	}
	var out []Movement
	err := c.do(ctx, http.MethodGet, "/sandbox/movements?"+q.Encode(), nil, &out)
	return out, err
}

// Delivery is one attempt at posting a callback or webhook.
type Delivery struct {
	// Seq numbers the attempts from 1 in the order they were made; give the
	// last one seen to Deliveries to read only newer ones.
	Seq int `json:"seq"`
	// URL is where it was meant to go: the request's callback URL or the
	// webhook URL.
	URL string `json:"url"`
	// ForwardedTo is where it went instead, while a forward target was set.
	ForwardedTo string `json:"forwardedTo"`
	// Reference is the merchant's reference the body is about.
	Reference string `json:"reference"`
	// Attempt is 1 for the first attempt, 2 for the first redelivery, ...
	Attempt int `json:"attempt"`
	// At is the sandbox time of the attempt.
	At time.Time `json:"at"`
	// Status is the receiver's HTTP status, or 0 when it could not be reached.
	Status int `json:"status"`
	// Body is the JSON posted.
	Body json.RawMessage `json:"body"`
}

// Deliveries returns the callback and webhook attempts made after the one
// numbered after (0 for the first), oldest first, at most limit of them (1
// to MaxPage; 0 means 100).
func (c *Client) Deliveries(ctx context.Context, after, limit int) ([]Delivery, error) {
	q := url.Values{"after": {strconv.Itoa(after)}}
	if limit != 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var out []Delivery
	err := c.do(ctx, http.MethodGet, "/sandbox/deliveries?"+q.Encode(), nil, &out)
	return out, err
}

type forwardView struct {
	URL string `json:"url"`
}

// SetForwardTarget sends every callback and webhook from now on to target
// instead of the URL it was meant for: the body unchanged, the headers
// Billing-Sandbox-Forwarded-For (the URL it was meant for) and
// Billing-Sandbox-Attempt added, an answer other than 2xx redelivered on the
// sandbox's schedule (30s, 1m, 2m, 5m, 10m, 30m). billing listen registers
// itself so.
func (c *Client) SetForwardTarget(ctx context.Context, target string) error {
	return c.do(ctx, http.MethodPut, "/sandbox/forward", map[string]string{"url": target}, nil)
}

// ClearForwardTarget sends callbacks and webhooks where they were meant again.
func (c *Client) ClearForwardTarget(ctx context.Context) error {
	return c.do(ctx, http.MethodDelete, "/sandbox/forward", nil, nil)
}

// ForwardTarget returns the forward target, or "" when none is set.
func (c *Client) ForwardTarget(ctx context.Context) (string, error) {
	var v forwardView
	err := c.do(ctx, http.MethodGet, "/sandbox/forward", nil, &v)
	return v.URL, err
}

// clockView is the answer of the clock controls.
type clockView struct {
	Now   string `json:"now"`
	Exact string `json:"exact"`
}

func (v clockView) time() (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, v.Exact)
	if err != nil {
		return time.Time{}, fmt.Errorf("sandboxctl: the sandbox's clock answer %q is not a time: %w", v.Exact, err)
	}
	return t, nil
}

// envelope is the sandbox's answer: data on success, the error body otherwise.
type envelope struct {
	Success bool            `json:"success"`
	Data    json.RawMessage `json:"data"`
	Message string          `json:"message"`
	Code    json.RawMessage `json:"code"`
	Field   string          `json:"field"`
}

// errNotJSON marks an answer that is not the sandbox's JSON envelope.
var errNotJSON = errors.New("sandboxctl")

// do sends one control request with body as JSON (nil for none) and decodes
// the answer's data into out (nil to ignore it).
func (c *Client) do(ctx context.Context, method, path string, body, out any) error {
	var reader io.Reader
	if body != nil {
		encoded, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("sandboxctl: encoding the request: %w", err)
		}
		reader = bytes.NewReader(encoded)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.baseURL+path, reader)
	if err != nil {
		return fmt.Errorf("sandboxctl: %w", err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.SetBasicAuth(c.clientID, c.secret)
	resp, err := c.httpClient.Do(req)
	if err != nil {
		return fmt.Errorf("sandboxctl: no answer from the sandbox at %s (is it running? start one with billing sandbox): %w", c.baseURL, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, MaxAnswerBytes+1))
	if err != nil {
		return fmt.Errorf("sandboxctl: reading the answer to %s %s: %w", method, path, err)
	}
	if len(raw) > MaxAnswerBytes {
		return fmt.Errorf("sandboxctl: the answer to %s %s is over %d bytes", method, path, MaxAnswerBytes)
	}
	var env envelope
	if err := json.Unmarshal(raw, &env); err != nil {
		return fmt.Errorf("%w: %s answered HTTP %d with a body that is not the sandbox's JSON (is %s a sandbox?)", errNotJSON, c.baseURL, resp.StatusCode, c.baseURL)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 || !env.Success {
		return &Error{Status: resp.StatusCode, Code: strings.Trim(string(env.Code), `"`), Message: env.Message, Field: env.Field}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(env.Data, out); err != nil {
		return fmt.Errorf("sandboxctl: decoding the answer to %s %s: %w", method, path, err)
	}
	return nil
}

// Identity is what a sandbox says of itself (GET /sandbox/identity).
type Identity struct {
	// Sandbox is "billing-sandbox": no live service answers it.
	Sandbox string `json:"sandbox"`
	// Instance is new at every start of the sandbox.
	Instance string `json:"instance"`
	// StartedAt is when this run of the sandbox started.
	StartedAt time.Time `json:"startedAt"`
	// State is the state file the sandbox keeps (billing sandbox -state),
	// nil when it keeps none and forgets everything at exit.
	State *StateFile `json:"state,omitempty"`
}

// StateFile is what a sandbox says of the file keeping its state.
type StateFile struct {
	// File is the file's path on the sandbox's machine.
	File string `json:"file"`
	// Restored tells whether this run started from a state a previous run kept.
	Restored bool `json:"restored"`
	// Error is why the latest write failed, "" while the file is kept.
	Error string `json:"error,omitempty"`
}

// SandboxName is the Sandbox a sandbox's Identity carries.
const SandboxName = "billing-sandbox"

// ErrNotSandbox is returned by Identity when the service at the URL does not
// prove it is a sandbox.
var ErrNotSandbox = errors.New("sandboxctl: not a billing sandbox")

// Identity asks the sandbox who it is. It answers an error wrapping
// ErrNotSandbox when the service at the URL answers but does not say it is a
// sandbox: a development tool that moves money must stop there, since that
// service may be a live one.
func (c *Client) Identity(ctx context.Context) (Identity, error) {
	var v Identity
	err := c.do(ctx, http.MethodGet, "/sandbox/identity", nil, &v)
	var ctlErr *Error
	switch {
	case errors.As(err, &ctlErr) || errors.Is(err, errNotJSON):
		return Identity{}, fmt.Errorf("%w: %s answers GET /sandbox/identity with %v", ErrNotSandbox, c.baseURL, err)
	case err != nil:
		return Identity{}, err
	case v.Sandbox != SandboxName || v.Instance == "":
		return Identity{}, fmt.Errorf("%w: %s does not say it is one", ErrNotSandbox, c.baseURL)
	}
	return v, nil
}

// ClaimForwardTarget is SetForwardTarget, refused with an *Error of status 409
// while another target is set: a second listener never takes over the first
// in silence.
func (c *Client) ClaimForwardTarget(ctx context.Context, target string) error {
	return c.do(ctx, http.MethodPut, "/sandbox/forward", map[string]any{"url": target, "exclusive": true}, nil)
}

// Resend posts the callback or webhook of delivery seq again, body unchanged,
// and returns the new attempt's seq.
func (c *Client) Resend(ctx context.Context, seq int) (int, error) {
	var v struct {
		Seq int `json:"seq"`
	}
	err := c.do(ctx, http.MethodPost, "/sandbox/deliveries/"+strconv.Itoa(seq)+"/resend", nil, &v)
	return v.Seq, err
}
