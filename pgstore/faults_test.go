package pgstore_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
	"github.com/billingsdk/billing-go/pgstore"
)

// The bounds the fault scenarios give their Trackers: short, so that a freeze costs
// little real time.
const (
	faultStoreTimeout     = 500 * time.Millisecond
	faultOnOutcomeTimeout = 2 * time.Second
	// faultStopBound is how long Run may take to return once its context ended: its
	// StoreTimeout, the grace an OnOutcome call under way gets, and room for a loaded
	// machine.
	faultStopBound = faultStoreTimeout + 3*time.Second + 500*time.Millisecond
)

// openThrough opens a pool on the database through the proxy, in schema, with the
// settings that find a dead connection within seconds (see docs/durable.md): a bounded
// dial, TCP keepalives probing after 5 s of silence, idle connections dropped after 30 s
// (the store's deadlines bound every query, and database/sql drops a connection whose
// query failed). pgx's stdlib pings a connection idle for over a second before reusing
// it, under the same deadline.
func openThrough(t testing.TB, through *pgx.ConnConfig, schema string) *sql.DB {
	cfg := through.Copy()
	cfg.RuntimeParams["search_path"] = schema
	cfg.ConnectTimeout = 2 * time.Second
	dialer := &net.Dialer{Timeout: 2 * time.Second, KeepAliveConfig: net.KeepAliveConfig{Enable: true, Idle: 5 * time.Second, Interval: 5 * time.Second, Count: 3}}
	cfg.DialFunc = dialer.DialContext
	db := stdlib.OpenDB(*cfg)
	db.SetMaxOpenConns(8)
	db.SetMaxIdleConns(8)
	db.SetConnMaxIdleTime(30 * time.Second)
	db.SetConnMaxLifetime(5 * time.Minute)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// lockedBuffer collects the Trackers' logs.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// faultCluster is Tracker instances on the sandbox's manual clock, each with its own
// pool to the database through one proxy, its callback endpoint and its Run.
type faultCluster struct {
	t         *testing.T
	srv       *billingtest.Server
	proxy     *pgProxy
	logs      *lockedBuffer
	instances []*faultInstance
	refs      []string

	mu       sync.Mutex
	calls    map[string]int // OnOutcome calls by Outcome.ID
	byRef    map[string]int // OnOutcome calls by client reference
	progress chan struct{}
}

type faultInstance struct {
	name    string
	tr      *billing.Tracker
	url     string
	stopped bool
	cancel  context.CancelFunc
	done    chan error
}

func newFaultCluster(t *testing.T, instances int) *faultCluster {
	db, schema := freshSchemaNamed(t)
	if _, err := pgstore.New(context.Background(), db); err != nil { // the schema, before any fault
		t.Fatal(err)
	}
	proxy, through := startProxy(t)
	c := &faultCluster{t: t, srv: billingtest.NewServer(t, billingtest.WithManualClock()), proxy: proxy, logs: &lockedBuffer{},
		calls: map[string]int{}, byRef: map[string]int{}, progress: make(chan struct{}, 1)}
	logger := slog.New(slog.NewTextHandler(c.logs, nil))
	for i := range instances {
		store, err := pgstore.NewWithOptions(context.Background(), openThrough(t, through, schema), pgstore.Options{CallerClock: true})
		if err != nil {
			t.Fatal(err)
		}
		if !store.HeedsContext() {
			// The faults are the proof of that promise: the Trackers call the store on
			// their own goroutines, with nothing to leave behind at a deadline.
			t.Fatal("a store on pgx's driver must heed its context")
		}
		in := &faultInstance{name: fmt.Sprintf("instance%d", i)}
		in.tr = billing.NewTracker(c.srv.Client(), billing.TrackerOptions{
			Store: store, Clock: c.srv.Clock(), Owner: in.name, Logger: logger.With("instance", in.name),
			Lease: 3 * time.Minute, StoreTimeout: faultStoreTimeout, OnOutcomeTimeout: faultOnOutcomeTimeout,
			OnOutcome: func(_ context.Context, o *billing.Outcome) error {
				c.mu.Lock()
				c.calls[o.ID]++
				c.byRef[o.ClientReference]++
				c.mu.Unlock()
				select {
				case c.progress <- struct{}{}:
				default:
				}
				return nil
			},
		})
		endpoint := httptest.NewServer(in.tr.Handler())
		t.Cleanup(endpoint.Close)
		in.url = endpoint.URL + "/callbacks/" + in.name
		ctx, cancel := context.WithCancel(context.Background())
		in.cancel, in.done = cancel, make(chan error, 1)
		go func() { in.done <- in.tr.Run(ctx) }()
		t.Cleanup(func() { c.stop(in) })
		c.instances = append(c.instances, in)
	}
	return c
}

// stop ends in's Run and fails the test unless it returned within faultStopBound.
func (c *faultCluster) stop(in *faultInstance) {
	if in.stopped {
		return
	}
	in.stopped = true
	start := time.Now()
	in.cancel()
	select {
	case err := <-in.done:
		if !errors.Is(err, context.Canceled) {
			c.t.Errorf("%s: Run ended with %v", in.name, err)
		}
		if took := time.Since(start); took > faultStopBound {
			c.t.Errorf("%s: Run returned %s after its context ended; the bound is %s", in.name, took, faultStopBound)
		}
	case <-time.After(15 * time.Second):
		c.t.Errorf("%s: Run did not return within 15 s of its context ending", in.name)
	}
}

// send makes n payouts through the instances in turn, each calling back another
// instance; one in three goes to a number that never calls back, so that a Run's status
// check must resolve it.
func (c *faultCluster) send(n int) {
	for j := range n {
		in, to := c.instances[j%len(c.instances)], c.instances[(j+1)%len(c.instances)]
		ref := fmt.Sprintf("fault%04d", j)
		phone := "233201234567"
		if j%3 == 0 {
			phone = "233201230002"
		}
		if _, err := in.tr.Send(context.Background(), &billing.SendParams{Amount: 2000, Phone: phone, Provider: billing.ProviderTelecel,
			Name: "Kofi", Description: "Refund " + ref, ClientReference: ref, CallbackURL: to.url}); err != nil {
			c.t.Fatalf("%s: %v", ref, err)
		}
		c.refs = append(c.refs, ref)
	}
}

func (c *faultCluster) reportedRefs() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.byRef)
}

