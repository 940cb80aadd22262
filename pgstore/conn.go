package pgstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

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
	if !c.pgx {
		args = arrayArgs(args)
	}
	if len(c.opts) == 0 {
		return args
	}
	return append(append(make([]any, 0, len(c.opts)+len(args)), c.opts...), args...)
}

// arrayArgs returns args with each slice the batched writes send (see firstColumns)
// written as PostgreSQL's text form of an array, for a driver that takes no slice as an
// argument (lib/pq before 1.11); pgx's driver takes them as they are. args is not
// changed.
func arrayArgs(args []any) []any {
	var out []any
	for i, a := range args {
		lit, ok := arrayLiteralOf(a)
		if !ok {
			continue
		}
		if out == nil {
			out = slices.Clone(args)
		}
		out[i] = lit
	}
	if out == nil {
		return args
	}
	return out
}

// arrayLiteral is an array in PostgreSQL's text form, '{"a","b"}', which the statements
// cast to its type ($1::text[]).
type arrayLiteral string

func (a arrayLiteral) Value() (driver.Value, error) { return string(a), nil }

// arrayLiteralOf writes a slice of one of the kinds the batched writes send as an array
// literal: strings and byte strings quoted (a nil byte string is NULL, as pgx sends it),
// times in UTC to the microsecond (pgx's precision for timestamptz).
func arrayLiteralOf(v any) (arrayLiteral, bool) {
	switch v.(type) {
	case []string, []int64, []bool, []time.Time, [][]byte:
	default:
		return "", false // not an array: nothing to write, nor any room to write it
	}
	var b strings.Builder
	b.WriteByte('{')
	each := func(n int, write func(i int)) {
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			write(i)
		}
	}
	quoted := func(s string) {
		b.WriteByte('"')
		for _, r := range s {
			if r == '"' || r == '\\' {
				b.WriteByte('\\')
			}
			b.WriteRune(r)
		}
		b.WriteByte('"')
	}
	switch s := v.(type) {
	case []string:
		each(len(s), func(i int) { quoted(s[i]) })
	case []int64:
		each(len(s), func(i int) { b.WriteString(strconv.FormatInt(s[i], 10)) })
	case []bool:
		each(len(s), func(i int) { b.WriteString(strconv.FormatBool(s[i])) })
	case []time.Time:
		each(len(s), func(i int) { quoted(s[i].UTC().Truncate(time.Microsecond).Format("2006-01-02 15:04:05.999999Z07:00")) })
	case [][]byte:
		each(len(s), func(i int) {
			if s[i] == nil {
				b.WriteString("NULL")
				return
			}
			quoted(`\x` + hex.EncodeToString(s[i]))
		})
	}
	b.WriteByte('}')
	return arrayLiteral(b.String()), true
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
	return txConn{Tx: tx, of: c}, err
}

// txConn is a transaction of conn: its statements' arguments are conn's.
type txConn struct {
	*sql.Tx
	of conn
}

func (t txConn) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return t.Tx.ExecContext(ctx, query, t.of.args(args)...)
}

func (t txConn) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return t.Tx.QueryContext(ctx, query, t.of.args(args)...)
}

func (t txConn) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return t.Tx.QueryRowContext(ctx, query, t.of.args(args)...)
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
