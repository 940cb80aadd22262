package pgstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	billing "github.com/billingsdk/billing-go"
)

// ErrSchemaDamaged is matched (errors.Is) by the error of New, Migrate and CheckSchema
// when a table, column, column type, default or index the store relies on is missing
// from its schema or differs from what this package's migrations create. The error is
// a *SchemaDamagedError listing each difference. Nothing is repaired: restore the
// schema from a backup, or put back what the list names as Migrate would create it.
var ErrSchemaDamaged = errors.New("pgstore: the schema is damaged")

// SchemaDamagedError lists what a schema lacks or has otherwise than this package's
// migrations create it. It matches ErrSchemaDamaged.
type SchemaDamagedError struct {
	// Schema is the schema checked.
	Schema string
	// Differences name each table, column or index missing or different, one a line:
	// "table billing_callback_dedupe is missing", "column billing_movements.track_id is
	// missing", "column billing_callbacks.body is text NOT NULL, want bytea NOT NULL".
	Differences []string
}

func (e *SchemaDamagedError) Error() string {
	return fmt.Sprintf("%v: schema %q differs from this package's version %d: %s", ErrSchemaDamaged, e.Schema, len(migrations), strings.Join(e.Differences, "; "))
}

// Unwrap makes the error match ErrSchemaDamaged.
func (e *SchemaDamagedError) Unwrap() error { return ErrSchemaDamaged }

// schemaCheckTimeout bounds the check when the caller's context has no deadline, and
// each of its statements on the server.
const (
	schemaCheckTimeout   = 30 * time.Second
	schemaStatementLimit = "10s"
)

// CheckSchema checks, without changing anything, that the schema opts.Schema names (or
// the connection's current schema) holds the store's tables at this package's version,
// with every table, column, type, default and index the store relies on as this
// package's migrations create them; a schema that a newer release expanded (tables,
// columns or indexes added) passes. It is the check New makes; the billing command's
// `migrate --check` prints it. Its errors match ErrSchemaDamaged (a
// *SchemaDamagedError), ErrSchemaOutdated, or say the schema is newer than this
// package's.
//
// The expected shape is not a second copy of the migrations: the check runs them on
// temporary tables of its own session, in a transaction it rolls back, and compares the
// catalog's account of both. It needs the TEMPORARY right on the database, which
// PostgreSQL grants to every role by default, and a session that may write: in a
// read-only one it returns an error saying so, and New skips the check.
func CheckSchema(ctx context.Context, db *sql.DB, opts Options) error {
	if db == nil {
		return &billing.ValidationError{Field: "db", Rule: "is required"}
	}
	c, err := openConn(ctx, db, false)
	if err != nil {
		return err
	}
	schema, err := storeSchema(ctx, c, opts.Schema)
	if err != nil {
		return err
	}
	v, err := readVersions(ctx, c, schema)
	switch {
	case err != nil:
		return err
	case v.required > len(migrations):
		return newerSchema(v.required)
	case v.applied < len(migrations):
		return fmt.Errorf("%w (it is version %d, this package's %d)", ErrSchemaOutdated, v.applied, len(migrations))
	}
	return verifySchema(ctx, c, schema)
}

// verifySchema compares schema's tables with those this package's migrations create,
// run on temporary tables in a transaction rolled back.
func verifySchema(ctx context.Context, db conn, schema string) (err error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, schemaCheckTimeout)
		defer cancel()
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("pgstore: checking the schema: %w", err)
	}
	defer func() { _ = tx.Rollback() }() // the temporary tables go with it
	var readOnly string
	if err := tx.QueryRowContext(ctx, `SELECT current_setting('transaction_read_only')`).Scan(&readOnly); err != nil {
		return fmt.Errorf("pgstore: checking the schema: %w", err)
	}
	if readOnly == "on" {
		return errReadOnlyCheck
	}
	for _, stmt := range []string{
		`SET LOCAL statement_timeout = '` + schemaStatementLimit + `'`,
		`SET LOCAL lock_timeout = '` + schemaStatementLimit + `'`,
		// Unqualified, the migrations create temporary tables.
		`SET LOCAL search_path TO pg_temp`,
	} {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("pgstore: checking the schema: %w", err)
		}
	}
	for _, stmt := range expectedSchemaStatements() {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			var pe *pgconn.PgError
			if errors.As(err, &pe) && pe.Code == "42501" {
				return fmt.Errorf("pgstore: checking the schema needs temporary tables, which this role may not create: GRANT TEMPORARY ON DATABASE (the database) TO (the role): %w", err)
			}
			return fmt.Errorf("pgstore: checking the schema: building the expected tables: %w", err)
		}
	}
	var temp string
	if err := tx.QueryRowContext(ctx, `SELECT nspname FROM pg_namespace WHERE oid = pg_my_temp_schema()`).Scan(&temp); err != nil {
		return fmt.Errorf("pgstore: checking the schema: %w", err)
	}
	want, err := readShape(ctx, tx, temp)
	if err != nil {
		return err
	}
	got, err := readShape(ctx, tx, schema)
	if err != nil {
		return err
	}
	if diffs := want.missingFrom(got); len(diffs) > 0 {
		return &SchemaDamagedError{Schema: schema, Differences: diffs}
	}
	return nil
}

