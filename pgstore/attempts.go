package pgstore

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/billingsdk/billing-go/storekit"
	"github.com/jackc/pgx/v5/pgtype"
)

// This file keeps the Tracker's unsuccessful tries on each movement (storekit.AttemptLog)
// in billing_attempts: each is written by the statement that counts it, so keeping it
// costs no round trip of its own.

var _ storekit.AttemptLog = (*Store)(nil)

// keepAttempt is the tail of a statement whose CTE counted names the counted row
// (callback_kind, client_reference, started_at, and the count as n): it keeps the
// attempt ($4 the owner, {t6} its time, $7 its answer, $8 its error) and drops the
// oldest of its kind beyond storekit.MaxAttempts. A row of the key's earlier life, under
// the same number, is written over.
func keepAttempt(what string) string {
	return `, kept AS (
			INSERT INTO billing_attempts (callback_kind, client_reference, what, n, started_at, at, owner, answer, error)
			SELECT callback_kind, client_reference, '` + what + `', n, started_at, {t6}, $4, $7, $8 FROM counted
			ON CONFLICT (callback_kind, client_reference, what, n) DO UPDATE
				SET started_at = EXCLUDED.started_at, at = EXCLUDED.at, owner = EXCLUDED.owner,
					answer = EXCLUDED.answer, error = EXCLUDED.error
		), dropped AS (
			DELETE FROM billing_attempts a USING counted c
			WHERE a.callback_kind = c.callback_kind AND a.client_reference = c.client_reference
				AND a.what = '` + what + `' AND a.n <= c.n - ` + strconv.Itoa(storekit.MaxAttempts) + `
		)
		SELECT skew FROM counted`
}

// RescheduleAfter is Reschedule keeping the status check's attempt a, in one statement
// (storekit.AttemptLog).
func (s *Store) RescheduleAfter(ctx context.Context, key storekit.MovementKey, owner string, next time.Time, a storekit.Attempt) error {
	a.Key, a.What, a.Owner = key, storekit.AttemptStatusCheck, owner
	if err := a.Validate(); err != nil {
		return err
	}
	if next.IsZero() {
		return &storekit.ValidationError{Field: "next", Rule: "is required"}
	}
	var skew int64
	err := s.db.queryRow(ctx, s.q(`WITH counted AS (
			UPDATE billing_movements SET next_check_at = {t5}, checks = checks + 1, lease_owner = NULL, lease_until = NULL
			WHERE callback_kind = $2 AND client_reference = $3 AND lease_owner = $4
				AND outcome_id IS NULL AND kind IS NOT NULL
			RETURNING callback_kind, client_reference, started_at, checks AS n, {skew} AS skew
		)`+keepAttempt(storekit.AttemptStatusCheck)),
		s.now(), key.Callback, key.ClientReference, owner, next, a.At, a.Answer, storekit.TrimAttemptError(a.Error)).Scan(&skew)
	return oneRow(err, fmt.Sprintf("movement %s %q", key.Callback, key.ClientReference))
}

// RetryReportAfter is RetryReport keeping the report's attempt a, in one statement
// (storekit.AttemptLog).
func (s *Store) RetryReportAfter(ctx context.Context, id, owner string, next time.Time, a storekit.Attempt) error {
	a.What, a.Owner = storekit.AttemptReport, owner
	if err := a.Validate(); err != nil {
		return err
	}
	if id == "" {
		return &storekit.ValidationError{Field: "id", Rule: "is required"}
	}
	if next.IsZero() {
		return &storekit.ValidationError{Field: "at", Rule: "is required"}
	}
	var skew int64
	// $2 and $3 are the movement's key, which the outcome id ($9) must belong to.
	err := s.db.queryRow(ctx, s.q(`WITH counted AS (
			UPDATE billing_movements
			SET report_attempts = report_attempts + 1, report_owner = NULL, report_until = {t5}
			WHERE outcome_id = $9 AND report_owner = $4 AND kind IS NOT NULL AND reported_at IS NULL
				AND callback_kind = $2 AND client_reference = $3
			RETURNING callback_kind, client_reference, started_at, report_attempts AS n, {skew} AS skew
		)`+keepAttempt(storekit.AttemptReport)),
		s.now(), a.Key.Callback, a.Key.ClientReference, owner, next, a.At, a.Answer, storekit.TrimAttemptError(a.Error), id).Scan(&skew)
	return oneRow(err, fmt.Sprintf("outcome %q", id))
}

// Attempts returns the attempts kept for key in its current life, oldest first
// (storekit.AttemptLog).
func (s *Store) Attempts(ctx context.Context, key storekit.MovementKey) ([]storekit.Attempt, error) {
	if err := key.Validate(); err != nil {
		return nil, err
	}
	var out []storekit.Attempt
	err := s.db.query(ctx, s.q(`SELECT a.what, a.n, a.at, a.owner, a.answer, a.error, {skew}
		FROM billing_attempts a JOIN billing_movements m
			ON m.callback_kind = a.callback_kind AND m.client_reference = a.client_reference AND m.started_at = a.started_at
		WHERE a.callback_kind = $2 AND a.client_reference = $3 AND m.kind IS NOT NULL
		ORDER BY a.at, a.what, a.n
		LIMIT `+strconv.Itoa(2*storekit.MaxAttempts)), []any{s.now(), key.Callback, key.ClientReference}, func(rows scanner) error {
		a := storekit.Attempt{Key: key}
		var at pgtype.Timestamptz
		var skew int64
		if err := rows.Scan(&a.What, &a.N, &at, &a.Owner, &a.Answer, &a.Error, &skew); err != nil {
			return err
		}
		a.At = callerTime(at, skew)
		out = append(out, a)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("pgstore: reading the attempts on %s: %w", key.ClientReference, err)
	}
	return out, nil
}
