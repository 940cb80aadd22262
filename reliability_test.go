package billing_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
	"github.com/billingsdk/billing-go/storekit"
)

// The fault matrix: every money movement under every request fault, every async flow
// under every callback fault, and the reads and idempotent writes under the faults they
// are retried through. Each cell runs against its own sandbox and checks the SDK's
// answer, the sandbox's record of money and the Tracker's outcome against each other.

// matrixGiveUp is the Tracker's polling limit in the matrix: short, since a movement the
// sandbox never recorded is polled (404) until it.
const matrixGiveUp = 10 * time.Minute

// faultyMerchant is a merchant against a sandbox on a manual clock: a client with quick
// retries, a Tracker on the sandbox's clock, and a callback endpoint that confirms
// successes by the status check before the Tracker sees them.
type faultyMerchant struct {
	srv         *billingtest.Server
	client      *billing.Client
	tracker     *billing.Tracker
	callbackURL string
}

func newFaultyMerchant(t *testing.T, opts ...billingtest.Option) *faultyMerchant {
	t.Helper()
	srv := billingtest.NewServer(t, append([]billingtest.Option{billingtest.WithManualClock()}, opts...)...)
	c := srv.Client(billing.WithRetry(billing.DefaultMaxAttempts, time.Millisecond, 5*time.Millisecond))
	// Retention outlasts the hours a matrix cell advances the clock: a second Await must
	// find the outcome the first one settled, whenever in those hours it settled.
	tr := billing.NewTracker(c, billing.TrackerOptions{Clock: srv.Clock(), GiveUpAfter: matrixGiveUp, Retention: 1000 * time.Hour})
	endpoint := httptest.NewServer(tr.Handler(billing.WithDedupe(0), billing.WithStatusCheckConfirmation(c)))
	t.Cleanup(endpoint.Close)
	return &faultyMerchant{srv: srv, client: c, tracker: tr, callbackURL: endpoint.URL + "/callbacks"}
}

// approveMandate sets up an approved MTN mandate for msisdn, so a charge may follow.
func (m *faultyMerchant) approveMandate(t *testing.T, msisdn string) {
	t.Helper()
	_, err := m.client.Mandates.Create(context.Background(), &billing.MandateCreateParams{
		ClientReferenceID: "setup" + msisdn, CustomerMSISDN: msisdn, Channel: billing.DirectDebitChannelMTN, CallbackURL: m.callbackURL,
	})
	require.NoError(t, err)
	m.srv.Advance(time.Hour) // past any resolve-after
	mandate, err := m.client.Mandates.Status(context.Background(), "setup"+msisdn)
	require.NoError(t, err)
	require.True(t, mandate.Succeeded())
}

// Test numbers of the sandbox: a success, and a failure reported by callback.
const (
	payerOK         = "233241234567"
	payerWrongPIN   = "233241230001"
	walletOK        = "233201234567"
	walletInvalid   = "233201230001"
	accountOK       = "1441000123456"
	accountBadName  = "1441000120001"
	bankCodeGCB     = "300302"
	matrixAmount    = 5000
	matrixBankRoute = "POST /v1/merchants/{account}/send/bank/gh/{bankCode}"
)

// moneyCall is one of the six calls that move money.
type moneyCall struct {
	name  string
	route string
	// kind is the Tracker's kind; empty for checkout, which has no status check by
	// client reference and moves no money until a payer pays on the hosted page.
	kind billing.Kind
	// canFail says the sandbox has a test number for which it is accepted, then fails.
	canFail bool
	// prepare runs before the fault is armed.
	prepare func(t *testing.T, m *faultyMerchant)
	// run makes the call with client, for the reference; fails picks the failing number.
	run func(ctx context.Context, c *billing.Client, m *faultyMerchant, ref string, fails bool) error
}

func pick[T any](fails bool, ok, bad T) T {
	if fails {
		return bad
	}
	return ok
}

var moneyCalls = []moneyCall{
	{
		name: "checkout create", route: "POST /v1/payments",
		run: func(ctx context.Context, c *billing.Client, _ *faultyMerchant, ref string, _ bool) error {
			_, err := c.Payments.CreateCheckout(ctx, &billing.CheckoutParams{Amount: matrixAmount, Description: "Order " + ref, ClientReference: ref})
			return err
		},
	},
	{
		name: "receive", route: "POST /v1/payments/receive", kind: billing.KindReceive, canFail: true,
		run: func(ctx context.Context, c *billing.Client, m *faultyMerchant, ref string, fails bool) error {
			_, err := c.Payments.Receive(ctx, &billing.ReceiveParams{
				Amount: matrixAmount, Phone: pick(fails, payerOK, payerWrongPIN), Provider: billing.ProviderMTN,
				Description: "Order " + ref, ClientReference: ref, CallbackURL: m.callbackURL,
			})
			return err
		},
	},
	{
		name: "send", route: "POST /v1/payments/send", kind: billing.KindSend, canFail: true,
		run: func(ctx context.Context, c *billing.Client, m *faultyMerchant, ref string, fails bool) error {
			_, err := c.Payouts.Send(ctx, &billing.SendParams{
				Amount: matrixAmount, Phone: pick(fails, walletOK, walletInvalid), Provider: billing.ProviderTelecel, Name: "Kofi",
				Description: "Refund " + ref, ClientReference: ref, CallbackURL: m.callbackURL,
			})
			return err
		},
	},
	{
		name: "send-to-bank", route: matrixBankRoute, kind: billing.KindBankTransfer, canFail: true,
		run: func(ctx context.Context, c *billing.Client, m *faultyMerchant, ref string, fails bool) error {
			_, err := c.Payouts.SendToBank(ctx, &billing.BankTransferParams{
				BankCode: bankCodeGCB, Amount: matrixAmount, PrimaryCallbackURL: m.callbackURL, Description: "Invoice " + ref,
				BankAccountNumber: pick(fails, accountOK, accountBadName), ClientReference: ref,
			})
			return err
		},
	},
	{
		name: "direct-debit charge", route: "POST /v1/payments/direct-debit", kind: billing.KindDirectDebit, canFail: true,
		prepare: func(t *testing.T, m *faultyMerchant) {
			m.approveMandate(t, payerOK)
			m.approveMandate(t, payerWrongPIN)
		},
		run: func(ctx context.Context, c *billing.Client, m *faultyMerchant, ref string, fails bool) error {
			_, err := c.Mandates.Charge(ctx, &billing.DirectDebitParams{
				CustomerMSISDN: pick(fails, payerOK, payerWrongPIN), Channel: billing.DirectDebitChannelMTN, Amount: matrixAmount,
				PrimaryCallbackURL: m.callbackURL, Description: "Plan " + ref, ClientReference: ref,
			})
			return err
		},
	},
	{
		name: "mandate create", route: "POST /v1/mandates", kind: billing.KindMandate,
		run: func(ctx context.Context, c *billing.Client, m *faultyMerchant, ref string, _ bool) error {
			_, err := c.Mandates.Create(ctx, &billing.MandateCreateParams{
				ClientReferenceID: ref, CustomerMSISDN: payerOK, Channel: billing.DirectDebitChannelMTN, CallbackURL: m.callbackURL,
			})
			return err
		},
	},
}

