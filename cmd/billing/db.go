package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/billingsdk/billing-go/pgstore"
)

// addDatabaseFlag adds --database-url, defaulting to DATABASE_URL.
func addDatabaseFlag(fs *flag.FlagSet, e *env) *string {
	return fs.String("database-url", e.getenv("DATABASE_URL"), "PostgreSQL URL of the Tracker's pgstore (env DATABASE_URL)")
}

// openReadOnly opens the database with every transaction read-only
// (default_transaction_read_only): whatever runs on it, nothing is written,
// so a command built on it can never settle or report a movement. A role
// with SELECT on pgstore's tables is enough, such as the application role
// pgstore documents (SELECT, INSERT, UPDATE, DELETE).
func openReadOnly(ctx context.Context, databaseURL string) (*sql.DB, error) {
	if databaseURL == "" {
		return nil, usagef("--database-url is required (or DATABASE_URL): the PostgreSQL database your Tracker's pgstore uses, e.g. postgres://app@localhost/shop")
	}
	cfg, err := pgx.ParseConfig(databaseURL)
	if err != nil {
		return nil, usagef("--database-url %s is not a PostgreSQL URL or connection string", quoteURL(databaseURL))
	}
	cfg.RuntimeParams["default_transaction_read_only"] = "on"
	cfg.RuntimeParams["application_name"] = "billing (read-only)"
	db := stdlib.OpenDB(*cfg)
	db.SetMaxOpenConns(2)
	if err := checkSchema(ctx, db); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// checkSchema makes sure the database holds pgstore's tables in the version this
// command reads.
func checkSchema(ctx context.Context, db *sql.DB) error {
	var exists bool
	if err := db.QueryRowContext(ctx, `SELECT to_regclass('billing_schema_migrations') IS NOT NULL`).Scan(&exists); err != nil {
		return fmt.Errorf("connecting to the database: %w (check --database-url and that PostgreSQL is running)", err)
	}
	if !exists {
		return errors.New("the database has no pgstore tables in its search path: point --database-url at the database (and schema, search_path) your Tracker uses")
	}
	v, err := pgstore.ReadSchemaVersions(ctx, db, pgstore.Options{})
	if err != nil {
		return fmt.Errorf("reading pgstore's schema version: %w", err)
	}
	// A later release's expansion (Applied above this command's version) keeps what
	// this command reads; a contraction (Required above it) does not.
	switch {
	case v.Applied < pgstore.Version():
		return fmt.Errorf("pgstore's schema is version %d, older than this command's %d: run pgstore.Migrate (or start your application, which migrates) first", v.Applied, pgstore.Version())
	case v.Required > pgstore.Version():
		return fmt.Errorf("pgstore's schema requires version %d, newer than this command's %d: install the billing command of your SDK's version", v.Required, pgstore.Version())
	}
	return nil
}

// parseTime reads an instant: RFC 3339 (2026-11-27T10:00:00Z), a date
// (2026-11-27, UTC), or a duration ago (24h, 90m).
func parseTime(flagName, s string, now time.Time) (time.Time, error) {
	if d, err := time.ParseDuration(s); err == nil {
		if d < 0 {
			return time.Time{}, usagef("--%s %q: a duration means that long ago and must not be negative", flagName, s)
		}
		return now.Add(-d), nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, usagef("--%s %q: give an RFC 3339 time (2026-11-27T10:00:00Z), a date (2026-11-27) or a duration ago (24h)", flagName, s)
}

// trackedState is a state movements lists: how far a tracked movement got.
type trackedState string

const (
	statePending    trackedState = "pending"    // not settled, its callback deadline ahead
	stateOverdue    trackedState = "overdue"    // not settled, its callback deadline passed
	stateUnreported trackedState = "unreported" // settled, OnOutcome not yet done with it
	stateSettled    trackedState = "settled"    // settled and reported
	stateUntracked  trackedState = "untracked"  // money no one tracked, confirmed by a status check
)

var trackedStates = []trackedState{stateUntracked, statePending, stateOverdue, stateUnreported, stateSettled}

// stateSQL is the condition of each state on billing_movements, on the
// database's clock.
var stateSQL = map[trackedState]string{
	statePending:    `outcome_id IS NULL AND (deadline IS NULL OR deadline >= now())`,
	stateOverdue:    `outcome_id IS NULL AND deadline < now()`,
	stateUnreported: `kind IS NOT NULL AND outcome_id IS NOT NULL AND reported_at IS NULL`,
	stateSettled:    `kind IS NOT NULL AND outcome_id IS NOT NULL AND reported_at IS NOT NULL`,
	stateUntracked:  `kind IS NULL AND outcome_id IS NOT NULL AND outcome_kind <> ''`,
}

// stateCase is the SQL that names a row's state.
func stateCase() string {
	var b strings.Builder
	b.WriteString("CASE")
	for _, st := range trackedStates {
		fmt.Fprintf(&b, " WHEN %s THEN '%s'", stateSQL[st], st)
	}
	b.WriteString(" END")
	return b.String()
}
