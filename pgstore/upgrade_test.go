package pgstore_test

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
	"github.com/billingsdk/billing-go/pgstore"
)

// lastRelease reads the last release .ci/releases names: its version and commit.
func lastRelease(t *testing.T) (version, commit string) {
	t.Helper()
	b, err := os.ReadFile("../.ci/releases")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 2 && !strings.HasPrefix(line, "#") {
			version, commit = f[0], f[1]
		}
	}
	if commit == "" {
		t.Fatal(".ci/releases names no release")
	}
	return version, commit
}

// buildRelease builds testdata/upgrade/instance.go in the tree of the last release,
// taken from the repository's history (git archive of its commit, or of its tag where the
// clone lacks the commit), and returns the program's path. Without git or the release,
// the test skips, except under CI=true.
func buildRelease(t *testing.T) (version, program string) {
	t.Helper()
	version, commit := lastRelease(t)
	if _, err := exec.LookPath("git"); err != nil {
		missing(t, fmt.Sprintf("building release %s needs git: %v", version, err))
	}
	rev := commit
	if exec.Command("git", "-C", "..", "cat-file", "-e", commit+"^{commit}").Run() != nil {
		rev = "pgstore/" + version
		if exec.Command("git", "-C", "..", "cat-file", "-e", rev+"^{commit}").Run() != nil {
			missing(t, fmt.Sprintf("release %s: neither its commit %s nor its tag %s is in this clone (fetch its history: git fetch --unshallow --tags)", version, commit, rev))
		}
	}
	dir := t.TempDir()
	archive := exec.Command("sh", "-c", `git -C .. archive --format=tar "$1" | tar -x -C "$2"`, "sh", rev, dir)
	if out, err := archive.CombinedOutput(); err != nil {
		t.Fatalf("git archive %s: %v\n%s", rev, err, out)
	}
	src, err := os.ReadFile("testdata/upgrade/instance.go")
	if err != nil {
		t.Fatal(err)
	}
	main := filepath.Join(dir, "pgstore", "cmd", "upgradeinstance")
	if err := os.MkdirAll(main, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(main, "main.go"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	program = filepath.Join(dir, "instance")
	build := exec.Command("go", "build", "-o", program, "./cmd/upgradeinstance")
	build.Dir = filepath.Join(dir, "pgstore")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building release %s's instance: %v\n%s", version, err, out)
	}
	return version, program
}

// oldInstance is a process of the last release's instance program.
type oldInstance struct {
	name, callbackURL string
	cmd               *exec.Cmd
	in                io.WriteCloser
	mu                sync.Mutex
	answers           chan string
}

func startOld(t *testing.T, program, name, databaseURL string, srv *billingtest.Server) *oldInstance {
	t.Helper()
	cmd := exec.Command(program)
	cmd.Env = append(os.Environ(),
		"DATABASE_URL="+databaseURL, "INSTANCE="+name,
		"BILLING_BASE_URL="+srv.URL, "BILLING_CLIENT_ID="+srv.ClientID, "BILLING_CLIENT_SECRET="+srv.ClientSecret,
		"BILLING_DISBURSEMENT_ACCOUNT="+srv.DisbursementAccount)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	o := &oldInstance{name: name, cmd: cmd, in: in, answers: make(chan string, 100)}
	t.Cleanup(func() { o.stop(t) })
	lines := bufio.NewScanner(out)
	if !lines.Scan() || !strings.HasPrefix(lines.Text(), "callback ") {
		_ = cmd.Wait()
		o.in = nil
		t.Fatalf("%s did not start: %q\n%s", name, lines.Text(), stderr.String())
	}
	o.callbackURL = strings.TrimPrefix(lines.Text(), "callback ")
	go func() {
		for lines.Scan() {
			o.answers <- lines.Text()
		}
		close(o.answers)
	}()
	return o
}

// send sends a payout through the old instance and waits for its answer.
func (o *oldInstance) send(t *testing.T, ref, phone, callbackURL string) {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, err := fmt.Fprintf(o.in, "send %s %s %s\n", ref, phone, callbackURL); err != nil {
		t.Fatalf("%s: %v", o.name, err)
	}
	if answer := <-o.answers; answer != "sent "+ref {
		t.Fatalf("%s sending %s: %s", o.name, ref, answer)
	}
}

func (o *oldInstance) stop(t *testing.T) {
	if o.in == nil {
		return
	}
	_ = o.in.Close()
	o.in = nil
	if err := o.cmd.Wait(); err != nil {
		t.Errorf("%s: %v", o.name, err)
	}
}

// newInstance is an instance of this tree: a Tracker on this release's pgstore.
type newInstance struct {
	tracker     *billing.Tracker
	callbackURL string
}

// TestRollingUpgrade runs the last release's instances (built from its commit) and this
// tree's on one database, across this tree's Migrate, with an expanding version appended
// to this tree's migrations as the next schema change would be: the release's instances
// keep sending and reporting, one of them starts again after the Migrate, callbacks cross
// between releases, then the release's instances stop and this tree's go on; every
// movement is reported exactly once.
func TestRollingUpgrade(t *testing.T) {
	version, program := buildRelease(t)
	ctx := context.Background()
	db := freshSchema(t)
	var schema string
	if err := db.QueryRow(`SELECT current_schema()`).Scan(&schema); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE upgrade_reports (ref text NOT NULL, outcome_id text NOT NULL, state text NOT NULL, instance text NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	oldURL := databaseURL(t)
	if strings.Contains(oldURL, "?") {
		oldURL += "&search_path=" + schema
	} else {
		oldURL += "?search_path=" + schema
	}
	srv := billingtest.NewServer(t)

	// The release's instances migrate the empty schema to its version, and send.
	a := startOld(t, program, "old-a", oldURL, srv)
	b := startOld(t, program, "old-b", oldURL, srv)
	var refs []string
	n := 0
	next := func() string {
		n++
		ref := fmt.Sprintf("upgrade%04d", n)
		refs = append(refs, ref)
		return ref
	}
	for range 10 {
		a.send(t, next(), "233201234567", b.callbackURL)
		b.send(t, next(), "233201234567", a.callbackURL)
	}

	// This tree's Migrate, while they run, with the next version: an expansion.
	restore := pgstore.AppendVersion([]string{
		`CREATE TABLE billing_upgrade_probe (id text PRIMARY KEY, at timestamptz NOT NULL DEFAULT now())`,
		`ALTER TABLE billing_movements ADD COLUMN upgrade_probe text NOT NULL DEFAULT ''`,
		`CREATE INDEX billing_movements_upgrade_probe ON billing_movements (upgrade_probe)`,
	}, 0)
	defer restore()
	if err := pgstore.Migrate(ctx, db); err != nil {
		t.Fatalf("Migrate beside release %s's instances: %v", version, err)
	}

	// An instance of the release starts again after it; this tree's instances start.
	c := startOld(t, program, "old-c", oldURL, srv)
	var news []*newInstance
	for i := range 2 {
		store, err := pgstore.New(ctx, db)
		if err != nil {
			t.Fatalf("New after Migrate: %v", err)
		}
		name := fmt.Sprintf("new-%d", i)
		tr := billing.NewTracker(srv.Client(), billing.TrackerOptions{Store: store, Owner: name,
			OnOutcome: store.OnOutcomeTx(func(ctx context.Context, tx *sql.Tx, o *billing.Outcome) error {
				_, err := tx.ExecContext(ctx, `INSERT INTO upgrade_reports (ref, outcome_id, state, instance) VALUES ($1, $2, $3, $4)`,
					o.ClientReference, o.ID, string(o.State), name)
				return err
			})})
		endpoint := httptest.NewServer(tr.Handler(billing.WithStatusCheckConfirmation(srv.Client())))
		t.Cleanup(endpoint.Close)
		runCtx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- tr.Run(runCtx) }()
		t.Cleanup(func() {
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Errorf("%s: Run ended with %v, want context.Canceled", name, err)
			}
		})
		news = append(news, &newInstance{tracker: tr, callbackURL: endpoint.URL + "/callbacks/" + name})
	}
	olds := []*oldInstance{a, b, c}
	afterMigrate := len(refs)
	sendNew := func(i int, callbackURL string) {
		ref := next()
		if _, err := news[i%2].tracker.Send(ctx, &billing.SendParams{Amount: 2000, Phone: "233201234567", Provider: billing.ProviderTelecel,
			Name: "Kofi", Description: "Refund " + ref, ClientReference: ref, CallbackURL: callbackURL}); err != nil {
			t.Fatalf("new-%d sending %s: %v", i%2, ref, err)
		}
	}
	for i := range 10 {
		// Each release's sends call back to the other's instances.
		olds[i%3].send(t, next(), "233201234567", news[i%2].callbackURL)
		sendNew(i, olds[i%3].callbackURL)
	}
	// Every movement reported, by the instances of both releases.
	waitReported := func() {
		deadline := time.Now().Add(time.Minute)
		for {
			var reported int
			if err := db.QueryRow(`SELECT count(DISTINCT ref) FROM upgrade_reports`).Scan(&reported); err != nil {
				t.Fatal(err)
			}
			if reported == len(refs) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d of %d movements reported within a minute", reported, len(refs))
			}
			time.Sleep(50 * time.Millisecond) // other processes on the wall clock: nothing to inject
		}
	}
	waitReported()

	// The roll ends: the release's instances stop, this tree's go on alone.
	for _, o := range olds {
		o.stop(t)
	}
	for i := range 6 {
		sendNew(i, news[(i+1)%2].callbackURL)
	}
	waitReported()
	rows, err := db.Query(`SELECT ref, count(*), min(state), count(DISTINCT outcome_id), string_agg(instance, ',') FROM upgrade_reports GROUP BY ref ORDER BY ref`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	byRelease := map[string]int{} // reports of the movements sent after Migrate, by release
	for rows.Next() {
		var ref, state, instances string
		var count, ids int
		if err := rows.Scan(&ref, &count, &state, &ids, &instances); err != nil {
			t.Fatal(err)
		}
		if count != 1 || state != string(billing.EventSucceeded) {
			t.Errorf("%s reported %d times (%s), state %s; want once, succeeded", ref, count, instances, state)
		}
		if m := srv.Movements(ref); m != 1 {
			t.Errorf("the sandbox holds %d movements of %s, want 1", m, ref)
		}
		if slices.Index(refs, ref) >= afterMigrate {
			byRelease[strings.SplitN(instances, "-", 2)[0]]++
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if byRelease["old"] == 0 || byRelease["new"] == 0 {
		t.Errorf("reports after Migrate by release: %v; want release %s's instances and this tree's reporting", byRelease, version)
	}
	t.Logf("release %s and this tree across Migrate: %d movements, each reported once; after Migrate, reports by release %v", version, len(refs), byRelease)
}
