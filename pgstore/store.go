// Package pgstore keeps a billing.Tracker's movements, outcomes and callbacks in
// PostgreSQL, so that every instance of a server shares them and a restart forgets
// nothing. It speaks database/sql: open the database with the driver of your choice
// (pgx's stdlib driver, lib/pq) and give it to New.
//
//	db, err := sql.Open("pgx", os.Getenv("DATABASE_URL"))
//	...
//	store, err := pgstore.New(ctx, db)
//	...
//	tracker := billing.NewTracker(client, billing.TrackerOptions{Store: store})
//
// The tables (billing_movements, billing_callbacks, billing_callback_dedupe and
// billing_schema_migrations) live in the connection's current schema. Times are those
// of the Tracker's clock, given as parameters: the database's own clock is never read.
package pgstore

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"time"

	billing "github.com/billingsdk/billing-go"
)

// Store is a billing.Store on PostgreSQL, safe for use by many goroutines and many
// instances on one database. Claims lock rows with SELECT ... FOR UPDATE SKIP LOCKED in
// the statement that leases them, so instances never wait on each other's claims.
type Store struct {
	db *sql.DB
}

var _ billing.Store = (*Store)(nil)

// New returns the store on db, creating or migrating its tables first. Several
// instances may call it at once on an empty database: they take turns and all succeed.
func New(ctx context.Context, db *sql.DB) (*Store, error) {
	if db == nil {
		return nil, &billing.ValidationError{Field: "db", Rule: "is required"}
	}
	if err := migrate(ctx, db); err != nil {
		return nil, err
	}
	return &Store{db: db}, nil
}

// movementColumns are read by scanEntry, in its order.
const movementColumns = `callback_kind, client_reference, kind, started_at, deadline, next_check_at, checks,
	lease_owner, lease_until, outcome_id, state, code, transaction_id, external_transaction_id, amount,
	charges, source, settled_at, body, by_callback, by_status_check, disagreed, reported_at, report_attempts`

type scanner interface{ Scan(dest ...any) error }

// scanEntry reads one row of movementColumns.
func scanEntry(row scanner) (billing.Entry, error) {
	var (
		key                                          billing.MovementKey
		kind, leaseOwner, outcomeID, state, source   sql.NullString
		started, deadline, next, leaseUntil, settled sql.NullTime
		reported                                     sql.NullTime
		checks, attempts                             int
		code, txID, extTxID                          string
		amount, charges                              int64
		body                                         []byte
		byCallback, byStatusCheck, disagreed         bool
	)
	if err := row.Scan(&key.Callback, &key.ClientReference, &kind, &started, &deadline, &next, &checks,
		&leaseOwner, &leaseUntil, &outcomeID, &state, &code, &txID, &extTxID, &amount,
		&charges, &source, &settled, &body, &byCallback, &byStatusCheck, &disagreed, &reported, &attempts); err != nil {
		return billing.Entry{}, err
	}
	var e billing.Entry
	if kind.Valid {
		e.Tracked = true
		e.Movement = billing.Movement{
			Kind:            billing.Kind(kind.String),
			ClientReference: key.ClientReference,
			StartedAt:       started.Time,
			Deadline:        deadline.Time,
			NextCheckAt:     next.Time,
			Checks:          checks,
			LeaseOwner:      leaseOwner.String,
			LeaseUntil:      leaseUntil.Time,
		}
	}
	if outcomeID.Valid {
		s := &billing.Settlement{
			ID:  outcomeID.String,
			Key: key,
			Outcome: billing.Outcome{
				Kind:                  billing.Kind(kind.String),
				ClientReference:       key.ClientReference,
				State:                 billing.EventState(state.String),
				Code:                  billing.ResponseCode(code),
				TransactionID:         txID,
				ExternalTransactionID: extTxID,
				Amount:                amount,
				Charges:               charges,
				Source:                billing.OutcomeSource(source.String),
				At:                    settled.Time,
			},
			Body:           body,
			ByCallback:     byCallback,
			ByStatusCheck:  byStatusCheck,
			Disagreed:      disagreed,
			ReportedAt:     reported.Time,
			ReportAttempts: attempts,
		}
		if len(body) > 0 {
			// The callback was parsed before it was stored; one that no longer parses
			// (a later SDK reads less) leaves Event nil and the bytes for audit.
			if ev, err := billing.ParseEvent(body); err == nil {
				s.Outcome.Event = ev
			}
		}
		e.Final = s
	}
	return e, nil
}

