package pgstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/billingsdk/billing-go/storekit"
	"github.com/jackc/pgx/v5/pgtype"
)

// This file is what an operator's view reads and writes (storekit.Inspector and
// storekit.OperatorStore): pages of movements, counts by state, and the audit records of
// the operators' actions, in billing_audit, a table of their own that outlives the
// movements they name.

var (
	_ storekit.Inspector     = (*Store)(nil)
	_ storekit.OperatorStore = (*Store)(nil)
)

// listedAt is when a listed row is placed: its start, or an untracked outcome's
// settling. The index billing_movements_listed orders by it.
const listedAt = `coalesce(started_at, settled_at)`

// listStates are the conditions of each storekit.ListQuery state; {t1} is now.
var listStates = map[string]string{
	storekit.ListPending:      `kind IS NOT NULL AND outcome_id IS NULL AND deadline >= {t1}`,
	storekit.ListOverdue:      `kind IS NOT NULL AND outcome_id IS NULL AND deadline < {t1}`,
	storekit.ListUnreported:   `kind IS NOT NULL AND outcome_id IS NOT NULL AND reported_at IS NULL`,
	storekit.ListFailing:      `kind IS NOT NULL AND outcome_id IS NOT NULL AND reported_at IS NULL AND report_attempts > 0`,
	storekit.ListSettled:      `kind IS NOT NULL AND outcome_id IS NOT NULL`,
	storekit.ListContradicted: `kind IS NOT NULL AND (contradictions > 0 OR disagreed)`,
	storekit.ListUntracked:    `kind IS NULL AND outcome_id IS NOT NULL AND outcome_kind <> ''`,
	"":                        `(kind IS NOT NULL OR (outcome_id IS NOT NULL AND outcome_kind <> ''))`,
}

