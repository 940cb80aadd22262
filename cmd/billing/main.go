// Command billing is the billing SDK's tool for local development and
// operations: it runs the sandbox, forwards its callbacks and webhooks to an
// application on localhost, triggers money flows with the sandbox's test
// numbers, and shows what a Tracker keeps in PostgreSQL.
//
//	go install github.com/billingsdk/billing-go/cmd/billing@latest
//
//	billing sandbox                                   # serves the sandbox on 127.0.0.1:4010
//	billing listen --forward-to http://localhost:8080/webhooks
//	billing trigger receive --fail --wait
//	billing deliveries --follow
//	billing resend 3
//	billing sandbox advance 6m
//	billing movements --database-url postgres://... --state overdue
//	billing reconcile --database-url postgres://... --from 24h
//	billing ui --database-url postgres://...          # the operator's view, on 127.0.0.1
//	billing movements resolve --kind send --reference r1 --state failed --reason "..."
//
// Every command that talks to a sandbox takes --sandbox URL, --client-id and
// --client-secret, which default to BILLING_BASE_URL, BILLING_CLIENT_ID and
// BILLING_CLIENT_SECRET (the variables the examples read), else to the
// standalone sandbox's own address and credentials. The database commands
// take --database-url, which defaults to DATABASE_URL; they only read.
//
// Exit status: 0 on success, 1 on a failure, 2 on a mistake in the command
// line. --json writes machine-readable output instead of text.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/billingsdk/billing-go/internal/sandbox/standalone"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(runScrubbed(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Getenv))
}

// orderedWriter writes to w after flushing what flush holds, so that a
// line written apart keeps its place in the output.
type orderedWriter struct {
	flush *scrubWriter
	w     io.Writer
}

func (o *orderedWriter) Write(p []byte) (int, error) {
	if err := o.flush.Flush(); err != nil {
		return 0, err
	}
	return o.w.Write(p)
}

// runScrubbed runs the command with its stdout and stderr through one
// scrubber that knows the secrets of args and the environment (output.go).
func runScrubbed(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	scrub := newTextScrubber(commandSecrets(args, getenv))
	out, errOut := &scrubWriter{w: stdout, scrub: scrub}, &scrubWriter{w: stderr, scrub: scrub}
	code := run(ctx, args, &env{stdout: out, stderr: errOut, getenv: getenv, sandboxBanner: &orderedWriter{flush: out, w: stdout}})
	_ = out.Flush()
	_ = errOut.Flush()
	return code
}

// env is what a command reads and writes besides its arguments.
type env struct {
	stdout, stderr io.Writer
	getenv         func(string) string
	// sandboxBanner receives billing sandbox's banner, which holds only the
	// sandbox's own address and public test credentials; nil means stdout.
	sandboxBanner io.Writer
}

func (e *env) banner() io.Writer {
	if e.sandboxBanner != nil {
		return e.sandboxBanner
	}
	return e.stdout
}

// command is one subcommand: its name, a line of help, and what it does.
type command struct {
	name, summary string
	run           func(ctx context.Context, e *env, args []string) error
}

// commands is the table of subcommands, in the order the help lists them.
var commands = []command{
	{"sandbox", "run the sandbox, or drive one: sandbox advance|complete|now", runSandbox},
	{"listen", "forward the sandbox's callbacks and webhooks to your application", runListen},
	{"trigger", "start a money flow on the sandbox: receive|send|bank|debit|mandate|checkout", runTrigger},
	{"deliveries", "print the callbacks and webhooks the sandbox delivered (--follow to keep printing)", runDeliveries},
	{"resend", "deliver one of the sandbox's callbacks or webhooks again, unchanged", runResend},
	{"movements", "list the movements a Tracker keeps in PostgreSQL (read-only)", runMovements},
	{"reconcile", "print a Tracker's reconciliation from PostgreSQL (read-only)", runReconcile},
	{"migrate", "migrate pgstore's tables, or --check them as New does", runMigrate},
	{"ui", "serve the operator's view of a Tracker's PostgreSQL store on 127.0.0.1", runUI},
}

// usageError is a mistake in the command line: exit status 2.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return &usageError{fmt.Errorf(format, args...)} }

// run runs the command args name and returns the exit status.
func run(ctx context.Context, args []string, e *env) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" || args[0] == "-help" {
		if len(args) > 1 {
			return run(ctx, []string{args[1], "-h"}, e)
		}
		if len(args) == 0 { // a usage mistake: the help goes to stderr, as go's does
			printUsage(e.stderr)
			return 2
		}
		printUsage(e.stdout)
		return 0
	}
	for _, c := range commands {
		if c.name != args[0] {
			continue
		}
		return exitStatus(e, "billing "+c.name, c.run(ctx, e, args[1:]))
	}
	fmt.Fprintf(e.stderr, "billing: unknown command %q\nRun 'billing help' for the commands.\n", args[0])
	return 2
}

// exitStatus reports err on stderr and returns the exit status it means.
func exitStatus(e *env, name string, err error) int {
	var usage *usageError
	var serverUsage *standalone.UsageError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &usage), errors.As(err, &serverUsage):
		fmt.Fprintf(e.stderr, "%s: %v\nRun '%s -h' for its flags.\n", name, err, name)
		return 2
	case errors.Is(err, context.Canceled):
		fmt.Fprintf(e.stderr, "%s: interrupted before it finished\n", name)
		return 1
	}
	fmt.Fprintf(e.stderr, "%s: %v\n", name, err)
	return 1
}

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "billing is the billing SDK's tool for local development and operations.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Usage:")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "\tbilling <command> [arguments]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "The commands are:")
	fmt.Fprintln(w)
	for _, c := range commands {
		fmt.Fprintf(w, "\t%-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Use 'billing help <command>' for more about a command.")
	fmt.Fprintln(w, "Commands that talk to a sandbox read BILLING_BASE_URL, BILLING_CLIENT_ID and BILLING_CLIENT_SECRET;")
	fmt.Fprintln(w, "movements and reconcile read DATABASE_URL. Exit status: 0 ok, 1 failure, 2 usage.")
}

// newFlags returns a flag set for a subcommand whose usage prints synopsis,
// then about, then the flags.
func newFlags(e *env, name, synopsis, about string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.stdout)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: %s\n\n%s\n", synopsis, strings.TrimSpace(about))
		hasFlags := false
		fs.VisitAll(func(*flag.Flag) { hasFlags = true })
		if hasFlags {
			fmt.Fprintf(fs.Output(), "\nFlags:\n")
			fs.PrintDefaults()
		}
	}
	return fs
}

// parse parses args, flags and positional arguments in any order (so that
// "advance 6m --sandbox URL" works), and returns the positional ones.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, &usageError{err}
		}
		args = fs.Args()
		if len(args) == 0 {
			return positional, nil
		}
		if args[0] == "--" {
			return append(positional, args[1:]...), nil
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
}
