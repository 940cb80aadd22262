package billing

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"
)

// PayoutsService sends money out of the disbursement account: mobile-money payouts and
// send-to-bank.
type PayoutsService service

// PayoutChannel is the disbursement channel a payout went through, as status checks
// report it.
type PayoutChannel string

// The disbursement channels: three mobile-money networks and the bank transfer system.
const (
	PayoutChannelMTN      PayoutChannel = "mtn-gh"
	PayoutChannelVodafone PayoutChannel = "vodafone-gh"
	PayoutChannelTigo     PayoutChannel = "tigo-gh"
	PayoutChannelBank     PayoutChannel = "gip-gh"
)

// PayoutStatus is the state of a payout in its status check.
type PayoutStatus string

// The payout states: pending until the network answers, then success or failed.
const (
	PayoutStatusPending PayoutStatus = "pending"
	PayoutStatusSuccess PayoutStatus = "success"
	PayoutStatusFailed  PayoutStatus = "failed"
)

var bankCodes = []string{
	"300302", "300303", "300304", "300305", "300306", "300307", "300309", "300310",
	"300311", "300312", "300313", "300316", "300317", "300318", "300319", "300320",
	"300322", "300323", "300324", "300325", "300329", "300331", "300334", "300362",
}

// BankCodes returns the six-digit codes of the banks send-to-bank accepts. The slice is
// a copy.
func BankCodes() []string { return slices.Clone(bankCodes) }

// SendParams pays money out to a mobile-money wallet. Amount, Phone, Provider,
// Description and ClientReference are required.
type SendParams struct {
	// Amount in minor units, positive.
	Amount int64 `json:"amount"`
	// Currency is an ISO 4217 code; the service defaults it to GHS.
	Currency string `json:"currency,omitempty"`
	// Phone is the recipient's wallet in international form; it is normalised
	// ("+233 24 123 4567" is sent as "233241234567").
	Phone string `json:"phone"`
	// Provider is MTN, TELECEL or AIRTELTIGO; MPESA does not take payouts.
	Provider Provider `json:"provider"`
	// Name is the recipient's name. When empty the phone number stands in, as the
	// service allows.
	Name string `json:"name"`
	// Description is at most 255 characters.
	Description string   `json:"description"`
	CustomerID  string   `json:"customerId,omitempty"`
	Metadata    Metadata `json:"metadata,omitzero"`
	// ClientReference is the merchant's unique reference, of
	// 1-36 characters: letters, digits, '-' and '_'. It is sent as
	// metadata.clientReference: the key of SendStatus and of resolving an unknown
	// outcome.
	ClientReference string `json:"-"`
	// CallbackURL receives the final state; it is sent as callbackUrl.
	CallbackURL string `json:"callbackUrl,omitempty"`
}

func (p *SendParams) validate() error {
	if p == nil {
		return invalid("params", "are required")
	}
	return mobileMoney{p.Amount, p.Currency, p.Phone, p.Provider, p.Description, p.ClientReference, p.CallbackURL, p.Metadata}.
		validate(referenceSend, sendProviders)
}

// DirectSend is the service's acceptance of a mobile-money payout: the final state
// arrives by callback or through SendStatus. Status is PROCESSING on the spec's wire;
// the provider's acceptance carries no status (its code 0001 says the same), and names
// the payout by its TransactionId (ID), ClientReference (Reference), Charges (Fee) and
// RecipientName (Name).
type DirectSend struct {
	ID        string `json:"id"`
	Reference string `json:"reference"`
	Status    string `json:"status"`
	// Amount and Fee are in minor units (15000 is 150.00), whichever unit the wire
	// used; the disbursement account pays both.
	Amount    int64     `json:"amount"`
	Fee       int64     `json:"fee"`
	Currency  string    `json:"currency"`
	Phone     string    `json:"phone"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"createdAt,omitzero"`
}

// UnmarshalJSON reads the acceptance on either wire: the spec's, in minor units, or the
// provider's, in cedis (Amount 0.8 is 80). A field it cannot read is left empty.
func (r *DirectSend) UnmarshalJSON(b []byte) error {
	return unmarshalWire[acceptedWire](b, r)
}

func (r *DirectSend) fromWire(w *acceptedWire) {
	a := w.read()
	*r = DirectSend{
		ID: a.id, Reference: a.reference, Status: a.status, Amount: a.amount, Fee: a.fee, Currency: a.currency,
		Phone: a.phone, Name: a.name, CreatedAt: a.createdAt,
	}
}

