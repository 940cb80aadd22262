// The webhook handler: the merchant's entry point for webhooks and callbacks. Parsing lives
// in events.go, confirmation against the status checks in confirm.go, the store-backed
// dedupe in webhooks_store.go.

package billing

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
)

// MaxEventBytes is the largest webhook or callback body the handler reads; a larger one
// is answered 413.
const MaxEventBytes = 1 << 20

// DefaultDedupeSize is how many handled events WithDedupe remembers when given n <= 0.
const DefaultDedupeSize = 10_000

// WebhookOption configures NewWebhookHandler.
type WebhookOption func(*webhookHandler)

// WithDedupe makes the handler answer 200 to a redelivery of an event it has already
// handled, without calling the function again. Events are the same when their kind,
// reference and state are (with WithStatusCheckConfirmation, as the status check tells
// them: a checkout by the payment's reference Payments.Get returns), never by what else
// the sender wrote, such as a response code; so a later different state of the same
// reference (a failure after a pending notice, say) still reaches the function. The
// handler remembers the last n events (DefaultDedupeSize when n <= 0), so memory stays
// bounded. An event is remembered only once the function returned nil for it: one whose
// handling failed or panicked is handled again when redelivered, and a redelivery that
// arrives while the first copy is still being handled is answered 503 with Retry-After.
func WithDedupe(n int) WebhookOption {
	if n <= 0 {
		n = DefaultDedupeSize
	}
	return func(h *webhookHandler) { h.seen = newSeenSet(n) }
}

// WithWebhookLogger sends the handler's logs to l: refused, unconfirmed and failed
// events at warning level, duplicates at debug level. Without it the handler is silent.
func WithWebhookLogger(l *slog.Logger) WebhookOption {
	return func(h *webhookHandler) {
		if l != nil {
			h.logger = scrubLogger(l, nil)
		}
	}
}

// WithStatusCheckConfirmation makes the handler confirm every event that claims a final
// state, success or failure, against the matching status check through c before the
// function sees it. The service signs no callback, so nothing else proves that a
// callback came from the service: a forged success could ship an unpaid order, and a
// forged failure could make a merchant pay a payout twice.
//
// A transaction callback is checked with Payments.ReceiveStatus and
// Mandates.ChargeStatus, a payout callback with Payouts.SendStatus and
// Payouts.BankTransferStatus (exactly one of the two must know the reference; under
// Tracker.Handler, only the status check of the kind the reference is tracked as), a
// mandate callback with Mandates.Status, and a checkout event with Payments.Get. The
// function then receives the status check's truth, built from it alone: a fresh
// *TransactionCallback, *PayoutCallback or *MandateCallback holding the state, code,
// amounts and ids the status check reported, every field only a callback carries
// (AmountCharged, OrderId, RecipientName, a MSISDN, metadata) left empty; for a checkout
// event, a *CheckoutEvent whose Data is the payment Payments.Get returned. The claim as
// the sender wrote it is kept apart: UnconfirmedClaimFrom.
//
// An event the status check contradicts is refused with 403: it says another final
// state, no status check (or more than one) knows the reference, or the event's amount,
// currency, metadata, session or transaction id differs from the service's. One it cannot confirm yet (the status
// check says pending, or could not be reached) is answered 503 with Retry-After, so a
// genuine sender delivers it again later. Both are logged. Pending notices and events
// without a status check (the subscription trial) pass unchecked: they settle nothing.
func WithStatusCheckConfirmation(c *Client) WebhookOption {
	return func(h *webhookHandler) { h.confirmer = c }
}

// NewWebhookHandler returns the http.Handler to mount at the webhook URL and the callback
// URLs. It accepts POST only (405 otherwise), reads at most MaxEventBytes (413 beyond),
// answers 400 to a body ParseEvent refuses, and calls fn with the typed event: 200 when fn
// returns nil, 500 when it returns an error, so the sender delivers the event again.
//
// With WithStatusCheckConfirmation, fn receives confirmed facts typed by their state: a
// checkout is a *CheckoutEvent (payment.succeeded) only when the service holds it
// SUCCEEDED, a *CheckoutFailedEvent (payment.failed) when FAILED or expired, a
// *CheckoutPendingEvent otherwise. An event nothing confirms (a kind the SDK does not
// know, a subscription trial notice under confirmation) reaches fn as an
// *UnconfirmedEvent, whose Kind is EventKindUnconfirmed: never act on it as a money
// fact. Dedupe keys come from the confirmed facts (kind, reference, confirmed state), so
// one fact delivered in several claim shapes reaches fn once; unconfirmed events reach
// it each time they are delivered.
//
// fn may be called concurrently. Redeliveries reach fn again unless WithDedupe is given.
//
// The handler keeps no clock of its own while it reads: serve it from an http.Server with
// a ReadTimeout (and ReadHeaderTimeout), which bounds a sender that trickles its body.
func NewWebhookHandler(fn func(context.Context, Event) error, opts ...WebhookOption) http.Handler {
	h := newWebhookHandler(fn, opts...)
	h.other = nil // fn receives every event
	return h
}

