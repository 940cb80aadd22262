package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
	"github.com/billingsdk/billing-go/pgstore"
)

// databaseURL is CI's database (scripts/pgtest.sh sets it); without one the
// test skips, except under CI=true, where it fails.
func databaseURL(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"BILLING_TEST_DATABASE_URL", "DATABASE_URL"} {
		if u := os.Getenv(name); u != "" {
			return u
		}
	}
	const how = "no PostgreSQL: set DATABASE_URL, or run scripts/pgtest.sh bash -c 'cd cmd/billing && go test ./...'"
	if os.Getenv("CI") == "true" {
		t.Fatal(how)
	}
	t.Skip(how)
	return ""
}

// appDatabase makes a schema of its own migrated by the test's superuser and a
// login role with only SELECT, INSERT, UPDATE and DELETE on its tables, as
// pgstore documents for an application, and returns the URL that logs in as
// that role on that schema, with the role's pool.
func appDatabase(t *testing.T) (string, *sql.DB, *sql.DB) {
	t.Helper()
	base := databaseURL(t)
	cfg, err := pgx.ParseConfig(base)
	require.NoError(t, err)
	admin := stdlib.OpenDB(*cfg)
	t.Cleanup(func() { _ = admin.Close() })
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	suffix := hex.EncodeToString(b)
	schema, role := "billing_cmd_"+suffix, "billing_cmd_app_"+suffix
	ctx := context.Background()
	for _, stmt := range []string{"CREATE SCHEMA " + schema, "CREATE ROLE " + role + " LOGIN", "GRANT USAGE ON SCHEMA " + schema + " TO " + role} {
		_, err := admin.ExecContext(ctx, stmt)
		require.NoError(t, err, stmt)
	}
	t.Cleanup(func() {
		for _, stmt := range []string{"DROP SCHEMA " + schema + " CASCADE", "DROP OWNED BY " + role, "DROP ROLE " + role} {
			_, _ = admin.ExecContext(context.Background(), stmt)
		}
	})
	ownerCfg := cfg.Copy()
	ownerCfg.RuntimeParams["search_path"] = schema
	owner := stdlib.OpenDB(*ownerCfg)
	t.Cleanup(func() { _ = owner.Close() })
	require.NoError(t, pgstore.Migrate(ctx, owner))
	_, err = admin.ExecContext(ctx, "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA "+schema+" TO "+role)
	require.NoError(t, err)

	u, err := url.Parse(base)
	require.NoError(t, err)
	u.User = url.User(role)
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	appCfg, err := pgx.ParseConfig(u.String())
	require.NoError(t, err)
	app := stdlib.OpenDB(*appCfg)
	t.Cleanup(func() { _ = app.Close() })
	return u.String(), app, owner
}

// waitFor polls the database until query answers true, failing after eventually.
func waitFor(t *testing.T, db *sql.DB, what, query string) {
	t.Helper()
	deadline := time.Now().Add(eventually)
	for {
		var ok bool
		require.NoError(t, db.QueryRow(query).Scan(&ok))
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, eventually)
		}
		time.Sleep(20 * time.Millisecond) // a poll of the Tracker's goroutines, bounded by the deadline
	}
}

