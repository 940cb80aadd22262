package sandbox

import (
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Mandate states (decided: CANCELLED after a cancel, FAILED when the customer
// refuses; docs/sandbox.md "Decisions: the whole service").
const (
	mandatePending   = "PENDING"
	mandateApproved  = "APPROVED"
	mandateCancelled = "CANCELLED"
	mandateFailed    = "FAILED"
)

// mandateOutcomes choose by the MSISDN's last digits how the customer answers
// a mandate's approval request: 0009 refuses it (the mandate fails, and the
// callback says FAILED); any other number approves. The endings of
// collectionOutcomes are left free, as charges under a mandate use them.
var mandateOutcomes = testNumbers{"0009": {code: CodePreapprovalFailed}}

// Direct-debit channels and how each verifies a mandate (SPEC "Direct debit
// mandates"): MTN by a USSD prompt, Telecel by an OTP sent by SMS.
var mandateChannels = map[string]string{
	"mtn-gh-direct-debit":      "USSD",
	"vodafone-gh-direct-debit": "OTP",
}

var mandateChannelNames = []string{"mtn-gh-direct-debit", "vodafone-gh-direct-debit"}

// debitNetworks are the networks whose wallets the direct-debit channels draw on.
var debitNetworks = map[string]string{"mtn-gh-direct-debit": "MTN", "vodafone-gh-direct-debit": "TELECEL"}

// mandate is a direct-debit pre-approval.
type mandate struct {
	ID               string // servicePreApprovalId
	ClientReference  string // clientReferenceId
	Msisdn           string
	Channel          string
	VerificationType string
	OTPPrefix        *string
	Status           string
	CreatedAt        timestamp

	callbackURL string
	otp         string // the code the customer received: prefix, hyphen, 4 digits
	verified    bool   // the OTP was submitted; approval follows
	request     int    // approval requests so far; a stale approval task finds a newer one
	movement    *movement
}

// mandateStore holds mandates by id, by client reference and by MSISDN
// (oldest first), and the direct-debit charges by client reference.
type mandateStore struct {
	byID     map[string]*mandate
	byRef    map[string]*mandate
	byMsisdn map[string][]*mandate
	charges  map[string]*charge
}

func (st *mandateStore) add(m *mandate) {
	if st.byID == nil {
		st.byID, st.byRef, st.byMsisdn = map[string]*mandate{}, map[string]*mandate{}, map[string][]*mandate{}
	}
	st.byID[m.ID], st.byRef[m.ClientReference] = m, m
	st.byMsisdn[m.Msisdn] = append(st.byMsisdn[m.Msisdn], m)
}

// active returns the msisdn's PENDING or APPROVED mandate on channel, or nil.
func (st *mandateStore) active(msisdn, channel string) *mandate {
	return st.find(msisdn, channel, (*mandate).isActive)
}

// isActive tells whether m awaits approval or is approved.
func (m *mandate) isActive() bool { return m.Status == mandatePending || m.Status == mandateApproved }

// approved returns the msisdn's APPROVED mandate on channel, or nil.
func (st *mandateStore) approved(msisdn, channel string) *mandate {
	return st.find(msisdn, channel, func(m *mandate) bool { return m.Status == mandateApproved })
}

func (st *mandateStore) find(msisdn, channel string, keep func(*mandate) bool) *mandate {
	for _, m := range st.byMsisdn[msisdn] {
		if m.Channel == channel && keep(m) {
			return m
		}
	}
	return nil
}

func mandateRoutes(s *Server) []route {
	return []route{
		{pattern: "POST /v1/mandates", auth: authBasic, handler: s.createMandate,
			provider: wirePath{pattern: "POST /api/v2/merchant/{POS}/preapproval/initiate", body: specBody}},
		{pattern: "POST /v1/mandates/verifyotp", auth: authBasic, handler: s.verifyMandateOTP,
			provider: wirePath{pattern: "POST /api/v2/merchant/{POS}/preapproval/verifyotp", handler: s.providerVerifyMandateOTP,
				body: "customerMsisdn, " + providerPreApprovalIDKey + ", clientReferenceId, otpCode"}},
		{pattern: "GET /v1/mandates/preapproval/{clientReferenceId}/status", auth: authBasic, handler: s.mandateStatus,
			provider: wirePath{pattern: "GET /api/v2/merchant/{POS}/preapproval/{clientReferenceId}/status", body: "none"}},
		{pattern: "GET /v1/mandates/preapproval/{customerMsisdn}/cancel", auth: authBasic, handler: s.cancelMandate,
			provider: wirePath{pattern: "GET /api/v2/merchant/{POS}/preapproval/{customerMsisdn}/cancel", body: "none"}},
		{pattern: "POST /v1/mandates/preapproval/reactivate", auth: authBasic, handler: s.reactivateMandate,
			provider: wirePath{pattern: "POST /api/v2/merchant/{POS}/preapproval/reactivate", body: specBody}},
		{pattern: "POST /v1/payments/direct-debit", auth: authBasic, scope: ScopeMobileMoneyReceiveDirect, ipAllowlist: true, handler: s.directDebit,
			provider: wirePath{pattern: providerCollectPath, shared: true,
				body: "the receive's body with Channel mtn-gh-direct-debit or vodafone-gh-direct-debit"}},
		{pattern: "GET /v1/payments/direct-debit/status/{clientReference}", auth: authBasic, handler: s.directDebitStatus,
			provider: wirePath{pattern: providerStatusPath, shared: true, body: "query clientReference, as the receive's"}},
	}
}

// mandateView is the data of the create and reactivate answers.
type mandateView struct {
	ServicePreApprovalID string  `json:"servicePreApprovalId"`
	ClientReferenceID    string  `json:"clientReferenceId"`
	CustomerMsisdn       *string `json:"customerMsisdn,omitempty"` // reactivate only
	VerificationType     string  `json:"verificationType"`
	OTPPrefix            *string `json:"otpPrefix"`
	PreapprovalStatus    string  `json:"preapprovalStatus"`
}

func (m *mandate) view(withMsisdn bool) mandateView {
	v := mandateView{ServicePreApprovalID: m.ID, ClientReferenceID: m.ClientReference, VerificationType: m.VerificationType,
		OTPPrefix: m.OTPPrefix, PreapprovalStatus: m.Status}
	if withMsisdn {
		msisdn := m.Msisdn
		v.CustomerMsisdn = &msisdn
	}
	return v
}

func (s *Server) createMandate(w http.ResponseWriter, r *http.Request) {
	f, err := decodeFields(r)
	if err != nil {
		writeError(w, err)
		return
	}
	f.require("clientReferenceId", "customerMsisdn", "channel", "callbackUrl")
	m := &mandate{ID: newUUID(), Status: mandatePending}
	m.ClientReference, _ = f.clientReference("clientReferenceId")
	m.Msisdn, _ = f.msisdn("customerMsisdn")
	m.Channel, _ = f.enum("channel", mandateChannelNames...)
	m.callbackURL, _ = f.callbackURL("callbackUrl")
	if err := f.err(); err != nil {
		writeError(w, err)
		return
	}
	m.VerificationType = mandateChannels[m.Channel]
	m.movement = &movement{Movement: Movement{Kind: string(kindMandate), ClientReference: m.ClientReference, TransactionID: m.ID}}

	s.mu.Lock()
	err = s.money.checkNew(kindMandate, m.ClientReference)
	if err == nil && s.mandates.active(m.Msisdn, m.Channel) != nil {
		err = preapprovalFailed("%s already has a pending or approved mandate on %s", m.Msisdn, m.Channel)
	}
	if err == nil {
		m.CreatedAt = timestamp{s.Now()}
		err = s.money.accept(m.movement, &outcome{}, m.CreatedAt.Time)
	}
	var answer any
	if err == nil {
		s.mandates.add(m)
		s.requestApproval(m)
		answer = s.shapes.mandateCreated(m)
	}
	s.mu.Unlock()
	if err != nil {
		writeMoneyError(w, familyCamel, err)
		return
	}
	writeJSON(w, http.StatusOK, answer)
}

// The messages of the mandate answers.
const (
	mandateCreatedMessage = "the mandate is awaiting the customer's approval"
	otpVerifiedMessage    = "the OTP was verified; approval follows by callback"
	mandateRenewedMessage = "approval was requested again"
)

// mandateCreated is the spec's answer to a mandate request.
func mandateCreated(m *mandate) any {
	return flowBody(familyCamel, CodePreapprovalOK, mandateCreatedMessage, m.view(false))
}

// requestApproval asks the customer to approve m: a USSD prompt approved on
// its own after ResolveAfter, or an OTP sent by SMS that verifyotp takes.
// s.mu must be held.
func (s *Server) requestApproval(m *mandate) {
	m.request++
	m.verified = false
	if m.VerificationType == "OTP" {
		prefix := randomLetters(4)
		m.OTPPrefix, m.otp = &prefix, prefix+"-"+randomDigits(4)
		s.sms.send(m.Msisdn, m.otp, s.Now())
		return
	}
	m.OTPPrefix = nil
	s.approveLater(m)
}

// approveLater has the customer answer m after ResolveAfter, approving it
// unless mandateOutcomes say the number refuses, unless a cancel or a newer
// approval request comes first, then calls back. s.mu must be held.
func (s *Server) approveLater(m *mandate) {
	request := m.request
	s.forgeWhilePending(callbackRefs{client: m.ClientReference, service: m.ID}, m.callbackURL, func() any {
		status := m.Status
		defer func() { m.Status = status }()
		m.Status = mandateFailed
		return s.shapes.mandateCallback(m, s.Now())
	})
	s.scheduleJob(s.Now().Add(s.cfg.ResolveAfter), answerMandateJob{ID: m.ID, Request: request})
}

// mandateCallback is posted when a mandate is approved or fails (SPEC
// "Mandate callback"); the provider's names the id its own way
// (providerMandateCallback) and writes the date with 7 fractional digits.
type mandateCallback struct {
	CustomerMsisdn       string `json:"CustomerMsisdn"`
	VerificationType     string `json:"VerificationType"`
	PreapprovalStatus    string `json:"PreapprovalStatus"`
	ServicePreapprovalID string `json:"ServicePreapprovalId"`
	ClientReferenceID    string `json:"ClientReferenceId"`
	CreatedAt            string `json:"CreatedAt"`
}

// mandateCallbackOf is the callback of m's answer at at, dated by date.
func mandateCallbackOf(m *mandate, at time.Time, date func(time.Time) string) mandateCallback {
	return mandateCallback{CustomerMsisdn: m.Msisdn, VerificationType: m.VerificationType, PreapprovalStatus: m.Status,
		ServicePreapprovalID: m.ID, ClientReferenceID: m.ClientReference, CreatedAt: date(at)}
}

// verifyMandateOTP serves the spec's verifyotp, which names the mandate's id
// servicePreApprovalId.
func (s *Server) verifyMandateOTP(w http.ResponseWriter, r *http.Request) {
	s.verifyMandateOTPWith(w, r, "servicePreApprovalId")
}

// providerVerifyMandateOTP serves the provider's verifyotp, whose clients name
// the mandate's id hubtelPreApprovalId.
func (s *Server) providerVerifyMandateOTP(w http.ResponseWriter, r *http.Request) {
	s.verifyMandateOTPWith(w, r, providerPreApprovalIDKey)
}

// verifyMandateOTPWith checks an OTP whose mandate is named under idKey.
func (s *Server) verifyMandateOTPWith(w http.ResponseWriter, r *http.Request, idKey string) {
	f, err := decodeFields(r)
	if err != nil {
		writeError(w, err)
		return
	}
	f.require("customerMsisdn", idKey, "clientReferenceId", "otpCode")
	msisdn, _ := f.msisdn("customerMsisdn")
	id, _ := f.optionalString(idKey)
	reference, _ := f.clientReference("clientReferenceId")
	otp, _ := f.stringWhere("otpCode", "four letters, a hyphen and four digits, such as ABCD-1234", isOTP)
	if err := f.err(); err != nil {
		writeError(w, err)
		return
	}
	s.mu.Lock()
	m, err := s.mandateForOTP(id, msisdn, reference, otp)
	var answer any
	if err == nil {
		answer = s.shapes.otpVerified(m)
	}
	s.mu.Unlock()
	if err != nil {
		writeMoneyError(w, familyCamel, err)
		return
	}
	writeJSON(w, http.StatusOK, answer)
}

// otpVerified is the spec's answer to a right OTP.
func otpVerified(m *mandate) any {
	return flowBody(familyCamel, CodePreapprovalOK, otpVerifiedMessage, struct {
		ServicePreApprovalID string `json:"servicePreApprovalId"`
		PreapprovalStatus    string `json:"preapprovalStatus"`
	}{m.ID, m.Status})
}

// mandateForOTP checks otp against the mandate and, the first time it is
// right, schedules the approval. s.mu must be held.
func (s *Server) mandateForOTP(id, msisdn, reference, otp string) (*mandate, error) {
	m, ok := s.mandates.byID[id]
	switch {
	case !ok:
		return nil, notFoundError("mandate", id)
	case m.Msisdn != msisdn || m.ClientReference != reference:
		return nil, preapprovalFailed("customerMsisdn and clientReferenceId do not match mandate %s", id)
	case m.VerificationType != "OTP":
		return nil, preapprovalFailed("mandate %s verifies by USSD, not by OTP", id)
	case m.Status != mandatePending:
		return nil, preapprovalFailed("mandate %s is %s, not awaiting an OTP", id, m.Status)
	case otp != m.otp:
		return nil, preapprovalFailed("the OTP is wrong")
	}
	if !m.verified {
		m.verified = true
		s.approveLater(m)
	}
	return m, nil
}

// isOTP matches ABCD-1234.
func isOTP(s string) bool {
	letters, digits, ok := strings.Cut(s, "-")
	return ok && len(letters) == 4 && len(digits) == 4 &&
		strings.Trim(letters, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") == "" && strings.Trim(digits, "0123456789") == ""
}

// mandateStatusView is the data of the mandate status check (decided shape).
type mandateStatusView struct {
	ServicePreApprovalID string    `json:"servicePreApprovalId"`
	ClientReferenceID    string    `json:"clientReferenceId"`
	CustomerMsisdn       string    `json:"customerMsisdn"`
	Channel              string    `json:"channel"`
	VerificationType     string    `json:"verificationType"`
	PreapprovalStatus    string    `json:"preapprovalStatus"`
	CreatedAt            timestamp `json:"createdAt"`
}

func (s *Server) mandateStatus(w http.ResponseWriter, r *http.Request) {
	reference := r.PathValue("clientReferenceId")
	s.mu.Lock()
	m, ok := s.mandates.byRef[reference]
	var answer any
	if ok {
		answer = s.shapes.mandateStatus(m)
	}
	s.mu.Unlock()
	if !ok {
		writeError(w, notFoundError("mandate", reference))
		return
	}
	writeJSON(w, http.StatusOK, answer)
}

// specMandateStatus is the sandbox's mandate status check on the spec's wire
// (the spec shows none).
func specMandateStatus(m *mandate) any {
	return flowBody(familyCamel, CodePreapprovalOK, "mandate status", mandateStatusView{ServicePreApprovalID: m.ID,
		ClientReferenceID: m.ClientReference, CustomerMsisdn: m.Msisdn, Channel: m.Channel, VerificationType: m.VerificationType,
		PreapprovalStatus: m.Status, CreatedAt: m.CreatedAt})
}

// cancelMandate cancels every PENDING or APPROVED mandate of the MSISDN and
// answers the newest of them.
func (s *Server) cancelMandate(w http.ResponseWriter, r *http.Request) {
	msisdn := r.PathValue("customerMsisdn")
	s.mu.Lock()
	var cancelled *mandate
	for _, m := range s.mandates.byMsisdn[msisdn] {
		if m.isActive() {
			m.Status, cancelled = mandateCancelled, m
			m.request++ // a pending approval no longer applies
			s.money.settle(m.movement, CodePreapprovalFailed, s.Now())
		}
	}
	var answer any
	if cancelled != nil {
		answer = s.shapes.mandateCancelled(cancelled)
	}
	s.mu.Unlock()
	if cancelled == nil {
		writeError(w, notFoundError("pending or approved mandate for MSISDN", msisdn))
		return
	}
	writeJSON(w, http.StatusOK, answer)
}

// specMandateCancelled is the sandbox's answer to a cancel on the spec's wire
// (the spec shows none): the newest mandate cancelled.
func specMandateCancelled(m *mandate) any {
	return flowBody(familyCamel, CodePreapprovalOK, "the mandate was cancelled", struct {
		ServicePreApprovalID string `json:"servicePreApprovalId"`
		ClientReferenceID    string `json:"clientReferenceId"`
		CustomerMsisdn       string `json:"customerMsisdn"`
		PreapprovalStatus    string `json:"preapprovalStatus"`
	}{m.ID, m.ClientReference, m.Msisdn, m.Status})
}

// reactivateMandate requests approval again for the MSISDN's newest
// mandate, which must be CANCELLED, calling back to the new URL.
func (s *Server) reactivateMandate(w http.ResponseWriter, r *http.Request) {
	f, err := decodeFields(r)
	if err != nil {
		writeError(w, err)
		return
	}
	f.require("customerMsisdn", "callbackUrl")
	msisdn, _ := f.msisdn("customerMsisdn")
	callbackURL, _ := f.callbackURL("callbackUrl")
	if err := f.err(); err != nil {
		writeError(w, err)
		return
	}
	s.mu.Lock()
	var answer any
	all := s.mandates.byMsisdn[msisdn]
	switch {
	case len(all) == 0:
		err = notFoundError("mandate for MSISDN", msisdn)
	case all[len(all)-1].Status != mandateCancelled:
		err = preapprovalFailed("the newest mandate of %s is %s; only a cancelled mandate can be reactivated", msisdn, all[len(all)-1].Status)
	default:
		m := all[len(all)-1]
		m.Status, m.callbackURL = mandatePending, callbackURL
		s.requestApproval(m)
		answer = s.shapes.mandateRenewed(m)
	}
	s.mu.Unlock()
	if err != nil {
		writeMoneyError(w, familyCamel, err)
		return
	}
	writeJSON(w, http.StatusOK, answer)
}

// mandateRenewed is the spec's answer to a reactivate (whose shape the spec
// leaves open), naming the MSISDN.
func mandateRenewed(m *mandate) any {
	return flowBody(familyCamel, CodePreapprovalOK, mandateRenewedMessage, m.view(true))
}

// charge is an accepted direct-debit charge.
type charge struct {
	Description string
	network     string // the network its callback names
	movement    *movement
}

// bindChargeCallback has c's movement call back as a transaction (SPEC
// "Transaction callbacks for receive, debit and SDK payments").
func (s *Server) bindChargeCallback(c *charge) {
	m := c.movement
	m.callback = func() any {
		return s.shapes.transactionCallback(m, m.ClientReference, c.Description, m.TransactionID, c.network)
	}
}

// chargeView is the data of the direct-debit answer (SPEC "Direct debit
// charge"), also the provider's answer to a receive.
type chargeView struct {
	TransactionID      string `json:"TransactionId"`
	Description        string `json:"Description"`
	ClientReference    string `json:"ClientReference"`
	Amount             number `json:"Amount"`
	Charges            number `json:"Charges"`
	AmountAfterCharges number `json:"AmountAfterCharges"`
	AmountCharged      number `json:"AmountCharged"`
	DeliveryFee        number `json:"DeliveryFee"`
}

// collectionAccepted describes an accepted collection, amounts written by amount.
func collectionAccepted(m *movement, description string, amount func(int64) number) chargeView {
	return chargeView{TransactionID: m.TransactionID, Description: description, ClientReference: m.ClientReference,
		Amount: amount(m.Amount), Charges: amount(m.Fee), AmountAfterCharges: amount(m.Amount - m.Fee),
		AmountCharged: amount(m.Amount), DeliveryFee: amount(0)}
}

// specChargeAccepted is the spec's answer to a direct-debit charge.
func specChargeAccepted(c *charge) any {
	return flowBody(familyPascal, CodeAccepted, "the charge was accepted; the final state follows by callback",
		collectionAccepted(c.movement, c.Description, twoDecimals))
}

func (s *Server) directDebit(w http.ResponseWriter, r *http.Request) {
	f, err := decodeFields(r)
	if err != nil {
		writeError(w, err)
		return
	}
	s.charge(w, f)
}

// charge starts a direct-debit charge; its body is alike on both wires (the
// provider's is its receive body with a direct-debit Channel). Optional
// fields sent empty count as absent.
func (s *Server) charge(w http.ResponseWriter, f *fields) {
	f.dropBlank("CustomerName", "CustomerEmail")
	f.require("CustomerMsisdn", "Channel", "Amount", "Description", "ClientReference")
	msisdn, _ := f.msisdn("CustomerMsisdn")
	channel, _ := f.enum("Channel", mandateChannelNames...)
	amount, _ := f.decimalAmount("Amount", false)
	callbackURL := primaryCallbackURL(f, "PrimaryCallbackURL", "PrimaryCallbackUrl")
	description, _ := f.description("Description")
	reference, _ := f.clientReference("ClientReference")
	_, _ = f.optionalString("CustomerName")
	_, _ = f.email("CustomerEmail")
	if err := f.err(); err != nil {
		writeError(w, err)
		return
	}
	m := &movement{Movement: Movement{Kind: string(kindDirectDebit), ClientReference: reference, TransactionID: newReference(),
		Amount: amount, Fee: flatCharge}, callbackURL: callbackURL}
	c := &charge{Description: description, network: debitNetworks[channel], movement: m}
	s.bindChargeCallback(c)
	o := collectionOutcomes.of(msisdn)
	if amount <= flatCharge && o.refuse == "" {
		o = outcome{refuse: CodeDeclined} // the gateway's minimum: more than the charge
	}

	s.mu.Lock()
	err := s.money.checkNew(kindDirectDebit, reference)
	if err == nil && s.mandates.approved(msisdn, channel) == nil {
		err = &refusal{status: http.StatusBadRequest, code: CodePreapprovalFailed,
			message: fmt.Sprintf("%s has no approved mandate on %s", msisdn, channel)}
	}
	if err == nil {
		err = s.money.accept(m, &o, s.Now())
	}
	var answer any
	if err == nil {
		s.mandates.addCharge(c)
		answer = s.shapes.chargeAccepted(c)
	}
	s.mu.Unlock()
	if err != nil {
		writeMoneyError(w, familyPascal, err)
		return
	}
	s.resolveLater(m, o)
	writeJSON(w, http.StatusOK, answer)
}

func (st *mandateStore) addCharge(c *charge) {
	if st.charges == nil {
		st.charges = make(map[string]*charge)
	}
	st.charges[c.movement.ClientReference] = c
}

// directDebitStatus answers the decided status check of a charge: the
// receive status shape, amounts in major units.
func (s *Server) directDebitStatus(w http.ResponseWriter, r *http.Request) {
	reference := r.PathValue("clientReference")
	s.mu.Lock()
	c, ok := s.mandates.charges[reference]
	var answer any
	if ok {
		answer = s.shapes.chargeStatus(c)
	}
	s.mu.Unlock()
	if !ok {
		writeError(w, notFoundError("direct-debit charge", reference))
		return
	}
	writeJSON(w, http.StatusOK, answer)
}

// newUUID returns a random version 4 UUID: a servicePreApprovalId.
func newUUID() string {
	var b [16]byte
	random(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

func randomLetters(n int) string { return randomFrom("ABCDEFGHIJKLMNOPQRSTUVWXYZ", n) }
func randomDigits(n int) string  { return randomFrom("0123456789", n) }

func randomFrom(alphabet string, n int) string {
	out := make([]byte, n)
	for i := range out {
		out[i] = alphabet[randomBelow(int64(len(alphabet)))]
	}
	return string(out)
}
