package billing

import (
	"net/http"
)

// This file holds the request policy of every endpoint the SDK calls, once: its method,
// path template, credentials, retry class and the flags the pipeline reads. A service
// method validates its input, then builds its call from its row in one line.

// endpointID names one endpoint of the service: its row in the endpoints table.
type endpointID uint8

// The endpoints, grouped as the spec groups them.
const (
	epCustomerCreate endpointID = iota
	epCustomerGet
	epCustomerUpdate
	epCustomerList

	epProductCreate
	epProductList
	epPriceCreate
	epPriceArchive

	// The subscription paths come in two forms (the service's subscriptions reference): the short one
	// takes a session token or the secret key, the /v1 one client credentials.
	epSubscriptionCreate
	epSubscriptionGet
	epSubscriptionCancel
	epSubscriptionPause
	epSubscriptionResume
	epSubscriptionCreateV1
	epSubscriptionGetV1
	epSubscriptionCancelV1
	epSubscriptionPauseV1
	epSubscriptionResumeV1

	epCreditWalletGet
	epCreditGrant
	epCreditDeduct
	epCreditTransactionList

	epMeterCreate
	epMeterGet
	epMeterEventRecord
	epMeterEventRecordKeyed // with an idempotency key, which the service dedupes on
	epMeterEventList

	epLicenseCreate
	epLicenseGet
	epLicenseActivate
	epLicenseUpdate
	epLicenseRevoke

	epCheckoutCreate
	epPaymentGet
	epReceive
	epReceiveStatus

	epSend
	epSendStatus
	epBankTransfer
	epBankTransferStatus

	epMandateCreate
	epMandateVerifyOTP
	epMandateStatus
	epMandateCancel
	epMandateReactivate
	epDirectDebit
	epDirectDebitStatus

	endpointCount // the number of endpoints, not one of them
)

// endpoint is the request policy of one endpoint.
type endpoint struct {
	method string
	// path is relative to the base URL; each {name} stands for one path segment, filled
	// in order by the call's path arguments. It is also the call's route for an Observer.
	path  string
	auth  authKind
	retry retryClass
	flags endpointFlags
}

// endpointFlags are the per-endpoint facts the pipeline reads besides auth and retry.
type endpointFlags uint8

const (
	noFlags endpointFlags = 0
	// ipRestricted: the endpoint is behind the IP allowlist, so its 403 is
	// ErrIPNotAllowed.
	ipRestricted endpointFlags = 1 << iota
	// codeIsData: a status check, whose response code describes the transaction asked
	// about rather than the request.
	codeIsData
	// acceptedWithoutCode: a money movement whose acceptance carries no response code
	// (checkout create answers {success, data}).
	acceptedWithoutCode
	// changesState: a GET that changes state on the service. Like every other method
	// but HEAD it has side effects (see sideEffects), which net/http would not guess
	// from its method.
	changesState
)

// sideEffects reports whether a request of the endpoint changes state on the service:
// every method but GET and HEAD, and the GETs marked changesState. Such a request is
// built so that no layer below the SDK sends it again (see beginAttempt), and follows
// no redirect.
func (e *endpoint) sideEffects() bool {
	return (e.method != http.MethodGet && e.method != http.MethodHead) || e.flags&changesState != 0
}

