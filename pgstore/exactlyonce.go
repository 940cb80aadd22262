package pgstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"

	billing "github.com/billingsdk/billing-go"
)

// OnOutcomeTx returns an outcome handler for TrackerOptions.OnOutcome that calls fn
// inside the database transaction that marks the outcome reported: what fn writes with
// tx (an order marked paid, a parcel queued) and the report commit together or not at
// all. Fulfil an order exactly once this way: a crash before the commit, a failed
// commit or an error from fn leaves the outcome unreported and nothing of fn's written,
// and Run calls the handler again; once the commit is done, no instance calls fn for
// that outcome again. fn is not called when the outcome is already reported (another
// instance committed it, or the commit's answer was lost) or is no longer the
// movement's (a success replaced the failure it named; the success is reported next).
//
// fn must use tx for the writes that must happen once, and neither commit nor roll it
// back. The transaction holds the movement's row until it ends: keep fn short, and let
// ctx bound it. Work outside the database (an email, a call to another service) is not
// made exactly once by this; make it idempotent on o.ID, or queue it in tx.
func (s *Store) OnOutcomeTx(fn func(ctx context.Context, tx *sql.Tx, o *billing.Outcome) error) func(context.Context, *billing.Outcome) error {
	return func(ctx context.Context, o *billing.Outcome) (err error) {
		switch {
		case fn == nil:
			return &billing.ValidationError{Field: "fn", Rule: "is required"}
		case o == nil || o.ID == "":
			return &billing.ValidationError{Field: "outcome.id", Rule: "is required"}
		}
		tx, err := s.db.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("pgstore: reporting %q: %w", o.ID, err)
		}
		committed := false
		defer func() {
			if !committed {
				_ = tx.Rollback() // also when fn panics
			}
		}()
		// The update takes the row's lock: another instance reporting the same outcome
		// waits here, then finds it reported and calls nothing.
		var skew int64
		err = tx.QueryRowContext(ctx, s.q(`UPDATE billing_movements
			SET reported_at = {t1}, report_owner = NULL, report_until = NULL
			WHERE outcome_id = $2 AND kind IS NOT NULL AND reported_at IS NULL
			RETURNING {skew}`), s.now(), o.ID).Scan(&skew)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			s.fresh.put(o.ID)
			return nil
		case err != nil:
			return fmt.Errorf("pgstore: reporting %q: %w", o.ID, err)
		}
		if err := fn(ctx, tx.Tx, o); err != nil {
			return poolerHint(err)
		}
		committed = true
		if err := tx.Commit(); err != nil {
			// Rolled back, or committed with the answer lost: the next call finds out
			// which, and calls fn only in the first case.
			return fmt.Errorf("pgstore: committing the report of %q: %w", o.ID, err)
		}
		s.fresh.put(o.ID)
		return nil
	}
}

// freshReports remembers the outcomes an OnOutcomeTx handler of this store has just
// marked reported, so that the Tracker's MarkReported, which follows, runs no statement.
// It holds at most maxFreshReports ids: beyond, MarkReported runs its statement, which
// changes nothing.
type freshReports struct {
	mu  sync.Mutex
	ids map[string]struct{}
}

const maxFreshReports = 4096

func (f *freshReports) put(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ids == nil {
		f.ids = make(map[string]struct{})
	}
	if len(f.ids) < maxFreshReports {
		f.ids[id] = struct{}{}
	}
}

// take reports whether id was just marked reported, and forgets it.
func (f *freshReports) take(id string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, ok := f.ids[id]
	delete(f.ids, id)
	return ok
}
