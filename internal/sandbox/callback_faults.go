package sandbox

import (
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"strings"
	"time"
)

// CallbackFaultKind is what an injected callback fault does to the callback or
// webhook it hits. The names are also the values of the HTTP control.
type CallbackFaultKind string

const (
	// CallbackDropped never delivers the callback: the receiver must fall back
	// to the status check.
	CallbackDropped CallbackFaultKind = "drop"
	// CallbackDuplicated delivers the callback twice.
	CallbackDuplicated CallbackFaultKind = "duplicate"
	// CallbackStale delivers the callback, then a stale copy of it: the same
	// body in the state before the final one (ResponseCode 0001 and Message
	// "pending", PreapprovalStatus PENDING, a checkout's data.status PENDING,
	// or the provider's checkout Status Pending).
	CallbackStale CallbackFaultKind = "stale"
	// CallbackDelayed holds the callback back for the fault's Delay of sandbox
	// time (DefaultCallbackDelay when zero) before its first attempt.
	CallbackDelayed CallbackFaultKind = "delay"
	// CallbackContradicted delivers the callback, then a copy claiming the
	// opposite final state: a success (ResponseCode 0000, PreapprovalStatus
	// APPROVED, a checkout's SUCCEEDED or the provider's Success) followed by a
	// failure (2001 and Message "failed", FAILED, Failed), a failure by a
	// success. Only a receiver that
	// checks success against the status check keeps the truth.
	CallbackContradicted CallbackFaultKind = "contradict"
	// CallbackForgedFailure posts a forged failure callback for a receive, send,
	// send-to-bank, direct-debit charge or mandate while it is still pending:
	// when the sandbox accepts it, before its genuine resolution, the callback
	// URL receives the failure callback the movement would send if it failed
	// (ResponseCode 2001 and Message "failed", or PreapprovalStatus FAILED), on
	// the server's wire. The genuine callback follows as usual. Nth counts the
	// matching movements accepted, not callbacks; checkouts and subscriptions
	// never meet it. Only a receiver that confirms failures against the status
	// check keeps from settling it.
	CallbackForgedFailure CallbackFaultKind = "forge-failure"
	// CallbackForgedAmount delivers, before the genuine callback, a copy
	// claiming success for a hundred times its amounts (every Amount,
	// AmountCharged, AmountAfterCharges and AmountDebited, a checkout's
	// data.amount, with the same decimals); a mandate callback, which has no
	// amount, gets only the success claim. Only a receiver that hands its code
	// the status check's amount, not the callback's, keeps the truth.
	CallbackForgedAmount CallbackFaultKind = "forge-amount"
)

// DefaultCallbackDelay is the hold of CallbackDelayed without a Delay: past the
// five minutes after which the spec tells merchants to ask the status check.
const DefaultCallbackDelay = 6 * time.Minute

// CallbackFault makes one callback or webhook go wrong in a chosen way.
type CallbackFault struct {
	// Kind is what happens to the callback.
	Kind CallbackFaultKind
	// Reference picks the callbacks of one operation by the merchant's client
	// reference, alike on both wires: the client reference of a transaction or
	// payout callback, the clientReferenceId of a mandate callback, a checkout
	// webhook's metadata.clientReference (the ClientReference of the
	// provider's; the session's reference when it was created without one),
	// the subscription id of a trial webhook. Empty matches every callback.
	Reference string
	// ServiceReference picks the callbacks of one operation by the service's
	// reference instead: a checkout session's reference (the provider's
	// CheckoutId), the TransactionId of a transaction or payout callback, the
	// servicePreApprovalId of a mandate. At most one of Reference and
	// ServiceReference is set.
	ServiceReference string
	// Nth counts the matching callbacks from the injection on: 1 (or 0) is the
	// next one.
	Nth int
	// Delay is the hold of CallbackDelayed.
	Delay time.Duration
}

// callbackEffect is what an armed callback fault does when it hits.
type callbackEffect struct {
	// whilePending says the fault hits a movement when the sandbox accepts it
	// (forgeWhilePending) rather than a callback (dispatch).
	whilePending bool
	// send schedules (or not) the first attempts: of the faulted callback, or of
	// the forged failure of a movement still pending.
	send func(s *Server, url string, payload []byte)
}

