package sandbox

import (
	"net/http"
	"slices"
)

// sendProviders are the networks of direct send: MPESA receives but does
// not send (SPEC "Direct send").
var sendProviders = []string{"MTN", "TELECEL", "AIRTELTIGO"}

// sendChannels are the disbursement channel identifiers of the send status
// check, by provider (SPEC "Direct send").
var sendChannels = map[string]string{"MTN": "mtn-gh", "TELECEL": "vodafone-gh", "AIRTELTIGO": "tigo-gh"}

// bankChannel is the channel of every send-to-bank payout.
const bankChannel = "gip-gh"

// bankCodes are the banks send-to-bank accepts (SPEC "Send-to-bank").
var bankCodes = []string{
	"300302", "300303", "300304", "300305", "300306", "300307", "300309", "300310", "300311", "300312", "300313", "300316",
	"300317", "300318", "300319", "300320", "300322", "300323", "300324", "300325", "300329", "300331", "300334", "300362",
}

// payout is an accepted direct send or send-to-bank.
type payout struct {
	ID          string // the send's pay_ id; unused for send-to-bank
	Currency    string
	Number      string // the recipient's wallet or bank account number
	Recipient   string // the name given, or the number when none was
	Channel     string
	Description string
	movement    *movement
}

// payoutStore holds sends and send-to-bank payouts by client reference.
type payoutStore struct {
	sends map[string]*payout
	banks map[string]*payout
}

func payoutRoutes(s *Server) []route {
	return []route{
		{pattern: "POST /v1/payments/send", auth: authBasic, ipAllowlist: true, handler: s.send},
		{pattern: "POST /v1/merchants/{account}/send/bank/gh/{bankCode}", auth: authBasic, ipAllowlist: true, handler: s.sendToBank},
		{pattern: "GET /v1/merchants/{account}/transactions/status", auth: authBasic, handler: s.bankTransferStatus},
	}
}

// sendView is the data of the send response (SPEC "Direct send").
type sendView struct {
	ID        string    `json:"id"`
	Reference string    `json:"reference"`
	Status    string    `json:"status"` // always PROCESSING
	Amount    int64     `json:"amount"`
	Fee       int64     `json:"fee"`
	Currency  string    `json:"currency"`
	Phone     string    `json:"phone"`
	Name      string    `json:"name"`
	CreatedAt timestamp `json:"createdAt"`
}

func (s *Server) send(w http.ResponseWriter, r *http.Request) {
	f, err := decodeFields(r)
	if err != nil {
		writeError(w, err)
		return
	}
	req := readMobileMoney(f, sendProviders...)
	name := f.requiredString("name")
	if err := f.err(); err != nil {
		writeError(w, err)
		return
	}
	p := &payout{ID: newID("pay_"), Currency: req.currency, Number: req.phone, Recipient: name,
		Channel: sendChannels[req.provider], Description: req.description}
	m := &movement{Movement: Movement{Kind: string(kindSend), ClientReference: req.clientReference, TransactionID: newReference(),
		Amount: req.amount, Fee: max(percentFee(req.amount, sendFeeBasisPoints), sendFeeMinimum)}, payout: true, callbackURL: req.callbackURL}
	m.callback = func() any { return payoutCallbackOf(m, p.Description, p.Recipient) }
	p.movement = m
	o := sendOutcomes.of(req.phone)

	s.mu.Lock()
	err = s.checkCustomer(req.customerID)
	if err == nil {
		err = s.money.checkNew(kindSend, m.ClientReference)
	}
	if err == nil {
		err = s.money.accept(m, &o, s.Now())
	}
	if err == nil {
		s.payouts.sends = addPayout(s.payouts.sends, p)
	}
	s.mu.Unlock()
	if err != nil {
		writeMoneyError(w, familySuccess, err)
		return
	}
	s.resolveLater(m, o)
	writeFlow(w, familySuccess, http.StatusOK, CodeAccepted, "", sendView{ID: p.ID, Reference: m.ClientReference, Status: "PROCESSING",
		Amount: m.Amount, Fee: m.Fee, Currency: p.Currency, Phone: p.Number, Name: p.Recipient, CreatedAt: timestamp{m.CreatedAt}})
}

