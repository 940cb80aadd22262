package billing_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
)

// awaitBound bounds a test's Await in real time, so a movement the SDK can never resolve
// fails the test instead of hanging it. It is no timing assertion: the sandbox's clock
// decides everything.
const awaitBound = 20 * time.Second

// awaitOutcome awaits a movement, failing the test if it does not resolve.
func awaitOutcome(t *testing.T, tr *billing.Tracker, kind billing.Kind, ref string) *billing.Outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), awaitBound)
	defer cancel()
	o, err := tr.Await(ctx, kind, ref)
	require.NoError(t, err, "%s %s never resolved", kind, ref)
	return o
}

// trackedMovement is one money movement the Tracker resolves end to end, and the outcome
// it must report on either wire.
type trackedMovement struct {
	name string
	kind billing.Kind
	// start sends the movement through the Tracker with its callback going to the
	// merchant's endpoint; it returns the transaction id the initiation names, or "" when
	// the wire names none there.
	start     func(t *testing.T, m *trackedMerchant, ref string) string
	succeeded bool
	code      billing.ResponseCode
	// providerCheckCode is the code on the provider's wire, whose status check, the only
	// source of truth, answers a payout's failure as transactionStatus "failed", naming no
	// reason, which reads as the general failure. Empty when the same as code.
	providerCheckCode billing.ResponseCode
	// amount and charges are in minor units, whatever the wire wrote.
	amount, charges int64
}

var trackedMovements = []trackedMovement{
	{name: "receive", kind: billing.KindReceive, start: trackedReceive("233241234567", 5000), succeeded: true, code: billing.CodeSuccess, amount: 5000, charges: 50},
	// 100.00 with 1.00 charged: every amount of the provider's answers a whole number of cedis.
	{name: "receive of whole cedis", kind: billing.KindReceive, start: trackedReceive("233241234567", 10000), succeeded: true, code: billing.CodeSuccess, amount: 10000, charges: 100},
	{name: "receive wrong PIN", kind: billing.KindReceive, start: trackedReceive("233241230001", 5000), code: billing.CodeFailed, amount: 5000},
	{name: "send", kind: billing.KindSend, start: trackedSend("233201234567"), succeeded: true, code: billing.CodeSuccess, amount: 2000, charges: 100},
	{name: "send insufficient balance", kind: billing.KindSend, start: trackedSend("233201230004"), code: billing.CodeInsufficientBalance, providerCheckCode: billing.CodeFailed, amount: 2000, charges: 100},
	{name: "bank transfer", kind: billing.KindBankTransfer, start: trackedBankTransfer("1441000123456"), succeeded: true, code: billing.CodeSuccess, amount: 10000, charges: 100},
	{name: "bank transfer name check fails", kind: billing.KindBankTransfer, start: trackedBankTransfer("1441000120001"), code: billing.CodeFailed, amount: 10000, charges: 100},
	{name: "direct debit", kind: billing.KindDirectDebit, start: trackedCharge("233241234567"), succeeded: true, code: billing.CodeSuccess, amount: 4999, charges: 100},
	{name: "direct debit wrong PIN", kind: billing.KindDirectDebit, start: trackedCharge("233241230001"), code: billing.CodeFailed, amount: 4999},
	{name: "mandate", kind: billing.KindMandate, start: trackedMandate("233241234567"), succeeded: true},
	{name: "mandate refused", kind: billing.KindMandate, start: trackedMandate("233241230009")},
}

func trackedReceive(phone string, amount int64) func(*testing.T, *trackedMerchant, string) string {
	return func(t *testing.T, m *trackedMerchant, ref string) string {
		r, err := m.tracker.Receive(context.Background(), &billing.ReceiveParams{
			Amount: amount, Phone: phone, Provider: billing.ProviderMTN, Description: "Order " + ref,
			ClientReference: ref, CallbackURL: m.callbackURL,
		})
		require.NoError(t, err)
		if m.srv.Wire() == billingtest.WireProvider {
			return r.ID // the provider's acceptance names the transaction
		}
		return ""
	}
}

func trackedSend(phone string) func(*testing.T, *trackedMerchant, string) string {
	return func(t *testing.T, m *trackedMerchant, ref string) string {
		s, err := m.tracker.Send(context.Background(), &billing.SendParams{
			Amount: 2000, Phone: phone, Provider: billing.ProviderTelecel, Name: "Kofi", Description: "Refund " + ref,
			ClientReference: ref, CallbackURL: m.callbackURL,
		})
		require.NoError(t, err)
		if m.srv.Wire() == billingtest.WireProvider {
			return s.ID
		}
		return ""
	}
}

func trackedBankTransfer(account string) func(*testing.T, *trackedMerchant, string) string {
	return func(t *testing.T, m *trackedMerchant, ref string) string {
		bt, err := m.tracker.SendToBank(context.Background(), &billing.BankTransferParams{
			BankCode: "300302", Amount: 10000, PrimaryCallbackURL: m.callbackURL, Description: "Supplier " + ref,
			BankAccountNumber: account, ClientReference: ref, BankAccountName: "Adwoa Farms Ltd",
		})
		require.NoError(t, err)
		return bt.TransactionID
	}
}