// onCallback is the effect of a fault that acts on the genuine callback.
func onCallback(send func(s *Server, url string, payload []byte)) callbackEffect {
	return callbackEffect{send: send}
}

// callbackFaultKinds is the table of callback fault kinds: each builds the effect
// of a fault from its parameters. Adding a kind adds a row.
var callbackFaultKinds = map[CallbackFaultKind]func(CallbackFault) callbackEffect{
	CallbackDropped: func(CallbackFault) callbackEffect {
		return onCallback(func(s *Server, _ string, _ []byte) {
			s.cfg.Logger.Debug("sandbox dropped a callback, as a fault asked")
		})
	},
	CallbackDuplicated: func(CallbackFault) callbackEffect {
		return onCallback(func(s *Server, url string, payload []byte) {
			s.firstAttemptAt(s.Now(), url, payload)
			s.firstAttemptAt(s.Now(), url, payload)
		})
	},
	CallbackStale: func(CallbackFault) callbackEffect {
		return onCallback(func(s *Server, url string, payload []byte) {
			s.firstAttemptAt(s.Now(), url, payload)
			s.firstAttemptAt(s.Now(), url, staleCopy(payload)) // tasks due together run in order
		})
	},
	CallbackContradicted: func(CallbackFault) callbackEffect {
		return onCallback(func(s *Server, url string, payload []byte) {
			s.firstAttemptAt(s.Now(), url, payload)
			s.firstAttemptAt(s.Now(), url, contradictingCopy(payload))
		})
	},
	CallbackDelayed: func(f CallbackFault) callbackEffect {
		delay := f.Delay
		if delay <= 0 {
			delay = DefaultCallbackDelay
		}
		return onCallback(func(s *Server, url string, payload []byte) {
			s.firstAttemptAt(s.Now().Add(delay), url, payload)
		})
	},
	CallbackForgedFailure: func(CallbackFault) callbackEffect {
		return callbackEffect{whilePending: true, send: func(s *Server, url string, forged []byte) {
			s.firstAttemptAt(s.Now(), url, forged) // before the resolution, scheduled after it
		}}
	},
	CallbackForgedAmount: func(CallbackFault) callbackEffect {
		return onCallback(func(s *Server, url string, payload []byte) {
			s.firstAttemptAt(s.Now(), url, forgedAmountCopy(payload))
			s.firstAttemptAt(s.Now(), url, payload)
		})
	},
}

// CallbackFaultKindNames returns the names of the callback fault kinds, sorted.
func CallbackFaultKindNames() []string {
	return []string{string(CallbackContradicted), string(CallbackDelayed), string(CallbackDropped), string(CallbackDuplicated),
		string(CallbackForgedAmount), string(CallbackForgedFailure), string(CallbackStale)}
}

// InjectCallbackFault arms f. Each callback counts down every fault armed for
// its reference; a callback takes at most one fault, the earliest injected of
// those due, and a fault due at the same time as another waits for the next
// matching callback.
func (s *Server) InjectCallbackFault(f CallbackFault) error {
	build, ok := callbackFaultKinds[f.Kind]
	if !ok {
		return fmt.Errorf("sandbox: unknown callback fault kind %q: use %s", f.Kind, strings.Join(CallbackFaultKindNames(), ", "))
	}
	if err := checkNth(f.Nth); err != nil {
		return err
	}
	if f.Delay < 0 {
		return fmt.Errorf("sandbox: callback fault Delay must not be negative, not %s", f.Delay)
	}
	if f.Reference != "" && f.ServiceReference != "" {
		return fmt.Errorf("sandbox: a callback fault picks its callbacks by Reference or by ServiceReference, not both")
	}
	key := f.Reference
	if f.ServiceReference != "" {
		key = serviceKey(f.ServiceReference)
	}
	s.callbackFaults.arm(key, f.Nth, build(f))
	return nil
}

// CallbackFaultCounts returns how many callback faults wait for their callback
// and how many have hit one.
func (s *Server) CallbackFaultCounts() (armed, fired int) { return s.callbackFaults.counts() }

