package storekit

import (
	"bytes"
	"cmp"
	"container/heap"
	"container/list"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
)

// memoryStore is the Store of one process: what TrackerOptions.Store nil means. Its
// memory is bounded in count, at most maxEntries movements and as many dedupe records,
// and in bytes: used, the bytes of what a sender or caller chooses the size of
// (references, dedupe keys, callback bodies, outcomes and their events), stays within
// maxBytes. Beyond either bound it forgets what may be forgotten, oldest first: callback
// bodies kept for audit, handled dedupe records, then settlements reported or never
// tracked. It never forgets a movement pending or unreported: it answers ErrStoreFull
// instead.
type memoryStore struct {
	maxEntries int
	maxBytes   int
	used       int // bytes accounted to entries, dedupe records and bodies

	mu      sync.Mutex
	entries map[MovementKey]*memEntry
	byID    map[string]*memEntry // by Settlement.ID
	due     entryHeap            // tracked, unsettled: by when a claim may take them
	reports entryHeap            // tracked, settled, unreported: likewise
	idle    *list.List           // of *memEntry Purge may forget, in the order of the times they became so

	dedupe     map[string]*memDedupe
	dedupeDone *list.List // of *memDedupe handled, oldest first

	bodies    map[MovementKey][]*memBody
	bodyOrder *list.List // of *memBody, oldest first

	// Tombstones of the reported movements forgotten, at most maxEntries, the oldest
	// dropped first: a few dozen bytes each.
	forgotten      map[MovementKey]*list.Element
	forgottenOrder *list.List // of MovementKey, oldest first

	// Operators' audit records, by movement, outliving it; at most maxAudits in all,
	// the oldest dropped first.
	audits     map[MovementKey][]AuditRecord
	auditOrder *list.List // of MovementKey, one element per record, oldest first
}

type memEntry struct {
	key     MovementKey
	tracked bool
	m       Movement
	final   *Settlement

	reportOwner string
	reportUntil time.Time // the report lease, or when a failed report may be retried

	dueIdx, reportIdx int // positions in the heaps, -1 when absent
	idleEl            *list.Element
	idleAt            time.Time

	size int // bytes accounted to it: see entryBytes, and the contradiction's body

	contra *Contradiction // callbacks the status check contradicted; nil when none

	attempts []Attempt // the latest tries that came back unsuccessful (AttemptLog)
}

// attemptsBytes is what e's attempts hold.
func (e *memEntry) attemptsBytes() int {
	n := 0
	for _, a := range e.attempts {
		n += attemptBytes(a)
	}
	return n
}

// contraBytes is what e's contradiction record holds whose size a sender chooses.
func (e *memEntry) contraBytes() int {
	if e.contra == nil {
		return 0
	}
	return len(e.contra.Body)
}

type memDedupe struct {
	key   string
	done  bool
	owner string
	until time.Time
	at    time.Time
	el    *list.Element // in dedupeDone once done
	size  int           // bytes accounted to it: its key
}

type memBody struct {
	cb   Callback
	el   *list.Element
	size int // bytes accounted to it: body, dedupe key and reference
}

// DefaultMaxMovements and DefaultMaxBytes are the bounds of a MemoryStoreOptions left
// zero: billing.DefaultMaxTracked and billing.DefaultMaxBytes.
const (
	DefaultMaxMovements = 100_000
	DefaultMaxBytes     = 64 << 20
)

// MemoryStoreOptions bounds the memory of a store made by NewMemoryStore. Zero fields
// take the defaults.
type MemoryStoreOptions struct {
	// MaxMovements caps the movements held, and as many callback dedupe records;
	// DefaultMaxMovements when zero. It bounds what each of them costs whatever its
	// content, a few hundred bytes.
	MaxMovements int
	// MaxBytes caps the bytes held whose size a sender or caller chooses: references,
	// dedupe keys, the callback bodies kept for audit and with each outcome, and each
	// outcome's strings; DefaultMaxBytes when zero.
	MaxBytes int
}

