//go:build linux

package billing_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The README's commands are what a new user runs first, so each of them runs here, from
// the repository's root as the README writes them. The README's rules for them:
//   - every `go run` line of a fenced sh block runs, and must exit 0;
//   - a line whose comment says "Ctrl+C stops" is a server: it must print its address
//     and "Ctrl+C", then stop cleanly on an interrupt;
//   - a line that sets BILLING_* or DATABASE_URL needs the reader's own service or
//     database and is not run; the line beside it that starts scripts/pgtest.sh is
//     (outside CI, only where PostgreSQL is installed: the script would install it);
//   - every `go run` the prose names is one of the block lines, so none goes untested;
//   - the `billing` lines of the sh blocks (the command of cmd/billing, built here) run in
//     order as one session: a server line first, the others while it serves. A line
//     whose comment says "refused" must exit 1 and say why; a server line whose comment
//     says "restarts the sandbox" first stops the sandbox serving (Ctrl+C), and the
//     session goes on once every running listen registered with the new one. The app
//     at http://localhost:8080 is served by the test and answers every delivery with a
//     redirect: the session shows that the sandbox hears the app's own status;
//   - every sandbox runs at a free port, which BILLING_BASE_URL names, so the README's
//     commands run while another process holds the sandbox's default address.

// readmeCommandTimeout bounds one command, its compilation included.
const readmeCommandTimeout = 5 * time.Minute

// readmeCommand is one line of a fenced sh block that runs a program.
type readmeCommand struct {
	line    string // as written, its comment included
	command string // the line without its comment
	comment string
}

var (
	needsCredentials = regexp.MustCompile(`\b(BILLING_[A-Z_]+|DATABASE_URL)=`)
	inlineCode       = regexp.MustCompile("`([^`]+)`")
)

// readmeCommands reads the `go run` lines of the README's fenced sh blocks, and the
// inline code spans of its prose that run a program.
func readmeCommands(t *testing.T) (block []readmeCommand, prose []string) {
	t.Helper()
	shLines, text := scanReadme(t)
	for _, line := range shLines {
		if strings.Contains(line, "go run") {
			block = append(block, commandOf(line))
		}
	}
	for _, m := range inlineCode.FindAllStringSubmatch(text, -1) {
		if span := strings.Join(strings.Fields(m[1]), " "); strings.Contains(span, "go run") {
			prose = append(prose, span)
		}
	}
	return block, prose
}

// readmeBillingSession reads the lines of the README's sh blocks that run the billing
// command, in order.
func readmeBillingSession(t *testing.T) []readmeCommand {
	t.Helper()
	shLines, _ := scanReadme(t)
	var session []readmeCommand
	for _, line := range shLines {
		if strings.HasPrefix(strings.TrimSpace(line), "billing ") {
			session = append(session, commandOf(line))
		}
	}
	return session
}

// scanReadme returns the lines of the README's sh blocks, in order, and its prose: the
// text outside every fenced block.
func scanReadme(t *testing.T) (shLines []string, prose string) {
	t.Helper()
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	fence := ""
	for sc := bufio.NewScanner(bytes.NewReader(readme)); sc.Scan(); {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		switch {
		case fence == "" && strings.HasPrefix(trimmed, "```"):
			fence = strings.TrimPrefix(trimmed, "```")
			if fence == "" {
				fence = "text"
			}
		case fence != "" && trimmed == "```":
			fence = ""
		case fence == "sh":
			shLines = append(shLines, line)
		case fence == "":
			text.WriteString(line + "\n")
		}
	}
	return shLines, text.String()
}

// commandOf splits an sh line into its command and its comment.
func commandOf(line string) readmeCommand {
	command, comment, _ := strings.Cut(line, " # ")
	return readmeCommand{line: line, command: strings.TrimSpace(command), comment: strings.TrimSpace(comment)}
}

