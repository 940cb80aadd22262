package pgstore_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/billingsdk/billing-go/pgstore"
	"github.com/billingsdk/billing-go/storekit"
)

// openPath opens a pool on the test database as role (the test's own when empty) with
// search_path path.
func openPath(t testing.TB, role, path string) *sql.DB {
	t.Helper()
	cfg, err := pgx.ParseConfig(databaseURL(t))
	if err != nil {
		t.Fatal(err)
	}
	if role != "" {
		cfg.User = role
	}
	cfg.RuntimeParams["search_path"] = path
	db := stdlib.OpenDB(*cfg)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// application tracks and settles, in one application's store, a movement under a
// reference every application uses, with an amount of its own.
func application(t *testing.T, s *pgstore.Store, ref string, amount int64) storekit.Settlement {
	t.Helper()
	ctx := context.Background()
	t0 := time.Date(2025, 7, 1, 9, 0, 0, 0, time.UTC)
	m := storekit.Movement{Kind: storekit.KindSend, ClientReference: ref, StartedAt: t0, Deadline: t0.Add(5 * time.Minute)}
	if _, created, err := s.Track(ctx, m); err != nil || !created {
		t.Fatalf("Track(%s) = %v, %v; want it tracked afresh", ref, created, err)
	}
	st, _, err := s.Settle(ctx, m.Key(), storekit.Outcome{State: storekit.StateSucceeded, Source: storekit.SourceStatusCheck, Amount: amount, At: t0.Add(time.Minute)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// claimsOnly checks that s's claim of unreported outcomes holds its own alone.
func claimsOnly(t *testing.T, what string, s *pgstore.Store, want storekit.Settlement) {
	t.Helper()
	t0 := time.Date(2025, 7, 1, 10, 0, 0, 0, time.UTC)
	got, err := s.ClaimUnreported(context.Background(), what, t0, t0.Add(time.Minute), 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].ID != want.ID || got[0].Outcome.Amount != want.Outcome.Amount {
		t.Fatalf("%s claimed %+v; want its own outcome alone", what, got)
	}
}

// rows counts the movements in schema's table.
func rows(t *testing.T, admin *sql.DB, schema string) int {
	t.Helper()
	var n int
	if err := admin.QueryRow(`SELECT count(*) FROM ` + pgx.Identifier{schema}.Sanitize() + `.billing_movements`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// Two applications on one database, each in its schema: the store works in exactly one
// schema, and refuses a search_path that leaves in doubt which. An application whose path
// names its own empty schema first and another application's after it is refused
// (ErrSchemaAmbiguous) rather than given the other's tables; named in Options.Schema, its
// schema is migrated and used, whatever the path says, and neither application claims
// the other's outcomes. Before, New found the other application's tables through the
// path and every statement used them.
func TestTwoApplicationsOnOneDatabase(t *testing.T) {
	ctx := context.Background()
	otherDB, other := freshSchemaNamed(t)
	otherStore, err := pgstore.New(ctx, otherDB)
	if err != nil {
		t.Fatal(err)
	}
	admin, own := freshSchemaNamed(t)

	if _, err := pgstore.New(ctx, openPath(t, "", own+", "+other)); !errors.Is(err, pgstore.ErrSchemaAmbiguous) {
		t.Fatalf("New on the path %s, %s with the tables in %s alone: %v; want ErrSchemaAmbiguous", own, other, other, err)
	}
	if n := rows(t, admin, other); n != 0 {
		t.Fatalf("the refused New wrote %d rows to the other application's tables", n)
	}
	// Named, even on a path that names the other application's schema alone.
	ownStore, err := pgstore.NewWithOptions(ctx, openPath(t, "", other), pgstore.Options{Schema: own})
	if err != nil {
		t.Fatal(err)
	}
	mine, theirs := application(t, ownStore, "shared1", 111), application(t, otherStore, "shared1", 222)
	if rows(t, admin, own) != 1 || rows(t, admin, other) != 1 {
		t.Fatalf("rows: %d in %s, %d in %s; want one each", rows(t, admin, own), own, rows(t, admin, other), other)
	}
	claimsOnly(t, "own", ownStore, mine)
	claimsOnly(t, "other", otherStore, theirs)
	// Once its schema holds the tables, the path that names it first is no longer in
	// doubt: its current schema is the application's.
	again, err := pgstore.New(ctx, openPath(t, "", own+", "+other))
	if err != nil {
		t.Fatalf("New on the path %s, %s once %s is migrated: %v", own, other, own, err)
	}
	if e, err := again.Get(ctx, storekit.MovementKey{Callback: storekit.CallbackPayout, ClientReference: "shared1"}); err != nil || e.Final == nil || e.Final.ID != mine.ID || e.Final.Outcome.Amount != mine.Outcome.Amount {
		t.Fatalf("the application's movement read through the path: %+v, %v", e, err)
	}
	if _, err := pgstore.NewWithOptions(ctx, admin, pgstore.Options{Schema: own + "_missing"}); err == nil {
		t.Fatal("New accepted a schema that does not exist")
	}
}

// PostgreSQL's default search_path, "$user", public: an application whose role has a
// schema of its name, empty, beside another application's tables in public, is refused
// rather than given public's tables. Named in Options.Schema, or once migrated there, its
// schema is its alone.
func TestUserSchemaBesidePublic(t *testing.T) {
	ctx := context.Background()
	admin := freshSchema(t)
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	role := "billing_user_" + hex.EncodeToString(b)
	for _, stmt := range []string{
		"CREATE ROLE " + role + " LOGIN",
		"CREATE SCHEMA " + role + " AUTHORIZATION " + role,
	} {
		if _, err := admin.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	t.Cleanup(func() {
		for _, stmt := range []string{"DROP OWNED BY " + role + " CASCADE", "DROP ROLE " + role} {
			if _, err := admin.Exec(stmt); err != nil {
				t.Errorf("%s: %v", stmt, err)
			}
		}
	})
	// The other application, in public.
	publicDB := openPath(t, "", "public")
	t.Cleanup(func() {
		for _, table := range []string{"billing_movements", "billing_callbacks", "billing_callback_dedupe", "billing_audit", "billing_schema_migrations"} {
			if _, err := admin.Exec("DROP TABLE IF EXISTS public." + table); err != nil {
				t.Errorf("dropping public.%s: %v", table, err)
			}
		}
	})
	publicStore, err := pgstore.New(ctx, publicDB)
	if err != nil {
		t.Fatal(err)
	}
	// The other application lets every role of the database use its tables: nothing
	// but the store itself keeps this one from them.
	for _, stmt := range []string{"GRANT USAGE ON SCHEMA public TO " + role,
		"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO " + role} {
		if _, err := admin.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}

	const path = `"$user", public`
	if _, err := pgstore.New(ctx, openPath(t, role, path)); !errors.Is(err, pgstore.ErrSchemaAmbiguous) {
		t.Fatalf("New as %s on %s with the tables in public alone: %v; want ErrSchemaAmbiguous", role, path, err)
	}
	userStore, err := pgstore.NewWithOptions(ctx, openPath(t, role, path), pgstore.Options{Schema: role})
	if err != nil {
		t.Fatal(err)
	}
	mine, theirs := application(t, userStore, "shared2", 111), application(t, publicStore, "shared2", 222)
	claimsOnly(t, "user", userStore, mine)
	claimsOnly(t, "public", publicStore, theirs)
	if _, err := pgstore.New(ctx, openPath(t, role, path)); err != nil {
		t.Fatalf("New as %s on %s once its schema is migrated: %v", role, path, err)
	}
	if rows(t, admin, role) != 1 || rows(t, admin, "public") != 1 {
		t.Fatalf("rows: %d in %s, %d in public; want one each", rows(t, admin, role), role, rows(t, admin, "public"))
	}
}
