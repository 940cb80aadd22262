package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	billing "github.com/billingsdk/billing-go"
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
sandbox's schedule (30s, 1m, 2m, 5m, 10m, 30m). Ctrl+C stops and unregisters.

The sandbox posts to this listener, so it must reach --addr: for a sandbox on another host,
listen on an address it reaches and give --public-url.`)
	conn := addSandboxFlags(fs, e)
	forwardTo := fs.String("forward-to", "", "your application's callback and webhook URL, e.g. http://localhost:8080/webhooks (required)")
	addr := fs.String("addr", "127.0.0.1:0", "address the listener serves on (port 0: any free port)")
	publicURL := fs.String("public-url", "", "URL the sandbox posts to, when it differs from http://<addr>/")
	asJSON := fs.Bool("json", false, "print one JSON object per delivery")
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
	if u, err := url.Parse(*forwardTo); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usagef("--forward-to %q is not an http or https URL", *forwardTo)
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
	f := &forwarder{to: *forwardTo, out: e.stdout, asJSON: *asJSON, client: &http.Client{Timeout: appTimeout}}
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
	if err := ctl.SetForwardTarget(ctx, target); err != nil {
		if ctx.Err() != nil {
			// Stopped while registering: the sandbox may have taken the target before its
			// answer was read, so give it back, and stop as cleanly as after registering.
			unregister()
			return nil
		}
		return fmt.Errorf("registering with the sandbox at %s: %w", conn.url, err)
	}
	defer unregister()
	banner := e.stdout
	if *asJSON {
		banner = e.stderr // stdout holds only the JSON lines
	}
	fmt.Fprintf(banner, "Forwarding the callbacks and webhooks of the sandbox at %s to %s (listening on %s)\nPress Ctrl+C to stop.\n",
		conn.url, *forwardTo, target)

	select {
	case err := <-served:
		return fmt.Errorf("the listener stopped: %w", err)
	case <-ctx.Done():
		return nil
	}
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
		line.Kind, line.Reference = string(ev.Kind()), ev.Reference()
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
