package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest/sandboxctl"
)

// billingBinary is the command, built once by TestMain.
var billingBinary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "billing-cmd-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	billingBinary = filepath.Join(dir, "billing")
	build := exec.Command("go", "build", "-o", billingBinary, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building the billing command:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// eventually is how long a test waits for something that happens in another
// process before it fails: a bound, never a pause.
const eventually = 30 * time.Second

// process is a long-running billing command: its output lines as they come.
type process struct {
	cmd    *exec.Cmd
	lines  chan string
	stderr *bytes.Buffer
	errw   *lockedWriter // stderr's writer, whose lock reads it while the command runs
	done   chan error
}

// stderrNow returns what the command wrote to stderr so far.
func (p *process) stderrNow() string {
	p.errw.mu.Lock()
	defer p.errw.mu.Unlock()
	return p.stderr.String()
}

// start runs the billing command with args in the background, killed when the
// test ends if it still runs.
func start(t *testing.T, args ...string) *process {
	t.Helper()
	return startEnv(t, nil, args...)
}

// startEnv is start with env added to the clean environment.
func startEnv(t *testing.T, env []string, args ...string) *process {
	t.Helper()
	cmd := exec.Command(billingBinary, args...)
	cmd.Env = append(cleanEnv(), env...)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	p := &process{cmd: cmd, lines: make(chan string, 1000), stderr: &bytes.Buffer{}, done: make(chan error, 1)}
	p.errw = &lockedWriter{w: p.stderr}
	cmd.Stderr = p.errw
	require.NoError(t, cmd.Start())
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
		p.done <- cmd.Wait()
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	return p
}

// cleanEnv is the environment without the variables the command reads, so
// only its flags name the sandbox and the database.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "BILLING_") && name != "DATABASE_URL" {
			env = append(env, kv)
		}
	}
	return env
}

// next returns the next output line, failing after eventually.
func (p *process) next(t *testing.T) string {
	t.Helper()
	select {
	case line, ok := <-p.lines:
		require.True(t, ok, "the command ended; stderr: %s", p.stderr)
		return line
	case <-time.After(eventually):
		t.Fatalf("no output within %s; stderr: %s", eventually, p.stderr)
		return ""
	}
}

// interrupt sends Ctrl+C and requires a clean exit.
func (p *process) interrupt(t *testing.T) {
	t.Helper()
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGINT))
	go func() {
		for range p.lines { // drain the rest
		}
	}()
	select {
	case err := <-p.done:
		require.NoError(t, err, "stderr: %s", p.stderr)
	case <-time.After(eventually):
		t.Fatal("the command did not stop on Ctrl+C")
	}
}

type lockedWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// billingOnce runs the command to its end and returns its stdout, stderr and
// exit status.
func billingOnce(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*eventually)
	defer cancel()
	cmd := exec.CommandContext(ctx, billingBinary, args...)
	cmd.Env = cleanEnv()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if exit, ok := err.(*exec.ExitError); ok {
		code = exit.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return stdout.String(), stderr.String(), code
}

// startSandbox runs billing sandbox on a free port and returns its base URL.
func startSandbox(t *testing.T, args ...string) (*process, string) {
	t.Helper()
	p := start(t, append([]string{"sandbox", "-addr", "127.0.0.1:0"}, args...)...)
	baseURL := ""
	for {
		line := p.next(t)
		if label, value, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(label) == "base URL" {
			baseURL = strings.TrimSpace(value)
		}
		if strings.HasPrefix(line, "Press Ctrl+C") {
			break
		}
	}
	require.True(t, strings.HasPrefix(baseURL, "http://127.0.0.1:"), baseURL)
	return p, baseURL
}

// app is the merchant's application: it records what reaches it.
type app struct {
	*httptest.Server
	mu     sync.Mutex
	bodies [][]byte
	types  []string
}

func newApp(t *testing.T) *app {
	a := &app{}
	a.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		a.mu.Lock()
		defer a.mu.Unlock()
		a.bodies = append(a.bodies, b)
		a.types = append(a.types, r.Header.Get("Content-Type"))
	}))
	t.Cleanup(a.Close)
	return a
}

// waitBodies waits until the app got n bodies and returns them.
func (a *app) waitBodies(t *testing.T, n int) [][]byte {
	t.Helper()
	deadline := time.Now().Add(eventually)
	for {
		a.mu.Lock()
		got := append([][]byte(nil), a.bodies...)
		a.mu.Unlock()
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("the app got %d bodies within %s, not %d", len(got), eventually, n)
		}
		time.Sleep(10 * time.Millisecond) // a poll of another process, bounded by the deadline
	}
}

