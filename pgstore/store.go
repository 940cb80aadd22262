// Package pgstore keeps a billing.Tracker's movements, outcomes and callbacks in
// PostgreSQL, so that every instance of a server shares them and a restart forgets
// nothing. It speaks database/sql: open the database with the driver of your choice
// (pgx's stdlib driver, lib/pq) and give it to New.
//
//	db, err := sql.Open("pgx", os.Getenv("DATABASE_URL"))
//	...
//	db.SetMaxOpenConns(20)
//	db.SetMaxIdleConns(20)
//	store, err := pgstore.New(ctx, db)
//	...
//	tracker := billing.NewTracker(client, billing.TrackerOptions{Store: store})
//
// The tables (billing_movements, billing_callbacks, billing_callback_dedupe,
// billing_audit, billing_attempts, and the versions' billing_schema_migrations and
// billing_schema_steps) live in one schema: the connection's current schema, or
// the one Options.Schema names. Every statement names it, so that two applications on
// one database, each in its schema, never read each other's tables; New refuses a
// search_path that leaves in doubt which schema is this application's
// (ErrSchemaAmbiguous). Migrate creates them, with a role that owns the schema; New then
// needs only SELECT, INSERT, UPDATE and DELETE on them (it migrates itself when the
// schema is older and its role may).
//
// Leases and due times are compared on the database's clock, now() in SQL, so that
// instances whose clocks disagree neither check a movement before its callback wait
// nor report an outcome twice: each call carries the times of its Tracker's clock, and
// the store keeps their distance to the caller's now, applied to the database's now().
// A Tracker given a clock of its own (billingtest's manual clock) hands it to the store
// (see UseClock), which then compares the callers' times when that clock does not follow
// real time.
//
// Keep as many connections idle as may be open (SetMaxIdleConns as SetMaxOpenConns):
// database/sql keeps two by default, and closes every other connection a busy Tracker
// used once it is idle, so the next statement opens it again, a new PostgreSQL server
// process each time, which costs more than the statements. Writes that many goroutines
// make at once (the first outcome of a movement, the mark of a report) share statements.
// On pgx's driver the store takes a connection from the pool for each statement and runs
// it as pgx's own, reading its rows without database/sql's driver values in between;
// transactions and other drivers go through database/sql.
//
// OnOutcomeTx runs a merchant's handler in the transaction that marks an outcome
// reported: the merchant's writes and the report commit together, exactly once.
//
// The store keeps no state on a server connection between transactions, so it works
// behind a pooler in transaction mode (pgbouncer's pool_mode=transaction): its
// statements name no prepared statement, even under pgx's default exec mode (see
// Options.NamedStatements), and the schema is named in every statement (give it in
// Options.Schema there, as such a pooler carries no search_path). New checks the schema
// against the one its migrations build (ErrSchemaDamaged), and a version appended to
// them only expands the schema, so that the release before keeps working on it during a
// rolling deploy: run Migrate, roll the instances, contract in a later release.
package pgstore

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/storekit"
	"github.com/jackc/pgx/v5/pgtype"
)

// Options configure a Store.
type Options struct {
	// Clock is the clock of the Trackers using the store. The store reads it for the
	// calls that carry no time of their own (RenewClaim, Reschedule, RetryReport, Settle,
	// Get, ...), to know how far ahead of the caller's now the times they give lie. Nil
	// is the wall clock, the Tracker's default: give the Tracker's Clock when it has
	// another.
	Clock billing.Clock
	// CallerClock compares leases and due times on the times the callers give, as they
	// are, instead of on the database's clock. It is for tests that drive every instance
	// with one manual clock (billingtest's), which the database's now() does not follow:
	// instances whose clocks disagree would check movements early and report outcomes
	// twice. A store given no Clock sets it itself when a Tracker hands it a clock that
	// does not follow real time (see UseClock).
	CallerClock bool
	// Schema names the schema of the store's tables, which must exist. Empty is the
	// connection's current schema (the first of its search_path that exists), refused
	// with ErrSchemaAmbiguous when it holds none of the tables and another schema of the
	// path does.
	Schema string
	// NamedStatements lets the store's statements use pgx's default exec mode,
	// cache_statement: each statement prepared by name once per server connection,
	// parsed and planned once. It is for connections that keep their server connection,
	// direct or through a pooler in session mode, and saves the client and the server
	// sending, parsing and planning each statement again. Behind a pooler in transaction mode (pgbouncer's
	// pool_mode=transaction) statements fail with SQLSTATE 42P05 or 26000: leave it false
	// there. By default the store's statements name no prepared statement (see
	// docs/durable.md, "Connection poolers").
	NamedStatements bool
}

// Store is a storekit.Store on PostgreSQL, safe for use by many goroutines and many
// instances on one database. Claims lock rows with SELECT ... FOR UPDATE SKIP LOCKED in
// the statement that leases them, so instances never wait on each other's claims.
type Store struct {
	db     conn // db, its statements free of session state (see openConn)
	opts   Options
	schema string      // the schema's name, quoted: every statement names its tables with it
	sql    [2]sync.Map // statement template: the statement, with the clock and schema in place; by clock mode
	clock  atomic.Pointer[storeClock]
	fresh  freshReports

	// Writes made at once by many goroutines share statements (see batcher).
	firsts  batcher[firstOutcome, firstWritten]
	reports batcher[reportedAt, struct{}]
}

var _ storekit.Store = (*Store)(nil)
var _ storekit.ReportLeaseRenewer = (*Store)(nil)
var _ storekit.EntryTracker = (*Store)(nil)
var _ storekit.CallbackEntryBeginner = (*Store)(nil)
var _ storekit.ClockUser = (*Store)(nil)
var _ storekit.ContextHeeder = (*Store)(nil)

// New returns the store on db with the default Options. It checks the schema's version
// with reads only, and migrates it when it is older (see Migrate), which needs a role
// that may create tables. Several instances may call it at once on an empty database:
// they take turns and all succeed. An older schema that the role cannot migrate is an
// error matching ErrSchemaOutdated. It then checks every table, column, type, default
// and index the store relies on (see CheckSchema), and refuses a schema that lacks one
// or has it otherwise with an error matching ErrSchemaDamaged, naming each difference
// (except in a read-only session, where the check cannot run).
func New(ctx context.Context, db *sql.DB) (*Store, error) {
	return NewWithOptions(ctx, db, Options{})
}

// NewWithOptions is New with options.
func NewWithOptions(ctx context.Context, db *sql.DB, opts Options) (*Store, error) {
	if db == nil {
		return nil, &storekit.ValidationError{Field: "db", Rule: "keep"}
	}
	c, err := openConn(ctx, db, opts.NamedStatements)
	if err != nil {
		return nil, err
	}
	schema, err := storeSchema(ctx, c, opts.Schema)
	if err != nil {
		return nil, poolerHint(err)
	}
	if err := ensureSchema(ctx, c, schema); err != nil {
		return nil, poolerHint(err)
	}
	if err := verifySchema(ctx, c, schema); err != nil && !errors.Is(err, errReadOnlyCheck) {
		return nil, poolerHint(err)
	}
	s := &Store{db: c, opts: opts, schema: quoteIdent(schema)}
	clock := &storeClock{clock: opts.Clock, caller: opts.CallerClock, given: opts.Clock != nil}
	if clock.clock == nil {
		clock.clock = wallClock{}
	}
	s.clock.Store(clock)
	s.firsts = batcher[firstOutcome, firstWritten]{key: firstOutcome.batchKey, run: s.settleFirsts, stall: batchStall}
	s.reports = batcher[reportedAt, struct{}]{key: reportedAt.batchKey, run: s.markReported, stall: batchStall}
	return s, nil
}