// dispatch schedules the first attempt of a callback, through the callback
// fault it meets, if any.
func (s *Server) dispatch(url string, payload []byte) {
	if effect, ok := s.callbackFaults.takeAny(callbackReferences(payload).keys(), actsOnCallbacks); ok {
		effect.send(s, url, payload)
		return
	}
	s.firstAttemptAt(s.Now(), url, payload)
}

func actsOnCallbacks(e callbackEffect) bool  { return !e.whilePending }
func actsWhilePending(e callbackEffect) bool { return e.whilePending }

// forgeWhilePending counts a movement just accepted, under its references,
// against the faults that act while it is pending, and sends the one it meets the
// failure callback that failure builds. Call it before scheduling the movement's
// resolution, so that the forgery, due as soon, comes first. An empty url sends
// nothing and counts nothing.
func (s *Server) forgeWhilePending(refs callbackRefs, url string, failure func() any) {
	if url == "" {
		return
	}
	effect, ok := s.callbackFaults.takeAny(refs.keys(), actsWhilePending)
	if !ok {
		return
	}
	payload, err := json.Marshal(failure())
	if err != nil {
		panic("sandbox: callback body does not encode: " + err.Error()) // our own types: a bug
	}
	effect.send(s, url, payload)
}

// failureCallbackOf returns the callback m would send if it failed now, m left as
// it is. s.mu must be held.
func (s *Server) failureCallbackOf(m *movement) any {
	saved := *m
	defer func() { *m = saved }()
	m.finish(CodeFailed, s.Now())
	return m.callback()
}

func (s *Server) firstAttemptAt(at time.Time, url string, payload []byte) {
	s.scheduleJob(at, deliveryAttemptJob{URL: url, Body: payload, Attempt: 1})
}

// callbackRefs are the references a callback or webhook is about: the
// merchant's (CallbackFault.Reference) and the service's
// (CallbackFault.ServiceReference).
type callbackRefs struct {
	client, service string
}

// keys are the keys of the armed faults refs match: the client reference as
// it is, the service's under serviceKey.
func (r callbackRefs) keys() []string {
	var keys []string
	if r.client != "" {
		keys = append(keys, r.client)
	}
	if r.service != "" {
		keys = append(keys, serviceKey(r.service))
	}
	return keys
}

// serviceKey is the key a fault armed by ServiceReference counts under; no
// client reference holds a colon, so the two never meet.
func serviceKey(reference string) string { return "service:" + reference }

// callbackReferences finds the references a callback or webhook is about (see
// CallbackFault). JSON keys match case-insensitively.
func callbackReferences(payload []byte) callbackRefs {
	var probe struct {
		ClientReferenceID    string `json:"ClientReferenceId"`
		ServicePreapprovalID string `json:"ServicePreapprovalId"`
		HubtelPreapprovalID  string `json:"HubtelPreapprovalId"` // the provider's wire
		Data                 struct {
			ClientReference string         `json:"ClientReference"`
			TransactionID   string         `json:"TransactionId"`
			CheckoutID      string         `json:"CheckoutId"`
			Reference       string         `json:"reference"`
			ID              string         `json:"id"`
			Metadata        map[string]any `json:"metadata"`
		} `json:"Data"`
	}
	_ = json.Unmarshal(payload, &probe) // our own bodies; a miss matches only faults for any reference
	d := probe.Data
	metadataReference, _ := d.Metadata["clientReference"].(string)
	return callbackRefs{
		client:  firstNonEmpty(d.ClientReference, probe.ClientReferenceID, metadataReference, d.Reference, d.ID),
		service: firstNonEmpty(d.CheckoutID, d.Reference, d.TransactionID, probe.ServicePreapprovalID, probe.HubtelPreapprovalID, d.ID),
	}
}

// callbackReference is the merchant's reference of a callback or webhook.
func callbackReference(payload []byte) string { return callbackReferences(payload).client }

// staleCopy returns payload as it read before its final state: ResponseCode 0001
// and Message "pending", PreapprovalStatus PENDING, a checkout's data.status
// PENDING, the provider's checkout Status Pending.
func staleCopy(payload []byte) []byte {
	return restated(payload, stateWords{code: CodeAccepted, message: "pending", preapproval: "PENDING", checkout: "PENDING", status: "Pending"})
}

