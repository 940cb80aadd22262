package sandbox

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Wire is the wire format a sandbox answers in: the spec's, or the payments
// provider's documented payloads (DESIGN "Two wires"). Requests are read the
// same way on both; only answers, callbacks and webhooks differ.
type Wire string

const (
	// WireSpec answers exactly as SPEC.md describes: the default.
	WireSpec Wire = "spec"
	// WireProvider answers the money movements' initiations, status checks,
	// callbacks and the checkout webhook in the provider's shapes: decimal
	// cedis, mixed casing, ResponseCode "success" with transactionStatus,
	// the mandate status code under "code", data true for a mandate cancel.
	// Where the provider documents no shape (error bodies, billing
	// resources) it answers as the spec does.
	WireProvider Wire = "provider"
)

// WireNames returns the names of the wires, the default first.
func WireNames() []string { return []string{string(WireSpec), string(WireProvider)} }

// ParseWire reads a wire's name: "spec" or "provider"; "" is the spec's.
func ParseWire(name string) (Wire, error) {
	if name == "" {
		return WireSpec, nil
	}
	if _, ok := wires[Wire(name)]; !ok {
		return "", fmt.Errorf("unknown wire %q: use %s", name, strings.Join(WireNames(), " or "))
	}
	return Wire(name), nil
}

// shapes renders every answer, callback and webhook whose shape depends on the
// wire: one field per shape, one value per wire (wires). Each returns the whole
// body, envelope included; a success is answered with HTTP 200. The functions
// run under s.mu, which guards the records they read.
type shapes struct {
	receiveAccepted  func(*receipt) any
	sendAccepted     func(*payout) any
	bankAccepted     func(p *payout, recipientGiven *string) any
	chargeAccepted   func(*charge) any
	mandateCreated   func(*mandate) any
	otpVerified      func(*mandate) any
	mandateRenewed   func(*mandate) any // reactivate
	mandateCancelled func(*mandate) any

	receiveStatus func(*receipt) any
	sendStatus    func(*payout) any
	bankStatus    func(*payout) any
	chargeStatus  func(*charge) any
	mandateStatus func(*mandate) any

	// transactionCallback is the callback of a receive, a direct-debit charge
	// or a web SDK payment, naming the merchant's clientReference. description
	// is the merchant's, which the spec's callback repeats; through is what the
	// money moved through (paidThrough), with which the provider's callback
	// describes the outcome instead.
	transactionCallback func(m *movement, clientReference, description, orderID, through string) any
	// payoutCallback is the callback of a send or a send-to-bank; description
	// and through as for transactionCallback.
	payoutCallback  func(m *movement, description, recipient, through string) any
	mandateCallback func(m *mandate, at time.Time) any
	checkoutWebhook func(checkoutPayment) any
}

// wires is the table of renderings: the spec's (specShapes, beside each
// resource's handlers) and the provider's (wire_provider.go).
var wires = map[Wire]*shapes{
	WireSpec:     &specShapes,
	WireProvider: &providerShapes,
}

// specShapes are the answers of SPEC.md and of the sandbox's decisions where
// it is silent.
var specShapes = shapes{
	receiveAccepted:  specReceiveAccepted,
	sendAccepted:     specSendAccepted,
	bankAccepted:     specBankAccepted,
	chargeAccepted:   specChargeAccepted,
	mandateCreated:   mandateCreated,
	otpVerified:      otpVerified,
	mandateRenewed:   mandateRenewed,
	mandateCancelled: specMandateCancelled,
	receiveStatus:    func(r *receipt) any { return specCollectionStatus(r.movement, r.Currency, "MOBILE_MONEY", minorUnits) },
	sendStatus:       specSendStatus,
	bankStatus:       specBankStatus,
	chargeStatus: func(c *charge) any {
		return specCollectionStatus(c.movement, defaultCurrency, "DIRECT_DEBIT", twoDecimals)
	},
	mandateStatus:       specMandateStatus,
	transactionCallback: specTransactionCallback,
	payoutCallback: func(m *movement, description, recipient, _ string) any {
		return payoutCallbackOf(m, description, recipient, twoDecimals, twoDecimals)
	},
	mandateCallback: func(m *mandate, at time.Time) any { return mandateCallbackOf(m, at, specTime) },
	checkoutWebhook: paymentSucceeded,
}

// What a money movement moved through, as its callback's through names it: a
// mobile-money network (MTN, TELECEL, AIRTELTIGO, MPESA, the networks of
// receiveProviders), or a checkout method without a wallet; "" for a transfer
// to a bank.
const (
	paidByCard         = "CARD"
	paidByBankTransfer = "BANK_TRANSFER"
)

// number is a JSON number written exactly as its text: amounts are formatted
// from integer minor units, never through a float.
type number string

// MarshalJSON writes the number's text. An amount left unwritten is an error
// rather than an empty value on the wire.
func (n number) MarshalJSON() ([]byte, error) {
	if n == "" {
		return nil, errors.New("an amount was left unwritten")
	}
	return []byte(n), nil
}

// minorUnits writes an amount as the integer of its minor units: 5000.
func minorUnits(n int64) number { return number(strconv.FormatInt(n, 10)) }

// twoDecimals writes an amount in major units with exactly two decimals: 50.00.
func twoDecimals(n int64) number { return number(decimal(n).String()) }

// cedis writes an amount in major units with the fewest decimals that hold it
// exactly, as the provider does: 80 is 0.8, 5 is 0.05, 1000 is 10.
func cedis(n int64) number {
	text := strings.TrimRight(decimal(n).String(), "0")
	return number(strings.TrimSuffix(text, "."))
}

// cedisMilli writes an amount in major units with three decimals, as the
// provider writes the charges of a mobile-money payout: 1 is 0.010.
func cedisMilli(n int64) number { return number(decimal(n).String() + "0") }

// specTime writes a moment as the spec's timestamps are written (UTC, milliseconds).
func specTime(t time.Time) string { return t.UTC().Format(timeLayout) }

// providerTimeLayout is the provider's ISO 8601 form, with 7 fractional digits.
const providerTimeLayout = "2006-01-02T15:04:05.0000000Z"

// providerTime writes a moment as the provider's callbacks, receive status and
// mandates do: 2024-05-14T00:44:57.5142719Z.
func providerTime(t time.Time) string { return t.UTC().Format(providerTimeLayout) }

// flowBody is the envelope of the family around data; a message is written
// when one is given, and success (familySuccess) is true for the codes that do
// not mean failure.
func flowBody(family envelopeFamily, code, message string, data any) any {
	switch family {
	case familyPascal:
		return pascalBody{Message: message, ResponseCode: code, Data: data}
	case familyCamel:
		return camelBody{Message: message, ResponseCode: code, Data: data}
	default:
		success := code == CodeSuccess || code == CodeAccepted || code == CodePreapprovalOK
		return camelBody{Success: &success, Message: message, ResponseCode: code, Data: data}
	}
}
