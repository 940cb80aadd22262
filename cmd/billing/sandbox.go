package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/billingsdk/billing-go/billingtest/sandboxctl"
	"github.com/billingsdk/billing-go/internal/sandbox/standalone"
)

// sandboxConn is where a command finds the sandbox: --sandbox, --client-id
// and --client-secret, defaulting to the examples' environment variables,
// then to the standalone sandbox's own.
type sandboxConn struct {
	url, clientID, clientSecret string
}

// addSandboxFlags adds the flags naming the sandbox to fs.
func addSandboxFlags(fs *flag.FlagSet, e *env) *sandboxConn {
	or := func(name, def string) string {
		if v := e.getenv(name); v != "" {
			return v
		}
		return def
	}
	c := &sandboxConn{}
	fs.StringVar(&c.url, "sandbox", or("BILLING_BASE_URL", sandboxctl.DefaultURL), "base URL of the sandbox (env BILLING_BASE_URL)")
	fs.StringVar(&c.clientID, "client-id", or("BILLING_CLIENT_ID", sandboxctl.DefaultClientID), "the sandbox's client id (env BILLING_CLIENT_ID)")
	fs.StringVar(&c.clientSecret, "client-secret", or("BILLING_CLIENT_SECRET", sandboxctl.DefaultClientSecret), "the sandbox's client secret (env BILLING_CLIENT_SECRET)")
	return c
}

// check refuses a sandbox URL that is not an absolute http or https URL.
func (c *sandboxConn) check() error {
	u, err := url.Parse(c.url)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usagef("--sandbox %s is not an http or https URL such as %s", quoteURL(c.url), sandboxctl.DefaultURL)
	}
	return nil
}

// requireSandbox refuses a service that does not prove it is a sandbox
// (GET /sandbox/identity): it may be a live one, where a trigger would move
// real money.
func (c *sandboxConn) requireSandbox(ctx context.Context) error {
	_, err := c.ctl().Identity(ctx)
	if errors.Is(err, sandboxctl.ErrNotSandbox) {
		return fmt.Errorf("%s is not a billing sandbox (it does not answer GET /sandbox/identity as one): nothing was sent. "+
			"trigger moves money, so it talks to a sandbox only; check --sandbox and BILLING_BASE_URL", quoteURL(c.url))
	}
	if err != nil {
		return fmt.Errorf("asking %s whether it is a sandbox: %w; nothing was sent (is the sandbox running? start one with billing sandbox)", quoteURL(c.url), err)
	}
	return nil
}

func (c *sandboxConn) ctl() *sandboxctl.Client {
	return sandboxctl.New(c.url, c.clientID, c.clientSecret)
}

// sandboxControls are the subcommands of billing sandbox that drive a
// running sandbox rather than start one.
var sandboxControls = map[string]func(ctx context.Context, e *env, args []string) error{
	"advance":  runSandboxAdvance,
	"complete": runSandboxComplete,
	"now":      runSandboxNow,
}

// runSandbox serves a sandbox until interrupted, or runs one of its controls.
func runSandbox(ctx context.Context, e *env, args []string) error {
	if len(args) > 0 {
		if control, ok := sandboxControls[args[0]]; ok {
			return control(ctx, e, args[1:])
		}
		if !strings.HasPrefix(args[0], "-") {
			return usagef("unknown sandbox control %q: use advance, complete or now, or flags to start a sandbox", args[0])
		}
	}
	// The banner is the sandbox's address and its own public test credentials,
	// which the scrubber would take for secrets; the rest (usage, -v's request
	// log) is scrubbed as everything else the command writes.
	err := standalone.RunIO(ctx, "billing sandbox", args, standalone.IO{Stdout: e.stdout, Banner: e.banner(), Getenv: e.getenv})
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(e.stdout, `
-manual-clock stops its clock: it then moves only with 'billing sandbox advance'.

Controls of a running sandbox (each takes --sandbox, --client-id, --client-secret and -h):
  billing sandbox advance DURATION                     move its clock (6m, 1.5s, 250ms); due work runs
  billing sandbox complete REFERENCE --method --outcome pay or decline a checkout session (its reference or your
                                                       client reference) as the hosted page would
  billing sandbox now                                  print its time
`)
	}
	return err
}

