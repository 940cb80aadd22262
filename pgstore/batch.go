package pgstore

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/billingsdk/billing-go/internal/workers"
)

// maxBatch is how many writes one statement of a batcher makes at most.
const maxBatch = 100

// A batcher runs its statements one after the other, in one lane, while they answer.
// When every statement under way has run for batchStall (a connection gone silent holds
// one until its callers' deadlines end it), the writes waiting take another lane, up to
// batchLanes at once, so that a silent connection holds up no other write.
const (
	batchLanes = 4
	batchStall = time.Second
)

// batcher makes the like writes of many goroutines in few statements, as a group commit
// does. A write that finds no statement under way starts one at once; one that arrives
// while a statement runs waits, then goes in the next with every other write that
// arrived meanwhile. So a lone write costs what it did alone, and under load each
// statement carries what accumulated during the one before: fewer round trips, the same
// writes. A batch holds one write per key: INSERT ... ON CONFLICT may change a row once
// per statement.
//
// A caller whose ctx ends while its write waits gets ctx's error and its write is not
// made; once the statement has started, the write may still be made, as with any
// statement whose answer is lost. The statement's context ends when every caller in its
// batch has given up, so it is bounded by the callers' own deadlines. When a statement
// of several writes fails, each caller makes its write alone under its own ctx, so that
// one write the database refuses fails no other.
type batcher[T, R any] struct {
	key   func(T) string
	run   func(ctx context.Context, items []T) ([]R, error) // one result per item, in order
	stall time.Duration                                     // batchStall; tests shorten it

	mu        sync.Mutex
	queue     []*batchWrite[T, R]
	running   int             // lanes under way, at most batchLanes
	lastStart time.Time       // when the latest statement started
	keys      map[string]bool // next's, kept between batches

	free  sync.Pool // *batchWrite[T, R] whose answer was taken: nothing sends on them again
	items sync.Pool // *[]T, the items of a past statement
}

type batchWrite[T, R any] struct {
	ctx  context.Context
	item T
	key  string              // b.key(item), taken once
	done chan batchResult[R] // buffered: the statement never waits for its caller
}

type batchResult[R any] struct {
	val R
	err error
}

// errAlone tells a caller its batch failed as a whole: make the write alone.
var errAlone = errors.New("pgstore: batch failed")

// do makes the write item, batched with others, and returns its result.
func (b *batcher[T, R]) do(ctx context.Context, item T) (R, error) {
	if err := ctx.Err(); err != nil {
		var zero R
		return zero, err
	}
	w, _ := b.free.Get().(*batchWrite[T, R])
	if w == nil {
		w = &batchWrite[T, R]{done: make(chan batchResult[R], 1)}
	}
	w.ctx, w.item, w.key = ctx, item, b.key(item)
	b.mu.Lock()
	b.queue = append(b.queue, w)
	b.openLaneLocked()
	b.mu.Unlock()
	var r batchResult[R]
	select {
	case r = <-w.done:
	case <-ctx.Done():
		select {
		case r = <-w.done: // it ended as well: its answer is known
		default:
			var zero R
			return zero, ctx.Err() // w stays the lane's: its answer may still come
		}
	}
	// The one answer was taken and the lane is done with w: it may serve another write.
	var zero T
	w.ctx, w.item, w.key = nil, zero, ""
	b.free.Put(w)
	if errors.Is(r.err, errAlone) {
		vals, err := b.run(ctx, []T{item})
		if err != nil {
			var zero R
			return zero, err
		}
		return vals[0], nil
	}
	return r.val, r.err
}

// openLaneLocked starts a lane for the writes waiting when none runs, or when every
// statement under way has run for the stall (the latest started that long ago). A lane
// runs on the process's pooled goroutines (workers.Shared), which keep their stacks
// grown to the driver's depth between statements.
func (b *batcher[T, R]) openLaneLocked() {
	if len(b.queue) == 0 || b.running >= batchLanes || (b.running > 0 && time.Since(b.lastStart) < b.stall) {
		return
	}
	b.running++
	workers.Shared.Go(b.drain)
}

