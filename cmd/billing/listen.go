package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest/sandboxctl"
	"github.com/billingsdk/billing-go/internal/sandbox"
)

// maxForwardedBody bounds a callback or webhook body the listener relays; the
// sandbox's own are a few kilobytes.
const maxForwardedBody = 1 << 20

// appTimeout bounds the application's answer to one forwarded delivery: under
// the sandbox's own 5 s for one attempt, so the sandbox hears the answer.
const appTimeout = 4 * time.Second

// forwardedLine is one delivery the listener relayed, as --json prints it.
type forwardedLine struct {
	Time      time.Time `json:"time"`
	Kind      string    `json:"kind"`
	Reference string    `json:"reference"`
	Attempt   int       `json:"attempt,omitempty"`
	MeantFor  string    `json:"meantFor,omitempty"`
	Status    int       `json:"status"`
	Error     string    `json:"error,omitempty"`
}

func runListen(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "billing listen", "billing listen --forward-to URL [flags]", `
Registers with the sandbox as the receiver of every callback and webhook (PUT /sandbox/forward)
and forwards each one to your application at --forward-to, body unchanged, printing one line
per delivery: time, kind, client reference, attempt, your application's HTTP status. The
sandbox hears your application's status: an answer other than 2xx is redelivered on the
sandbox's schedule (30s, 1m, 2m, 5m, 10m, 30m). A redirect is not followed: the sandbox hears
the 3xx. Checkout webhooks come too, with no sandbox flag. Ctrl+C stops and unregisters.

One listener at a time: a second is refused while the first runs. If the sandbox restarts or
forgets the registration, listen says so on stderr and registers again.

--forward-to must be on this machine (localhost, 127.0.0.1, ::1) unless --allow-remote is given.

The sandbox posts to this listener, so it must reach --addr: for a sandbox on another host,
listen on an address it reaches and give --public-url.`)
	conn := addSandboxFlags(fs, e)
	forwardTo := fs.String("forward-to", "", "your application's callback and webhook URL, e.g. http://localhost:8080/webhooks (required)")
	addr := fs.String("addr", "127.0.0.1:0", "address the listener serves on (port 0: any free port)")
	publicURL := fs.String("public-url", "", "URL the sandbox posts to, when it differs from http://<addr>/")
	asJSON := fs.Bool("json", false, "print one JSON object per delivery")
	allowRemote := fs.Bool("allow-remote", false, "allow a --forward-to that is not on this machine")
	every := fs.Duration("check-every", 2*time.Second, "how often to check that the sandbox still knows this listener")
	positional, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(positional) > 0 {
		return usagef("listen takes only flags, not %q", positional[0])
	}
	if *forwardTo == "" {
		return usagef("--forward-to is required: your application's callback URL, e.g. http://localhost:8080/webhooks")
	}
	u, err := url.Parse(*forwardTo)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usagef("--forward-to %s is not an http or https URL", quoteURL(*forwardTo))
	}
	if !isLoopbackHost(u.Hostname()) && !*allowRemote {
		return usagef("--forward-to %s is not on this machine: listen forwards to an application on localhost; give --allow-remote to forward elsewhere", quoteURL(*forwardTo))
	}
	if *every <= 0 {
		return usagef("--check-every must be positive")
	}
	if err := conn.check(); err != nil {
		return err
	}

	listener, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w (pick another address with --addr)", *addr, err)
	}
	target := *publicURL
	if target == "" {
		target = "http://" + listener.Addr().String() + "/"
	}
	f := &forwarder{to: *forwardTo, out: e.stdout, asJSON: *asJSON, client: &http.Client{Timeout: appTimeout,
		// The sandbox hears the application's own status: a redirect is an answer, never followed.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	server := &http.Server{Handler: f, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- server.Serve(listener) }()
	defer func() {
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = server.Shutdown(shutdownCtx)
	}()

	ctl := conn.ctl()
	unregister := func() {
		// Unregister, unless another listener took over meanwhile.
		cleanupCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if current, err := ctl.ForwardTarget(cleanupCtx); err == nil && current == target {
			_ = ctl.ClearForwardTarget(cleanupCtx)
		}
	}
	identity, err := ctl.Identity(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("asking the sandbox at %s who it is: %w", quoteURL(conn.url), err)
	}
	if err := claim(ctx, ctl, target); err != nil {
		if ctx.Err() != nil {
			// Stopped while registering: the sandbox may have taken the target before its
			// answer was read, so give it back, and stop as cleanly as after registering.
			unregister()
			return nil
		}
		return fmt.Errorf("registering with the sandbox at %s: %w", quoteURL(conn.url), err)
	}
	defer unregister()
	w := &watch{ctl: ctl, target: target, instance: identity.Instance, stderr: e.stderr}
	if movements, err := ctl.Movements(ctx, ""); err == nil {
		w.pending = pendingOf(movements)
	}
	banner := e.stdout
	if *asJSON {
		banner = e.stderr // stdout holds only the JSON lines
	}
	fmt.Fprintf(banner, "Forwarding the callbacks and webhooks of the sandbox at %s to %s (listening on %s)\nPress Ctrl+C to stop.\n",
		redactURL(conn.url), redactURL(*forwardTo), target)

	ticker := time.NewTicker(*every)
	defer ticker.Stop()
	for {
		select {
		case err := <-served:
			return fmt.Errorf("the listener stopped: %w", err)
		case <-ctx.Done():
			return nil
		case <-ticker.C:
			w.check(ctx)
		}
	}
}

// claim registers target as the sandbox's forward target, unless another
// listener holds it: then it is refused, unless that listener no longer
// answers (it stopped without unregistering), whose place it takes.
func claim(ctx context.Context, ctl *sandboxctl.Client, target string) error {
	err := ctl.ClaimForwardTarget(ctx, target)
	var ctlErr *sandboxctl.Error
	if !errors.As(err, &ctlErr) || ctlErr.Status != http.StatusConflict {
		return err
	}
	current, getErr := ctl.ForwardTarget(ctx)
	if getErr != nil {
		return err
	}
	if current != "" && answers(ctx, current) {
		return fmt.Errorf("another billing listen receives this sandbox's callbacks and webhooks at %s: stop it first (one listener at a time)", current)
	}
	return ctl.SetForwardTarget(ctx, target)
}

// answers reports whether something serves HTTP at target.
func answers(ctx context.Context, target string) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return false
	}
	resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return true
}

