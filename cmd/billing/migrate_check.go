package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/billingsdk/billing-go/pgstore"
)

// migrateAnswer is billing migrate's --json output.
type migrateAnswer struct {
	Schema      string   `json:"schema,omitempty"`
	Version     int      `json:"version"`
	Differences []string `json:"differences"`
}

// runMigrate migrates pgstore's schema, or with --check only checks it, as New does.
func runMigrate(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "billing migrate", "billing migrate [--check] [--schema S] [flags]", `
Brings pgstore's tables to this release's version (pgstore.Migrate), then checks them as
pgstore.New does: every table, column, type, default and index the store relies on, as this
release's migrations create them. With --check it changes nothing and only checks (the
check builds the expected tables as temporary tables in a transaction it rolls back). Run it
with the role that owns the schema; --check needs only the application role.

A damaged schema is listed, one difference a line, and exits 1. Migrate before rolling the
instances out: a migration expands the schema, and the release before keeps working on it.`)
	databaseURL := addDatabaseFlag(fs, e)
	check := fs.Bool("check", false, "only check the schema: change nothing")
	schema := fs.String("schema", "", "the schema of pgstore's tables (pgstore.Options.Schema); empty is the connection's current schema")
	timeout := fs.Duration("timeout", time.Minute, "give up after this long")
	asJSON := fs.Bool("json", false, "print the result as JSON: the schema's differences, none when it is sound")
	positional, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(positional) > 0 {
		return usagef("migrate takes only flags, not %q", positional[0])
	}
	if *databaseURL == "" {
		return usagef("--database-url is required (or DATABASE_URL): the PostgreSQL database your Tracker's pgstore uses, e.g. postgres://owner@localhost/shop")
	}
	if *timeout <= 0 {
		return usagef("--timeout must be positive, not %v", *timeout)
	}
	cfg, err := pgx.ParseConfig(*databaseURL)
	if err != nil {
		return usagef("--database-url: %v", err)
	}
	cfg.RuntimeParams["application_name"] = "billing migrate"
	db := stdlib.OpenDB(*cfg)
	defer db.Close()
	db.SetMaxOpenConns(1)
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	opts := pgstore.Options{Schema: *schema}
	if *check {
		err = pgstore.CheckSchema(ctx, db, opts)
	} else {
		err = pgstore.MigrateWithOptions(ctx, db, opts)
	}
	var damaged *pgstore.SchemaDamagedError
	isDamaged := errors.As(err, &damaged)
	if err != nil && !isDamaged {
		return err
	}
	answer := migrateAnswer{Version: pgstore.Version(), Differences: []string{}}
	if isDamaged {
		answer.Schema, answer.Differences = damaged.Schema, damaged.Differences
	}
	switch {
	case *asJSON:
		if err := writeJSON(e.stdout, answer); err != nil {
			return err
		}
	case isDamaged:
		fmt.Fprintf(e.stdout, "schema %q is damaged: %d difference(s) from pgstore's version %d\n", damaged.Schema, len(damaged.Differences), pgstore.Version())
		for _, d := range damaged.Differences {
			fmt.Fprintf(e.stdout, "  %s\n", d)
		}
	default:
		fmt.Fprintf(e.stdout, "schema ok: pgstore's version %d, every table, column and index as this release creates them\n", pgstore.Version())
	}
	if isDamaged {
		return fmt.Errorf("the schema is damaged: restore it from a backup, or put back what is listed as pgstore.Migrate creates it")
	}
	return nil
}