// drain runs batches, one after the other, until the queue is empty: one lane.
func (b *batcher[T, R]) drain() {
	stalled := b.stallTimer()
	defer stalled.Stop()
	for {
		batch := b.next()
		if len(batch) == 0 {
			return
		}
		b.runBatch(batch, stalled)
	}
}

// stallTimer returns a stopped timer that, once reset, lets the writes that came while a
// statement was held up take another lane: one for every statement of a lane.
func (b *batcher[T, R]) stallTimer() *time.Timer {
	t := time.AfterFunc(time.Hour, func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.openLaneLocked()
	})
	t.Stop()
	return t
}

// next takes the next batch from the queue: at most maxBatch writes, one per key, of
// callers still waiting, in the order of their keys, so that the statements of all
// batches, of every lane and every instance, take their rows' locks in one order and
// never deadlock. It ends the lane when it finds none.
func (b *batcher[T, R]) next() []*batchWrite[T, R] {
	b.mu.Lock()
	defer b.mu.Unlock()
	var batch []*batchWrite[T, R]
	if b.keys == nil {
		b.keys = make(map[string]bool)
	}
	keys := b.keys
	defer clear(keys)
	rest := b.queue[:0]
	for _, w := range b.queue {
		k := w.key
		switch {
		case w.ctx.Err() != nil: // its caller has gone: it is not made
		case len(batch) < maxBatch && !keys[k]:
			keys[k] = true
			batch = append(batch, w)
		default:
			rest = append(rest, w)
		}
	}
	clear(b.queue[len(rest):])
	b.queue = rest
	if len(batch) == 0 {
		b.running--
	} else {
		b.lastStart = time.Now()
	}
	slices.SortFunc(batch, func(x, y *batchWrite[T, R]) int { return strings.Compare(x.key, y.key) })
	return batch
}

// runBatch makes one statement of batch and answers its callers.
func (b *batcher[T, R]) runBatch(batch []*batchWrite[T, R], stalled *time.Timer) {
	ctx, stop := untilAllGone(batch)
	defer stop()
	// Writes that came while this statement was held up take another lane.
	stalled.Reset(b.stall)
	defer stalled.Stop()
	held, _ := b.items.Get().(*[]T)
	if held == nil {
		held = new([]T)
	}
	items := emptied(*held, len(batch))
	for _, w := range batch {
		items = append(items, w.item)
	}
	vals, err := b.runRecovered(ctx, items)
	// A statement's run reads its items before it returns: they serve the next batch.
	*held = emptied(items, 0)
	b.items.Put(held)
	for i, w := range batch {
		switch {
		case err != nil && len(batch) > 1:
			w.done <- batchResult[R]{err: errAlone}
		case err != nil:
			w.done <- batchResult[R]{err: err}
		default:
			w.done <- batchResult[R]{val: vals[i]}
		}
	}
}

// runRecovered is run on a lane, where a panic (a driver's bug) would end the process:
// it fails the batch instead, so that each caller makes its write alone on its own
// goroutine, where a panic is its caller's to recover.
func (b *batcher[T, R]) runRecovered(ctx context.Context, items []T) (vals []R, err error) {
	defer func() {
		if p := recover(); p != nil {
			vals, err = nil, fmt.Errorf("%w: the statement panicked: %v", errAlone, p)
		}
	}()
	return b.run(ctx, items)
}