func TestSandboxListenTriggerEndToEnd(t *testing.T) {
	sandboxProc, base := startSandbox(t, "-resolve-after", "0s")
	ctl := sandboxctl.New(base, sandboxctl.DefaultClientID, sandboxctl.DefaultClientSecret)
	ctx := context.Background()
	application := newApp(t)

	listener := start(t, "listen", "--sandbox", base, "--forward-to", application.URL+"/webhooks")
	banner := listener.next(t)
	assert.Contains(t, banner, "to "+application.URL+"/webhooks")
	assert.Equal(t, "Press Ctrl+C to stop.", listener.next(t))
	target, err := ctl.ForwardTarget(ctx)
	require.NoError(t, err)
	require.NotEmpty(t, target, "listen registered with the sandbox")

	stdout, stderr, code := billingOnce(t, "trigger", "receive", "--sandbox", base, "--reference", "rcve2e", "--amount", "25.00", "--wait", "--json")
	require.Equal(t, 0, code, stderr)
	var receive triggerResult
	require.NoError(t, json.Unmarshal([]byte(stdout), &receive), stdout)
	assert.Equal(t, "rcve2e", receive.Reference)
	assert.Equal(t, "*********567", receive.TestNumber, "a number is masked in everything the command writes, its last digits kept")
	require.NotNil(t, receive.Final)
	assert.Equal(t, final{State: "succeeded", ResponseCode: "0000"}, *receive.Final)

	stdout, stderr, code = billingOnce(t, "trigger", "send", "--fail", "--sandbox", base, "--reference", "sndfail", "--wait")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "send sndfail started")
	assert.Contains(t, stdout, "test number: *********001")
	assert.Contains(t, stdout, "final:       failed (2001)")

	bodies := application.waitBodies(t, 2)
	events := map[string]billing.Event{}
	for _, b := range bodies {
		ev, err := billing.ParseEvent(b)
		require.NoError(t, err, "%s", b)
		events[ev.Reference()] = ev
	}
	require.Contains(t, events, "rcve2e")
	require.Contains(t, events, "sndfail")
	assert.Equal(t, billing.EventKindTransaction, events["rcve2e"].Kind())
	assert.Equal(t, billing.EventSucceeded, events["rcve2e"].State())
	assert.Equal(t, billing.ResponseCode("0000"), events["rcve2e"].Code())
	assert.Equal(t, 2500.0, mustAmount(t, bodies, "rcve2e"))
	assert.Equal(t, billing.EventKindPayout, events["sndfail"].Kind())
	assert.Equal(t, billing.EventFailed, events["sndfail"].State())
	assert.Equal(t, billing.ResponseCode("2001"), events["sndfail"].Code())
	application.mu.Lock()
	assert.Equal(t, []string{"application/json", "application/json"}, application.types)
	application.mu.Unlock()

	// The bodies reached the app unchanged: byte for byte what the sandbox posted.
	deliveries, err := ctl.Deliveries(ctx, 0, 100)
	require.NoError(t, err)
	require.Len(t, deliveries, 2)
	for i, d := range deliveries {
		assert.Equal(t, target, d.ForwardedTo)
		assert.Equal(t, "http://localhost:8080/webhooks", d.URL, "the trigger's default callback URL")
		assert.Equal(t, http.StatusOK, d.Status, "the sandbox heard the app's status")
		assert.Equal(t, string(d.Body), string(bodies[i]))
	}

	// One line per delivery: time, kind, reference, attempt, the app's status.
	lines := map[string]string{}
	for range 2 {
		line := listener.next(t)
		for _, ref := range []string{"rcve2e", "sndfail"} {
			if strings.Contains(line, ref) {
				lines[ref] = line
			}
		}
	}
	assert.Regexp(t, `^\d{4}-\d\d-\d\dT\S+Z\s+transaction\s+rcve2e\s+attempt 1\s+-> 200$`, lines["rcve2e"])
	assert.Regexp(t, `^\d{4}-\d\d-\d\dT\S+Z\s+payout\s+sndfail\s+attempt 1\s+-> 200$`, lines["sndfail"])

	listener.interrupt(t)
	target, err = ctl.ForwardTarget(ctx)
	require.NoError(t, err)
	assert.Empty(t, target, "listen unregistered when it stopped")

	movements, err := ctl.Movements(ctx, "")
	require.NoError(t, err)
	assert.Len(t, movements, 2)
	sandboxProc.interrupt(t)
}

