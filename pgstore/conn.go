package pgstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"reflect"
	"slices"
	"strconv"
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

// args returns args as a statement of c sends them (see statementArgs). The caller
// releases them once the statement has returned.
func (c conn) args(args []any) *statementArgs {
	a := statementArgsPool.Get().(*statementArgs)
	c.fill(a, args)
	return a
}

// fill makes a the arguments args as a statement of c sends them, in a's room.
func (c conn) fill(a *statementArgs, args []any) {
	a.list = append(a.list[:0], c.opts...)
	a.buf, a.ends = a.buf[:0], a.ends[:0]
	for _, v := range args {
		end := -1
		if w, ok := arrayWriters[reflect.TypeOf(v)]; ok {
			a.buf = w.write(a.buf, v)
			end = len(a.buf)
		}
		a.ends = append(a.ends, end)
	}
	var text string
	if len(a.buf) > 0 {
		text = string(a.buf)
	}
	// Each literal goes in the list as a pointer into strs, which a string would be
	// boxed to get; strs is not grown once pointed into. release cleared it.
	a.strs = slices.Grow(a.strs[:0], len(args))
	start := 0
	for i, v := range args {
		if end := a.ends[i]; end >= 0 {
			a.strs = append(a.strs, text[start:end])
			v, start = &a.strs[len(a.strs)-1], end
		}
		a.list = append(a.list, v)
	}
}

// statementArgs are the arguments of one statement as the store sends them: conn's
// options first, then each argument, a slice the batched writes send (given as a
// pointer, which goes in an argument list without an allocation) written as
// PostgreSQL's text form of an array ('{"a","b"}'), which the statements cast to its
// type ($1::text[]). pgx sends a string argument as it is, in text form, where it would
// send a slice element by element, boxing each on its way; lib/pq before 1.11 takes no
// slice at all. The array literals of a statement share one string.
type statementArgs struct {
	list []any
	buf  []byte
	ends []int    // where each argument's literal ends in buf; -1: not an array
	strs []string // the literals, each given in list as a pointer to it
}

var statementArgsPool = sync.Pool{New: func() any { return new(statementArgs) }}

// release gives a back for another statement.
func (a *statementArgs) release() {
	clear(a.list)
	a.list = a.list[:0]
	a.strs = emptied(a.strs, 0)
	statementArgsPool.Put(a)
}

// arrayWriter writes one kind of slice in PostgreSQL's text form of an array; cast is
// the array type the statements read it as.
type arrayWriter struct {
	cast  string
	write func(b []byte, slice any) []byte
}

// arrayWriters are the kinds of slice the batched writes send (see firstColumns), by
// the type of a pointer to each: strings and byte strings quoted (a nil byte string is
// NULL, as pgx sends it), times in UTC to the microsecond (pgx's precision for
// timestamptz).
var arrayWriters = map[reflect.Type]arrayWriter{
	reflect.TypeFor[*[]string](): {"text[]", func(b []byte, v any) []byte {
		return appendArray(b, *v.(*[]string), appendQuoted)
	}},
	reflect.TypeFor[*[]int64](): {"bigint[]", func(b []byte, v any) []byte {
		return appendArray(b, *v.(*[]int64), func(b []byte, n int64) []byte { return strconv.AppendInt(b, n, 10) })
	}},
	reflect.TypeFor[*[]bool](): {"boolean[]", func(b []byte, v any) []byte {
		return appendArray(b, *v.(*[]bool), strconv.AppendBool)
	}},
	reflect.TypeFor[*[]time.Time](): {"timestamptz[]", func(b []byte, v any) []byte {
		return appendArray(b, *v.(*[]time.Time), appendTimestamp)
	}},
	reflect.TypeFor[*[][]byte](): {"bytea[]", func(b []byte, v any) []byte {
		return appendArray(b, *v.(*[][]byte), func(b []byte, s []byte) []byte {
			if s == nil {
				return append(b, "NULL"...)
			}
			b = append(b, `"\\x`...)
			b = hex.AppendEncode(b, s)
			return append(b, '"')
		})
	}},
}

// appendArray writes s as an array literal, each element by elem.
func appendArray[T any](b []byte, s []T, elem func([]byte, T) []byte) []byte {
	b = append(b, '{')
	for i, v := range s {
		if i > 0 {
			b = append(b, ',')
		}
		b = elem(b, v)
	}
	return append(b, '}')
}

