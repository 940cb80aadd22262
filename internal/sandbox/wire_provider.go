package sandbox

import (
	"strings"
	"time"
)

// providerShapes answer as the payments provider's documents show
// (provider-wire/ beside DESIGN.md): amounts in decimal cedis, the provider's
// casing, dates with 7 fractional digits. The state is the sandbox's own on
// both wires: response codes, fees and amounts mean what they mean on the
// spec's wire, only their form differs. Where the provider documents no
// shape (refusals, error bodies), the spec's answers stand.
var providerShapes = shapes{
	receiveAccepted: func(r *receipt) any { return providerCollectionAccepted(r.movement, r.Description) },
	sendAccepted:    providerPayoutAccepted,
	// The provider names the recipient only once its name check has answered.
	bankAccepted:   func(p *payout, _ *string) any { return providerPayoutAccepted(p) },
	chargeAccepted: func(c *charge) any { return providerCollectionAccepted(c.movement, c.Description) },
	mandateCreated: func(m *mandate) any { return providerMandateAnswer(m, mandateCreatedMessage) },
	otpVerified:    providerOTPVerified,
	mandateRenewed: func(m *mandate) any { return providerMandateAnswer(m, mandateRenewedMessage) },
	// The provider answers a cancel with data true, naming no mandate.
	mandateCancelled: func(*mandate) any {
		return flowBody(familyCamel, CodePreapprovalOK, "the mandate was cancelled", true)
	},
	receiveStatus:       func(r *receipt) any { return providerCollectionStatus(r.movement) },
	sendStatus:          providerSendStatus,
	bankStatus:          providerBankStatus,
	chargeStatus:        func(c *charge) any { return providerCollectionStatus(c.movement) },
	mandateStatus:       providerMandateStatus,
	transactionCallback: providerTransactionCallback,
	payoutCallback: func(m *movement, _, recipient, through string) any {
		return payoutCallbackOf(m, providerPayoutWords(m, through), recipient, cedis, providerFee(m))
	},
	mandateCallback: providerMandateCallback,
	checkoutWebhook: providerCheckoutWebhook,
}

// providerPending is the provider's message on an accepted collection.
const providerPending = "Transaction pending. Expect callback request for final state"

// providerFee writes a payout's fee as the provider does: with three
// decimals on a mobile-money send (Charges 0.010), with the fewest on a
// transfer to a bank.
func providerFee(m *movement) func(int64) number {
	if m.Kind == string(kindSend) {
		return cedisMilli
	}
	return cedis
}

// providerCollectionAccepted answers an accepted receive or direct-debit
// charge: {Message, ResponseCode 0001, Data: {TransactionId, ..., DeliveryFee}}.
func providerCollectionAccepted(m *movement, description string) any {
	return flowBody(familyPascal, CodeAccepted, providerPending, collectionAccepted(m, description, cedis))
}

// providerPayoutAccepted answers an accepted send or send-to-bank:
// {ResponseCode 0001, Data: {AmountDebited, ..., ExternalTransactionId "",
// RecipientName null}}: neither names its recipient until it is paid.
func providerPayoutAccepted(p *payout) any {
	none := ""
	return flowBody(familyPascal, CodeAccepted, "", payoutAccepted(p, nil, &none, cedis, providerFee(p.movement)))
}

// providerCollectionStatus answers the receive and direct-debit status
// checks (providerStatusOf).
func providerCollectionStatus(m *movement) any {
	return providerStatusOf(m, m.ClientReference, "mobilemoney")
}

// providerStatusOf is the provider's transaction status of a receive, a
// direct-debit charge or a checkout: responseCode 0000 whatever the state,
// which data.status tells (Paid, or Unpaid while pending and once failed: the
// provider's documents show no other), lower camel case, amounts in cedis,
// currencyCode and isFulfilled null, and the network's reference ("" until the
// network has answered).
func providerStatusOf(m *movement, clientReference, method string) any {
	_, _, data := collectionStatusOf(m, "", method, cedis)
	external := m.externalID
	data.ClientReference = clientReference
	data.Date, data.ExternalTransactionID = providerTime(m.CreatedAt), &external
	data.CurrencyCode, data.IsFulfilled = nil, nil
	return flowBody(familyCamel, CodeSuccess, "Successful", data)
}

