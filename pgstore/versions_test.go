package pgstore_test

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"

	"github.com/billingsdk/billing-go/pgstore"
)

// recordedVersions reads what the releases up to 77dec93 read, the greatest version of
// billing_schema_migrations (they refuse one they do not know), and every version
// applied, from it and billing_schema_steps.
func recordedVersions(t testing.TB, db *sql.DB) (oldReleasesRead int, applied []int) {
	t.Helper()
	if err := db.QueryRow(`SELECT max(version) FROM billing_schema_migrations`).Scan(&oldReleasesRead); err != nil {
		t.Fatal(err)
	}
	q := `SELECT version FROM billing_schema_migrations`
	var steps bool
	if err := db.QueryRow(`SELECT to_regclass('billing_schema_steps') IS NOT NULL`).Scan(&steps); err != nil {
		t.Fatal(err)
	}
	if steps {
		q += ` UNION SELECT version FROM billing_schema_steps`
	}
	rows, err := db.Query(q + ` ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		applied = append(applied, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return oldReleasesRead, applied
}

// A version that expands the schema keeps the release before starting on it: that
// release reads billing_schema_migrations and refuses a version it does not know, so the
// version is recorded apart, and the release before (here the package without the
// version) accepts the expanded schema. A contraction is recorded where every older
// release reads it, and they refuse the schema it leaves.
func TestExpandingVersionKeepsTheReleaseBeforeStarting(t *testing.T) {
	ctx := context.Background()
	db := freshSchema(t)
	if err := pgstore.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	before := pgstore.Version()
	recorded := min(before, pgstore.LastRecordedVersion) // what the releases up to 77dec93 read
	if old, _ := recordedVersions(t, db); old != recorded {
		t.Fatalf("billing_schema_migrations reads %d; this package is version %d, recorded there up to %d", old, before, pgstore.LastRecordedVersion)
	}

	expand := []string{
		`CREATE TABLE billing_expanded (id text PRIMARY KEY, at timestamptz NOT NULL DEFAULT now())`,
		`ALTER TABLE billing_movements ADD COLUMN expanded text NOT NULL DEFAULT ''`,
		`CREATE INDEX billing_movements_expanded ON billing_movements (expanded)`,
	}
	restore := pgstore.AppendVersion(expand, 0)
	if err := pgstore.Migrate(ctx, db); err != nil {
		restore()
		t.Fatalf("Migrate to an expanding version: %v", err)
	}
	if _, err := pgstore.New(ctx, db); err != nil {
		restore()
		t.Fatalf("New of the new release: %v", err)
	}
	restore()
	old, applied := recordedVersions(t, db)
	if old != recorded || len(applied) != before+1 || applied[before] != before+1 {
		t.Fatalf("after the expanding version: billing_schema_migrations reads %d (want %d), versions applied %v", old, recorded, applied)
	}
	if _, err := pgstore.New(ctx, db); err != nil {
		t.Fatalf("New of the release before, on the expanded schema: %v", err)
	}
	if v, err := pgstore.ReadSchemaVersions(ctx, readOnly(t, db), pgstore.Options{}); err != nil || v != (pgstore.SchemaVersions{Applied: before + 1, Required: recorded}) {
		t.Fatalf("ReadSchemaVersions after the expanding version = %+v, %v; want applied %d, required %d", v, err, before+1, recorded)
	}
	if err := pgstore.Migrate(ctx, db); err != nil {
		t.Fatalf("Migrate of the release before, on the expanded schema: %v", err)
	}

	// A contraction the release before cannot work beside: it refuses to start.
	restore = pgstore.AppendVersion(expand, 0)
	restore2 := pgstore.AppendVersion([]string{`ALTER TABLE billing_movements DROP COLUMN expanded`}, before+2)
	err := pgstore.Migrate(ctx, db)
	restore2()
	restore()
	if err != nil {
		t.Fatalf("Migrate to a contracting version: %v", err)
	}
	if old, _ := recordedVersions(t, db); old != before+2 {
		t.Fatalf("after the contraction, billing_schema_migrations reads %d, want %d", old, before+2)
	}
	if v, err := pgstore.ReadSchemaVersions(ctx, db, pgstore.Options{}); err != nil || v != (pgstore.SchemaVersions{Applied: before + 2, Required: before + 2}) {
		t.Fatalf("ReadSchemaVersions after the contraction = %+v, %v; want applied and required %d", v, err, before+2)
	}
	_, err = pgstore.New(ctx, db)
	if err == nil || !strings.Contains(err.Error(), "newer than this package's") {
		t.Fatalf("New of a release before the contraction = %v, want a refusal", err)
	}
	if errors.Is(err, pgstore.ErrSchemaDamaged) {
		t.Fatalf("New = %v: a newer schema, not a damaged one", err)
	}
}
