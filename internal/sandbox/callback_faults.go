package sandbox

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
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
	// "pending", PreapprovalStatus PENDING, or a checkout's data.status
	// PENDING).
	CallbackStale CallbackFaultKind = "stale"
	// CallbackDelayed holds the callback back for the fault's Delay of sandbox
	// time (DefaultCallbackDelay when zero) before its first attempt.
	CallbackDelayed CallbackFaultKind = "delay"
)

// DefaultCallbackDelay is the hold of CallbackDelayed without a Delay: past the
// five minutes after which the spec tells merchants to ask the status check.
const DefaultCallbackDelay = 6 * time.Minute

// CallbackFault makes one callback or webhook go wrong in a chosen way.
type CallbackFault struct {
	// Kind is what happens to the callback.
	Kind CallbackFaultKind
	// Reference picks the callbacks of one operation: the client reference of a
	// transaction or payout callback, the clientReferenceId of a mandate
	// callback, the payment reference of a checkout webhook, the subscription
	// id of a trial webhook. Empty matches every callback.
	Reference string
	// Nth counts the matching callbacks from the injection on: 1 (or 0) is the
	// next one.
	Nth int
	// Delay is the hold of CallbackDelayed.
	Delay time.Duration
}

// callbackEffect sends (or not) the first attempt of a faulted callback.
type callbackEffect func(s *Server, url string, payload []byte, f CallbackFault)

// callbackEffects is the table of callback fault kinds: adding a kind adds a row.
var callbackEffects = map[CallbackFaultKind]callbackEffect{
	CallbackDropped: func(s *Server, _ string, _ []byte, _ CallbackFault) {
		s.cfg.Logger.Debug("sandbox dropped a callback, as a fault asked")
	},
	CallbackDuplicated: func(s *Server, url string, payload []byte, _ CallbackFault) {
		s.firstAttemptAt(s.Now(), url, payload)
		s.firstAttemptAt(s.Now(), url, payload)
	},
	CallbackStale: func(s *Server, url string, payload []byte, _ CallbackFault) {
		s.firstAttemptAt(s.Now(), url, payload)
		s.firstAttemptAt(s.Now(), url, staleCopy(payload)) // tasks due together run in order
	},
	CallbackDelayed: func(s *Server, url string, payload []byte, f CallbackFault) {
		delay := f.Delay
		if delay <= 0 {
			delay = DefaultCallbackDelay
		}
		s.firstAttemptAt(s.Now().Add(delay), url, payload)
	},
}

// armedCallbackFault is an injected callback fault counting down the
// callbacks that match it.
type armedCallbackFault struct {
	fault     CallbackFault
	remaining int
	effect    callbackEffect
}

// callbackFaultTable holds the armed callback faults, in injection order.
type callbackFaultTable struct {
	mu    sync.Mutex
	armed []*armedCallbackFault
}

// InjectCallbackFault arms f. Each callback counts down every fault armed for
// its reference; a callback takes at most one fault, the earliest injected of
// those due, and a fault due at the same time as another waits for the next
// matching callback.
func (s *Server) InjectCallbackFault(f CallbackFault) error {
	effect, ok := callbackEffects[f.Kind]
	if !ok {
		return fmt.Errorf("sandbox: unknown callback fault kind %q: use drop, duplicate, stale or delay", f.Kind)
	}
	if f.Nth < 0 {
		return fmt.Errorf("sandbox: callback fault Nth must be 1 or more, not %d", f.Nth)
	}
	if f.Delay < 0 {
		return fmt.Errorf("sandbox: callback fault Delay must not be negative, not %s", f.Delay)
	}
	s.callbackFaults.mu.Lock()
	defer s.callbackFaults.mu.Unlock()
	s.callbackFaults.armed = append(s.callbackFaults.armed, &armedCallbackFault{fault: f, remaining: max(f.Nth, 1), effect: effect})
	return nil
}