// contradictingCopy returns payload claiming the opposite final state: a failure
// for a success, a success for anything else.
func contradictingCopy(payload []byte) []byte {
	if reportsSuccess(payload) {
		return restated(payload, stateWords{code: CodeFailed, message: "failed", preapproval: "FAILED", checkout: checkoutFailed, status: "Failed"})
	}
	return restated(payload, stateWords{code: CodeSuccess, message: "success", preapproval: "APPROVED", checkout: checkoutSucceeded, status: "Success"})
}

// forgedAmountCopy returns payload claiming success for a hundred times each of
// its amounts (forgedAmountKeys in Data or data), with the same decimals.
func forgedAmountCopy(payload []byte) []byte {
	claimed := restated(payload, stateWords{code: CodeSuccess, message: "success", preapproval: "APPROVED", checkout: checkoutSucceeded, status: "Success"})
	var body map[string]json.RawMessage
	if err := json.Unmarshal(claimed, &body); err != nil {
		return claimed
	}
	for _, key := range []string{"Data", "data"} {
		var data map[string]json.RawMessage
		if json.Unmarshal(body[key], &data) != nil || data == nil {
			continue
		}
		for _, amount := range forgedAmountKeys {
			if v, ok := data[amount]; ok {
				data[amount] = hundredfold(v)
			}
		}
		body[key], _ = json.Marshal(data)
	}
	out, err := json.Marshal(body)
	if err != nil {
		return claimed
	}
	return out
}

// forgedAmountKeys are the keys of a callback's amounts; json.Unmarshal into a map
// keeps keys as written, so both cases are listed.
var forgedAmountKeys = []string{"Amount", "AmountCharged", "AmountAfterCharges", "AmountDebited", "amount"}

// hundredfold returns a JSON number a hundred times v, with v's decimals; anything
// else is returned as it is.
func hundredfold(v json.RawMessage) json.RawMessage {
	text := string(v)
	r, ok := new(big.Rat).SetString(text)
	if !ok || !isJSONNumber(text) {
		return v
	}
	decimals := 0
	if dot := strings.IndexByte(text, '.'); dot >= 0 {
		decimals = len(text) - dot - 1
	}
	return json.RawMessage(r.Mul(r, big.NewRat(100, 1)).FloatString(decimals))
}

// isJSONNumber tells a plain decimal number from the other texts big.Rat reads
// (fractions, exponents).
func isJSONNumber(text string) bool {
	return strings.Trim(text, "-0123456789.") == "" && text != ""
}

// stateWords are the values of the keys that carry a callback's state; status
// is the word of the Status and Data.Status of the provider's checkout webhook.
type stateWords struct {
	code, message, preapproval, checkout, status string
}

// reportsSuccess tells whether a callback or webhook reports a success.
func reportsSuccess(payload []byte) bool {
	var probe struct {
		ResponseCode      string `json:"ResponseCode"`
		PreapprovalStatus string `json:"PreapprovalStatus"`
		Data              struct {
			Status string `json:"status"`
		} `json:"data"`
	}
	_ = json.Unmarshal(payload, &probe)
	return probe.ResponseCode == CodeSuccess || probe.PreapprovalStatus == "APPROVED" || probe.Data.Status == checkoutSucceeded
}

// restated returns payload with the keys that carry its state set to words:
// ResponseCode, Message, PreapprovalStatus, a checkout's data.status, and
// Status and Data.Status (the provider's checkout webhook); only keys already
// there are set. Values other than the state keep their exact text.
func restated(payload []byte, words stateWords) []byte {
	var body map[string]json.RawMessage
	if err := json.Unmarshal(payload, &body); err != nil {
		return payload
	}
	set := func(m map[string]json.RawMessage, key, value string) {
		if _, ok := m[key]; ok {
			m[key], _ = json.Marshal(value)
		}
	}
	set(body, "ResponseCode", words.code)
	set(body, "Message", words.message)
	set(body, "PreapprovalStatus", words.preapproval)
	if _, ok := body["Status"]; ok {
		set(body, "Status", words.status)
		var data map[string]json.RawMessage
		if json.Unmarshal(body["Data"], &data) == nil {
			set(data, "Status", words.status)
			body["Data"], _ = json.Marshal(data)
		}
	}
	var event string
	if json.Unmarshal(body["event"], &event) == nil && event == "payment.succeeded" {
		var data map[string]json.RawMessage
		if json.Unmarshal(body["data"], &data) == nil {
			set(data, "status", words.checkout)
			body["data"], _ = json.Marshal(data)
		}
	}
	out, err := json.Marshal(body)
	if err != nil {
		return payload
	}
	return out
}