type wallClock struct{}

func (wallClock) Now() time.Time                         { return time.Now() }
func (wallClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// The clock of the statements. In every statement that reads or writes a time, $1 is
// the caller's now, and a template names times as the caller gives them:
//
//	{t4}   the time of parameter $4, on the store's clock: now() + ($4 - $1)
//	{skew} how far the store's clock is ahead of the caller's, in microseconds
//
// On the database's clock (the default), {t1} is now() and a lease the caller ends a
// minute after its now ends a minute after the database's. With Options.CallerClock,
// now() is $1 itself: {tN} is $N and the skew is 0.
const skewTemplate = `(extract(epoch FROM now() - $1::timestamptz) * 1000000)::bigint`

// storeClock is whose clock the store's statements compare times on.
type storeClock struct {
	clock  billing.Clock
	caller bool // compare the callers' times as they are (Options.CallerClock)
	given  bool // Options.Clock was given, or a Tracker handed its clock (UseClock)
}

// HeedsContext reports whether every call of the store returns by the end of its
// context (storekit.ContextHeeder): true when db's connections are pgx's stdlib driver's,
// where the store ends a statement's reads and writes on the network when its context
// ends, by setting the connection's deadline to the past (see conn.on), and which the
// store's fault tests run against a database gone silent. database/sql gives up its
// wait for a connection at the context's end, and a write batched with others gives up
// its wait for the batch. A Tracker then makes the store's calls on its own goroutines
// instead of handing each to another. Other drivers may wait on a dead connection past
// the context (lib/pq sends a cancel request and waits for its answer): false.
func (s *Store) HeedsContext() bool { return s.db.pgx }

// wallSkew is how far from this process's wall clock a clock a Tracker hands the store
// may be and still be taken to follow real time.
const wallSkew = time.Minute

// UseClock is how a Tracker hands the store its Clock (storekit.ClockUser): NewTracker
// calls it, with nil for the wall clock. A store given no Options.Clock takes the first
// clock handed, and compares the callers' times (as Options.CallerClock does) when that
// clock is more than a minute from this process's wall clock, as billingtest's manual
// clock is: the database's now() does not follow it, and movements would never fall due.
// One store follows one clock: a clock other than the one it follows (Options.Clock, or
// the clock an earlier Tracker handed) is an error, which NewTracker reports.
func (s *Store) UseClock(c storekit.Clock) error {
	for {
		cur := s.clock.Load()
		if c == nil {
			if cur.given {
				return fmt.Errorf("pgstore: the store follows the clock %T, and this Tracker the wall clock: give the Tracker the store's clock", cur.clock)
			}
			return nil
		}
		if cur.given {
			if !sameClock(cur.clock, c) {
				return fmt.Errorf("pgstore: the store follows the clock %T, and this Tracker another (%T): give every Tracker of one store the same clock", cur.clock, c)
			}
			return nil
		}
		next := &storeClock{clock: c, caller: cur.caller, given: true}
		if d := time.Until(c.Now()); d > wallSkew || d < -wallSkew {
			next.caller = true // a manual clock: the database's now() does not follow it
		}
		if s.clock.CompareAndSwap(cur, next) {
			return nil
		}
	}
}

// sameClock reports whether a and b are the same clock, false when they cannot be
// compared.
func sameClock(a, b billing.Clock) (same bool) {
	defer func() {
		if recover() != nil { // a clock of a type == cannot compare
			same = false
		}
	}()
	return a == b
}

// callerClock says whether the store compares the callers' times as they are.
func (s *Store) callerClock() bool { return s.clock.Load().caller }

// tableName matches the names of the store's tables in a statement.
var tableName = regexp.MustCompile(`\b(` + strings.Join(createdTables(), "|") + `)\b`)

// createdTables lists the tables the migrations create, and the versions' own.
func createdTables() []string {
	create := regexp.MustCompile(`CREATE TABLE (?:IF NOT EXISTS )?(\w+)`)
	var names []string
	for _, stmt := range append([]string{versionTable, stepsTable}, slices.Concat(migrations...)...) {
		for _, m := range create.FindAllStringSubmatch(stmt, -1) {
			names = append(names, m[1])
		}
	}
	return names
}

// q returns the statement of template for the store's clock and schema, built once.
func (s *Store) q(template string) string {
	caller := s.callerClock()
	cache := &s.sql[0]
	if caller {
		cache = &s.sql[1]
	}
	if stmt, ok := cache.Load(template); ok {
		return stmt.(string)
	}
	var b strings.Builder
	rest := template
	for {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			b.WriteString(rest)
			break
		}
		j := strings.IndexByte(rest[i:], '}')
		b.WriteString(rest[:i])
		name := rest[i+1 : i+j]
		rest = rest[i+j+1:]
		switch {
		case name == "skew":
			b.WriteString(skewTemplate)
		case strings.HasPrefix(name, "t"):
			n, err := strconv.Atoi(name[1:])
			if err != nil {
				panic("pgstore: bad statement template " + name)
			}
			fmt.Fprintf(&b, "(now() + ($%d::timestamptz - $1::timestamptz))", n)
		default:
			panic("pgstore: bad statement template " + name)
		}
	}
	stmt := b.String()
	if caller {
		stmt = strings.ReplaceAll(stmt, "now()", "$1::timestamptz")
	}
	stmt = s.qualify(stmt)
	cache.Store(template, stmt)
	return stmt
}

// qualify names the store's schema before every table of stmt.
func (s *Store) qualify(stmt string) string {
	return tableName.ReplaceAllString(stmt, s.schema+".$1")
}

// now is the caller's now for a call that carries none.
func (s *Store) now() time.Time { return s.clock.Load().clock.Now() }

// movementColumns are read by scanEntry, in its order: the row, then {skew}.
const movementColumns = `callback_kind, client_reference, kind, started_at, deadline, next_check_at, checks,
	lease_owner, lease_until, outcome_id, state, code, transaction_id, external_transaction_id, amount,
	charges, source, settled_at, body, by_callback, by_status_check, disagreed, reported_at, report_attempts,
	asked_amount, asked_currency, service_reference, currency, outcome_service_reference, outcome_kind, track_id, {skew}`

type scanner interface{ Scan(dest ...any) error }

// callerTime puts t, read from the store, back on the caller's clock.
func callerTime(t pgtype.Timestamptz, skew int64) time.Time {
	if !t.Valid {
		return time.Time{}
	}
	return t.Time.Add(-time.Duration(skew) * time.Microsecond)
}

// scanEntry reads one row of movementColumns: the zero Entry when every column of the
// row is NULL (an outer join that found no movement). The outcome's Event is left nil:
// the Tracker derives it from the outcome's fields, and Body keeps the callback for
// audit.
func scanEntry(row scanner) (storekit.Entry, error) {
	var r entryRow
	return r.scan(row)
}

