package billing_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
)

// trackedMerchant is a merchant against the sandbox: a client, a Tracker on the
// sandbox's clock, and a callback endpoint that confirms successes and feeds the Tracker.
type trackedMerchant struct {
	srv         *billingtest.Server
	client      *billing.Client
	tracker     *billing.Tracker
	callbackURL string
}

func newTrackedMerchant(t *testing.T, opts ...billingtest.Option) *trackedMerchant {
	t.Helper()
	srv := billingtest.NewServer(t, append([]billingtest.Option{billingtest.WithManualClock()}, opts...)...)
	c := srv.Client()
	tr := billing.NewTracker(c, billing.TrackerOptions{Clock: srv.Clock()})
	endpoint := httptest.NewServer(tr.Handler(billing.WithDedupe(0), billing.WithStatusCheckConfirmation(c)))
	t.Cleanup(endpoint.Close)
	return &trackedMerchant{srv: srv, client: c, tracker: tr, callbackURL: endpoint.URL + "/callbacks"}
}

func (m *trackedMerchant) receive(t *testing.T, ref, phone string) {
	t.Helper()
	_, err := m.client.Payments.Receive(context.Background(), &billing.ReceiveParams{
		Amount: 5000, Phone: phone, Provider: billing.ProviderMTN, Description: "Order " + ref,
		ClientReference: ref, CallbackURL: m.callbackURL,
	})
	require.NoError(t, err)
	require.NoError(t, m.tracker.Track(context.Background(), billing.KindReceive, ref))
}

func (m *trackedMerchant) send(t *testing.T, ref, phone string) {
	t.Helper()
	_, err := m.client.Payouts.Send(context.Background(), &billing.SendParams{
		Amount: 2000, Phone: phone, Provider: billing.ProviderTelecel, Name: "Kofi", Description: "Refund " + ref,
		ClientReference: ref, CallbackURL: m.callbackURL,
	})
	require.NoError(t, err)
	require.NoError(t, m.tracker.Track(context.Background(), billing.KindSend, ref))
}

// statuses returns the HTTP statuses the callback endpoint answered, in order.
func (m *trackedMerchant) statuses() []int {
	var out []int
	for _, d := range m.srv.Deliveries() {
		if strings.HasPrefix(d.URL, m.callbackURL) {
			out = append(out, d.Status)
		}
	}
	return out
}

// statusesFor is statuses, of the deliveries that name ref.
func (m *trackedMerchant) statusesFor(ref string) []int {
	var out []int
	for _, d := range m.srv.Deliveries() {
		if strings.HasPrefix(d.URL, m.callbackURL) && strings.Contains(string(d.Body), `"`+ref+`"`) {
			out = append(out, d.Status)
		}
	}
	return out
}

func TestTrackerEndToEndByCallback(t *testing.T) { onEachWire(t, testTrackerByCallback) }

func testTrackerByCallback(t *testing.T, wire billingtest.Wire) {
	m := newTrackedMerchant(t, billingtest.WithWire(wire))
	m.receive(t, "e2eReceive1", "233241234567")
	m.send(t, "e2eSend1", "233201234567")
	m.srv.Advance(0) // the sandbox resolves both and posts their callbacks

	paid := awaitOutcome(t, m.tracker, billing.KindReceive, "e2eReceive1")
	assert.True(t, paid.Succeeded())
	assert.Equal(t, billing.SourceCallback, paid.Source)
	assert.Equal(t, int64(5000), paid.Amount)
	assert.Equal(t, int64(50), paid.Charges)
	assert.NotEmpty(t, paid.ExternalTransactionID)

	sent := awaitOutcome(t, m.tracker, billing.KindSend, "e2eSend1")
	assert.True(t, sent.Succeeded())
	assert.Equal(t, billing.SourceCallback, sent.Source)
	assert.Equal(t, int64(2000), sent.Amount)
	assert.Equal(t, []int{http.StatusOK, http.StatusOK}, m.statuses(), "both confirmed by the status check and taken")
}

func TestTrackerEndToEndFailuresByCallback(t *testing.T) {
	onEachWire(t, testTrackerFailuresByCallback)
}

