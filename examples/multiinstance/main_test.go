package main

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/billingsdk/billing-go/pgstore"
)

// The example against CI's database (scripts/pgtest.sh sets DATABASE_URL); without
// one it skips, except under CI=true, where it fails.
func TestMultiInstance(t *testing.T) {
	url := databaseURL(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out bytes.Buffer
	if err := run(ctx, &out, url); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{
		"instance A awaited multi",
		"succeeded by callback, received by instance B",
		"restarted instance C reported left",
		"succeeded by status_check",
		"0 overdue",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// Pointed at an application's database, the example writes into a schema of
// its own: the application's tables gain no row.
func TestMultiInstanceLeavesTheAppsTablesAlone(t *testing.T) {
	url := databaseURL(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// The test's own statements are unprepared, as pgstore's are, so that they run
	// through a transaction pooler too.
	db, err := sql.Open("pgx", withParam(url, "default_query_exec_mode", "exec"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// The application's own schema and tables, as its pgstore made them.
	const app = "shop_app"
	if _, err := db.ExecContext(ctx, `CREATE SCHEMA IF NOT EXISTS `+app); err != nil {
		t.Fatal(err)
	}
	if err := pgstore.MigrateWithOptions(ctx, db, pgstore.Options{Schema: app}); err != nil {
		t.Fatal(err)
	}
	count := func(schema string) int {
		var n int
		if err := db.QueryRowContext(ctx, `SELECT count(*) FROM `+schema+`.billing_movements`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := count(app)
	// The app's schema first on the search path, as an app's role would have it. A
	// transaction pooler refuses search_path as a startup parameter: through one (CI runs
	// this test through pgbouncer too) the example is given the URL as it is.
	runURL := withParam(url, "search_path", app)
	if url == os.Getenv("BILLING_TEST_POOLER_URL") {
		runURL = url
	}
	var out bytes.Buffer
	if err := run(ctx, &out, runURL); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if after := count(app); after != before {
		t.Errorf("the example wrote %d rows into the application's tables", after-before)
	}
	if count(Schema) == 0 {
		t.Error("the example wrote nothing into its own schema")
	}
}

// databaseURL is CI's database (scripts/pgtest.sh sets DATABASE_URL); without one the
// test skips, except under CI=true, where it fails.
func databaseURL(t *testing.T) string {
	t.Helper()
	url := os.Getenv("DATABASE_URL")
	if url == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("no PostgreSQL: run scripts/pgtest.sh")
		}
		t.Skip("no PostgreSQL: set DATABASE_URL, or run scripts/pgtest.sh")
	}
	return url
}

// withParam returns the connection URL with the parameter key set to value.
func withParam(url, key, value string) string {
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	return url + sep + key + "=" + value
}