// After a Tracker ran on PostgreSQL, billing movements and billing reconcile,
// run as the application's DML-only role, show each state and each list.
func TestMovementsAndReconcileAfterATrackerRan(t *testing.T) {
	databaseURL, appDB, ownerDB := appDatabase(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := billingtest.NewServer(t) // the wall clock, as a Tracker on a database's clock runs
	store, err := pgstore.New(ctx, appDB)
	require.NoError(t, err)
	tracker := billing.NewTracker(srv.Client(), billing.TrackerOptions{Store: store, CallbackWait: time.Hour, RunInterval: 20 * time.Millisecond, PollInterval: 20 * time.Millisecond,
		OnOutcome: func(_ context.Context, o *billing.Outcome) error {
			if o.ClientReference == "pgunrep" {
				return errors.New("the order service is down")
			}
			return nil
		}})
	hurried := billing.NewTracker(srv.Client(), billing.TrackerOptions{Store: store, CallbackWait: time.Nanosecond})
	callbacks := httptest.NewServer(tracker.Handler())
	defer callbacks.Close()
	receive := func(tr *billing.Tracker, reference, phone string) {
		t.Helper()
		_, err := tr.Receive(ctx, &billing.ReceiveParams{Amount: 2500, Phone: phone, Provider: billing.ProviderMTN,
			Description: "Order " + reference, ClientReference: reference, CallbackURL: callbacks.URL})
		require.NoError(t, err)
	}
	receive(tracker, "pgok", "233241234567")     // callback 0000: settled, then reported
	receive(tracker, "pgunrep", "233241234568")  // callback 0000: settled, its report fails
	receive(tracker, "pgpend", "233241230004")   // pending 10 minutes; its deadline an hour ahead
	receive(hurried, "pgsilent", "233241230002") // no callback: the status check settles it
	receive(hurried, "pgover", "233241240004")   // pending, its deadline passed: overdue
	runDone := make(chan error, 1)
	go func() { runDone <- tracker.Run(ctx) }()
	waitFor(t, ownerDB, "pgok and pgsilent reported", `SELECT count(*) = 2 FROM billing_movements
		WHERE client_reference IN ('pgok', 'pgsilent') AND reported_at IS NOT NULL`)
	waitFor(t, ownerDB, "pgunrep's report tried", `SELECT report_attempts > 0 FROM billing_movements WHERE client_reference = 'pgunrep'`)
	waitFor(t, ownerDB, "pgover checked", `SELECT checks > 0 FROM billing_movements WHERE client_reference = 'pgover'`)
	// A forged failure of the paid pgok: the status check contradicts it, so it is refused
	// and listed as contradicted.
	forged := `{"ResponseCode":"2001","Message":"failed","Data":{"ClientReference":"pgok","Amount":25.00,"TransactionId":"forged","PaymentDate":"2025-01-01T00:00:00Z"}}`
	resp, err := http.Post(callbacks.URL, "application/json", strings.NewReader(forged))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	cancel() // nothing writes from here on: Run's retries would change the rows compared below
	<-runDone
	var before string
	require.NoError(t, ownerDB.QueryRow(`SELECT string_agg(t::text, ',' ORDER BY client_reference) FROM billing_movements t`).Scan(&before))

	stdout, stderr, code := billingOnce(t, "movements", "--database-url", databaseURL, "--json")
	require.Equal(t, 0, code, stderr)
	states := map[string]trackedMovement{}
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var m trackedMovement
		require.NoError(t, json.Unmarshal([]byte(line), &m), line)
		states[m.ClientReference] = m
	}
	require.Len(t, states, 5, stdout)
	assert.Equal(t, stateSettled, states["pgok"].State)
	assert.Equal(t, "succeeded", states["pgok"].Outcome)
	assert.Equal(t, "callback", states["pgok"].Source)
	assert.Equal(t, int64(2500), states["pgok"].Amount)
	assert.Equal(t, "GHS", states["pgok"].Currency)
	assert.Equal(t, stateUnreported, states["pgunrep"].State)
	assert.Positive(t, states["pgunrep"].ReportAttempts)
	assert.Equal(t, statePending, states["pgpend"].State)
	assert.Empty(t, states["pgpend"].Outcome)
	assert.Equal(t, stateSettled, states["pgsilent"].State)
	assert.Equal(t, "status_check", states["pgsilent"].Source)
	assert.Equal(t, stateOverdue, states["pgover"].State)

	stdout, stderr, code = billingOnce(t, "movements", "--database-url", databaseURL, "--state", "overdue", "--kind", "receive", "--since", "1h")
	require.Equal(t, 0, code, stderr)
	rows := strings.Split(strings.TrimSpace(stdout), "\n")
	require.Len(t, rows, 2, stdout)
	assert.Regexp(t, `^STATE\s+KIND\s+REFERENCE\s+AMOUNT`, rows[0])
	assert.Regexp(t, `^overdue\s+receive\s+pgover\s+GHS 25\.00\s`, rows[1])
	// Both names of a kind, and a currency on every amount.
	byAlias, stderr, code := billingOnce(t, "movements", "--database-url", databaseURL, "--kind", "bank")
	require.Equal(t, 0, code, stderr)
	byName, stderr, code := billingOnce(t, "movements", "--database-url", databaseURL, "--kind", "bank_transfer")
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, byName, byAlias)
	_, stderr, code = billingOnce(t, "movements", "--database-url", databaseURL, "--kind", "debit")
	require.Equal(t, 0, code, stderr)
	stdout, stderr, code = billingOnce(t, "movements", "--database-url", databaseURL)
	require.Equal(t, 0, code, stderr)
	for _, row := range strings.Split(strings.TrimSpace(stdout), "\n")[1:] {
		assert.Regexp(t, `^\S+\s+\S+\s+\S+\s+([A-Z]{3} [0-9,]+\.[0-9]{2}|-)\s`, row, "AMOUNT has its currency")
	}
	stdout, _, code = billingOnce(t, "movements", "--database-url", databaseURL, "--since", "2999-01-01")
	require.Equal(t, 0, code)
	assert.Equal(t, "no tracked movements match\n", stdout)

	stdout, stderr, code = billingOnce(t, "reconcile", "--database-url", databaseURL, "--from", "1h", "--json")
	require.Equal(t, 0, code, stderr)
	var page reconcilePage
	require.NoError(t, json.Unmarshal([]byte(stdout), &page), stdout)
	assert.Equal(t, 1, page.Page)
	require.Len(t, page.Overdue, 1)
	assert.Equal(t, "pgover", page.Overdue[0].ClientReference)
	require.Len(t, page.StatusCheckOnly, 1)
	assert.Equal(t, "pgsilent", page.StatusCheckOnly[0].ClientReference)
	assert.True(t, page.StatusCheckOnly[0].ByStatusCheck)
	assert.Empty(t, page.Disagreed)
	require.Len(t, page.Contradicted, 1)
	assert.Equal(t, "pgok", page.Contradicted[0].ClientReference)
	assert.Equal(t, "failed", page.Contradicted[0].Claimed)
	assert.Equal(t, 1, page.Contradicted[0].Count)
	stdout, stderr, code = billingOnce(t, "reconcile", "--database-url", databaseURL, "--from", "1h")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "page 1: 0 untracked, 1 overdue, 0 disagreed, 1 status-check only, 1 contradicted")
	assert.Regexp(t, `transaction\s+pgok\s+failed\s+\S+\s+\S+\s+1\n`, stdout)
	assert.Regexp(t, `receive\s+pgsilent\s+succeeded\s+0000\s+GHS 25\.00\s+status_check`, stdout)
	assert.Contains(t, stdout, "1 page(s)")

	var after string
	require.NoError(t, ownerDB.QueryRow(`SELECT string_agg(t::text, ',' ORDER BY client_reference) FROM billing_movements t`).Scan(&after))
	assert.Equal(t, before, after, "the commands wrote nothing")
}

