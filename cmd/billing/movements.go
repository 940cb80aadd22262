package main

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	billing "github.com/billingsdk/billing-go"
)

// defaultCurrency is the service's currency where a request names none (SPEC).
const defaultCurrency = "GHS"

// maxMovementsLimit bounds one listing.
const maxMovementsLimit = 10000

// trackedMovement is one row of billing movements.
type trackedMovement struct {
	State           trackedState `json:"state"`
	Kind            string       `json:"kind"`
	ClientReference string       `json:"clientReference"`
	// Amount is what the movement asked, or what its outcome confirmed once
	// settled, in minor units.
	Amount    int64      `json:"amount"`
	Currency  string     `json:"currency"`
	StartedAt *time.Time `json:"startedAt"`
	// Deadline is when the Tracker asks the status check if no callback came.
	Deadline *time.Time `json:"deadline"`
	Checks   int        `json:"checks"`
	// Outcome, Code and Source are the settled outcome's; empty while unsettled.
	Outcome        string     `json:"outcome,omitempty"`
	Code           string     `json:"code,omitempty"`
	Source         string     `json:"source,omitempty"`
	SettledAt      *time.Time `json:"settledAt,omitempty"`
	ReportedAt     *time.Time `json:"reportedAt,omitempty"`
	ReportAttempts int        `json:"reportAttempts"`
	Disagreed      bool       `json:"disagreed"`
}

func runMovements(ctx context.Context, e *env, args []string) error {
	if len(args) > 0 {
		if _, ok := movementActions[args[0]]; ok {
			return runMovementAction(ctx, e, args[0], args[1:])
		}
	}
	fs := newFlags(e, "billing movements", "billing movements [--state S] [--kind K] [--since T] [flags]", `
Lists the movements a Tracker keeps in PostgreSQL (pgstore), newest first: pending (unsettled,
callback deadline ahead), overdue (unsettled, deadline passed: the status check is due),
unreported (settled, OnOutcome not done with it yet), settled (settled and reported) and
untracked (money no one tracked whose callback a status check confirmed: look at it first).
It only reads, in read-only transactions: it never settles or reports anything, and works
with the application role pgstore documents.

billing movements recheck|resolve|release|report-again acts on one movement through the
Tracker's own method, audited in the store (see 'billing movements resolve -h').

Columns: AMOUNT is what the movement asked while unsettled and what its outcome confirmed once
settled, always with its currency (GHS, the service's default, where none was recorded).
CHECKS counts the status checks the Tracker has made for it so far (0 while its callback
deadline is ahead). --kind takes a kind as trigger names it too: bank for bank_transfer,
debit for direct_debit.`)
	databaseURL := addDatabaseFlag(fs, e)
	var states []string
	for _, st := range trackedStates {
		states = append(states, string(st))
	}
	state := fs.String("state", "", "only this state: "+strings.Join(states, ", "))
	kind := fs.String("kind", "", "only this kind: "+strings.Join(kindNames(), ", "))
	since := fs.String("since", "", "only movements started since: an RFC 3339 time, a date, or a duration ago (24h)")
	limit := fs.Int("limit", 100, "at most this many, newest first (at most 10000)")
	asJSON := fs.Bool("json", false, "print one JSON object per movement")
	positional, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(positional) > 0 {
		return usagef("movements takes only flags, not %q", positional[0])
	}
	var where []string
	var params []any
	param := func(v any) string {
		params = append(params, v)
		return "$" + strconv.Itoa(len(params))
	}
	// Tracked, or money no one tracked that a status check confirmed: a row only an
	// unconfirmed callback wrote is no movement.
	where = append(where, "(kind IS NOT NULL OR (outcome_id IS NOT NULL AND outcome_kind <> ''))")
	if *state != "" {
		cond, ok := stateSQL[trackedState(*state)]
		if !ok {
			return usagef("--state %q: use %s", *state, strings.Join(states, ", "))
		}
		where = append(where, cond)
	}
	if *kind != "" {
		if alias, ok := kindAliases[*kind]; ok {
			*kind = alias
		}
		if !slices.Contains(kindNames(), *kind) {
			return usagef("--kind %q: use %s (or bank, debit)", *kind, strings.Join(kindNames(), ", "))
		}
		where = append(where, "coalesce(kind, outcome_kind) = "+param(*kind))
	}
	if *since != "" {
		t, err := parseTime("since", *since, time.Now())
		if err != nil {
			return err
		}
		where = append(where, "coalesce(started_at, settled_at) >= "+param(t))
	}
	if *limit < 1 || *limit > maxMovementsLimit {
		return usagef("--limit must be from 1 to %d", maxMovementsLimit)
	}

	db, err := openReadOnly(ctx, *databaseURL)
	if err != nil {
		return err
	}
	defer db.Close()
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("reading the movements: %w", err)
	}
	defer func() { _ = tx.Rollback() }() // read-only: nothing to keep
	rows, err := tx.QueryContext(ctx, `SELECT `+stateCase()+`, coalesce(kind, outcome_kind), client_reference,
		CASE WHEN outcome_id IS NULL THEN asked_amount ELSE amount END,
		CASE WHEN outcome_id IS NULL THEN asked_currency ELSE currency END,
		started_at, deadline, checks, coalesce(state, ''), code, coalesce(source, ''), settled_at, reported_at, report_attempts, disagreed
		FROM billing_movements WHERE `+strings.Join(where, " AND ")+`
		ORDER BY coalesce(started_at, settled_at) DESC, client_reference LIMIT `+strconv.Itoa(*limit), params...)
	if err != nil {
		return fmt.Errorf("reading the movements: %w", err)
	}
	defer rows.Close()
	var list []trackedMovement
	for rows.Next() {
		var m trackedMovement
		var started, deadline, settled, reported sql.NullTime
		if err := rows.Scan(&m.State, &m.Kind, &m.ClientReference, &m.Amount, &m.Currency, &started, &deadline, &m.Checks,
			&m.Outcome, &m.Code, &m.Source, &settled, &reported, &m.ReportAttempts, &m.Disagreed); err != nil {
			return fmt.Errorf("reading the movements: %w", err)
		}
		if m.Currency == "" && m.Amount != 0 {
			m.Currency = defaultCurrency
		}
		m.StartedAt, m.Deadline, m.SettledAt, m.ReportedAt = timeOf(started), timeOf(deadline), timeOf(settled), timeOf(reported)
		list = append(list, m)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("reading the movements: %w", err)
	}
	if *asJSON {
		for _, m := range list {
			if err := writeJSON(e.stdout, m); err != nil {
				return err
			}
		}
		return nil
	}
	return printMovements(e.stdout, list)
}

