package pgstore

import (
	"context"
	"reflect"
	"time"
)

// Migrations exposes the schema's versions to the tests, which build older schemas.
var Migrations = migrations

// HoldBatches keeps the store's batched writes (Settle's first outcomes, MarkReported)
// from starting until release is called, so that a test can put many in one statement;
// queued counts the writes waiting. The store must have no batch under way.
func HoldBatches(s *Store) (queued func() int, release func()) {
	s.firsts.hold()
	s.reports.hold()
	queued = func() int { return s.firsts.queued() + s.reports.queued() }
	release = func() {
		for range batchLanes {
			go s.firsts.drain()
			go s.reports.drain()
		}
	}
	return queued, release
}

func (b *batcher[T, R]) hold() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.running != 0 {
		panic("pgstore: a batch is under way")
	}
	b.running = batchLanes
}

func (b *batcher[T, R]) queued() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.queue)
}

// SetBatchStall sets how long the store's batched statements run before the writes
// waiting take another lane; call it before the store's first write.
func SetBatchStall(s *Store, d time.Duration) {
	s.firsts.stall = d
	s.reports.stall = d
}

// SettleLanes counts the lanes of Settle's batched writes under way, and the writes
// waiting for one.
func SettleLanes(s *Store) (lanes, queued int) {
	s.firsts.mu.Lock()
	defer s.firsts.mu.Unlock()
	return s.firsts.running, len(s.firsts.queue)
}

// AppendVersion appends a version to the package's migrations until restore is called,
// with required, when not 0, the version a release must know after it (a contraction).
// Tests using it must not run in parallel with others.
func AppendVersion(stmts []string, required int) (restore func()) {
	saved := migrations
	migrations = append(migrations[:len(migrations):len(migrations)], stmts)
	if required != 0 {
		contractions[len(migrations)] = required
	}
	return func() {
		delete(contractions, len(migrations))
		migrations = saved
	}
}

// LastRecordedVersion is the last version recorded in billing_schema_migrations.
const LastRecordedVersion = lastRecordedVersion

// ArrayArgs are args as the store sends them: the batched writes' slices as array
// literals. The slices of args are given as they are.
func ArrayArgs(args []any) []any {
	byPointer := make([]any, len(args))
	for i, a := range args {
		p := reflect.New(reflect.TypeOf(a))
		p.Elem().Set(reflect.ValueOf(a))
		byPointer[i] = p.Interface()
	}
	return conn{}.args(byPointer).list
}

// ArrayCasts are the kinds of slice the store sends as array literals, and the type of
// each.
func ArrayCasts() map[reflect.Type]string {
	casts := make(map[reflect.Type]string, len(arrayWriters))
	for t, w := range arrayWriters {
		casts[t.Elem()] = w.cast
	}
	return casts
}

// Exec runs query as the store runs its statements that return no rows.
func Exec(s *Store, ctx context.Context, query string, args ...any) error {
	_, err := s.db.ExecContext(ctx, query, args...)
	return err
}

// Scanner is a row of Query's answer.
type Scanner = scanner

// Query runs query as the store runs its queries, calling each on every row.
func Query(s *Store, ctx context.Context, query string, each func(Scanner) error) error {
	return s.db.query(ctx, query, nil, each)
}
