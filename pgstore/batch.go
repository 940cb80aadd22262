package pgstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
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
	running   int       // lanes under way, at most batchLanes
	lastStart time.Time // when the latest statement started
}

type batchWrite[T, R any] struct {
	ctx  context.Context
	item T
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
	w := &batchWrite[T, R]{ctx: ctx, item: item, done: make(chan batchResult[R], 1)}
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
			return zero, ctx.Err()
		}
	}
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
// statement under way has run for the stall (the latest started that long ago).
func (b *batcher[T, R]) openLaneLocked() {
	if len(b.queue) == 0 || b.running >= batchLanes || (b.running > 0 && time.Since(b.lastStart) < b.stall) {
		return
	}
	b.running++
	go b.drain()
}

// drain runs batches, one after the other, until the queue is empty: one lane.
func (b *batcher[T, R]) drain() {
	for {
		batch := b.next()
		if len(batch) == 0 {
			return
		}
		b.runBatch(batch)
	}
}

// next takes the next batch from the queue: at most maxBatch writes, one per key, of
// callers still waiting, in the order of their keys, so that the statements of all
// batches, of every lane and every instance, take their rows' locks in one order and
// never deadlock. It ends the lane when it finds none.
func (b *batcher[T, R]) next() []*batchWrite[T, R] {
	b.mu.Lock()
	defer b.mu.Unlock()
	var batch []*batchWrite[T, R]
	keys := make(map[string]bool)
	rest := b.queue[:0]
	for _, w := range b.queue {
		k := b.key(w.item)
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
	slices.SortFunc(batch, func(x, y *batchWrite[T, R]) int { return strings.Compare(b.key(x.item), b.key(y.item)) })
	return batch
}

// runBatch makes one statement of batch and answers its callers.
func (b *batcher[T, R]) runBatch(batch []*batchWrite[T, R]) {
	ctx, stop := untilAllGone(batch)
	defer stop()
	// Writes that came while this statement was held up take another lane.
	stalled := time.AfterFunc(b.stall, func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.openLaneLocked()
	})
	defer stalled.Stop()
	items := make([]T, len(batch))
	for i, w := range batch {
		items[i] = w.item
	}
	vals, err := b.runRecovered(ctx, items)
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
// ended. It carries none of their values: the statement is no one caller's.
func untilAllGone[T, R any](batch []*batchWrite[T, R]) (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var left atomic.Int64
	left.Store(int64(len(batch)))
	stops := make([]func() bool, len(batch))
	for i, w := range batch {
		stops[i] = context.AfterFunc(w.ctx, func() {
			if left.Add(-1) == 0 {
				cancel()
			}
		})
	}
	return ctx, func() {
		for _, stop := range stops {
			stop()
		}
		cancel()
	}
}

// params builds the parameters of a statement of many rows, numbering them as they are
// added.
type params struct {
	args []any
	text strings.Builder
}

// add adds v and writes its placeholder, cast to typ when typ is not empty.
func (p *params) add(v any, typ string) {
	p.args = append(p.args, v)
	p.text.WriteByte('$')
	p.text.WriteString(strconv.Itoa(len(p.args)))
	if typ != "" {
		p.text.WriteString("::")
		p.text.WriteString(typ)
	}
}

// write writes SQL text.
func (p *params) write(sql string) { p.text.WriteString(sql) }

// time writes the time at, given on the clock of a caller whose now is now, on the
// store's clock: the row-by-row form of a statement template's {tN}.
func (s *Store) time(p *params, at, now time.Time) {
	if s.callerClock() {
		p.add(at, "timestamptz")
		return
	}
	p.write("(now() + (")
	p.add(at, "timestamptz")
	p.write(" - ")
	p.add(now, "timestamptz")
	p.write("))")
}
