package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/pgstore"
	"github.com/billingsdk/billing-go/storekit"
)

// reconcilePage is one page of Tracker.ReconcilePages, as --json writes it.
type reconcilePage struct {
	Page            int               `json:"page"`
	Untracked       []settledMovement `json:"untracked"`
	Overdue         []overdueMovement `json:"overdue"`
	Disagreed       []settledMovement `json:"disagreed"`
	StatusCheckOnly []settledMovement `json:"statusCheckOnly"`
	Contradicted    []contradicted    `json:"contradicted"`
	Truncated       bool              `json:"truncated"`
}

// contradicted is the record of the callbacks of a movement that the status check
// contradicted (storekit.Contradiction), without the body, which may name the payer.
type contradicted struct {
	Callback        string    `json:"callback"`
	ClientReference string    `json:"clientReference"`
	Claimed         string    `json:"claimed"`
	At              time.Time `json:"at"`
	LastAt          time.Time `json:"lastAt"`
	Count           int       `json:"count"`
}

// overdueMovement is a movement still unsettled past its callback deadline.
type overdueMovement struct {
	Kind            string    `json:"kind"`
	ClientReference string    `json:"clientReference"`
	Amount          int64     `json:"amount"`
	Currency        string    `json:"currency"`
	StartedAt       time.Time `json:"startedAt"`
	Deadline        time.Time `json:"deadline"`
	Checks          int       `json:"checks"`
}

// settledMovement is a settlement that needs a look.
type settledMovement struct {
	Kind            string     `json:"kind"`
	ClientReference string     `json:"clientReference"`
	State           string     `json:"state"`
	Code            string     `json:"code"`
	Amount          int64      `json:"amount"`
	Currency        string     `json:"currency"`
	Source          string     `json:"source"`
	ByCallback      bool       `json:"byCallback"`
	ByStatusCheck   bool       `json:"byStatusCheck"`
	ReportedAt      *time.Time `json:"reportedAt,omitempty"`
}

func runReconcile(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "billing reconcile", "billing reconcile [--from T] [--to T] [flags]", `
Prints the reconciliation of the movements a Tracker kept in PostgreSQL (pgstore) started in
[--from, --to), page by page (Tracker.ReconcilePages): overdue (unsettled past their callback
deadline), disagreed (callback and status check said different final states: look at them),
status-check only (no callback came: check your callback URL), contradicted (a callback the
status check contradicted was refused: a forged or stale claim). It only reads, in read-only
transactions, and works with the application role pgstore documents.`)
	databaseURL := addDatabaseFlag(fs, e)
	fromText := fs.String("from", "24h", "start of the window: an RFC 3339 time, a date, or a duration ago")
	toText := fs.String("to", "0s", "end of the window (excluded): an RFC 3339 time, a date, or a duration ago")
	asJSON := fs.Bool("json", false, "print one JSON object per page")
	positional, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(positional) > 0 {
		return usagef("reconcile takes only flags, not %q", positional[0])
	}
	now := time.Now()
	from, err := parseTime("from", *fromText, now)
	if err != nil {
		return err
	}
	to, err := parseTime("to", *toText, now)
	if err != nil {
		return err
	}
	if !from.Before(to) {
		return usagef("--from (%s) must be before --to (%s)", from.Format(time.RFC3339), to.Format(time.RFC3339))
	}

	db, err := openReadOnly(ctx, *databaseURL)
	if err != nil {
		return err
	}
	defer db.Close()
	store, err := pgstore.New(ctx, db) // the schema is current (openReadOnly checked): New only reads
	if err != nil {
		return err
	}
	// A Tracker needs a Client; Reconcile only reads its store and calls nothing, so this
	// one has no real credentials and a base URL nothing listens on.
	noCalls, err := billing.NewClient(billing.WithBaseURL("http://127.0.0.1:1"),
		billing.WithClientCredentials("billing-reconcile", "reads-the-store-only"))
	if err != nil {
		return err
	}
	tracker := billing.NewTracker(noCalls, billing.TrackerOptions{Store: store})
	pages := 0
	for r, err := range tracker.ReconcilePages(ctx, from, to) {
		if err != nil {
			return fmt.Errorf("reconciling: %w", err)
		}
		pages++
		page := pageOf(pages, r)
		if *asJSON {
			if err := writeJSON(e.stdout, page); err != nil {
				return err
			}
			continue
		}
		printPage(e.stdout, page)
	}
	if !*asJSON {
		fmt.Fprintf(e.stdout, "reconciled %s to %s: %d page(s)\n", from.UTC().Format(time.RFC3339), to.UTC().Format(time.RFC3339), pages)
	}
	return nil
}