// errReadOnlyCheck is verifySchema's error in a read-only session (default_transaction_read_only,
// a standby), where it cannot build the expected tables. New skips the check there: a
// store that cannot write changes nothing a damaged schema would spoil, and its reads
// fail on what is missing.
var errReadOnlyCheck = errors.New("pgstore: checking the schema needs a session that may write (it builds the expected tables as temporary tables, rolled back): this one is read-only (default_transaction_read_only, or a standby)")

// expectedSchemaStatements are the statements that build the schema this package knows,
// from nothing: the version table, then every migration.
func expectedSchemaStatements() []string {
	stmts := []string{versionTable}
	for _, m := range migrations {
		stmts = append(stmts, m...)
	}
	if len(migrations) > lastRecordedVersion {
		stmts = append(stmts, stepsTable)
	}
	return stmts
}

// shape is a schema's tables as the catalog describes them.
type shape struct {
	tables  []string          // in name order
	columns map[string]string // "table.column": type, NOT NULL, default
	order   []string          // the columns' keys, by table then position
	indexes map[string]string // index name: its table and definition
	inames  []string          // the indexes' names, in order
}

func readShape(ctx context.Context, tx txConn, schema string) (shape, error) {
	s := shape{columns: map[string]string{}, indexes: map[string]string{}}
	rows, err := tx.QueryContext(ctx, `SELECT c.relname, a.attname,
			format_type(a.atttypid, a.atttypmod)
				|| CASE WHEN a.attnotnull THEN ' NOT NULL' ELSE '' END
				|| coalesce(' DEFAULT ' || pg_get_expr(d.adbin, d.adrelid), '')
		FROM pg_class c
		JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
		LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
		WHERE c.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = $1) AND c.relkind IN ('r', 'p')
		ORDER BY c.relname, a.attnum`, schema)
	if err != nil {
		return s, fmt.Errorf("pgstore: checking the schema: reading %s's columns: %w", schema, err)
	}
	defer rows.Close()
	for rows.Next() {
		var table, column, def string
		if err := rows.Scan(&table, &column, &def); err != nil {
			return s, fmt.Errorf("pgstore: checking the schema: reading %s's columns: %w", schema, err)
		}
		if len(s.tables) == 0 || s.tables[len(s.tables)-1] != table {
			s.tables = append(s.tables, table)
		}
		key := table + "." + column
		s.columns[key] = def
		s.order = append(s.order, key)
	}
	if err := rows.Err(); err != nil {
		return s, fmt.Errorf("pgstore: checking the schema: reading %s's columns: %w", schema, err)
	}
	rows.Close()
	// The definition from USING on: the table's name before it is qualified differently
	// in each schema, and is kept apart.
	rows, err = tx.QueryContext(ctx, `SELECT i.relname, t.relname,
			CASE WHEN x.indisunique THEN 'UNIQUE ' ELSE '' END
				|| ltrim(substring(pg_get_indexdef(i.oid) FROM ' USING .*$'))
				|| CASE WHEN x.indisvalid THEN '' ELSE ' (INVALID)' END
		FROM pg_index x
		JOIN pg_class i ON i.oid = x.indexrelid
		JOIN pg_class t ON t.oid = x.indrelid
		WHERE t.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = $1)
		ORDER BY i.relname`, schema)
	if err != nil {
		return s, fmt.Errorf("pgstore: checking the schema: reading %s's indexes: %w", schema, err)
	}
	defer rows.Close()
	for rows.Next() {
		var index, table, def string
		if err := rows.Scan(&index, &table, &def); err != nil {
			return s, fmt.Errorf("pgstore: checking the schema: reading %s's indexes: %w", schema, err)
		}
		s.indexes[index] = "on " + table + " " + def
		s.inames = append(s.inames, index)
	}
	if err := rows.Err(); err != nil {
		return s, fmt.Errorf("pgstore: checking the schema: reading %s's indexes: %w", schema, err)
	}
	return s, nil
}

// missingFrom lists what of want got lacks or has otherwise. What got has more (a
// newer release's expansion) is no difference.
func (want shape) missingFrom(got shape) []string {
	var diffs []string
	for _, table := range want.tables {
		if !slices.Contains(got.tables, table) {
			diffs = append(diffs, "table "+table+" is missing")
		}
	}
	for _, key := range want.order {
		table, _, _ := strings.Cut(key, ".")
		if !slices.Contains(got.tables, table) {
			continue
		}
		switch have, ok := got.columns[key]; {
		case !ok:
			diffs = append(diffs, "column "+key+" is missing")
		case have != want.columns[key]:
			diffs = append(diffs, fmt.Sprintf("column %s is %s, want %s", key, have, want.columns[key]))
		}
	}
	for _, index := range want.inames {
		table := strings.Fields(want.indexes[index])[1]
		if !slices.Contains(got.tables, table) {
			continue
		}
		switch have, ok := got.indexes[index]; {
		case !ok:
			diffs = append(diffs, "index "+index+" "+want.indexes[index]+" is missing")
		case have != want.indexes[index]:
			diffs = append(diffs, fmt.Sprintf("index %s is %s, want %s", index, have, want.indexes[index]))
		}
	}
	return diffs
}