// NewMemoryStore returns an empty Store in this process's memory, bounded in count and
// in bytes by opts: the store a billing.Tracker keeps when TrackerOptions.Store is nil
// (billing.NewMemoryStore), built on this package's rules. Beyond either bound it
// forgets what may be forgotten, oldest first: callback bodies kept for audit (a body
// that does not fit even then is not kept), callback dedupe records already handled
// (their redelivery is handled again), then settled movements already reported or never
// tracked (a later Track of a reported one answers ErrForgotten, as after its retention,
// while its tombstone is kept: for the MaxMovements movements forgotten last). It never
// forgets a movement pending or unreported: Track, Settle or BeginCallback answers
// ErrStoreFull instead, and nothing is recorded. Give several Trackers of one process
// the same store to share their movements; to share them between processes, use package
// pgstore.
//
// The store has a method Held() (movements, bytes int) beside Store's, for gauges: the
// entries it holds (movements and outcomes of untracked callbacks) and the bytes it
// accounts against MaxBytes.
func NewMemoryStore(opts MemoryStoreOptions) Store {
	return newMemoryStore(opts.MaxMovements, opts.MaxBytes)
}

// Held returns the entries the store holds and the bytes it accounts against its bound.
func (s *memoryStore) Held() (movements, bytes int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.entries), s.used
}

// newMemoryStore returns an empty in-memory store holding at most maxEntries movements
// (DefaultMaxMovements when maxEntries <= 0) and maxBytes (DefaultMaxBytes when
// maxBytes <= 0).
func newMemoryStore(maxEntries, maxBytes int) *memoryStore {
	if maxEntries <= 0 {
		maxEntries = DefaultMaxMovements
	}
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	return &memoryStore{
		maxEntries:     maxEntries,
		maxBytes:       maxBytes,
		entries:        make(map[MovementKey]*memEntry),
		byID:           make(map[string]*memEntry),
		due:            entryHeap{at: dueAt, idx: func(e *memEntry) *int { return &e.dueIdx }},
		reports:        entryHeap{at: func(e *memEntry) time.Time { return e.reportUntil }, idx: func(e *memEntry) *int { return &e.reportIdx }},
		idle:           list.New(),
		dedupe:         make(map[string]*memDedupe),
		dedupeDone:     list.New(),
		bodies:         make(map[MovementKey][]*memBody),
		bodyOrder:      list.New(),
		forgotten:      make(map[MovementKey]*list.Element),
		forgottenOrder: list.New(),
		audits:         make(map[MovementKey][]AuditRecord),
		auditOrder:     list.New(),
	}
}

// dueAt is when a claim may take e: its next check, or the end of the lease on it.
func dueAt(e *memEntry) time.Time {
	if e.m.LeaseOwner != "" && e.m.LeaseUntil.After(e.m.NextCheckAt) {
		return e.m.LeaseUntil
	}
	return e.m.NextCheckAt
}

func (s *memoryStore) Track(_ context.Context, m Movement) (Movement, bool, error) {
	e, created, err := s.track(m, false)
	return e.Movement, created, err
}

// TrackEntry is Track answering what the key holds (EntryTracker).
func (s *memoryStore) TrackEntry(_ context.Context, m Movement) (Entry, bool, error) {
	return s.track(m, false)
}

// TrackNew tracks m only when its key holds nothing (EntryTracker).
func (s *memoryStore) TrackNew(_ context.Context, m Movement) (Entry, bool, error) {
	return s.track(m, true)
}

var _ EntryTracker = (*memoryStore)(nil)

