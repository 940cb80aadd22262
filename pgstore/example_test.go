package pgstore_test

import (
	"context"
	"database/sql"
	"log"
	"net/http"
	"os"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/pgstore"
)

// Every instance of a server opens the same database and runs the resolver: a callback
// any instance receives resolves an Await on any other, and OnOutcome is called once per
// final outcome across all of them. (It needs a database, so it is not run here.)
func Example() {
	ctx := context.Background()
	db, err := sql.Open("pgx", os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	db.SetMaxOpenConns(20)
	db.SetMaxIdleConns(20) // database/sql keeps 2 by default: busy instances would reopen the rest
	// New checks the tables' version; it creates or migrates them only if the role may
	// (else run pgstore.Migrate with the schema's owner first).
	store, err := pgstore.New(ctx, db)
	if err != nil {
		log.Fatal(err)
	}
	c, err := billing.NewClient(billing.WithBaseURL(os.Getenv("BILLING_BASE_URL")),
		billing.WithClientCredentials(os.Getenv("BILLING_CLIENT_ID"), os.Getenv("BILLING_CLIENT_SECRET")))
	if err != nil {
		log.Fatal(err)
	}
	tracker := billing.NewTracker(c, billing.TrackerOptions{
		Store: store,
		OnOutcome: func(ctx context.Context, o *billing.Outcome) error {
			// Record o.ID with the order's new state in one transaction, so that a
			// second call with the same ID changes nothing.
			log.Printf("%s %s: %s", o.Kind, o.ClientReference, o.State)
			return nil
		},
	})
	http.Handle("/callbacks", tracker.Handler(billing.WithStatusCheckConfirmation(c)))
	go func() { _ = tracker.Run(ctx) }()

	// The payout is in the database before its request leaves.
	if _, err := tracker.Send(ctx, &billing.SendParams{Amount: 15000, Phone: "233201234567",
		Provider: billing.ProviderTelecel, Description: "Refund", ClientReference: "refund77",
		CallbackURL: "https://shop.example.com/callbacks"}); err != nil {
		log.Print(err) // ErrOutcomeUnknown: Run resolves it by its status check
	}
}

// Fulfil an order exactly once: the handler runs inside the transaction that marks the
// outcome reported, so the order's update and the report commit together. A crash, an
// error or a failed commit leaves both undone and Run calls the handler again; once
// committed, no instance calls it again for that outcome. (It needs a database, so it is
// not run here.)
func ExampleStore_OnOutcomeTx() {
	ctx := context.Background()
	db, err := sql.Open("pgx", os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	store, err := pgstore.New(ctx, db)
	if err != nil {
		log.Fatal(err)
	}
	c, err := billing.NewClient(billing.WithBaseURL(os.Getenv("BILLING_BASE_URL")),
		billing.WithClientCredentials(os.Getenv("BILLING_CLIENT_ID"), os.Getenv("BILLING_CLIENT_SECRET")))
	if err != nil {
		log.Fatal(err)
	}
	fulfil := func(ctx context.Context, tx *sql.Tx, o *billing.Outcome) error {
		state := "payment_failed"
		if o.Succeeded() {
			state = "paid"
		}
		// The merchant's own table, in the same database: written with tx, it commits
		// with the report or not at all.
		_, err := tx.ExecContext(ctx, `UPDATE orders SET state = $1, payment_id = $2 WHERE reference = $3`,
			state, o.ID, o.ClientReference)
		return err // an error rolls back the update and the report: called again later
	}
	tracker := billing.NewTracker(c, billing.TrackerOptions{Store: store, OnOutcome: store.OnOutcomeTx(fulfil)})
	go func() { _ = tracker.Run(ctx) }()
}