// entryRow holds a row of movementColumns while it is read. The rows of a query
// are read through one entryRow, so a row costs its values and no holder of its own.
// Its columns are pgx's own nullable types, which pgx reads without a driver value in
// between and database/sql reads as sql.Scanners.
type entryRow struct {
	callback, ref, kind, leaseOwner, outcomeID   pgtype.Text
	state, source                                pgtype.Text
	started, deadline, next, leaseUntil, settled pgtype.Timestamptz
	reported                                     pgtype.Timestamptz
	checks, attempts                             pgtype.Int4
	code, txID, extTxID, currency, outcomeRef    pgtype.Text
	askedCurrency, serviceRef, outcomeKind       pgtype.Text
	trackID                                      pgtype.Text
	amount, charges, askedAmount                 pgtype.Int8
	skew                                         int64
	body                                         []byte
	byCallback, byStatusCheck, disagreed         pgtype.Bool
	dest                                         []any
}

// scan reads the next row of movementColumns into an Entry.
func (r *entryRow) scan(row scanner) (storekit.Entry, error) {
	if r.dest == nil {
		r.dest = []any{&r.callback, &r.ref, &r.kind, &r.started, &r.deadline, &r.next, &r.checks,
			&r.leaseOwner, &r.leaseUntil, &r.outcomeID, &r.state, &r.code, &r.txID, &r.extTxID, &r.amount,
			&r.charges, &r.source, &r.settled, &r.body, &r.byCallback, &r.byStatusCheck, &r.disagreed, &r.reported, &r.attempts,
			&r.askedAmount, &r.askedCurrency, &r.serviceRef, &r.currency, &r.outcomeRef, &r.outcomeKind, &r.trackID, &r.skew}
	}
	if err := row.Scan(r.dest...); err != nil {
		return storekit.Entry{}, err
	}
	if !r.callback.Valid {
		return storekit.Entry{}, nil
	}
	key := storekit.MovementKey{Callback: r.callback.String, ClientReference: r.ref.String}
	var e storekit.Entry
	if r.kind.Valid {
		e.Tracked = true
		e.Movement = storekit.Movement{
			Kind:             r.kind.String,
			ClientReference:  key.ClientReference,
			Amount:           r.askedAmount.Int64,
			Currency:         r.askedCurrency.String,
			ServiceReference: r.serviceRef.String,
			StartedAt:        callerTime(r.started, r.skew),
			Deadline:         callerTime(r.deadline, r.skew),
			NextCheckAt:      callerTime(r.next, r.skew),
			Checks:           int(r.checks.Int32),
			LeaseOwner:       r.leaseOwner.String,
			LeaseUntil:       callerTime(r.leaseUntil, r.skew),
			TrackID:          r.trackID.String,
		}
	}
	if r.outcomeID.Valid {
		// A tracked movement's outcome is of its kind; an untracked one's, of the kind
		// it was settled as.
		okind := r.outcomeKind.String
		if r.kind.Valid {
			okind = r.kind.String
		}
		e.Final = &storekit.Settlement{
			ID:  r.outcomeID.String,
			Key: key,
			Outcome: storekit.Outcome{
				Kind:                  okind,
				ClientReference:       key.ClientReference,
				State:                 r.state.String,
				Code:                  r.code.String,
				TransactionID:         r.txID.String,
				ExternalTransactionID: r.extTxID.String,
				Amount:                r.amount.Int64,
				Charges:               r.charges.Int64,
				Currency:              r.currency.String,
				ServiceReference:      r.outcomeRef.String,
				Source:                r.source.String,
				At:                    callerTime(r.settled, r.skew),
			},
			Body:           r.body,
			ByCallback:     r.byCallback.Bool,
			ByStatusCheck:  r.byStatusCheck.Bool,
			Disagreed:      r.disagreed.Bool,
			ReportedAt:     callerTime(r.reported, r.skew),
			ReportAttempts: int(r.attempts.Int32),
		}
	}
	return e, nil
}

func nullTime(t time.Time) sql.NullTime { return sql.NullTime{Time: t, Valid: !t.IsZero()} }

// Track records m, or returns the movement already tracked under its key, in one
// statement. m.StartedAt is the caller's now. An outcome settled before it as another
// kind's is not adopted: it then tracks nothing (the zero Movement, created false).
func (s *Store) Track(ctx context.Context, m storekit.Movement) (storekit.Movement, bool, error) {
	e, created, err := s.track(ctx, m, false)
	return e.Movement, created, err
}

// TrackEntry is Track answering what the key holds, in one statement
// (storekit.EntryTracker).
func (s *Store) TrackEntry(ctx context.Context, m storekit.Movement) (storekit.Entry, bool, error) {
	return s.track(ctx, m, false)
}

// TrackNew tracks m only when its key holds neither a movement nor an outcome, and
// answers what the key holds, in one statement (storekit.EntryTracker).
func (s *Store) TrackNew(ctx context.Context, m storekit.Movement) (storekit.Entry, bool, error) {
	return s.track(ctx, m, true)
}

// track is Track; with fresh it also refuses a key holding an outcome. It returns what
// the key holds once it is done.
func (s *Store) track(ctx context.Context, m storekit.Movement, fresh bool) (storekit.Entry, bool, error) {
	if err := m.Validate(); err != nil {
		return storekit.Entry{}, false, err
	}
	key := m.Key()
	// A row without a kind holds a callback that came before Track: it becomes tracked,
	// unless its outcome was settled as another kind (then it is another movement's) or,
	// with fresh ($8), holds an outcome at all. A row that holds a tombstone (Purge forgot
	// its movement) is never tracked again: Track and Purge write the same row, so a Track
	// that waited for a Purge's lock finds the tombstone. A row tracked already, or
	// refused, is read in the same statement, with the lock the insert took, so that it
	// is the row as it is now; a row tracked by this very call ($9, its answer lost) is
	// answered as created, unless with fresh it holds an outcome since. The service's
	// reference is RecordReference's to write. caller_started_at keeps m.StartedAt as
	// given, which Release names this Track by: started_at is on the store's clock.
	var forgotten, created bool
	e, err := scanEntry(prefixed{s.db.queryRow(ctx, s.q(`WITH tracked AS (
			INSERT INTO billing_movements AS m
				(callback_kind, client_reference, kind, started_at, deadline, next_check_at,
				 asked_amount, asked_currency, caller_started_at, track_id)
			VALUES ($2, $3, $4, {t1}, {t5}, {t5}, $6, $7, $1, $9)
			ON CONFLICT (callback_kind, client_reference) DO UPDATE
				SET kind = EXCLUDED.kind, started_at = EXCLUDED.started_at, deadline = EXCLUDED.deadline,
					next_check_at = EXCLUDED.next_check_at, checks = 0, lease_owner = NULL, lease_until = NULL,
					asked_amount = EXCLUDED.asked_amount, asked_currency = EXCLUDED.asked_currency,
					service_reference = '', caller_started_at = EXCLUDED.caller_started_at,
					track_id = EXCLUDED.track_id
				WHERE m.kind IS NULL AND m.forgotten_at IS NULL AND (m.outcome_id IS NULL
					OR (NOT $8::boolean AND m.outcome_kind IN ('', EXCLUDED.kind)))
			RETURNING `+movementColumns+`
		), held AS (
			SELECT m.forgotten_at IS NOT NULL AS forgotten,
				m.kind IS NOT NULL AND m.kind = $4 AND $9 <> '' AND m.track_id = $9
					AND (NOT $8::boolean OR m.outcome_id IS NULL) AS again,
				`+movementColumns+` FROM billing_movements m
			WHERE callback_kind = $2 AND client_reference = $3
			FOR SHARE
		)
		SELECT false, true, * FROM tracked
		UNION ALL
		SELECT * FROM held WHERE NOT EXISTS (SELECT 1 FROM tracked)`),
		m.StartedAt, key.Callback, key.ClientReference, m.Kind, m.Deadline, m.Amount, m.Currency, fresh, m.TrackID), []any{&forgotten, &created}})
	found := !errors.Is(err, sql.ErrNoRows)
	if !found {
		err = nil
	}
	switch {
	case err != nil:
		return storekit.Entry{}, false, fmt.Errorf("pgstore: tracking %s: %w", key.ClientReference, err)
	case !found:
		// Nothing tracked and no row read: a concurrent Track's row, not yet visible to
		// the statement's snapshot. Read it now.
		if e, err = s.Get(ctx, key); err != nil {
			return storekit.Entry{}, false, err
		}
		if e.Forgotten && !e.Tracked {
			return storekit.Entry{}, false, fmt.Errorf("pgstore: tracking %s: %w", key.ClientReference, storekit.ErrForgotten)
		}
		return e, false, nil
	case forgotten && !e.Tracked:
		return storekit.Entry{}, false, fmt.Errorf("pgstore: tracking %s: %w", key.ClientReference, storekit.ErrForgotten)
	}
	e.Forgotten = forgotten
	return e, created, nil
}