// sdkAnswer is what the SDK may say of a money movement.
type sdkAnswer int

const (
	answerSuccess sdkAnswer = iota + 1
	answerUnknown
)

// requestFault is a row of the matrix: a fault on the call's request and what must follow.
type requestFault struct {
	name  string
	fault billingtest.Fault // Kind empty: no fault, the baseline
	// timeout is the client's timeout for the call, when the fault is about it.
	timeout time.Duration
	// resendMeetsDuplicate marks a fault after which the SDK rightly sends again (a 429)
	// although the work was done: only a service that refuses the re-sent client
	// reference keeps it to one movement. Checkout sessions are not deduplicated by
	// client reference, so the row skips checkout.
	resendMeetsDuplicate bool
	// target is where a redirect fault points (see redirectTargets); empty is the
	// request's own URL.
	target string
	// movements is what the sandbox records: 1 when the fault came after the work or
	// the SDK sent again, 0 when it came before.
	movements int
	answer    sdkAnswer
}

var requestFaults = []requestFault{
	{name: "none", movements: 1, answer: answerSuccess},
	{name: "latency", fault: billingtest.Fault{Kind: billingtest.FaultLatency, Latency: 20 * time.Millisecond}, movements: 1, answer: answerSuccess},
	{name: "latency past the timeout", fault: billingtest.Fault{Kind: billingtest.FaultLatency, Latency: time.Minute}, timeout: 200 * time.Millisecond, movements: 0, answer: answerUnknown},
	{name: "http 500", fault: billingtest.Fault{Kind: billingtest.FaultHTTP500}, movements: 0, answer: answerUnknown},
	{name: "http 502", fault: billingtest.Fault{Kind: billingtest.FaultHTTP502}, movements: 0, answer: answerUnknown},
	{name: "http 503 with Retry-After", fault: billingtest.Fault{Kind: billingtest.FaultHTTP503, RetryAfter: 30 * time.Second}, movements: 0, answer: answerUnknown},
	{name: "http 429 with Retry-After", fault: billingtest.Fault{Kind: billingtest.FaultHTTP429}, movements: 1, answer: answerSuccess},
	{name: "reset before the work", fault: billingtest.Fault{Kind: billingtest.FaultResetBeforeWork}, movements: 0, answer: answerUnknown},
	{name: "response lost", fault: billingtest.Fault{Kind: billingtest.FaultResponseLost}, movements: 1, answer: answerUnknown},
	{name: "truncated body", fault: billingtest.Fault{Kind: billingtest.FaultTruncatedBody}, movements: 1, answer: answerUnknown},
	{name: "malformed json", fault: billingtest.Fault{Kind: billingtest.FaultMalformedJSON}, movements: 1, answer: answerUnknown},
	{name: "code 0005", fault: billingtest.Fault{Kind: billingtest.FaultCode0005}, movements: 1, answer: answerUnknown},
	{name: "http 429 after the work, then the re-send refused as a duplicate", fault: billingtest.Fault{Kind: billingtest.FaultHTTP429AfterWork}, movements: 1, answer: answerUnknown, resendMeetsDuplicate: true},
}

// Where the redirect faults of the matrix point: a server that would accept anything,
// an address nothing listens on, and a server that answers 429 (which a client judging
// by the last hop would take for "never reached" and send again).
const (
	targetElsewhere = "elsewhere"
	targetDeadPort  = "a dead port"
	target429       = "a 429"
)

// The rows of every redirect and unclassified answer: a write follows no redirect, and
// an answer that says neither yes nor no leaves the outcome unknown.
func init() {
	for _, status := range []int{301, 302, 303, 307, 308} {
		for _, target := range []string{"", targetElsewhere, targetDeadPort, target429} {
			to := cmp.Or(target, "its own URL")
			requestFaults = append(requestFaults, requestFault{
				name:  fmt.Sprintf("redirect %d to %s before the work", status, to),
				fault: billingtest.Fault{Kind: billingtest.FaultRedirect, Status: status}, target: target, answer: answerUnknown,
			})
		}
		requestFaults = append(requestFaults, requestFault{
			name:  fmt.Sprintf("redirect %d to its own URL after the work", status),
			fault: billingtest.Fault{Kind: billingtest.FaultRedirectAfterWork, Status: status}, movements: 1, answer: answerUnknown,
		})
	}
	for _, u := range []struct {
		status int
		body   string
	}{
		{200, `{}`}, {200, `null`}, {200, ` `}, {200, `{"data":null}`}, {201, `{"success":true}`}, {200, `{"success":true,"data":{}}`},
		{204, ``}, {300, `{}`}, {304, ``}, {307, ``},
	} {
		requestFaults = append(requestFaults, requestFault{
			name:  fmt.Sprintf("%d %q after the work", u.status, u.body),
			fault: billingtest.Fault{Kind: billingtest.FaultUnclassifiedAfterWork, Status: u.status, Body: u.body}, movements: 1, answer: answerUnknown,
		})
	}
}

