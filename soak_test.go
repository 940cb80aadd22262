package billing_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
)

// The soak: many goroutines move money and write billing records at once against one
// sandbox that faults about one request in ten and misbehaves on about one callback in
// ten, every movement resolved by a Tracker on the sandbox's clock. Then the sandbox's
// books are checked: no reference moved twice, every Tracker outcome is the truth, the
// disbursement balance is the opening balance minus the successful payouts and their
// fees, and every credit wallet equals its ledger.
//
// CI runs soakDefaultMovements movements; BILLING_SOAK_MOVEMENTS=10000 runs a full one
// (BILLING_SOAK_SEED picks another mix).

const (
	soakDefaultMovements = 2000
	soakWorkers          = 16
	soakOpeningBalance   = 50_000_000 // 500,000.00 GHS
	soakGiveUp           = 30 * time.Minute
	soakFaultEvery       = 10 // one request in this many, per faulted route
)

// soakSetting reads a positive integer from the environment, or def.
func soakSetting(t *testing.T, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	require.NoError(t, err, "%s", name)
	require.Positive(t, n, "%s", name)
	return n
}

// soakMovement is one money movement of the soak and what the merchant learned of it.
type soakMovement struct {
	call   string // a moneyCalls name
	kind   billing.Kind
	ref    string
	amount int64
	err    error // the SDK's answer
	// checkout is the session the SDK returned, if any.
	checkout *billing.Payment
	// outcome and awaitErr are the Tracker's answer.
	outcome  *billing.Outcome
	awaitErr error
}

// weighted is a choice and how often it comes up.
type weighted struct {
	name   string
	weight int
}

// soakNumbers are the test numbers of each call and how often each comes up, out of 20.
var soakNumbers = map[string][]weighted{
	"receive":             {{"233241234567", 13}, {"233241230001", 2}, {"233241230002", 2}, {"233241230003", 1}, {"233241230004", 2}},
	"send":                {{"233201234567", 13}, {"233201230001", 2}, {"233201230002", 2}, {"233201230003", 1}, {"233201230004", 2}},
	"send-to-bank":        {{"1441000123456", 17}, {"1441000120001", 3}},
	"direct-debit charge": {{"233271234567", 13}, {"233271230001", 2}, {"233271230002", 2}, {"233271230003", 1}, {"233271230004", 2}},
}

// soakCalls are the money calls by weight, out of 20.
var soakCalls = []weighted{{"receive", 6}, {"send", 4}, {"send-to-bank", 3}, {"direct-debit charge", 3}, {"mandate create", 1}, {"checkout create", 3}}

// choose draws one of items by weight.
func choose(rng *rand.Rand, items []weighted) string {
	total := 0
	for _, it := range items {
		total += it.weight
	}
	n := rng.IntN(total)
	for _, it := range items {
		if n -= it.weight; n < 0 {
			return it.name
		}
	}
	return items[len(items)-1].name
}

// soak is the shared state of a soak run.
type soak struct {
	t         *testing.T
	srv       *billingtest.Server
	client    *billing.Client
	tracker   *billing.Tracker
	callbacks string
	transport *countingTransport
	customers []string
	meterID   string

	mu        sync.Mutex
	movements []*soakMovement
	events    map[string]bool // idempotency key -> RecordEvent succeeded
	awaits    sync.WaitGroup
	mandates  atomic.Int64 // numbers each mandate's MSISDN
	writes    atomic.Int64 // billing writes sent
}

func newSoak(t *testing.T) *soak {
	srv := billingtest.NewServer(t, billingtest.WithManualClock(), billingtest.WithDisbursementBalance(soakOpeningBalance))
	base := http.DefaultTransport.(*http.Transport).Clone()
	base.MaxIdleConnsPerHost = 64
	transport := &countingTransport{next: base} // customers_sandbox_test.go
	c := srv.Client(
		billing.WithHTTPClient(&http.Client{Transport: transport, Timeout: 30 * time.Second}),
		billing.WithRetry(billing.DefaultMaxAttempts, time.Millisecond, 5*time.Millisecond),
	)
	tr := billing.NewTracker(c, billing.TrackerOptions{Clock: srv.Clock(), GiveUpAfter: soakGiveUp, Retention: 1000 * time.Hour})
	endpoint := httptest.NewServer(tr.Handler(billing.WithDedupe(0), billing.WithStatusCheckConfirmation(c)))
	t.Cleanup(endpoint.Close)
	return &soak{t: t, srv: srv, client: c, tracker: tr, callbacks: endpoint.URL + "/callbacks", transport: transport, events: map[string]bool{}}
}

