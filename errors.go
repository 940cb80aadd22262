package billing

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// ResponseCode is the service's own result code, carried by payment flows beside the HTTP
// status. It is kept as the four-character string the service sends.
type ResponseCode string

// The response codes named by the service.
const (
	CodeSuccess             ResponseCode = "0000" // processed successfully; fulfil the order
	CodeAccepted            ResponseCode = "0001" // accepted; the final state follows by callback
	CodeConnectionError     ResponseCode = "0005" // telco or card network unreachable; final state unknown
	CodePreapprovalOK       ResponseCode = "2000" // mandate action completed
	CodeFailed              ResponseCode = "2001" // failed (wrong PIN, timeout, funds, duplicate reference, …)
	CodeNotRegistered       ResponseCode = "3050" // number not registered for mobile-money payouts
	CodeValidation          ResponseCode = "4000" // validation error in the request
	CodeDeclined            ResponseCode = "4070" // declined by the gateway (fees, minimum amount)
	CodeInsufficientBalance ResponseCode = "4075" // disbursement account balance too low
	CodeKeysMismatch        ResponseCode = "4101" // keys mismatch or direct scopes disabled
	CodeChannelNotAllowed   ResponseCode = "4103" // account not allowed to transact on this channel
	CodePreapprovalFailed   ResponseCode = "4204" // mandate request failed
	CodeCarrierError        ResponseCode = "5000" // internal error or maintenance at the carrier
)

// IsFailure reports whether the code means the operation failed. Success, acceptance and
// mandate acknowledgement are not failures; an absent code is not a failure either, nor
// is the word "success" with which some status checks say the request was answered.
func (c ResponseCode) IsFailure() bool {
	switch c {
	case "", CodeSuccess, CodeAccepted, CodePreapprovalOK:
		return false
	}
	return !c.isSuccessWord()
}

// isSuccessWord reports whether the code is the word "success" (any casing). The
// provider's send and send-to-bank status checks answer it for a failed transfer as for
// a successful one: the request succeeded, and transactionStatus tells the transfer's
// state. It is therefore never CodeSuccess.
func (c ResponseCode) isSuccessWord() bool { return strings.EqualFold(string(c), "success") }

// codeClass sorts response codes as an answer to a money movement reads them.
type codeClass uint8

const (
	codeNone            codeClass = iota // no code in the body
	codeAccepting                        // 0000, 0001, 2000: the service took the request
	codeFailure                          // a code the service names as a failure
	codeConnectionError                  // 0005: the final state is unknown
	codeUnrecognised                     // any other code: it says neither yes nor no
	codeClassCount
)

// codeClasses is the class of every response code the service names; any other code is
// codeUnrecognised.
var codeClasses = map[ResponseCode]codeClass{
	CodeSuccess:             codeAccepting,
	CodeAccepted:            codeAccepting,
	CodePreapprovalOK:       codeAccepting,
	CodeConnectionError:     codeConnectionError,
	CodeFailed:              codeFailure,
	CodeNotRegistered:       codeFailure,
	CodeValidation:          codeFailure,
	CodeDeclined:            codeFailure,
	CodeInsufficientBalance: codeFailure,
	CodeKeysMismatch:        codeFailure,
	CodeChannelNotAllowed:   codeFailure,
	CodePreapprovalFailed:   codeFailure,
	CodeCarrierError:        codeFailure,
}

// class returns the code's class.
func (c ResponseCode) class() codeClass {
	if c == "" {
		return codeNone
	}
	if k, ok := codeClasses[c]; ok {
		return k
	}
	return codeUnrecognised
}