func TestReadmeNamesOnlyCommandsItsBlocksHold(t *testing.T) {
	block, prose := readmeCommands(t)
	if len(block) == 0 {
		t.Fatal("README.md has no go run line in a fenced sh block")
	}
	written := map[string]bool{}
	for _, c := range block {
		written[c.command] = true
	}
	for _, span := range prose {
		if !written[span] {
			t.Errorf("the README's prose names %q, which no fenced sh block holds: the README test runs only those", span)
		}
	}
}

func TestReadmeCommandsRun(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles and runs every program the README names")
	}
	block, _ := readmeCommands(t)
	root, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	t.Run("billing session", func(t *testing.T) { runBillingSession(t, root, readmeBillingSession(t)) })
	for _, c := range block {
		t.Run(c.command, func(t *testing.T) {
			t.Parallel()
			switch {
			case needsCredentials.MatchString(c.command):
				t.Logf("not run: it needs the reader's own service or database: %s", c.line)
				return
			case strings.HasPrefix(c.command, "scripts/pgtest.sh") && !postgresAvailable() && os.Getenv("CI") != "true":
				// Under CI=true the line runs all the same: scripts/pgtest.sh installs
				// PostgreSQL, as the README says, or fails the test.
				t.Skip("no PostgreSQL installed: scripts/pgtest.sh would install it from the distribution's packages; CI=true runs it")
			}
			runReadmeCommand(t, root, c)
		})
	}
}

// readmeApp is the application the README's session forwards to, at
// http://localhost:8080 in the README: it answers every post with a redirect,
// and records every request.
type readmeApp struct {
	mu       sync.Mutex
	requests []string
	bodies   []string
}

func (a *readmeApp) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	a.mu.Lock()
	a.requests = append(a.requests, r.Method+" "+r.URL.Path)
	a.bodies = append(a.bodies, string(b))
	a.mu.Unlock()
	http.Redirect(w, r, "/login", http.StatusFound)
}

func (a *readmeApp) seen() ([]string, []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.requests), slices.Clone(a.bodies)
}

// freeLoopbackURL returns http://127.0.0.1:PORT for a port free when asked.
func freeLoopbackURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return "http://" + l.Addr().String()
}

