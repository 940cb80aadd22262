package pgstore_test

import (
	"context"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/billingsdk/billing-go/pgstore"
)

// tableNames are the store's table names a text mentions.
var tableNames = regexp.MustCompile(`\bbilling_[a-z_]+\b`)

// numberWords spells the counts a doc may write in words.
var numberWords = []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"}

// The tables the package doc and docs/durable.md list, and the count they grant rights
// on, are the tables Migrate creates: an application role granted exactly what the docs
// say can use the store.
func TestDocsListTheTablesMigrateCreates(t *testing.T) {
	db := freshSchema(t)
	ctx := context.Background()
	if err := pgstore.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	rows, err := db.QueryContext(ctx, `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY table_name`)
	if err != nil {
		t.Fatal(err)
	}
	var created []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		created = append(created, name)
	}
	if err := rows.Err(); err != nil || len(created) == 0 {
		t.Fatalf("reading the tables: %v, %v", created, err)
	}

	src, err := os.ReadFile("store.go")
	if err != nil {
		t.Fatal(err)
	}
	pkgDoc := string(src[:strings.Index(string(src), "\npackage pgstore")])
	durable, err := os.ReadFile("../docs/durable.md")
	if err != nil {
		t.Fatal(err)
	}

	for where, text := range map[string]string{"pgstore's package doc": pkgDoc, "docs/durable.md": string(durable)} {
		flat := strings.Join(strings.Fields(text), " ")
		start := strings.Index(flat, "The tables (")
		if start < 0 {
			t.Fatalf("%s no longer lists the tables", where)
		}
		list := flat[start : start+strings.Index(flat[start:], ")")]
		listed := tableNames.FindAllString(list, -1)
		slices.Sort(listed)
		if !slices.Equal(created, listed) {
			t.Errorf("%s lists the tables %v; Migrate creates %v", where, listed, created)
		}
		for _, m := range regexp.MustCompile(`\b(\w+) tables\b`).FindAllStringSubmatch(flat, -1) {
			if n := slices.Index(numberWords, strings.ToLower(m[1])); n >= 0 && n != len(created) {
				t.Errorf("%s speaks of %q; Migrate creates %d tables", where, m[0], len(created))
			}
		}
	}
}
