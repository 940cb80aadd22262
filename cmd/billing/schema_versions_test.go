package main

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/billingsdk/billing-go/pgstore"
)

// A later release's expanding step (recorded in billing_schema_steps) leaves what this
// command reads in place, so the command keeps working on it during a rolling deploy;
// a contraction (a version in billing_schema_migrations above this command's) does not,
// and the command says to install the matching one.
func TestDatabaseCommandsAcceptALaterExpansionOnly(t *testing.T) {
	url, app, owner := appDatabase(t)
	ctx := context.Background()
	next := pgstore.Version() + 1
	var role string
	require.NoError(t, app.QueryRowContext(ctx, `SELECT current_user`).Scan(&role))

	// The later release's Migrate creates the steps table; the application's role is
	// granted it as docs/durable.md says for every table Migrate creates.
	for _, stmt := range []string{
		`CREATE TABLE IF NOT EXISTS billing_schema_steps (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`,
		`GRANT SELECT ON billing_schema_steps TO ` + role,
	} {
		_, err := owner.ExecContext(ctx, stmt)
		require.NoError(t, err, stmt)
	}
	_, err := owner.ExecContext(ctx, `INSERT INTO billing_schema_steps (version) VALUES ($1)`, next)
	require.NoError(t, err)
	stdout, stderr, code := billingOnce(t, "movements", "--database-url", url)
	require.Equal(t, 0, code, "an expanded schema: stdout %q stderr %q", stdout, stderr)

	_, err = owner.ExecContext(ctx, `INSERT INTO billing_schema_migrations (version) VALUES ($1)`, next)
	require.NoError(t, err)
	_, stderr, code = billingOnce(t, "movements", "--database-url", url)
	require.NotEqual(t, 0, code)
	require.Contains(t, stderr, fmt.Sprintf("requires version %d, newer than this command's %d", next, pgstore.Version()))
}
