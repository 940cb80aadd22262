package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/opsview"
	"github.com/billingsdk/billing-go/pgstore"
)

// uiAnswer is billing ui's --json output: the URL to open, with its token.
type uiAnswer struct {
	URL     string `json:"url"`
	Actions bool   `json:"actions"`
}

// runUI serves the operator's view (package opsview) of a pgstore on loopback.
func runUI(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "billing ui", "billing ui --database-url URL [--addr 127.0.0.1:0] [--actions] [flags]", `
Serves the operator's view of the movements a Tracker keeps in PostgreSQL (pgstore) on this
machine only: an overview by state, a list with filters and CSV export, each movement's
timeline and the reconciliation. It prints the URL to open, which holds a random token; a
request without it, or naming another host (DNS rebinding), is refused.

It is read-only, in read-only transactions, unless --actions is given: then an operator may
recheck a movement (one status check, through --sandbox with --client-id and --client-secret:
the service and credentials your application uses), resolve one the service cannot answer
about, release one never sent, or have its outcome reported again. None moves money; each is
audited in the store under --actor.`)
	databaseURL := addDatabaseFlag(fs, e)
	addr := fs.String("addr", "127.0.0.1:0", "loopback address to serve on; port 0 picks a free one")
	actions := fs.Bool("actions", false, "switch the actions on (recheck, resolve, release, report again)")
	asJSONUI := fs.Bool("json", false, "print the URL to open as JSON")
	actor := fs.String("actor", e.getenv("USER"), "who the audit names for the actions (env USER)")
	conn := addSandboxFlags(fs, e)
	positional, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(positional) > 0 {
		return usagef("ui takes only flags, not %q", positional[0])
	}
	host, _, err := net.SplitHostPort(*addr)
	if err != nil {
		return usagef("--addr %q: %v", *addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return usagef("--addr %q: the view is served on loopback only (127.0.0.1)", *addr)
	}
	if *actions && strings.TrimSpace(*actor) == "" {
		return usagef("--actions needs --actor (or USER): every action names who took it")
	}
	tracker, closeDB, err := opsTracker(ctx, *databaseURL, conn, !*actions)
	if err != nil {
		return err
	}
	defer closeDB()

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", *addr, err)
	}
	token := randomToken()
	opts := opsview.Options{Tracker: tracker}
	if *actions {
		opts.Recheck, opts.Resolve, opts.Release, opts.ReportAgain = true, true, true, true
		name := *actor
		opts.Authorize = func(*http.Request, opsview.Action, opsview.Movement) (string, error) { return name, nil }
	}
	srv := &http.Server{Handler: uiHandler(token, ln.Addr().(*net.TCPAddr).Port, opsview.NewHandler(opts)), ReadHeaderTimeout: 10 * time.Second}
	mode := "read-only"
	if *actions {
		mode = "actions on, as " + *actor
	}
	open := fmt.Sprintf("http://127.0.0.1:%d/%s/", ln.Addr().(*net.TCPAddr).Port, token)
	if *asJSONUI {
		if err := writeJSON(e.stdout, uiAnswer{URL: open, Actions: *actions}); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(e.stdout, "billing ui (%s): open %s\nStop it with Ctrl-C.\n", mode, open)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	return nil
}

// randomToken is the secret part of the view's URL.
func randomToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// uiHandler serves view under /token/ to requests naming this machine's loopback host
// and port: another Host (a page of another site whose name resolves to 127.0.0.1) or
// another path is refused before the view sees it.
func uiHandler(token string, port int, view http.Handler) http.Handler {
	allowed := map[string]bool{}
	for _, h := range []string{"127.0.0.1", "localhost", "[::1]"} {
		allowed[fmt.Sprintf("%s:%d", h, port)] = true
	}
	prefix := "/" + token
	inner := http.StripPrefix(prefix, view)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !allowed[strings.ToLower(r.Host)] {
			http.Error(w, "billing ui: this host is not served", http.StatusMisdirectedRequest)
			return
		}
		if r.URL.Path != prefix && !strings.HasPrefix(r.URL.Path, prefix+"/") {
			http.NotFound(w, r)
			return
		}
		if r.URL.Path == prefix {
			http.Redirect(w, r, prefix+"/", http.StatusFound)
			return
		}
		inner.ServeHTTP(w, r)
	})
}

// opsTracker is a Tracker on the pgstore at databaseURL for the operator's reads and
// actions: its Client is the service's (conn), for the status checks of a recheck; it
// runs nothing by itself (no Run), so it reports nothing: the application's instances
// do. readOnly opens the database with every transaction read-only.
func opsTracker(ctx context.Context, databaseURL string, conn *sandboxConn, readOnly bool) (*billing.Tracker, func(), error) {
	var db *sql.DB
	var err error
	if readOnly {
		db, err = openReadOnly(ctx, databaseURL)
	} else {
		db, err = openWritable(ctx, databaseURL)
	}
	if err != nil {
		return nil, nil, err
	}
	store, err := pgstore.New(ctx, db) // the schema is current (checked): New only reads
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	if err := conn.check(); err != nil {
		db.Close()
		return nil, nil, err
	}
	client, err := billing.NewClient(billing.WithBaseURL(conn.url), billing.WithClientCredentials(conn.clientID, conn.clientSecret))
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	return billing.NewTracker(client, billing.TrackerOptions{Store: store, Owner: "billing-cli-" + randomToken()[:8]}), func() { db.Close() }, nil
}