// appendTimestamp writes t as a quoted element of a timestamptz array literal: in UTC,
// to the microsecond, as t.UTC().Truncate(time.Microsecond) would be formatted in the
// layout "2006-01-02 15:04:05.999999Z07:00", digit by digit for the years of four.
func appendTimestamp(b []byte, t time.Time) []byte {
	t = t.UTC()
	b = append(b, '"')
	year, month, day := t.Date()
	if year < 1 || year > 9999 {
		b = t.Truncate(time.Microsecond).AppendFormat(b, "2006-01-02 15:04:05.999999Z07:00")
		return append(b, '"')
	}
	hour, minute, sec := t.Clock()
	b = appendDigits(b, year, 4)
	b = appendDigits(append(b, '-'), int(month), 2)
	b = appendDigits(append(b, '-'), day, 2)
	b = appendDigits(append(b, ' '), hour, 2)
	b = appendDigits(append(b, ':'), minute, 2)
	b = appendDigits(append(b, ':'), sec, 2)
	if us := t.Nanosecond() / 1000; us > 0 {
		width := 6
		for us%10 == 0 {
			us, width = us/10, width-1
		}
		b = appendDigits(append(b, '.'), us, width)
	}
	return append(b, 'Z', '"')
}

// appendDigits writes n, at most width digits, padded with zeros to width.
func appendDigits(b []byte, n, width int) []byte {
	for i := width - 1; i >= 0; i-- {
		d := n
		for range i {
			d /= 10
		}
		b = append(b, byte('0'+d%10))
	}
	return b
}

// appendQuoted writes s as a quoted element of an array literal.
func appendQuoted(b []byte, s string) []byte {
	b = append(b, '"')
	for i := range len(s) {
		if s[i] == '"' || s[i] == '\\' {
			b = append(b, '\\')
		}
		b = append(b, s[i])
	}
	return append(b, '"')
}

// ExecContext runs a statement that returns no rows (see on).
func (c conn) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	a := c.args(args)
	defer a.release()
	var res sql.Result
	err := c.on(ctx, func(ctx context.Context, q statements) (err error) {
		res, err = q.exec(ctx, query, a.list)
		return err
	})
	return res, err
}

// query runs query and calls each on its rows, one after the other, until each returns
// an error: the rows are read before the statement's connection goes back to the pool
// (see on).
func (c conn) query(ctx context.Context, query string, args []any, each func(scanner) error) error {
	a := c.args(args)
	defer a.release()
	return c.on(ctx, func(ctx context.Context, q statements) error {
		return q.query(ctx, query, a.list, each)
	})
}

// queryRow is a query of one row, run when its Scan is called (see on).
func (c conn) queryRow(ctx context.Context, query string, args ...any) row {
	return row{c: c, ctx: ctx, query: query, args: args}
}

// QueryRowContext is database/sql's, for the statements New runs once, through helpers
// that take a *sql.Conn or *sql.Tx as well.
func (c conn) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	a := c.args(args)
	defer a.release()
	return c.db.QueryRowContext(ctx, query, a.list...)
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
	return eachRow(rows, each)
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
	return eachRow(rows, each)
}

// eachRow calls each on every row of rows, database/sql's or pgx's, until each returns
// an error, and returns the first error of each or of the rows. The caller closes them.
func eachRow(rows interface {
	scanner
	Next() bool
	Err() error
}, each func(scanner) error) error {
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

// The statements of a transaction, like QueryRowContext, give their arguments back
// once database/sql has sent them: it copies them into driver values first.

func (t txConn) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	a := t.of.args(args)
	defer a.release()
	return t.Tx.ExecContext(ctx, query, a.list...)
}

func (t txConn) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	a := t.of.args(args)
	defer a.release()
	return t.Tx.QueryContext(ctx, query, a.list...)
}

// query runs query in the transaction and calls each on its rows (see conn.query).
func (t txConn) query(ctx context.Context, query string, args []any, each func(scanner) error) error {
	return sqlStatements{t}.query(ctx, query, args, each)
}

func (t txConn) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	a := t.of.args(args)
	defer a.release()
	return t.Tx.QueryRowContext(ctx, query, a.list...)
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