// runBillingSession builds the billing command (cmd/billing, a module of its own), puts
// it first on PATH and runs the session's lines in order from a directory of their own, as the rules at the
// top of this file say. The servers are then interrupted, the last started first, and
// must stop cleanly; the app must have seen only the posts (no redirect followed), and
// the checkout webhook after the restart.
func runBillingSession(t *testing.T, dir string, session []readmeCommand) {
	if len(session) == 0 {
		t.Fatal("README.md has no billing line in a fenced sh block: its Local development section shows the command")
	}
	bin, work := t.TempDir(), t.TempDir() // the session's files (the state file) stay out of the checkout
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "billing"), ".")
	build.Dir = filepath.Join(dir, "cmd", "billing")
	build.Env = append(os.Environ(), "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building cmd/billing: %v\n%s", err, out)
	}
	// The sandbox's default address held, as by another sandbox the reader left running.
	if held, err := net.Listen("tcp", "127.0.0.1:4010"); err == nil {
		defer held.Close()
	}
	app := &readmeApp{}
	appServer := httptest.NewServer(app)
	defer appServer.Close()
	type server struct {
		c    readmeCommand
		cmd  *exec.Cmd
		out  *syncBuffer
		done chan error
	}
	var servers []*server
	defer func() {
		for _, s := range servers { // after a failure: nothing keeps serving
			_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		}
	}()
	env := []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"), "BILLING_BASE_URL=" + freeLoopbackURL(t)}
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); !strings.HasPrefix(name, "BILLING_") && name != "PATH" && name != "DATABASE_URL" {
			env = append(env, kv)
		}
	}
	stop := func(s *server) {
		t.Helper()
		if err := syscall.Kill(s.cmd.Process.Pid, syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		if err := <-s.done; err != nil {
			t.Fatalf("%s did not stop cleanly on Ctrl+C: %v\n%s", s.c.command, err, s.out.String())
		}
		t.Logf("%s: stopped cleanly\n%s", s.c.command, s.out.String())
	}
	var deliveries string
	for _, c := range session {
		ctx, cancel := context.WithTimeout(context.Background(), readmeCommandTimeout)
		defer cancel()
		command := strings.ReplaceAll(c.command, "http://localhost:8080", appServer.URL)
		cmd := exec.CommandContext(ctx, "bash", "-c", "exec "+command)
		cmd.Dir, cmd.Env = work, env
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
		cmd.WaitDelay = 10 * time.Second
		out := &syncBuffer{ready: make(chan struct{})}
		cmd.Stdout, cmd.Stderr = out, out
		if !strings.Contains(c.comment, "Ctrl+C stops") {
			err := cmd.Run()
			var exit *exec.ExitError
			switch {
			case strings.Contains(c.comment, "refused"):
				if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(out.String(), "billing") {
					t.Fatalf("%s: want a refusal (exit 1 and why), got %v\n%s", c.command, err, out.String())
				}
				t.Logf("%s: refused\n%s", c.command, out.String())
				continue
			case err != nil:
				t.Fatalf("%s: %v\n%s", c.command, err, out.String())
			}
			if strings.HasPrefix(c.command, "billing deliveries") {
				deliveries = out.String()
			}
			t.Logf("%s: exit 0\n%s", c.command, out.String())
			continue
		}
		var listeners []*server
		if strings.Contains(c.comment, "restarts the sandbox") {
			kept := servers[:0]
			for _, s := range servers {
				switch {
				case strings.HasPrefix(s.c.command, "billing sandbox"):
					stop(s)
					continue
				case strings.HasPrefix(s.c.command, "billing listen"):
					listeners = append(listeners, s)
				}
				kept = append(kept, s)
			}
			servers = kept
		}
		out.readyWhen = func(s string) bool { return strings.Contains(s, "http://") && strings.Contains(s, "Ctrl+C") }
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		s := &server{c: c, cmd: cmd, out: out, done: make(chan error, 1)}
		go func() { s.done <- cmd.Wait() }()
		select {
		case <-out.ready:
		case err := <-s.done:
			t.Fatalf("%s stopped before serving (%v):\n%s", c.command, err, out.String())
		case <-ctx.Done():
			t.Fatalf("%s did not serve within %s:\n%s", c.command, readmeCommandTimeout, out.String())
		}
		servers = append(servers, s)
		for _, l := range listeners {
			if !l.out.waitFor(ctx, "registered again") {
				t.Fatalf("%s did not register with the restarted sandbox:\n%s", l.c.command, l.out.String())
			}
			if strings.Contains(c.command, "--state") && !strings.Contains(l.out.String(), "with the state kept in") {
				t.Fatalf("%s did not say the restarted sandbox kept its state:\n%s", l.c.command, l.out.String())
			}
		}
	}
	// Every delivery reached the app, which redirected it: the sandbox heard the 302,
	// and the redirect's target was never fetched. The last billing deliveries ran after
	// the restart: the state file kept them.
	if !strings.Contains(deliveries, "-> 302") {
		t.Errorf("billing deliveries shows no 302 the app answered:\n%s", deliveries)
	}
	deadline := time.Now().Add(readmeCommandTimeout)
	for {
		requests, bodies := app.seen()
		for _, r := range requests {
			if r != "POST /webhooks" {
				t.Fatalf("the app got %q: a redirect was followed (%v)", r, requests)
			}
		}
		if slices.ContainsFunc(bodies, func(b string) bool { return strings.Contains(b, "payment.succeeded") }) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the checkout webhook never reached the app after the restart: %v", requests)
		}
		time.Sleep(20 * time.Millisecond) // a poll of other processes, bounded by the deadline
	}
	for len(servers) > 0 {
		s := servers[len(servers)-1]
		servers = servers[:len(servers)-1]
		stop(s)
	}
}

