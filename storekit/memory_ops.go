package storekit

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"time"
)

// maxMemoryAudits bounds the audit records a memory store keeps, all movements together;
// the oldest are dropped first.
const maxMemoryAudits = 10_000

var (
	_ OperatorStore = (*memoryStore)(nil)
	_ Inspector     = (*memoryStore)(nil)
)

func (s *memoryStore) RecordAudit(_ context.Context, a AuditRecord) error {
	if err := a.Validate(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.auditLocked(a)
	return nil
}

// auditLocked keeps a, dropping the oldest record beyond maxMemoryAudits.
func (s *memoryStore) auditLocked(a AuditRecord) {
	s.audits[a.Key] = append(s.audits[a.Key], a)
	s.auditOrder.PushBack(a.Key)
	for s.auditOrder.Len() > maxMemoryAudits {
		k := s.auditOrder.Remove(s.auditOrder.Front()).(MovementKey)
		if rest := s.audits[k][1:]; len(rest) > 0 {
			s.audits[k] = rest
		} else {
			delete(s.audits, k)
		}
	}
}

func (s *memoryStore) Audits(_ context.Context, key MovementKey) ([]AuditRecord, error) {
	if err := key.Validate(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	as := s.audits[key]
	if len(as) > MaxAudits {
		as = as[len(as)-MaxAudits:]
	}
	return slices.Clone(as), nil
}

func (s *memoryStore) Resolve(_ context.Context, key MovementKey, o Outcome, a AuditRecord) (Settlement, bool, error) {
	if err := firstError(key.Validate(), a.Validate()); err != nil {
		return Settlement{}, false, err
	}
	if o.Source != SourceOperator {
		return Settlement{}, false, invalid("outcome.source", "must be operator")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.entries[key]
	if e == nil || !e.tracked {
		return Settlement{}, false, fmt.Errorf("%w: %s %q", ErrNotTracked, key.Callback, key.ClientReference)
	}
	if e.final != nil {
		return e.final.clone(), false, nil
	}
	st, changed, err := s.settleLocked(key, o, nil)
	if err != nil || !changed {
		return st, changed, err
	}
	a.OutcomeID = st.ID
	s.auditLocked(a)
	return st, true, nil
}

func (s *memoryStore) RequeueReport(_ context.Context, id string, a AuditRecord) (bool, error) {
	if err := firstError(required("id", id), a.Validate()); err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.byID[id]
	if e == nil || !e.tracked || e.final.ReportedAt.IsZero() {
		return false, nil
	}
	e.final.ReportedAt = time.Time{}
	e.reportOwner, e.reportUntil = "", time.Time{}
	s.placeLocked(e, a.At)
	a.OutcomeID = id
	s.auditLocked(a)
	return true, nil
}

// listItemLocked is what a list shows of e.
func (s *memoryStore) listItemLocked(e *memEntry) ListItem {
	it := ListItem{Key: e.key, Entry: s.entryLocked(e.key), Contradicted: e.contra != nil}
	it.Cursor = Cursor{At: e.m.StartedAt, Callback: e.key.Callback, ClientReference: e.key.ClientReference}
	if !e.tracked && e.final != nil {
		it.Cursor.At = e.final.Outcome.At
	}
	return it
}

func (s *memoryStore) List(_ context.Context, q ListQuery) ([]ListItem, bool, error) {
	if err := q.Validate(); err != nil {
		return nil, false, err
	}
	limit := q.Limit
	if limit == 0 || limit > MaxList {
		limit = MaxList
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []ListItem
	for _, e := range s.entries {
		it := s.listItemLocked(e)
		at := it.Cursor.At
		if !q.Matches(it) || (!q.From.IsZero() && at.Before(q.From)) || (!q.To.IsZero() && !at.Before(q.To)) ||
			(!q.After.IsZero() && !q.After.Before(it.Cursor)) {
			continue
		}
		out = append(out, it)
	}
	slices.SortFunc(out, func(a, b ListItem) int {
		switch {
		case a.Cursor.Before(b.Cursor):
			return -1
		case b.Cursor.Before(a.Cursor):
			return 1
		}
		return 0
	})
	if len(out) > limit {
		return out[:limit], true, nil
	}
	return out, false, nil
}

func (s *memoryStore) Summarize(_ context.Context, now time.Time) (Summary, error) {
	if now.IsZero() {
		return Summary{}, invalid("now", "is required")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sum := Summary{Settled: map[string]int{}}
	for _, e := range s.entries {
		it := s.listItemLocked(e)
		for _, st := range []string{ListPending, ListOverdue, ListUnreported, ListFailing, ListContradicted, ListUntracked} {
			if !(ListQuery{State: st, Now: now}).Matches(it) {
				continue
			}
			switch st {
			case ListPending:
				sum.Pending++
			case ListOverdue:
				sum.Overdue++
				if sum.OldestOverdue.IsZero() || e.m.StartedAt.Before(sum.OldestOverdue) {
					sum.OldestOverdue = e.m.StartedAt
				}
			case ListUnreported:
				sum.Unreported++
			case ListFailing:
				sum.Failing++
			case ListContradicted:
				sum.Contradicted++
			case ListUntracked:
				sum.Untracked++
			}
		}
		if e.tracked && e.final != nil {
			sum.Settled[e.final.Outcome.State]++
		}
	}
	return sum, nil
}

func (s *memoryStore) Contradiction(_ context.Context, key MovementKey) (*Contradiction, error) {
	if err := key.Validate(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.entries[key]
	if e == nil || e.contra == nil {
		return nil, nil
	}
	c := *e.contra
	c.Body = bytes.Clone(c.Body)
	return &c, nil
}