// setUp makes what the movements and writes need, before any fault is armed: customers
// with credit wallets, a meter, and approved mandates for the direct-debit numbers.
func (s *soak) setUp() {
	t, ctx := s.t, context.Background()
	for i := range 8 {
		cust, err := s.client.Customers.Create(ctx, &billing.CustomerCreateParams{Email: fmt.Sprintf("payer%d@example.com", i), Name: fmt.Sprintf("Payer %d", i)})
		require.NoError(t, err)
		_, err = s.client.Credits.Grant(ctx, cust.ID, &billing.CreditGrantParams{Amount: 1000, Description: "opening"})
		require.NoError(t, err)
		s.customers = append(s.customers, cust.ID)
	}
	meter, err := s.client.Meters.Create(ctx, &billing.MeterCreateParams{Name: "API calls", EventName: "api.call"})
	require.NoError(t, err)
	s.meterID = meter.ID
	for _, n := range soakNumbers["direct-debit charge"] {
		_, err := s.client.Mandates.Create(ctx, &billing.MandateCreateParams{
			ClientReferenceID: "soakmandate" + n.name, CustomerMSISDN: n.name, Channel: billing.DirectDebitChannelMTN, CallbackURL: s.callbacks,
		})
		require.NoError(t, err)
	}
	s.srv.Advance(0)
}

// armFaults arms a fault on about one request in soakFaultEvery to each route the soak
// uses: one at a random place in every run of ten, over more requests than each route
// is expected to see.
func (s *soak) armFaults(rng *rand.Rand, movements int) {
	of := func(kinds ...billingtest.FaultKind) []billingtest.Fault {
		out := make([]billingtest.Fault, len(kinds))
		for i, k := range kinds {
			out[i] = billingtest.Fault{Kind: k}
		}
		return out
	}
	retried := of(
		billingtest.FaultLatency, billingtest.FaultHTTP500, billingtest.FaultHTTP502, billingtest.FaultHTTP503, billingtest.FaultHTTP429,
		billingtest.FaultResetBeforeWork, billingtest.FaultResponseLost, billingtest.FaultTruncatedBody, billingtest.FaultMalformedJSON,
	)
	withCode0005 := append(slices.Clone(retried), billingtest.Fault{Kind: billingtest.FaultCode0005})
	// A money movement also meets redirects of every kind, before and after the work,
	// and answers that say neither yes nor no.
	checkout := slices.Clone(withCode0005)
	for _, status := range []int{301, 302, 303, 307, 308} {
		checkout = append(checkout,
			billingtest.Fault{Kind: billingtest.FaultRedirect, Status: status},
			billingtest.Fault{Kind: billingtest.FaultRedirectAfterWork, Status: status})
	}
	for _, body := range []string{`{}`, `null`, `{"data":null}`, `{"success":true}`} {
		checkout = append(checkout, billingtest.Fault{Kind: billingtest.FaultUnclassifiedAfterWork, Body: body})
	}
	checkout = append(checkout, billingtest.Fault{Kind: billingtest.FaultUnclassifiedAfterWork, Status: 304, Body: " "})
	// A 429 after the work makes the SDK send again, and the service refuse the
	// duplicate reference; checkout sessions have no such dedupe, so only the others.
	money := append(slices.Clone(checkout), billingtest.Fault{Kind: billingtest.FaultHTTP429AfterWork})
	routes := []struct {
		route    string
		expected int
		faults   []billingtest.Fault
	}{
		{"POST /v1/payments", movements * 3 / 20, checkout},
		{"POST /v1/payments/receive", movements * 6 / 20, money},
		{"POST /v1/payments/send", movements * 4 / 20, money},
		{matrixBankRoute, movements * 3 / 20, money},
		{"POST /v1/payments/direct-debit", movements * 3 / 20, money},
		{"POST /v1/mandates", movements / 20, money},
		{"GET /v1/payments/{reference}", movements, retried},
		{"GET /v1/merchants/{account}/transactions/status", movements / 4, retried},
		{"GET /v1/payments/direct-debit/status/{clientReference}", movements / 4, withCode0005},
		{"GET /v1/mandates/preapproval/{clientReferenceId}/status", movements / 10, withCode0005},
		{"POST /v1/credits/{customerId}/grant", movements / 5, retried},
		{"POST /v1/credits/{customerId}/deduct", movements / 10, retried},
		{"POST /v1/meters/{id}/events", movements / 5, retried},
		{"POST /v1/customers", movements / 20, retried},
	}
	for _, r := range routes {
		for block := 0; block*soakFaultEvery < 2*r.expected+soakFaultEvery; block++ {
			f := r.faults[rng.IntN(len(r.faults))]
			f.Route, f.Nth = r.route, block*soakFaultEvery+1+rng.IntN(soakFaultEvery)
			f.Latency = time.Duration(1+rng.IntN(10)) * time.Millisecond
			s.srv.InjectFault(f)
		}
	}
}