// redirectTarget returns the URL a redirect fault points to, and a count of the requests
// that reached it, which must stay zero.
func redirectTarget(t *testing.T, target string) (string, func() int32) {
	t.Helper()
	var hits atomic.Int32
	serve := func(status int, body string) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hits.Add(1)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_, _ = io.WriteString(w, body)
		}))
		t.Cleanup(srv.Close)
		return srv.URL + "/v1/anything"
	}
	switch target {
	case targetElsewhere:
		return serve(200, `{"success":true,"responseCode":"0001","data":{"reference":"elsewhere"}}`), hits.Load
	case target429:
		return serve(429, `{"success":false,"message":"slow down"}`), hits.Load
	case targetDeadPort:
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		addr := l.Addr().String()
		require.NoError(t, l.Close())
		return "http://" + addr + "/v1/anything", hits.Load
	}
	return "", hits.Load
}

// checkMoneyAnswer holds the SDK to its promise: success, a typed *APIError with nothing
// moved, or ErrOutcomeUnknown naming the reference; never a plain failure where money
// may have moved.
func checkMoneyAnswer(t *testing.T, err error, ref string, movements int) {
	t.Helper()
	if err == nil {
		return
	}
	var unknown *billing.OutcomeUnknownError
	if errors.As(err, &unknown) {
		assert.Equal(t, ref, unknown.ClientReference, "the error names the reference to resolve")
		return
	}
	var apiErr *billing.APIError
	assert.True(t, errors.As(err, &apiErr), "a failure that is not ErrOutcomeUnknown is a typed *APIError: %v", err)
	assert.Zero(t, movements, "a definite failure must mean nothing moved: %v", err)
}

// resolveWithTracker runs the sandbox clock past every callback, the five-minute wait and
// the give-up limit, then awaits the movement, and checks the Tracker against the truth.
func resolveWithTracker(t *testing.T, m *faultyMerchant, kind billing.Kind, ref string) {
	t.Helper()
	m.srv.Advance(0)
	m.srv.Advance(billing.DefaultCallbackWait + matrixGiveUp)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	o, err := m.tracker.Await(ctx, kind, ref)
	checkOutcomeIsTheTruth(t, m.srv, o, err, ref)
}

// checkOutcomeIsTheTruth compares what a Tracker resolved with the sandbox's record: a
// movement never recorded stays pending (the status check said 404 to the end), and a
// recorded one is final with the sandbox's state.
func checkOutcomeIsTheTruth(t *testing.T, srv *billingtest.Server, o *billing.Outcome, err error, ref string) {
	t.Helper()
	records := srv.MovementRecords(ref)
	if len(records) == 0 {
		require.ErrorIs(t, err, billing.ErrStillPending, "never recorded: nothing final can be known")
		assert.ErrorIs(t, err, billing.ErrNotFound, "and the status check says the service never recorded it")
		require.NotNil(t, o)
		assert.True(t, o.IsPending(), "never a success or a failure it did not learn")
		return
	}
	require.Len(t, records, 1, "one movement per reference")
	truth := records[0]
	require.NoError(t, err)
	require.NotEqual(t, "pending", truth.State, "the Tracker answered %s (by %s) while the sandbox still says pending", o.State, o.Source)
	assert.Equal(t, truth.State == "succeeded", o.Succeeded(), "the Tracker says %s (by %s), the sandbox %s", o.State, o.Source, truth.State)
	assert.Equal(t, truth.State == "failed", o.Failed(), "the Tracker says %s (by %s), the sandbox %s", o.State, o.Source, truth.State)
	if o.TransactionID != "" {
		assert.Equal(t, truth.TransactionID, o.TransactionID)
	}
	if o.Succeeded() && truth.Kind != "mandate" {
		assert.Equal(t, truth.Amount, o.Amount)
	}
}

func TestFaultMatrixMoneyMovements(t *testing.T) {
	for _, call := range moneyCalls {
		for _, fails := range []bool{false, true} {
			if fails && !call.canFail {
				continue
			}
			for _, rf := range requestFaults {
				if rf.resendMeetsDuplicate && call.kind == "" {
					continue
				}
				name := fmt.Sprintf("%s/%s/%s", call.name, pick(fails, "succeeds", "fails"), rf.name)
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					moneyCellUnderRequestFault(t, call, fails, rf)
				})
			}
		}
	}
}

func moneyCellUnderRequestFault(t *testing.T, call moneyCall, fails bool, rf requestFault) {
	m := newFaultyMerchant(t)
	if call.prepare != nil {
		call.prepare(t, m)
	}
	const ref = "matrix1"
	if call.kind != "" {
		require.NoError(t, m.tracker.Track(context.Background(), call.kind, ref))
	}
	client := m.client
	if rf.timeout > 0 {
		client = m.srv.Client(billing.WithTimeout(rf.timeout))
	}
	wantFired := 0
	location, elsewhere := redirectTarget(t, rf.target)
	if rf.fault.Kind != "" {
		f := rf.fault
		f.Route, f.Location = call.route, location
		m.srv.InjectFault(f)
		wantFired = 1
	}

	err := call.run(context.Background(), client, m, ref, fails)

	require.Equal(t, wantFired, m.srv.FaultsFired(), "the fault hit the call")
	assert.Zero(t, elsewhere(), "nothing went where a redirect pointed")
	movements := m.srv.Movements(ref)
	assert.Equal(t, rf.movements, movements, "movements recorded for the reference")
	checkMoneyAnswer(t, err, ref, movements)
	switch rf.answer {
	case answerSuccess:
		require.NoError(t, err)
	case answerUnknown:
		require.ErrorIs(t, err, billing.ErrOutcomeUnknown)
	}

	if call.kind == "" {
		checkoutTruth(t, m, ref)
		return
	}
	resolveWithTracker(t, m, call.kind, ref)
	if movements == 1 {
		want := pick(fails, "succeeded", "failed")
		assert.Equal(t, want, m.srv.MovementRecords(ref)[0].State, "the test number chose the outcome")
	}
}