// likePrefix is a LIKE pattern matching the strings that start with p: a reference's '_'
// is a LIKE wildcard, escaped.
func likePrefix(p string) string {
	return strings.NewReplacer(`\`, `\\`, `_`, `\_`, `%`, `\%`).Replace(p) + "%"
}

// List returns the movements q selects, latest started first (storekit.Inspector), by
// the index on when each was started or, untracked, settled.
func (s *Store) List(ctx context.Context, q storekit.ListQuery) ([]storekit.ListItem, bool, error) {
	if err := q.Validate(); err != nil {
		return nil, false, err
	}
	limit := q.Limit
	if limit == 0 || limit > storekit.MaxList {
		limit = storekit.MaxList
	}
	args := []any{q.Now}
	param := func(v any) string {
		args = append(args, v)
		return strconv.Itoa(len(args))
	}
	where := []string{listStates[q.State]}
	if q.Kind != "" {
		where = append(where, `coalesce(kind, outcome_kind) = $`+param(q.Kind))
	}
	if q.Outcome != "" {
		where = append(where, `state = $`+param(q.Outcome))
	}
	if q.Reference != "" {
		where = append(where, `client_reference LIKE $`+param(likePrefix(q.Reference)))
	}
	if !q.From.IsZero() {
		where = append(where, listedAt+` >= {t`+param(q.From)+`}`)
	}
	if !q.To.IsZero() {
		where = append(where, listedAt+` < {t`+param(q.To)+`}`)
	}
	if !q.After.IsZero() {
		at := `{t` + param(q.After.At) + `}`
		where = append(where, `(`+listedAt+` < `+at+` OR (`+listedAt+` = `+at+` AND (callback_kind, client_reference) > ($`+
			param(q.After.Callback)+`, $`+param(q.After.ClientReference)+`)))`)
	}
	var out []storekit.ListItem
	var r entryRow
	err := s.db.query(ctx, s.q(`SELECT contradictions > 0, `+movementColumns+` FROM billing_movements
		WHERE `+strings.Join(where, " AND ")+`
		ORDER BY `+listedAt+` DESC, callback_kind, client_reference LIMIT `+strconv.Itoa(limit+1)), args, func(rows scanner) error {
		var contradicted bool
		e, err := r.scan(prefixed{rows, []any{&contradicted}})
		if err != nil {
			return err
		}
		it := storekit.ListItem{Entry: e, Contradicted: contradicted}
		if e.Tracked {
			it.Key = e.Movement.Key()
			it.Cursor.At = e.Movement.StartedAt
		} else {
			it.Key = e.Final.Key
			it.Cursor.At = e.Final.Outcome.At
		}
		it.Cursor.Callback, it.Cursor.ClientReference = it.Key.Callback, it.Key.ClientReference
		out = append(out, it)
		return nil
	})
	if err != nil {
		return nil, false, fmt.Errorf("pgstore: listing: %w", err)
	}
	if len(out) > limit {
		return out[:limit], true, nil
	}
	return out, false, nil
}

// Summarize counts the movements by state at now (storekit.Inspector): one pass over
// the table for the states, one over the settled for their outcomes.
func (s *Store) Summarize(ctx context.Context, now time.Time) (storekit.Summary, error) {
	if now.IsZero() {
		return storekit.Summary{}, &storekit.ValidationError{Field: "now", Rule: "is required"}
	}
	sum := storekit.Summary{Settled: map[string]int{}}
	var oldest pgtype.Timestamptz
	var skew int64
	err := s.db.queryRow(ctx, s.q(`SELECT
			count(*) FILTER (WHERE `+listStates[storekit.ListPending]+`),
			count(*) FILTER (WHERE `+listStates[storekit.ListOverdue]+`),
			min(started_at) FILTER (WHERE `+listStates[storekit.ListOverdue]+`),
			count(*) FILTER (WHERE `+listStates[storekit.ListUnreported]+`),
			count(*) FILTER (WHERE `+listStates[storekit.ListFailing]+`),
			count(*) FILTER (WHERE `+listStates[storekit.ListContradicted]+`),
			count(*) FILTER (WHERE `+listStates[storekit.ListUntracked]+`),
			{skew}
		FROM billing_movements`), now).Scan(&sum.Pending, &sum.Overdue, &oldest, &sum.Unreported, &sum.Failing, &sum.Contradicted, &sum.Untracked, &skew)
	if err != nil {
		return sum, fmt.Errorf("pgstore: counting: %w", err)
	}
	sum.OldestOverdue = callerTime(oldest, skew)
	err = s.db.query(ctx, s.q(`SELECT state, count(*) FROM billing_movements
		WHERE kind IS NOT NULL AND outcome_id IS NOT NULL GROUP BY state`), nil, func(rows scanner) error {
		var state string
		var n int
		if err := rows.Scan(&state, &n); err != nil {
			return err
		}
		sum.Settled[state] = n
		return nil
	})
	if err != nil {
		return sum, fmt.Errorf("pgstore: counting: %w", err)
	}
	return sum, nil
}

// Contradiction returns the contradiction recorded for key (storekit.Inspector).
func (s *Store) Contradiction(ctx context.Context, key storekit.MovementKey) (*storekit.Contradiction, error) {
	if err := key.Validate(); err != nil {
		return nil, err
	}
	c := storekit.Contradiction{Key: key}
	var at, last pgtype.Timestamptz
	var skew int64
	err := s.db.queryRow(ctx, s.q(`SELECT contradicted_state, contradicted_body, contradicted_at, contradicted_last_at, contradictions, {skew}
		FROM billing_movements WHERE callback_kind = $2 AND client_reference = $3 AND contradictions > 0`),
		s.now(), key.Callback, key.ClientReference).Scan(&c.Claimed, &c.Body, &at, &last, &c.Count, &skew)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("pgstore: reading the contradiction of %s: %w", key.ClientReference, err)
	}
	c.At, c.LastAt = callerTime(at, skew), callerTime(last, skew)
	return &c, nil
}

// untracked reads the outcomes of movements never tracked that a status check
// confirmed, settled in [from, to), the earliest first: one more than a list keeps.
func (s *Store) untracked(ctx context.Context, now, from, to time.Time) ([]storekit.Settlement, error) {
	es, err := entries(ctx, s.db, "reconciling", s.q(`SELECT `+movementColumns+` FROM billing_movements
		WHERE `+listStates[storekit.ListUntracked]+` AND settled_at >= {t2} AND settled_at < {t3}
		ORDER BY settled_at, callback_kind, client_reference LIMIT `+strconv.Itoa(storekit.MaxClaim+1)), now, from, to)
	if err != nil {
		return nil, err
	}
	out := make([]storekit.Settlement, 0, len(es))
	for _, e := range es {
		out = append(out, *e.Final)
	}
	return out, nil
}

// insertAudit is the statement that keeps one audit record; $1 is the caller's now.
const insertAudit = `INSERT INTO billing_audit (callback_kind, client_reference, action, actor, reason, at, before_state, after_state, outcome_id)
	VALUES ($2, $3, $4, $5, $6, {t1}, $7, $8, $9)`

func auditArgs(a storekit.AuditRecord) []any {
	return []any{a.At, a.Key.Callback, a.Key.ClientReference, a.Action, a.Actor, a.Reason, a.Before, a.After, a.OutcomeID}
}

// RecordAudit keeps a (storekit.OperatorStore).
func (s *Store) RecordAudit(ctx context.Context, a storekit.AuditRecord) error {
	if err := a.Validate(); err != nil {
		return err
	}
	if _, err := s.db.ExecContext(ctx, s.q(insertAudit), auditArgs(a)...); err != nil {
		return fmt.Errorf("pgstore: recording an audit of %s: %w", a.Key.ClientReference, err)
	}
	return nil
}

// Audits returns the audit records of key, oldest first, the latest storekit.MaxAudits
// (storekit.OperatorStore).
func (s *Store) Audits(ctx context.Context, key storekit.MovementKey) ([]storekit.AuditRecord, error) {
	if err := key.Validate(); err != nil {
		return nil, err
	}
	var out []storekit.AuditRecord
	err := s.db.query(ctx, s.q(`SELECT action, actor, reason, at, before_state, after_state, outcome_id, {skew} FROM (
			SELECT * FROM billing_audit WHERE callback_kind = $2 AND client_reference = $3 ORDER BY at DESC, recorded_at DESC LIMIT `+
		strconv.Itoa(storekit.MaxAudits)+`) AS latest ORDER BY at, recorded_at`), []any{s.now(), key.Callback, key.ClientReference}, func(rows scanner) error {
		a := storekit.AuditRecord{Key: key}
		var at pgtype.Timestamptz
		var skew int64
		if err := rows.Scan(&a.Action, &a.Actor, &a.Reason, &at, &a.Before, &a.After, &a.OutcomeID, &skew); err != nil {
			return err
		}
		a.At = callerTime(at, skew)
		out = append(out, a)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("pgstore: reading the audit of %s: %w", key.ClientReference, err)
	}
	return out, nil
}

// Resolve settles the tracked movement key with the operator's outcome o only when it
// has none, and keeps a, in one transaction (storekit.OperatorStore): the UPDATE's
// condition is the compare-and-set, so a callback settling the movement at the same
// moment either comes first (and Resolve changes nothing) or finds the operator's.
func (s *Store) Resolve(ctx context.Context, key storekit.MovementKey, o storekit.Outcome, a storekit.AuditRecord) (_ storekit.Settlement, _ bool, err error) {
	if err := a.Validate(); err != nil {
		return storekit.Settlement{}, false, err
	}
	if o.Source != storekit.SourceOperator {
		return storekit.Settlement{}, false, &storekit.ValidationError{Field: "outcome.source", Rule: "must be operator"}
	}
	next, _, err := storekit.MergeOutcome(nil, key, o, nil)
	if err != nil {
		return storekit.Settlement{}, false, err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return storekit.Settlement{}, false, fmt.Errorf("pgstore: resolving %s: %w", key.ClientReference, err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	no := next.Outcome
	res, err := tx.ExecContext(ctx, s.q(`UPDATE billing_movements SET
			outcome_id = $4, state = $5, source = $6, settled_at = {t1}, code = '', transaction_id = '',
			external_transaction_id = '', amount = 0, charges = 0, body = NULL,
			by_callback = false, by_status_check = false, disagreed = false, reported_at = NULL,
			report_attempts = 0, lease_owner = NULL, lease_until = NULL, report_owner = NULL, report_until = NULL,
			currency = $7, outcome_service_reference = $8, outcome_kind = kind
		WHERE callback_kind = $2 AND client_reference = $3 AND kind IS NOT NULL AND outcome_id IS NULL`),
		no.At, key.Callback, key.ClientReference, next.ID, no.State, no.Source, no.Currency, no.ServiceReference)
	if err != nil {
		return storekit.Settlement{}, false, fmt.Errorf("pgstore: resolving %s: %w", key.ClientReference, err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		_ = tx.Rollback()
		if err != nil {
			return storekit.Settlement{}, false, fmt.Errorf("pgstore: resolving %s: %w", key.ClientReference, err)
		}
		e, err := s.Get(ctx, key)
		switch {
		case err != nil:
			return storekit.Settlement{}, false, err
		case !e.Tracked:
			return storekit.Settlement{}, false, fmt.Errorf("%w: %s %q", storekit.ErrNotTracked, key.Callback, key.ClientReference)
		case e.Final == nil:
			return storekit.Settlement{}, false, fmt.Errorf("pgstore: resolving %s: the movement changed meanwhile", key.ClientReference)
		}
		return *e.Final, false, nil
	}
	a.OutcomeID = next.ID
	if _, err := tx.ExecContext(ctx, s.q(insertAudit), auditArgs(a)...); err != nil {
		return storekit.Settlement{}, false, fmt.Errorf("pgstore: resolving %s: %w", key.ClientReference, err)
	}
	if err := tx.Commit(); err != nil {
		return storekit.Settlement{}, false, fmt.Errorf("pgstore: resolving %s: %w", key.ClientReference, err)
	}
	return next, true, nil
}

// RequeueReport marks the reported outcome id unreported, under the same id, and keeps
// a, in one transaction (storekit.OperatorStore).
func (s *Store) RequeueReport(ctx context.Context, id string, a storekit.AuditRecord) (_ bool, err error) {
	if err := a.Validate(); err != nil {
		return false, err
	}
	if id == "" {
		return false, &storekit.ValidationError{Field: "id", Rule: "is required"}
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("pgstore: reporting %s again: %w", id, err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	res, err := tx.ExecContext(ctx, s.q(`UPDATE billing_movements SET reported_at = NULL, report_owner = NULL, report_until = NULL
		WHERE outcome_id = $1 AND kind IS NOT NULL AND reported_at IS NOT NULL`), id)
	if err != nil {
		return false, fmt.Errorf("pgstore: reporting %s again: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		_ = tx.Rollback()
		return false, err
	}
	a.OutcomeID = id
	if _, err := tx.ExecContext(ctx, s.q(insertAudit), auditArgs(a)...); err != nil {
		return false, fmt.Errorf("pgstore: reporting %s again: %w", id, err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("pgstore: reporting %s again: %w", id, err)
	}
	return true, nil
}