// kindAliases are the names trigger gives a kind, beside the Tracker's own.
var kindAliases = map[string]string{"bank": string(billing.KindBankTransfer), "debit": string(billing.KindDirectDebit)}

// kindNames are the movement kinds a Tracker tracks.
func kindNames() []string {
	var names []string
	for _, k := range []billing.Kind{billing.KindReceive, billing.KindSend, billing.KindBankTransfer, billing.KindDirectDebit,
		billing.KindMandate, billing.KindCheckout} {
		names = append(names, string(k))
	}
	return names
}

func timeOf(t sql.NullTime) *time.Time {
	if !t.Valid {
		return nil
	}
	utc := t.Time.UTC()
	return &utc
}

func printMovements(w io.Writer, list []trackedMovement) error {
	if len(list) == 0 {
		_, err := fmt.Fprintln(w, "no tracked movements match")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "STATE\tKIND\tREFERENCE\tAMOUNT\tSTARTED\tDEADLINE\tCHECKS\tOUTCOME\tCODE\tSOURCE\tREPORTED")
	for _, m := range list {
		outcome := m.Outcome
		if m.Disagreed {
			outcome += " (disagreed)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n", m.State, m.Kind, m.ClientReference, money(m.Amount, m.Currency),
			short(m.StartedAt), short(m.Deadline), m.Checks, dash(outcome), dash(m.Code), dash(m.Source), short(m.ReportedAt))
	}
	return tw.Flush()
}

// money writes an amount with its currency: GHS, the service's default, when
// none was recorded.
func money(minor int64, currency string) string {
	if minor == 0 && currency == "" {
		return "-"
	}
	if currency == "" {
		currency = defaultCurrency
	}
	return billing.Money{Amount: minor, Currency: currency}.String()
}

func short(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.Format(time.RFC3339)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
