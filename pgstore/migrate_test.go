package pgstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/billingsdk/billing-go/pgstore"
	"github.com/billingsdk/billing-go/storekit"
)

// A schema of version 1 holding a pending movement and a settled one is brought to the
// current version by New: both read back as they were, with nothing asked, no service
// reference and no currency, and the store's new calls work on them. The pending one,
// tracked before its start was kept as given, is never released: its status check
// settles it.
func TestMigrateFromVersion1KeepsMovements(t *testing.T) {
	db := freshSchema(t)
	ctx := context.Background()
	t0 := time.Date(2025, 4, 1, 10, 0, 0, 0, time.UTC)
	stmts := append([]string{`CREATE TABLE billing_schema_migrations (
		version    integer PRIMARY KEY,
		applied_at timestamptz NOT NULL DEFAULT now()
	)`}, pgstore.Migrations[0]...)
	stmts = append(stmts, `INSERT INTO billing_schema_migrations (version) VALUES (1)`)
	for _, stmt := range stmts {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	if _, err := db.Exec(`INSERT INTO billing_movements
		(callback_kind, client_reference, kind, started_at, deadline, next_check_at) VALUES
		('transaction', 'old1', 'receive', $1, $2, $2)`, t0, t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO billing_movements
		(callback_kind, client_reference, kind, started_at, deadline, next_check_at, outcome_id, state,
		 code, transaction_id, amount, charges, source, settled_at, by_status_check) VALUES
		('payout', 'old2', 'send', $1, $2, $2, 'payout/succeeded/old2', 'succeeded',
		 '0000', 'tx9', 5000, 25, 'status_check', $2, true)`, t0, t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}

	store := newTestStore(t, db)
	if v, err := pgstore.ReadSchemaVersions(ctx, db, pgstore.Options{}); err != nil || v.Applied != pgstore.Version() {
		t.Fatalf("version after New = %+v, %v; want %d applied", v, err, pgstore.Version())
	}
	pending, err := store.Get(ctx, storekit.MovementKey{Callback: storekit.CallbackTransaction, ClientReference: "old1"})
	if err != nil {
		t.Fatal(err)
	}
	want := storekit.Movement{Kind: storekit.KindReceive, ClientReference: "old1"}
	if m := pending.Movement; !pending.Tracked || pending.Final != nil || m.Kind != want.Kind || m.ClientReference != want.ClientReference ||
		m.Amount != 0 || m.Currency != "" || m.ServiceReference != "" || !m.StartedAt.Equal(t0) || !m.Deadline.Equal(t0.Add(time.Minute)) {
		t.Fatalf("the pending movement read back as %+v", pending)
	}
	settled, err := store.Get(ctx, storekit.MovementKey{Callback: storekit.CallbackPayout, ClientReference: "old2"})
	if err != nil {
		t.Fatal(err)
	}
	if f := settled.Final; f == nil || f.ID != "payout/succeeded/old2" || f.Outcome.State != storekit.StateSucceeded ||
		f.Outcome.Amount != 5000 || f.Outcome.Charges != 25 || f.Outcome.TransactionID != "tx9" || f.Outcome.Currency != "" ||
		f.Outcome.ServiceReference != "" || !f.ByStatusCheck {
		t.Fatalf("the settled movement read back as %+v", settled)
	}

	key := pending.Movement.Key()
	if ok, err := store.Release(ctx, key, pending.Movement.StartedAt); err != nil || ok {
		t.Fatalf("Release of a movement tracked under version 1 = %v, %v; want kept", ok, err)
	}
	if m, err := store.RecordReference(ctx, key, "ref_old1"); err != nil || m.ServiceReference != "ref_old1" {
		t.Fatalf("RecordReference = %+v, %v", m, err)
	}
	st, changed, err := store.Settle(ctx, key, storekit.Outcome{State: storekit.StateMismatched, Source: storekit.SourceStatusCheck,
		Amount: 4000, Currency: "GHS", At: t0.Add(2 * time.Minute)}, nil)
	if err != nil || !changed || st.Outcome.State != storekit.StateMismatched || st.Outcome.Currency != "GHS" || st.Outcome.Kind != storekit.KindReceive {
		t.Fatalf("Settle = %+v, %v, %v", st, changed, err)
	}
}
