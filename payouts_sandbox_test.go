package billing_test

import (
	"context"
	"testing"
	"time"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sendTo pays amount (minor units) to the MTN wallet phone under ref, with its callback
// going to url.
func sendTo(ctx context.Context, c *billing.Client, phone, ref, url string, amount int64) (*billing.DirectSend, error) {
	return c.Payouts.Send(ctx, &billing.SendParams{
		Amount: amount, Phone: phone, Provider: billing.ProviderMTN, Name: "Kofi Boateng",
		Description: "Payout " + ref, ClientReference: ref, CallbackURL: url,
	})
}

// bankTransfer pays amount (minor units) to account under ref, out of the client's
// disbursement account.
func bankTransfer(account, ref, url string, amount billing.DecimalAmount) *billing.BankTransferParams {
	return &billing.BankTransferParams{
		BankCode: "300302", Amount: amount, PrimaryCallbackURL: url, Description: "Invoice " + ref,
		BankAccountNumber: account, ClientReference: ref, BankAccountName: "Adwoa Farms Ltd",
	}
}

// payoutCallback is the spec's callback of send and send-to-bank.
type payoutCallback struct {
	ResponseCode billing.ResponseCode
	Data         struct {
		AmountDebited, Amount, Charges billing.DecimalAmount
		ClientReference, TransactionID string
		ExternalTransactionID          *string `json:"ExternalTransactionId"`
		RecipientName                  *string
	}
}

func TestSendEveryTestNumber(t *testing.T) {
	onEachWire(t, testSendEveryTestNumber)
}

func testSendEveryTestNumber(t *testing.T, wire billingtest.Wire) {
	provider := wire == billingtest.WireProvider
	sink := callbackSink(t)
	for _, tc := range []struct {
		name, phone string
		code        billing.ResponseCode
		// checkCode is what the final status check says: the provider's names no
		// reason for a failure, which reads as the general failure.
		checkCode billing.ResponseCode
		callback  string // fixture of the callback's shape; empty when none is sent
	}{
		{"success", "233241234567", billing.CodeSuccess, billing.CodeSuccess,
			wireFixture(wire, "payouts/send_callback_success.json", "send_callback_success.json")},
		{"invalid wallet", "233241230001", billing.CodeFailed, billing.CodeFailed,
			wireFixture(wire, "payouts/send_callback_insufficient_balance.json", "send_callback_failed_4075.json")},
		{"no callback ever", "233241230002", billing.CodeSuccess, billing.CodeSuccess, ""},
		{"insufficient balance", "233241230004", billing.CodeInsufficientBalance, billing.CodeInsufficientBalance,
			wireFixture(wire, "payouts/send_callback_insufficient_balance.json", "send_callback_failed_4075.json")},
	} {
		if provider && tc.checkCode != billing.CodeSuccess {
			tc.checkCode = billing.CodeFailed
		}
		t.Run(tc.name, func(t *testing.T) {
			srv, c := moneySandbox(t, billingtest.WithWire(wire))
			ctx := context.Background()
			start := srv.DisbursementBalance()
			ref := "snd" + tc.phone[len(tc.phone)-4:]
			url := sink + "/send/" + ref

			s, err := sendTo(ctx, c, tc.phone, ref, url, 5000)
			require.NoError(t, err)
			assert.Equal(t, int64(5000), s.Amount)
			assert.Equal(t, int64(100), s.Fee, "1% of 50.00 is below the 1.00 minimum")
			if provider {
				assert.NotEmpty(t, s.ID, "the provider's acceptance names the payout")
				assert.Equal(t, ref, s.Reference)
			} else {
				assert.Equal(t, "PROCESSING", s.Status)
				assert.Equal(t, tc.phone, s.Phone)
				assert.Equal(t, "Kofi Boateng", s.Name)
			}
			assert.Equal(t, start-5100, srv.DisbursementBalance(), "amount plus fee leave the balance on acceptance")

			st, err := c.Payouts.SendStatus(ctx, ref)
			require.NoError(t, err)
			assert.True(t, st.IsPending())
			assert.Equal(t, billing.CodeAccepted, st.ResponseCode)
			if provider {
				assert.Equal(t, s.ID, st.TransactionID)
			}
			assert.Equal(t, billing.PayoutStatusPending, st.TransactionStatus)
			assert.Equal(t, srv.Now(), st.CreatedAt, "YYYY-MM-DD HH:MM:SS, read as UTC")

			srv.Advance(time.Second)
			st, err = c.Payouts.SendStatus(ctx, ref)
			require.NoError(t, err)
			succeeded := tc.code == billing.CodeSuccess
			assert.True(t, st.IsFinal())
			assert.Equal(t, succeeded, st.Succeeded())
			assert.Equal(t, tc.checkCode, st.ResponseCode)
			assert.Equal(t, ref, st.ClientReference)
			assert.NotEmpty(t, st.TransactionID)
			assert.Equal(t, int64(5000), st.Amount)
			assert.Equal(t, int64(100), st.Fees)
			assert.Equal(t, billing.PayoutChannelMTN, st.Channel)
			assert.Equal(t, tc.phone, st.CustomerNumber)
			if succeeded {
				assert.Equal(t, start-5100, srv.DisbursementBalance())
			} else {
				assert.Equal(t, start, srv.DisbursementBalance(), "a failed payout gives the money back")
			}

			bodies := deliveredTo(srv, url)
			if tc.callback == "" {
				assert.Empty(t, bodies)
				return
			}
			require.Len(t, bodies, 1)
			assertShape(t, tc.callback, bodies[0], true)
			cb := decodeCallback[payoutCallback](t, bodies[0])
			assert.Equal(t, tc.code, cb.ResponseCode)
			assert.Equal(t, ref, cb.Data.ClientReference)
			assert.Equal(t, st.TransactionID, cb.Data.TransactionID)
			assert.Equal(t, billing.DecimalAmount(5000), cb.Data.Amount)
			assert.Equal(t, billing.DecimalAmount(100), cb.Data.Charges)
			assert.Equal(t, succeeded, cb.Data.ExternalTransactionID != nil)
			assert.Equal(t, succeeded, cb.Data.RecipientName != nil)
			ev, err := billing.ParseEvent(bodies[0])
			require.NoError(t, err)
			assert.Equal(t, ref, ev.Reference())
			if succeeded {
				assert.Equal(t, billing.DecimalAmount(5100), cb.Data.AmountDebited)
			}
		})
	}
}

func TestSendRefusedAtOnceMovesNothing(t *testing.T) {
	onEachWire(t, testSendRefusedAtOnce)
}

func testSendRefusedAtOnce(t *testing.T, wire billingtest.Wire) {
	srv, c := moneySandbox(t, billingtest.WithWire(wire))
	ctx := context.Background()
	start := srv.DisbursementBalance()

	_, err := sendTo(ctx, c, "233241230003", "snd0003", "", 5000)
	var apiErr *billing.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, billing.CodeNotRegistered, apiErr.Code, "test number 0003 is not registered for payouts")
	assert.Zero(t, srv.Movements("snd0003"))
	assert.Equal(t, start, srv.DisbursementBalance())

	s, err := sendTo(ctx, c, "233241234567", "snddup", "", 15000)
	require.NoError(t, err)
	assert.Equal(t, int64(150), s.Fee, "1% above the minimum")
	_, err = sendTo(ctx, c, "233241234567", "snddup", "", 15000)
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, billing.CodeFailed, apiErr.Code)
	assert.Equal(t, 1, srv.Movements("snddup"))
	assert.Equal(t, start-15150, srv.DisbursementBalance(), "the duplicate took nothing")
}

