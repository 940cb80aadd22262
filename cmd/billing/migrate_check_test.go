package main

import (
	"context"
	"encoding/json"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/billingsdk/billing-go/pgstore"
)

// billing migrate --check says a sound schema is sound and exits 0, and lists a damaged
// one's differences by name and exits 1, changing nothing; billing migrate refuses it too.
func TestMigrateCheck(t *testing.T) {
	u, _, owner := appDatabase(t)
	stdout, stderr, code := billingOnce(t, "migrate", "--check", "--database-url", u)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "schema ok")

	for _, damage := range []string{
		`ALTER TABLE billing_movements DROP COLUMN track_id`,
		`ALTER TABLE billing_callbacks ALTER COLUMN body TYPE text`,
		`DROP TABLE billing_callback_dedupe`,
	} {
		_, err := owner.ExecContext(context.Background(), damage)
		require.NoError(t, err, damage)
	}
	// Migrating needs the schema's owner: the test's superuser on the same schema.
	ownerURL, err := url.Parse(u)
	require.NoError(t, err)
	base, err := url.Parse(databaseURL(t))
	require.NoError(t, err)
	ownerURL.User = base.User
	for _, args := range [][]string{{"migrate", "--check", "--database-url", u}, {"migrate", "--database-url", ownerURL.String()}} {
		stdout, stderr, code = billingOnce(t, args...)
		assert.Equal(t, 1, code, "%v: %s", args, stderr)
		for _, want := range []string{
			"column billing_movements.track_id is missing",
			"column billing_callbacks.body is text NOT NULL, want bytea NOT NULL",
			"table billing_callback_dedupe is missing",
		} {
			assert.Contains(t, stdout, want, args)
		}
		assert.Contains(t, stderr, "the schema is damaged", args)
	}
	stdout, _, code = billingOnce(t, "migrate", "--check", "--json", "--database-url", u)
	assert.Equal(t, 1, code)
	var answer migrateAnswer
	require.NoError(t, json.Unmarshal([]byte(stdout), &answer), stdout)
	assert.Len(t, answer.Differences, 3, stdout)
	assert.Equal(t, pgstore.Version(), answer.Version)
	_, stderr, code = billingOnce(t, "migrate", "--check", "extra")
	assert.Equal(t, 2, code, stderr)
}
