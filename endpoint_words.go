package billing

// This file names each endpoint as the merchant knows it: the operation its errors
// name ("payout status", never the shared path's "payment"), and, for a write the
// service cannot dedupe, where to look when its answer was lost. It is the endpoints
// table's companion, one row an endpoint; the retry class in that table says which
// writes are not safe to repeat.

// endpointWords is what one endpoint's errors say of it.
type endpointWords struct {
	// operation is what the merchant called, as errors name it: "credit deduct",
	// "payout status".
	operation string
	// findOut says how to learn whether a write whose answer was lost was done, for an
	// endpoint of class retryWrite; a money movement is resolved by its status check or
	// the Tracker, a read need not be.
	findOut string
}

var endpointWording = [endpointCount]endpointWords{
	epCustomerCreate: {"customer create", "create it again: the email is unique, so a conflict says the first was created"},
	epCustomerGet:    {"customer get", ""},
	epCustomerUpdate: {"customer update", "get the customer to see which fields it holds"},
	epCustomerList:   {"customer list", ""},

	epProductCreate: {"product create", "list products to see whether it was created"},
	epProductList:   {"product list", ""},
	epPriceCreate:   {"price create", "list the products to see whether the price was created"},
	epPriceArchive:  {"price archive", "list the products to see whether the price is archived"},

	epSubscriptionCreate:   {"subscription create", "no endpoint lists subscriptions: ask support with the request id before creating another"},
	epSubscriptionGet:      {"subscription get", ""},
	epSubscriptionCancel:   {"subscription cancel", "get the subscription to see its status"},
	epSubscriptionPause:    {"subscription pause", "get the subscription to see its status"},
	epSubscriptionResume:   {"subscription resume", "get the subscription to see its status"},
	epSubscriptionCreateV1: {"subscription create", "no endpoint lists subscriptions: ask support with the request id before creating another"},
	epSubscriptionGetV1:    {"subscription get", ""},
	epSubscriptionCancelV1: {"subscription cancel", "get the subscription to see its status"},
	epSubscriptionPauseV1:  {"subscription pause", "get the subscription to see its status"},
	epSubscriptionResumeV1: {"subscription resume", "get the subscription to see its status"},

	epCreditWalletGet:       {"credit wallet get", ""},
	epCreditGrant:           {"credit grant", "read the wallet's transactions to see whether the grant is in the ledger"},
	epCreditDeduct:          {"credit deduct", "read the wallet's transactions to see whether the deduction is in the ledger"},
	epCreditTransactionList: {"credit transaction list", ""},

	epMeterCreate:           {"meter create", "create it again: the event name is unique, so a conflict says the first was created"},
	epMeterGet:              {"meter get", ""},
	epMeterEventRecord:      {"meter event record", "list the meter's events, or record usage with an idempotency key, which the service dedupes"},
	epMeterEventRecordKeyed: {"meter event record", ""},
	epMeterEventList:        {"meter event list", ""},

	epLicenseCreate:   {"license create", "no endpoint lists licenses: ask support with the request id before creating another"},
	epLicenseGet:      {"license get", ""},
	epLicenseActivate: {"license activate", "get the license to see its activations"},
	epLicenseUpdate:   {"license update", "get the license to see which fields it holds"},
	epLicenseRevoke:   {"license revoke", "get the license to see its status"},

	epCheckoutCreate: {"checkout create", ""},
	epPaymentGet:     {"checkout status", ""},
	epReceive:        {"receive", ""},
	epReceiveStatus:  {"receive status", ""},

	epSend:               {"payout", ""},
	epSendStatus:         {"payout status", ""},
	epBankTransfer:       {"bank transfer", ""},
	epBankTransferStatus: {"bank transfer status", ""},

	epMandateCreate:     {"mandate create", ""},
	epMandateVerifyOTP:  {"mandate verify OTP", "get the mandate's status to see whether it was approved"},
	epMandateStatus:     {"mandate status", ""},
	epMandateCancel:     {"mandate cancel", "get the mandate's status to see whether it was cancelled"},
	epMandateReactivate: {"mandate reactivate", "get the mandate's status to see whether it asks for approval again"},
	epDirectDebit:       {"charge", ""},
	epDirectDebitStatus: {"charge status", ""},
}