// track is Track; with fresh it also refuses a key holding an outcome. It returns what
// the key holds once it is done.
func (s *memoryStore) track(m Movement, fresh bool) (Entry, bool, error) {
	if err := m.Validate(); err != nil {
		return Entry{}, false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.entries[m.Key()]
	if e != nil && (e.tracked || SettledAsOther(e.final, m.Kind) || fresh && e.final != nil) {
		// The call that tracked it, made again after its answer was lost, is answered as
		// it would have been.
		again := e.tracked && m.TrackID != "" && e.m.TrackID == m.TrackID && e.m.Kind == m.Kind && !(fresh && e.final != nil)
		return s.entryLocked(m.Key()), again, nil
	}
	if s.forgotten[m.Key()] != nil {
		return Entry{}, false, fmt.Errorf("%w: %s %q", ErrForgotten, m.Kind, m.ClientReference)
	}
	if e == nil {
		var err error
		if e, err = s.newEntryLocked(m.Key()); err != nil {
			return Entry{}, false, err
		}
	}
	m.NextCheckAt, m.Checks, m.LeaseOwner, m.LeaseUntil = m.Deadline, 0, "", time.Time{}
	m.ServiceReference = "" // recorded by RecordReference once the service named it
	e.tracked, e.m = true, m
	s.dropAttemptsLocked(e)
	if e.final != nil {
		e.final.Outcome.Kind = m.Kind
	}
	s.placeLocked(e, m.StartedAt)
	return s.entryLocked(m.Key()), true, nil
}

// newEntryLocked adds an entry for key, forgetting the oldest forgettable one when the
// store is full.
func (s *memoryStore) newEntryLocked(key MovementKey) (*memEntry, error) {
	if len(s.entries) >= s.maxEntries {
		front := s.idle.Front()
		if front == nil {
			return nil, fmt.Errorf("%w: %d movements pending or unreported", ErrStoreFull, len(s.entries))
		}
		s.forgetLocked(front.Value.(*memEntry))
	}
	size := entryBytes(key, nil)
	if !s.makeRoomLocked(size, nil) {
		return nil, s.fullLocked()
	}
	e := &memEntry{key: key, dueIdx: -1, reportIdx: -1, size: size}
	s.entries[key] = e
	s.used += size
	return e, nil
}

// makeRoomLocked forgets what may be forgotten, oldest first, until n more bytes fit:
// callback bodies kept for audit, then handled dedupe records, then settled movements
// reported or never tracked, except keep. It reports whether n bytes fit.
func (s *memoryStore) makeRoomLocked(n int, keep *memEntry) bool {
	for s.used+n > s.maxBytes {
		if front := s.bodyOrder.Front(); front != nil {
			s.dropBodyLocked(front.Value.(*memBody))
			continue
		}
		if front := s.dedupeDone.Front(); front != nil {
			s.dropDedupeLocked(front.Value.(*memDedupe))
			continue
		}
		el := s.idle.Front()
		if el != nil && el.Value.(*memEntry) == keep {
			el = el.Next()
		}
		if el == nil {
			return false
		}
		s.forgetLocked(el.Value.(*memEntry))
	}
	return true
}

// fullLocked is the error of a change refused for want of bytes.
func (s *memoryStore) fullLocked() error {
	return fmt.Errorf("%w: %d of %d bytes held by movements pending or unreported and callbacks in flight", ErrStoreFull, s.used, s.maxBytes)
}

// entryBytes is what the entry of key holds whose size a sender or caller chooses: its
// reference and, once settled, the settlement's strings and body.
func entryBytes(key MovementKey, final *Settlement) int {
	n := len(key.ClientReference)
	if final != nil {
		o := &final.Outcome
		n += len(final.ID) + len(final.Body) + len(o.Code) + len(o.TransactionID) + len(o.ExternalTransactionID) + len(o.ServiceReference) + len(o.Currency) + len(o.Kind)
	}
	return n
}

// placeLocked puts e in the queues its state calls for: due while tracked and
// unsettled, reports while settled and unreported, idle (forgettable) otherwise.
func (s *memoryStore) placeLocked(e *memEntry, now time.Time) {
	s.due.set(e, e.tracked && e.final == nil)
	s.reports.set(e, e.tracked && e.final != nil && e.final.ReportedAt.IsZero())
	forgettable := e.final != nil && (!e.tracked || !e.final.ReportedAt.IsZero())
	switch {
	case forgettable && e.idleEl == nil:
		// In idleAt order, which Purge relies on: reports of several callers may be
		// marked out of the order of their times.
		e.idleAt = now
		after := s.idle.Back()
		for after != nil && after.Value.(*memEntry).idleAt.After(now) {
			after = after.Prev()
		}
		if after == nil {
			e.idleEl = s.idle.PushFront(e)
		} else {
			e.idleEl = s.idle.InsertAfter(e, after)
		}
	case !forgettable && e.idleEl != nil:
		s.idle.Remove(e.idleEl)
		e.idleEl = nil
	}
}

func (s *memoryStore) forgetLocked(e *memEntry) {
	s.due.set(e, false)
	s.reports.set(e, false)
	if e.idleEl != nil {
		s.idle.Remove(e.idleEl)
		e.idleEl = nil
	}
	if e.final != nil {
		delete(s.byID, e.final.ID)
		if e.tracked && !e.final.ReportedAt.IsZero() {
			s.tombstoneLocked(e.key)
		}
	}
	delete(s.entries, e.key)
	s.used -= e.size
	// A copy: dropBodyLocked deletes from s.bodies[e.key] in place.
	for _, b := range slices.Clone(s.bodies[e.key]) {
		s.dropBodyLocked(b)
	}
	delete(s.bodies, e.key)
}

// tombstoneLocked remembers that the reported movement key was forgotten, dropping the
// oldest tombstone beyond maxEntries.
func (s *memoryStore) tombstoneLocked(key MovementKey) {
	if el := s.forgotten[key]; el != nil {
		s.forgottenOrder.MoveToBack(el)
		return
	}
	s.forgotten[key] = s.forgottenOrder.PushBack(key)
	if s.forgottenOrder.Len() > s.maxEntries {
		delete(s.forgotten, s.forgottenOrder.Remove(s.forgottenOrder.Front()).(MovementKey))
	}
}

func (s *memoryStore) Get(_ context.Context, key MovementKey) (Entry, error) {
	if err := key.Validate(); err != nil {
		return Entry{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.entryLocked(key), nil
}

// entryLocked is what Get returns of key: a copy the caller may keep.
func (s *memoryStore) entryLocked(key MovementKey) Entry {
	out := Entry{Forgotten: s.forgotten[key] != nil}
	e := s.entries[key]
	if e == nil {
		return out
	}
	out.Tracked = e.tracked
	if e.tracked {
		out.Movement = e.m
	}
	if e.final != nil {
		f := e.final.clone()
		out.Final = &f
	}
	return out
}

func (st Settlement) clone() Settlement {
	st.Body = bytes.Clone(st.Body)
	return st
}

func (s *memoryStore) Settle(_ context.Context, key MovementKey, o Outcome, body []byte) (Settlement, bool, error) {
	if err := validateSettle(key, o, body); err != nil {
		return Settlement{}, false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.settleLocked(key, o, body)
}

// settleLocked is Settle, under s.mu.
func (s *memoryStore) settleLocked(key MovementKey, o Outcome, body []byte) (Settlement, bool, error) {
	e := s.entries[key]
	created := e == nil
	if created {
		var err error
		if e, err = s.newEntryLocked(key); err != nil {
			return Settlement{}, false, err
		}
	}
	if e.tracked {
		o.Kind = e.m.Kind
	}
	next, changed, err := MergeOutcome(e.final, key, o, bytes.Clone(body))
	if err != nil {
		if created {
			s.forgetLocked(e)
		}
		return Settlement{}, false, err
	}
	size := entryBytes(key, &next) + len(e.m.ServiceReference) + e.contraBytes() + e.attemptsBytes()
	if grow := size - e.size; grow > 0 && !s.makeRoomLocked(grow, e) {
		if created {
			s.forgetLocked(e)
		}
		return Settlement{}, false, s.fullLocked()
	}
	s.used += size - e.size
	e.size = size
	if e.final != nil && e.final.ID != next.ID {
		delete(s.byID, e.final.ID)
		if e.idleEl != nil { // a success replaced a reported failure: report it anew
			s.idle.Remove(e.idleEl)
			e.idleEl = nil
		}
	}
	if changed {
		e.reportOwner, e.reportUntil = "", time.Time{}
	}
	e.final = &next
	s.byID[next.ID] = e
	e.m.LeaseOwner, e.m.LeaseUntil = "", time.Time{}
	s.placeLocked(e, o.At)
	return next.clone(), changed, nil
}

func (s *memoryStore) BeginCallback(ctx context.Context, c Callback, owner string, leaseUntil time.Time) (CallbackClaim, error) {
	claim, _, err := s.BeginCallbackEntry(ctx, c, owner, leaseUntil)
	return claim, err
}

var _ CallbackEntryBeginner = (*memoryStore)(nil)

// BeginCallbackEntry is BeginCallback, answering what Get returns for c.Key
// (CallbackEntryBeginner).
func (s *memoryStore) BeginCallbackEntry(_ context.Context, c Callback, owner string, leaseUntil time.Time) (CallbackClaim, Entry, error) {
	if err := c.Validate(); err != nil {
		return "", Entry{}, err
	}
	if err := ValidateOwner(owner); err != nil {
		return "", Entry{}, err
	}
	if !leaseUntil.After(c.At) {
		return "", Entry{}, invalid("leaseUntil", "must be after the callback's time")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	claim, err := s.claimCallbackLocked(c, owner, leaseUntil)
	if err != nil {
		return "", Entry{}, err
	}
	if len(c.Body) > 0 {
		s.keepBodyLocked(c)
	}
	return claim, s.entryLocked(c.Key), nil
}

// claimCallbackLocked is BeginCallback's dedupe: it records c's dedupe key and answers
// whether the caller must handle it.
func (s *memoryStore) claimCallbackLocked(c Callback, owner string, leaseUntil time.Time) (CallbackClaim, error) {
	d := s.dedupe[c.DedupeKey]
	switch {
	case d == nil:
		if len(s.dedupe) >= s.maxEntries {
			front := s.dedupeDone.Front()
			if front == nil {
				return "", fmt.Errorf("%w: %d callbacks in flight", ErrStoreFull, len(s.dedupe))
			}
			s.dropDedupeLocked(front.Value.(*memDedupe))
		}
		size := len(c.DedupeKey)
		if !s.makeRoomLocked(size, nil) {
			return "", s.fullLocked()
		}
		d = &memDedupe{key: c.DedupeKey, size: size}
		s.dedupe[c.DedupeKey] = d
		s.used += size
	case d.done:
		return CallbackHandled, nil
	case d.until.After(c.At):
		return CallbackInFlight, nil
	}
	d.owner, d.until, d.at = owner, leaseUntil, c.At // new, or a dead instance's lease taken over
	return CallbackClaimed, nil
}

// keepBodyLocked records one delivery of c's body: a body already kept counts one more
// delivery; a new one is kept if it fits the byte bound once the oldest bodies are
// forgotten. Bodies give way to bodies only: a flood of callbacks never pushes out an
// outcome.
func (s *memoryStore) keepBodyLocked(c Callback) {
	for _, b := range s.bodies[c.Key] {
		if bytes.Equal(b.cb.Body, c.Body) {
			b.cb.Deliveries++
			if c.At.After(b.cb.LastAt) {
				b.cb.LastAt = c.At
			}
			return
		}
	}
	size := len(c.Body) + len(c.DedupeKey) + len(c.Key.ClientReference)
	for s.used+size > s.maxBytes {
		front := s.bodyOrder.Front()
		if front == nil {
			return // audit only: the callback is handled all the same
		}
		s.dropBodyLocked(front.Value.(*memBody))
	}
	c.Body, c.LastAt, c.Deliveries = bytes.Clone(c.Body), c.At, 1
	b := &memBody{cb: c, size: size}
	b.el = s.bodyOrder.PushBack(b)
	s.bodies[c.Key] = append(s.bodies[c.Key], b)
	s.used += size
}

func (s *memoryStore) dropBodyLocked(b *memBody) {
	s.bodyOrder.Remove(b.el)
	s.used -= b.size
	kept := slices.DeleteFunc(s.bodies[b.cb.Key], func(x *memBody) bool { return x == b })
	if len(kept) == 0 {
		delete(s.bodies, b.cb.Key)
	} else {
		s.bodies[b.cb.Key] = kept
	}
}

func (s *memoryStore) dropDedupeLocked(d *memDedupe) {
	if d.el != nil {
		s.dedupeDone.Remove(d.el)
	}
	delete(s.dedupe, d.key)
	s.used -= d.size
}

func (s *memoryStore) FinishCallback(_ context.Context, dedupeKey, owner string, handled bool, now time.Time) error {
	if err := ValidateOwner(owner); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.dedupe[dedupeKey]
	if d == nil || d.done || d.owner != owner {
		return fmt.Errorf("%w: callback %q", ErrLeaseLost, dedupeKey)
	}
	if !handled {
		s.dropDedupeLocked(d)
		return nil
	}
	d.done, d.owner, d.until, d.at = true, "", time.Time{}, now
	d.el = s.dedupeDone.PushBack(d)
	return nil
}

func (s *memoryStore) Callbacks(_ context.Context, key MovementKey) ([]Callback, error) {
	if key.Callback == "" || key.ClientReference == "" {
		return nil, invalid("key", "needs a callback kind and a client reference")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	kept := s.bodies[key]
	kept = kept[:min(len(kept), MaxClaim)]
	out := make([]Callback, 0, len(kept))
	for _, b := range kept {
		c := b.cb
		c.Body = bytes.Clone(c.Body)
		out = append(out, c)
	}
	return out, nil
}

func (s *memoryStore) ClaimDue(_ context.Context, owner string, now, leaseUntil time.Time, limit int) ([]Movement, error) {
	limit, err := ValidateClaim(owner, now, leaseUntil, limit)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Movement
	for len(out) < limit && s.due.Len() > 0 {
		e := s.due.items[0]
		if dueAt(e).After(now) {
			break
		}
		e.m.LeaseOwner, e.m.LeaseUntil = owner, leaseUntil
		heap.Fix(&s.due, 0)
		out = append(out, e.m)
	}
	return out, nil
}

// claimedLocked returns the tracked, unsettled movement key claimed by owner, or
// ErrLeaseLost.
func (s *memoryStore) claimedLocked(key MovementKey, owner string) (*memEntry, error) {
	e := s.entries[key]
	if e == nil || !e.tracked || e.final != nil || e.m.LeaseOwner != owner {
		return nil, fmt.Errorf("%w: movement %s %q", ErrLeaseLost, key.Callback, key.ClientReference)
	}
	return e, nil
}

func (s *memoryStore) RenewClaim(_ context.Context, key MovementKey, owner string, leaseUntil time.Time) error {
	if err := firstError(key.Validate(), ValidateOwner(owner)); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e, err := s.claimedLocked(key, owner)
	if err != nil {
		return err
	}
	e.m.LeaseUntil = leaseUntil
	s.due.set(e, true)
	return nil
}

func (s *memoryStore) Reschedule(_ context.Context, key MovementKey, owner string, next time.Time) error {
	return s.reschedule(key, owner, next, nil)
}

// reschedule is Reschedule, calling kept (when not nil) with the entry once its check is
// counted, under the lock.
func (s *memoryStore) reschedule(key MovementKey, owner string, next time.Time, kept func(*memEntry)) error {
	if err := firstError(key.Validate(), ValidateOwner(owner)); err != nil {
		return err
	}
	if next.IsZero() {
		return invalid("next", "is required")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e, err := s.claimedLocked(key, owner)
	if err != nil {
		return err
	}
	e.m.NextCheckAt, e.m.Checks = next, e.m.Checks+1
	e.m.LeaseOwner, e.m.LeaseUntil = "", time.Time{}
	s.due.set(e, true)
	if kept != nil {
		kept(e)
	}
	return nil
}

func (s *memoryStore) ReleaseClaim(_ context.Context, key MovementKey, owner string) error {
	if err := firstError(key.Validate(), ValidateOwner(owner)); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e, err := s.claimedLocked(key, owner)
	if err != nil {
		return err
	}
	e.m.LeaseOwner, e.m.LeaseUntil = "", time.Time{}
	s.due.set(e, true)
	return nil
}

func (s *memoryStore) ClaimUnreported(_ context.Context, owner string, now, leaseUntil time.Time, limit int) ([]Settlement, error) {
	limit, err := ValidateClaim(owner, now, leaseUntil, limit)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Settlement
	for len(out) < limit && s.reports.Len() > 0 {
		e := s.reports.items[0]
		if e.reportUntil.After(now) {
			break
		}
		e.reportOwner, e.reportUntil = owner, leaseUntil
		heap.Fix(&s.reports, 0)
		out = append(out, e.final.clone())
	}
	return out, nil
}

func (s *memoryStore) MarkReported(_ context.Context, id string, now time.Time) error {
	if err := required("id", id); err != nil {
		return err
	}
	if now.IsZero() {
		return invalid("now", "is required")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.byID[id]
	if e == nil || !e.tracked || !e.final.ReportedAt.IsZero() {
		return nil // replaced, forgotten, or already reported: nothing to record
	}
	e.final.ReportedAt = now
	e.reportOwner, e.reportUntil = "", time.Time{}
	s.placeLocked(e, now)
	return nil
}

func (s *memoryStore) RetryReport(_ context.Context, id, owner string, at time.Time) error {
	return s.retryReport(id, owner, at, nil)
}

// retryReport is RetryReport, calling kept (when not nil) with the entry under the lock
// before its attempt is counted; an error of kept changes nothing.
func (s *memoryStore) retryReport(id, owner string, at time.Time, kept func(*memEntry) error) error {
	if err := firstError(required("id", id), ValidateOwner(owner)); err != nil {
		return err
	}
	if at.IsZero() {
		return invalid("at", "is required")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.byID[id]
	if e == nil || !e.tracked || !e.final.ReportedAt.IsZero() || e.reportOwner != owner {
		return fmt.Errorf("%w: outcome %q", ErrLeaseLost, id)
	}
	if kept != nil {
		if err := kept(e); err != nil {
			return err
		}
	}
	e.final.ReportAttempts++
	e.reportOwner, e.reportUntil = "", at
	s.reports.set(e, true)
	return nil
}

// RenewReport extends owner's claim on the unreported outcome id (ReportLeaseRenewer).
func (s *memoryStore) RenewReport(_ context.Context, id, owner string, leaseUntil time.Time) error {
	if err := firstError(required("id", id), ValidateOwner(owner)); err != nil {
		return err
	}
	if leaseUntil.IsZero() {
		return invalid("leaseUntil", "is required")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.byID[id]
	if e == nil || !e.tracked || !e.final.ReportedAt.IsZero() || e.reportOwner != owner {
		return fmt.Errorf("%w: outcome %q", ErrLeaseLost, id)
	}
	e.reportUntil = leaseUntil
	s.reports.set(e, true)
	return nil
}

var _ ReportLeaseRenewer = (*memoryStore)(nil)

func (s *memoryStore) Pending(context.Context) (int, time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var oldest time.Time
	for _, e := range s.due.items {
		if oldest.IsZero() || e.m.StartedAt.Before(oldest) {
			oldest = e.m.StartedAt
		}
	}
	return len(s.due.items), oldest, nil
}

func (s *memoryStore) Reconcile(_ context.Context, from, to, now time.Time) (Reconciliation, error) {
	if !from.Before(to) {
		return Reconciliation{}, invalid("to", "must be after from")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var r Reconciliation
	for _, e := range s.entries {
		if !e.tracked {
			if e.final != nil && e.final.Outcome.Kind != "" && !e.final.Outcome.At.Before(from) && e.final.Outcome.At.Before(to) {
				r.Untracked = append(r.Untracked, e.final.clone())
			}
			continue
		}
		if e.m.StartedAt.Before(from) || !e.m.StartedAt.Before(to) {
			continue
		}
		switch {
		case e.final == nil:
			if e.m.Deadline.Before(now) {
				r.Overdue = append(r.Overdue, e.m)
			}
		case e.final.Disagreed:
			r.Disagreed = append(r.Disagreed, e.final.clone())
		case e.final.ByStatusCheck && !e.final.ByCallback:
			r.StatusCheckOnly = append(r.StatusCheckOnly, e.final.clone())
		}
		if e.contra != nil && (e.final == nil || !e.final.Disagreed) {
			c := *e.contra
			c.Body = bytes.Clone(c.Body)
			r.Contradicted = append(r.Contradicted, c)
		}
	}
	// The order a database gives them: by start, then reference.
	slices.SortFunc(r.Overdue, func(a, b Movement) int {
		return cmp.Or(a.StartedAt.Compare(b.StartedAt), cmp.Compare(a.ClientReference, b.ClientReference))
	})
	bySettlement := func(a, b Settlement) int {
		sa, sb := s.entries[a.Key].m.StartedAt, s.entries[b.Key].m.StartedAt
		return cmp.Or(sa.Compare(sb), cmp.Compare(a.Key.ClientReference, b.Key.ClientReference))
	}
	slices.SortFunc(r.Disagreed, bySettlement)
	slices.SortFunc(r.StatusCheckOnly, bySettlement)
	slices.SortFunc(r.Untracked, func(a, b Settlement) int {
		return cmp.Or(a.Outcome.At.Compare(b.Outcome.At), cmp.Compare(a.Key.Callback, b.Key.Callback), cmp.Compare(a.Key.ClientReference, b.Key.ClientReference))
	})
	slices.SortFunc(r.Contradicted, func(a, b Contradiction) int {
		sa, sb := s.entries[a.Key].m.StartedAt, s.entries[b.Key].m.StartedAt
		return cmp.Or(sa.Compare(sb), cmp.Compare(a.Key.ClientReference, b.Key.ClientReference))
	})
	r.Cap()
	return r, nil
}

var _ ContradictionRecorder = (*memoryStore)(nil)

// RecordContradiction keeps c for the movement tracked under c.Key
// (ContradictionRecorder): the first one with its body, which gives way to
// nothing but other audit bodies (kept without it when they leave no room), later ones
// counted.
func (s *memoryStore) RecordContradiction(_ context.Context, c Contradiction) (bool, error) {
	if err := c.Validate(); err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.entries[c.Key]
	if e == nil || !e.tracked {
		return false, nil
	}
	if e.contra != nil {
		e.contra.Count++
		if c.At.After(e.contra.LastAt) {
			e.contra.LastAt = c.At
		}
		return true, nil
	}
	for s.used+len(c.Body) > s.maxBytes {
		front := s.bodyOrder.Front()
		if front == nil {
			c.Body = nil // audit only: the record stands without it
			break
		}
		s.dropBodyLocked(front.Value.(*memBody))
	}
	c.Body = bytes.Clone(c.Body)
	c.LastAt, c.Count = c.At, 1
	e.contra = &c
	e.size += len(c.Body)
	s.used += len(c.Body)
	return true, nil
}

func (s *memoryStore) Release(_ context.Context, key MovementKey, startedAt time.Time) (bool, error) {
	if err := key.Validate(); err != nil {
		return false, err
	}
	if startedAt.IsZero() {
		return false, invalid("startedAt", "is required")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.entries[key]
	if e == nil || !e.tracked || e.final != nil || !e.m.StartedAt.Equal(startedAt) || len(s.bodies[key]) > 0 {
		return false, nil
	}
	s.forgetLocked(e)
	return true, nil
}

func (s *memoryStore) RecordReference(_ context.Context, key MovementKey, serviceReference string) (Movement, error) {
	if err := firstError(key.Validate(), ValidateReference("serviceReference", serviceReference, MaxServiceReference)); err != nil {
		return Movement{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.entries[key]
	if e == nil || !e.tracked {
		return Movement{}, fmt.Errorf("%w: %s %q", ErrNotTracked, key.Callback, key.ClientReference)
	}
	if e.m.ServiceReference == "" {
		grow := len(serviceReference)
		if !s.makeRoomLocked(grow, e) {
			return Movement{}, s.fullLocked()
		}
		e.m.ServiceReference = serviceReference
		e.size += grow
		s.used += grow
	}
	return e.m, nil
}

func (s *memoryStore) Purge(_ context.Context, before time.Time) (int, error) {
	if before.IsZero() {
		return 0, invalid("before", "is required")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for front := s.idle.Front(); front != nil; front = s.idle.Front() {
		e := front.Value.(*memEntry)
		if !e.idleAt.Before(before) {
			break
		}
		s.forgetLocked(e)
		n++
	}
	for front := s.dedupeDone.Front(); front != nil; front = s.dedupeDone.Front() {
		d := front.Value.(*memDedupe)
		if !d.at.Before(before) {
			break
		}
		s.dropDedupeLocked(d)
	}
	for _, d := range s.dedupe { // handlers that died mid-flight
		if !d.done && d.until.Before(before) {
			s.dropDedupeLocked(d)
		}
	}
	// Bodies delivered for references nobody tracks or settles.
	for el := s.bodyOrder.Front(); el != nil; {
		b := el.Value.(*memBody)
		el = el.Next()
		if b.cb.LastAt.Before(before) && s.entries[b.cb.Key] == nil {
			s.dropBodyLocked(b)
		}
	}
	return n, nil
}

// entryHeap orders entries by a time, earliest first; each entry keeps its own index.
type entryHeap struct {
	items []*memEntry
	at    func(*memEntry) time.Time
	idx   func(*memEntry) *int
}

func (h *entryHeap) Len() int           { return len(h.items) }
func (h *entryHeap) Less(i, j int) bool { return h.at(h.items[i]).Before(h.at(h.items[j])) }
func (h *entryHeap) Swap(i, j int) {
	h.items[i], h.items[j] = h.items[j], h.items[i]
	*h.idx(h.items[i]), *h.idx(h.items[j]) = i, j
}
func (h *entryHeap) Push(x any) {
	e := x.(*memEntry)
	*h.idx(e) = len(h.items)
	h.items = append(h.items, e)
}
func (h *entryHeap) Pop() any {
	e := h.items[len(h.items)-1]
	h.items[len(h.items)-1] = nil
	h.items = h.items[:len(h.items)-1]
	*h.idx(e) = -1
	return e
}

// set puts e in the heap at its place (in) or takes it out.
func (h *entryHeap) set(e *memEntry, in bool) {
	i := *h.idx(e)
	switch {
	case in && i < 0:
		heap.Push(h, e)
	case in:
		heap.Fix(h, i)
	case i >= 0:
		heap.Remove(h, i)
	}
}

var _ Store = (*memoryStore)(nil)