func TestSendAboveTheBalanceFailsByCallback(t *testing.T) {
	onEachWire(t, testSendAboveTheBalance)
}

func testSendAboveTheBalance(t *testing.T, wire billingtest.Wire) {
	sink := callbackSink(t)
	srv, c := moneySandbox(t, billingtest.WithWire(wire), billingtest.WithDisbursementBalance(10000))
	ctx := context.Background()
	_, err := sendTo(ctx, c, "233241234567", "sndbig", sink, 20000)
	require.NoError(t, err, "accepted first, refused by the network")
	srv.Advance(time.Second)
	st, err := c.Payouts.SendStatus(ctx, "sndbig")
	require.NoError(t, err)
	assert.True(t, st.IsFinal())
	assert.False(t, st.Succeeded())
	if wire == billingtest.WireSpec {
		assert.Equal(t, billing.CodeInsufficientBalance, st.ResponseCode, "the provider's status check names no reason")
	}
	assert.Equal(t, int64(10000), srv.DisbursementBalance())
	bodies := deliveredTo(srv, sink)
	require.Len(t, bodies, 1)
	assert.Equal(t, billing.CodeInsufficientBalance, decodeCallback[payoutCallback](t, bodies[0]).ResponseCode)
}

func TestSendToBankEndToEnd(t *testing.T) {
	onEachWire(t, testSendToBankEndToEnd)
}