// The commands refuse to touch a database whose schema they do not read, and
// never write even where the role could.
func TestDatabaseCommandsOnlyRead(t *testing.T) {
	base := databaseURL(t)
	cfg, err := pgx.ParseConfig(base)
	require.NoError(t, err)
	admin := stdlib.OpenDB(*cfg)
	defer admin.Close()
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	schema := "billing_cmd_empty_" + hex.EncodeToString(b)
	_, err = admin.Exec("CREATE SCHEMA " + schema)
	require.NoError(t, err)
	defer func() { _, _ = admin.Exec("DROP SCHEMA " + schema + " CASCADE") }()
	u, err := url.Parse(base)
	require.NoError(t, err)
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()

	for _, cmd := range []string{"movements", "reconcile"} {
		_, stderr, code := billingOnce(t, cmd, "--database-url", u.String())
		assert.Equal(t, 1, code)
		assert.Contains(t, stderr, "no pgstore tables", cmd)
	}
	var tables int
	require.NoError(t, admin.QueryRow(`SELECT count(*) FROM pg_tables WHERE schemaname = $1`, schema).Scan(&tables))
	assert.Zero(t, tables, "a superuser's command created nothing")

	db, err := openReadOnly(context.Background(), u.String())
	if err == nil {
		db.Close()
	}
	require.Error(t, err)
	cfgRO, err := pgx.ParseConfig(u.String())
	require.NoError(t, err)
	cfgRO.RuntimeParams["default_transaction_read_only"] = "on"
	ro := stdlib.OpenDB(*cfgRO)
	defer ro.Close()
	_, err = ro.Exec("CREATE TABLE " + schema + ".x (id int)")
	assert.ErrorContains(t, err, "read-only transaction", "the session openReadOnly opens refuses writes")
}