func pageOf(n int, r billing.Reconciliation) reconcilePage {
	page := reconcilePage{Page: n, Truncated: r.Truncated, Untracked: []settledMovement{}, Overdue: []overdueMovement{}, Disagreed: []settledMovement{},
		StatusCheckOnly: []settledMovement{}, Contradicted: []contradicted{}}
	for _, m := range r.Overdue {
		page.Overdue = append(page.Overdue, overdueMovement{Kind: m.Kind, ClientReference: m.ClientReference, Amount: m.Amount,
			Currency: m.Currency, StartedAt: m.StartedAt.UTC(), Deadline: m.Deadline.UTC(), Checks: m.Checks})
	}
	settled := func(s storekit.Settlement) settledMovement {
		o := s.Outcome
		v := settledMovement{Kind: o.Kind, ClientReference: o.ClientReference, State: o.State, Code: o.Code,
			Amount: o.Amount, Currency: o.Currency, Source: o.Source, ByCallback: s.ByCallback, ByStatusCheck: s.ByStatusCheck}
		if !s.ReportedAt.IsZero() {
			at := s.ReportedAt.UTC()
			v.ReportedAt = &at
		}
		return v
	}
	for _, s := range r.Untracked {
		page.Untracked = append(page.Untracked, settled(s))
	}
	for _, s := range r.Disagreed {
		page.Disagreed = append(page.Disagreed, settled(s))
	}
	for _, s := range r.StatusCheckOnly {
		page.StatusCheckOnly = append(page.StatusCheckOnly, settled(s))
	}
	for _, c := range r.Contradicted {
		page.Contradicted = append(page.Contradicted, contradicted{Callback: c.Key.Callback, ClientReference: c.Key.ClientReference,
			Claimed: c.Claimed, At: c.At.UTC(), LastAt: c.LastAt.UTC(), Count: c.Count})
	}
	return page
}

func printPage(w io.Writer, p reconcilePage) {
	fmt.Fprintf(w, "page %d: %d untracked, %d overdue, %d disagreed, %d status-check only, %d contradicted", p.Page, len(p.Untracked), len(p.Overdue),
		len(p.Disagreed), len(p.StatusCheckOnly), len(p.Contradicted))
	if p.Truncated {
		fmt.Fprint(w, " (truncated: more than 1,000 of one list started within one microsecond)")
	}
	fmt.Fprintln(w)
	printSettled(w, "untracked: money no Tracker tracked, confirmed by a status check (look at it first)", p.Untracked)
	if len(p.Overdue) > 0 {
		fmt.Fprintln(w, "overdue: unsettled past the callback deadline (Run asks their status checks)")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  KIND\tREFERENCE\tAMOUNT\tSTARTED\tDEADLINE\tCHECKS")
		for _, m := range p.Overdue {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%d\n", m.Kind, m.ClientReference, money(m.Amount, m.Currency),
				m.StartedAt.Format(time.RFC3339), m.Deadline.Format(time.RFC3339), m.Checks)
		}
		_ = tw.Flush()
	}
	printSettled(w, "disagreed: callback and status check said different final states (look at them)", p.Disagreed)
	printSettled(w, "status-check only: no callback came (check your callback URL)", p.StatusCheckOnly)
	if len(p.Contradicted) > 0 {
		fmt.Fprintln(w, "contradicted: a callback the status check contradicted was refused (a forged or stale claim: look at them)")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  CALLBACK\tREFERENCE\tCLAIMED\tFIRST\tLAST\tCOUNT")
		for _, c := range p.Contradicted {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%d\n", c.Callback, c.ClientReference, c.Claimed,
				c.At.Format(time.RFC3339), c.LastAt.Format(time.RFC3339), c.Count)
		}
		_ = tw.Flush()
	}
}

// printSettled prints one list of settlements under its title, nothing when it is empty.
func printSettled(w io.Writer, title string, rows []settledMovement) {
	if len(rows) == 0 {
		return
	}
	fmt.Fprintln(w, title)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  KIND\tREFERENCE\tSTATE\tCODE\tAMOUNT\tSOURCE\tREPORTED")
	for _, s := range rows {
		reported := "-"
		if s.ReportedAt != nil {
			reported = s.ReportedAt.Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\n", s.Kind, s.ClientReference, s.State, dash(s.Code), money(s.Amount, s.Currency), s.Source, reported)
	}
	_ = tw.Flush()
}