var soakCallbackFaults = []billingtest.CallbackFaultKind{
	billingtest.CallbackDropped, billingtest.CallbackDuplicated, billingtest.CallbackStale, billingtest.CallbackContradicted, billingtest.CallbackDelayed,
	billingtest.CallbackForgedFailure, billingtest.CallbackForgedAmount,
}

// work runs one worker's share: movements, each followed now and then by a billing
// write and a move of the sandbox's clock.
func (s *soak) work(rng *rand.Rand, worker, count int) {
	for i := range count {
		s.move(rng, fmt.Sprintf("w%dm%d", worker, i))
		if rng.IntN(2) == 0 {
			s.write(rng, fmt.Sprintf("w%de%d", worker, i))
		}
		switch rng.IntN(20) {
		case 0, 1:
			s.srv.Advance(15 * time.Second)
		case 2, 3:
			s.srv.Advance(0)
		}
	}
}

// move makes one money movement and has the Tracker await it.
func (s *soak) move(rng *rand.Rand, ref string) {
	call := choose(rng, soakCalls)
	i := slices.IndexFunc(moneyCalls, func(c moneyCall) bool { return c.name == call })
	m := &soakMovement{call: call, kind: moneyCalls[i].kind, ref: ref, amount: int64(200 + rng.IntN(20_000))}
	if rng.IntN(10) == 0 && m.kind != "" {
		kind := soakCallbackFaults[rng.IntN(len(soakCallbackFaults))]
		s.srv.InjectCallbackFault(billingtest.CallbackFault{Kind: kind, Reference: ref, Delay: time.Duration(1+rng.IntN(10)) * time.Minute})
	}
	if m.kind != "" {
		if err := s.tracker.Track(context.Background(), m.kind, ref); err != nil {
			s.t.Errorf("Track %s: %v", ref, err)
			return
		}
	}
	m.err = s.initiate(rng, m)
	s.mu.Lock()
	s.movements = append(s.movements, m)
	s.mu.Unlock()

	var apiErr *billing.APIError
	if m.kind == "" || (errors.As(m.err, &apiErr) && !errors.Is(m.err, billing.ErrOutcomeUnknown)) {
		return // a checkout has no Tracker; a refusal moved nothing
	}
	s.awaits.Add(1)
	go func() {
		defer s.awaits.Done()
		o, err := s.tracker.Await(context.Background(), m.kind, ref)
		s.mu.Lock()
		m.outcome, m.awaitErr = o, err
		s.mu.Unlock()
	}()
}

