// Command instance is one instance of a released version of the SDK: a Tracker on
// pgstore, sending payouts through the sandbox and reporting each outcome with
// OnOutcomeTx. pgstore's TestRollingUpgrade builds it from the release's own tree (it is
// copied there, into pgstore/cmd/upgradeinstance) and runs it beside this tree's
// instances on one database, across this tree's Migrate. It uses only the API of every
// release since v0.2.0.
//
// It reads DATABASE_URL, BILLING_BASE_URL, BILLING_CLIENT_ID, BILLING_CLIENT_SECRET,
// BILLING_DISBURSEMENT_ACCOUNT and INSTANCE (its name). It prints "callback <url>" once
// it serves its callbacks, then reads lines "send <reference> <phone> <callback url>"
// and answers each "sent <reference>" or "error <reference> <error>". Each outcome it
// reports is a row of upgrade_reports, written in the transaction that marks it
// reported. It stops when its input ends.
package main

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"

	_ "github.com/jackc/pgx/v5/stdlib"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/pgstore"
)

func main() {
	if err := run(); err != nil {
		fmt.Printf("fatal %v\n", err)
		os.Exit(1)
	}
}

func run() error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	name := os.Getenv("INSTANCE")
	db, err := sql.Open("pgx", os.Getenv("DATABASE_URL"))
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(8)
	db.SetMaxIdleConns(8)
	store, err := pgstore.New(ctx, db)
	if err != nil {
		return fmt.Errorf("pgstore.New: %w", err)
	}
	client, err := billing.NewClient(
		billing.WithBaseURL(os.Getenv("BILLING_BASE_URL")),
		billing.WithClientCredentials(os.Getenv("BILLING_CLIENT_ID"), os.Getenv("BILLING_CLIENT_SECRET")),
		billing.WithDisbursementAccount(os.Getenv("BILLING_DISBURSEMENT_ACCOUNT")),
	)
	if err != nil {
		return err
	}
	tr := billing.NewTracker(client, billing.TrackerOptions{
		Store: store,
		Owner: name,
		OnOutcome: store.OnOutcomeTx(func(ctx context.Context, tx *sql.Tx, o *billing.Outcome) error {
			_, err := tx.ExecContext(ctx, `INSERT INTO upgrade_reports (ref, outcome_id, state, instance) VALUES ($1, $2, $3, $4)`,
				o.ClientReference, o.ID, string(o.State), name)
			return err
		}),
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: tr.Handler(billing.WithStatusCheckConfirmation(client))}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	ran := make(chan error, 1)
	go func() { ran <- tr.Run(ctx) }()
	fmt.Printf("callback http://%s/callbacks/%s\n", ln.Addr(), name)

	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		f := strings.Fields(in.Text())
		if len(f) != 4 || f[0] != "send" {
			fmt.Printf("error %q: want send <reference> <phone> <callback url>\n", in.Text())
			continue
		}
		_, err := tr.Send(ctx, &billing.SendParams{Amount: 2000, Phone: f[2], Provider: billing.ProviderTelecel,
			Name: "Kofi", Description: "Refund " + f[1], ClientReference: f[1], CallbackURL: f[3]})
		if err != nil {
			fmt.Printf("error %s %v\n", f[1], strings.ReplaceAll(err.Error(), "\n", " "))
			continue
		}
		fmt.Printf("sent %s\n", f[1])
	}
	cancel()
	if err := <-ran; err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("Run: %w", err)
	}
	return nil
}
