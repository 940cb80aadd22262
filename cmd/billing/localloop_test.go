package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
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
	"github.com/billingsdk/billing-go/billingtest"
	"github.com/billingsdk/billing-go/billingtest/sandboxctl"
)

// recorder is an application, or a service, that notes every request it gets
// and answers with answer.
type recorder struct {
	*httptest.Server
	mu       sync.Mutex
	requests []string // "METHOD /path"
	bodies   [][]byte
}

func newRecorder(t *testing.T, answer http.HandlerFunc) *recorder {
	r := &recorder{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.requests = append(r.requests, req.Method+" "+req.URL.Path)
		r.bodies = append(r.bodies, b)
		r.mu.Unlock()
		answer(w, req)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *recorder) seen() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.requests...)
}

func (r *recorder) seenBodies() [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([][]byte(nil), r.bodies...)
}

// receive starts a receive on srv that succeeds, with a callback URL that
// reaches nothing: only a listener hears it.
func receive(t *testing.T, srv *billingtest.Server, reference string) {
	t.Helper()
	_, err := srv.Client().Payments.Receive(context.Background(), &billing.ReceiveParams{Amount: 100, Phone: "233241234567",
		Provider: billing.ProviderMTN, Description: "Order", ClientReference: reference, CallbackURL: "http://127.0.0.1:1/never"})
	require.NoError(t, err)
}

// The listener follows no redirect: the sandbox hears the app's own 3xx (and
// redelivers it), and the listener never fetches the target, nor posts the
// body to it again.
func TestListenFollowsNoRedirect(t *testing.T) {
	for _, status := range []int{http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			srv := billingtest.NewServer(t, billingtest.WithManualClock())
			app := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/webhooks" {
					http.Redirect(w, r, "/login", status)
				}
			})
			_, stop := startListen(t, srv, "--forward-to", app.URL+"/webhooks")
			defer stop()
			receive(t, srv, fmt.Sprintf("redirect%d", status))
			srv.Advance(0)
			deliveries := srv.Deliveries()
			require.Len(t, deliveries, 1)
			assert.Equal(t, status, deliveries[0].Status, "the sandbox hears the app's own status")
			assert.Equal(t, []string{"POST /webhooks"}, app.seen(), "the redirect's target is never fetched")
			srv.Advance(30 * time.Second)
			assert.Len(t, srv.Deliveries(), 2, "a 3xx is no 2xx: delivered again on the schedule")
		})
	}
}

