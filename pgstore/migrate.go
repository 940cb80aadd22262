package pgstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	billing "github.com/billingsdk/billing-go"
)

// migrations are the schema's versions, in order: version n is migrations[n-1]. A
// released version is never edited; a change is a new version appended. Each is a list
// of single statements, since not every driver runs several in one Exec.
//
// Adding a version. Instances of the release before keep running on the schema while
// the new release's Migrate runs and its instances roll out (see docs/durable.md,
// "Rolling upgrades"), and an instance of the release before may start again
// meanwhile. So a version only expands the schema: a table, a column with a default (or
// nullable), an index. It neither drops nor renames nor retypes what a released version
// created, nor adds a NOT NULL column without a default, nor a constraint that rows the
// release before writes would break. Append it to this list with a comment saying what
// it adds and for what; New checks the result against the shape the migrations build
// (see CheckSchema), so nothing else is listed twice. The versions after
// lastRecordedVersion are recorded in billing_schema_steps, so that releases before
// them, which refuse a billing_schema_migrations version they do not know, keep
// starting (the first such version creates that table: list it where the docs list the
// tables).
//
// Contracting (dropping what a released version needs) comes a release later, once no
// instance of the release that needs it runs: its comment names the last release that
// needs the old shape, and contractions maps it to the version a release must know to
// work on the contracted schema, which is recorded in billing_schema_migrations so that
// every older release refuses to start on it instead of failing statement by statement.
// Versions 1 to 6 came before this rule: version 5 dropped billing_forgotten, which the
// release before it still read.
var migrations = [][]string{
	{ // 1: movements with their outcomes, callback bodies, callback dedupe
		`CREATE TABLE billing_movements (
			callback_kind           text NOT NULL,
			client_reference        text NOT NULL,
			kind                    text,
			started_at              timestamptz,
			deadline                timestamptz,
			next_check_at           timestamptz,
			checks                  integer NOT NULL DEFAULT 0,
			lease_owner             text,
			lease_until             timestamptz,
			outcome_id              text,
			state                   text,
			code                    text NOT NULL DEFAULT '',
			transaction_id          text NOT NULL DEFAULT '',
			external_transaction_id text NOT NULL DEFAULT '',
			amount                  bigint NOT NULL DEFAULT 0,
			charges                 bigint NOT NULL DEFAULT 0,
			source                  text,
			settled_at              timestamptz,
			body                    bytea,
			by_callback             boolean NOT NULL DEFAULT false,
			by_status_check         boolean NOT NULL DEFAULT false,
			disagreed               boolean NOT NULL DEFAULT false,
			reported_at             timestamptz,
			report_owner            text,
			report_until            timestamptz,
			report_attempts         integer NOT NULL DEFAULT 0,
			PRIMARY KEY (callback_kind, client_reference)
		)`,
		// ClaimDue: tracked, unsettled, by next check.
		`CREATE INDEX billing_movements_due ON billing_movements (next_check_at)
			WHERE outcome_id IS NULL AND kind IS NOT NULL`,
		// ClaimUnreported: tracked, settled, not reported.
		`CREATE INDEX billing_movements_unreported ON billing_movements (settled_at)
			WHERE outcome_id IS NOT NULL AND kind IS NOT NULL AND reported_at IS NULL`,
		`CREATE UNIQUE INDEX billing_movements_outcome ON billing_movements (outcome_id)`,
		// Reconcile: tracked, by start.
		`CREATE INDEX billing_movements_started ON billing_movements (started_at) WHERE kind IS NOT NULL`,
		// Purge: settled and reported, or never tracked.
		`CREATE INDEX billing_movements_forgettable ON billing_movements (coalesce(reported_at, settled_at))
			WHERE outcome_id IS NOT NULL AND (reported_at IS NOT NULL OR kind IS NULL)`,
		`CREATE TABLE billing_callbacks (
			callback_kind    text NOT NULL,
			client_reference text NOT NULL,
			body_sha256      bytea NOT NULL,
			dedupe_key       text NOT NULL,
			body             bytea NOT NULL,
			first_at         timestamptz NOT NULL,
			last_at          timestamptz NOT NULL,
			deliveries       integer NOT NULL,
			PRIMARY KEY (callback_kind, client_reference, body_sha256)
		)`,
		`CREATE INDEX billing_callbacks_last ON billing_callbacks (last_at)`,
		`CREATE TABLE billing_callback_dedupe (
			dedupe_key  text PRIMARY KEY,
			done        boolean NOT NULL,
			owner       text,
			lease_until timestamptz,
			at          timestamptz NOT NULL
		)`,
		`CREATE INDEX billing_callback_dedupe_done ON billing_callback_dedupe (at) WHERE done`,
	},
	{ // 2: what a movement asked and the service's reference of it; the currency and
		// service reference its outcome confirmed; the start as the caller gave it
		`ALTER TABLE billing_movements
			ADD COLUMN asked_amount              bigint NOT NULL DEFAULT 0,
			ADD COLUMN asked_currency            text NOT NULL DEFAULT '',
			ADD COLUMN service_reference         text NOT NULL DEFAULT '',
			ADD COLUMN caller_started_at         timestamptz,
			ADD COLUMN currency                  text NOT NULL DEFAULT '',
			ADD COLUMN outcome_service_reference text NOT NULL DEFAULT ''`,
	},
	{ // 3: the kind an outcome settled before any Track was confirmed as, which Track
		// refuses to adopt as another kind's movement (read while kind is NULL)
		`ALTER TABLE billing_movements ADD COLUMN outcome_kind text NOT NULL DEFAULT ''`,
	},
	{ // 4: tombstones of the reported movements Purge forgot, so that none is tracked,
		// asked and reported again
		`CREATE TABLE billing_forgotten (
			callback_kind    text NOT NULL,
			client_reference text NOT NULL,
			forgotten_at     timestamptz NOT NULL,
			PRIMARY KEY (callback_kind, client_reference)
		)`,
	},
	{ // 5: the tombstone of a forgotten movement lives in the movement's own row, so that
		// Track and Purge conflict on one primary key and a Track waiting for a Purge finds
		// the tombstone it left; the id of the Track call that tracked a movement, so that a
		// Track made again after its answer was lost is known as that call
		`ALTER TABLE billing_movements
			ADD COLUMN forgotten_at timestamptz,
			ADD COLUMN track_id     text NOT NULL DEFAULT ''`,
		`INSERT INTO billing_movements (callback_kind, client_reference, forgotten_at)
			SELECT callback_kind, client_reference, forgotten_at FROM billing_forgotten
			ON CONFLICT (callback_kind, client_reference) DO UPDATE SET forgotten_at = EXCLUDED.forgotten_at`,
		`DROP TABLE billing_forgotten`,
	},
	{ // 6: the callbacks of a tracked movement the status check contradicted, for
		// Reconcile: the first one's claimed state and body, when the first and last came,
		// how many did
		`ALTER TABLE billing_movements
			ADD COLUMN contradictions       integer NOT NULL DEFAULT 0,
			ADD COLUMN contradicted_state   text NOT NULL DEFAULT '',
			ADD COLUMN contradicted_body    bytea,
			ADD COLUMN contradicted_at      timestamptz,
			ADD COLUMN contradicted_last_at timestamptz`,
	},
	{ // 7 (additive: a new table and a new index, nothing an older release reads changes):
		// the operators' actions, which outlive the movements they name; the operator's
		// list, latest first
		// No serial id: an application role has no USAGE on a sequence.
		// IF NOT EXISTS: a schema whose billing_schema_steps was lost reads as version 6,
		// and Migrate applies this version again over what it made.
		`CREATE TABLE IF NOT EXISTS billing_audit (
			callback_kind    text NOT NULL,
			client_reference text NOT NULL,
			action           text NOT NULL,
			actor            text NOT NULL,
			reason           text NOT NULL,
			at               timestamptz NOT NULL,
			before_state     text NOT NULL,
			after_state      text NOT NULL,
			outcome_id       text NOT NULL,
			recorded_at      timestamptz NOT NULL DEFAULT clock_timestamp()
		)`,
		`CREATE INDEX IF NOT EXISTS billing_audit_movement ON billing_audit (callback_kind, client_reference, at, recorded_at)`,
		`CREATE INDEX IF NOT EXISTS billing_movements_listed ON billing_movements ((coalesce(started_at, settled_at)) DESC, callback_kind, client_reference)`,
	},
	{ // 8 (additive: a new table): the Tracker's unsuccessful tries on each movement,
		// the latest storekit.MaxAttempts of each kind (storekit.AttemptLog). n is the
		// movement's checks or report_attempts once the try was counted; started_at,
		// the movement's, tells the tries of a key tracked again from its earlier ones.
		`CREATE TABLE IF NOT EXISTS billing_attempts (
			callback_kind    text NOT NULL,
			client_reference text NOT NULL,
			what             text NOT NULL,
			n                integer NOT NULL,
			started_at       timestamptz NOT NULL,
			at               timestamptz NOT NULL,
			owner            text NOT NULL,
			answer           text NOT NULL,
			error            text NOT NULL,
			PRIMARY KEY (callback_kind, client_reference, what, n)
		)`,
	},
}