// Faults in a row on a money call's route: every sequence of the matrix's request
// faults, one on each attempt, up to three, that the SDK can meet, for every call that
// succeeds or fails. A sequence grows only where the SDK sends again after its last
// fault (found by probing with a harmless fault, not listed), and each is met by a
// client whose attempts end with it, so that its last fault answers the call. Whatever
// the answers made the SDK do, at most one movement is made, a definite failure still
// means nothing moved, and the Tracker resolves the truth. A rate limiter that let the
// first request through and answers the re-send 429 as well is one such sequence.
func TestFaultSequencesMoneyMovements(t *testing.T) {
	var faults []requestFault
	for _, rf := range requestFaults {
		if rf.fault.Kind != "" && rf.timeout == 0 && rf.target == "" {
			faults = append(faults, rf)
		}
	}
	const longest = 3
	cells := 0
	for _, call := range moneyCalls {
		for _, fails := range []bool{false, true} {
			if fails && !call.canFail {
				continue
			}
			// Prefixes after which the SDK sends again, one fault longer each round.
			prefixes := [][]requestFault{nil}
			for length := 1; length <= longest; length++ {
				var next [][]requestFault
				for _, prefix := range prefixes {
					for _, last := range faults {
						seq := append(slices.Clone(prefix), last)
						if call.kind == "" && slices.ContainsFunc(seq, func(rf requestFault) bool { return rf.resendMeetsDuplicate }) {
							continue // checkout sessions are not deduplicated by client reference
						}
						if length > 1 { // a single fault is the matrix's cell
							cells++
							t.Run(sequenceName(call, fails, seq), func(t *testing.T) {
								t.Parallel()
								moneyCellUnderFaults(t, call, fails, seq)
							})
						}
						if length < longest && resendsAfter(t, call, fails, seq) {
							next = append(next, seq)
						}
					}
				}
				prefixes = next
			}
		}
	}
	t.Logf("%d cells of (call, outcome, faults of 2 or 3 attempts)", cells)
}

func sequenceName(call moneyCall, fails bool, seq []requestFault) string {
	names := make([]string, len(seq))
	for i, rf := range seq {
		names[i] = rf.name
	}
	return fmt.Sprintf("%s/%s/%s", call.name, pick(fails, "succeeds", "fails"), strings.Join(names, ", then "))
}

// underFaults makes call with the i-th fault of seq on its i-th request, through a
// client of as many attempts as seq has faults, so that the last answers the call.
func underFaults(t *testing.T, call moneyCall, fails bool, seq []billingtest.Fault) (*faultyMerchant, error) {
	m := newFaultyMerchant(t)
	if call.prepare != nil {
		call.prepare(t, m)
	}
	if call.kind != "" {
		require.NoError(t, m.tracker.Track(context.Background(), call.kind, sequenceRef))
	}
	for i, f := range seq {
		f.Route, f.Nth = call.route, i+1
		m.srv.InjectFault(f)
	}
	client := m.srv.Client(billing.WithRetry(len(seq), time.Millisecond, time.Millisecond))
	return m, call.run(context.Background(), client, m, sequenceRef, fails)
}

const sequenceRef = "sequence1"

func faultsOf(seq []requestFault) []billingtest.Fault {
	out := make([]billingtest.Fault, len(seq))
	for i, rf := range seq {
		out[i] = rf.fault
	}
	return out
}

// resendsAfter reports whether the SDK sends call again after the faults of seq answer
// it: a harmless fault after them fires only then.
func resendsAfter(t *testing.T, call moneyCall, fails bool, seq []requestFault) bool {
	probe := append(faultsOf(seq), billingtest.Fault{Kind: billingtest.FaultLatency, Latency: time.Millisecond})
	m, _ := underFaults(t, call, fails, probe)
	return m.srv.FaultsFired() == len(probe)
}

func moneyCellUnderFaults(t *testing.T, call moneyCall, fails bool, seq []requestFault) {
	m, err := underFaults(t, call, fails, faultsOf(seq))
	require.Equal(t, len(seq), m.srv.FaultsFired(), "every fault hit the call")
	const ref = sequenceRef
	movements := m.srv.Movements(ref)
	require.LessOrEqual(t, movements, 1, "movements recorded for the reference")
	checkMoneyAnswer(t, err, ref, movements)
	if call.kind == "" {
		checkoutTruth(t, m, ref)
		return
	}
	resolveWithTracker(t, m, call.kind, ref)
}