// watch checks that the sandbox still knows the listener: a sandbox that
// restarted (a new instance) or forgot the registration gets it again, and
// the user is told, on stderr, once per change.
type watch struct {
	ctl      *sandboxctl.Client
	target   string
	instance string
	stderr   io.Writer
	gone     bool // the sandbox did not answer at the last check
	// pending are the movements the sandbox held pending at the last check,
	// "kind reference": those a restarted sandbox forgot are named.
	pending map[string]bool
}

// pendingOf returns the pending movements of list, as watch.pending keeps them.
func pendingOf(list []sandboxctl.Movement) map[string]bool {
	pending := map[string]bool{}
	for _, m := range list {
		if m.State == "pending" {
			pending[m.Kind+" "+m.ClientReference] = true
		}
	}
	return pending
}

func (w *watch) check(ctx context.Context) {
	identity, err := w.ctl.Identity(ctx)
	if err != nil {
		if ctx.Err() == nil && !w.gone {
			fmt.Fprintf(w.stderr, "the sandbox at %s does not answer (%v); forwarding resumes when it is back\n", quoteURL(w.ctl.URL()), err)
			w.gone = true
		}
		return
	}
	if w.gone {
		w.gone = false
	}
	movements, listErr := w.ctl.Movements(ctx, "")
	if identity.Instance != w.instance {
		kept := ""
		if identity.State != nil && identity.State.Restored {
			kept = " with the state kept in " + identity.State.File
		}
		fmt.Fprintf(w.stderr, "the sandbox at %s restarted (instance %s, was %s)%s: registering again\n",
			redactURL(w.ctl.URL()), identity.Instance, w.instance, kept)
		w.instance = identity.Instance
		if listErr == nil {
			w.nameForgotten(movements)
		}
	}
	if listErr == nil {
		w.pending = pendingOf(movements)
	}
	current, err := w.ctl.ForwardTarget(ctx)
	if err != nil || current == w.target {
		return
	}
	if current != "" {
		fmt.Fprintf(w.stderr, "another listener took this sandbox's deliveries (%s): this one receives nothing until it stops\n", current)
		return
	}
	if err := w.ctl.ClaimForwardTarget(ctx, w.target); err == nil {
		fmt.Fprintf(w.stderr, "the sandbox had forgotten this listener: registered again at %s\n", w.target)
	}
}