// endpoints is the table, one row an endpoint. DESIGN "Retries: never move money twice"
// fixes the retry classes: reads and deduped writes retryRead, money movements
// retryMoney with client credentials, every other write retryWrite.
var endpoints = [endpointCount]endpoint{
	epCustomerCreate: {http.MethodPost, "/v1/customers", authBilling, retryWrite, noFlags},
	epCustomerGet:    {http.MethodGet, "/v1/customers/{id}", authBilling, retryRead, noFlags},
	epCustomerUpdate: {http.MethodPatch, "/v1/customers/{id}", authBilling, retryWrite, noFlags},
	epCustomerList:   {http.MethodGet, "/v1/customers", authBilling, retryRead, noFlags},

	epProductCreate: {http.MethodPost, "/v1/products", authBilling, retryWrite, noFlags},
	epProductList:   {http.MethodGet, "/v1/products", authBilling, retryRead, noFlags},
	epPriceCreate:   {http.MethodPost, "/v1/products/{id}/prices", authBilling, retryWrite, noFlags},
	epPriceArchive:  {http.MethodDelete, "/v1/products/{id}/prices/{priceId}", authBilling, retryWrite, noFlags},

	epSubscriptionCreate:   {http.MethodPost, "/subscriptions", authSession, retryWrite, noFlags},
	epSubscriptionGet:      {http.MethodGet, "/subscriptions/{id}", authSession, retryRead, noFlags},
	epSubscriptionCancel:   {http.MethodPatch, "/subscriptions/{id}/cancel", authSession, retryWrite, noFlags},
	epSubscriptionPause:    {http.MethodPatch, "/subscriptions/{id}/pause", authSession, retryWrite, noFlags},
	epSubscriptionResume:   {http.MethodPatch, "/subscriptions/{id}/resume", authSession, retryWrite, noFlags},
	epSubscriptionCreateV1: {http.MethodPost, "/v1/subscriptions", authBasic, retryWrite, noFlags},
	epSubscriptionGetV1:    {http.MethodGet, "/v1/subscriptions/{id}", authBasic, retryRead, noFlags},
	epSubscriptionCancelV1: {http.MethodPatch, "/v1/subscriptions/{id}/cancel", authBasic, retryWrite, noFlags},
	epSubscriptionPauseV1:  {http.MethodPatch, "/v1/subscriptions/{id}/pause", authBasic, retryWrite, noFlags},
	epSubscriptionResumeV1: {http.MethodPatch, "/v1/subscriptions/{id}/resume", authBasic, retryWrite, noFlags},

	epCreditWalletGet:       {http.MethodGet, "/v1/credits/{customerId}", authBilling, retryRead, noFlags},
	epCreditGrant:           {http.MethodPost, "/v1/credits/{customerId}/grant", authBilling, retryWrite, noFlags},
	epCreditDeduct:          {http.MethodPost, "/v1/credits/{customerId}/deduct", authBilling, retryWrite, noFlags},
	epCreditTransactionList: {http.MethodGet, "/v1/credits/{customerId}/transactions", authBilling, retryRead, noFlags},

	epMeterCreate:           {http.MethodPost, "/v1/meters", authBilling, retryWrite, noFlags},
	epMeterGet:              {http.MethodGet, "/v1/meters/{id}", authBilling, retryRead, noFlags},
	epMeterEventRecord:      {http.MethodPost, "/v1/meters/{id}/events", authBilling, retryWrite, noFlags},
	epMeterEventRecordKeyed: {http.MethodPost, "/v1/meters/{id}/events", authBilling, retryRead, noFlags},
	epMeterEventList:        {http.MethodGet, "/v1/meters/{id}/events", authBilling, retryRead, noFlags},

	epLicenseCreate:   {http.MethodPost, "/v1/licenses", authBilling, retryWrite, noFlags},
	epLicenseGet:      {http.MethodGet, "/v1/licenses/{key}", authBilling, retryRead, noFlags},
	epLicenseActivate: {http.MethodPost, "/v1/licenses/{key}/activate", authBilling, retryWrite, noFlags},
	epLicenseUpdate:   {http.MethodPatch, "/v1/licenses/{key}", authBilling, retryWrite, noFlags},
	epLicenseRevoke:   {http.MethodDelete, "/v1/licenses/{key}", authBilling, retryWrite, noFlags},

	epCheckoutCreate: {http.MethodPost, "/v1/payments", authBasic, retryMoney, acceptedWithoutCode},
	epPaymentGet:     {http.MethodGet, "/v1/payments/{reference}", authBasic, retryRead, noFlags},
	epReceive:        {http.MethodPost, "/v1/payments/receive", authBasic, retryMoney, ipRestricted},
	epReceiveStatus:  {http.MethodGet, "/v1/payments/{reference}", authBasic, retryRead, codeIsData},

	epSend:               {http.MethodPost, "/v1/payments/send", authBasic, retryMoney, ipRestricted},
	epSendStatus:         {http.MethodGet, "/v1/payments/{reference}", authBasic, retryRead, codeIsData},
	epBankTransfer:       {http.MethodPost, "/v1/merchants/{account}/send/bank/gh/{bankCode}", authBasic, retryMoney, ipRestricted},
	epBankTransferStatus: {http.MethodGet, "/v1/merchants/{account}/transactions/status", authBasic, retryRead, codeIsData},

	epMandateCreate:    {http.MethodPost, "/v1/mandates", authBasic, retryMoney, noFlags},
	epMandateVerifyOTP: {http.MethodPost, "/v1/mandates/verifyotp", authBasic, retryWrite, noFlags},
	epMandateStatus:    {http.MethodGet, "/v1/mandates/preapproval/{clientReferenceId}/status", authBasic, retryRead, codeIsData},
	// A GET that changes state: once it may have been done, a second try would answer
	// 404 and hide the success, so it is not re-sent, by the SDK or by net/http, which
	// replays a GET on its own when a reused connection closes. Status tells the truth.
	epMandateCancel:     {http.MethodGet, "/v1/mandates/preapproval/{customerMsisdn}/cancel", authBasic, retryWrite, changesState},
	epMandateReactivate: {http.MethodPost, "/v1/mandates/preapproval/reactivate", authBasic, retryWrite, noFlags},
	epDirectDebit:       {http.MethodPost, "/v1/payments/direct-debit", authBasic, retryMoney, ipRestricted},
	epDirectDebitStatus: {http.MethodGet, "/v1/payments/direct-debit/status/{clientReference}", authBasic, retryRead, codeIsData},
}

// op builds a call of the endpoint. pathArgs fill the template's segments in order, each
// through the path builder (paths.go), which refuses a value that is not exactly one
// segment: the call then carries the refusal and do returns it before anything is sent.
// params become the query string of a GET and the JSON body of any other method (nil
// for none).
func (id endpointID) op(params any, pathArgs ...pathValue) *op {
	// Small enough to inline, so the op can live on the caller's stack.
	o := new(op)
	o.set(id, params, pathArgs)
	return o
}

// movement builds the call of a money movement, as op does, naming its client reference
// in ErrOutcomeUnknown so the caller can resolve it.
func (id endpointID) movement(clientReference string, body any, pathArgs ...pathValue) *op {
	o := new(op)
	o.set(id, body, pathArgs)
	o.clientReference = clientReference
	return o
}

// set makes o a call of the endpoint id (see endpointID.op).
func (o *op) set(id endpointID, params any, pathArgs []pathValue) {
	e := &endpoints[id]
	path, err := e.fill(pathArgs)
	*o = op{
		method:              e.method,
		path:                path,
		template:            e.path,
		auth:                e.auth,
		retry:               e.retry,
		ipRestricted:        e.flags&ipRestricted != 0,
		codeIsData:          e.flags&codeIsData != 0,
		acceptedWithoutCode: e.flags&acceptedWithoutCode != 0,
		changesState:        e.flags&changesState != 0,
		refused:             err,
		operation:           endpointWording[id].operation,
		findOut:             endpointWording[id].findOut,
	}
	if e.method == http.MethodGet {
		o.query = params
	} else {
		o.body = params
	}
}