func nullTime(t time.Time) sql.NullTime { return sql.NullTime{Time: t, Valid: !t.IsZero()} }

// Track records m, or returns the movement already tracked under its key.
func (s *Store) Track(ctx context.Context, m billing.Movement) (billing.Movement, bool, error) {
	if err := m.Validate(); err != nil {
		return billing.Movement{}, false, err
	}
	key := m.Key()
	// A row without a kind holds a callback that came before Track: it becomes tracked.
	row := s.db.QueryRowContext(ctx, `INSERT INTO billing_movements AS m
			(callback_kind, client_reference, kind, started_at, deadline, next_check_at)
		VALUES ($1, $2, $3, $4, $5, $5)
		ON CONFLICT (callback_kind, client_reference) DO UPDATE
			SET kind = EXCLUDED.kind, started_at = EXCLUDED.started_at, deadline = EXCLUDED.deadline,
				next_check_at = EXCLUDED.next_check_at, checks = 0, lease_owner = NULL, lease_until = NULL
			WHERE m.kind IS NULL
		RETURNING `+movementColumns,
		key.Callback, key.ClientReference, m.Kind, m.StartedAt, m.Deadline)
	e, err := scanEntry(row)
	switch {
	case err == nil:
		return e.Movement, true, nil
	case !errors.Is(err, sql.ErrNoRows):
		return billing.Movement{}, false, fmt.Errorf("pgstore: tracking %s: %w", key.ClientReference, err)
	}
	e, err = s.Get(ctx, key)
	if err != nil {
		return billing.Movement{}, false, err
	}
	return e.Movement, false, nil
}

// Get returns what the store knows of key.
func (s *Store) Get(ctx context.Context, key billing.MovementKey) (billing.Entry, error) {
	if err := key.Validate(); err != nil {
		return billing.Entry{}, err
	}
	e, err := scanEntry(s.db.QueryRowContext(ctx, `SELECT `+movementColumns+` FROM billing_movements
		WHERE callback_kind = $1 AND client_reference = $2`, key.Callback, key.ClientReference))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return billing.Entry{}, nil
	case err != nil:
		return billing.Entry{}, fmt.Errorf("pgstore: reading %s: %w", key.ClientReference, err)
	}
	return e, nil
}

