package billing

// The dedupe step of the inbound pipeline: a redelivery of an event handled already is
// answered without reaching merchant code again, and one whose first copy is being
// handled is answered "retry later". Keys come from confirmed facts (factKey), in this
// process (seenSet, WithDedupe) and in a shared Store (storeDedupe, WithDedupeStore).

import (
	"cmp"
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"
)

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

// storeDedupe is the handler's dedupe on a Store.
type storeDedupe struct {
	store *storeGate
	owner string
	clock Clock
	lease time.Duration
}

// begin records the delivery of ev, under the movement key and the dedupe key of the
// confirmed fact, and claims its handling. When the handler must go on it returns
// proceed true and finish, to call with whether the function handled it (only the
// first call counts; call it deferred with false so that a panic forgets the claim).
// Otherwise it has answered the sender itself.
func (d *storeDedupe) begin(w http.ResponseWriter, r *http.Request, key movementKey, dedupe string, ev Event, body []byte, logger *slog.Logger) (finish func(handled bool), proceed bool) {
	now := d.clock.Now()
	c := callbackRecord{Key: key, DedupeKey: dedupe, Body: body, At: now}
	var claim callbackClaim
	var err error
	if begin := d.store.beginCallbackEntry(); begin != nil {
		// The entry it reads beside comes too late to serve the confirmation, which
		// precedes the record; the claim is the same.
		claim, _, err = begin(r.Context(), c, d.owner, now.Add(d.lease))
	} else {
		claim, err = d.store.BeginCallback(r.Context(), c, d.owner, now.Add(d.lease))
	}
	switch {
	case err != nil:
		logger.LogAttrs(r.Context(), slog.LevelWarn, "billing webhook not recorded", append(eventAttrs(ev), slog.String("error", err.Error()))...)
		http.Error(w, "the event could not be recorded; deliver it again", http.StatusInternalServerError)
		return nil, false
	case claim == callbackHandled:
		logger.LogAttrs(r.Context(), slog.LevelDebug, "billing webhook duplicate", eventAttrs(ev)...)
		writeReceived(w)
		return nil, false
	case claim == callbackInFlight:
		logger.LogAttrs(r.Context(), slog.LevelDebug, "billing webhook in flight elsewhere", eventAttrs(ev)...)
		w.Header().Set("Retry-After", "10")
		http.Error(w, "this event is being handled; deliver it again later", http.StatusServiceUnavailable)
		return nil, false
	}
	done := false
	return func(handled bool) {
		if done {
			return
		}
		done = true
		// The sender may have gone; the record must still be finished.
		ctx := context.WithoutCancel(r.Context())
		if err := d.store.FinishCallback(ctx, c.DedupeKey, d.owner, handled, d.clock.Now()); err != nil {
			logger.LogAttrs(ctx, slog.LevelWarn, "billing webhook dedupe not finished", append(eventAttrs(ev), slog.String("error", err.Error()))...)
		}
	}, true
}

// seenClaim answers, when the handler confirms and remembers (WithDedupe), a claim it
// confirmed and handled already: answering it needs no status check, and nothing of it
// reaches merchant code again. It reports whether it answered.
func (h *webhookHandler) seenClaim(ctx context.Context, w http.ResponseWriter, claim Event) bool {
	if h.seen == nil || h.confirmer == nil || !h.seen.handled(dedupeKey(claim)) {
		return false
	}
	h.logger.LogAttrs(ctx, slog.LevelDebug, "billing webhook duplicate", eventAttrs(claim)...)
	writeReceived(w)
	return true
}

// dedupe claims the handling of ev, the event confirmed (confirmed its outcome, nil when
// nothing was) from claim as delivered: in the shared store and in this process. It
// comes after confirmation, on the confirmed fact (kind, reference, state), so that one
// fact delivered in several claim shapes reaches the function once; an unconfirmed event
// holds no fact to key it by, and reaches the function each time. When the handler must
// go on it returns done, to call with whether the event was handled; otherwise it has
// answered the sender (200 handled already, 503 in flight) and reports false.
func (h *webhookHandler) dedupe(ctx context.Context, w http.ResponseWriter, r *http.Request, claim, ev Event, confirmed *Outcome, body []byte) (done func(handled bool), ok bool) {
	_, unconfirmedEvent := ev.(*UnconfirmedEvent)
	finish := func(bool) {}
	if h.stored != nil && !unconfirmedEvent {
		var proceed bool
		if finish, proceed = h.stored.begin(w, r, storedKey(ev, confirmed), factKey(ev, confirmed), ev, body, h.logger); !proceed {
			return nil, false
		}
	}
	var held []string
	if !unconfirmedEvent {
		if held, ok = h.hold(ctx, w, factKey(ev, confirmed)); !ok {
			finish(false)
			return nil, false
		}
	}
	claimKey := dedupeKey(claim)
	return func(handled bool) {
		h.release(held, handled)
		if handled && h.seen != nil && h.confirmer != nil && !unconfirmedEvent {
			h.seen.remember(claimKey)
		}
		finish(handled)
	}, true
}