// checkoutTruth checks a checkout session: whether or not the SDK learned its reference,
// it stays PENDING and moves no money until a payer pays on the hosted page, and a
// session the merchant holds resolves as the sandbox says.
func checkoutTruth(t *testing.T, m *faultyMerchant, clientRef string) {
	t.Helper()
	records := m.srv.MovementRecords(clientRef)
	if len(records) == 0 {
		return
	}
	require.Len(t, records, 1)
	assert.Equal(t, "pending", records[0].State, "no payer has its URL")
	ctx := context.Background()
	sessions := m.srv.MovementRecords(records[0].ClientReference)
	require.Len(t, sessions, 1, "counted under its own reference too")

	p, err := m.client.Payments.Get(ctx, records[0].ClientReference)
	require.NoError(t, err)
	assert.True(t, p.IsPending())
	require.NoError(t, m.srv.CompleteCheckout(p.Reference, "CARD", "succeeded"))
	p, err = m.client.Payments.Get(ctx, p.Reference)
	require.NoError(t, err)
	assert.True(t, p.Succeeded())
	assert.Equal(t, "succeeded", m.srv.MovementRecords(clientRef)[0].State)
	assert.Equal(t, m.srv.MovementRecords(clientRef)[0].Fee, p.Fee)
}

// asyncFlows are the money calls whose final state arrives by callback.
func asyncFlows() []moneyCall {
	return slices.DeleteFunc(slices.Clone(moneyCalls), func(c moneyCall) bool { return c.kind == "" })
}

var callbackFaults = []struct {
	name  string
	fault billingtest.CallbackFault // Kind empty: none
	// forgesAmount marks a fault about amounts, which a mandate has none of.
	forgesAmount bool
}{
	{name: "none"},
	{name: "dropped", fault: billingtest.CallbackFault{Kind: billingtest.CallbackDropped}},
	{name: "duplicated", fault: billingtest.CallbackFault{Kind: billingtest.CallbackDuplicated}},
	{name: "reordered: stale pending after the final", fault: billingtest.CallbackFault{Kind: billingtest.CallbackStale}},
	{name: "reordered: contradicted after the final", fault: billingtest.CallbackFault{Kind: billingtest.CallbackContradicted}},
	{name: "delayed past the five minutes", fault: billingtest.CallbackFault{Kind: billingtest.CallbackDelayed}},
	{name: "delayed within the five minutes", fault: billingtest.CallbackFault{Kind: billingtest.CallbackDelayed, Delay: 2 * time.Minute}},
	{name: "forged failure while pending", fault: billingtest.CallbackFault{Kind: billingtest.CallbackForgedFailure}},
	{name: "forged amount before the genuine callback", fault: billingtest.CallbackFault{Kind: billingtest.CallbackForgedAmount}, forgesAmount: true},
}

func TestFaultMatrixCallbacks(t *testing.T) {
	for _, call := range asyncFlows() {
		for _, fails := range []bool{false, true} {
			if fails && !call.canFail {
				continue
			}
			for _, cf := range callbackFaults {
				if cf.forgesAmount && call.kind == billing.KindMandate {
					continue
				}
				name := fmt.Sprintf("%s/%s/%s", call.name, pick(fails, "succeeds", "fails"), cf.name)
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					m := newFaultyMerchant(t)
					if call.prepare != nil {
						call.prepare(t, m)
					}
					const ref = "cbmatrix1"
					wantFired := 0
					if cf.fault.Kind != "" {
						f := cf.fault
						f.Reference = ref
						m.srv.InjectCallbackFault(f)
						wantFired = 1
					}
					require.NoError(t, m.tracker.Track(context.Background(), call.kind, ref))
					require.NoError(t, call.run(context.Background(), m.client, m, ref, fails))

					// The merchant awaits while time passes: the callbacks, the five
					// minutes, the status check, late callbacks and redeliveries.
					type awaited struct {
						o   *billing.Outcome
						err error
					}
					first := make(chan awaited, 1)
					go func() {
						o, err := m.tracker.Await(context.Background(), call.kind, ref)
						first <- awaited{o, err}
					}()
					for _, step := range []time.Duration{0, time.Minute, 4 * time.Minute, 2 * time.Minute, 10 * time.Minute, time.Hour} {
						m.srv.Advance(step)
					}
					var got awaited
					select {
					case got = <-first:
					case <-time.After(30 * time.Second):
						t.Fatal("Await did not return after the sandbox resolved the movement")
					}
					assert.Equal(t, wantFired, m.srv.CallbackFaultsFired(), "the fault hit the callback")
					checkOutcomeIsTheTruth(t, m.srv, got.o, got.err, ref)

					// Whatever came after the first answer did not change it.
					o, err := m.tracker.Await(context.Background(), call.kind, ref)
					checkOutcomeIsTheTruth(t, m.srv, o, err, ref)
					assert.Equal(t, got.o.State, o.State)
				})
			}
		}
	}
}