func addPayout(byRef map[string]*payout, p *payout) map[string]*payout {
	if byRef == nil {
		byRef = make(map[string]*payout)
	}
	byRef[p.movement.ClientReference] = p
	return byRef
}

// sendStatusBody is the send status check (decided shape: Pascal ResponseCode,
// lower-case data, amounts in minor units).
type sendStatusBody struct {
	ResponseCode string     `json:"ResponseCode"`
	Data         sendStatus `json:"data"`
}

type sendStatus struct {
	TransactionID        string    `json:"TransactionId"`
	NetworkTransactionID *string   `json:"networkTransactionId"`
	Amount               int64     `json:"Amount"`
	Fees                 int64     `json:"Fees"`
	ClientReference      string    `json:"ClientReference"`
	Channel              string    `json:"Channel"`
	CustomerNumber       string    `json:"CustomerNumber"`
	TransactionStatus    string    `json:"transactionStatus"`
	CreatedAt            plainTime `json:"CreatedAt"`
}

// status answers the send status check; s.mu must be held.
func (p *payout) status() sendStatusBody {
	m := p.movement
	code, status := payoutStatus(m)
	return sendStatusBody{ResponseCode: code, Data: sendStatus{TransactionID: m.TransactionID, NetworkTransactionID: m.externalRef(),
		Amount: m.Amount, Fees: m.Fee, ClientReference: m.ClientReference, Channel: p.Channel, CustomerNumber: p.Number,
		TransactionStatus: status, CreatedAt: plainTime{m.CreatedAt}}}
}

// bankTransferView is the data of the send-to-bank response (SPEC "Send-to-bank").
type bankTransferView struct {
	AmountDebited         decimal `json:"AmountDebited"`
	TransactionID         string  `json:"TransactionId"`
	Description           string  `json:"Description"`
	ClientReference       string  `json:"ClientReference"`
	ExternalTransactionID *string `json:"ExternalTransactionId"`
	Amount                decimal `json:"Amount"`
	Charges               decimal `json:"Charges"`
	Meta                  any     `json:"Meta"`
	RecipientName         *string `json:"RecipientName"`
}

func (s *Server) sendToBank(w http.ResponseWriter, r *http.Request) {
	account, bankCode := r.PathValue("account"), r.PathValue("bankCode")
	if !slices.Contains(bankCodes, bankCode) {
		writeError(w, validationError("bankCode", "bankCode %q is not an accepted bank code", bankCode))
		return
	}
	f, err := decodeFields(r)
	if err != nil {
		writeError(w, err)
		return
	}
	f.require("Amount", "Description", "BankAccountNumber", "ClientReference")
	amount, _ := f.decimalAmount("Amount", true)
	callbackURL := primaryCallbackURL(f, "PrimaryCallbackUrl", "PrimaryCallbackURL")
	p := &payout{Currency: defaultCurrency, Channel: bankChannel}
	p.Description, _ = f.description("Description")
	p.Number, _ = f.optionalString("BankAccountNumber")
	reference, _ := f.clientReference("ClientReference")
	accountName, named := f.optionalString("BankAccountName")
	_, _ = f.msisdn("RecipientPhoneNumber")
	for _, name := range []string{"BankName", "BankBranch", "BankBranchCode"} {
		_, _ = f.optionalString(name)
	}
	if err := f.err(); err != nil {
		writeError(w, err)
		return
	}
	if account != s.cfg.DisbursementAccount {
		writeError(w, notFoundError("disbursement account", account))
		return
	}
	// The name check answers the holder's name: the one given, or the sandbox's own.
	p.Recipient = "SANDBOX ACCOUNT HOLDER"
	var recipientGiven *string
	if named {
		p.Recipient, recipientGiven = accountName, &accountName
	}
	m := &movement{Movement: Movement{Kind: string(kindBankTransfer), ClientReference: reference, TransactionID: newReference(),
		Amount: amount, Fee: flatCharge}, payout: true, callbackURL: callbackURL}
	m.callback = func() any { return payoutCallbackOf(m, p.Description, p.Recipient) }
	p.movement = m
	o := bankOutcomes.of(p.Number)

	s.mu.Lock()
	err = s.money.checkNew(kindBankTransfer, reference)
	if err == nil {
		err = s.money.accept(m, &o, s.Now())
	}
	if err == nil {
		s.payouts.banks = addPayout(s.payouts.banks, p)
	}
	s.mu.Unlock()
	if err != nil {
		writeMoneyError(w, familyPascal, err)
		return
	}
	s.resolveLater(m, o)
	writeFlow(w, familyPascal, http.StatusOK, CodeAccepted, "", bankTransferView{AmountDebited: decimal(amount + m.Fee),
		TransactionID: m.TransactionID, Description: p.Description, ClientReference: reference, Amount: decimal(amount),
		Charges: decimal(m.Fee), RecipientName: recipientGiven})
}

