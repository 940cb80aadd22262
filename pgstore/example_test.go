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
	store, err := pgstore.New(ctx, db) // creates or migrates the tables
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