// versionTable is the table of the versions applied. It is named for the SDK, not
// schema_migrations, which migration tools of the merchant's own may already own.
const versionTable = `CREATE TABLE IF NOT EXISTS billing_schema_migrations (
	version    integer PRIMARY KEY,
	applied_at timestamptz NOT NULL DEFAULT now()
)`

// lastRecordedVersion is the last version recorded in billing_schema_migrations. Releases
// up to 77dec93 (pgstore/v0.2.0, version 6) refuse to start on a schema whose
// billing_schema_migrations names a version they do not know, so the versions after it
// are recorded in billing_schema_steps; a contraction records there the version a
// release must know (see contractions).
const lastRecordedVersion = 6

// stepsTable records the versions after lastRecordedVersion.
const stepsTable = `CREATE TABLE IF NOT EXISTS billing_schema_steps (
	version    integer PRIMARY KEY,
	applied_at timestamptz NOT NULL DEFAULT now()
)`

// contractions maps a version that drops or changes what an earlier version created to
// the version a release must know to work on the schema after it (the version that made
// the old shape unused). None yet.
var contractions = map[int]int{}

// ErrSchemaOutdated is matched (errors.Is) by New's error when the database's schema is
// older than this package's and the connection's role could not migrate it (an
// application role with only SELECT, INSERT, UPDATE and DELETE): run Migrate with a role
// that owns the schema, then start the instances again.
var ErrSchemaOutdated = errors.New("pgstore: the schema is older than this package's: run pgstore.Migrate with a role that owns the schema")