// prefixed scans columns into first before the row's others.
type prefixed struct {
	row   scanner
	first []any
}

func (p prefixed) Scan(dest ...any) error { return p.row.Scan(slices.Concat(p.first, dest)...) }

// Get returns what the store knows of key.
func (s *Store) Get(ctx context.Context, key storekit.MovementKey) (storekit.Entry, error) {
	if err := key.Validate(); err != nil {
		return storekit.Entry{}, err
	}
	var forgotten bool
	// One row whether or not the key has a movement: its row may hold a tombstone alone.
	e, err := scanEntry(prefixed{s.db.queryRow(ctx, s.q(`SELECT forgotten_at IS NOT NULL, `+movementColumns+`
		FROM (SELECT) AS one LEFT JOIN billing_movements ON callback_kind = $2 AND client_reference = $3`),
		s.now(), key.Callback, key.ClientReference), []any{&forgotten}})
	if err != nil {
		return storekit.Entry{}, fmt.Errorf("pgstore: reading %s: %w", key.ClientReference, err)
	}
	e.Forgotten = forgotten
	return e, nil
}

// forgottenColumns empty a movement's row but for its key and tombstone.
const forgottenColumns = `kind = NULL, started_at = NULL, deadline = NULL, next_check_at = NULL, checks = 0,
	lease_owner = NULL, lease_until = NULL, outcome_id = NULL, state = NULL, code = '', transaction_id = '',
	external_transaction_id = '', amount = 0, charges = 0, source = NULL, settled_at = NULL, body = NULL,
	by_callback = false, by_status_check = false, disagreed = false, reported_at = NULL, report_owner = NULL,
	report_until = NULL, report_attempts = 0, asked_amount = 0, asked_currency = '', service_reference = '',
	caller_started_at = NULL, currency = '', outcome_service_reference = '', outcome_kind = '', track_id = '',
	contradictions = 0, contradicted_state = '', contradicted_body = NULL, contradicted_at = NULL,
	contradicted_last_at = NULL`

// Settle records the final outcome o of key by storekit.MergeOutcome's rules. The first
// final outcome of a movement, the usual case, is written by a statement that writes it
// only if the row has none, shared with the first outcomes other goroutines settle at
// the same time; otherwise it merges in a transaction that holds the row.
func (s *Store) Settle(ctx context.Context, key storekit.MovementKey, o storekit.Outcome, body []byte) (storekit.Settlement, bool, error) {
	first, _, err := storekit.MergeOutcome(nil, key, o, body)
	if err != nil {
		return storekit.Settlement{}, false, err
	}
	now := s.now()
	// A movement purged between the two paths is settled anew: a few tries suffice.
	for range 3 {
		w, err := s.firsts.do(ctx, firstOutcome{key: key, first: first, now: now})
		switch {
		case err != nil:
			return storekit.Settlement{}, false, fmt.Errorf("pgstore: settling %s: %w", key.ClientReference, err)
		case w.written:
			if w.kind.Valid {
				first.Outcome.Kind = w.kind.String
			}
			return first, true, nil
		}
		st, changed, found, err := s.settleMerging(ctx, now, key, o, body)
		if err != nil || found {
			return st, changed, err
		}
	}
	return storekit.Settlement{}, false, fmt.Errorf("pgstore: settling %s: the movement kept vanishing", key.ClientReference)
}

// firstOutcome is a write of Settle's first path: the first final outcome of key, read
// at the caller's now.
type firstOutcome struct {
	key   storekit.MovementKey
	first storekit.Settlement
	now   time.Time
}

func (f firstOutcome) batchKey() string {
	return string(f.key.Callback) + "\x00" + f.key.ClientReference
}

// firstWritten says whether a firstOutcome was written (the row had no outcome), and
// the kind of the movement it settled, when tracked.
type firstWritten struct {
	written bool
	kind    pgtype.Text
}

