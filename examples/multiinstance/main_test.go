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
	url := os.Getenv("DATABASE_URL")
	if url == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("no PostgreSQL: run scripts/pgtest.sh")
		}
		t.Skip("no PostgreSQL: set DATABASE_URL, or run scripts/pgtest.sh")
	}
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
	url := os.Getenv("DATABASE_URL")
	if url == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("no PostgreSQL: run scripts/pgtest.sh")
		}
		t.Skip("no PostgreSQL: set DATABASE_URL, or run scripts/pgtest.sh")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// The test's own statements are unprepared, as pgstore's are, so that they run
	// through a transaction pooler too.
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	db, err := sql.Open("pgx", url+sep+"default_query_exec_mode=exec")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// The application's own tables, as its pgstore made them in the connection's current
	// schema (public, for a role with the default search_path). The URL sets no
	// search_path: a transaction pooler such as pgbouncer refuses one as a startup
	// parameter, and this test runs through one too.
	var app string
	if err := db.QueryRowContext(ctx, `SELECT current_schema()`).Scan(&app); err != nil {
		t.Fatal(err)
	}
	if err := pgstore.Migrate(ctx, db); err != nil {
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
	var out bytes.Buffer
	if err := run(ctx, &out, url); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if after := count(app); after != before {
		t.Errorf("the example wrote %d rows into the application's tables", after-before)
	}
	if count(Schema) == 0 {
		t.Error("the example wrote nothing into its own schema")
	}
}