// postgresAvailable reports whether scripts/pgtest.sh finds PostgreSQL installed.
func postgresAvailable() bool {
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	return len(found) > 0
}

// runReadmeCommand runs c with bash from dir in a process group of its own, with no
// service credentials in its environment, so the examples use their embedded sandbox.
func runReadmeCommand(t *testing.T, dir string, c readmeCommand) {
	ctx, cancel := context.WithTimeout(context.Background(), readmeCommandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", c.command)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); !strings.HasPrefix(name, "BILLING_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	out := &syncBuffer{ready: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = out, out
	server := strings.Contains(c.comment, "Ctrl+C stops")
	if server && strings.Contains(c.command, "examples/sandbox") {
		// The sandbox serves at BILLING_BASE_URL's address, a free port, never at the
		// default address another process may hold.
		cmd.Env = append(cmd.Env, "BILLING_BASE_URL="+freeLoopbackURL(t))
	}
	if server {
		out.readyWhen = func(s string) bool { return strings.Contains(s, "http://") && strings.Contains(s, "Ctrl+C") }
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	if server {
		select {
		case <-out.ready:
			// An interrupt, as Ctrl+C sends it, to the program itself: go run, seeing one,
			// exits 1 whatever the program does, so only the program is asked to stop,
			// and go run passes on how it stopped.
			for _, pid := range groupLeaves(cmd.Process.Pid) {
				if err := syscall.Kill(pid, syscall.SIGINT); err != nil {
					t.Fatal(err)
				}
			}
		case err := <-done:
			t.Fatalf("%s stopped before serving (%v):\n%s", c.command, err, out.String())
		case <-ctx.Done():
		}
	}
	err := <-done
	if ctx.Err() != nil {
		t.Fatalf("%s did not finish within %s:\n%s", c.command, readmeCommandTimeout, out.String())
	}
	if err != nil {
		t.Fatalf("%s: %v\n%s", c.command, err, out.String())
	}
	t.Logf("%s: exit 0 in %s", c.command, time.Since(start).Round(time.Millisecond))
}

// groupLeaves returns the processes of process group pgid that have no child in it:
// the program at the end of bash and go run.
func groupLeaves(pgid int) []int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	parent := map[int]int{}
	for _, name := range stats {
		b, err := os.ReadFile(name)
		if err != nil {
			continue // the process ended meanwhile
		}
		// pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses.
		pid, _ := strconv.Atoi(strings.Fields(string(b))[0])
		fields := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(fields) < 3 {
			continue
		}
		ppid, _ := strconv.Atoi(fields[1])
		if pgrp, _ := strconv.Atoi(fields[2]); pgrp == pgid {
			parent[pid] = ppid
		}
	}
	hasChild := map[int]bool{}
	for _, ppid := range parent {
		hasChild[ppid] = true
	}
	var leaves []int
	for pid := range parent {
		if !hasChild[pid] {
			leaves = append(leaves, pid)
		}
	}
	return leaves
}

// syncBuffer collects a command's output and says when it first holds what readyWhen
// looks for.
type syncBuffer struct {
	mu        sync.Mutex
	buf       bytes.Buffer
	readyWhen func(string) bool
	ready     chan struct{}
	readied   bool
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, err := b.buf.Write(p)
	if !b.readied && b.readyWhen != nil && b.readyWhen(b.buf.String()) {
		b.readied = true
		close(b.ready)
	}
	return n, err
}

// waitFor reports whether the output comes to hold text before ctx ends.
func (b *syncBuffer) waitFor(ctx context.Context, text string) bool {
	for !strings.Contains(b.String(), text) {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(20 * time.Millisecond): // a poll of another process, bounded by ctx
		}
	}
	return true
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