// settleFirsts writes, in one statement, each outcome of fs into a row that has none
// yet, inserting the rows not there. The keys of fs are distinct.
func (s *Store) settleFirsts(ctx context.Context, fs []firstOutcome) ([]firstWritten, error) {
	c := firstColumnsPool.Get().(*firstColumns)
	defer firstColumnsPool.Put(c)
	c.reset(len(fs))
	for _, f := range fs {
		c.add(f)
	}
	at := make(map[storekit.MovementKey]int, len(fs))
	for i, f := range fs {
		at[f.key] = i
	}
	out := make([]firstWritten, len(fs))
	err := s.db.query(ctx, s.fixed("settleFirsts", settleFirstsSQL), c.args(), func(rows scanner) error {
		var (
			callback, ref string
			kind          pgtype.Text
		)
		if err := rows.Scan(&callback, &ref, &kind); err != nil {
			return err
		}
		i, ok := at[storekit.MovementKey{Callback: callback, ClientReference: ref}]
		if !ok {
			return fmt.Errorf("the statement returned a movement it was not given: %s %q", callback, ref)
		}
		out[i] = firstWritten{written: true, kind: kind}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// settleMerging merges o into the outcome key has, in a transaction that holds its row.
// found is false when the row is gone (purged meanwhile).
func (s *Store) settleMerging(ctx context.Context, now time.Time, key storekit.MovementKey, o storekit.Outcome, body []byte) (_ storekit.Settlement, changed, found bool, err error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return storekit.Settlement{}, false, false, fmt.Errorf("pgstore: settling %s: %w", key.ClientReference, err)
	}
	defer func() {
		if err != nil || !found {
			_ = tx.Rollback()
		}
	}()
	e, err := scanEntry(tx.QueryRowContext(ctx, s.q(`SELECT `+movementColumns+` FROM billing_movements
		WHERE callback_kind = $2 AND client_reference = $3 FOR UPDATE`), now, key.Callback, key.ClientReference))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return storekit.Settlement{}, false, false, nil
	case err != nil:
		return storekit.Settlement{}, false, false, fmt.Errorf("pgstore: settling %s: %w", key.ClientReference, err)
	}
	found = true
	if e.Tracked {
		o.Kind = e.Movement.Kind
	}
	next, changed, err := storekit.MergeOutcome(e.Final, key, o, body)
	if err != nil {
		return storekit.Settlement{}, false, true, err
	}
	no := next.Outcome
	// now() is the transaction's start in both statements, so the times read come back
	// unchanged.
	if _, err := tx.ExecContext(ctx, s.q(`UPDATE billing_movements SET
			outcome_id = $4, state = $5, code = $6, transaction_id = $7, external_transaction_id = $8,
			amount = $9, charges = $10, source = $11, settled_at = {t12}, body = $13,
			by_callback = $14, by_status_check = $15, disagreed = $16, reported_at = {t17},
			report_attempts = $18, lease_owner = NULL, lease_until = NULL,
			report_owner = CASE WHEN $19 THEN NULL ELSE report_owner END,
			report_until = CASE WHEN $19 THEN NULL ELSE report_until END,
			currency = $20, outcome_service_reference = $21, outcome_kind = $22
		WHERE callback_kind = $2 AND client_reference = $3`),
		now, key.Callback, key.ClientReference, next.ID, no.State, no.Code, no.TransactionID, no.ExternalTransactionID,
		no.Amount, no.Charges, no.Source, no.At, next.Body,
		next.ByCallback, next.ByStatusCheck, next.Disagreed, nullTime(next.ReportedAt),
		next.ReportAttempts, changed, no.Currency, no.ServiceReference, no.Kind); err != nil {
		return storekit.Settlement{}, false, true, fmt.Errorf("pgstore: settling %s: %w", key.ClientReference, err)
	}
	if err := tx.Commit(); err != nil {
		return storekit.Settlement{}, false, true, fmt.Errorf("pgstore: settling %s: %w", key.ClientReference, err)
	}
	return next, changed, true, nil
}

// BeginCallback records a delivery of c and claims its handling for owner, in one
// statement. c.At is the caller's now.
func (s *Store) BeginCallback(ctx context.Context, c storekit.Callback, owner string, leaseUntil time.Time) (storekit.CallbackClaim, error) {
	claim, _, err := s.BeginCallbackEntry(ctx, c, owner, leaseUntil)
	return claim, err
}

// BeginCallbackEntry is BeginCallback, reading in the same statement what Get returns
// for c.Key (storekit.CallbackEntryBeginner), as it was when the statement began.
func (s *Store) BeginCallbackEntry(ctx context.Context, c storekit.Callback, owner string, leaseUntil time.Time) (storekit.CallbackClaim, storekit.Entry, error) {
	if err := c.Validate(); err != nil {
		return "", storekit.Entry{}, err
	}
	if err := storekit.ValidateOwner(owner); err != nil {
		return "", storekit.Entry{}, err
	}
	if !leaseUntil.After(c.At) {
		return "", storekit.Entry{}, &storekit.ValidationError{Field: "leaseUntil", Rule: "must be after the callback's time"}
	}
	sum := sha256.Sum256(c.Body)
	// The body is kept once per distinct body. The claim is taken when the callback is
	// new, or when the last handler's lease has ended (it died); otherwise the record,
	// as it was when the statement began, says whether it was handled. A record that
	// appeared or vanished meanwhile is another delivery at work: retry later. The
	// movement's row, when there is one, comes with the answer (all NULL otherwise).
	var claimed, done sql.NullBool
	e, err := scanEntry(prefixed{s.db.queryRow(ctx, s.q(`WITH kept AS (
			INSERT INTO billing_callbacks AS c
				(callback_kind, client_reference, body_sha256, dedupe_key, body, first_at, last_at, deliveries)
			SELECT $2, $3, $4, $5, $6::bytea, {t1}, {t1}, 1 WHERE length($6::bytea) > 0
			ON CONFLICT (callback_kind, client_reference, body_sha256) DO UPDATE
				SET deliveries = c.deliveries + 1, last_at = greatest(c.last_at, EXCLUDED.last_at)
		), claim AS (
			INSERT INTO billing_callback_dedupe AS d (dedupe_key, done, owner, lease_until, at)
			VALUES ($5, false, $7, {t8}, {t1})
			ON CONFLICT (dedupe_key) DO UPDATE
				SET owner = EXCLUDED.owner, lease_until = EXCLUDED.lease_until, at = EXCLUDED.at
				WHERE NOT d.done AND d.lease_until <= EXCLUDED.at
			RETURNING true AS claimed
		)
		SELECT (SELECT claimed FROM claim), (SELECT done FROM billing_callback_dedupe WHERE dedupe_key = $5),
			`+movementColumns+`
		FROM (SELECT) AS one LEFT JOIN billing_movements ON callback_kind = $2 AND client_reference = $3`),
		c.At, c.Key.Callback, c.Key.ClientReference, sum[:], c.DedupeKey, c.Body, owner, leaseUntil), []any{&claimed, &done}})
	switch {
	case err != nil:
		return "", storekit.Entry{}, fmt.Errorf("pgstore: recording a callback: %w", err)
	case claimed.Bool:
		return storekit.CallbackClaimed, e, nil
	case done.Bool:
		return storekit.CallbackHandled, e, nil
	}
	return storekit.CallbackInFlight, e, nil
}

// FinishCallback ends owner's handling of dedupeKey.
func (s *Store) FinishCallback(ctx context.Context, dedupeKey, owner string, handled bool, now time.Time) error {
	if err := storekit.ValidateOwner(owner); err != nil {
		return err
	}
	stmt := `DELETE FROM billing_callback_dedupe WHERE dedupe_key = $2 AND owner = $3 AND NOT done RETURNING {skew}`
	if handled {
		stmt = `UPDATE billing_callback_dedupe SET done = true, owner = NULL, lease_until = NULL, at = {t1}
			WHERE dedupe_key = $2 AND owner = $3 AND NOT done RETURNING {skew}`
	}
	var skew int64
	err := s.db.queryRow(ctx, s.q(stmt), now, dedupeKey, owner).Scan(&skew)
	return oneRow(err, fmt.Sprintf("callback %q", dedupeKey))
}

// oneRow turns a statement under a lease that matched no row into ErrLeaseLost.
func oneRow(err error, what string) error {
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("%w: %s", storekit.ErrLeaseLost, what)
	case err != nil:
		return fmt.Errorf("pgstore: %s: %w", what, err)
	}
	return nil
}

