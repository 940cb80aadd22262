package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"time"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest/sandboxctl"
)

// deliveryLine is one delivery as billing deliveries --json prints it.
type deliveryLine struct {
	Seq         int             `json:"seq"`
	Time        time.Time       `json:"time"`
	Kind        string          `json:"kind"`
	Reference   string          `json:"reference"`
	Attempt     int             `json:"attempt"`
	Status      int             `json:"status"`
	URL         string          `json:"url,omitempty"`
	ForwardedTo string          `json:"forwardedTo,omitempty"`
	Body        json.RawMessage `json:"body"`
}

// deliveriesPage is how many deliveries one look at the sandbox reads.
const deliveriesPage = sandboxctl.MaxPage

func runDeliveries(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "billing deliveries", "billing deliveries [--follow] [--json] [flags]", `
Prints each callback and webhook the sandbox delivered, oldest first: its number (for billing
resend), the sandbox's time, kind, client reference, attempt and the HTTP status the receiver
answered (0: not reached). --json prints one JSON object per delivery, its body included.
--follow keeps printing new ones until Ctrl+C. The sandbox keeps the last 10000.`)
	conn := addSandboxFlags(fs, e)
	follow := fs.Bool("follow", false, "keep printing new deliveries until Ctrl+C")
	every := fs.Duration("every", time.Second, "with --follow, how often to look for new deliveries")
	asJSON := fs.Bool("json", false, "print one JSON object per delivery, its body included")
	positional, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(positional) > 0 {
		return usagef("deliveries takes only flags, not %q", positional[0])
	}
	if *every <= 0 {
		return usagef("--every must be positive")
	}
	if err := conn.check(); err != nil {
		return err
	}
	ctl := conn.ctl()
	after := 0
	ticker := time.NewTicker(*every)
	defer ticker.Stop()
	for {
		for {
			page, err := ctl.Deliveries(ctx, after, deliveriesPage)
			if err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return fmt.Errorf("reading the sandbox's deliveries: %w", err)
			}
			for _, d := range page {
				if err := printDelivery(e.stdout, d, *asJSON); err != nil {
					return err
				}
				after = d.Seq
			}
			if len(page) < deliveriesPage {
				break
			}
		}
		if !*follow {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
	}
}

func printDelivery(w io.Writer, d sandboxctl.Delivery, asJSON bool) error {
	line := deliveryLine{Seq: d.Seq, Time: d.At, Kind: "unknown", Reference: d.Reference, Attempt: d.Attempt, Status: d.Status,
		URL: d.URL, ForwardedTo: d.ForwardedTo, Body: d.Body}
	if ev, err := billing.ParseEvent(d.Body); err == nil {
		line.Kind, line.Reference = string(ev.Kind()), clientReference(ev)
	}
	if asJSON {
		return writeJSON(w, line)
	}
	reference := line.Reference
	if reference == "" {
		reference = "-"
	}
	_, err := fmt.Fprintf(w, "%-5d %s  %-26s  %-24s  attempt %d  -> %d\n", d.Seq, d.At.UTC().Format(time.RFC3339Nano), line.Kind, reference, d.Attempt, d.Status)
	return err
}

func runResend(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "billing resend", "billing resend DELIVERY [flags]", `
Delivers the callback or webhook numbered DELIVERY (billing deliveries prints the numbers) again,
now, with its body unchanged: to billing listen while one runs, else where it was meant. An answer
other than 2xx is redelivered on the sandbox's schedule.`)
	conn := addSandboxFlags(fs, e)
	asJSON := fs.Bool("json", false, "print the new delivery's number as JSON")
	positional, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(positional) != 1 {
		return usagef("resend takes one delivery number, as billing deliveries prints it")
	}
	seq, err := strconv.Atoi(positional[0])
	if err != nil || seq < 1 {
		return usagef("%q is not a delivery number: billing deliveries prints them (1, 2, ...)", positional[0])
	}
	if err := conn.check(); err != nil {
		return err
	}
	next, err := conn.ctl().Resend(ctx, seq)
	if err != nil {
		return fmt.Errorf("resending delivery %d: %w", seq, err)
	}
	if *asJSON {
		return writeJSON(e.stdout, map[string]int{"resent": seq, "seq": next})
	}
	_, err = fmt.Fprintf(e.stdout, "delivery %d sent again as delivery %d\n", seq, next)
	return err
}