// initiate sends the movement, with a test number drawn by weight.
func (s *soak) initiate(rng *rand.Rand, m *soakMovement) error {
	ctx, c := context.Background(), s.client
	number := func() string { return choose(rng, soakNumbers[m.call]) }
	switch m.call {
	case "checkout create":
		p, err := c.Payments.CreateCheckout(ctx, &billing.CheckoutParams{Amount: m.amount, Description: "Order " + m.ref, ClientReference: m.ref})
		if err == nil {
			m.checkout = p
			// The payer pays, or is declined, on the hosted page.
			outcome := []string{"succeeded", "succeeded", "succeeded", "failed"}[rng.IntN(4)]
			method := []string{"CARD", "MOBILE_MONEY", "BANK_TRANSFER"}[rng.IntN(3)]
			if err := s.srv.CompleteCheckout(p.Reference, method, outcome); err != nil {
				s.t.Errorf("paying checkout %s: %v", p.Reference, err)
			}
		}
		return err
	case "receive":
		_, err := c.Payments.Receive(ctx, &billing.ReceiveParams{
			Amount: m.amount, Phone: number(), Provider: billing.ProviderMTN, Description: "Order " + m.ref,
			ClientReference: m.ref, CallbackURL: s.callbacks,
		})
		return err
	case "send":
		_, err := c.Payouts.Send(ctx, &billing.SendParams{
			Amount: m.amount, Phone: number(), Provider: billing.ProviderTelecel, Name: "Kofi",
			Description: "Refund " + m.ref, ClientReference: m.ref, CallbackURL: s.callbacks,
		})
		return err
	case "send-to-bank":
		_, err := c.Payouts.SendToBank(ctx, &billing.BankTransferParams{
			BankCode: bankCodeGCB, Amount: billing.DecimalAmount(m.amount), PrimaryCallbackURL: s.callbacks,
			Description: "Invoice " + m.ref, BankAccountNumber: number(), ClientReference: m.ref,
		})
		return err
	case "direct-debit charge":
		_, err := c.Mandates.Charge(ctx, &billing.DirectDebitParams{
			CustomerMSISDN: number(), Channel: billing.DirectDebitChannelMTN, Amount: billing.DecimalAmount(m.amount),
			PrimaryCallbackURL: s.callbacks, Description: "Plan " + m.ref, ClientReference: m.ref,
		})
		return err
	case "mandate create":
		msisdn := fmt.Sprintf("23326%07d", s.mandates.Add(1))
		_, err := c.Mandates.Create(ctx, &billing.MandateCreateParams{
			ClientReferenceID: m.ref, CustomerMSISDN: msisdn, Channel: billing.DirectDebitChannelMTN, CallbackURL: s.callbacks,
		})
		return err
	}
	return fmt.Errorf("unknown call %q", m.call)
}

// write makes one billing write: a credit grant or deduct, a meter event with an
// idempotency key, or a new customer.
func (s *soak) write(rng *rand.Rand, key string) {
	ctx, c := context.Background(), s.client
	s.writes.Add(1)
	customer := s.customers[rng.IntN(len(s.customers))]
	switch n := rng.IntN(20); {
	case n < 9:
		_, _ = c.Credits.Grant(ctx, customer, &billing.CreditGrantParams{Amount: int64(1 + rng.IntN(500)), Description: key})
	case n < 13:
		_, _ = c.Credits.Deduct(ctx, customer, &billing.CreditDeductParams{Amount: int64(1 + rng.IntN(800)), Description: key})
	case n < 19:
		_, err := c.Meters.RecordEvent(ctx, s.meterID, &billing.MeterEventParams{CustomerID: customer, Value: billing.Value(float64(1 + rng.IntN(9))), IdempotencyKey: key})
		s.mu.Lock()
		s.events[key] = err == nil
		s.mu.Unlock()
	default:
		_, _ = c.Customers.Create(ctx, &billing.CustomerCreateParams{Email: key + "@example.com", Name: "Walk-in " + key})
	}
}

// finish runs the clock past every resolution, redelivery and give-up limit, and waits
// for every Await.
func (s *soak) finish() {
	for range 70 {
		s.srv.Advance(time.Minute)
	}
	s.srv.Advance(24 * time.Hour)
	done := make(chan struct{})
	go func() { s.awaits.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		s.t.Fatal("some Awaits did not return once the sandbox clock was past their give-up limit")
	}
}