func newWebhookHandler(fn func(context.Context, Event) error, opts ...WebhookOption) *webhookHandler {
	h := &webhookHandler{fn: fn, logger: slog.New(slog.DiscardHandler)}
	for _, opt := range opts {
		opt(h)
	}
	return h
}

// WithEventHandler gives Tracker.Handler the merchant's function for the events that
// settle no tracked movement: the subscription trial webhook, a checkout webhook for a
// session no Tracker tracks (confirmed first: fn receives the payment Payments.Get
// returned), a money movement no Tracker tracks whose callback the status check
// confirmed (an *UntrackedMovementEvent: started by another system, by the billing
// command's trigger, or by hand), and any other event ParseEvent reads that is no money
// movement's. Without it such events are answered 200 and logged at warning level,
// never dropped in silence. An error from fn is answered 500, so the sender delivers the
// event again. The callbacks of tracked movements never reach fn: they settle their
// movement, reported by Await and OnOutcome. NewWebhookHandler ignores this option: its
// function receives every event. fn receives the types NewWebhookHandler describes: a
// checkout in the type of its confirmed state, an untracked movement as
// *UntrackedMovementEvent, and the trial notice and unknown kinds as *UnconfirmedEvent.
func WithEventHandler(fn func(context.Context, Event) error) WebhookOption {
	return func(h *webhookHandler) { h.other = fn }
}

type webhookHandler struct {
	fn        func(context.Context, Event) error
	seen      *seenSet      // nil without WithDedupe
	stored    *storeDedupe  // nil without WithDedupeStore
	confirmer *Client       // nil without WithStatusCheckConfirmation
	lookup    trackedLookup // the Tracker's store under Tracker.Handler, else nil
	other     func(context.Context, Event) error
	logger    *slog.Logger
}

func (h *webhookHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "webhooks are delivered with POST", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxEventBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			http.Error(w, "body larger than 1 MiB", http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "reading the body failed", http.StatusBadRequest)
		return
	}
	ev, err := readEvent(body)
	if err == nil && isMovementCallback(ev) {
		// No movement has such a reference: refuse it before anything is recorded of it.
		err = checkCallbackReference(ev)
	}
	if err != nil {
		h.logger.LogAttrs(r.Context(), slog.LevelWarn, "billing webhook refused", slog.String("error", err.Error()))
		status := http.StatusBadRequest
		if errors.Is(err, ErrContradiction) {
			// A body that says two things is refused as a claim the SDK cannot
			// believe, not as one it cannot read: nothing of it is recorded.
			status = http.StatusForbidden
		}
		refuse(w, status)
		return
	}
	ctx := withClaim(r.Context(), UnconfirmedClaim{Event: ev, Body: body})
	claimKey := dedupeKey(ev)
	if h.seen != nil && h.confirmer != nil && h.seen.handled(claimKey) {
		// The very claim was confirmed and handled already: answering it needs no
		// status check, and nothing of it reaches merchant code again.
		h.logger.LogAttrs(ctx, slog.LevelDebug, "billing webhook duplicate", eventAttrs(ev)...)
		writeReceived(w)
		return
	}
	var confirmed *Outcome
	if h.confirmer != nil {
		conf := confirmEvent(ctx, h.confirmer, h.lookup, ev)
		if conf.status != http.StatusOK {
			h.logger.LogAttrs(ctx, slog.LevelWarn, refusedClaimLog[ev.State()],
				append(eventAttrs(ev), slog.Int("status", conf.status), slog.String("reason", conf.reason))...)
			if conf.status == http.StatusForbidden && h.stored != nil {
				contradicted(ctx, h.stored.store, h.stored.clock.Now(), ev, body, h.logger)
			}
			refuse(w, conf.status)
			return
		}
		confirmed = conf.outcome
		ctx, ev = withConfirmation(ctx, conf), conf.truth
	}
	// Dedupe comes after confirmation, on the confirmed fact (kind, reference, state),
	// so that one fact delivered in several claim shapes reaches the function once. An
	// unconfirmed event holds no fact to key it by: it reaches the function each time.
	_, unconfirmedEvent := ev.(*UnconfirmedEvent)
	finish := func(bool) {}
	if h.stored != nil && !unconfirmedEvent {
		var proceed bool
		if finish, proceed = h.stored.begin(w, r, storedKey(ev, confirmed), factKey(ev, confirmed), ev, body, h.logger); !proceed {
			return
		}
	}
	var held []string
	if !unconfirmedEvent {
		var ok bool
		if held, ok = h.hold(ctx, w, factKey(ev, confirmed)); !ok {
			finish(false)
			return
		}
	}
	handled := false
	defer func() {
		h.release(held, handled)
		if handled && h.seen != nil && h.confirmer != nil && !unconfirmedEvent {
			h.seen.remember(claimKey)
		}
		finish(handled)
	}()
	if err := h.call(withRawBody(ctx, body), ev); err != nil {
		h.logger.LogAttrs(ctx, slog.LevelWarn, "billing webhook handler failed",
			append(eventAttrs(ev), slog.String("error", err.Error()))...)
		http.Error(w, "the event was not handled; deliver it again", http.StatusInternalServerError)
		return
	}
	handled = true
	writeReceived(w)
}