// Sentinel errors for the decisions a caller usually makes. Test with errors.Is; the
// concrete error is an *APIError (or, for ErrOutcomeUnknown, an *OutcomeUnknownError).
var (
	// ErrNotFound: the resource does not exist (HTTP 404).
	ErrNotFound = errors.New("billing: not found")
	// ErrUnauthorized: the credentials were refused (HTTP 401) or the scope is disabled
	// (response code 4101).
	ErrUnauthorized = errors.New("billing: unauthorized")
	// ErrIPNotAllowed: a whitelisted endpoint (receive, send, send-to-bank, direct debit)
	// refused the caller's address with HTTP 403.
	ErrIPNotAllowed = errors.New("billing: caller IP address not whitelisted")
	// ErrRateLimited: the service answered 429 and the retries ran out. For a money
	// movement sent more than once the error also matches ErrOutcomeUnknown: a limiter
	// may have let an earlier attempt through to do its work.
	ErrRateLimited = errors.New("billing: rate limited")
	// ErrConflict: the request clashes with existing state (HTTP 409), such as a
	// duplicate email.
	ErrConflict = errors.New("billing: conflict")
	// ErrInvalidRequest: the service refused the request as invalid (HTTP 400 or
	// response code 4000).
	ErrInvalidRequest = errors.New("billing: invalid request")
	// ErrOutcomeUnknown: a money movement, or another write the service cannot dedupe (the
	// endpoints the SDK never re-sends: a credit grant or deduct, a subscription's create,
	// cancel, pause or resume, a license's activate or revoke, a meter event without an
	// idempotency key, ...), may or may not have happened. It was sent, but
	// no definite answer came back (timeout, reset connection, 5xx, response code 0005,
	// a redirect or any other answer that is neither yes nor no, a 2xx without an
	// accepting code and data, an answer that says yes and no at once such as success
	// false with an accepting code, or a refusal of a re-send the first attempt may
	// explain). A write that is not a money movement gets it when it failed after it was
	// written (a reset connection, a timeout, a body cut short) or was answered by a 1xx
	// or 3xx. Never re-send it blindly: resolve a money movement with the status check or
	// the Tracker; for any other write the error's text says where to look (the ledger,
	// the license, the subscription).
	ErrOutcomeUnknown = errors.New("billing: outcome unknown")
	// ErrNotSent: the request surely never reached the service (no connection could be
	// made, or nothing was written on the one made), so nothing it asked for happened. A
	// money movement may be sent again under the same client reference; the Tracker's
	// send helpers release the movement they tracked for it.
	ErrNotSent = errors.New("billing: request never reached the service")
	// ErrInsufficientCredits: a credit deduct asked for more than the wallet's balance
	// (HTTP 400); nothing was deducted and no ledger entry was written.
	ErrInsufficientCredits = errors.New("billing: insufficient credits")
)

// codeInsufficientCredits is the error code of a deduct beyond the balance. The spec
// leaves that case open; the SDK and its sandbox agree on this code (DESIGN "The sandbox").
const codeInsufficientCredits ResponseCode = "insufficient_credits"

// codeSentinels maps response codes to the sentinel errors.Is matches for them.
var codeSentinels = map[ResponseCode]error{
	CodeKeysMismatch: ErrUnauthorized,
	CodeValidation:   ErrInvalidRequest,

	codeInsufficientCredits: ErrInsufficientCredits,

	CodeLicenseNotActive:       ErrLicenseNotActive,
	CodeLicenseExpired:         ErrLicenseExpired,
	CodeActivationLimitReached: ErrActivationLimit,
	CodeLicenseRevoked:         ErrLicenseRevoked,
}

// statusSentinels maps HTTP statuses to the sentinel errors.Is matches for them.
var statusSentinels = map[int]error{
	http.StatusNotFound:        ErrNotFound,
	http.StatusUnauthorized:    ErrUnauthorized,
	http.StatusTooManyRequests: ErrRateLimited,
	http.StatusConflict:        ErrConflict,
	http.StatusBadRequest:      ErrInvalidRequest,
}

// APIError is a failure reported by the service: a non-2xx HTTP status, or a 2xx whose
// body says the operation failed (success false, or a failing response code).
type APIError struct {
	// StatusCode is the HTTP status of the response.
	StatusCode int
	// Code is the service's response code, or its error code, when the body carries one.
	Code ResponseCode
	// Message is the service's description of the failure, as sent. Error() and
	// GoString print it through the Client's Scrubber: without the Client's credentials,
	// phone and account numbers, or email addresses it may quote.
	Message string
	// Field names the offending request field, when the service says which.
	Field string
	// Body is the raw response body (read through a size limit).
	Body []byte
	// Operation is what the merchant called, as the SDK names it: "payout status",
	// "credit deduct", "charge". Several operations share a path (a payout's status is
	// read at /v1/payments/{reference}), so the service's message may name another.
	Operation string
	// Method and Path identify the request that failed.
	Method, Path string
	// RequestID is the service's id of the request (the X-Request-Id response header),
	// to quote to support; empty when the service sent none.
	RequestID string
	// Header is the header of the response, as received.
	Header http.Header

	ipRestricted bool      // the endpoint enforces the IP allowlist, so 403 means ErrIPNotAllowed
	scrub        *Scrubber // the Client's, knowing its credentials: Error and GoString print through it
}