// mustAmount reads the amount of the callback about reference, in minor units.
func mustAmount(t *testing.T, bodies [][]byte, reference string) float64 {
	t.Helper()
	for _, b := range bodies {
		ev, err := billing.ParseEvent(b)
		require.NoError(t, err)
		if ev.Reference() != reference {
			continue
		}
		var probe struct {
			Data struct {
				Amount json.Number `json:"Amount"`
			} `json:"Data"`
		}
		require.NoError(t, json.Unmarshal(b, &probe))
		cedis, err := probe.Data.Amount.Float64()
		require.NoError(t, err)
		return cedis * 100
	}
	t.Fatalf("no callback about %s", reference)
	return 0
}

func TestSandboxControlsOnAManualClock(t *testing.T) {
	sandboxProc, base := startSandbox(t, "-manual-clock")
	stdout, stderr, code := billingOnce(t, "sandbox", "now", "--sandbox", base)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, "2025-01-01T00:00:00Z\n", stdout)
	stdout, stderr, code = billingOnce(t, "sandbox", "advance", "6m1.5s", "--sandbox", base)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, "2025-01-01T00:06:01.5Z\n", stdout)
	stdout, _, code = billingOnce(t, "sandbox", "advance", "250ms", "--json", "--sandbox", base)
	require.Equal(t, 0, code)
	assert.JSONEq(t, `{"now":"2025-01-01T00:06:01.75Z"}`, stdout)

	// A checkout left pending, then completed with the control.
	stdout, stderr, code = billingOnce(t, "trigger", "checkout", "--pending", "--sandbox", base, "--reference", "chk1", "--json")
	require.Equal(t, 0, code, stderr)
	var checkout triggerResult
	require.NoError(t, json.Unmarshal([]byte(stdout), &checkout))
	assert.Contains(t, checkout.CheckoutURL, base+"/checkout/")
	session := strings.TrimPrefix(checkout.CheckoutURL, base+"/checkout/")
	stdout, stderr, code = billingOnce(t, "sandbox", "complete", session, "--method", "MOBILE_MONEY", "--outcome", "failed", "--sandbox", base)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, "checkout "+session+" failed by MOBILE_MONEY\n", stdout)
	_, stderr, code = billingOnce(t, "sandbox", "complete", session, "--sandbox", base)
	assert.Equal(t, 1, code, "no longer pending")
	assert.Contains(t, stderr, "409")

	// --wait on a sandbox whose clock does not move says what to do.
	_, stderr, code = billingOnce(t, "trigger", "receive", "--sandbox", base, "--wait", "--timeout", "300ms")
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "billing sandbox advance")
	sandboxProc.interrupt(t)
}

func TestExitStatusesAndErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		says string
	}{
		{nil, 2, "The commands are"},
		{[]string{"help"}, 0, "The commands are"},
		{[]string{"bogus"}, 2, `unknown command "bogus"`},
		{[]string{"trigger"}, 2, "trigger takes one flow"},
		{[]string{"trigger", "refund"}, 2, `unknown flow "refund"`},
		{[]string{"trigger", "send", "--pending"}, 2, "no test number for send --pending"},
		{[]string{"trigger", "receive", "--fail", "--pending"}, 2, "at most one"},
		{[]string{"trigger", "receive", "--amount", "1.234"}, 2, "--amount"},
		{[]string{"trigger", "receive", "--reference", "has space"}, 2, "--reference"},
		{[]string{"trigger", "-h"}, 0, "Flows:"},
		{[]string{"sandbox", "advance"}, 2, "one duration"},
		{[]string{"sandbox", "advance", "--", "-5s"}, 2, "is not a duration"},
		{[]string{"sandbox", "rewind"}, 2, "unknown sandbox control"},
		{[]string{"sandbox", "-wire", "soap"}, 2, "-wire"},
		{[]string{"sandbox", "-h"}, 0, "-manual-clock"},
		{[]string{"listen"}, 2, "--forward-to is required"},
		{[]string{"listen", "--forward-to", "localhost:8080"}, 2, "not an http or https URL"},
		{[]string{"movements"}, 2, "--database-url is required"},
		{[]string{"movements", "--database-url", "postgres://x@/db", "--state", "lost"}, 2, `--state "lost"`},
		{[]string{"reconcile", "--database-url", "postgres://x@/db", "--from", "1h", "--to", "2h"}, 2, "must be before"},
		{[]string{"reconcile", "--from", "yesterday"}, 2, "--from"},
		{[]string{"trigger", "receive", "--sandbox", "http://127.0.0.1:1"}, 1, "is the sandbox running"},
		{[]string{"sandbox", "now", "--sandbox", "http://127.0.0.1:1"}, 1, "start one with billing sandbox"},
	} {
		stdout, stderr, code := billingOnce(t, tc.args...)
		assert.Equal(t, tc.code, code, "%q: %s%s", tc.args, stdout, stderr)
		assert.Contains(t, stdout+stderr, tc.says, "%q", tc.args)
	}
}
