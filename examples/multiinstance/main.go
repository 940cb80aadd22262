// Multiinstance runs two Trackers on one PostgreSQL database, as two instances of a
// merchant's server would: a payout sent by one is resolved by the callback the other
// receives, and a movement the first left pending when it went down is resolved by the
// restarted instance's Run. It needs a database:
//
//	DATABASE_URL=postgres://... go run .
//	scripts/pgtest.sh bash -c 'cd examples/multiinstance && go run .'   # a throwaway one
//
// The payments service is an embedded sandbox (set BILLING_BASE_URL, BILLING_CLIENT_ID
// and BILLING_CLIENT_SECRET to use a real one).
//
// Its tables live in a schema of its own, billing_multiinstance_example, created if
// missing: pointed at an application's database it never writes into the
// application's tables, so the application's OnOutcome never hears of its payouts.
// Drop the schema to remove every trace of it.
package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
	"github.com/billingsdk/billing-go/pgstore"
)

func main() {
	url := os.Getenv("DATABASE_URL")
	if url == "" {
		fmt.Fprintln(os.Stderr, "multiinstance needs PostgreSQL: set DATABASE_URL, or run it on a throwaway database with scripts/pgtest.sh bash -c 'cd examples/multiinstance && go run .'")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := run(ctx, os.Stdout, url); err != nil {
		log.Fatal(err)
	}
}

// Schema is the example's own schema: its movements never reach another
// application's tables in the same database.
const Schema = "billing_multiinstance_example"

func run(ctx context.Context, out io.Writer, databaseURL string) error {
	db, err := sql.Open("pgx", databaseURL)
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(20)
	db.SetMaxIdleConns(20) // database/sql keeps 2 by default: busy instances would reopen the rest
	if _, err := db.ExecContext(ctx, `CREATE SCHEMA IF NOT EXISTS `+Schema); err != nil {
		return fmt.Errorf("creating the example's own schema %s: %w", Schema, err)
	}
	c, sandbox, err := connect(out)
	if err != nil {
		return err
	}
	if sandbox != nil {
		defer sandbox.Close()
	}
	run := time.Now().UnixNano()

	// Two instances: each opens the store (New migrates the tables; instances starting
	// together all succeed) and serves its own callback endpoint.
	newInstance := func(name string, opts billing.TrackerOptions) (*billing.Tracker, string, func(), error) {
		store, err := pgstore.NewWithOptions(ctx, db, pgstore.Options{Schema: Schema})
		if err != nil {
			return nil, "", nil, err
		}
		opts.Store, opts.Owner = store, name
		tr := billing.NewTracker(c, opts)
		url, stop, err := serve(tr.Handler(billing.WithStatusCheckConfirmation(c)))
		return tr, url, stop, err
	}
	a, _, stopA, err := newInstance("instance-a", billing.TrackerOptions{})
	if err != nil {
		return err
	}
	defer stopA()
	_, callbackB, stopB, err := newInstance("instance-b", billing.TrackerOptions{})
	if err != nil {
		return err
	}
	defer stopB()

	// A sends a payout whose callback the load balancer gives to B. A's Await returns
	// once B has written it to the database.
	ref := fmt.Sprintf("multi%d", run)
	if _, err := a.Send(ctx, &billing.SendParams{
		Amount: billing.GHS(150), Phone: "233201234567", Provider: billing.ProviderTelecel, Name: "Kofi",
		Description: "Refund", ClientReference: ref, CallbackURL: callbackB,
	}); err != nil {
		return err
	}
	o, err := a.Await(ctx, billing.KindSend, ref)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "instance A awaited %s: %s by %s, received by instance B\n", ref, o.State, o.Source)

	// Instance C sends a payout and goes down before its callback comes: the callback
	// finds nobody. (A short CallbackWait keeps the example quick; the service's is five
	// minutes.)
	quick := billing.TrackerOptions{CallbackWait: 2 * time.Second, PollInterval: time.Second}
	c1, _, stopC1, err := newInstance("instance-c", quick)
	if err != nil {
		return err
	}
	left := fmt.Sprintf("left%d", run)
	if _, err := c1.Send(ctx, &billing.SendParams{
		Amount: billing.GHS(25), Phone: "233201234568", Provider: billing.ProviderTelecel, Name: "Ama",
		Description: "Refund", ClientReference: left, CallbackURL: "http://127.0.0.1:1/instance-c-is-down",
	}); err != nil {
		return err
	}
	stopC1()
	fmt.Fprintf(out, "instance C sent %s and went down\n", left)

	// Restarted, C runs the resolver: it finds the payout overdue, asks its status check
	// and reports the outcome through OnOutcome, once across all instances.
	reported := make(chan *billing.Outcome, 1)
	quick.OnOutcome = func(_ context.Context, o *billing.Outcome) error {
		if o.ClientReference == left {
			reported <- o
		}
		return nil // dedupe on o.ID in your own records
	}
	c2, _, stopC2, err := newInstance("instance-c", quick)
	if err != nil {
		return err
	}
	defer stopC2()
	runCtx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	go func() { _ = c2.Run(runCtx) }()
	select {
	case o := <-reported:
		fmt.Fprintf(out, "restarted instance C reported %s: %s by %s\n", left, o.State, o.Source)
	case <-ctx.Done():
		return errors.New("the restarted instance did not resolve the payout")
	}

	r, err := c2.Reconcile(ctx, time.Now().Add(-time.Hour), time.Now().Add(time.Minute))
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "reconciliation of the last hour: %d overdue, %d disagreed, %d settled by status check alone\n",
		len(r.Overdue), len(r.Disagreed), len(r.StatusCheckOnly))
	return nil
}

// connect returns a client for the service named by BILLING_BASE_URL,
// BILLING_CLIENT_ID and BILLING_CLIENT_SECRET when they are set; otherwise it starts a
// sandbox of the service in this process and returns it too, for the caller to close.
func connect(out io.Writer) (*billing.Client, *billingtest.Server, error) {
	base, id, secret := os.Getenv("BILLING_BASE_URL"), os.Getenv("BILLING_CLIENT_ID"), os.Getenv("BILLING_CLIENT_SECRET")
	if base == "" && id == "" && secret == "" {
		sandbox, err := billingtest.Start()
		if err != nil {
			return nil, nil, err
		}
		fmt.Fprintln(out, "using an embedded sandbox")
		return sandbox.Client(), sandbox, nil
	}
	c, err := billing.NewClient(billing.WithBaseURL(base), billing.WithClientCredentials(id, secret))
	return c, nil, err
}

// serve serves h on a free port of this machine and returns its URL and a function that
// stops it.
func serve(h http.Handler) (string, func(), error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(l) }()
	return "http://" + l.Addr().String(), func() { _ = srv.Close() }, nil
}
