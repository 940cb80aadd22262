package pgstore_test

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/billingsdk/billing-go/pgstore"
)

// Each way of damaging a migrated schema, and what the refusal must name. New, Migrate
// and CheckSchema refuse it alike, changing nothing.
var schemaDamages = []struct {
	name, damage string
	names        []string
}{
	{"dedupe table dropped", `DROP TABLE billing_callback_dedupe`, []string{"table billing_callback_dedupe is missing"}},
	{"track_id dropped", `ALTER TABLE billing_movements DROP COLUMN track_id`, []string{"column billing_movements.track_id is missing"}},
	{"body made text", `ALTER TABLE billing_callbacks ALTER COLUMN body TYPE text`, []string{"column billing_callbacks.body is text NOT NULL, want bytea NOT NULL"}},
	{"index dropped", `DROP INDEX billing_movements_due`, []string{"index billing_movements_due on billing_movements", "is missing"}},
	{"unique index made plain", `DROP INDEX billing_movements_outcome; CREATE INDEX billing_movements_outcome ON billing_movements (outcome_id)`, []string{"index billing_movements_outcome is on billing_movements USING btree (outcome_id), want on billing_movements UNIQUE USING btree (outcome_id)"}},
	{"default dropped", `ALTER TABLE billing_movements ALTER COLUMN checks DROP DEFAULT`, []string{"column billing_movements.checks is integer NOT NULL, want integer NOT NULL DEFAULT 0"}},
	{"NOT NULL dropped", `ALTER TABLE billing_callbacks ALTER COLUMN deliveries DROP NOT NULL`, []string{"column billing_callbacks.deliveries is integer, want integer NOT NULL"}},
}

func TestDamagedSchemaIsRefused(t *testing.T) {
	ctx := context.Background()
	for _, tc := range schemaDamages {
		t.Run(tc.name, func(t *testing.T) {
			db := freshSchema(t)
			if _, err := pgstore.New(ctx, db); err != nil {
				t.Fatalf("New on an empty schema: %v", err)
			}
			if err := pgstore.CheckSchema(ctx, db, pgstore.Options{}); err != nil {
				t.Fatalf("CheckSchema on a sound schema: %v", err)
			}
			if _, err := db.ExecContext(ctx, tc.damage); err != nil {
				t.Fatalf("%s: %v", tc.damage, err)
			}
			_, newErr := pgstore.New(ctx, db)
			for what, err := range map[string]error{
				"New":         newErr,
				"Migrate":     pgstore.Migrate(ctx, db),
				"CheckSchema": pgstore.CheckSchema(ctx, db, pgstore.Options{}),
			} {
				var damaged *pgstore.SchemaDamagedError
				if !errors.Is(err, pgstore.ErrSchemaDamaged) || !errors.As(err, &damaged) {
					t.Errorf("%s after %q = %v, want a *SchemaDamagedError", what, tc.damage, err)
					continue
				}
				for _, name := range tc.names {
					if !strings.Contains(err.Error(), name) {
						t.Errorf("%s's error %q does not name %q", what, err, name)
					}
				}
				if len(damaged.Differences) != 1 {
					t.Errorf("%s lists %d differences for one damage: %q", what, len(damaged.Differences), damaged.Differences)
				}
			}
		})
	}
}

// A schema a newer release expanded (a table, a column with its default, an index
// added) is no damage: the releases before it keep working beside it.
func TestExpandedSchemaIsAccepted(t *testing.T) {
	ctx := context.Background()
	db := freshSchema(t)
	if _, err := pgstore.New(ctx, db); err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
		`CREATE TABLE billing_later (id text PRIMARY KEY)`,
		`ALTER TABLE billing_movements ADD COLUMN later text NOT NULL DEFAULT ''`,
		`CREATE INDEX billing_movements_later ON billing_movements (later)`,
	} {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := pgstore.New(ctx, db); err != nil {
		t.Fatalf("New on an expanded schema: %v", err)
	}
	if err := pgstore.CheckSchema(ctx, db, pgstore.Options{}); err != nil {
		t.Fatalf("CheckSchema on an expanded schema: %v", err)
	}
}