// hold marks key in flight and returns the keys held, or answers a duplicate (200 when
// handled already, 503 while a copy is in flight) and reports false. Without WithDedupe
// it holds nothing.
func (h *webhookHandler) hold(ctx context.Context, w http.ResponseWriter, key string) ([]string, bool) {
	if h.seen == nil {
		return nil, true
	}
	switch h.seen.begin(key) {
	case seenHandled:
		h.logger.LogAttrs(ctx, slog.LevelDebug, "billing webhook duplicate", slog.String("key", key))
		writeReceived(w)
		return nil, false
	case seenInFlight:
		// The first copy may still fail; answering "done" now would lose the event.
		h.logger.LogAttrs(ctx, slog.LevelDebug, "billing webhook duplicate of one in flight", slog.String("key", key))
		refuse(w, http.StatusServiceUnavailable)
		return nil, false
	}
	return []string{key}, true
}

// release ends the handling of the held keys, remembering them when handled.
func (h *webhookHandler) release(held []string, handled bool) {
	for _, key := range held {
		h.seen.end(key, handled)
	}
}

// call runs the merchant's function, turning a panic into an error so that the event is
// forgotten and delivered again rather than lost. http.ErrAbortHandler keeps its meaning.
func (h *webhookHandler) call(ctx context.Context, ev Event) (err error) {
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return h.fn(ctx, ev)
}

// refuse answers status with its fixed body; "retry later" says when.
func refuse(w http.ResponseWriter, status int) {
	if status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "60") // the status check, or the first copy, may be done by then
	}
	http.Error(w, refusalBodies[status], status)
}

// refusedClaimLog is the message logged when the status check does not confirm an event
// claiming a final state.
var refusedClaimLog = map[EventState]string{
	EventSucceeded: "billing webhook claiming success refused",
	EventFailed:    "billing webhook claiming failure refused",
}

// refusalBodies are the only words a refusal says to the sender, who is not
// authenticated: what to do next, never why in detail (the log has the detail, which may
// name internal addresses and errors).
var refusalBodies = map[int]string{
	http.StatusBadRequest:         "not a valid event",
	http.StatusForbidden:          "refused: the status check does not confirm this event",
	http.StatusServiceUnavailable: "not confirmed yet: deliver it again later",
}

