package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"
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