// TestFaultMatrixForgedCallbacks forges callbacks against a merchant whose code runs in
// OnOutcome and who, as the README says, sends an order again (under a new reference)
// only after a failure. A forged failure arrives while the movement is pending, a forged
// amount just before the genuine callback: neither may settle anything, reach the
// merchant's code, or make it pay twice.
func TestFaultMatrixForgedCallbacks(t *testing.T) {
	for _, call := range asyncFlows() {
		for _, fails := range []bool{false, true} {
			if fails && !call.canFail {
				continue
			}
			for _, cf := range callbackFaults {
				if !strings.HasPrefix(cf.name, "forged") || (cf.forgesAmount && call.kind == billing.KindMandate) {
					continue
				}
				name := fmt.Sprintf("%s/%s/%s", call.name, pick(fails, "succeeds", "fails"), cf.name)
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					const ref, retryRef = "forged1", "forged1again"
					ctx := context.Background()
					// A forged failure comes ten minutes before the resolution, so the
					// test sees that it settled nothing; a forged amount comes with the
					// genuine callback, before any status check could settle the truth.
					m := newFaultyMerchant(t, billingtest.WithResolveAfter(pick(cf.forgesAmount, 10*time.Minute, 0)))
					if call.prepare != nil {
						call.prepare(t, m)
					}
					// The merchant's code: it sees every final outcome, and sends the
					// order again after a failure.
					reported := make(chan *billing.Outcome, 8)
					var retryErr error
					clock := &steppedClock{Clock: m.srv.Clock(), slept: make(chan struct{}, 64)}
					// Retention outlasts the test's hours, so the last Await still finds
					// the reported outcome.
					m.useTracker(t, billing.TrackerOptions{Clock: clock, GiveUpAfter: matrixGiveUp, Retention: 1000 * time.Hour, OnOutcome: func(ctx context.Context, o *billing.Outcome) error {
						if o.ClientReference == ref && o.Failed() {
							retryErr = call.run(ctx, m.client, m, retryRef, fails)
						}
						reported <- o
						return nil
					}})
					runCtx, stop := context.WithCancel(ctx)
					running := make(chan struct{})
					go func() { _ = m.tracker.Run(runCtx); close(running) }()
					t.Cleanup(func() { stop(); <-running })

					f := cf.fault
					f.Reference = ref
					m.srv.InjectCallbackFault(f)
					require.NoError(t, m.tracker.Track(ctx, call.kind, ref))
					require.NoError(t, call.run(ctx, m.client, m, ref, fails))
					type awaited struct {
						o   *billing.Outcome
						err error
					}
					first := make(chan awaited, 1)
					go func() {
						o, err := m.tracker.Await(ctx, call.kind, ref)
						first <- awaited{o, err}
					}()

					m.srv.Advance(0)
					key := storekit.Movement{Kind: string(call.kind), ClientReference: ref}.Key()
					if f.Kind == billingtest.CallbackForgedFailure {
						assert.Equal(t, 1, m.srv.CallbackFaultsFired(), "the forgery came while the movement was pending")
						e, err := m.tracker.Store().Get(ctx, key)
						require.NoError(t, err)
						assert.Nil(t, e.Final, "a forged failure settles nothing while the status check says pending")
					}
					for _, step := range []time.Duration{time.Minute, 4 * time.Minute, 2 * time.Minute, 10 * time.Minute, time.Hour} {
						m.srv.Advance(step)
					}
					var got awaited
					select {
					case got = <-first:
					case <-time.After(30 * time.Second):
						t.Fatal("Await did not return after the sandbox resolved the movement")
					}
					assert.Equal(t, 1, m.srv.CallbackFaultsFired(), "the fault hit")
					checkOutcomeIsTheTruth(t, m.srv, got.o, got.err, ref)

					// Run reports the outcome once it wakes: move the clock each time
					// it sleeps until it has.
					var seen *billing.Outcome
					deadline := time.After(30 * time.Second)
					for seen == nil {
						select {
						case seen = <-reported:
						case <-clock.slept:
							m.srv.Advance(time.Second)
						case <-deadline:
							t.Fatal("OnOutcome was never called")
						}
					}
					truth := m.srv.MovementRecords(ref)
					require.Len(t, truth, 1, "one movement under the reference")
					assert.Equal(t, truth[0].State == "succeeded", seen.Succeeded(), "the merchant's code was told %s, the sandbox says %s", seen.State, truth[0].State)
					assert.Equal(t, truth[0].State == "failed", seen.Failed(), "the merchant's code was told %s, the sandbox says %s", seen.State, truth[0].State)
					if seen.Succeeded() && call.kind != billing.KindMandate {
						assert.Equal(t, truth[0].Amount, seen.Amount, "the merchant's code sees the service's amount, never the forged one")
					}
					retries := m.srv.MovementRecords(retryRef)
					if truth[0].State == "failed" {
						require.NoError(t, retryErr)
						assert.Len(t, retries, 1, "a true failure is sent again, once")
					} else {
						assert.Empty(t, retries, "a movement that did not fail is never sent again")
					}
					again, cancel := context.WithTimeout(ctx, 30*time.Second)
					defer cancel()
					o, err := m.tracker.Await(again, call.kind, ref)
					checkOutcomeIsTheTruth(t, m.srv, o, err, ref)
				})
			}
		}
	}
}

// useTracker gives the merchant a Tracker with opts (on the sandbox's clock unless
// opts has one) and mounts its handler as the callback URL.
func (m *faultyMerchant) useTracker(t *testing.T, opts billing.TrackerOptions) {
	t.Helper()
	if opts.Clock == nil {
		opts.Clock = m.srv.Clock()
	}
	m.tracker = billing.NewTracker(m.client, opts)
	endpoint := httptest.NewServer(m.tracker.Handler(billing.WithDedupe(0), billing.WithStatusCheckConfirmation(m.client)))
	t.Cleanup(endpoint.Close)
	m.callbackURL = endpoint.URL + "/callbacks"
}

// statusRoutes are the status checks the Tracker falls back on, by kind.
var statusRoutes = map[billing.Kind]string{
	billing.KindReceive:      "GET /v1/payments/{reference}",
	billing.KindSend:         "GET /v1/payments/{reference}",
	billing.KindBankTransfer: "GET /v1/merchants/{account}/transactions/status",
	billing.KindDirectDebit:  "GET /v1/payments/direct-debit/status/{clientReference}",
	billing.KindMandate:      "GET /v1/mandates/preapproval/{clientReferenceId}/status",
}