// untilAllGone returns a context that ends when the context of every write of batch has
// ended. It carries none of their values: the statement is no one caller's. Writes
// that share a context (a Tracker's round gives its calls one deadline) are watched once.
func untilAllGone[T, R any](batch []*batchWrite[T, R]) (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	watched := make([]context.Context, 0, len(batch))
	for _, w := range batch {
		if !slices.ContainsFunc(watched, func(c context.Context) bool { return sameContext(c, w.ctx) }) {
			watched = append(watched, w.ctx)
		}
	}
	var left atomic.Int64
	left.Store(int64(len(watched)))
	gone := func() {
		if left.Add(-1) == 0 {
			cancel()
		}
	}
	stops := make([]func() bool, len(watched))
	for i, c := range watched {
		stops[i] = context.AfterFunc(c, gone)
	}
	return ctx, func() {
		for _, stop := range stops {
			stop()
		}
		cancel()
	}
}

// sameContext reports whether a and b are one context: the same pointer. Other kinds of
// context are never taken for one another (comparing them could panic).
func sameContext(a, b context.Context) bool {
	t := reflect.TypeOf(a)
	return t != nil && t.Kind() == reflect.Pointer && t == reflect.TypeOf(b) && a == b
}

// fixed returns the statement build writes for the store's clock (build is told
// whether the store compares the callers' times as they are), qualified and built
// once. A batch statement whose rows come as arrays (unnest) has one text whatever
// its number of rows, so it is parsed and described once, and its arguments are a
// few arrays rather than a value per cell.
func (s *Store) fixed(name string, build func(caller bool) string) string {
	caller := s.callerClock()
	cache := &s.sql[0]
	if caller {
		cache = &s.sql[1]
	}
	key := "\x00" + name // never a template's text
	if stmt, ok := cache.Load(key); ok {
		return stmt.(string)
	}
	stmt := s.qualify(build(caller))
	cache.Store(key, stmt)
	return stmt
}

// rowTime is a batch row's time at on the store's clock, given at and the caller's
// now as columns of the row: the array form of a statement template's {tN}.
func rowTime(caller bool, at, now string) string {
	if caller {
		return at
	}
	return "(now() + (" + at + " - " + now + "))"
}

// firstColumns are the first outcomes of a settleFirsts batch as the columns of its
// statement, one array each.
type firstColumns struct {
	callback, reference, id, state, code, txID, extTxID, source []string
	currency, serviceReference, kind                            []string
	amount, charges                                             []int64
	at, now                                                     []time.Time
	body                                                        [][]byte
	byCallback, byStatusCheck                                   []bool
	list                                                        []any // args, made once
}

// firstColumnsPool keeps the columns of past batches for the next: a statement's
// arguments are read before it returns.
var firstColumnsPool = sync.Pool{New: func() any { return new(firstColumns) }}

// reset empties c for a batch of n, keeping the columns' room when it is enough.
func (c *firstColumns) reset(n int) {
	for _, col := range []*[]string{&c.callback, &c.reference, &c.id, &c.state, &c.code, &c.txID, &c.extTxID,
		&c.source, &c.currency, &c.serviceReference, &c.kind} {
		*col = emptied(*col, n)
	}
	c.amount, c.charges = emptied(c.amount, n), emptied(c.charges, n)
	c.at, c.now = emptied(c.at, n), emptied(c.now, n)
	c.body = emptied(c.body, n)
	c.byCallback, c.byStatusCheck = emptied(c.byCallback, n), emptied(c.byStatusCheck, n)
}

// emptied returns col empty with room for n, cleared so that it holds on to nothing.
func emptied[T any](col []T, n int) []T {
	if cap(col) < n {
		return make([]T, 0, n)
	}
	clear(col[:cap(col)])
	return col[:0]
}

func (c *firstColumns) add(f firstOutcome) {
	o := f.first.Outcome
	c.callback = append(c.callback, f.key.Callback)
	c.reference = append(c.reference, f.key.ClientReference)
	c.id = append(c.id, f.first.ID)
	c.state = append(c.state, o.State)
	c.code = append(c.code, o.Code)
	c.txID = append(c.txID, o.TransactionID)
	c.extTxID = append(c.extTxID, o.ExternalTransactionID)
	c.amount = append(c.amount, o.Amount)
	c.charges = append(c.charges, o.Charges)
	c.source = append(c.source, o.Source)
	c.at = append(c.at, o.At)
	c.now = append(c.now, f.now)
	c.body = append(c.body, f.first.Body)
	c.byCallback = append(c.byCallback, f.first.ByCallback)
	c.byStatusCheck = append(c.byStatusCheck, f.first.ByStatusCheck)
	c.currency = append(c.currency, o.Currency)
	c.serviceReference = append(c.serviceReference, o.ServiceReference)
	c.kind = append(c.kind, o.Kind)
}