// Send pays money out of the disbursement account to a mobile-money wallet. The answer
// only says the payout was accepted; the final state arrives at CallbackURL, or through
// SendStatus with the client reference.
//
// It is never re-sent once it may have reached the service: an ambiguous failure returns
// an error matching ErrOutcomeUnknown that carries the client reference.
func (s *PayoutsService) Send(ctx context.Context, p *SendParams) (*DirectSend, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	body := *p
	body.Currency = strings.ToUpper(body.Currency)
	if err := internationalDigits("phone", &body.Phone); err != nil {
		return nil, err
	}
	if strings.TrimSpace(body.Name) == "" {
		body.Name = body.Phone
	}
	body.Metadata = withMetadata(p.Metadata, "clientReference", p.ClientReference)
	return send[DirectSend](ctx, s.client, epSend.movement(p.ClientReference, &body))
}

// SendTransaction is the status check of a mobile-money payout. TransactionStatus says
// the state; ResponseCode is 0000 on success, 0001 while pending, and the failure code
// (2001, 4075, …) once failed. The provider's status check answers the word "success"
// whatever became of the payout: ResponseCode is then the code TransactionStatus
// implies (0000, 0001, or 2001 when failed).
type SendTransaction struct {
	StatusResponse

	TransactionID        string `json:"TransactionId"`
	NetworkTransactionID string `json:"networkTransactionId,omitempty"`
	// Amount and Fees are in minor units (15000 is 150.00), whichever unit the wire
	// used: the provider's Amount 0.8 and Fees 0.010 are 80 and 1. An amount the SDK
	// cannot read is 0.
	Amount            int64         `json:"Amount"`
	Fees              int64         `json:"Fees"`
	ClientReference   string        `json:"ClientReference"`
	Channel           PayoutChannel `json:"Channel,omitempty"`
	CustomerNumber    string        `json:"CustomerNumber,omitempty"`
	TransactionStatus PayoutStatus  `json:"transactionStatus"`
	CreatedAt         time.Time     `json:"CreatedAt,omitzero"`

	// amountNamed: the answer carried an amount field (0 included).
	amountNamed bool
}

// UnmarshalJSON reads the transaction on either wire, with CreatedAt in the
// "YYYY-MM-DD HH:MM:SS" UTC form of the spec (ISO 8601 is accepted too). A field it
// cannot read is left empty; the state fields beside it are still read.
func (t *SendTransaction) UnmarshalJSON(b []byte) error {
	return unmarshalWire[payoutStatusWire](b, t)
}

func (t *SendTransaction) fromWire(w *payoutStatusWire) { t.fromStatus(w, t.StatusResponse) }

func (t *SendTransaction) fromStatus(w *payoutStatusWire, r StatusResponse) {
	p := w.read(minorUnits, r)
	*t = SendTransaction{
		StatusResponse: p.StatusResponse, TransactionID: p.transactionID, NetworkTransactionID: p.networkTransactionID,
		Amount: p.amount, Fees: p.fees, ClientReference: p.clientReference, Channel: p.channel,
		CustomerNumber: p.customerNumber, TransactionStatus: p.status, CreatedAt: p.createdAt, amountNamed: p.amountNamed,
	}
}

// Succeeded reports whether the money reached the recipient.
func (t *SendTransaction) Succeeded() bool { return t.TransactionStatus == PayoutStatusSuccess }

// IsFinal reports whether the payout has its final state, success or failed.
func (t *SendTransaction) IsFinal() bool { return payoutFinal(t.TransactionStatus) }

// IsPending reports whether the final state is still to come.
func (t *SendTransaction) IsPending() bool { return !t.IsFinal() }

func payoutFinal(s PayoutStatus) bool { return s == PayoutStatusSuccess || s == PayoutStatusFailed }

// SendStatus asks for the state of a payout by its client reference: the fallback when no
// callback has arrived five minutes after Send, and the way to resolve ErrOutcomeUnknown.
// ErrNotFound means the service never recorded the payout.
//
// A failed payout is a result here, not an error: check IsFinal and Succeeded.
func (s *PayoutsService) SendStatus(ctx context.Context, clientReference string) (*SendTransaction, error) {
	return statusCheck[SendTransaction, payoutStatusWire](ctx, s.client, epSendStatus.op(nil, seg("clientReference", clientReference)))
}

