//go:build linux

package billing_test

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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
//     order, alone, as one session: a server line first, the others while it serves.

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
	// Not parallel: it runs alone, before the parallel subtests below start, so its
	// sandbox has the default address to itself.
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

// runBillingSession builds the billing command (cmd/billing, a module of its own), puts
// it first on PATH and runs the session's lines from dir in order: a line whose comment
// says "Ctrl+C stops" is a server, started and left serving once it printed its address
// and "Ctrl+C"; every other line must exit 0. The servers are then interrupted, the last
// started first, and must stop cleanly.
func runBillingSession(t *testing.T, dir string, session []readmeCommand) {
	if len(session) == 0 {
		t.Fatal("README.md has no billing line in a fenced sh block: its Local development section shows the command")
	}
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "billing"), ".")
	build.Dir = filepath.Join(dir, "cmd", "billing")
	build.Env = append(os.Environ(), "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building cmd/billing: %v\n%s", err, out)
	}
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
	env := []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")}
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); !strings.HasPrefix(name, "BILLING_") && name != "PATH" && name != "DATABASE_URL" {
			env = append(env, kv)
		}
	}
	for _, c := range session {
		ctx, cancel := context.WithTimeout(context.Background(), readmeCommandTimeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, "bash", "-c", "exec "+c.command)
		cmd.Dir, cmd.Env = dir, env
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
		cmd.WaitDelay = 10 * time.Second
		out := &syncBuffer{ready: make(chan struct{})}
		cmd.Stdout, cmd.Stderr = out, out
		if !strings.Contains(c.comment, "Ctrl+C stops") {
			err := cmd.Run()
			if err != nil {
				t.Fatalf("%s: %v\n%s", c.command, err, out.String())
			}
			t.Logf("%s: exit 0\n%s", c.command, out.String())
			continue
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
	}
	for len(servers) > 0 {
		s := servers[len(servers)-1]
		servers = servers[:len(servers)-1]
		if err := syscall.Kill(s.cmd.Process.Pid, syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		if err := <-s.done; err != nil {
			t.Fatalf("%s did not stop cleanly on Ctrl+C: %v\n%s", s.c.command, err, s.out.String())
		}
		t.Logf("%s: stopped cleanly\n%s", s.c.command, s.out.String())
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

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
