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
	provider    string // the send's provider as the request named it; "" for send-to-bank
	movement    *movement
}

// bindPayoutCallback has p's movement call back as a payout.
func (s *Server) bindPayoutCallback(p *payout) {
	m := p.movement
	m.callback = func() any { return s.shapes.payoutCallback(m, p.Description, p.Recipient, p.provider) }
}

// payoutStore holds sends and send-to-bank payouts by client reference.
type payoutStore struct {
	sends map[string]*payout
	banks map[string]*payout
}

func payoutRoutes(s *Server) []route {
	return []route{
		{pattern: "POST /v1/payments/send", auth: authBasic, ipAllowlist: true, handler: s.send,
			provider: wirePath{pattern: "POST /api/merchants/{prepaid}/send/mobilemoney", handler: s.providerSend,
				body: "RecipientName, RecipientMsisdn, CustomerEmail, Channel mtn-gh, vodafone-gh or tigo-gh, Amount (cedis), PrimaryCallbackUrl, SecondaryCallbackUrl, Description, ClientReference"}},
		{pattern: "POST /v1/merchants/{account}/send/bank/gh/{bankCode}", auth: authBasic, ipAllowlist: true, handler: s.sendToBank,
			provider: wirePath{pattern: "POST /api/merchants/{prepaid}/send/bank/gh/{bankCode}", handler: s.providerSendToBank,
				body: "the spec's, Amount with up to two decimals (10, 10.5, 0.8)"}},
		{pattern: "GET /v1/merchants/{account}/transactions/status", auth: authBasic, handler: s.bankTransferStatus,
			provider: wirePath{pattern: "GET /api/merchants/{prepaid}/transactions/status", handler: s.providerPayoutStatus,
				body: "query clientReference (or serviceTransactionId, networkTransactionId): a send or a send-to-bank"}},
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
	s.acceptSend(w, req, name, familySuccess)
}

// acceptSend starts a send read from either wire's request, paid to name; a
// refusal is answered in family's envelope.
func (s *Server) acceptSend(w http.ResponseWriter, req mobileMoneyRequest, name string, family envelopeFamily) {
	p := &payout{ID: newID("pay_"), Currency: req.currency, Number: req.phone, Recipient: name,
		Channel: sendChannels[req.provider], Description: req.description, provider: req.provider}
	m := &movement{Movement: Movement{Kind: string(kindSend), ClientReference: req.clientReference, TransactionID: newReference(),
		Amount: req.amount, Fee: max(percentFee(req.amount, sendFeeBasisPoints), sendFeeMinimum)}, payout: true, callbackURL: req.callbackURL}
	p.movement = m
	s.bindPayoutCallback(p)
	o := sendOutcomes.of(req.phone)

	s.mu.Lock()
	err := s.checkCustomer(req.customerID)
	if err == nil {
		err = s.money.checkNew(kindSend, m.ClientReference)
	}
	if err == nil {
		err = s.money.accept(m, &o, s.Now())
	}
	if err == nil {
		s.payouts.sends = addPayout(s.payouts.sends, p)
	}
	var answer any
	if err == nil {
		answer = s.shapes.sendAccepted(p)
	}
	s.mu.Unlock()
	if err != nil {
		writeMoneyError(w, family, err)
		return
	}
	s.resolveLater(m, o)
	writeJSON(w, http.StatusOK, answer)
}

// specSendAccepted is the spec's answer to a send.
func specSendAccepted(p *payout) any {
	m := p.movement
	return flowBody(familySuccess, CodeAccepted, "", sendView{ID: p.ID, Reference: m.ClientReference, Status: "PROCESSING",
		Amount: m.Amount, Fee: m.Fee, Currency: p.Currency, Phone: p.Number, Name: p.Recipient, CreatedAt: timestamp{m.CreatedAt}})
}

func addPayout(byRef map[string]*payout, p *payout) map[string]*payout {
	if byRef == nil {
		byRef = make(map[string]*payout)
	}
	byRef[p.movement.ClientReference] = p
	return byRef
}

// payoutStatusBody is the send and send-to-bank status check: Pascal
// ResponseCode, and data under "data" (the spec's send) or "Data".
type payoutStatusBody struct {
	ResponseCode string            `json:"ResponseCode"`
	LowerData    *payoutStatusData `json:"data,omitempty"`
	Data         *payoutStatusData `json:"Data,omitempty"`
}

// payoutStatusData is a payout as its status check shows it. The wires spell
// two keys in either case (the spec's send writes Fees, its send-to-bank fees;
// the provider's failed transfer writes fees and customerNumber), so each has
// a field per spelling and exactly one of the pair is set.
type payoutStatusData struct {
	TransactionID        string    `json:"TransactionId"`
	NetworkTransactionID *string   `json:"networkTransactionId"`
	Amount               number    `json:"Amount"`
	Fees                 *number   `json:"Fees,omitempty"`
	LowerFees            *number   `json:"fees,omitempty"`
	ClientReference      string    `json:"ClientReference"`
	Channel              string    `json:"Channel"`
	CustomerNumber       *string   `json:"CustomerNumber,omitempty"`
	LowerCustomerNumber  *string   `json:"customerNumber,omitempty"`
	Description          *string   `json:"Description,omitempty"` // send-to-bank only
	TransactionStatus    string    `json:"transactionStatus"`
	CreatedAt            plainTime `json:"CreatedAt"`
}

// payoutStatusOf describes p as the status checks see it, with its fee and
// customer number set under the Pascal spelling and the amounts written by
// amount and fee. s.mu must be held.
func payoutStatusOf(p *payout, amount, fee func(int64) number) payoutStatusData {
	m := p.movement
	_, status := payoutStatus(m)
	fees, customer := fee(m.Fee), p.Number
	return payoutStatusData{TransactionID: m.TransactionID, NetworkTransactionID: m.externalRef(), Amount: amount(m.Amount),
		Fees: &fees, ClientReference: m.ClientReference, Channel: p.Channel, CustomerNumber: &customer,
		TransactionStatus: status, CreatedAt: plainTime{m.CreatedAt}}
}

// lowerFees moves the fee of d to the lower-case key "fees".
func (d payoutStatusData) lowerFees() payoutStatusData {
	d.Fees, d.LowerFees = nil, d.Fees
	return d
}

// specSendStatus is the spec's send status check (decided shape: data under
// "data", amounts in minor units).
func specSendStatus(p *payout) any {
	code, _ := payoutStatus(p.movement)
	data := payoutStatusOf(p, minorUnits, minorUnits)
	return payoutStatusBody{ResponseCode: code, LowerData: &data}
}

func (s *Server) sendToBank(w http.ResponseWriter, r *http.Request) {
	s.transferToBank(w, r, r.PathValue("account"), true)
}

// providerSendToBank reads the provider's send-to-bank: the spec's body with
// its Amount written with up to two decimals (10, 10.5, 0.8), as the
// provider's clients write it.
func (s *Server) providerSendToBank(w http.ResponseWriter, r *http.Request) {
	s.transferToBank(w, r, r.PathValue("prepaid"), false)
}

// transferToBank starts a send-to-bank out of account; exactlyTwo holds its
// Amount to exactly two decimals. Optional fields sent empty count as absent.
func (s *Server) transferToBank(w http.ResponseWriter, r *http.Request, account string, exactlyTwo bool) {
	bankCode := r.PathValue("bankCode")
	if !slices.Contains(bankCodes, bankCode) {
		writeError(w, validationError("bankCode", "bankCode %q is not an accepted bank code", bankCode))
		return
	}
	f, err := decodeFields(r)
	if err != nil {
		writeError(w, err)
		return
	}
	f.dropBlank("BankAccountName", "RecipientPhoneNumber", "BankName", "BankBranch", "BankBranchCode")
	f.require("Amount", "Description", "BankAccountNumber", "ClientReference")
	amount, _ := f.decimalAmount("Amount", exactlyTwo)
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
	p.movement = m
	s.bindPayoutCallback(p)
	o := bankOutcomes.of(p.Number)

	s.mu.Lock()
	err = s.money.checkNew(kindBankTransfer, reference)
	if err == nil {
		err = s.money.accept(m, &o, s.Now())
	}
	if err == nil {
		s.payouts.banks = addPayout(s.payouts.banks, p)
	}
	var answer any
	if err == nil {
		answer = s.shapes.bankAccepted(p, recipientGiven)
	}
	s.mu.Unlock()
	if err != nil {
		writeMoneyError(w, familyPascal, err)
		return
	}
	s.resolveLater(m, o)
	writeJSON(w, http.StatusOK, answer)
}

// payoutAccepted is the data of an accepted payout: amount and fee debited,
// the network's reference (externalID) not yet known.
func payoutAccepted(p *payout, recipient, externalID *string, amount, fee func(int64) number) payoutData {
	m := p.movement
	return payoutData{AmountDebited: amount(m.Amount + m.Fee), TransactionID: m.TransactionID, Description: p.Description,
		ClientReference: m.ClientReference, ExternalTransactionID: externalID, Amount: amount(m.Amount), Charges: fee(m.Fee),
		RecipientName: recipient}
}

// specBankAccepted is the spec's answer to a send-to-bank (SPEC
// "Send-to-bank"): the recipient's name when the request gave one.
func specBankAccepted(p *payout, recipientGiven *string) any {
	return flowBody(familyPascal, CodeAccepted, "", payoutAccepted(p, recipientGiven, nil, twoDecimals, twoDecimals))
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
	var body any
	if found != nil {
		body = s.shapes.bankStatus(found)
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
	return findPayout(p.banks, reference, serviceID, networkID)
}

// findPayout returns the payout of byRef matching every id given, or nil;
// s.mu must be held.
func findPayout(byRef map[string]*payout, reference, serviceID, networkID string) *payout {
	matches := func(b *payout) bool {
		m := b.movement
		return (reference == "" || m.ClientReference == reference) && (serviceID == "" || m.TransactionID == serviceID) &&
			(networkID == "" || m.State == StateSucceeded && m.externalID == networkID)
	}
	if reference != "" {
		if b, ok := byRef[reference]; ok && matches(b) {
			return b
		}
		return nil
	}
	for _, b := range byRef {
		if matches(b) {
			return b
		}
	}
	return nil
}

// specBankStatus is the spec's send-to-bank status check (SPEC
// "Send-to-bank"), amounts in major units.
func specBankStatus(p *payout) any {
	code, _ := payoutStatus(p.movement)
	data := payoutStatusOf(p, twoDecimals, twoDecimals).lowerFees()
	data.Description = &p.Description
	return payoutStatusBody{ResponseCode: code, Data: &data}
}

func firstNonEmpty(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}