// BankTransferParams pays money out of the disbursement account to a bank account.
// BankCode, Amount, PrimaryCallbackURL, Description, BankAccountNumber and ClientReference
// are required.
type BankTransferParams struct {
	// DisbursementAccount is the account to pay out of; empty means the client's
	// WithDisbursementAccount.
	DisbursementAccount string `json:"-"`
	// BankCode is one of BankCodes().
	BankCode string `json:"-"`
	// Amount is sent with exactly two decimals (DecimalAmount(5000) is 50.00).
	Amount DecimalAmount `json:"Amount"`
	// PrimaryCallbackURL receives the final state.
	PrimaryCallbackURL string `json:"PrimaryCallbackUrl"`
	// Description is the narration; at most 255 characters.
	Description       string `json:"Description"`
	BankAccountNumber string `json:"BankAccountNumber"`
	// ClientReference is the merchant's unique reference, of
	// 1-36 characters: letters and digits only. It is the key of BankTransferStatus.
	ClientReference string `json:"ClientReference"`
	BankAccountName string `json:"BankAccountName,omitempty"`
	// RecipientPhoneNumber is normalised to international digits without plus.
	RecipientPhoneNumber string `json:"RecipientPhoneNumber,omitempty"`
	BankName             string `json:"BankName,omitempty"`
	BankBranch           string `json:"BankBranch,omitempty"`
	BankBranchCode       string `json:"BankBranchCode,omitempty"`
}

func (p *BankTransferParams) validate() error {
	if p == nil {
		return invalid("params", "are required")
	}
	return firstError(
		bankCode("bankCode", p.BankCode),
		positiveDecimal("Amount", p.Amount),
		requiredURL("PrimaryCallbackUrl", p.PrimaryCallbackURL),
		required("Description", p.Description),
		maxLength("Description", p.Description, 255),
		required("BankAccountNumber", p.BankAccountNumber),
		referenceBankTransfer.required("ClientReference", p.ClientReference),
	)
}

func bankCode(field, v string) error {
	if v == "" {
		return invalid(field, "is required")
	}
	if !slices.Contains(bankCodes, v) {
		return invalid(field, "must be one of the six-digit bank codes of BankCodes()")
	}
	return nil
}

// BankTransfer is the service's acceptance of a send-to-bank payout. Amounts hold minor
// units (DecimalAmount(1050) is 10.50), read from the decimals of either wire:
// AmountDebited is Amount plus Charges.
type BankTransfer struct {
	AmountDebited         DecimalAmount `json:"AmountDebited"`
	TransactionID         string        `json:"TransactionId"`
	Description           string        `json:"Description,omitempty"`
	ClientReference       string        `json:"ClientReference"`
	ExternalTransactionID string        `json:"ExternalTransactionId,omitempty"`
	Amount                DecimalAmount `json:"Amount"`
	Charges               DecimalAmount `json:"Charges"`
	// Meta is kept as the service sent it: the spec does not show its shape.
	Meta          json.RawMessage `json:"Meta,omitempty"`
	RecipientName string          `json:"RecipientName,omitempty"`
}

// UnmarshalJSON reads the acceptance, its amounts in major units on both wires. A field
// it cannot read is left empty.
func (t *BankTransfer) UnmarshalJSON(b []byte) error {
	return unmarshalWire[payoutWire](b, t)
}

func (t *BankTransfer) fromWire(w *payoutWire) {
	p := w.read()
	*t = BankTransfer{
		AmountDebited: DecimalAmount(p.amountDebited), TransactionID: p.transactionID, Description: p.description,
		ClientReference: p.clientReference, ExternalTransactionID: p.externalTransactionID, Amount: DecimalAmount(p.amount),
		Charges: DecimalAmount(p.charges), Meta: p.meta, RecipientName: p.recipientName,
	}
}

// SendToBank pays money out of the disbursement account to a bank account. The answer
// only says the transfer was accepted; the final state arrives at PrimaryCallbackURL, or
// through BankTransferStatus.
//
// It is never re-sent once it may have reached the service: an ambiguous failure returns
// an error matching ErrOutcomeUnknown that carries the client reference.
func (s *PayoutsService) SendToBank(ctx context.Context, p *BankTransferParams) (*BankTransfer, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	account, err := s.disbursementAccount(p.DisbursementAccount)
	if err != nil {
		return nil, err
	}
	body := *p
	if err := optionalPhone("RecipientPhoneNumber", &body.RecipientPhoneNumber); err != nil {
		return nil, err
	}
	return send[BankTransfer](ctx, s.client, epBankTransfer.movement(p.ClientReference, &body, seg("disbursementAccount", account), seg("bankCode", p.BankCode)))
}