func testSendToBankEndToEnd(t *testing.T, wire billingtest.Wire) {
	provider := wire == billingtest.WireProvider
	sink := callbackSink(t)
	for _, tc := range []struct {
		name, account string
		balance       int64
		code          billing.ResponseCode
		callback      string
	}{
		{"success", "1441000123456", 0, billing.CodeSuccess,
			wireFixture(wire, "payouts/bank_callback_success.json", "bank_callback_success.json")},
		{"name check fails", "1441000120001", 0, billing.CodeFailed,
			wireFixture(wire, "payouts/bank_callback_name_check_failed.json", "bank_callback_failed_4075.json")},
		{"above the balance", "1441000123456", 10000, billing.CodeInsufficientBalance,
			wireFixture(wire, "payouts/bank_callback_name_check_failed.json", "bank_callback_failed_4075.json")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := []billingtest.Option{billingtest.WithWire(wire)}
			if tc.balance > 0 {
				opts = append(opts, billingtest.WithDisbursementBalance(tc.balance))
			}
			srv, c := moneySandbox(t, opts...)
			ctx := context.Background()
			start := srv.DisbursementBalance()
			url := sink + "/bank/" + tc.account

			bt, err := c.Payouts.SendToBank(ctx, bankTransfer(tc.account, "bank88", url, 50000))
			require.NoError(t, err)
			assert.Equal(t, "bank88", bt.ClientReference)
			assert.Equal(t, billing.DecimalAmount(50000), bt.Amount)
			assert.Equal(t, billing.DecimalAmount(100), bt.Charges, "a flat 1.00")
			assert.Equal(t, billing.DecimalAmount(50100), bt.AmountDebited)
			assert.NotEmpty(t, bt.TransactionID)

			st, err := c.Payouts.BankTransferStatus(ctx, &billing.BankTransferStatusParams{ClientReference: "bank88", ServiceTransactionID: bt.TransactionID})
			require.NoError(t, err)
			assert.True(t, st.IsPending())
			assert.Equal(t, billing.CodeAccepted, st.ResponseCode)
			assert.Equal(t, srv.Now(), st.CreatedAt)

			srv.Advance(time.Second)
			st, err = c.Payouts.BankTransferStatus(ctx, &billing.BankTransferStatusParams{ClientReference: "bank88"})
			require.NoError(t, err)
			succeeded := tc.code == billing.CodeSuccess
			assert.True(t, st.IsFinal())
			assert.Equal(t, succeeded, st.Succeeded())
			if provider && !succeeded {
				assert.Equal(t, billing.CodeFailed, st.ResponseCode, "the provider's status check names no reason")
			} else {
				assert.Equal(t, tc.code, st.ResponseCode)
			}
			assert.Equal(t, bt.TransactionID, st.TransactionID)
			assert.Equal(t, billing.DecimalAmount(50000), st.Amount)
			assert.Equal(t, billing.DecimalAmount(100), st.Fees)
			assert.Equal(t, billing.PayoutChannelBank, st.Channel)
			assert.Equal(t, tc.account, st.CustomerNumber)
			assert.Equal(t, "Invoice bank88", st.Description)
			if succeeded {
				assert.Equal(t, start-50100, srv.DisbursementBalance())
			} else {
				assert.Equal(t, start, srv.DisbursementBalance(), "a failed transfer gives the money back")
			}

			bodies := deliveredTo(srv, url)
			require.Len(t, bodies, 1)
			assertShape(t, tc.callback, bodies[0], true)
			cb := decodeCallback[payoutCallback](t, bodies[0])
			assert.Equal(t, tc.code, cb.ResponseCode)
			assert.Equal(t, "bank88", cb.Data.ClientReference)
			assert.Equal(t, billing.DecimalAmount(50000), cb.Data.Amount)
			if !provider {
				assert.Contains(t, string(bodies[0]), `"Amount":500.00`, "exactly two decimals on the wire")
			}
			ev, err := billing.ParseEvent(bodies[0])
			require.NoError(t, err)
			assert.Equal(t, "bank88", ev.Reference())
		})
	}
}

func TestSendToBankAccountFromTheParams(t *testing.T) {
	srv, _ := moneySandbox(t)
	c := srv.Client(billing.WithDisbursementAccount(""))
	ctx := context.Background()

	_, err := c.Payouts.SendToBank(ctx, bankTransfer("1441000123456", "acct1", "https://example.com/cb", 1000))
	var v *billing.ValidationError
	require.ErrorAs(t, err, &v, "no account from the client or the params")
	assert.Equal(t, "disbursementAccount", v.Field)

	p := bankTransfer("1441000123456", "acct1", "https://example.com/cb", 1000)
	p.DisbursementAccount = srv.DisbursementAccount
	_, err = c.Payouts.SendToBank(ctx, p)
	require.NoError(t, err)
	st, err := c.Payouts.BankTransferStatus(ctx, &billing.BankTransferStatusParams{DisbursementAccount: srv.DisbursementAccount, ClientReference: "acct1"})
	require.NoError(t, err)
	assert.Equal(t, billing.DecimalAmount(1000), st.Amount)

	_, err = c.Payouts.SendToBank(ctx, p)
	var apiErr *billing.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, billing.CodeFailed, apiErr.Code, "a reused client reference")
	assert.Equal(t, 1, srv.Movements("acct1"))
}