// advanceUntilReported moves the sandbox clock a step at a time, letting the Runs act
// between steps, until every movement was reported.
func (c *faultCluster) advanceUntilReported(step time.Duration, steps int) {
	done := func() bool { return c.reportedRefs() == len(c.refs) }
	for range steps {
		for !done() {
			select {
			case <-c.progress:
				continue
			case <-time.After(30 * time.Millisecond):
			}
			break
		}
		if done() {
			return
		}
		c.srv.Advance(step)
	}
	if !done() {
		c.mu.Lock()
		var missing []string
		for _, ref := range c.refs {
			if c.byRef[ref] == 0 {
				missing = append(missing, ref)
			}
		}
		c.mu.Unlock()
		c.t.Fatalf("%d of %d movements reported after %s of clock; missing %v; proxy %+v; logs:\n%s",
			len(c.refs)-len(missing), len(c.refs), time.Duration(steps)*step, missing, c.proxy.Stats(), c.logs.String())
	}
}

// check stops every Run (each within its bound) and checks that every movement was
// reported, none twice, the sandbox moving each once.
func (c *faultCluster) check() {
	for _, in := range c.instances {
		c.stop(in)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, n := range c.calls {
		if n != 1 {
			c.t.Errorf("outcome %s reported %d times", id, n)
		}
	}
	for _, ref := range c.refs {
		if c.byRef[ref] != 1 {
			c.t.Errorf("%s reported %d times, want once", ref, c.byRef[ref])
		}
		if n := c.srv.Movements(ref); n != 1 {
			c.t.Errorf("the sandbox made %d payouts of %s", n, ref)
		}
	}
	c.t.Logf("%d movements reported once each; proxy %+v", len(c.refs), c.proxy.Stats())
	if c.t.Failed() || os.Getenv("PGSTORE_FAULT_LOGS") != "" {
		c.t.Logf("logs:\n%s", c.logs.String())
	}
}

// With every connection reset at one round trip in forty, at random, to the database, while
// callbacks arrive and Runs check and report, every movement is reported once.
func TestFaultResets(t *testing.T) {
	c := newFaultCluster(t, 3)
	c.send(24)
	c.proxy.ResetEvery(40)
	c.srv.Advance(0) // the sandbox resolves them and calls back, into the resets
	c.advanceUntilReported(10*time.Second, 300)
	c.proxy.ResetEvery(0)
	if c.proxy.Stats().Resets < 10 {
		t.Errorf("only %d resets happened", c.proxy.Stats().Resets)
	}
	c.check()
}

// With every connection to the database frozen (open but silent both ways, as after a
// failover or a NAT's timeout) while the clock moves on: every store call ends at its
// deadline with a warning naming it, a Run cancelled meanwhile returns within its bound,
// and once the network is back every movement is reported once.
func TestFaultFreeze(t *testing.T) {
	c := newFaultCluster(t, 3)
	c.send(24)
	c.srv.Advance(0) // callbacks settle two in three, before the freeze
	c.proxy.Freeze()
	frozeAt := time.Now()
	for range 12 { // six minutes of clock: the silent ones come due
		c.srv.Advance(30 * time.Second)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(c.logs.String(), "a store call got no answer within its deadline") {
		if time.Now().After(deadline) {
			t.Fatalf("no warning of a store call's deadline; logs:\n%s", c.logs.String())
		}
		time.Sleep(20 * time.Millisecond) // the deadlines are real time
	}
	c.stop(c.instances[2]) // a Run stopped while its database is silent returns in time
	c.mu.Lock()
	before := len(c.byRef)
	c.mu.Unlock()
	c.proxy.Thaw()
	t.Logf("frozen for %s; %d of %d reported before the thaw", time.Since(frozeAt).Round(time.Millisecond), before, len(c.refs))
	c.advanceUntilReported(10*time.Second, 300)
	c.check()
}

// With the answer to COMMITs lost (the transaction is done, then the connection drops
// before the client hears so), callbacks answered 500 are delivered again and Runs
// settle and report: every movement is reported once.
func TestFaultAnswerLostAfterCommit(t *testing.T) {
	c := newFaultCluster(t, 3)
	c.send(24)
	c.proxy.LoseCommitAnswers(12, 2)
	c.srv.Advance(0)
	c.advanceUntilReported(10*time.Second, 300)
	if lost := c.proxy.Stats().AnswersLost; lost == 0 {
		t.Error("no COMMIT answer was lost")
	}
	c.check()
}