// TestFaultMatrixStatusChecks faults the Tracker's fallback: the callback is dropped, the
// movement is still pending at the five-minute status check, and that status check meets
// a fault. The Tracker must still end with the truth.
func TestFaultMatrixStatusChecks(t *testing.T) {
	faults := append(slices.Clone(retriedFaults),
		requestFault{name: "latency", fault: billingtest.Fault{Kind: billingtest.FaultLatency, Latency: 20 * time.Millisecond}},
		requestFault{name: "code 0005", fault: billingtest.Fault{Kind: billingtest.FaultCode0005}},
	)
	for _, call := range asyncFlows() {
		for _, fails := range []bool{false, true} {
			if fails && !call.canFail {
				continue
			}
			for _, rf := range faults {
				if rf.timeout > 0 {
					continue // the Tracker's client keeps the default timeout
				}
				name := fmt.Sprintf("%s/%s/%s", call.name, pick(fails, "succeeds", "fails"), rf.name)
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					m := newFaultyMerchant(t, billingtest.WithResolveAfter(10*time.Minute))
					clock := &steppedClock{Clock: m.srv.Clock(), slept: make(chan struct{}, 64)}
					m.tracker = billing.NewTracker(m.client, billing.TrackerOptions{Clock: clock, GiveUpAfter: matrixGiveUp})
					if call.prepare != nil {
						call.prepare(t, m)
					}
					const ref = "stmatrix1"
					m.srv.InjectCallbackFault(billingtest.CallbackFault{Kind: billingtest.CallbackDropped, Reference: ref})
					require.NoError(t, m.tracker.Track(context.Background(), call.kind, ref))
					require.NoError(t, call.run(context.Background(), m.client, m, ref, fails))
					f := rf.fault
					f.Route = statusRoutes[call.kind]
					m.srv.InjectFault(f)

					type awaited struct {
						o   *billing.Outcome
						err error
					}
					result := make(chan awaited, 1)
					go func() {
						o, err := m.tracker.Await(context.Background(), call.kind, ref)
						result <- awaited{o, err}
					}()
					// Each step waits for the Tracker to sleep again, so the status
					// check at five minutes runs while the movement is still pending.
					var got *awaited
					wait := func() {
						select {
						case <-clock.slept:
						case r := <-result:
							got = &r
						case <-time.After(30 * time.Second):
							t.Fatal("the Tracker neither slept nor answered")
						}
					}
					wait()
					for _, step := range []time.Duration{0, 5 * time.Minute, time.Minute, 5 * time.Minute, time.Hour} {
						if got != nil {
							break
						}
						m.srv.Advance(step)
						wait()
					}
					require.NotNil(t, got, "Await answered once the movement was final")
					assert.Equal(t, 1, m.srv.FaultsFired(), "the fault hit the status check")
					checkOutcomeIsTheTruth(t, m.srv, got.o, got.err, ref)
				})
			}
		}
	}
}

// steppedClock is the sandbox's clock telling when the Tracker goes to sleep, so a test
// moves time only once the Tracker has acted on the last move.
type steppedClock struct {
	billing.Clock
	slept chan struct{}
}

func (c *steppedClock) After(d time.Duration) <-chan time.Time {
	ch := c.Clock.After(d)
	select {
	case c.slept <- struct{}{}:
	default:
	}
	return ch
}

// readOrIdempotentWrite is a call the SDK may send again: it must come through every
// fault it is retried on, and leave one effect.
type readOrIdempotentWrite struct {
	name  string
	route string
	// prepare makes what the call reads; it returns the call, which checks its own
	// result, and for a write the count of its effects on the server.
	prepare func(t *testing.T, m *faultyMerchant) (run func(ctx context.Context, c *billing.Client) error, effects func() int)
}

// moneyMoved makes a movement with the matrix's numbers, resolved by the sandbox.
func moneyMoved(t *testing.T, m *faultyMerchant, name, ref string) {
	t.Helper()
	i := slices.IndexFunc(moneyCalls, func(c moneyCall) bool { return c.name == name })
	call := moneyCalls[i]
	if call.prepare != nil {
		call.prepare(t, m)
	}
	require.NoError(t, call.run(context.Background(), m.client, m, ref, false))
	m.srv.Advance(0)
}

var readsAndIdempotentWrites = []readOrIdempotentWrite{
	{
		name: "customer get", route: "GET /v1/customers/{id}",
		prepare: func(t *testing.T, m *faultyMerchant) (func(context.Context, *billing.Client) error, func() int) {
			cust, err := m.client.Customers.Create(context.Background(), &billing.CustomerCreateParams{Email: "ama@example.com", Name: "Ama"})
			require.NoError(t, err)
			return func(ctx context.Context, c *billing.Client) error {
				got, err := c.Customers.Get(ctx, cust.ID)
				if err == nil && got.Email != "ama@example.com" {
					return fmt.Errorf("got customer %+v", got)
				}
				return err
			}, nil
		},
	},
	{
		name: "customer list", route: "GET /v1/customers",
		prepare: func(t *testing.T, m *faultyMerchant) (func(context.Context, *billing.Client) error, func() int) {
			for _, name := range []string{"Ama", "Kofi", "Esi"} {
				_, err := m.client.Customers.Create(context.Background(), &billing.CustomerCreateParams{Email: name + "@example.com", Name: name})
				require.NoError(t, err)
			}
			return func(ctx context.Context, c *billing.Client) error {
				page, err := c.Customers.ListPage(ctx, &billing.CustomerListParams{ListParams: billing.ListParams{Limit: 10}})
				if err == nil && len(page.Items) != 3 {
					return fmt.Errorf("listed %d customers, want 3", len(page.Items))
				}
				return err
			}, nil
		},
	},
	statusCheckRead("receive", "GET /v1/payments/{reference}", func(ctx context.Context, c *billing.Client, ref string) (interface{ Succeeded() bool }, error) {
		return c.Payments.ReceiveStatus(ctx, ref)
	}),
	statusCheckRead("send", "GET /v1/payments/{reference}", func(ctx context.Context, c *billing.Client, ref string) (interface{ Succeeded() bool }, error) {
		return c.Payouts.SendStatus(ctx, ref)
	}),
	statusCheckRead("send-to-bank", "GET /v1/merchants/{account}/transactions/status", func(ctx context.Context, c *billing.Client, ref string) (interface{ Succeeded() bool }, error) {
		return c.Payouts.BankTransferStatus(ctx, &billing.BankTransferStatusParams{ClientReference: ref})
	}),
	statusCheckRead("direct-debit charge", "GET /v1/payments/direct-debit/status/{clientReference}", func(ctx context.Context, c *billing.Client, ref string) (interface{ Succeeded() bool }, error) {
		return c.Mandates.ChargeStatus(ctx, ref)
	}),
	statusCheckRead("mandate create", "GET /v1/mandates/preapproval/{clientReferenceId}/status", func(ctx context.Context, c *billing.Client, ref string) (interface{ Succeeded() bool }, error) {
		return c.Mandates.Status(ctx, ref)
	}),
	{
		name: "checkout get", route: "GET /v1/payments/{reference}",
		prepare: func(t *testing.T, m *faultyMerchant) (func(context.Context, *billing.Client) error, func() int) {
			p, err := m.client.Payments.CreateCheckout(context.Background(), &billing.CheckoutParams{Amount: matrixAmount})
			require.NoError(t, err)
			require.NoError(t, m.srv.CompleteCheckout(p.Reference, "MOBILE_MONEY", "succeeded"))
			return func(ctx context.Context, c *billing.Client) error {
				got, err := c.Payments.Get(ctx, p.Reference)
				return succeeded(got, err)
			}, nil
		},
	},
	{
		name: "meter event with idempotency key", route: "POST /v1/meters/{id}/events",
		prepare: func(t *testing.T, m *faultyMerchant) (func(context.Context, *billing.Client) error, func() int) {
			meter, err := m.client.Meters.Create(context.Background(), &billing.MeterCreateParams{Name: "API calls", EventName: "api.call"})
			require.NoError(t, err)
			record := func(ctx context.Context, c *billing.Client) error {
				_, err := c.Meters.RecordEvent(ctx, meter.ID, &billing.MeterEventParams{Value: billing.Value(3.0), IdempotencyKey: "call-42"})
				return err
			}
			recorded := func() int {
				n := 0
				for ev, err := range m.client.Meters.Events(context.Background(), meter.ID, nil) {
					require.NoError(t, err)
					if ev.IdempotencyKey == "call-42" {
						n++
					}
				}
				return n
			}
			return record, recorded
		},
	},
}