// Error prints the failure through the Client's Scrubber: the service's message may
// quote a phone or account number, an email address, or the credentials it refused.
// Message, Body and Header keep the text as sent.
func (e *APIError) Error() string {
	var b strings.Builder
	b.WriteString("billing: ")
	if e.Operation != "" {
		b.WriteString(e.Operation + ": ")
	}
	fmt.Fprintf(&b, "%s %s: HTTP %d", e.Method, e.Path, e.StatusCode)
	if e.Code != "" {
		fmt.Fprintf(&b, " code %s", e.Code)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	if e.RequestID != "" {
		b.WriteString(" (request id " + e.RequestID + ")")
	}
	return e.scrub.Text(b.String())
}

// Is lets errors.Is match the sentinels by HTTP status and response code.
func (e *APIError) Is(target error) bool {
	if target == ErrIPNotAllowed {
		return e.ipRestricted && e.StatusCode == http.StatusForbidden && e.Code != CodeKeysMismatch
	}
	if s, ok := codeSentinels[e.Code]; ok && s == target {
		return true
	}
	s, ok := statusSentinels[e.StatusCode]
	return ok && s == target
}

// OutcomeUnknownError says a money movement, or another write the service cannot dedupe,
// was sent but its result is not known. It matches ErrOutcomeUnknown with errors.Is and
// carries what is needed to resolve it; its text says where to look.
type OutcomeUnknownError struct {
	// Operation is what the merchant called, as the SDK names it: "payout", "credit
	// deduct", "license activate".
	Operation string
	// ClientReference is the merchant reference to pass to the status check or the
	// Tracker. For a checkout session it is the params' ClientReference, empty when none
	// was given.
	ClientReference string
	// Method and Path identify the request.
	Method, Path string
	// Err is the underlying cause: a transport error or an *APIError (5xx, code 0005).
	Err error
	// RequestID is the service's id of the request when a response was seen (a 5xx, a
	// code 0005, a body cut short), to quote to support; empty otherwise.
	RequestID string

	findOut string    // how to learn whether a write that is no money movement was done
	scrub   *Scrubber // the Client's, knowing its credentials: Error and GoString print through it
}

// Error prints what is unknown and how to resolve it, through the Client's Scrubber: the
// cause may quote what the network said.
func (e *OutcomeUnknownError) Error() string {
	ref := ""
	if e.ClientReference != "" {
		ref = " (client reference " + e.ClientReference + ")"
	}
	var apiErr *APIError
	if e.RequestID != "" && !(errors.As(e.Err, &apiErr) && apiErr.RequestID == e.RequestID) {
		ref += " (request id " + e.RequestID + ")" // an *APIError cause names it already
	}
	op, resolve := "", "resolve it by status check"
	if e.Operation != "" {
		op = e.Operation + ": "
	}
	if e.findOut != "" {
		resolve = "it may have been done; " + e.findOut
	}
	return e.scrub.Text(fmt.Sprintf("billing: %s%s %s: outcome unknown%s, %s: %v", op, e.Method, e.Path, ref, resolve, e.Err))
}

// Unwrap exposes the cause, so errors.As can reach an *APIError inside.
func (e *OutcomeUnknownError) Unwrap() error { return e.Err }

// Is matches ErrOutcomeUnknown.
func (e *OutcomeUnknownError) Is(target error) bool { return target == ErrOutcomeUnknown }

// ValidationError is returned before any request is sent when a parameter breaks a rule
// of the service. Field names the parameter the caller set.
type ValidationError struct {
	// Field is the offending parameter, as named on the wire (e.g. "email",
	// "metadata.orderId"). A params field the SDK itself moves into metadata has no wire
	// name of its own and is named by its Go name: "ClientReference", "ReturnURL".
	Field string
	// Rule says what the value must be.
	Rule string
}

func (e *ValidationError) Error() string {
	return fmt.Sprintf("billing: invalid %s: %s", e.Field, e.Rule)
}

func invalid(field, rule string) *ValidationError {
	return &ValidationError{Field: field, Rule: rule}
}