// take counts a callback about reference and returns the fault it meets, if any.
func (t *callbackFaultTable) take(reference string) (*armedCallbackFault, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var hit *armedCallbackFault
	for i := 0; i < len(t.armed); i++ {
		f := t.armed[i]
		if f.fault.Reference != "" && f.fault.Reference != reference {
			continue
		}
		f.remaining--
		if f.remaining <= 0 && hit == nil {
			hit = f
			t.armed = append(t.armed[:i], t.armed[i+1:]...)
			i--
		}
	}
	return hit, hit != nil
}

// dispatch schedules the first attempt of a callback, through the callback
// fault it meets, if any.
func (s *Server) dispatch(url string, payload []byte) {
	if f, ok := s.callbackFaults.take(callbackReference(payload)); ok {
		f.effect(s, url, payload, f.fault)
		return
	}
	s.firstAttemptAt(s.Now(), url, payload)
}

func (s *Server) firstAttemptAt(at time.Time, url string, payload []byte) {
	s.schedule(at, func() { s.attemptDelivery(url, payload, 1) })
}

// callbackReference finds the reference a callback or webhook is about (see
// CallbackFault.Reference). JSON keys match case-insensitively.
func callbackReference(payload []byte) string {
	var probe struct {
		ClientReferenceID string `json:"ClientReferenceId"`
		Data              struct {
			ClientReference string `json:"ClientReference"`
			Reference       string `json:"reference"`
			ID              string `json:"id"`
		} `json:"Data"`
	}
	_ = json.Unmarshal(payload, &probe) // our own bodies; a miss matches only faults for any reference
	for _, ref := range []string{probe.Data.ClientReference, probe.ClientReferenceID, probe.Data.Reference, probe.Data.ID} {
		if ref != "" {
			return ref
		}
	}
	return ""
}

// staleCopy returns payload as it read before its final state. Values other than
// the state keep their exact text.
func staleCopy(payload []byte) []byte {
	var body map[string]json.RawMessage
	if err := json.Unmarshal(payload, &body); err != nil {
		return payload
	}
	set := func(m map[string]json.RawMessage, key, value string) {
		if _, ok := m[key]; ok {
			m[key], _ = json.Marshal(value)
		}
	}
	set(body, "ResponseCode", CodeAccepted)
	set(body, "Message", "pending")
	set(body, "PreapprovalStatus", "PENDING")
	var event string
	if json.Unmarshal(body["event"], &event) == nil && event == "payment.succeeded" {
		var data map[string]json.RawMessage
		if json.Unmarshal(body["data"], &data) == nil {
			set(data, "status", "PENDING")
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
// "stale"|"delay", "reference": "...", "nth": 1, "delaySeconds": 360}; only
// kind is required. It answers the fault as armed.
func (s *Server) injectCallbackFault(w http.ResponseWriter, r *http.Request) {
	f, err := decodeFields(r)
	if err != nil {
		writeError(w, err)
		return
	}
	f.require("kind")
	kind, _ := f.enum("kind", string(CallbackDropped), string(CallbackDuplicated), string(CallbackStale), string(CallbackDelayed))
	reference, _ := f.optionalString("reference")
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
	fault := CallbackFault{Kind: CallbackFaultKind(kind), Reference: reference, Nth: int(nth), Delay: time.Duration(delaySeconds) * time.Second}
	if err := s.InjectCallbackFault(fault); err != nil {
		writeError(w, validationError("kind", "%s", err.Error()))
		return
	}
	writeData(w, http.StatusCreated, callbackFaultView{Kind: kind, Reference: reference, Nth: max(int(nth), 1), DelaySeconds: delaySeconds})
}

type callbackFaultView struct {
	Kind         string `json:"kind"`
	Reference    string `json:"reference,omitempty"`
	Nth          int    `json:"nth"`
	DelaySeconds int64  `json:"delaySeconds,omitempty"`
}
