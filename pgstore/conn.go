package pgstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// conn is the database as the store's statements reach it: each statement carries the
// options that keep it free of session state (see statementOptions), so that the store
// works behind a pooler that hands each transaction another server connection.
type conn struct {
	db   *sql.DB
	opts []any // put before every statement's arguments
	pgx  bool  // db's connections are pgx's stdlib driver's
}

func (c conn) args(args []any) []any {
	if len(c.opts) == 0 {
		return args
	}
	return append(append(make([]any, 0, len(c.opts)+len(args)), c.opts...), args...)
}

func (c conn) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return c.db.ExecContext(ctx, query, c.args(args)...)
}

func (c conn) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return c.db.QueryContext(ctx, query, c.args(args)...)
}

func (c conn) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return c.db.QueryRowContext(ctx, query, c.args(args)...)
}

func (c conn) BeginTx(ctx context.Context, opts *sql.TxOptions) (txConn, error) {
	tx, err := c.db.BeginTx(ctx, opts)
	return txConn{Tx: tx, opts: c.opts}, err
}

// txConn is a transaction of conn: its statements carry conn's options too.
type txConn struct {
	*sql.Tx
	opts []any
}

func (t txConn) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return t.Tx.ExecContext(ctx, query, conn{opts: t.opts}.args(args)...)
}

func (t txConn) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return t.Tx.QueryContext(ctx, query, conn{opts: t.opts}.args(args)...)
}

func (t txConn) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return t.Tx.QueryRowContext(ctx, query, conn{opts: t.opts}.args(args)...)
}

// openConn reads which driver db's connections use and returns the store's conn on it.
//
// pgx's stdlib driver prepares every statement by default under a name of its own
// (default_query_exec_mode=cache_statement) and keeps it on the server connection for
// the next time. Behind a pooler in transaction mode (pgbouncer's pool_mode=transaction,
// RDS Proxy, Supavisor) the next transaction may run on another server connection,
// where the name is missing, or was prepared by another client ("prepared statement
// ... already exists", SQLSTATE 42P05). The store's statements therefore name no
// prepared statement: with that default they run as cache_describe (the statement's
// description cached by the client, the statement sent unnamed with its arguments, in
// one round trip), or describe_exec where the pool keeps no description cache. A mode
// the connection string chose otherwise (exec, describe_exec, simple_protocol,
// cache_describe) is kept, and other drivers (lib/pq) prepare unnamed statements
// already. named keeps cache_statement too (Options.NamedStatements).
func openConn(ctx context.Context, db *sql.DB, named bool) (conn, error) {
	c := conn{db: db}
	raw, err := db.Conn(ctx)
	if err != nil {
		return c, fmt.Errorf("pgstore: connecting: %w", err)
	}
	defer raw.Close()
	err = raw.Raw(func(dc any) error {
		p, ok := dc.(interface{ Conn() *pgx.Conn })
		if !ok {
			return nil
		}
		c.pgx = true
		cfg := p.Conn().Config()
		if named || cfg.DefaultQueryExecMode != pgx.QueryExecModeCacheStatement {
			return nil
		}
		if cfg.DescriptionCacheCapacity > 0 {
			c.opts = []any{pgx.QueryExecModeCacheDescribe}
		} else {
			c.opts = []any{pgx.QueryExecModeDescribeExec}
		}
		return nil
	})
	if err != nil {
		return c, fmt.Errorf("pgstore: connecting: %w", err)
	}
	return c, nil
}

// poolerHint explains an error of a statement that named a prepared statement the
// server connection did not hold, or held already: the mark of a pooler in transaction
// mode under a driver that prepares statements by name: an OnOutcomeTx handler's
// statements, or the store's with Options.NamedStatements. err is returned unchanged
// otherwise.
func poolerHint(err error) error {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || (pe.Code != "42P05" && pe.Code != "26000") {
		return err
	}
	return fmt.Errorf("%w (a prepared statement missing or present twice on the server connection: behind a pooler in transaction mode, such as pgbouncer's pool_mode=transaction, "+
		"open the database with default_query_exec_mode=cache_describe, exec or simple_protocol in its URL)", err)
}