// Every table, column and index Migrate creates, dropped alone, is refused by name: the
// list comes from the catalog of a migrated schema, so what a later migration adds is
// covered at once.
func TestEveryDroppedPartIsNamed(t *testing.T) {
	ctx := context.Background()
	db := freshSchema(t)
	if err := pgstore.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	type part struct{ drop, named string }
	var parts []part
	rows, err := db.QueryContext(ctx, `SELECT table_name, column_name FROM information_schema.columns
		WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position`)
	if err != nil {
		t.Fatal(err)
	}
	tables := map[string]bool{}
	for rows.Next() {
		var table, column string
		if err := rows.Scan(&table, &column); err != nil {
			t.Fatal(err)
		}
		if !tables[table] {
			tables[table] = true
			parts = append(parts, part{"DROP TABLE " + table, "table " + table + " is missing"})
		}
		parts = append(parts, part{"ALTER TABLE " + table + " DROP COLUMN " + column + " CASCADE", "column " + table + "." + column + " is missing"})
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows, err = db.QueryContext(ctx, `SELECT indexname FROM pg_indexes
		WHERE schemaname = current_schema() AND indexname NOT LIKE '%_pkey' ORDER BY indexname`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var index string
		if err := rows.Scan(&index); err != nil {
			t.Fatal(err)
		}
		parts = append(parts, part{"DROP INDEX " + index, "index " + index + " "})
	}
	if err := rows.Err(); err != nil || len(parts) < 50 {
		t.Fatalf("listing the schema's parts: %d, %v", len(parts), err)
	}
	for _, p := range parts {
		recovers := false
		switch p.named {
		case "table billing_schema_migrations is missing":
			continue // New and Migrate create it again, as on a schema never migrated
		case "table billing_schema_steps is missing":
			// The schema reads as the last version recorded before it: older, and
			// Migrate applies the later versions again, each of which only adds what
			// is not there.
			p.named, recovers = "the schema is older than this package's", true
		case "column billing_schema_migrations.version is missing", "column billing_schema_steps.version is missing":
			p.named = `column "version" does not exist` // read before the check, by the statement that fails
		}
		db := freshSchema(t)
		if err := pgstore.Migrate(ctx, db); err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(ctx, p.drop); err != nil {
			t.Fatalf("%s: %v", p.drop, err)
		}
		err := pgstore.CheckSchema(ctx, db, pgstore.Options{})
		if err == nil || !strings.Contains(err.Error(), p.named) {
			t.Errorf("after %s, CheckSchema = %v; want an error naming %q", p.drop, err, p.named)
		}
		if recovers {
			if err := pgstore.Migrate(ctx, db); err != nil {
				t.Errorf("after %s, Migrate = %v", p.drop, err)
			} else if err := pgstore.CheckSchema(ctx, db, pgstore.Options{}); err != nil {
				t.Errorf("after %s and Migrate, CheckSchema = %v", p.drop, err)
			}
		}
		_ = db.Close() // its connections go now, not at the end of the test: a part per table and column adds up
	}
	t.Logf("%d parts dropped one at a time, each refused by name", len(parts))
}

// In a read-only session the check cannot build its temporary tables: New skips it (a
// store that cannot write spoils nothing), CheckSchema says why it cannot check.
func TestSchemaCheckInAReadOnlySession(t *testing.T) {
	ctx := context.Background()
	db := freshSchema(t)
	if err := pgstore.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	ro := readOnly(t, db)
	if _, err := pgstore.New(ctx, ro); err != nil {
		t.Fatalf("New in a read-only session: %v", err)
	}
	if err := pgstore.CheckSchema(ctx, ro, pgstore.Options{}); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Fatalf("CheckSchema in a read-only session = %v, want an error saying it is read-only", err)
	}
}

// readOnly opens db's schema again in sessions whose transactions are read-only.
func readOnly(t *testing.T, db *sql.DB) *sql.DB {
	t.Helper()
	var schema string
	if err := db.QueryRow(`SELECT current_schema()`).Scan(&schema); err != nil {
		t.Fatal(err)
	}
	cfg, err := pgx.ParseConfig(databaseURL(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.RuntimeParams["search_path"] = schema
	cfg.RuntimeParams["default_transaction_read_only"] = "on"
	ro := stdlib.OpenDB(*cfg)
	t.Cleanup(func() { _ = ro.Close() })
	return ro
}