// BankTransferStatusParams names the bank transfer to check. ClientReference is required.
type BankTransferStatusParams struct {
	// DisbursementAccount is the account paid out of; empty means the client's
	// WithDisbursementAccount.
	DisbursementAccount string `url:"-"`
	ClientReference     string `url:"clientReference"`
	// ServiceTransactionID is the TransactionID returned by SendToBank, optional.
	ServiceTransactionID string `url:"serviceTransactionId,omitempty"`
	// NetworkTransactionID is the upstream bank reference, optional.
	NetworkTransactionID string `url:"networkTransactionId,omitempty"`
}

// BankTransferTransaction is the status check of a send-to-bank payout. Amount and Fees
// hold minor units (DecimalAmount(50000) is 500.00), read from the decimals of either
// wire. TransactionStatus says the state; ResponseCode is 0000 on success, 0001 while
// pending, and the failure code (2001, 4075, …) once failed. The provider's status
// check answers the word "success" whatever became of the transfer: ResponseCode is
// then the code TransactionStatus implies (0000, 0001, or 2001 when failed).
type BankTransferTransaction struct {
	StatusResponse

	TransactionID        string        `json:"TransactionId"`
	NetworkTransactionID string        `json:"networkTransactionId,omitempty"`
	Amount               DecimalAmount `json:"Amount"`
	Fees                 DecimalAmount `json:"fees"`
	ClientReference      string        `json:"ClientReference"`
	Channel              PayoutChannel `json:"Channel,omitempty"`
	CustomerNumber       string        `json:"CustomerNumber,omitempty"`
	Description          string        `json:"Description,omitempty"`
	TransactionStatus    PayoutStatus  `json:"transactionStatus"`
	CreatedAt            time.Time     `json:"CreatedAt,omitzero"`

	// amountNamed: the answer carried an amount field (0 included).
	amountNamed bool
}

// UnmarshalJSON reads the transaction on either wire, with CreatedAt in the
// "YYYY-MM-DD HH:MM:SS" UTC form of the spec (ISO 8601 is accepted too). A field it
// cannot read is left empty; the state fields beside it are still read.
func (t *BankTransferTransaction) UnmarshalJSON(b []byte) error {
	return unmarshalWire[payoutStatusWire](b, t)
}

func (t *BankTransferTransaction) fromWire(w *payoutStatusWire) { t.fromStatus(w, t.StatusResponse) }

func (t *BankTransferTransaction) fromStatus(w *payoutStatusWire, r StatusResponse) {
	p := w.read(majorUnits, r)
	*t = BankTransferTransaction{
		StatusResponse: p.StatusResponse, TransactionID: p.transactionID, NetworkTransactionID: p.networkTransactionID,
		Amount: DecimalAmount(p.amount), Fees: DecimalAmount(p.fees), ClientReference: p.clientReference,
		Channel: p.channel, CustomerNumber: p.customerNumber, Description: p.description,
		TransactionStatus: p.status, CreatedAt: p.createdAt, amountNamed: p.amountNamed,
	}
}

// Succeeded reports whether the money reached the bank account.
func (t *BankTransferTransaction) Succeeded() bool {
	return t.TransactionStatus == PayoutStatusSuccess
}

// IsFinal reports whether the transfer has its final state, success or failed.
func (t *BankTransferTransaction) IsFinal() bool { return payoutFinal(t.TransactionStatus) }

// IsPending reports whether the final state is still to come.
func (t *BankTransferTransaction) IsPending() bool { return !t.IsFinal() }

// BankTransferStatus asks for the state of a send-to-bank payout: the fallback when no
// callback has arrived five minutes after SendToBank, and the way to resolve
// ErrOutcomeUnknown. ErrNotFound means the service never recorded the transfer.
//
// A failed transfer is a result here, not an error: check IsFinal and Succeeded.
func (s *PayoutsService) BankTransferStatus(ctx context.Context, p *BankTransferStatusParams) (*BankTransferTransaction, error) {
	if p == nil {
		return nil, invalid("params", "are required")
	}
	account, err := s.disbursementAccount(p.DisbursementAccount)
	if err != nil {
		return nil, err
	}
	return statusCheck[BankTransferTransaction, payoutStatusWire](ctx, s.client, epBankTransferStatus.op(p, seg("disbursementAccount", account)))
}

// disbursementAccount returns the account named by the params, else the client's.
func (s *PayoutsService) disbursementAccount(fromParams string) (string, error) {
	account := fromParams
	if account == "" {
		account = s.client.disbursementAccount
	}
	if account != "" {
		return account, nil // a path segment: the path builder checks it
	}
	return "", invalid("disbursementAccount", "is required: set it in the params or with WithDisbursementAccount")
}