func testTrackerFailuresByCallback(t *testing.T, wire billingtest.Wire) {
	m := newTrackedMerchant(t, billingtest.WithWire(wire))
	m.receive(t, "e2eWrongPin", "233241230001")
	m.send(t, "e2eNoBalance", "233201230004")
	m.srv.Advance(0)

	if failureUnconfirmable(wire, billing.KindReceive) {
		assert.Equal(t, []int{http.StatusServiceUnavailable}, m.statusesFor("e2eWrongPin"), "a failure nothing confirms is not taken")
		assertCollectionUnpaid(t, m.client, billing.KindReceive, "e2eWrongPin")
	} else {
		wrongPin := awaitOutcome(t, m.tracker, billing.KindReceive, "e2eWrongPin")
		assert.True(t, wrongPin.Failed())
		assert.Equal(t, billing.CodeFailed, wrongPin.Code)
	}

	noBalance := awaitOutcome(t, m.tracker, billing.KindSend, "e2eNoBalance")
	assert.True(t, noBalance.Failed())
	if wire == billingtest.WireProvider {
		// The provider's status check names no reason; the callback's code is its
		// sender's word, not a confirmed fact.
		assert.Equal(t, billing.CodeFailed, noBalance.Code)
	} else {
		assert.Equal(t, billing.CodeInsufficientBalance, noBalance.Code)
	}
	assert.Empty(t, noBalance.ExternalTransactionID)
}

func TestTrackerEndToEndDroppedCallbackFallsBackAfterFiveMinutes(t *testing.T) {
	onEachWire(t, testTrackerDroppedCallbackFallsBackAfterFiveMinutes)
}

func testTrackerDroppedCallbackFallsBackAfterFiveMinutes(t *testing.T, wire billingtest.Wire) {
	m := newTrackedMerchant(t, billingtest.WithWire(wire))
	m.srv.InjectCallbackFault(billingtest.CallbackFault{Kind: billingtest.CallbackDropped, Reference: "e2eDropped"})
	m.receive(t, "e2eDropped", "233241234567")
	m.srv.Advance(0)
	assert.Empty(t, m.statuses(), "the callback was dropped")

	result := make(chan *billing.Outcome, 1)
	go func() {
		o, err := m.tracker.Await(context.Background(), billing.KindReceive, "e2eDropped")
		assert.NoError(t, err)
		result <- o
	}()
	m.srv.Advance(5*time.Minute - time.Second)
	assert.Empty(t, result, "no status check before five minutes")
	m.srv.Advance(time.Second)
	o := <-result
	assert.True(t, o.Succeeded())
	assert.Equal(t, billing.SourceStatusCheck, o.Source)
	assert.Equal(t, billing.CodeSuccess, o.Code)
	assert.Equal(t, int64(5000), o.Amount)
}

func TestTrackerEndToEndSilentNumberIsResolvedByStatusCheck(t *testing.T) {
	onEachWire(t, testTrackerSilentNumberIsResolvedByStatusCheck)
}

func testTrackerSilentNumberIsResolvedByStatusCheck(t *testing.T, wire billingtest.Wire) {
	m := newTrackedMerchant(t, billingtest.WithWire(wire))
	m.send(t, "e2eSilent", "233201230002") // 0002: no callback ever
	m.srv.Advance(5 * time.Minute)
	o := awaitOutcome(t, m.tracker, billing.KindSend, "e2eSilent")
	assert.True(t, o.Succeeded())
	assert.Equal(t, billing.SourceStatusCheck, o.Source)
}

func TestTrackerEndToEndDuplicateAndStaleCallbacks(t *testing.T) {
	onEachWire(t, testTrackerDuplicateAndStaleCallbacks)
}

func testTrackerDuplicateAndStaleCallbacks(t *testing.T, wire billingtest.Wire) {
	m := newTrackedMerchant(t, billingtest.WithWire(wire))
	m.srv.InjectCallbackFault(billingtest.CallbackFault{Kind: billingtest.CallbackDuplicated, Reference: "e2eTwice"})
	m.srv.InjectCallbackFault(billingtest.CallbackFault{Kind: billingtest.CallbackStale, Reference: "e2eStale"})
	m.receive(t, "e2eTwice", "233241234567")
	m.send(t, "e2eStale", "233201234567")
	m.srv.Advance(0)
	assert.Equal(t, []int{http.StatusOK, http.StatusOK, http.StatusOK, http.StatusOK}, m.statuses(),
		"the duplicate is answered 200 without handling it again; the stale pending notice is taken and ignored")

	for kind, ref := range map[billing.Kind]string{billing.KindReceive: "e2eTwice", billing.KindSend: "e2eStale"} {
		o, err := m.tracker.Await(context.Background(), kind, ref)
		require.NoError(t, err)
		assert.True(t, o.Succeeded(), ref)
		assert.Equal(t, billing.SourceCallback, o.Source, ref)
	}
}