// Settle records the final outcome o of key by billing.MergeOutcome's rules, in one
// transaction that holds the movement's row.
func (s *Store) Settle(ctx context.Context, key billing.MovementKey, o billing.Outcome, body []byte) (_ billing.Settlement, _ bool, err error) {
	if _, _, err := billing.MergeOutcome(nil, key, o, body); err != nil {
		return billing.Settlement{}, false, err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return billing.Settlement{}, false, fmt.Errorf("pgstore: settling %s: %w", key.ClientReference, err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	if _, err := tx.ExecContext(ctx, `INSERT INTO billing_movements (callback_kind, client_reference)
		VALUES ($1, $2) ON CONFLICT DO NOTHING`, key.Callback, key.ClientReference); err != nil {
		return billing.Settlement{}, false, fmt.Errorf("pgstore: settling %s: %w", key.ClientReference, err)
	}
	e, err := scanEntry(tx.QueryRowContext(ctx, `SELECT `+movementColumns+` FROM billing_movements
		WHERE callback_kind = $1 AND client_reference = $2 FOR UPDATE`, key.Callback, key.ClientReference))
	if err != nil {
		return billing.Settlement{}, false, fmt.Errorf("pgstore: settling %s: %w", key.ClientReference, err)
	}
	if e.Tracked {
		o.Kind = e.Movement.Kind
	}
	next, changed, err := billing.MergeOutcome(e.Final, key, o, body)
	if err != nil {
		return billing.Settlement{}, false, err
	}
	no := next.Outcome
	if _, err := tx.ExecContext(ctx, `UPDATE billing_movements SET
			outcome_id = $3, state = $4, code = $5, transaction_id = $6, external_transaction_id = $7,
			amount = $8, charges = $9, source = $10, settled_at = $11, body = $12,
			by_callback = $13, by_status_check = $14, disagreed = $15, reported_at = $16,
			report_attempts = $17, lease_owner = NULL, lease_until = NULL,
			report_owner = CASE WHEN $18 THEN NULL ELSE report_owner END,
			report_until = CASE WHEN $18 THEN NULL ELSE report_until END
		WHERE callback_kind = $1 AND client_reference = $2`,
		key.Callback, key.ClientReference, next.ID, no.State, no.Code, no.TransactionID, no.ExternalTransactionID,
		no.Amount, no.Charges, no.Source, no.At, next.Body,
		next.ByCallback, next.ByStatusCheck, next.Disagreed, nullTime(next.ReportedAt),
		next.ReportAttempts, changed); err != nil {
		return billing.Settlement{}, false, fmt.Errorf("pgstore: settling %s: %w", key.ClientReference, err)
	}
	if err := tx.Commit(); err != nil {
		return billing.Settlement{}, false, fmt.Errorf("pgstore: settling %s: %w", key.ClientReference, err)
	}
	return next, changed, nil
}

// BeginCallback records a delivery of c and claims its handling for owner.
func (s *Store) BeginCallback(ctx context.Context, c billing.Callback, owner string, leaseUntil time.Time) (billing.CallbackClaim, error) {
	if err := c.Validate(); err != nil {
		return "", err
	}
	if err := billing.ValidateOwner(owner); err != nil {
		return "", err
	}
	if !leaseUntil.After(c.At) {
		return "", &billing.ValidationError{Field: "leaseUntil", Rule: "must be after the callback's time"}
	}
	if len(c.Body) > 0 {
		sum := sha256.Sum256(c.Body)
		if _, err := s.db.ExecContext(ctx, `INSERT INTO billing_callbacks AS c
				(callback_kind, client_reference, body_sha256, dedupe_key, body, first_at, last_at, deliveries)
			VALUES ($1, $2, $3, $4, $5, $6, $6, 1)
			ON CONFLICT (callback_kind, client_reference, body_sha256) DO UPDATE
				SET deliveries = c.deliveries + 1, last_at = greatest(c.last_at, EXCLUDED.last_at)`,
			c.Key.Callback, c.Key.ClientReference, sum[:], c.DedupeKey, c.Body, c.At); err != nil {
			return "", fmt.Errorf("pgstore: recording a callback: %w", err)
		}
	}
	// Claimed when new, or when the last handler's lease has ended (it died).
	var claimed bool
	err := s.db.QueryRowContext(ctx, `INSERT INTO billing_callback_dedupe AS d (dedupe_key, done, owner, lease_until, at)
		VALUES ($1, false, $2, $3, $4)
		ON CONFLICT (dedupe_key) DO UPDATE
			SET owner = EXCLUDED.owner, lease_until = EXCLUDED.lease_until, at = EXCLUDED.at
			WHERE NOT d.done AND d.lease_until <= EXCLUDED.at
		RETURNING true`, c.DedupeKey, owner, leaseUntil, c.At).Scan(&claimed)
	switch {
	case err == nil:
		return billing.CallbackClaimed, nil
	case !errors.Is(err, sql.ErrNoRows):
		return "", fmt.Errorf("pgstore: claiming a callback: %w", err)
	}
	var done bool
	err = s.db.QueryRowContext(ctx, `SELECT done FROM billing_callback_dedupe WHERE dedupe_key = $1`, c.DedupeKey).Scan(&done)
	switch {
	case err == nil && done:
		return billing.CallbackHandled, nil
	case err == nil || errors.Is(err, sql.ErrNoRows):
		// In flight, or forgotten by a failed handler just now: either way, retry later.
		return billing.CallbackInFlight, nil
	}
	return "", fmt.Errorf("pgstore: claiming a callback: %w", err)
}

// FinishCallback ends owner's handling of dedupeKey.
func (s *Store) FinishCallback(ctx context.Context, dedupeKey, owner string, handled bool, now time.Time) error {
	if err := billing.ValidateOwner(owner); err != nil {
		return err
	}
	var res sql.Result
	var err error
	if handled {
		res, err = s.db.ExecContext(ctx, `UPDATE billing_callback_dedupe SET done = true, owner = NULL, lease_until = NULL, at = $3
			WHERE dedupe_key = $1 AND owner = $2 AND NOT done`, dedupeKey, owner, now)
	} else {
		res, err = s.db.ExecContext(ctx, `DELETE FROM billing_callback_dedupe
			WHERE dedupe_key = $1 AND owner = $2 AND NOT done`, dedupeKey, owner)
	}
	if err != nil {
		return fmt.Errorf("pgstore: finishing callback %q: %w", dedupeKey, err)
	}
	return oneRow(res, fmt.Sprintf("callback %q", dedupeKey))
}

// oneRow turns an update that matched no row into ErrLeaseLost.
func oneRow(res sql.Result, what string) error {
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("pgstore: %s: %w", what, err)
	}
	if n == 0 {
		return fmt.Errorf("%w: %s", billing.ErrLeaseLost, what)
	}
	return nil
}

// Callbacks returns the callbacks kept for key, first received first, at most
// billing.MaxClaim of them.
func (s *Store) Callbacks(ctx context.Context, key billing.MovementKey) ([]billing.Callback, error) {
	if key.Callback == "" || key.ClientReference == "" {
		return nil, &billing.ValidationError{Field: "key", Rule: "needs a callback kind and a client reference"}
	}
	rows, err := s.db.QueryContext(ctx, `SELECT dedupe_key, body, first_at, last_at, deliveries FROM billing_callbacks
		WHERE callback_kind = $1 AND client_reference = $2 ORDER BY first_at, body_sha256 LIMIT $3`,
		key.Callback, key.ClientReference, billing.MaxClaim)
	if err != nil {
		return nil, fmt.Errorf("pgstore: reading callbacks: %w", err)
	}
	defer rows.Close()
	out := []billing.Callback{}
	for rows.Next() {
		c := billing.Callback{Key: key}
		if err := rows.Scan(&c.DedupeKey, &c.Body, &c.At, &c.LastAt, &c.Deliveries); err != nil {
			return nil, fmt.Errorf("pgstore: reading callbacks: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("pgstore: reading callbacks: %w", err)
	}
	return out, nil
}

// entries runs a query of movementColumns rows.
func entries(ctx context.Context, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, what, query string, args ...any) ([]billing.Entry, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("pgstore: %s: %w", what, err)
	}
	defer rows.Close()
	var out []billing.Entry
	for rows.Next() {
		e, err := scanEntry(rows)
		if err != nil {
			return nil, fmt.Errorf("pgstore: %s: %w", what, err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("pgstore: %s: %w", what, err)
	}
	return out, nil
}

// ClaimDue leases overdue movements to owner. The rows are chosen and locked in the
// statement that leases them, skipping rows another instance is claiming right now.
func (s *Store) ClaimDue(ctx context.Context, owner string, now, leaseUntil time.Time, limit int) ([]billing.Movement, error) {
	limit, err := billing.ValidateClaim(owner, now, leaseUntil, limit)
	if err != nil {
		return nil, err
	}
	es, err := entries(ctx, s.db, "claiming due movements", `UPDATE billing_movements m
		SET lease_owner = $1, lease_until = $2
		FROM (SELECT callback_kind AS k, client_reference AS r FROM billing_movements
			WHERE outcome_id IS NULL AND kind IS NOT NULL AND next_check_at <= $3
				AND (lease_until IS NULL OR lease_until <= $3)
			ORDER BY next_check_at
			LIMIT $4
			FOR UPDATE SKIP LOCKED) due
		WHERE m.callback_kind = due.k AND m.client_reference = due.r
		RETURNING `+movementColumns, owner, leaseUntil, now, limit)
	if err != nil {
		return nil, err
	}
	out := make([]billing.Movement, len(es))
	for i, e := range es {
		out[i] = e.Movement
	}
	return out, nil
}

// claimed updates the movement key held by owner, or reports ErrLeaseLost.
func (s *Store) claimed(ctx context.Context, key billing.MovementKey, owner, set string, args ...any) error {
	if err := key.Validate(); err != nil {
		return err
	}
	if err := billing.ValidateOwner(owner); err != nil {
		return err
	}
	res, err := s.db.ExecContext(ctx, `UPDATE billing_movements SET `+set+`
		WHERE callback_kind = $1 AND client_reference = $2 AND lease_owner = $3
			AND outcome_id IS NULL AND kind IS NOT NULL`,
		append([]any{key.Callback, key.ClientReference, owner}, args...)...)
	what := fmt.Sprintf("movement %s %q", key.Callback, key.ClientReference)
	if err != nil {
		return fmt.Errorf("pgstore: %s: %w", what, err)
	}
	return oneRow(res, what)
}

// RenewClaim extends owner's claim on key.
func (s *Store) RenewClaim(ctx context.Context, key billing.MovementKey, owner string, leaseUntil time.Time) error {
	return s.claimed(ctx, key, owner, `lease_until = $4`, leaseUntil)
}

// Reschedule counts a check that left key pending, sets its next and releases the claim.
func (s *Store) Reschedule(ctx context.Context, key billing.MovementKey, owner string, next time.Time) error {
	if next.IsZero() {
		return &billing.ValidationError{Field: "next", Rule: "is required"}
	}
	return s.claimed(ctx, key, owner, `next_check_at = $4, checks = checks + 1, lease_owner = NULL, lease_until = NULL`, next)
}

// ReleaseClaim gives back owner's claim on key.
func (s *Store) ReleaseClaim(ctx context.Context, key billing.MovementKey, owner string) error {
	return s.claimed(ctx, key, owner, `lease_owner = NULL, lease_until = NULL`)
}

// ClaimUnreported leases settled, unreported outcomes to owner.
func (s *Store) ClaimUnreported(ctx context.Context, owner string, now, leaseUntil time.Time, limit int) ([]billing.Settlement, error) {
	limit, err := billing.ValidateClaim(owner, now, leaseUntil, limit)
	if err != nil {
		return nil, err
	}
	es, err := entries(ctx, s.db, "claiming unreported outcomes", `UPDATE billing_movements m
		SET report_owner = $1, report_until = $2
		FROM (SELECT callback_kind AS k, client_reference AS r FROM billing_movements
			WHERE outcome_id IS NOT NULL AND kind IS NOT NULL AND reported_at IS NULL
				AND (report_until IS NULL OR report_until <= $3)
			ORDER BY settled_at
			LIMIT $4
			FOR UPDATE SKIP LOCKED) due
		WHERE m.callback_kind = due.k AND m.client_reference = due.r
		RETURNING `+movementColumns, owner, leaseUntil, now, limit)
	if err != nil {
		return nil, err
	}
	out := make([]billing.Settlement, len(es))
	for i, e := range es {
		out[i] = *e.Final
	}
	return out, nil
}

// MarkReported records that the outcome id was reported.
func (s *Store) MarkReported(ctx context.Context, id string, now time.Time) error {
	if id == "" {
		return &billing.ValidationError{Field: "id", Rule: "is required"}
	}
	if now.IsZero() {
		return &billing.ValidationError{Field: "now", Rule: "is required"}
	}
	if _, err := s.db.ExecContext(ctx, `UPDATE billing_movements
		SET reported_at = $2, report_owner = NULL, report_until = NULL
		WHERE outcome_id = $1 AND kind IS NOT NULL AND reported_at IS NULL`, id, now); err != nil {
		return fmt.Errorf("pgstore: marking %q reported: %w", id, err)
	}
	return nil
}

// RetryReport counts a failed report of id and defers the next until at.
func (s *Store) RetryReport(ctx context.Context, id, owner string, at time.Time) error {
	if id == "" {
		return &billing.ValidationError{Field: "id", Rule: "is required"}
	}
	if err := billing.ValidateOwner(owner); err != nil {
		return err
	}
	if at.IsZero() {
		return &billing.ValidationError{Field: "at", Rule: "is required"}
	}
	res, err := s.db.ExecContext(ctx, `UPDATE billing_movements
		SET report_attempts = report_attempts + 1, report_owner = NULL, report_until = $3
		WHERE outcome_id = $1 AND report_owner = $2 AND kind IS NOT NULL AND reported_at IS NULL`, id, owner, at)
	if err != nil {
		return fmt.Errorf("pgstore: retrying the report of %q: %w", id, err)
	}
	return oneRow(res, fmt.Sprintf("outcome %q", id))
}

// Reconcile reports the tracked movements started in [from, to) that need a look.
func (s *Store) Reconcile(ctx context.Context, from, to, now time.Time) (billing.Reconciliation, error) {
	if !from.Before(to) {
		return billing.Reconciliation{}, &billing.ValidationError{Field: "to", Rule: "must be after from"}
	}
	const window = `kind IS NOT NULL AND started_at >= $1 AND started_at < $2`
	const order = ` ORDER BY started_at, client_reference`
	var r billing.Reconciliation
	es, err := entries(ctx, s.db, "reconciling", `SELECT `+movementColumns+` FROM billing_movements
		WHERE `+window+` AND outcome_id IS NULL AND deadline < $3`+order, from, to, now)
	if err != nil {
		return r, err
	}
	for _, e := range es {
		r.Overdue = append(r.Overdue, e.Movement)
	}
	es, err = entries(ctx, s.db, "reconciling", `SELECT `+movementColumns+` FROM billing_movements
		WHERE `+window+` AND outcome_id IS NOT NULL AND (disagreed OR (by_status_check AND NOT by_callback))`+order, from, to)
	if err != nil {
		return r, err
	}
	for _, e := range es {
		if e.Final.Disagreed {
			r.Disagreed = append(r.Disagreed, *e.Final)
		} else {
			r.StatusCheckOnly = append(r.StatusCheckOnly, *e.Final)
		}
	}
	return r, nil
}

// Purge forgets what retention no longer asks to keep, in one transaction.
func (s *Store) Purge(ctx context.Context, before time.Time) (_ int, err error) {
	if before.IsZero() {
		return 0, &billing.ValidationError{Field: "before", Rule: "is required"}
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("pgstore: purging: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	var n int
	if err := tx.QueryRowContext(ctx, `WITH gone AS (
			DELETE FROM billing_movements
			WHERE outcome_id IS NOT NULL AND (reported_at IS NOT NULL OR kind IS NULL)
				AND coalesce(reported_at, settled_at) < $1
			RETURNING callback_kind, client_reference
		), bodies AS (
			DELETE FROM billing_callbacks c USING gone g
			WHERE c.callback_kind = g.callback_kind AND c.client_reference = g.client_reference
		)
		SELECT count(*) FROM gone`, before).Scan(&n); err != nil {
		return 0, fmt.Errorf("pgstore: purging movements: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM billing_callback_dedupe
		WHERE CASE WHEN done THEN at < $1 ELSE lease_until < $1 END`, before); err != nil {
		return 0, fmt.Errorf("pgstore: purging callback records: %w", err)
	}
	// Bodies delivered for references nobody tracks or settles.
	if _, err := tx.ExecContext(ctx, `DELETE FROM billing_callbacks c WHERE last_at < $1
		AND NOT EXISTS (SELECT 1 FROM billing_movements m
			WHERE m.callback_kind = c.callback_kind AND m.client_reference = c.client_reference)`, before); err != nil {
		return 0, fmt.Errorf("pgstore: purging callbacks: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("pgstore: purging: %w", err)
	}
	return n, nil
}