// A trigger proves it talks to a sandbox before it sends anything: against a
// service that does not answer GET /sandbox/identity as a sandbox, every flow
// is refused, exit status 1, and nothing but that question is asked.
func TestTriggerRefusesAServiceThatIsNotASandbox(t *testing.T) {
	services := map[string]http.HandlerFunc{
		"404 on every control": func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"success":false,"message":"not found"}`)
		},
		"200 on everything": func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"success":true,"responseCode":"0000","data":{"status":"PROCESSING"}}`)
		},
		"a sandbox-shaped answer of another name": func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"success":true,"data":{"sandbox":"live","instance":"x"}}`)
		},
	}
	for name, answer := range services {
		for _, flow := range append(flowNames(), "bank_transfer", "direct_debit") {
			t.Run(name+"/"+flow, func(t *testing.T) {
				service := newRecorder(t, answer)
				_, stderr, code := billingOnce(t, "trigger", flow, "--sandbox", service.URL)
				assert.Equal(t, 1, code, stderr)
				assert.Contains(t, stderr, "nothing was sent")
				assert.Equal(t, []string{"GET /sandbox/identity"}, service.seen(), "no money call, nor any other")
			})
		}
	}
}

// --forward-to off this machine needs --allow-remote; on it, it needs nothing.
func TestListenForwardsOffLoopbackOnlyWhenAllowed(t *testing.T) {
	srv := billingtest.NewServer(t, billingtest.WithManualClock())
	for _, target := range []string{"http://203.0.113.7/hooks", "https://example.com/hooks", "http://10.0.0.1:8080/", "http://localhost.example.com/"} {
		out := &lockedWriter{w: &bytes.Buffer{}}
		code := run(context.Background(), []string{"listen", "--sandbox", srv.URL, "--client-id", srv.ClientID, "--client-secret", srv.ClientSecret,
			"--forward-to", target}, &env{stdout: out, stderr: out, getenv: func(string) string { return "" }})
		assert.Equal(t, 2, code, target)
		assert.Contains(t, out.String(), "is not on this machine", target)
		assert.Contains(t, out.String(), "--allow-remote", target)
		assert.Empty(t, srv.ForwardTarget(), "nothing registered for %s", target)
	}
	for _, target := range []string{"http://localhost:8080/hooks", "http://127.0.0.2:8080/", "http://[::1]:8080/", "http://app.localhost/"} {
		_, stop := startListen(t, srv, "--forward-to", target)
		stop()
	}
	_, stop := startListen(t, srv, "--forward-to", "http://203.0.113.7/hooks", "--allow-remote")
	stop()
}

// listen receives the checkout webhooks too, with no -webhook-url, and names
// a checkout by the merchant's client reference.
func TestListenReceivesCheckoutWebhooksWithNoFlag(t *testing.T) {
	srv := billingtest.NewServer(t, billingtest.WithManualClock())
	app := newRecorder(t, func(http.ResponseWriter, *http.Request) {})
	out, stop := startListen(t, srv, "--forward-to", app.URL+"/webhooks", "--json")
	p, err := srv.Client().Payments.CreateCheckout(context.Background(), &billing.CheckoutParams{Amount: 2500, Description: "Order 9",
		ClientReference: "order9"})
	require.NoError(t, err)
	require.NoError(t, srv.CompleteCheckout(p.Reference, "CARD", "succeeded"))
	srv.Advance(0)
	stop()
	var kinds []string
	for _, b := range app.seenBodies() {
		ev, err := billing.ParseEvent(b)
		require.NoError(t, err, "%s", b)
		kinds = append(kinds, string(ev.Kind()))
	}
	assert.Contains(t, kinds, string(billing.EventKindPaymentSucceeded), "the webhook reached the app")
	var references []string
	for _, text := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var line forwardedLine
		if json.Unmarshal([]byte(text), &line) == nil && line.Kind == string(billing.EventKindPaymentSucceeded) {
			references = append(references, line.Reference)
		}
	}
	assert.Equal(t, []string{"order9"}, references, "the client reference, not the session's %s", p.Reference)
}

// A second listener is refused while the first runs, and the first keeps
// forwarding; a registration whose listener is gone is taken over.
func TestSecondListenIsRefused(t *testing.T) {
	srv := billingtest.NewServer(t, billingtest.WithManualClock())
	app := newRecorder(t, func(http.ResponseWriter, *http.Request) {})
	_, stop := startListen(t, srv, "--forward-to", app.URL+"/webhooks")
	first := srv.ForwardTarget()

	out := &lockedWriter{w: &bytes.Buffer{}}
	code := run(context.Background(), []string{"listen", "--sandbox", srv.URL, "--client-id", srv.ClientID, "--client-secret", srv.ClientSecret,
		"--forward-to", app.URL + "/other"}, &env{stdout: out, stderr: out, getenv: func(string) string { return "" }})
	assert.Equal(t, 1, code)
	assert.Contains(t, out.String(), "another billing listen receives this sandbox's callbacks and webhooks")
	assert.Equal(t, first, srv.ForwardTarget(), "the first keeps its registration")

	receive(t, srv, "second1")
	srv.Advance(0)
	assert.Equal(t, []string{"POST /webhooks"}, app.seen(), "the first still forwards")
	stop()

	const gone = "http://127.0.0.1:1/gone" // a listener killed before it unregistered
	require.NoError(t, srv.SetForwardTarget(gone))
	out.w.Reset()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"listen", "--sandbox", srv.URL, "--client-id", srv.ClientID, "--client-secret", srv.ClientSecret,
			"--forward-to", app.URL + "/webhooks"}, &env{stdout: out, stderr: out, getenv: func(string) string { return "" }})
	}()
	deadline := time.Now().Add(eventually)
	for srv.ForwardTarget() == gone {
		require.True(t, time.Now().Before(deadline), "listen did not take over a gone listener's registration: %s", out)
		time.Sleep(5 * time.Millisecond) // a poll of the listener's goroutine, bounded by the deadline
	}
	cancel()
	assert.Equal(t, 0, <-done, out.String())
}

// A sandbox that forgot the listener (its registration cleared) gets it
// again, and the user is told.
func TestListenRegistersAgainWhenForgotten(t *testing.T) {
	srv := billingtest.NewServer(t, billingtest.WithManualClock())
	out, stop := startListen(t, srv, "--forward-to", "http://127.0.0.1:1/app", "--check-every", "10ms")
	target := srv.ForwardTarget()
	require.NoError(t, srv.SetForwardTarget(""))
	deadline := time.Now().Add(eventually)
	// It registers, then says so: wait for both, the saying comes a moment after.
	for srv.ForwardTarget() != target || !strings.Contains(out.String(), "the sandbox had forgotten this listener") {
		require.True(t, time.Now().Before(deadline), "listen did not register again and say so: %s", out)
		time.Sleep(5 * time.Millisecond) // a poll of the listener's goroutine, bounded by the deadline
	}
	stop()
}

// A restarted sandbox (a new process on the same address) gets the listener
// again, and listen says the sandbox restarted.
func TestListenFollowsARestartedSandbox(t *testing.T) {
	first, base := startSandbox(t)
	// A movement left pending that the next sandbox will not know.
	_, stderr, code := billingOnce(t, "trigger", "receive", "--pending", "--sandbox", base, "--reference", "forgotten1")
	require.Equal(t, 0, code, stderr)
	listener := start(t, "listen", "--sandbox", base, "--forward-to", "http://127.0.0.1:1/app", "--check-every", "20ms")
	listener.next(t) // the banner
	ctl := sandboxctl.New(base, sandboxctl.DefaultClientID, sandboxctl.DefaultClientSecret)
	before, err := ctl.Identity(context.Background())
	require.NoError(t, err)
	target, err := ctl.ForwardTarget(context.Background())
	require.NoError(t, err)
	require.NotEmpty(t, target)

	require.True(t, pendingSeen(t, ctl, "forgotten1"))
	first.interrupt(t)
	startSandbox(t, "-addr", strings.TrimPrefix(base, "http://"))
	deadline := time.Now().Add(eventually)
	for {
		after, err := ctl.Identity(context.Background())
		got, _ := ctl.ForwardTarget(context.Background())
		if err == nil && after.Instance != before.Instance && got == target {
			break
		}
		require.True(t, time.Now().Before(deadline), "listen did not register with the new sandbox: %s", listener.stderr)
		time.Sleep(10 * time.Millisecond) // a poll of two other processes, bounded by the deadline
	}
	listener.interrupt(t)
	assert.Contains(t, listener.stderr.String(), "restarted")
	assert.Contains(t, listener.stderr.String(), "forgot 1 movement(s) pending when it last looked: receive forgotten1")
}

// pendingSeen reports whether the sandbox holds reference pending.
func pendingSeen(t *testing.T, ctl *sandboxctl.Client, reference string) bool {
	list, err := ctl.Movements(context.Background(), reference)
	require.NoError(t, err)
	return len(list) == 1 && list[0].State == "pending"
}

// billing deliveries prints every delivery, its body with --json, and billing
// resend delivers one again with the body unchanged.
func TestDeliveriesAndResend(t *testing.T) {
	srv := billingtest.NewServer(t, billingtest.WithManualClock())
	app := newRecorder(t, func(http.ResponseWriter, *http.Request) {})
	_, stop := startListen(t, srv, "--forward-to", app.URL+"/webhooks")
	defer stop()
	receive(t, srv, "dlv1")
	srv.Advance(0)
	flags := []string{"--sandbox", srv.URL, "--client-id", srv.ClientID, "--client-secret", srv.ClientSecret}
	runIn := func(args ...string) (string, int) {
		out := &lockedWriter{w: &bytes.Buffer{}}
		code := run(context.Background(), append(args, flags...), &env{stdout: out, stderr: out, getenv: func(string) string { return "" }})
		return out.String(), code
	}
	text, code := runIn("deliveries", "--json")
	require.Equal(t, 0, code, text)
	var line deliveryLine
	require.NoError(t, json.Unmarshal([]byte(strings.TrimSpace(text)), &line), text)
	assert.Equal(t, 1, line.Seq)
	assert.Equal(t, "transaction", line.Kind)
	assert.Equal(t, "dlv1", line.Reference)
	assert.Equal(t, 1, line.Attempt)
	assert.Equal(t, http.StatusOK, line.Status)
	assert.JSONEq(t, string(app.seenBodies()[0]), string(line.Body))

	text, code = runIn("resend", "1")
	require.Equal(t, 0, code, text)
	assert.Equal(t, "delivery 1 sent again as delivery 2\n", text)
	bodies := app.seenBodies()
	require.Len(t, bodies, 2)
	assert.Equal(t, bodies[0], bodies[1], "the body unchanged")

	text, code = runIn("deliveries")
	require.Equal(t, 0, code, text)
	rows := strings.Split(strings.TrimSpace(text), "\n")
	require.Len(t, rows, 2, text)
	assert.Contains(t, rows[1], "dlv1")
	assert.Contains(t, rows[1], "-> 200")

	text, code = runIn("resend", "9")
	assert.Equal(t, 1, code)
	assert.Contains(t, text, "resending delivery 9")
	text, code = runIn("resend", "x")
	assert.Equal(t, 2, code, text)
}

// The docs hold: sandbox --json, complete by client reference, both names of
// bank and debit, and no empty test number line.
func TestTheDocsOfTheLocalLoopHold(t *testing.T) {
	p := start(t, "sandbox", "--json", "-addr", "127.0.0.1:0", "-resolve-after", "0s")
	var banner struct {
		BaseURL  string `json:"baseUrl"`
		Instance string `json:"instance"`
		ClientID string `json:"clientId"`
	}
	require.NoError(t, json.Unmarshal([]byte(p.next(t)), &banner))
	require.True(t, strings.HasPrefix(banner.BaseURL, "http://127.0.0.1:"), banner.BaseURL)
	assert.NotEmpty(t, banner.Instance)
	base := banner.BaseURL

	stdout, stderr, code := billingOnce(t, "trigger", "checkout", "--pending", "--sandbox", base, "--reference", "doc1")
	require.Equal(t, 0, code, stderr)
	assert.NotContains(t, stdout, "test number:")
	stdout, stderr, code = billingOnce(t, "sandbox", "complete", "doc1", "--sandbox", base)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "checkout doc1 succeeded by CARD")

	for _, flow := range []string{"bank", "bank_transfer", "debit", "direct_debit"} {
		stdout, stderr, code := billingOnce(t, "trigger", flow, "--sandbox", base, "--json")
		require.Equal(t, 0, code, "%s: %s", flow, stderr)
		want := flow
		if canonical, ok := flowAliases[flow]; ok {
			want = canonical
		}
		assert.Contains(t, stdout, `"flow":"`+want+`"`)
	}
	for alias, kind := range kindAliases {
		assert.Contains(t, kindNames(), kind, "--kind %s names a kind", alias)
	}
	stdout, _, code = billingOnce(t, "movements", "-h")
	assert.Equal(t, 0, code)
	assert.Contains(t, stdout, "CHECKS counts")
	assert.Contains(t, stdout, "AMOUNT is")
	assert.Equal(t, "GHS 150.00", money(15000, ""), "a currency on every amount")
	p.interrupt(t)
}

// URL flags are quoted redacted, and nothing the command writes holds a
// password or a query secret, whatever the scheme and whichever flag or
// variable carried it.
func TestURLPasswordsNeverPrinted(t *testing.T) {
	const password, query = "Pw0rdXyz", "tok3nS3cretValue"
	urls := []string{
		"ftp://cid:" + password + "@127.0.0.1:1/",
		"https://cid:Pa/" + password + "@127.0.0.1:1/",
		"gopher://cid:" + password + "@127.0.0.1:1/",
		"http://cid:" + password + "@127.0.0.1:1/",
		"http://127.0.0.1:1/?token=" + query,
		"postgres://app:" + password + "@127.0.0.1:1/shop?sslmode=disable",
	}
	commands := []func(u string) ([]string, []string){
		func(u string) ([]string, []string) { return []string{"sandbox", "now", "--sandbox", u}, nil },
		func(u string) ([]string, []string) { return []string{"trigger", "receive", "--sandbox", u}, nil },
		func(u string) ([]string, []string) {
			return []string{"listen", "--forward-to", u, "--sandbox", "http://127.0.0.1:1"}, nil
		},
		func(u string) ([]string, []string) {
			return []string{"listen", "--forward-to", "http://127.0.0.1:1/", "--sandbox", u}, nil
		},
		func(u string) ([]string, []string) { return []string{"deliveries", "--sandbox", u}, nil },
		func(u string) ([]string, []string) { return []string{"movements", "--database-url", u}, nil },
		func(u string) ([]string, []string) { return []string{"reconcile", "--database-url", u}, nil },
		func(u string) ([]string, []string) {
			return []string{"trigger", "send"}, []string{"BILLING_BASE_URL=" + u}
		},
		func(u string) ([]string, []string) { return []string{"movements"}, []string{"DATABASE_URL=" + u} },
		func(u string) ([]string, []string) { return []string{"trigger", "nosuchflow", u}, nil },
	}
	for _, u := range urls {
		for _, command := range commands {
			args, env := command(u)
			ctx, cancel := context.WithTimeout(context.Background(), 2*eventually)
			cmd := execBilling(ctx, args, env)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Run()
			cancel()
			require.Error(t, err, "%v %v: %s", args, env, out.String())
			assert.NotContains(t, out.String(), password, "%v %v", args, env)
			assert.NotContains(t, out.String(), query, "%v %v", args, env)
		}
	}
}

// The loop runs while another process holds the sandbox's default address:
// with BILLING_BASE_URL naming a free port, billing sandbox serves there and
// every other command finds it.
func TestTheLoopRunsWhileTheDefaultAddressIsTaken(t *testing.T) {
	if held, err := net.Listen("tcp", "127.0.0.1:4010"); err == nil { // else another process holds it already
		defer held.Close()
	}
	free, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	base := "http://" + free.Addr().String()
	require.NoError(t, free.Close())
	env := []string{"BILLING_BASE_URL=" + base}
	sandboxProc := startEnv(t, env, "sandbox")
	assert.Contains(t, sandboxProc.next(t), "listening")
	assert.Contains(t, sandboxProc.next(t), base)
	ctx, cancel := context.WithTimeout(context.Background(), 2*eventually)
	defer cancel()
	out, err := execBilling(ctx, []string{"trigger", "receive", "--wait"}, env).CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "final:       succeeded (0000)")
	sandboxProc.interrupt(t)
}

// execBilling returns the command with args and env added to a clean environment.
func execBilling(ctx context.Context, args, env []string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, billingBinary, args...)
	cmd.Env = append(cleanEnv(), env...)
	return cmd
}

// Every command takes --json and -h, as the README says: each command of the
// table and each control of billing sandbox lists --json in its help.
func TestEveryCommandTakesJSONAndHelp(t *testing.T) {
	var names [][]string
	for _, c := range commands {
		names = append(names, []string{c.name})
	}
	for control := range sandboxControls {
		names = append(names, []string{"sandbox", control})
	}
	for _, name := range names {
		out := &lockedWriter{w: &bytes.Buffer{}}
		code := run(context.Background(), append(name, "-h"), &env{stdout: out, stderr: out, getenv: func(string) string { return "" }})
		assert.Equal(t, 0, code, "%v -h: %s", name, out)
		assert.Contains(t, out.String(), "-json", "%v -h lists --json", name)
	}
}

// TestSandboxStateSurvivesSIGKILLAndSIGTERM restarts billing sandbox -state
// after a kill that gives it no chance to save and after a clean stop: each
// time the movements it had answered are there, still pending, and listen
// says the state was kept rather than naming them forgotten.
func TestSandboxStateSurvivesSIGKILLAndSIGTERM(t *testing.T) {
	state := filepath.Join(t.TempDir(), "sandbox-state.json")
	first, base := startSandbox(t, "-state", state)
	addr := strings.TrimPrefix(base, "http://")
	_, stderr, code := billingOnce(t, "trigger", "receive", "--pending", "--sandbox", base, "--reference", "killed1")
	require.Equal(t, 0, code, stderr)
	listener := start(t, "listen", "--sandbox", base, "--forward-to", "http://127.0.0.1:1/app", "--check-every", "20ms")
	listener.next(t) // the banner
	ctl := sandboxctl.New(base, sandboxctl.DefaultClientID, sandboxctl.DefaultClientSecret)
	require.True(t, pendingSeen(t, ctl, "killed1"))
	before, err := ctl.Identity(context.Background())
	require.NoError(t, err)
	require.NotNil(t, before.State)
	assert.Equal(t, sandboxctl.StateFile{File: state}, *before.State)
	info, err := os.Stat(state)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())

	require.NoError(t, first.cmd.Process.Kill()) // SIGKILL: no shutdown, no last save
	<-first.done
	second, _ := startSandbox(t, "-state", state, "-addr", addr)
	assert.True(t, pendingSeen(t, ctl, "killed1"), "an answered movement survives SIGKILL")
	after, err := ctl.Identity(context.Background())
	require.NoError(t, err)
	require.NotNil(t, after.State)
	assert.True(t, after.State.Restored)
	deadline := time.Now().Add(eventually)
	for !strings.Contains(listener.stderrNow(), "with the state kept in "+state) {
		require.True(t, time.Now().Before(deadline), "listen did not see the restart: %s", listener.stderrNow())
		time.Sleep(10 * time.Millisecond) // a poll of two other processes, bounded by the deadline
	}

	_, stderr, code = billingOnce(t, "trigger", "receive", "--pending", "--sandbox", base, "--reference", "stopped1")
	require.Equal(t, 0, code, stderr)
	require.NoError(t, second.cmd.Process.Signal(syscall.SIGTERM))
	go func() {
		for range second.lines {
		}
	}()
	require.NoError(t, <-second.done)
	third, _ := startSandbox(t, "-state", state, "-addr", addr)
	assert.True(t, pendingSeen(t, ctl, "killed1"))
	assert.True(t, pendingSeen(t, ctl, "stopped1"), "and across a clean stop")
	third.interrupt(t)
	listener.interrupt(t)
	assert.NotContains(t, listener.stderr.String(), "movement(s) pending", "no movement is named forgotten")

	require.NoError(t, os.WriteFile(state, []byte("{not a state"), 0o600))
	out, errOut, code := billingOnce(t, "sandbox", "-addr", "127.0.0.1:0", "-state", state)
	assert.NotEqual(t, 0, code, out)
	assert.Contains(t, errOut+out, "move the file away to start empty")
	kept, _ := os.ReadFile(state)
	assert.Equal(t, "{not a state", string(kept), "a refused state file is left as it was")
}