func trackedCharge(msisdn string) func(*testing.T, *trackedMerchant, string) string {
	return func(t *testing.T, m *trackedMerchant, ref string) string {
		mandateApproved(t, m.srv, m.client, msisdn, "mandate"+ref)
		d, err := m.tracker.Charge(context.Background(), &billing.DirectDebitParams{
			CustomerMSISDN: msisdn, Channel: billing.DirectDebitChannelMTN, Amount: 4999,
			PrimaryCallbackURL: m.callbackURL, Description: "Plan " + ref, ClientReference: ref,
		})
		require.NoError(t, err)
		return d.TransactionID
	}
}

func trackedMandate(msisdn string) func(*testing.T, *trackedMerchant, string) string {
	return func(t *testing.T, m *trackedMerchant, ref string) string {
		md, err := m.tracker.CreateMandate(context.Background(), &billing.MandateCreateParams{
			ClientReferenceID: ref, CustomerMSISDN: msisdn, Channel: billing.DirectDebitChannelMTN, CallbackURL: m.callbackURL,
		})
		require.NoError(t, err)
		return md.ServicePreApprovalID
	}
}

// TestTrackerEndToEndEveryKindOnBothWires resolves every kind of money movement, a
// success and a failure of each, by its callback and, with the callback dropped, by the
// status check five minutes later, on each wire: the outcome's state, code, amount,
// charges and transaction ids must be the same whichever wire and path told it.
func TestTrackerEndToEndEveryKindOnBothWires(t *testing.T) {
	for _, wire := range billingtest.Wires() {
		t.Run(string(wire), func(t *testing.T) {
			for _, path := range []billing.OutcomeSource{billing.SourceCallback, billing.SourceStatusCheck} {
				t.Run(string(path), func(t *testing.T) {
					for _, tc := range trackedMovements {
						t.Run(tc.name, func(t *testing.T) {
							m := newTrackedMerchant(t, billingtest.WithWire(wire))
							const ref = "wires1"
							if path == billing.SourceStatusCheck {
								m.srv.InjectCallbackFault(billingtest.CallbackFault{Kind: billingtest.CallbackDropped, Reference: ref})
							}
							initiated := tc.start(t, m, ref)
							m.srv.Advance(time.Second) // the sandbox resolves the movement and posts its callback
							if path == billing.SourceStatusCheck {
								assert.Empty(t, m.statuses(), "the callback was dropped")
								m.srv.Advance(5 * time.Minute)
							} else if !tc.succeeded && failureUnconfirmable(wire, tc.kind) {
								assert.Equal(t, []int{503}, m.statuses(), "a failure nothing confirms is not taken")
							} else {
								assert.Equal(t, []int{200}, m.statuses(), "the callback is confirmed by the status check and taken")
							}

							if !tc.succeeded && failureUnconfirmable(wire, tc.kind) {
								// Nothing confirms the failure, by callback or status check: the
								// movement stays pending (Reconcile lists it overdue).
								assertCollectionUnpaid(t, m.client, tc.kind, ref)
								return
							}
							o := awaitOutcome(t, m.tracker, tc.kind, ref)
							assert.Equal(t, path, o.Source)
							assert.Equal(t, tc.kind, o.Kind)
							assert.Equal(t, ref, o.ClientReference)
							assert.True(t, o.IsFinal())
							assert.Equal(t, tc.succeeded, o.Succeeded(), "state %s", o.State)
							code := tc.code
							// The provider's status check names no reason for a failed payout;
							// its callback's code is only its sender's word, on either path.
							if wire == billingtest.WireProvider && tc.providerCheckCode != "" {
								code = tc.providerCheckCode
							}
							assert.Equal(t, code, o.Code)
							assert.Equal(t, tc.amount, o.Amount, "amount in minor units")
							assert.Equal(t, tc.charges, o.Charges, "charges in minor units")
							assert.NotEmpty(t, o.TransactionID)
							assert.NotEmpty(t, o.ID)
							if initiated != "" {
								assert.Equal(t, initiated, o.TransactionID, "the transaction the initiation named")
							}
							if tc.succeeded && tc.kind != billing.KindMandate {
								assert.NotEmpty(t, o.ExternalTransactionID, "the network's id of a paid movement")
							}
							truth, err := m.tracker.Await(context.Background(), tc.kind, ref)
							require.NoError(t, err)
							assert.Equal(t, o.ID, truth.ID, "the outcome is kept")
						})
					}
				})
			}
		})
	}
}

// assertCollectionUnpaid checks that the status check of a receive or a direct debit says
// Unpaid under 0000, which is no final state.
func assertCollectionUnpaid(t *testing.T, c *billing.Client, kind billing.Kind, ref string) {
	t.Helper()
	var status billing.CollectionStatus
	var code billing.ResponseCode
	var pending bool
	switch kind {
	case billing.KindReceive:
		st, err := c.Payments.ReceiveStatus(context.Background(), ref)
		require.NoError(t, err)
		status, code, pending = st.Status, st.ResponseCode, st.IsPending()
	default:
		st, err := c.Mandates.ChargeStatus(context.Background(), ref)
		require.NoError(t, err)
		status, code, pending = st.Status, st.ResponseCode, st.IsPending()
	}
	assert.Equal(t, billing.CollectionStatusUnpaid, status)
	assert.Equal(t, billing.CodeSuccess, code)
	assert.True(t, pending, "Unpaid under 0000 is no final state")
}
