package pgstore_test

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
	"github.com/billingsdk/billing-go/pgstore"
	"github.com/billingsdk/billing-go/storekit"
	"github.com/billingsdk/billing-go/storetest"
)

func TestTrackerInstances(t *testing.T) {
	databaseURL(t)
	storetest.RunTracker(t, func(t *testing.T) storekit.Store { return newStore(t) })
}

// TestSoak runs three instances over a thousand movements on PostgreSQL: every outcome
// reported once, no movement made twice, none left pending.
func TestSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("the soak is long")
	}
	storetest.ManyInstances(t, newStore(t), 3, 1000)
}

// The child process of TestKilledInstanceIsResumed: an instance that tracks (and, for
// "sent", sends) a payout, says so on stdout, and waits to be killed.
const (
	childEnv       = "PGSTORE_TEST_CHILD"        // "tracked" or "sent"
	childSchemaEnv = "PGSTORE_TEST_CHILD_SCHEMA" // the schema of the parent's store
	childURLEnv    = "PGSTORE_TEST_SANDBOX_URL"
	childTimeEnv   = "PGSTORE_TEST_SANDBOX_TIME"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		if err := runChild(mode); err != nil {
			fmt.Println("child failed:", err)
			os.Exit(2)
		}
		select {} // until killed
	}
	os.Exit(m.Run())
}

// frozenClock is the child's clock: the sandbox's time when the parent started it.
type frozenClock struct{ now time.Time }

func (c frozenClock) Now() time.Time                     { return c.now }
func (frozenClock) After(time.Duration) <-chan time.Time { return make(chan time.Time) }

func runChild(mode string) error {
	ctx := context.Background()
	cfg, err := pgx.ParseConfig(os.Getenv("BILLING_TEST_DATABASE_URL"))
	if err != nil {
		return err
	}
	cfg.RuntimeParams["search_path"] = os.Getenv(childSchemaEnv)
	store, err := pgstore.NewWithOptions(ctx, stdlib.OpenDB(*cfg), pgstore.Options{CallerClock: true})
	if err != nil {
		return err
	}
	now, err := time.Parse(time.RFC3339Nano, os.Getenv(childTimeEnv))
	if err != nil {
		return err
	}
	c, err := billing.NewClient(billing.WithBaseURL(os.Getenv(childURLEnv)),
		billing.WithClientCredentials("sandbox-client", "sandbox-secret"))
	if err != nil {
		return err
	}
	tr := billing.NewTracker(c, billing.TrackerOptions{Store: store, Clock: frozenClock{now}, Owner: "child"})
	ref := "killed" + mode
	if mode == "tracked" {
		err = tr.Track(ctx, billing.KindSend, ref)
	} else {
		_, err = tr.Send(ctx, &billing.SendParams{Amount: 2000, Phone: "233201234567", Provider: billing.ProviderTelecel,
			Description: "Refund", ClientReference: ref, CallbackURL: "http://127.0.0.1:1/gone"})
	}
	if err != nil {
		return err
	}
	fmt.Println(mode)
	return nil
}

// An instance killed with SIGKILL after tracking a payout, and another after sending
// one, are resumed by another instance's Run, which reports what the sandbox did: the
// sent one succeeded, once; the one never sent is never reported and stays overdue.
func TestKilledInstanceIsResumed(t *testing.T) {
	db, schema := freshSchemaNamed(t)
	store := newTestStore(t, db)
	srv := billingtest.NewServer(t, billingtest.WithManualClock())
	from := srv.Now()
	for _, mode := range []string{"tracked", "sent"} {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"="+mode, childSchemaEnv+"="+schema,
			childURLEnv+"="+srv.URL, childTimeEnv+"="+srv.Now().Format(time.RFC3339Nano),
			"BILLING_TEST_DATABASE_URL="+databaseURL(t))
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		line, _ := bufio.NewReader(out).ReadString('\n')
		if strings.TrimSpace(line) != mode {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatalf("child %s said %q", mode, line)
		}
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
	}

	reported := make(chan *billing.Outcome, 10)
	tr := billing.NewTracker(srv.Client(), billing.TrackerOptions{Store: store, Clock: srv.Clock(), Owner: "survivor",
		OnOutcome: func(_ context.Context, o *billing.Outcome) error { reported <- o; return nil }})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- tr.Run(ctx) }()
	var got []*billing.Outcome
	for i := 0; i < 40 && len(got) == 0; i++ {
		srv.Advance(30 * time.Second)
		select {
		case o := <-reported:
			got = append(got, o)
		case <-time.After(100 * time.Millisecond): // Run acts on its own goroutine
		}
	}
	srv.Advance(time.Minute)
	select {
	case o := <-reported:
		got = append(got, o)
	case <-time.After(200 * time.Millisecond):
	}
	cancel()
	if err := <-done; err != context.Canceled {
		t.Errorf("Run ended with %v", err)
	}
	if len(got) != 1 || got[0].ClientReference != "killedsent" || !got[0].Succeeded() || got[0].Source != billing.SourceStatusCheck {
		t.Fatalf("reported %+v; want killedsent alone, succeeded by status check", got)
	}
	if n := srv.Movements("killedsent"); n != 1 {
		t.Fatalf("the sandbox made %d payouts of killedsent", n)
	}
	if n := srv.Movements("killedtracked"); n != 0 {
		t.Fatalf("the sandbox made %d payouts of killedtracked, never sent", n)
	}
	r, err := tr.Reconcile(context.Background(), from.Add(-time.Hour), srv.Now().Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Overdue) != 1 || r.Overdue[0].ClientReference != "killedtracked" {
		t.Fatalf("overdue %+v; want killedtracked", r.Overdue)
	}
}

// freshSchemaNamed is freshSchema, also returning the schema's name for a child process.
func freshSchemaNamed(t testing.TB) (*sql.DB, string) {
	db := freshSchema(t)
	var schema string
	if err := db.QueryRow(`SELECT current_schema()`).Scan(&schema); err != nil {
		t.Fatal(err)
	}
	return db, schema
}