func writeReceived(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"received":true}`)
}

// eventAttrs describe an event in a log line: kind, reference, state and code, never
// phone numbers.
func eventAttrs(ev Event) []slog.Attr {
	switch e := ev.(type) {
	case *UnconfirmedEvent:
		return []slog.Attr{
			slog.String("kind", string(e.ClaimedKind)),
			slog.String("reference", e.Reference()),
			slog.Bool("unconfirmed", true),
		}
	case *UntrackedMovementEvent:
		return []slog.Attr{
			slog.String("kind", string(e.Outcome.Kind)),
			slog.String("reference", e.Reference()),
			slog.String("state", string(e.State())),
			slog.String("code", string(e.Code())),
			slog.Int64("amount", e.Outcome.Amount),
			slog.Bool("untracked", true),
		}
	}
	return []slog.Attr{
		slog.String("kind", string(ev.Kind())),
		slog.String("reference", ev.Reference()),
		slog.String("state", string(ev.State())),
		slog.String("code", string(ev.Code())),
	}
}

// dedupeKey identifies an event for deduplication: the same operation in the same state.
// It holds kind, state and reference, never a field only the sender chooses (a response
// code: a forged failure code per delivery would otherwise reach merchant code each
// time).
func dedupeKey(ev Event) string {
	// Kind and state come from fixed vocabularies without a slash, and the reference
	// comes last, so no two events share a key; every database keeps it (no NUL bytes),
	// so the handler's own memory and a shared Store use the same key.
	return string(ev.Kind()) + "/" + string(ev.State()) + "/" + ev.Reference()
}

// factKey is the dedupe key of an event the handler passes on: for a confirmed
// movement or checkout, the confirmed fact alone (the tracked kind, the confirmed
// state, and the movement's reference: the session's for a checkout, which every
// claim shape of it shares); otherwise the event's own key (a handler that confirms
// nothing dedupes on what it was told).
func factKey(ev Event, o *Outcome) string {
	if o == nil {
		return dedupeKey(ev)
	}
	reference := o.ClientReference
	if o.Kind == KindCheckout {
		reference = cmp.Or(o.ServiceReference, o.ClientReference)
	}
	return "confirmed/" + string(o.Kind) + "/" + string(o.State) + "/" + reference
}

// storedKey is the movement key a store records a delivery under: the confirmed
// movement's, or the event's own when nothing was confirmed.
func storedKey(ev Event, o *Outcome) movementKey {
	if o != nil {
		if key, err := keyOf(o.Kind, o.ClientReference); err == nil {
			return key
		}
		if callback, ok := o.Kind.callbackKind(); ok {
			return movementKey{Callback: callback, ClientReference: cmp.Or(o.ServiceReference, o.ClientReference)}
		}
	}
	return eventKey(ev)
}

// seenSet remembers the last n events handled, forgetting the oldest first, and the
// events being handled right now.
type seenSet struct {
	mu       sync.Mutex
	keys     map[string]uint64 // key -> the generation that recorded it
	inFlight map[string]struct{}
	ring     []seenEntry
	next     int
	gen      uint64
}

type seenEntry struct {
	key string
	gen uint64
}

// seenState is what a seenSet knows of a key.
type seenState uint8

const (
	seenNew      seenState = iota // never handled: begin marked it in flight
	seenInFlight                  // being handled by another delivery
	seenHandled                   // handled already
)

func newSeenSet(n int) *seenSet {
	return &seenSet{keys: make(map[string]uint64, n), inFlight: make(map[string]struct{}), ring: make([]seenEntry, n)}
}

// begin says what is known of key and, when it is new, marks it in flight: the caller
// must call end.
func (s *seenSet) begin(key string) seenState {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.keys[key]; ok {
		return seenHandled
	}
	if _, ok := s.inFlight[key]; ok {
		return seenInFlight
	}
	s.inFlight[key] = struct{}{}
	return seenNew
}

// handled reports whether key was handled already.
func (s *seenSet) handled(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.keys[key]
	return ok
}

// remember records key as handled.
func (s *seenSet) remember(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recordLocked(key)
}

// end ends the handling begun for key, recording it when it was handled.
func (s *seenSet) end(key string, handled bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.inFlight, key)
	if handled {
		s.recordLocked(key)
	}
}

// recordLocked remembers key in the ring, pushing out the oldest.
func (s *seenSet) recordLocked(key string) {
	if _, ok := s.keys[key]; ok {
		return
	}
	old := s.ring[s.next]
	if g, ok := s.keys[old.key]; ok && g == old.gen {
		delete(s.keys, old.key)
	}
	s.gen++
	s.keys[key] = s.gen
	s.ring[s.next] = seenEntry{key: key, gen: s.gen}
	s.next = (s.next + 1) % len(s.ring)
}
