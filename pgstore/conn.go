package pgstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
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

// ExecContext runs a statement that returns no rows (see on).
func (c conn) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	var res sql.Result
	err := c.on(ctx, func(ctx context.Context, q statements) (err error) {
		res, err = q.exec(ctx, query, c.args(args))
		return err
	})
	return res, err
}

// query runs query and calls each on its rows, one after the other, until each returns
// an error: the rows are read before the statement's connection goes back to the pool
// (see on).
func (c conn) query(ctx context.Context, query string, args []any, each func(scanner) error) error {
	return c.on(ctx, func(ctx context.Context, q statements) error {
		return q.query(ctx, query, c.args(args), each)
	})
}

// queryRow is a query of one row, run when its Scan is called (see on).
func (c conn) queryRow(ctx context.Context, query string, args ...any) row {
	return row{c: c, ctx: ctx, query: query, args: args}
}

// QueryRowContext is database/sql's, for the statements New runs once, through helpers
// that take a *sql.Conn or *sql.Tx as well.
func (c conn) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return c.db.QueryRowContext(ctx, query, c.args(args)...)
}

// row is conn's answer to queryRow.
type row struct {
	c     conn
	ctx   context.Context
	query string
	args  []any
}

// Scan runs the query and reads its first row into dest, as sql.Row's Scan does: no row
// is sql.ErrNoRows.
func (r row) Scan(dest ...any) error {
	found := false
	err := r.c.query(r.ctx, r.query, r.args, func(rows scanner) error {
		if found {
			return nil
		}
		found = true
		return rows.Scan(dest...)
	})
	if err == nil && !found {
		return sql.ErrNoRows
	}
	return err
}

// statements is where on runs a statement: database/sql's pool or transaction, or one
// pgx connection of the pool.
type statements interface {
	exec(ctx context.Context, query string, args []any) (sql.Result, error)
	// query calls each on every row of the answer, until each returns an error.
	query(ctx context.Context, query string, args []any, each func(scanner) error) error
}

// sqlStatements run through database/sql.
type sqlStatements struct {
	q interface {
		ExecContext(context.Context, string, ...any) (sql.Result, error)
		QueryContext(context.Context, string, ...any) (*sql.Rows, error)
	}
}

func (s sqlStatements) exec(ctx context.Context, query string, args []any) (sql.Result, error) {
	return s.q.ExecContext(ctx, query, args...)
}

func (s sqlStatements) query(ctx context.Context, query string, args []any, each func(scanner) error) error {
	rows, err := s.q.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := each(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// pgxStatements run on one pgx connection, as pgx's own: their rows are read into the
// destinations without database/sql's pass through driver values, which boxes every
// column of every row.
type pgxStatements struct{ c *pgx.Conn }

func (p pgxStatements) exec(ctx context.Context, query string, args []any) (sql.Result, error) {
	tag, err := p.c.Exec(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return rowsAffected(tag.RowsAffected()), nil
}

func (p pgxStatements) query(ctx context.Context, query string, args []any, each func(scanner) error) error {
	rows, err := p.c.Query(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := each(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// rowsAffected is the sql.Result of a statement run by pgxStatements.
type rowsAffected int64

func (n rowsAffected) RowsAffected() (int64, error) { return int64(n), nil }

func (rowsAffected) LastInsertId() (int64, error) {
	return 0, errors.New("pgstore: PostgreSQL returns no last insert id")
}

// on runs fn's statements so that they end by ctx's end.
//
// On pgx's driver the statements run as pgx's own (pgxStatements) on a connection taken
// from the pool for them, under a context that cannot end: ctx's end sets that
// connection's deadline to the past, which ends its reads and writes at once, and the
// connection is then closed instead of going back to the pool. Given the context
// itself, pgx would watch it on a goroutine of its own for every statement, and
// database/sql watch it on another for every query's rows: two goroutines, and a
// hand-off to each, for what one function registered on the context does. The
// connection ends as pgx ends it on a cancelled context (its default), and a pooler or
// the database sees a client gone. A statement refused before it began, its connection
// found broken (reset while it sat in the pool: nothing was written), is handed to
// database/sql, which makes it again as it makes its own: on other pooled connections,
// then on a new one. Other drivers run on database/sql's pool as they are.
func (c conn) on(ctx context.Context, fn func(context.Context, statements) error) error {
	if !c.pgx {
		return fn(ctx, sqlStatements{c.db})
	}
	one, err := c.db.Conn(ctx)
	if err != nil {
		return err
	}
	var (
		stmtErr  error
		cut      bool
		refused  bool
		finished bool
	)
	err = one.Raw(func(dc any) error {
		pc := dc.(interface{ Conn() *pgx.Conn }).Conn()
		if ctx.Done() == nil {
			stmtErr = fn(ctx, pgxStatements{pc})
		} else {
			watch := &deadlineCut{conn: pc.PgConn().Conn()}
			stop := context.AfterFunc(ctx, watch.cut)
			stmtErr = fn(context.WithoutCancel(ctx), pgxStatements{pc})
			stop()
			cut = watch.finish()
		}
		finished = true
		if cut || pc.IsClosed() {
			// The connection's deadline is past, and a statement may have stopped
			// midway, or pgx closed the connection on an error of the network: it
			// serves no other.
			refused = !cut && pgconn.SafeToRetry(stmtErr)
			return driver.ErrBadConn
		}
		return nil
	})
	one.Close()
	switch {
	case !finished:
		return err
	case cut:
		if stmtErr != nil {
			stmtErr = fmt.Errorf("%w (%w)", context.Cause(ctx), stmtErr)
		}
		return stmtErr
	case refused && ctx.Err() == nil:
		return fn(ctx, sqlStatements{c.db})
	}
	return stmtErr
}

// deadlineCut sets a connection's deadline to the past once its context ends, unless its
// statements have finished first.
type deadlineCut struct {
	mu       sync.Mutex
	conn     net.Conn
	finished bool
	cutDone  bool
}

// cut ends the connection's reads and writes at once.
func (d *deadlineCut) cut() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.finished {
		d.cutDone = true
		_ = d.conn.SetDeadline(time.Unix(1, 0))
	}
}

// finish says the statements have returned, and whether the connection was cut first.
func (d *deadlineCut) finish() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.finished = true
	return d.cutDone
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

// query runs query in the transaction and calls each on its rows (see conn.query).
func (t txConn) query(ctx context.Context, query string, args []any, each func(scanner) error) error {
	return sqlStatements{t}.query(ctx, query, args, each)
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
