package pgstore_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/pgstore"
	"github.com/billingsdk/billing-go/storekit"
	"github.com/billingsdk/billing-go/storetest"
)

// roles is a schema of its own with two login roles on it: owner may create tables in
// it, app may only use it (and is granted SELECT, INSERT, UPDATE and DELETE on its
// tables by grantApp), as a deployment would set them up.
type roles struct {
	t      testing.TB
	admin  *sql.DB // the test's superuser, on the schema
	schema string
	owner  string
	app    string
}

func newRoles(t testing.TB) *roles {
	t.Helper()
	admin, schema := freshSchemaNamed(t)
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	suffix := hex.EncodeToString(b)
	r := &roles{t: t, admin: admin, schema: schema, owner: "billing_owner_" + suffix, app: "billing_app_" + suffix}
	for _, stmt := range []string{
		"CREATE ROLE " + r.owner + " LOGIN",
		"CREATE ROLE " + r.app + " LOGIN",
		"GRANT USAGE, CREATE ON SCHEMA " + schema + " TO " + r.owner,
		"GRANT USAGE ON SCHEMA " + schema + " TO " + r.app,
		// The tables the owner creates are the app's to read and write, not to alter.
		"ALTER DEFAULT PRIVILEGES FOR ROLE " + r.owner + " IN SCHEMA " + schema +
			" GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO " + r.app,
	} {
		if _, err := admin.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	t.Cleanup(func() {
		for _, role := range []string{r.app, r.owner} {
			for _, stmt := range []string{"DROP OWNED BY " + role + " CASCADE", "DROP ROLE " + role} {
				if _, err := admin.Exec(stmt); err != nil {
					t.Errorf("%s: %v", stmt, err)
				}
			}
		}
	})
	return r
}

// as opens a pool on the schema that logs in as role.
func (r *roles) as(role string) *sql.DB {
	cfg, err := pgx.ParseConfig(databaseURL(r.t))
	if err != nil {
		r.t.Fatal(err)
	}
	cfg.User = role
	cfg.RuntimeParams["search_path"] = r.schema
	db := stdlib.OpenDB(*cfg)
	r.t.Cleanup(func() { _ = db.Close() }) // before the roles are dropped
	return db
}

// tables lists the schema's tables.
func (r *roles) tables() []string {
	rows, err := r.admin.Query(`SELECT tablename FROM pg_tables WHERE schemaname = $1 ORDER BY tablename`, r.schema)
	if err != nil {
		r.t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			r.t.Fatal(err)
		}
		out = append(out, name)
	}
	return out
}

// An application role with only SELECT, INSERT, UPDATE and DELETE cannot create the
// schema: New says to run Migrate, and creates nothing. Once the owner ran Migrate, New
// works for it, and so does every call of the store.
func TestApplicationRoleOnAMigratedSchema(t *testing.T) {
	r := newRoles(t)
	ctx := context.Background()
	app := r.as(r.app)

	_, err := pgstore.New(ctx, app)
	if !errors.Is(err, pgstore.ErrSchemaOutdated) || !strings.Contains(err.Error(), "pgstore.Migrate") {
		t.Fatalf("New as the application role on an empty schema: %v; want ErrSchemaOutdated naming pgstore.Migrate", err)
	}
	if got := r.tables(); len(got) != 0 {
		t.Fatalf("a refused New left tables: %v", got)
	}

	if err := pgstore.Migrate(ctx, r.as(r.owner)); err != nil {
		t.Fatalf("Migrate as the owner: %v", err)
	}
	store, err := pgstore.New(ctx, app)
	if err != nil {
		t.Fatalf("New as the application role on a migrated schema: %v", err)
	}
	// Every kind of statement the store runs, with the application's rights alone.
	t0 := time.Now()
	m := storekit.Movement{Kind: storekit.KindSend, ClientReference: "leastPrivilege1", StartedAt: t0, Deadline: t0.Add(time.Millisecond)}
	if _, _, err := store.Track(ctx, m); err != nil {
		t.Fatal(err)
	}
	c := storekit.Callback{Key: m.Key(), DedupeKey: "payout/leastPrivilege1", Body: []byte(`{}`), At: t0}
	if _, err := store.BeginCallback(ctx, c, "app", t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	o := storekit.Outcome{State: storekit.StateSucceeded, Source: storekit.SourceCallback, At: t0}
	if _, _, err := store.Settle(ctx, m.Key(), o, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	if err := store.FinishCallback(ctx, c.DedupeKey, "app", true, t0); err != nil {
		t.Fatal(err)
	}
	fulfil := store.OnOutcomeTx(func(context.Context, *sql.Tx, *billing.Outcome) error { return nil })
	if err := fulfil(ctx, &billing.Outcome{ID: "payout/succeeded/leastPrivilege1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Purge(ctx, time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Reconcile(ctx, t0.Add(-time.Hour), t0.Add(time.Hour), time.Now()); err != nil {
		t.Fatal(err)
	}

	// A schema older than the package's (here: its last version not recorded) is the
	// owner's to migrate: the application role says so and changes nothing.
	last := "billing_schema_migrations"
	if pgstore.Version() > pgstore.LastRecordedVersion {
		last = "billing_schema_steps"
	}
	if _, err := r.admin.Exec(`DELETE FROM `+last+` WHERE version = $1`, pgstore.Version()); err != nil {
		t.Fatal(err)
	}
	if _, err := pgstore.New(ctx, app); !errors.Is(err, pgstore.ErrSchemaOutdated) {
		t.Fatalf("New as the application role on an older schema: %v; want ErrSchemaOutdated", err)
	}
	if v, err := pgstore.ReadSchemaVersions(ctx, r.admin, pgstore.Options{Schema: r.schema}); err != nil || v.Applied != pgstore.Version()-1 {
		t.Fatalf("versions after a refused New: %+v, %v", v, err)
	}
}

// The conformance suite, with the application's rights alone on a schema the owner
// migrated.
func TestStoreConformanceAsApplicationRole(t *testing.T) {
	databaseURL(t)
	storetest.Run(t, func(t *testing.T) storekit.Store {
		r := newRoles(t)
		if err := pgstore.Migrate(context.Background(), r.as(r.owner)); err != nil {
			t.Fatal(err)
		}
		return newTestStore(t, r.as(r.app))
	})
}

// The owner's role migrates an empty schema through New as well; a newer schema is
// refused by both.
func TestOwnerRoleMigratesThroughNew(t *testing.T) {
	r := newRoles(t)
	ctx := context.Background()
	if _, err := pgstore.New(ctx, r.as(r.owner)); err != nil {
		t.Fatalf("New as the owner on an empty schema: %v", err)
	}
	if got := r.tables(); len(got) != 7 {
		t.Fatalf("tables after New as the owner: %v", got)
	}
	if _, err := r.admin.Exec(`INSERT INTO billing_schema_migrations (version) VALUES ($1)`, pgstore.Version()+1); err != nil {
		t.Fatal(err)
	}
	for _, role := range []string{r.owner, r.app} {
		if _, err := pgstore.New(ctx, r.as(role)); err == nil || errors.Is(err, pgstore.ErrSchemaOutdated) {
			t.Fatalf("New as %s on a newer schema: %v; want the newer schema refused", role, err)
		}
	}
	if err := pgstore.Migrate(ctx, r.as(r.owner)); err == nil {
		t.Fatal("Migrate accepted a newer schema")
	}
}