func TestTrackerEndToEndCallbackDelayedPastTheWait(t *testing.T) {
	onEachWire(t, testTrackerCallbackDelayedPastTheWait)
}

func testTrackerCallbackDelayedPastTheWait(t *testing.T, wire billingtest.Wire) {
	m := newTrackedMerchant(t, billingtest.WithWire(wire))
	m.srv.InjectCallbackFault(billingtest.CallbackFault{Kind: billingtest.CallbackDelayed, Reference: "e2eLate"})
	m.receive(t, "e2eLate", "233241234567")
	m.srv.Advance(5 * time.Minute)
	o := awaitOutcome(t, m.tracker, billing.KindReceive, "e2eLate")
	assert.True(t, o.Succeeded())
	assert.Equal(t, billing.SourceStatusCheck, o.Source, "the status check answered first")

	m.srv.Advance(time.Minute) // the late callback arrives and agrees
	assert.Equal(t, []int{http.StatusOK}, m.statuses())
	o = awaitOutcome(t, m.tracker, billing.KindReceive, "e2eLate")
	assert.True(t, o.Succeeded())
}

func TestTrackerEndToEndRefusesAForgedSuccess(t *testing.T) {
	onEachWire(t, testTrackerRefusesAForgedSuccess)
}

func testTrackerRefusesAForgedSuccess(t *testing.T, wire billingtest.Wire) {
	m := newTrackedMerchant(t, billingtest.WithWire(wire))
	m.receive(t, "e2eUnpaid", "233241230004") // 0004: pending for ten minutes, then paid
	m.srv.Advance(0)

	forged := `{"ResponseCode":"0000","Message":"success","Data":{"ClientReference":"e2eUnpaid","Amount":50.00,"TransactionId":"forged","PaymentDate":"2025-01-01T00:00:00Z"}}`
	resp, err := http.Post(m.callbackURL, "application/json", strings.NewReader(forged))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "the status check says the receive is unpaid")

	m.srv.Advance(10 * time.Minute) // the real payment, and its callback
	o := awaitOutcome(t, m.tracker, billing.KindReceive, "e2eUnpaid")
	assert.True(t, o.Succeeded())
	assert.NotEqual(t, "forged", o.TransactionID, "the outcome is the service's, not the forger's")

	// A forged success for a receive that failed is contradicted outright.
	m.receive(t, "e2eFailed", "233241230001")
	m.srv.Advance(0)
	resp, err = http.Post(m.callbackURL, "application/json", strings.NewReader(strings.ReplaceAll(forged, "e2eUnpaid", "e2eFailed")))
	require.NoError(t, err)
	resp.Body.Close()
	if failureUnconfirmable(wire, billing.KindReceive) {
		// The provider's status check says Unpaid under 0000, failed or not yet: it cannot
		// contradict the claim, only decline to confirm it; nor the genuine failure.
		assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
		assertCollectionUnpaid(t, m.client, billing.KindReceive, "e2eFailed")
		return
	}
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
	o = awaitOutcome(t, m.tracker, billing.KindReceive, "e2eFailed")
	assert.True(t, o.Failed())
}

func TestTrackerEndToEndBankTransferMandateAndDirectDebit(t *testing.T) {
	onEachWire(t, testTrackerBankTransferMandateAndDirectDebit)
}