// nameForgotten names the movements the sandbox held pending before it
// restarted and no longer knows: a Tracker finds them overdue, and their
// status check answers that the sandbox does not know them.
func (w *watch) nameForgotten(now []sandboxctl.Movement) {
	known := map[string]bool{}
	for _, m := range now {
		known[m.Kind+" "+m.ClientReference] = true
	}
	var forgotten []string
	for key := range w.pending {
		if !known[key] {
			forgotten = append(forgotten, key)
		}
	}
	if len(forgotten) == 0 {
		return
	}
	slices.Sort(forgotten)
	fmt.Fprintf(w.stderr, "the restarted sandbox forgot %d movement(s) pending when it last looked: %s; your Tracker will find them overdue and their status check unknown (billing movements --state overdue lists them; billing sandbox -state FILE keeps them across restarts)\n",
		len(forgotten), strings.Join(forgotten, ", "))
}

// isLoopbackHost reports whether host names this machine.
func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// forwarder relays each callback or webhook the sandbox posts to the
// application and answers the sandbox with the application's status.
type forwarder struct {
	to     string
	client *http.Client
	asJSON bool

	mu  sync.Mutex // one line at a time
	out io.Writer
}

func (f *forwarder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "the billing listener takes the sandbox's POSTs only", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxForwardedBody+1))
	if err != nil || len(body) > maxForwardedBody {
		http.Error(w, "the body could not be read whole (at most 1 MiB)", http.StatusBadRequest)
		return
	}
	line := forwardedLine{Time: time.Now().UTC().Truncate(time.Millisecond), Kind: "unknown", MeantFor: r.Header.Get(sandbox.ForwardedForHeader)}
	line.Attempt, _ = strconv.Atoi(r.Header.Get(sandbox.AttemptHeader))
	if ev, err := billing.ParseEvent(body); err == nil {
		line.Kind, line.Reference = string(ev.Kind()), clientReference(ev)
	}

	status, err := f.post(r.Context(), r.Header.Get("Content-Type"), body)
	line.Status = status
	if err != nil {
		line.Error = err.Error()
		status = http.StatusBadGateway // the sandbox redelivers later
	}
	f.print(line)
	w.WriteHeader(status)
}

// post sends body to the application unchanged and returns its status.
func (f *forwarder) post(ctx context.Context, contentType string, body []byte) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.to, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	if contentType == "" {
		contentType = "application/json"
	}
	req.Header.Set("Content-Type", contentType)
	resp, err := f.client.Do(req)
	if err != nil {
		var netErr net.Error
		if errors.As(err, &netErr) && netErr.Timeout() {
			return 0, fmt.Errorf("your application did not answer within %s", appTimeout)
		}
		return 0, fmt.Errorf("your application at %s could not be reached: is it running?", f.to)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	return resp.StatusCode, nil
}

// clientReference is the merchant's client reference an event is about: for
// a checkout, the one the merchant gave the session, not the session's own.
func clientReference(ev billing.Event) string {
	if c, ok := ev.(*billing.CheckoutEvent); ok {
		if c.ClientReference != "" {
			return c.ClientReference
		}
		if ref, ok := c.Data.Metadata["clientReference"].(string); ok && ref != "" {
			return ref
		}
	}
	return ev.Reference()
}

func (f *forwarder) print(line forwardedLine) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.asJSON {
		_ = writeJSON(f.out, line)
		return
	}
	reference := line.Reference
	if reference == "" {
		reference = "-"
	}
	status := strconv.Itoa(line.Status)
	if line.Error != "" {
		status = "failed: " + line.Error
	}
	fmt.Fprintf(f.out, "%s  %-26s  %-24s  attempt %d  -> %s\n", line.Time.Format(time.RFC3339Nano), line.Kind, reference, line.Attempt, status)
}