// args are the statement's arguments, in the order of settleFirstsSQL's unnest: a
// pointer to each column (see statementArgs).
func (c *firstColumns) args() []any {
	if c.list == nil {
		c.list = []any{&c.callback, &c.reference, &c.id, &c.state, &c.code, &c.txID, &c.extTxID, &c.amount, &c.charges, &c.source,
			&c.at, &c.now, &c.body, &c.byCallback, &c.byStatusCheck, &c.currency, &c.serviceReference, &c.kind}
	}
	return c.list
}

// settleFirstsSQL writes each first outcome into a row that has none yet, inserting
// the rows not there, and returns the rows it wrote.
func settleFirstsSQL(caller bool) string {
	return `INSERT INTO billing_movements AS m
			(callback_kind, client_reference, outcome_id, state, code, transaction_id, external_transaction_id,
			 amount, charges, source, settled_at, body, by_callback, by_status_check,
			 currency, outcome_service_reference, outcome_kind)
		SELECT u.callback_kind, u.client_reference, u.outcome_id, u.state, u.code, u.transaction_id, u.external_transaction_id,
			u.amount, u.charges, u.source, ` + rowTime(caller, "u.at", "u.now") + `, u.body, u.by_callback, u.by_status_check,
			u.currency, u.service_reference, u.kind
		FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
			$8::bigint[], $9::bigint[], $10::text[], $11::timestamptz[], $12::timestamptz[], $13::bytea[],
			$14::boolean[], $15::boolean[], $16::text[], $17::text[], $18::text[])
			AS u (callback_kind, client_reference, outcome_id, state, code, transaction_id, external_transaction_id,
			amount, charges, source, at, now, body, by_callback, by_status_check, currency, service_reference, kind)
		ON CONFLICT (callback_kind, client_reference) DO UPDATE SET
			outcome_id = EXCLUDED.outcome_id, state = EXCLUDED.state, code = EXCLUDED.code,
			outcome_kind = coalesce(m.kind, EXCLUDED.outcome_kind),
			transaction_id = EXCLUDED.transaction_id, external_transaction_id = EXCLUDED.external_transaction_id,
			amount = EXCLUDED.amount, charges = EXCLUDED.charges, source = EXCLUDED.source,
			currency = EXCLUDED.currency, outcome_service_reference = EXCLUDED.outcome_service_reference,
			settled_at = EXCLUDED.settled_at, body = EXCLUDED.body, by_callback = EXCLUDED.by_callback,
			by_status_check = EXCLUDED.by_status_check, disagreed = false, reported_at = NULL,
			report_attempts = 0, lease_owner = NULL, lease_until = NULL, report_owner = NULL, report_until = NULL
			WHERE m.outcome_id IS NULL
		RETURNING m.callback_kind, m.client_reference, m.kind`
}

// markReportedSQL marks each outcome id of $1 reported at its time in $2 (the
// caller's now, so the store's own now on its clock).
func markReportedSQL(caller bool) string {
	at := "now()"
	if caller {
		at = "u.at"
	}
	return `UPDATE billing_movements m SET reported_at = x.at, report_owner = NULL, report_until = NULL
		FROM (SELECT u.id, ` + at + ` AS at FROM unnest($1::text[], $2::timestamptz[]) AS u (id, at)) AS x
		WHERE m.outcome_id = x.id AND m.kind IS NOT NULL AND m.reported_at IS NULL`
}