// callbackFaultRoutes serve the callback fault control, mirrored by
// billingtest.Server.InjectCallbackFault.
func callbackFaultRoutes(s *Server) []route {
	return []route{
		{pattern: "POST /sandbox/callbacks/faults", auth: authBilling, handler: s.injectCallbackFault},
	}
}

// injectCallbackFault arms a callback fault: {"kind": "drop"|"duplicate"|
// "stale"|"contradict"|"delay"|"forge-failure"|"forge-amount", "reference": "...",
// "serviceReference": "...", "nth": 1, "delaySeconds": 360}; only kind is
// required. It answers the fault as armed.
func (s *Server) injectCallbackFault(w http.ResponseWriter, r *http.Request) {
	f, err := decodeFields(r)
	if err != nil {
		writeError(w, err)
		return
	}
	f.require("kind")
	kind, _ := f.enum("kind", CallbackFaultKindNames()...)
	reference, _ := f.optionalString("reference")
	serviceReference, _ := f.optionalString("serviceReference")
	if reference != "" && serviceReference != "" {
		f.fail("serviceReference", "give reference or serviceReference, not both")
	}
	var nth, delaySeconds int64
	if f.has("nth") {
		nth, _ = f.integerRange("nth", 1, 1_000_000)
	}
	if f.has("delaySeconds") {
		delaySeconds, _ = f.integerRange("delaySeconds", 1, maxAdvanceSeconds)
	}
	if err := f.err(); err != nil {
		writeError(w, err)
		return
	}
	fault := CallbackFault{Kind: CallbackFaultKind(kind), Reference: reference, ServiceReference: serviceReference, Nth: int(nth),
		Delay: time.Duration(delaySeconds) * time.Second}
	if err := s.InjectCallbackFault(fault); err != nil {
		writeError(w, validationError("kind", "%s", err.Error()))
		return
	}
	writeData(w, http.StatusCreated, callbackFaultView{Kind: kind, Reference: reference, ServiceReference: serviceReference,
		Nth: max(int(nth), 1), DelaySeconds: delaySeconds})
}

type callbackFaultView struct {
	Kind             string `json:"kind"`
	Reference        string `json:"reference,omitempty"`
	ServiceReference string `json:"serviceReference,omitempty"`
	Nth              int    `json:"nth"`
	DelaySeconds     int64  `json:"delaySeconds,omitempty"`
}

// ParseCallbackFaults reads the compact syntax of examples/sandbox
// -callback-faults: items separated by ";", each REFERENCE[#N]=KIND[:DURATION],
// where REFERENCE is the merchant's client reference (CallbackFault.Reference),
// service:REF a service reference (CallbackFault.ServiceReference) or * for
// any, N the matching callback's number (default 1) and DURATION (Go syntax,
// "10m") the Delay of delay:
//
//	order7=drop; *#3=delay:10m; payout9=contradict; service:9f1c2e=drop
//
// It checks the syntax only; InjectCallbackFault checks the values.
func ParseCallbackFaults(spec string) ([]CallbackFault, error) {
	var out []CallbackFault
	err := parseFaultItems(spec, func(target string, nth int, kind string, d time.Duration, hasDuration bool) error {
		f := CallbackFault{Reference: target, Nth: nth, Kind: CallbackFaultKind(kind)}
		if service, ok := strings.CutPrefix(target, "service:"); ok {
			f.Reference, f.ServiceReference = "", service
		}
		if f.Reference == "*" {
			f.Reference = ""
		}
		if hasDuration {
			if f.Kind != CallbackDelayed {
				return fmt.Errorf("%s takes no duration", kind)
			}
			f.Delay = d
		}
		out = append(out, f)
		return nil
	})
	return out, err
}