// providerSendStatus answers the send status check: ResponseCode "success"
// whenever the payout is found, its state in transactionStatus (success,
// failed or pending), amounts in cedis, CreatedAt as YYYY-MM-DD HH:MM:SS.
func providerSendStatus(p *payout) any {
	data := payoutStatusOf(p, cedis, cedisMilli)
	return payoutStatusBody{ResponseCode: "success", Data: &data}
}

// providerBankStatus answers the send-to-bank status check as the send's,
// with the transfer's Description and, when it failed, fees and
// customerNumber in lower case, as the provider's documents show them: a
// reader must take either casing.
func providerBankStatus(p *payout) any {
	data := payoutStatusOf(p, cedis, cedis)
	data.Description = &p.Description
	if p.movement.State == StateFailed {
		data = data.lowerFees()
		data.CustomerNumber, data.LowerCustomerNumber = nil, data.CustomerNumber
	}
	return payoutStatusBody{ResponseCode: "success", Data: &data}
}

// providerMandateStatusBody is the provider's mandate status check: its
// code under "code", and no channel.
type providerMandateStatusBody struct {
	Message string                    `json:"message"`
	Code    string                    `json:"code"`
	Data    providerMandateStatusData `json:"data"`
}

// providerMandateStatusData names the mandate's id hubtelPreapprovalId, with a
// lower-case a, as the provider's status answer alone does.
type providerMandateStatusData struct {
	CustomerMsisdn      string `json:"customerMsisdn"`
	VerificationType    string `json:"verificationType"`
	PreapprovalStatus   string `json:"preapprovalStatus"`
	HubtelPreapprovalID string `json:"hubtelPreapprovalId"`
	ClientReferenceID   string `json:"clientReferenceId"`
	CreatedAt           string `json:"createdAt"`
}

func providerMandateStatus(m *mandate) any {
	return providerMandateStatusBody{Message: "Success", Code: CodePreapprovalOK, Data: providerMandateStatusData{
		CustomerMsisdn: m.Msisdn, VerificationType: m.VerificationType, PreapprovalStatus: m.Status,
		HubtelPreapprovalID: m.ID, ClientReferenceID: m.ClientReference, CreatedAt: providerTime(m.CreatedAt.Time)}}
}

// The provider names a mandate's id after its brand, in three casings (its
// samples in provider-wire/): hubtelPreApprovalId in the initiate, verify-OTP
// and reactivate answers and in the verify-OTP request, hubtelPreapprovalId in
// the status answer, HubtelPreapprovalId in the callback. The spec's wire
// writes servicePreApprovalId throughout.
const providerPreApprovalIDKey = "hubtelPreApprovalId"

// providerMandateView is the data of the provider's initiate and reactivate
// answers: the spec's mandateView under the provider's name of the id, and no
// MSISDN.
type providerMandateView struct {
	HubtelPreApprovalID string  `json:"hubtelPreApprovalId"`
	ClientReferenceID   string  `json:"clientReferenceId"`
	VerificationType    string  `json:"verificationType"`
	OTPPrefix           *string `json:"otpPrefix"`
	PreapprovalStatus   string  `json:"preapprovalStatus"`
}

// providerMandateAnswer answers an initiate or a reactivate on the provider's wire.
func providerMandateAnswer(m *mandate, message string) any {
	return flowBody(familyCamel, CodePreapprovalOK, message, providerMandateView{HubtelPreApprovalID: m.ID,
		ClientReferenceID: m.ClientReference, VerificationType: m.VerificationType, OTPPrefix: m.OTPPrefix, PreapprovalStatus: m.Status})
}

