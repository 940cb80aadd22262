package pgstore_test

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/pgstore"
	"github.com/billingsdk/billing-go/storekit"
	"github.com/billingsdk/billing-go/storetest"
)

// poolerURL is the test database behind pgbouncer in pool_mode=transaction
// (BILLING_TEST_POOLER_URL, which scripts/pgtest.sh sets). Without one the tests skip,
// except under CI=true.
func poolerURL(t testing.TB) string {
	t.Helper()
	return testEnv(t, "no pooler: set BILLING_TEST_POOLER_URL to a database behind pgbouncer in pool_mode=transaction, or run scripts/pgtest.sh from the repository root (it starts one)",
		"BILLING_TEST_POOLER_URL")
}

// pooledSchema creates a schema of its own for one test (directly, dropped at its end)
// and returns a pool reaching the database through the pooler with pgx's defaults, as a
// merchant's URL would: statements cached by name (cache_statement), no search_path (a
// pooler in transaction mode keeps no session's settings; the store is given its
// schema in Options.Schema).
func pooledSchema(t testing.TB) (*sql.DB, string) {
	t.Helper()
	url := poolerURL(t)
	direct := freshSchema(t)
	var schema string
	if err := direct.QueryRow(`SELECT current_schema()`).Scan(&schema); err != nil {
		t.Fatal(err)
	}
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatalf("BILLING_TEST_POOLER_URL: %v", err)
	}
	if cfg.DefaultQueryExecMode != pgx.QueryExecModeCacheStatement {
		t.Fatalf("BILLING_TEST_POOLER_URL sets default_query_exec_mode %v: the test wants pgx's default", cfg.DefaultQueryExecMode)
	}
	db := stdlib.OpenDB(*cfg)
	db.SetMaxOpenConns(20)
	db.SetMaxIdleConns(20)
	t.Cleanup(func() { _ = db.Close() })
	return db, schema
}

func newPooledStore(t testing.TB) *pgstore.Store {
	t.Helper()
	db, schema := pooledSchema(t)
	s, err := pgstore.NewWithOptions(context.Background(), db, pgstore.Options{Schema: schema, CallerClock: true})
	if err != nil {
		t.Fatalf("New through pgbouncer (pool_mode=transaction): %v", err)
	}
	return s
}

// Behind pgbouncer in transaction mode, each transaction may run on another server
// connection: a statement prepared by name on one is missing on the next, or there
// already (SQLSTATE 42P05). The store holds no such state, with pgx's default exec mode.
func TestPoolerConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storekit.Store { return newPooledStore(t) })
}

func TestPoolerTracker(t *testing.T) {
	storetest.RunTracker(t, func(t *testing.T) storekit.Store { return newPooledStore(t) })
}

func TestPoolerManyInstances(t *testing.T) {
	storetest.ManyInstances(t, newPooledStore(t), 4, 300)
}

// Eight instances migrating an empty schema at once through the pooler: the advisory
// lock that makes them take turns lives in the migration's transaction, not the session.
func TestPoolerNewConcurrently(t *testing.T) {
	db, schema := pooledSchema(t)
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = pgstore.NewWithOptions(context.Background(), db, pgstore.Options{Schema: schema})
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("New through the pooler: %v", err)
	}
}

// A handler of OnOutcomeTx whose own statement meets a prepared statement the server
// connection lacks (as a statement cached by name meets one behind a pooler in
// transaction mode) is told what to change: the pooler's setting and pgx's.
func TestOnOutcomeTxNamesThePoolerSetting(t *testing.T) {
	store := newStore(t)
	o := settled(t, store, "hint1")
	handler := store.OnOutcomeTx(func(ctx context.Context, tx *sql.Tx, o *billing.Outcome) error {
		_, err := tx.ExecContext(ctx, `DEALLOCATE stmtcache_missing`)
		return err
	})
	err := handler(context.Background(), o)
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "26000" {
		t.Fatalf("handler = %v, want the server's 26000 wrapped", err)
	}
	for _, want := range []string{"pool_mode=transaction", "default_query_exec_mode"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
}

// BenchmarkRunResolutionsPooler is BenchmarkRunResolutions with every instance's pool
// reaching PostgreSQL through pgbouncer in pool_mode=transaction (BILLING_TEST_POOLER_URL),
// with pgx's default exec mode in the URL, as a merchant's would be. scripts/benchpooler.sh
// runs it beside the direct one and pgbench.
func BenchmarkRunResolutionsPooler(b *testing.B) {
	url := poolerURL(b)
	runResolutions(b, func(tb testing.TB, schema string) (*sql.DB, pgstore.Options) {
		cfg, err := pgx.ParseConfig(url)
		if err != nil {
			tb.Fatal(err)
		}
		db := stdlib.OpenDB(*cfg)
		db.SetMaxOpenConns(20)
		db.SetMaxIdleConns(20)
		tb.Cleanup(func() { _ = db.Close() })
		return db, pgstore.Options{Schema: schema}
	})
}

// Options.NamedStatements behind a pooler in transaction mode: the statements prepared by
// name meet each other on the pooler's server connections, and New's refusal names the
// pooler's setting and the fix.
func TestPoolerNamedStatementsRefused(t *testing.T) {
	_, schema := pooledSchema(t)
	var err error
	for i := 0; i < 4 && err == nil; i++ { // each pool's first statements, on the server connections the last one used
		db, _ := pooledSchema(t)
		_, err = pgstore.NewWithOptions(context.Background(), db, pgstore.Options{Schema: schema, NamedStatements: true})
	}
	if err == nil {
		t.Fatal("New with NamedStatements through pgbouncer in pool_mode=transaction: no error in four pools")
	}
	for _, want := range []string{"pool_mode=transaction", "default_query_exec_mode", "42P05"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("New's error %q does not name %s", err, want)
		}
	}
}

// Directly, NamedStatements works: the store's suite passes with statements cached by
// name.
func TestNamedStatementsConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storekit.Store {
		s, err := pgstore.NewWithOptions(context.Background(), freshSchema(t), pgstore.Options{CallerClock: true, NamedStatements: true})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// BenchmarkRunResolutionsNamed is BenchmarkRunResolutions, directly, with the store's
// statements prepared by name (Options.NamedStatements).
func BenchmarkRunResolutionsNamed(b *testing.B) {
	runResolutions(b, func(tb testing.TB, schema string) (*sql.DB, pgstore.Options) {
		return openSchema(tb, schema), pgstore.Options{NamedStatements: true}
	})
}