// openWritable opens the database for the operator's actions, which write their
// outcomes and audit records; it checks the schema as openReadOnly does.
func openWritable(ctx context.Context, databaseURL string) (*sql.DB, error) {
	if databaseURL == "" {
		return nil, usagef("--database-url is required (or DATABASE_URL): the PostgreSQL database your Tracker's pgstore uses")
	}
	cfg, err := pgx.ParseConfig(databaseURL)
	if err != nil {
		return nil, usagef("--database-url: %v", err)
	}
	cfg.RuntimeParams["application_name"] = "billing (operator)"
	db := stdlib.OpenDB(*cfg)
	db.SetMaxOpenConns(4)
	if err := checkSchema(ctx, db); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// movementActions are the subcommands of billing movements that act on one movement.
var movementActions = map[string]billing.Action{
	"recheck":      billing.ActionRecheck,
	"resolve":      billing.ActionResolve,
	"release":      billing.ActionRelease,
	"report-again": billing.ActionReportAgain,
}

// runMovementAction takes one operator's action through the Tracker's method.
func runMovementAction(ctx context.Context, e *env, name string, args []string) error {
	action := movementActions[name]
	fs := newFlags(e, "billing movements "+name, "billing movements "+name+" --kind K --reference R --reason TEXT [flags]", `
Takes one operator's action on a movement a Tracker keeps in PostgreSQL, through the
Tracker's own method, audited in the store under --actor with --reason:
  recheck       one status check now; it settles only by the normal rules
  resolve       set a final state (--state) of a movement the service cannot answer about;
                never over a settled outcome
  release       forget a movement whose request never left (the send's own error said so)
  report-again  have its reported outcome reported once more, under the same Outcome.ID
None moves money or deletes an audit record.`)
	databaseURL := addDatabaseFlag(fs, e)
	kind := fs.String("kind", "", "the movement's kind: "+strings.Join(kindNames(), ", "))
	ref := fs.String("reference", "", "the movement's client reference")
	reason := fs.String("reason", "", "why (required)")
	state := fs.String("state", "", "resolve: succeeded, failed, expired or unknown")
	actor := fs.String("actor", e.getenv("USER"), "who the audit names (env USER)")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	conn := addSandboxFlags(fs, e)
	positional, err := parse(fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(positional) > 0:
		return usagef("%s takes only flags, not %q", name, positional[0])
	case strings.TrimSpace(*reason) == "":
		return usagef("--reason is required: the audit keeps why")
	case strings.TrimSpace(*actor) == "":
		return usagef("--actor is required (or USER): the audit keeps who")
	case *kind == "" || *ref == "":
		return usagef("--kind and --reference name the movement")
	case action == billing.ActionResolve && *state == "":
		return usagef("resolve needs --state: succeeded, failed, expired or unknown")
	case action != billing.ActionResolve && *state != "":
		return usagef("--state is for resolve only")
	}
	tracker, closeDB, err := opsTracker(ctx, *databaseURL, conn, false)
	if err != nil {
		return err
	}
	defer closeDB()
	k := billing.Kind(*kind)
	var r billing.ActionResult
	switch action {
	case billing.ActionRecheck:
		r, err = tracker.Recheck(ctx, *actor, *reason, k, *ref)
	case billing.ActionResolve:
		r, err = tracker.Resolve(ctx, *actor, *reason, k, *ref, billing.EventState(*state))
	case billing.ActionRelease:
		r, err = tracker.Release(ctx, *actor, *reason, k, *ref)
	case billing.ActionReportAgain:
		r, err = tracker.ReportAgain(ctx, *actor, *reason, k, *ref)
	}
	var v *billing.ValidationError
	if errors.As(err, &v) {
		return &usageError{err}
	}
	if r.Before == "" && err != nil {
		return err
	}
	out := struct {
		Action    string `json:"action"`
		Kind      string `json:"kind"`
		Reference string `json:"reference"`
		Before    string `json:"before"`
		After     string `json:"after"`
		Error     string `json:"error,omitempty"`
	}{string(r.Action), string(r.Kind), tracker.Scrub(r.ClientReference), r.Before, r.After, ""}
	if err != nil {
		out.Error = tracker.Scrub(err.Error())
	}
	if *asJSON {
		if werr := writeJSON(e.stdout, out); werr != nil {
			return werr
		}
	} else if err == nil {
		fmt.Fprintf(e.stdout, "%s %s %s: %s -> %s (audited as %s)\n", out.Action, out.Kind, out.Reference, out.Before, out.After, *actor)
	}
	return err
}