// providerOTPVerified answers a right OTP on the provider's wire.
func providerOTPVerified(m *mandate) any {
	return flowBody(familyCamel, CodePreapprovalOK, otpVerifiedMessage, struct {
		HubtelPreApprovalID string `json:"hubtelPreApprovalId"`
		PreapprovalStatus   string `json:"preapprovalStatus"`
	}{m.ID, m.Status})
}

// providerMandateCallbackBody is the provider's mandate callback: the spec's
// keys, the id as HubtelPreapprovalId.
type providerMandateCallbackBody struct {
	CustomerMsisdn      string `json:"CustomerMsisdn"`
	VerificationType    string `json:"VerificationType"`
	PreapprovalStatus   string `json:"PreapprovalStatus"`
	HubtelPreapprovalID string `json:"HubtelPreapprovalId"`
	ClientReferenceID   string `json:"ClientReferenceId"`
	CreatedAt           string `json:"CreatedAt"`
}

// providerMandateCallback is the callback of m's answer at at, dated with 7
// fractional digits.
func providerMandateCallback(m *mandate, at time.Time) any {
	cb := mandateCallbackOf(m, at, providerTime)
	return providerMandateCallbackBody{CustomerMsisdn: cb.CustomerMsisdn, VerificationType: cb.VerificationType,
		PreapprovalStatus: cb.PreapprovalStatus, HubtelPreapprovalID: cb.ServicePreapprovalID, ClientReferenceID: cb.ClientReferenceID,
		CreatedAt: cb.CreatedAt}
}

// providerTransactionCallback is the provider's collection callback: the
// spec's keys with amounts in cedis, the network's reference and the date of
// the answer on a failure too, and the outcome in words where the spec
// repeats the merchant's description.
func providerTransactionCallback(m *movement, clientReference, _, orderID, through string) any {
	cb := transactionCallbackOf(m, clientReference, providerCollectionWords(m, through), orderID, cedis)
	external, answered := m.externalID, providerTime(m.ResolvedAt)
	cb.Data.ExternalTransactionID, cb.Data.PaymentDate = &external, &answered
	return cb
}

// providerCheckoutBody is the provider's checkout webhook.
type providerCheckoutBody struct {
	ResponseCode string               `json:"ResponseCode"`
	Status       string               `json:"Status"`
	Data         providerCheckoutData `json:"Data"`
}

type providerCheckoutData struct {
	CheckoutID          string                 `json:"CheckoutId"`
	SalesInvoiceID      string                 `json:"SalesInvoiceId"`
	ClientReference     string                 `json:"ClientReference"`
	Status              string                 `json:"Status"`
	Amount              number                 `json:"Amount"`
	CustomerPhoneNumber string                 `json:"CustomerPhoneNumber"`
	PaymentDetails      providerPaymentDetails `json:"PaymentDetails"`
	Description         string                 `json:"Description"`
}

type providerPaymentDetails struct {
	MobileMoneyNumber string `json:"MobileMoneyNumber"`
	PaymentType       string `json:"PaymentType"`
	Channel           string `json:"Channel"`
}