// primaryCallbackURL reads the required callback URL of send-to-bank and
// direct debit under either spelling the spec shows.
func primaryCallbackURL(f *fields, names ...string) string {
	for _, name := range names {
		if f.has(name) {
			u, _ := f.callbackURL(name)
			f.require(name)
			return u
		}
	}
	f.fail(names[0], "%s is required", names[0])
	return ""
}

// bankStatusBody is the send-to-bank status check (SPEC "Send-to-bank"),
// amounts in major units.
type bankStatusBody struct {
	ResponseCode string     `json:"ResponseCode"`
	Data         bankStatus `json:"Data"`
}

type bankStatus struct {
	TransactionID        string    `json:"TransactionId"`
	NetworkTransactionID *string   `json:"networkTransactionId"`
	Amount               decimal   `json:"Amount"`
	Fees                 decimal   `json:"fees"`
	ClientReference      string    `json:"ClientReference"`
	Channel              string    `json:"Channel"`
	CustomerNumber       string    `json:"CustomerNumber"`
	Description          string    `json:"Description"`
	TransactionStatus    string    `json:"transactionStatus"`
	CreatedAt            plainTime `json:"CreatedAt"`
}

// bankTransferStatus finds a send-to-bank payout by clientReference,
// serviceTransactionId or networkTransactionId, whichever the query gives;
// when it gives several, the payout must match them all.
func (s *Server) bankTransferStatus(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	reference, serviceID, networkID := q.Get("clientReference"), q.Get("serviceTransactionId"), q.Get("networkTransactionId")
	if reference == "" && serviceID == "" && networkID == "" {
		writeError(w, validationError("clientReference", "clientReference, serviceTransactionId or networkTransactionId is required"))
		return
	}
	if account := r.PathValue("account"); account != s.cfg.DisbursementAccount {
		writeError(w, notFoundError("disbursement account", account))
		return
	}
	s.mu.Lock()
	found := s.payouts.findBank(reference, serviceID, networkID)
	var body bankStatusBody
	if found != nil {
		body = found.bankStatus()
	}
	s.mu.Unlock()
	if found == nil {
		writeError(w, notFoundError("send-to-bank transaction", firstNonEmpty(reference, serviceID, networkID)))
		return
	}
	writeJSON(w, http.StatusOK, body)
}

// findBank returns the send-to-bank payout matching every id given, or nil;
// s.mu must be held.
func (p *payoutStore) findBank(reference, serviceID, networkID string) *payout {
	matches := func(b *payout) bool {
		m := b.movement
		return (reference == "" || m.ClientReference == reference) && (serviceID == "" || m.TransactionID == serviceID) &&
			(networkID == "" || m.State == StateSucceeded && m.externalID == networkID)
	}
	if reference != "" {
		if b, ok := p.banks[reference]; ok && matches(b) {
			return b
		}
		return nil
	}
	for _, b := range p.banks {
		if matches(b) {
			return b
		}
	}
	return nil
}

// bankStatus answers the send-to-bank status check; s.mu must be held.
func (p *payout) bankStatus() bankStatusBody {
	m := p.movement
	code, status := payoutStatus(m)
	return bankStatusBody{ResponseCode: code, Data: bankStatus{TransactionID: m.TransactionID, NetworkTransactionID: m.externalRef(),
		Amount: decimal(m.Amount), Fees: decimal(m.Fee), ClientReference: m.ClientReference, Channel: p.Channel,
		CustomerNumber: p.Number, Description: p.Description, TransactionStatus: status, CreatedAt: plainTime{m.CreatedAt}}}
}

func firstNonEmpty(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}