func testTrackerBankTransferMandateAndDirectDebit(t *testing.T, wire billingtest.Wire) {
	m := newTrackedMerchant(t, billingtest.WithWire(wire))
	ctx := context.Background()
	_, err := m.client.Payouts.SendToBank(ctx, &billing.BankTransferParams{
		BankCode: "300302", Amount: 10000, PrimaryCallbackURL: m.callbackURL, Description: "Supplier invoice",
		BankAccountNumber: "1441000123456", ClientReference: "e2eBank1",
	})
	require.NoError(t, err)
	require.NoError(t, m.tracker.Track(context.Background(), billing.KindBankTransfer, "e2eBank1"))

	_, err = m.client.Mandates.Create(ctx, &billing.MandateCreateParams{
		ClientReferenceID: "e2eMandate1", CustomerMSISDN: "233241234567", Channel: billing.DirectDebitChannelMTN, CallbackURL: m.callbackURL,
	})
	require.NoError(t, err)
	require.NoError(t, m.tracker.Track(context.Background(), billing.KindMandate, "e2eMandate1"))
	m.srv.Advance(0)

	bank := awaitOutcome(t, m.tracker, billing.KindBankTransfer, "e2eBank1")
	assert.True(t, bank.Succeeded())
	assert.Equal(t, int64(10000), bank.Amount)
	assert.Equal(t, int64(100), bank.Charges)

	mandate := awaitOutcome(t, m.tracker, billing.KindMandate, "e2eMandate1")
	assert.True(t, mandate.Succeeded())
	assert.Equal(t, billing.SourceCallback, mandate.Source)
	assert.NotEmpty(t, mandate.TransactionID, "the servicePreApprovalId")

	m.srv.InjectCallbackFault(billingtest.CallbackFault{Kind: billingtest.CallbackDropped, Reference: "e2eDebit1"})
	_, err = m.client.Mandates.Charge(ctx, &billing.DirectDebitParams{
		CustomerMSISDN: "233241234567", Channel: billing.DirectDebitChannelMTN, Amount: 4999,
		PrimaryCallbackURL: m.callbackURL, Description: "Monthly plan", ClientReference: "e2eDebit1",
	})
	require.NoError(t, err)
	require.NoError(t, m.tracker.Track(context.Background(), billing.KindDirectDebit, "e2eDebit1"))
	m.srv.Advance(5 * time.Minute)
	debit := awaitOutcome(t, m.tracker, billing.KindDirectDebit, "e2eDebit1")
	assert.True(t, debit.Succeeded())
	assert.Equal(t, billing.SourceStatusCheck, debit.Source)
	assert.Equal(t, int64(4999), debit.Amount)
}

func TestTrackerEndToEndResolvesALostResponse(t *testing.T) {
	onEachWire(t, testTrackerResolvesALostResponse)
}

func testTrackerResolvesALostResponse(t *testing.T, wire billingtest.Wire) {
	m := newTrackedMerchant(t, billingtest.WithWire(wire))
	m.srv.InjectFault(billingtest.Fault{Route: "POST /v1/payments/receive", Kind: billingtest.FaultResponseLost})
	_, err := m.client.Payments.Receive(context.Background(), &billing.ReceiveParams{
		Amount: 5000, Phone: "233241234567", Provider: billing.ProviderMTN, Description: "Order",
		ClientReference: "e2eLost1", CallbackURL: m.callbackURL,
	})
	var unknown *billing.OutcomeUnknownError
	require.ErrorAs(t, err, &unknown)
	require.NoError(t, m.tracker.Track(context.Background(), billing.KindReceive, unknown.ClientReference))

	m.srv.Advance(0)
	o, err := m.tracker.Await(context.Background(), billing.KindReceive, unknown.ClientReference)
	require.NoError(t, err)
	assert.True(t, o.Succeeded(), "the receive went through; its callback says so")
	assert.Equal(t, 1, m.srv.Movements("e2eLost1"), "and it moved money once")
}

func TestTrackerEndToEndManyConcurrentAwaits(t *testing.T) {
	m := newTrackedMerchant(t)
	const n = 50
	for i := range n {
		ref := fmt.Sprintf("e2eMany%d", i)
		if i%2 == 1 {
			m.srv.InjectCallbackFault(billingtest.CallbackFault{Kind: billingtest.CallbackDropped, Reference: ref})
		}
		m.receive(t, ref, "233241234567")
	}
	m.srv.Advance(0)
	var wg sync.WaitGroup
	outcomes := make([]*billing.Outcome, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o, err := m.tracker.Await(context.Background(), billing.KindReceive, fmt.Sprintf("e2eMany%d", i))
			assert.NoError(t, err)
			outcomes[i] = o
		}()
	}
	m.srv.Advance(5 * time.Minute)
	wg.Wait()
	for i, o := range outcomes {
		require.NotNil(t, o)
		assert.True(t, o.Succeeded())
		want := billing.SourceCallback
		if i%2 == 1 {
			want = billing.SourceStatusCheck
		}
		assert.Equal(t, want, o.Source, "e2eMany%d", i)
	}
}