// Callbacks returns the callbacks kept for key, first received first, at most
// storekit.MaxClaim of them.
func (s *Store) Callbacks(ctx context.Context, key storekit.MovementKey) ([]storekit.Callback, error) {
	if key.Callback == "" || key.ClientReference == "" {
		return nil, &storekit.ValidationError{Field: "key", Rule: "needs a callback kind and a client reference"}
	}
	out := []storekit.Callback{}
	err := s.db.query(ctx, s.q(`SELECT dedupe_key, body, first_at, last_at, deliveries, {skew}
		FROM billing_callbacks WHERE callback_kind = $2 AND client_reference = $3
		ORDER BY first_at, body_sha256 LIMIT $4`),
		[]any{s.now(), key.Callback, key.ClientReference, storekit.MaxClaim}, func(rows scanner) error {
			c := storekit.Callback{Key: key}
			var first, last pgtype.Timestamptz
			var skew int64
			if err := rows.Scan(&c.DedupeKey, &c.Body, &first, &last, &c.Deliveries, &skew); err != nil {
				return err
			}
			c.At, c.LastAt = callerTime(first, skew), callerTime(last, skew)
			out = append(out, c)
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("pgstore: reading callbacks: %w", err)
	}
	return out, nil
}

// querier runs a query and reads its rows: the database or a transaction.
type querier interface {
	query(ctx context.Context, query string, args []any, each func(scanner) error) error
}

// entries runs a query of movementColumns rows.
func entries(ctx context.Context, q querier, what, query string, args ...any) ([]storekit.Entry, error) {
	return entriesAs(ctx, q, what, nil, func(e storekit.Entry) storekit.Entry { return e }, query, args...)
}

// entriesAs runs a query of movementColumns rows and keeps of each what pick takes.
// With scratch, the rows are gathered there and the answer allocated once, at its size,
// instead of grown row by row: a claim answers up to its limit of rows.
func entriesAs[T any](ctx context.Context, q querier, what string, scratch *scratchRows[T], pick func(storekit.Entry) T, query string, args ...any) ([]T, error) {
	var out []T
	gather := &out
	if scratch != nil {
		gather = scratch.get()
		defer scratch.put(gather)
	}
	var r entryRow
	err := q.query(ctx, query, args, func(rows scanner) error {
		e, err := r.scan(rows)
		if err != nil {
			return err
		}
		*gather = append(*gather, pick(e))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("pgstore: %s: %w", what, err)
	}
	if scratch != nil && len(*gather) > 0 {
		out = append(make([]T, 0, len(*gather)), *gather...)
	}
	return out, nil
}

// scratchRows keeps slices for entriesAs to gather rows in.
type scratchRows[T any] struct{ pool sync.Pool }

// The scratch of the claims.
var (
	claimedMovements   scratchRows[storekit.Movement]
	claimedSettlements scratchRows[storekit.Settlement]
)

func (s *scratchRows[T]) get() *[]T {
	if p, ok := s.pool.Get().(*[]T); ok {
		return p
	}
	return new([]T)
}

// put keeps p for another query, emptied (it holds no row's strings); not one grown past
// the largest claim.
func (s *scratchRows[T]) put(p *[]T) {
	if cap(*p) > storekit.MaxClaim {
		return
	}
	clear(*p)
	*p = (*p)[:0]
	s.pool.Put(p)
}

// ClaimDue leases overdue movements to owner. The rows are chosen and locked in the
// statement that leases them, skipping rows another instance is claiming right now.
func (s *Store) ClaimDue(ctx context.Context, owner string, now, leaseUntil time.Time, limit int) ([]storekit.Movement, error) {
	limit, err := storekit.ValidateClaim(owner, now, leaseUntil, limit)
	if err != nil {
		return nil, err
	}
	return entriesAs(ctx, s.db, "claiming due movements", &claimedMovements, func(e storekit.Entry) storekit.Movement { return e.Movement }, s.q(`UPDATE billing_movements m
		SET lease_owner = $2, lease_until = {t3}
		FROM (SELECT callback_kind AS k, client_reference AS r FROM billing_movements
			WHERE outcome_id IS NULL AND kind IS NOT NULL AND next_check_at <= {t1}
				AND (lease_until IS NULL OR lease_until <= {t1})
			ORDER BY next_check_at
			LIMIT $4
			FOR UPDATE SKIP LOCKED) due
		WHERE m.callback_kind = due.k AND m.client_reference = due.r
		RETURNING `+movementColumns), now, owner, leaseUntil, limit)
}

// claimed updates the movement key held by owner, or reports ErrLeaseLost. In set, $1
// is the caller's now and args follow from $5.
func (s *Store) claimed(ctx context.Context, key storekit.MovementKey, owner, set string, args ...any) error {
	if err := key.Validate(); err != nil {
		return err
	}
	if err := storekit.ValidateOwner(owner); err != nil {
		return err
	}
	var skew int64
	err := s.db.queryRow(ctx, s.q(`UPDATE billing_movements SET `+set+`
		WHERE callback_kind = $2 AND client_reference = $3 AND lease_owner = $4
			AND outcome_id IS NULL AND kind IS NOT NULL
		RETURNING {skew}`),
		append([]any{s.now(), key.Callback, key.ClientReference, owner}, args...)...).Scan(&skew)
	return oneRow(err, fmt.Sprintf("movement %s %q", key.Callback, key.ClientReference))
}

// RenewClaim extends owner's claim on key.
func (s *Store) RenewClaim(ctx context.Context, key storekit.MovementKey, owner string, leaseUntil time.Time) error {
	return s.claimed(ctx, key, owner, `lease_until = {t5}`, leaseUntil)
}

// Reschedule counts a check that left key pending, sets its next and releases the claim.
func (s *Store) Reschedule(ctx context.Context, key storekit.MovementKey, owner string, next time.Time) error {
	if next.IsZero() {
		return &storekit.ValidationError{Field: "next", Rule: "is required"}
	}
	return s.claimed(ctx, key, owner, `next_check_at = {t5}, checks = checks + 1, lease_owner = NULL, lease_until = NULL`, next)
}

// ReleaseClaim gives back owner's claim on key.
func (s *Store) ReleaseClaim(ctx context.Context, key storekit.MovementKey, owner string) error {
	return s.claimed(ctx, key, owner, `lease_owner = NULL, lease_until = NULL`)
}

// ClaimUnreported leases settled, unreported outcomes to owner.
func (s *Store) ClaimUnreported(ctx context.Context, owner string, now, leaseUntil time.Time, limit int) ([]storekit.Settlement, error) {
	limit, err := storekit.ValidateClaim(owner, now, leaseUntil, limit)
	if err != nil {
		return nil, err
	}
	return entriesAs(ctx, s.db, "claiming unreported outcomes", &claimedSettlements, func(e storekit.Entry) storekit.Settlement { return *e.Final }, s.q(`UPDATE billing_movements m
		SET report_owner = $2, report_until = {t3}
		FROM (SELECT callback_kind AS k, client_reference AS r FROM billing_movements
			WHERE outcome_id IS NOT NULL AND kind IS NOT NULL AND reported_at IS NULL
				AND (report_until IS NULL OR report_until <= {t1})
			ORDER BY settled_at
			LIMIT $4
			FOR UPDATE SKIP LOCKED) due
		WHERE m.callback_kind = due.k AND m.client_reference = due.r
		RETURNING `+movementColumns), now, owner, leaseUntil, limit)
}

// MarkReported records that the outcome id was reported. After an OnOutcomeTx handler
// of this store marked it in its own transaction, it runs no statement.
func (s *Store) MarkReported(ctx context.Context, id string, now time.Time) error {
	if id == "" {
		return &storekit.ValidationError{Field: "id", Rule: "is required"}
	}
	if now.IsZero() {
		return &storekit.ValidationError{Field: "now", Rule: "is required"}
	}
	if s.fresh.take(id) {
		return nil
	}
	if _, err := s.reports.do(ctx, reportedAt{id: id, now: now}); err != nil {
		return fmt.Errorf("pgstore: marking %q reported: %w", id, err)
	}
	return nil
}

// reportedAt is a write of MarkReported: the outcome id reported at the caller's now.
type reportedAt struct {
	id  string
	now time.Time
}

func (r reportedAt) batchKey() string { return r.id }

// markReported marks, in one statement, each outcome of rs reported.
func (s *Store) markReported(ctx context.Context, rs []reportedAt) ([]struct{}, error) {
	ids, ats := make([]string, len(rs)), make([]time.Time, len(rs))
	for i, r := range rs {
		ids[i], ats[i] = r.id, r.now
	}
	if _, err := s.db.ExecContext(ctx, s.fixed("markReported", markReportedSQL), &ids, &ats); err != nil {
		return nil, err
	}
	return make([]struct{}, len(rs)), nil
}

// RetryReport counts a failed report of id and defers the next until at.
func (s *Store) RetryReport(ctx context.Context, id, owner string, at time.Time) error {
	if id == "" {
		return &storekit.ValidationError{Field: "id", Rule: "is required"}
	}
	if err := storekit.ValidateOwner(owner); err != nil {
		return err
	}
	if at.IsZero() {
		return &storekit.ValidationError{Field: "at", Rule: "is required"}
	}
	var skew int64
	err := s.db.queryRow(ctx, s.q(`UPDATE billing_movements
		SET report_attempts = report_attempts + 1, report_owner = NULL, report_until = {t4}
		WHERE outcome_id = $2 AND report_owner = $3 AND kind IS NOT NULL AND reported_at IS NULL
		RETURNING {skew}`), s.now(), id, owner, at).Scan(&skew)
	return oneRow(err, fmt.Sprintf("outcome %q", id))
}

// RenewReport extends owner's claim on the unreported outcome id to leaseUntil, so that
// no other instance reports it while OnOutcome runs (storekit.ReportLeaseRenewer).
// storekit.ErrLeaseLost when owner no longer holds it.
func (s *Store) RenewReport(ctx context.Context, id, owner string, leaseUntil time.Time) error {
	if id == "" {
		return &storekit.ValidationError{Field: "id", Rule: "is required"}
	}
	if err := storekit.ValidateOwner(owner); err != nil {
		return err
	}
	if leaseUntil.IsZero() {
		return &storekit.ValidationError{Field: "leaseUntil", Rule: "is required"}
	}
	var skew int64
	err := s.db.queryRow(ctx, s.q(`UPDATE billing_movements SET report_until = {t4}
		WHERE outcome_id = $2 AND report_owner = $3 AND kind IS NOT NULL AND reported_at IS NULL
		RETURNING {skew}`), s.now(), id, owner, leaseUntil).Scan(&skew)
	return oneRow(err, fmt.Sprintf("outcome %q", id))
}

// Pending counts the tracked, unsettled movements and finds when the oldest started.
func (s *Store) Pending(ctx context.Context) (int, time.Time, error) {
	var (
		count  int
		oldest pgtype.Timestamptz
		skew   int64
	)
	err := s.db.queryRow(ctx, s.q(`SELECT count(*), min(started_at), {skew} FROM billing_movements
		WHERE outcome_id IS NULL AND kind IS NOT NULL`), s.now()).Scan(&count, &oldest, &skew)
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("pgstore: counting pending movements: %w", err)
	}
	return count, callerTime(oldest, skew), nil
}

// Reconcile reports the tracked movements started in [from, to) that need a look.
func (s *Store) Reconcile(ctx context.Context, from, to, now time.Time) (billing.Reconciliation, error) {
	if !from.Before(to) {
		return billing.Reconciliation{}, &storekit.ValidationError{Field: "to", Rule: "must be after from"}
	}
	const window = `kind IS NOT NULL AND started_at >= {t2} AND started_at < {t3}`
	const order = ` ORDER BY started_at, client_reference`
	var r billing.Reconciliation
	// Each list keeps storekit.MaxClaim entries, the earliest started; one more is read
	// to tell that the list was cut (Truncated). The settled ones share a query, which
	// may then cut both lists: it reads two lists' worth and one more.
	es, err := entries(ctx, s.db, "reconciling", s.q(`SELECT `+movementColumns+` FROM billing_movements
		WHERE `+window+` AND outcome_id IS NULL AND deadline < {t1}`+order+` LIMIT `+strconv.Itoa(storekit.MaxClaim+1)), now, from, to)
	if err != nil {
		return r, err
	}
	for _, e := range es {
		r.Overdue = append(r.Overdue, e.Movement)
	}
	const settledLimit = 2*storekit.MaxClaim + 1
	es, err = entries(ctx, s.db, "reconciling", s.q(`SELECT `+movementColumns+` FROM billing_movements
		WHERE `+window+` AND outcome_id IS NOT NULL AND (disagreed OR (by_status_check AND NOT by_callback))`+order+
		` LIMIT `+strconv.Itoa(settledLimit)), now, from, to)
	if err != nil {
		return r, err
	}
	for _, e := range es {
		if e.Final.Disagreed {
			r.Disagreed = append(r.Disagreed, *e.Final)
		} else {
			r.StatusCheckOnly = append(r.StatusCheckOnly, *e.Final)
		}
	}
	r.Truncated = len(es) == settledLimit
	for _, list := range []*[]storekit.Settlement{&r.Disagreed, &r.StatusCheckOnly} {
		if len(*list) > storekit.MaxClaim {
			*list, r.Truncated = (*list)[:storekit.MaxClaim], true
		}
	}
	if len(r.Overdue) > storekit.MaxClaim {
		r.Overdue, r.Truncated = r.Overdue[:storekit.MaxClaim], true
	}
	if r.Contradicted, err = s.contradicted(ctx, now, from, to); err != nil {
		return r, err
	}
	if len(r.Contradicted) > storekit.MaxClaim {
		r.Contradicted, r.Truncated = r.Contradicted[:storekit.MaxClaim], true
	}
	if r.Untracked, err = s.untracked(ctx, now, from, to); err != nil {
		return r, err
	}
	r.Cap()
	return r, nil
}

// contradicted reads the contradiction records of the tracked movements started in
// [from, to), pending or settled without disagreement (a disagreement is listed in
// Disagreed), the earliest started first: one more than a list keeps.
func (s *Store) contradicted(ctx context.Context, now, from, to time.Time) ([]storekit.Contradiction, error) {
	var out []storekit.Contradiction
	err := s.db.query(ctx, s.q(`SELECT callback_kind, client_reference, contradicted_state, contradicted_body,
			contradicted_at, contradicted_last_at, contradictions, {skew}
		FROM billing_movements
		WHERE kind IS NOT NULL AND started_at >= {t2} AND started_at < {t3} AND contradictions > 0 AND NOT disagreed
		ORDER BY started_at, client_reference LIMIT `+strconv.Itoa(storekit.MaxClaim+1)), []any{now, from, to}, func(rows scanner) error {
		var (
			c        storekit.Contradiction
			at, last pgtype.Timestamptz
			skew     int64
		)
		if err := rows.Scan(&c.Key.Callback, &c.Key.ClientReference, &c.Claimed, &c.Body, &at, &last, &c.Count, &skew); err != nil {
			return err
		}
		c.At, c.LastAt = callerTime(at, skew), callerTime(last, skew)
		out = append(out, c)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("pgstore: reconciling: %w", err)
	}
	return out, nil
}

var _ storekit.ContradictionRecorder = (*Store)(nil)

// RecordContradiction keeps c for the movement tracked under c.Key
// (storekit.ContradictionRecorder), in one statement: the first one with its claimed
// state and body, later ones counted. It reports false when nothing is tracked under the
// key. The record lives in the movement's row, so that Release and Purge forget it with
// the movement; Release does not read it.
func (s *Store) RecordContradiction(ctx context.Context, c storekit.Contradiction) (bool, error) {
	if err := c.Validate(); err != nil {
		return false, err
	}
	res, err := s.db.ExecContext(ctx, s.q(`UPDATE billing_movements SET
			contradictions       = contradictions + 1,
			contradicted_state   = CASE WHEN contradictions = 0 THEN $4 ELSE contradicted_state END,
			contradicted_body    = CASE WHEN contradictions = 0 THEN $5::bytea ELSE contradicted_body END,
			contradicted_at      = CASE WHEN contradictions = 0 THEN {t1} ELSE contradicted_at END,
			contradicted_last_at = greatest(contradicted_last_at, {t1})
		WHERE callback_kind = $2 AND client_reference = $3 AND kind IS NOT NULL`),
		c.At, c.Key.Callback, c.Key.ClientReference, c.Claimed, c.Body)
	if err != nil {
		return false, fmt.Errorf("pgstore: recording a contradicted callback of %s: %w", c.Key.ClientReference, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("pgstore: recording a contradicted callback of %s: %w", c.Key.ClientReference, err)
	}
	return n > 0, nil
}

// Release forgets the tracked, unsettled movement key that the Track started at
// startedAt recorded, when no callback was kept for it, in one statement. startedAt is
// compared with the start as that Track was given it, never on the store's clock: it
// names one Track call, whatever the clocks did since. A movement tracked before the
// schema kept that start is never released: its status check settles it.
func (s *Store) Release(ctx context.Context, key storekit.MovementKey, startedAt time.Time) (bool, error) {
	if err := key.Validate(); err != nil {
		return false, err
	}
	if startedAt.IsZero() {
		return false, &storekit.ValidationError{Field: "startedAt", Rule: "is required"}
	}
	res, err := s.db.ExecContext(ctx, s.q(`DELETE FROM billing_movements m
		WHERE callback_kind = $1 AND client_reference = $2 AND kind IS NOT NULL AND outcome_id IS NULL
			AND caller_started_at = $3::timestamptz
			AND NOT EXISTS (SELECT 1 FROM billing_callbacks c
				WHERE c.callback_kind = m.callback_kind AND c.client_reference = m.client_reference)`),
		key.Callback, key.ClientReference, startedAt)
	if err != nil {
		return false, fmt.Errorf("pgstore: releasing %s: %w", key.ClientReference, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("pgstore: releasing %s: %w", key.ClientReference, err)
	}
	return n > 0, nil
}

// RecordReference records the service's reference of the tracked movement key, keeping
// one already recorded, in one statement that returns the movement as stored.
// storekit.ErrNotTracked when key is not tracked.
func (s *Store) RecordReference(ctx context.Context, key storekit.MovementKey, serviceReference string) (storekit.Movement, error) {
	if err := key.Validate(); err != nil {
		return storekit.Movement{}, err
	}
	if err := storekit.ValidateReference("serviceReference", serviceReference, storekit.MaxServiceReference); err != nil {
		return storekit.Movement{}, err
	}
	e, err := scanEntry(s.db.queryRow(ctx, s.q(`UPDATE billing_movements
		SET service_reference = CASE WHEN service_reference = '' THEN $4 ELSE service_reference END
		WHERE callback_kind = $2 AND client_reference = $3 AND kind IS NOT NULL
		RETURNING `+movementColumns), s.now(), key.Callback, key.ClientReference, serviceReference))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return storekit.Movement{}, fmt.Errorf("%w: %s %q", storekit.ErrNotTracked, key.Callback, key.ClientReference)
	case err != nil:
		return storekit.Movement{}, fmt.Errorf("pgstore: recording the reference of %s: %w", key.ClientReference, err)
	}
	return e.Movement, nil
}

// Purge forgets what retention no longer asks to keep, in one transaction.
func (s *Store) Purge(ctx context.Context, before time.Time) (_ int, err error) {
	if before.IsZero() {
		return 0, &storekit.ValidationError{Field: "before", Rule: "is required"}
	}
	now := s.now()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("pgstore: purging: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	var n int
	// A tracked movement leaves a tombstone in its own row, emptied but for its key, so
	// that it is never tracked and reported again (see Get and Track): a Track of the key
	// waits for this transaction on the row's lock, then finds the tombstone. An outcome
	// settled beside a tombstone since (a callback delivered again) is emptied the same
	// way; a row never tracked goes.
	if err := tx.QueryRowContext(ctx, s.q(`WITH forgotten AS (
			UPDATE billing_movements SET `+forgottenColumns+`, forgotten_at = coalesce(forgotten_at, {t1})
			WHERE outcome_id IS NOT NULL AND (reported_at IS NOT NULL OR kind IS NULL)
				AND coalesce(reported_at, settled_at) < {t2} AND (kind IS NOT NULL OR forgotten_at IS NOT NULL)
			RETURNING callback_kind, client_reference
		), deleted AS (
			DELETE FROM billing_movements
			WHERE outcome_id IS NOT NULL AND (reported_at IS NOT NULL OR kind IS NULL)
				AND coalesce(reported_at, settled_at) < {t2} AND kind IS NULL AND forgotten_at IS NULL
			RETURNING callback_kind, client_reference
		), gone AS (
			SELECT * FROM forgotten UNION ALL SELECT * FROM deleted
		), bodies AS (
			DELETE FROM billing_callbacks c USING gone g
			WHERE c.callback_kind = g.callback_kind AND c.client_reference = g.client_reference
		)
		SELECT count(*) FROM gone`), now, before).Scan(&n); err != nil {
		return 0, fmt.Errorf("pgstore: purging movements: %w", err)
	}
	if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM billing_callback_dedupe
		WHERE CASE WHEN done THEN at < {t2} ELSE lease_until < {t2} END`), now, before); err != nil {
		return 0, fmt.Errorf("pgstore: purging callback records: %w", err)
	}
	// Bodies delivered for references nobody tracks or settles (a tombstone alone holds
	// no movement).
	if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM billing_callbacks c WHERE last_at < {t2}
		AND NOT EXISTS (SELECT 1 FROM billing_movements m
			WHERE m.callback_kind = c.callback_kind AND m.client_reference = c.client_reference
				AND (m.kind IS NOT NULL OR m.outcome_id IS NOT NULL))`), now, before); err != nil {
		return 0, fmt.Errorf("pgstore: purging callbacks: %w", err)
	}
	// The attempts of movements forgotten or released, or of a key's earlier life.
	if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM billing_attempts a WHERE at < {t2}
		AND NOT EXISTS (SELECT 1 FROM billing_movements m
			WHERE m.callback_kind = a.callback_kind AND m.client_reference = a.client_reference
				AND m.started_at = a.started_at AND m.kind IS NOT NULL)`), now, before); err != nil {
		return 0, fmt.Errorf("pgstore: purging attempts: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("pgstore: purging: %w", err)
	}
	return n, nil
}