// succeeded turns a status check's answer into an error unless it says the money moved.
func succeeded(st interface{ Succeeded() bool }, err error) error {
	if err == nil && !st.Succeeded() {
		return fmt.Errorf("the status check does not say succeeded: %+v", st)
	}
	return err
}

// statusCheckRead is the status check of a money call as a read: the movement is made
// and resolved first, and the check must say it succeeded.
func statusCheckRead(call, route string, check func(ctx context.Context, c *billing.Client, ref string) (interface{ Succeeded() bool }, error)) readOrIdempotentWrite {
	return readOrIdempotentWrite{
		name: call + " status check", route: route,
		prepare: func(t *testing.T, m *faultyMerchant) (func(context.Context, *billing.Client) error, func() int) {
			const ref = "readstatus1"
			moneyMoved(t, m, call, ref)
			return func(ctx context.Context, c *billing.Client) error { return succeeded(check(ctx, c, ref)) }, nil
		},
	}
}

var retriedFaults = []requestFault{
	{name: "http 500", fault: billingtest.Fault{Kind: billingtest.FaultHTTP500}},
	{name: "http 502", fault: billingtest.Fault{Kind: billingtest.FaultHTTP502}},
	{name: "http 503 with Retry-After", fault: billingtest.Fault{Kind: billingtest.FaultHTTP503}},
	{name: "http 429 with Retry-After", fault: billingtest.Fault{Kind: billingtest.FaultHTTP429}},
	{name: "reset before the work", fault: billingtest.Fault{Kind: billingtest.FaultResetBeforeWork}},
	{name: "response lost", fault: billingtest.Fault{Kind: billingtest.FaultResponseLost}},
	{name: "truncated body", fault: billingtest.Fault{Kind: billingtest.FaultTruncatedBody}},
	{name: "malformed json", fault: billingtest.Fault{Kind: billingtest.FaultMalformedJSON}},
	{name: "latency past the timeout", fault: billingtest.Fault{Kind: billingtest.FaultLatency, Latency: time.Minute}, timeout: 200 * time.Millisecond},
}

func TestFaultMatrixReadsAndIdempotentWritesAreRetried(t *testing.T) {
	for _, op := range readsAndIdempotentWrites {
		for _, rf := range retriedFaults {
			t.Run(op.name+"/"+rf.name, func(t *testing.T) {
				t.Parallel()
				m := newFaultyMerchant(t)
				run, effects := op.prepare(t, m)
				client := m.client
				if rf.timeout > 0 {
					client = m.srv.Client(billing.WithTimeout(rf.timeout), billing.WithRetry(billing.DefaultMaxAttempts, time.Millisecond, 5*time.Millisecond))
				}
				f := rf.fault
				f.Route = op.route
				m.srv.InjectFault(f)

				require.NoError(t, run(context.Background(), client), "sent again after the fault, and answered")
				assert.Equal(t, 1, m.srv.FaultsFired(), "the fault hit the call")
				if effects != nil {
					assert.Equal(t, 1, effects(), "one effect, however often it was sent")
				}
			})
		}
	}
}

func TestRetryAfterOfTheSandboxIsWaitedForByReads(t *testing.T) {
	m := newFaultyMerchant(t)
	_, err := m.client.Customers.Create(context.Background(), &billing.CustomerCreateParams{Email: "ama@example.com", Name: "Ama"})
	require.NoError(t, err)
	m.srv.InjectFault(billingtest.Fault{Route: "GET /v1/customers", Kind: billingtest.FaultHTTP503, RetryAfter: time.Second})
	start := time.Now()
	_, err = m.client.Customers.ListPage(context.Background(), nil)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, time.Since(start), time.Second, "the retry waited the Retry-After, not the client's 1-5ms backoff")
}