// Version is the schema version this package reads and writes.
func Version() int { return len(migrations) }

// ErrSchemaAmbiguous is matched (errors.Is) by New's error when no schema is named in
// Options.Schema and the connection's search_path leaves in doubt which schema's tables
// are this application's: its current schema (the first of the path that exists) has
// none, and another schema of the path has some, another application's perhaps (a
// search_path of "$user", public finds public's). Name the schema in Options.Schema, or
// give the connection a search_path whose first schema is this application's.
var ErrSchemaAmbiguous = errors.New("pgstore: the search_path leaves in doubt which schema holds this application's tables")

// quoteIdent quotes a schema's name for a statement.
func quoteIdent(name string) string {
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

// storeSchema is the one schema a store works in: named, which must exist, or else the
// connection's current schema. Without a name, it refuses (ErrSchemaAmbiguous) a path
// on which the current schema holds no tables of the store and another schema does.
func storeSchema(ctx context.Context, db conn, named string) (string, error) {
	if named != "" {
		var exists bool
		if err := db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)`, named).Scan(&exists); err != nil {
			return "", fmt.Errorf("pgstore: reading the schemas: %w", err)
		}
		if !exists {
			return "", fmt.Errorf("pgstore: schema %q (Options.Schema) does not exist: create it first", named)
		}
		return named, nil
	}
	var (
		current   sql.NullString
		own       bool
		elsewhere string
	)
	if err := db.QueryRowContext(ctx, `SELECT current_schema(),
			to_regclass(format('%I.billing_schema_migrations', current_schema())) IS NOT NULL,
			coalesce((SELECT string_agg(p.name, ', ' ORDER BY p.ord)
				FROM unnest(current_schemas(false)) WITH ORDINALITY AS p (name, ord)
				WHERE p.name <> current_schema()
					AND to_regclass(format('%I.billing_schema_migrations', p.name)) IS NOT NULL), '')`).
		Scan(&current, &own, &elsewhere); err != nil {
		return "", fmt.Errorf("pgstore: reading the current schema: %w", err)
	}
	switch {
	case !current.Valid:
		return "", fmt.Errorf("pgstore: no schema of the connection's search_path exists: create one, or name it in Options.Schema")
	case !own && elsewhere != "":
		return "", fmt.Errorf("%w: the current schema %q holds no tables of the store, and %s on the search_path does: name this application's schema in Options.Schema",
			ErrSchemaAmbiguous, current.String, elsewhere)
	}
	return current.String, nil
}

// versions are a schema's versions: the last applied, and the least a release must know
// to work on it.
type versions struct{ applied, required int }

// SchemaVersions are the versions of the store's tables in a schema.
type SchemaVersions struct {
	// Applied is the last version applied: 0 when the tables are not there.
	Applied int
	// Required is the least version a release must know to work on the schema: Applied
	// for the versions up to 6; a later version that only expands the schema leaves it
	// as it was, a contraction raises it.
	Required int
}

// ReadSchemaVersions reads the versions of the store's tables in the schema opts.Schema
// names, or the connection's current schema, with reads only (a read-only session will
// do). This package works on the schema when Required <= Version() <= Applied; New and
// Migrate bring an older one (Applied < Version()) up to it.
func ReadSchemaVersions(ctx context.Context, db *sql.DB, opts Options) (SchemaVersions, error) {
	if db == nil {
		return SchemaVersions{}, &billing.ValidationError{Field: "db", Rule: "is required"}
	}
	c, err := openConn(ctx, db, false)
	if err != nil {
		return SchemaVersions{}, err
	}
	schema, err := storeSchema(ctx, c, opts.Schema)
	if err != nil {
		return SchemaVersions{}, err
	}
	v, err := readVersions(ctx, c, schema)
	return SchemaVersions{Applied: v.applied, Required: v.required}, err
}

// readVersions reads schema's versions from billing_schema_migrations and, when it is
// there, billing_schema_steps.
func readVersions(ctx context.Context, db interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, schema string) (versions, error) {
	var recorded, steps bool
	if err := db.QueryRowContext(ctx, `SELECT to_regclass(format('%I.billing_schema_migrations', $1::text)) IS NOT NULL,
			to_regclass(format('%I.billing_schema_steps', $1::text)) IS NOT NULL`, schema).Scan(&recorded, &steps); err != nil {
		return versions{}, fmt.Errorf("pgstore: reading the schema's version: %w", err)
	}
	if !recorded {
		return versions{}, nil
	}
	var v versions
	if err := db.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM `+quoteIdent(schema)+`.billing_schema_migrations`).Scan(&v.required); err != nil {
		return versions{}, fmt.Errorf("pgstore: reading the schema's version: %w", err)
	}
	v.applied = v.required
	if steps {
		if err := db.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM `+quoteIdent(schema)+`.billing_schema_steps`).Scan(&v.applied); err != nil {
			return versions{}, fmt.Errorf("pgstore: reading the schema's version: %w", err)
		}
		v.applied = max(v.applied, v.required)
	}
	return v, nil
}

// ensureSchema checks that schema's tables are this package's version or a newer
// release's expansion of it, with reads only, and migrates them only when they are older: a role without the right to create
// tables can use a current schema.
func ensureSchema(ctx context.Context, db conn, schema string) error {
	v, err := readVersions(ctx, db, schema)
	switch {
	case err != nil:
		return err
	case v.required > len(migrations):
		return newerSchema(v.required)
	case v.applied >= len(migrations): // a newer release's expansion, or this one's
		return nil
	}
	if err := migrate(ctx, db, schema); err != nil {
		return fmt.Errorf("%w (it is version %d, this package's %d): migrating failed: %w", ErrSchemaOutdated, v.applied, len(migrations), err)
	}
	return nil
}

func newerSchema(v int) error {
	return fmt.Errorf("pgstore: the database's schema is version %d, newer than this package's %d: upgrade the SDK", v, len(migrations))
}

// Migrate creates the store's tables in the connection's current schema, or brings them
// to this package's version, in one transaction. Run it with a role that may create
// tables in the schema (its owner), for instance from a deployment step, so that the
// instances may connect with a role that only reads and writes rows (SELECT, INSERT,
// UPDATE and DELETE on the tables). New runs it too when the schema is older and the
// role may. MigrateWithOptions migrates the schema named in Options.Schema instead.
// It then checks the schema as New does, and returns an error matching
// ErrSchemaDamaged when a table, column or index of an earlier version was dropped or
// changed since: a version applied is never applied again.
//
// A transaction-scoped advisory lock, named after the schema, makes callers that start
// together on an empty database take turns: the first creates the tables, the others
// find them.
func Migrate(ctx context.Context, db *sql.DB) error {
	return MigrateWithOptions(ctx, db, Options{})
}

// MigrateWithOptions is Migrate in the schema opts.Schema names (which must exist), or
// in the connection's current schema when it names none. The other options are not
// read.
func MigrateWithOptions(ctx context.Context, sqlDB *sql.DB, opts Options) error {
	if sqlDB == nil {
		return &billing.ValidationError{Field: "db", Rule: "is required"}
	}
	db, err := openConn(ctx, sqlDB, false)
	if err != nil {
		return err
	}
	schema := opts.Schema
	if schema == "" {
		var current sql.NullString
		if err := db.QueryRowContext(ctx, `SELECT current_schema()`).Scan(&current); err != nil {
			return fmt.Errorf("pgstore: migrating: reading the current schema: %w", err)
		}
		if !current.Valid {
			return fmt.Errorf("pgstore: migrating: no schema of the connection's search_path exists")
		}
		schema = current.String
	} else if _, err := storeSchema(ctx, db, schema); err != nil {
		return err
	}
	if err := migrate(ctx, db, schema); err != nil {
		return err
	}
	return verifySchema(ctx, db, schema)
}

// migrate brings schema's tables to this package's version, its statements pinned to
// schema by the transaction's search_path.
func migrate(ctx context.Context, db conn, schema string) (err error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("pgstore: migrating: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtext('billing-go/pgstore ' || $1::text))`, schema); err != nil {
		return fmt.Errorf("pgstore: migrating: locking: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `SET LOCAL search_path TO `+quoteIdent(schema)); err != nil {
		return fmt.Errorf("pgstore: migrating: %w", err)
	}
	if _, err := tx.ExecContext(ctx, versionTable); err != nil {
		return fmt.Errorf("pgstore: migrating: %w", err)
	}
	current, err := readVersions(ctx, tx, schema)
	if err != nil {
		return fmt.Errorf("pgstore: migrating: %w", err)
	}
	if current.required > len(migrations) {
		return newerSchema(current.required)
	}
	for v := current.applied + 1; v <= len(migrations); v++ {
		for _, stmt := range migrations[v-1] {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("pgstore: migrating to version %d: %w", v, err)
			}
		}
		if err := recordVersion(ctx, tx, v); err != nil {
			return fmt.Errorf("pgstore: migrating to version %d: %w", v, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("pgstore: migrating: %w", err)
	}
	return nil
}

// recordVersion records version v applied, in the transaction that applied it.
func recordVersion(ctx context.Context, tx txConn, v int) error {
	if v <= lastRecordedVersion {
		_, err := tx.ExecContext(ctx, `INSERT INTO billing_schema_migrations (version) VALUES ($1)`, v)
		return err
	}
	if _, err := tx.ExecContext(ctx, stepsTable); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO billing_schema_steps (version) VALUES ($1)`, v); err != nil {
		return err
	}
	if required, ok := contractions[v]; ok {
		_, err := tx.ExecContext(ctx, `INSERT INTO billing_schema_migrations (version) VALUES ($1) ON CONFLICT DO NOTHING`, required)
		return err
	}
	return nil
}