// providerCheckoutWebhook is the provider's webhook of a paid checkout
// session: CheckoutId is the session's reference (its status path),
// SalesInvoiceId its pay_ id, ClientReference the merchant's
// metadata.clientReference or, without one, the session's reference. A card
// or bank payment names no wallet ("").
func providerCheckoutWebhook(p checkoutPayment) any {
	reference, _ := p.Metadata["clientReference"].(string)
	if reference == "" {
		reference = p.Reference
	}
	data := providerCheckoutData{CheckoutID: p.Reference, SalesInvoiceID: p.ID, ClientReference: reference, Status: "Success",
		Amount: cedis(p.Amount)}
	switch method := *p.Method; {
	case p.MobileMoneyDetail != nil:
		wallet := p.MobileMoneyDetail
		channel, ok := sendChannels[wallet.Network]
		if !ok {
			channel = strings.ToLower(wallet.Network) + "-gh"
		}
		data.CustomerPhoneNumber = wallet.Phone
		data.PaymentDetails = providerPaymentDetails{MobileMoneyNumber: wallet.Phone, PaymentType: "mobilemoney", Channel: channel}
	case p.CardDetail != nil:
		data.PaymentDetails = providerPaymentDetails{PaymentType: "card", Channel: strings.ToLower(p.CardDetail.Brand)}
	default:
		data.PaymentDetails = providerPaymentDetails{PaymentType: strings.ToLower(strings.ReplaceAll(method, "_", "")), Channel: bankChannel}
	}
	data.Description = providerPaidWords(p.paidThrough()) + "." // the webhook's sentence ends with a stop; the callback's does not
	if data.CustomerPhoneNumber == "" && p.Customer != nil && p.Customer.Phone != nil {
		data.CustomerPhoneNumber = strings.TrimPrefix(*p.Customer.Phone, "+")
	}
	return providerCheckoutBody{ResponseCode: CodeSuccess, Status: "Success", Data: data}
}

// The provider's words for outcomes, as its samples (provider-wire/) write them
// in a callback's Data.Description, where the spec's callback repeats the
// merchant's description of the request.
const (
	// providerFailed describes every failed collection, and a failed payout
	// whose reason the provider's samples do not show.
	providerFailed = "FAILED"
	// providerBankPaid describes a paid send-to-bank, its leading space the
	// provider's own.
	providerBankPaid = " The Instant Bank Request has been processed successfully"
)

// providerPayoutFailures describe a failed payout by its response code.
var providerPayoutFailures = map[string]string{CodeInsufficientBalance: "Insufficient prepaid balance."}

// providerWallets are the provider's names of each network's wallet.
var providerWallets = map[string]string{
	"MTN": "MTN Mobile Money", "TELECEL": "Vodafone Cash", "AIRTELTIGO": "AirtelTigo Money", "MPESA": "M-Pesa",
}

// providerWallet names the wallet of a network, the network itself when the
// provider names none.
func providerWallet(network string) string {
	if name, ok := providerWallets[network]; ok {
		return name
	}
	return network
}

// providerPaidWords describes a paid collection moved through through: "The
// Vodafone Cash payment has been approved and processed successfully", the
// card's, or the bank transfer's.
func providerPaidWords(through string) string {
	switch through {
	case paidByCard:
		return "The card payment has been approved and processed successfully"
	case paidByBankTransfer:
		return "The bank transfer has been received and processed successfully"
	}
	return "The " + providerWallet(through) + " payment has been approved and processed successfully"
}

// providerCollectionWords describes a final receive, direct-debit charge or
// web SDK payment: paid (providerPaidWords), or FAILED.
func providerCollectionWords(m *movement, through string) string {
	if m.State != StateSucceeded {
		return providerFailed
	}
	return providerPaidWords(through)
}

// providerPayoutWords describes a final send or send-to-bank: a send "made
// successfully" naming the wallet as the provider's send sample does ("Vodafone
// cash"), a transfer's request processed, or the failure's reason.
func providerPayoutWords(m *movement, through string) string {
	switch {
	case m.State == StateSucceeded && m.Kind == string(kindBankTransfer):
		return providerBankPaid
	case m.State == StateSucceeded:
		first, rest, _ := strings.Cut(providerWallet(through), " ")
		return strings.TrimSpace(first+" "+strings.ToLower(rest)) + " payment has been made successfully"
	}
	if words, ok := providerPayoutFailures[m.ResponseCode]; ok {
		return words
	}
	return providerFailed
}

// paidThrough is what the session was paid through: the wallet's network, or
// its method without a wallet. s.mu must be held.
func (p *checkoutPayment) paidThrough() string {
	switch {
	case p.MobileMoneyDetail != nil:
		return p.MobileMoneyDetail.Network
	case p.Method != nil:
		return *p.Method
	}
	return ""
}