// writeJSON writes v as one line of JSON.
func writeJSON(w io.Writer, v any) error {
	return json.NewEncoder(w).Encode(v)
}

// clockAnswer is the --json output of the clock controls.
type clockAnswer struct {
	Now time.Time `json:"now"`
}

func runSandboxAdvance(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "billing sandbox advance", "billing sandbox advance DURATION [flags]",
		"Moves the sandbox's clock forward by DURATION (Go's syntax: 6m, 1h30m, 1.5s, 250ms) and prints its\n"+
			"new time once the work that fell due has run: resolutions, callbacks and their retries, trial ends,\n"+
			"renewals, expiries. 0 releases what is due now without moving time.")
	conn := addSandboxFlags(fs, e)
	asJSON := fs.Bool("json", false, "print the new time as JSON")
	positional, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(positional) != 1 {
		return usagef("advance takes one duration, such as 6m or 1.5s")
	}
	d, err := time.ParseDuration(positional[0])
	if err != nil || d < 0 {
		return usagef("%q is not a duration from 0, such as 6m, 1h30m, 1.5s or 250ms", positional[0])
	}
	if err := conn.check(); err != nil {
		return err
	}
	now, err := conn.ctl().Advance(ctx, d)
	if err != nil {
		return err
	}
	return printClock(e.stdout, now, *asJSON)
}

func runSandboxNow(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "billing sandbox now", "billing sandbox now [flags]", "Prints the sandbox's time.")
	conn := addSandboxFlags(fs, e)
	asJSON := fs.Bool("json", false, "print the time as JSON")
	positional, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(positional) > 0 {
		return usagef("now takes no arguments")
	}
	if err := conn.check(); err != nil {
		return err
	}
	now, err := conn.ctl().Now(ctx)
	if err != nil {
		return err
	}
	return printClock(e.stdout, now, *asJSON)
}

func printClock(w io.Writer, now time.Time, asJSON bool) error {
	if asJSON {
		return writeJSON(w, clockAnswer{Now: now})
	}
	_, err := fmt.Fprintln(w, now.Format(time.RFC3339Nano))
	return err
}

func runSandboxComplete(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "billing sandbox complete", "billing sandbox complete REFERENCE --method CARD|MOBILE_MONEY|BANK_TRANSFER --outcome succeeded|failed [flags]",
		"Completes the PENDING checkout session REFERENCE (the session's reference, or the client reference you\n"+
			"created it under) as a payer on the hosted page would. A success sends payment.succeeded to billing\n"+
			"listen, or to the sandbox's webhook URL.")
	conn := addSandboxFlags(fs, e)
	method := fs.String("method", sandboxctl.MethodCard, "how the payer pays: CARD, MOBILE_MONEY or BANK_TRANSFER")
	outcome := fs.String("outcome", sandboxctl.OutcomeSucceeded, "succeeded or failed")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	positional, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(positional) != 1 {
		return usagef("complete takes the checkout session's reference or your client reference")
	}
	switch *method {
	case sandboxctl.MethodCard, sandboxctl.MethodMobileMoney, sandboxctl.MethodBankTransfer:
	default:
		return usagef("--method %q: use CARD, MOBILE_MONEY or BANK_TRANSFER", *method)
	}
	if *outcome != sandboxctl.OutcomeSucceeded && *outcome != sandboxctl.OutcomeFailed {
		return usagef("--outcome %q: use succeeded or failed", *outcome)
	}
	if err := conn.check(); err != nil {
		return err
	}
	if err := conn.ctl().CompleteCheckout(ctx, positional[0], *method, *outcome); err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(e.stdout, map[string]string{"reference": positional[0], "method": *method, "outcome": *outcome})
	}
	_, err = fmt.Fprintf(e.stdout, "checkout %s %s by %s\n", positional[0], *outcome, *method)
	return err
}