// payoutFee is the sandbox's fee of a payout (docs/sandbox.md "Fees and the disbursement balance"):
// send 1% rounded half up, at least 1.00; send-to-bank 1.00.
func payoutFee(call string, amount int64) int64 {
	if call == "send-to-bank" {
		return 100
	}
	return max((amount*100+5_000)/10_000, 100)
}

func TestSoak(t *testing.T) {
	total := soakSetting(t, "BILLING_SOAK_MOVEMENTS", soakDefaultMovements)
	seed := uint64(soakSetting(t, "BILLING_SOAK_SEED", 1))
	start := time.Now()
	s := newSoak(t)
	s.setUp()
	s.armFaults(rand.New(rand.NewPCG(seed, 0)), total)
	sandboxStart, requestsBefore := s.srv.Now(), s.transport.n.Load()

	var workers sync.WaitGroup
	for w := range soakWorkers {
		count := total / soakWorkers
		if w < total%soakWorkers {
			count++
		}
		workers.Add(1)
		go func() {
			defer workers.Done()
			s.work(rand.New(rand.NewPCG(seed, uint64(w+1))), w, count)
		}()
	}
	workers.Wait()
	s.finish()
	elapsed := time.Since(start)
	// The figures of the run itself, before the checks below read the books.
	requests, faults := s.transport.n.Load()-requestsBefore, s.srv.FaultsFired()
	sandboxTime := s.srv.Now().Sub(sandboxStart)

	// The books.
	var (
		duplicates, mismatches, refusedButMoved, plainFailures, stillPending int
		succeededPayouts, payoutFees                                         int64
		answers                                                              = map[string]int{}
		sources                                                              = map[billing.OutcomeSource]int{}
		neverRecorded                                                        int
	)
	ctx := context.Background()
	for _, m := range s.movements {
		records := s.srv.MovementRecords(m.ref)
		if len(records) > 1 {
			duplicates++
			t.Errorf("%s %s: %d movements under one reference", m.call, m.ref, len(records))
		}
		var apiErr *billing.APIError
		switch {
		case m.err == nil:
			answers["success"]++
		case errors.Is(m.err, billing.ErrOutcomeUnknown):
			answers["outcome unknown"]++
		case errors.As(m.err, &apiErr):
			answers["refused"]++
			if len(records) != 0 {
				refusedButMoved++
				t.Errorf("%s %s: refused (%v) yet the sandbox recorded a movement", m.call, m.ref, m.err)
			}
		default:
			plainFailures++
			t.Errorf("%s %s: a plain failure where money may have moved: %v", m.call, m.ref, m.err)
		}
		if len(records) == 0 {
			if m.outcome == nil {
				continue // refused, or a checkout: not awaited
			}
			neverRecorded++
			if !m.outcome.IsPending() || !errors.Is(m.awaitErr, billing.ErrNotFound) {
				mismatches++
				t.Errorf("%s %s: never recorded, yet the Tracker says %s (%v)", m.call, m.ref, m.outcome.State, m.awaitErr)
			}
			continue
		}
		truth := records[0]
		if m.call == "checkout create" && m.checkout == nil {
			continue // an orphan session: nobody has its URL; it stays unpaid, then expires
		}
		if truth.State == "pending" {
			stillPending++
			t.Errorf("%s %s: still pending in the sandbox at the end", m.call, m.ref)
			continue
		}
		if m.call == "send" || m.call == "send-to-bank" {
			if fee := payoutFee(m.call, truth.Amount); truth.Fee != fee {
				t.Errorf("%s %s: fee %d, the rule says %d", m.call, m.ref, truth.Fee, fee)
			}
			if truth.State == "succeeded" {
				succeededPayouts += truth.Amount
				payoutFees += payoutFee(m.call, truth.Amount)
			}
		}
		if m.call == "checkout create" {
			p, err := s.client.Payments.Get(ctx, m.checkout.Reference)
			if assert.NoError(t, err) && (p.Succeeded() != (truth.State == "succeeded") || !p.IsFinal()) {
				mismatches++
				t.Errorf("checkout %s: the payment says %s, the sandbox %s", m.ref, p.Status, truth.State)
			}
			continue
		}
		o := m.outcome
		switch {
		case o == nil:
			mismatches++
			t.Errorf("%s %s: never awaited", m.call, m.ref)
		case m.awaitErr != nil || o.Succeeded() != (truth.State == "succeeded") || o.Failed() != (truth.State == "failed"):
			mismatches++
			t.Errorf("%s %s: the Tracker says %s by %s (%v), the sandbox %s", m.call, m.ref, o.State, o.Source, m.awaitErr, truth.State)
		case o.Succeeded() && m.kind != billing.KindMandate && o.Amount != truth.Amount:
			mismatches++
			t.Errorf("%s %s: the Tracker says %d by %s, the sandbox %d", m.call, m.ref, o.Amount, o.Source, truth.Amount)
		default:
			sources[o.Source]++
			// What the Tracker holds now, after every late, duplicate, stale or
			// contradicting callback, is still the truth.
			again, err := s.tracker.Await(ctx, m.kind, m.ref)
			if err != nil || again.State != o.State {
				mismatches++
				t.Errorf("%s %s: the Tracker first said %s, then %s (%v)", m.call, m.ref, o.State, again.State, err)
			}
		}
	}
	wantBalance := int64(soakOpeningBalance) - succeededPayouts - payoutFees
	assert.Equal(t, wantBalance, s.srv.DisbursementBalance(), "opening balance minus successful payouts and their fees")

	// Every credit wallet equals its ledger, and the ledger is a chain.
	for _, customer := range s.customers {
		wallet, err := s.client.Credits.Get(ctx, customer)
		require.NoError(t, err)
		var entries []*billing.CreditTransaction
		for e, err := range s.client.Credits.Transactions(ctx, customer, nil) {
			require.NoError(t, err)
			entries = append(entries, e)
		}
		slices.Reverse(entries) // the ledger lists the newest first
		var sum int64
		for i, e := range entries {
			sum += e.BalanceAfter - e.BalanceBefore
			if i > 0 {
				assert.Equal(t, entries[i-1].BalanceAfter, e.BalanceBefore, "wallet of %s: entry %s follows %s", customer, e.ID, entries[i-1].ID)
			}
		}
		assert.Equal(t, wallet.Balance, sum, "wallet of %s equals its ledger of %d entries", customer, len(entries))
	}

	// Every meter event was recorded once, however often it was sent.
	seen := map[string]int{}
	for ev, err := range s.client.Meters.Events(ctx, s.meterID, nil) {
		require.NoError(t, err)
		seen[ev.IdempotencyKey]++
	}
	for key, ok := range s.events {
		if ok && seen[key] != 1 {
			t.Errorf("meter event %s: recorded %d times, want once", key, seen[key])
		}
		if seen[key] > 1 {
			t.Errorf("meter event %s: recorded %d times", key, seen[key])
		}
	}

	assert.Zero(t, duplicates)
	assert.Zero(t, mismatches)
	t.Logf("soak: %d movements (%d success, %d refused, %d outcome unknown) and %d billing writes by %d goroutines; "+
		"%d requests, %d request faults fired (%.1f%%), %d callback faults fired; "+
		"Tracker outcomes: %d by callback, %d by status check, %d never recorded (pending, 404); "+
		"duplicates %d, mismatches %d, plain failures %d, refused-but-moved %d, pending at the end %d; "+
		"%s of sandbox time in %s on %d CPUs (%s/%s, %s), seed %d",
		len(s.movements), answers["success"], answers["refused"], answers["outcome unknown"], s.writes.Load(), soakWorkers,
		requests, faults, 100*float64(faults)/float64(requests), s.srv.CallbackFaultsFired(),
		sources[billing.SourceCallback], sources[billing.SourceStatusCheck], neverRecorded,
		duplicates, mismatches, plainFailures, refusedButMoved, stillPending,
		sandboxTime.Round(time.Minute), elapsed.Round(time.Millisecond), runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version(), seed)
	assert.InDelta(t, 0.10, float64(faults)/float64(requests), 0.05, "about one request in ten is faulted")
}
