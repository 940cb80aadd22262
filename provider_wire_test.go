package billing

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Each of the provider's recorded payloads (testdata/provider, see SOURCES.md) is read
// by the call that receives it, or by ParseEvent, field by field.

func providerAnswer(t *testing.T, mock *httpmock.MockTransport, method, url, name string) {
	t.Helper()
	mock.RegisterResponder(method, url, fixtureResponder(t, http.StatusOK, "provider/"+name))
}

func TestProviderReceiveAcceptanceIsASuccess(t *testing.T) {
	c, mock := newMockClient(t)
	providerAnswer(t, mock, http.MethodPost, mockBaseURL+"/v1/payments/receive", "receive_initiate_response_doc.json")
	r, err := c.Payments.Receive(ctx(), validReceive())
	require.NoError(t, err, "the provider's 0001 acceptance is no unknown outcome")
	assert.Equal(t, &DirectReceive{
		ID: "09f84e20a283942e807128e8c21d08d6", Reference: "3jL2KlUy3vt21", Amount: 80, Description: "Union Dues",
	}, r, "Amount 0.8 is 80 minor units")
}

func TestProviderSendAcceptanceIsASuccess(t *testing.T) {
	c, mock := newMockClient(t)
	providerAnswer(t, mock, http.MethodPost, mockBaseURL+"/v1/payments/send", "send_initiate_response.json")
	r, err := c.Payouts.Send(ctx(), validSend())
	require.NoError(t, err, "the provider's 0001 acceptance is no unknown outcome")
	assert.Equal(t, &DirectSend{ID: "09f84e20a283942e807128e8c21d0303", Reference: "pay101", Amount: 80}, r)
}

func TestProviderBankAndDebitAcceptances(t *testing.T) {
	c, mock := newMockClient(t, WithDisbursementAccount("2020101"))
	providerAnswer(t, mock, http.MethodPost, mockBaseURL+"/v1/merchants/2020101/send/bank/gh/300302", "bank_initiate_response.json")
	b, err := c.Payouts.SendToBank(ctx(), validBankTransfer())
	require.NoError(t, err)
	assert.Equal(t, DecimalAmount(80), b.Amount)
	assert.Equal(t, DecimalAmount(0), b.AmountDebited)
	assert.Equal(t, "367121386447", b.TransactionID)
	assert.Equal(t, "3jL2KlUy3vt210303", b.ClientReference)
	assert.Empty(t, b.ExternalTransactionID)
	assert.Empty(t, b.RecipientName, "null is empty")

	providerAnswer(t, mock, http.MethodPost, mockBaseURL+"/v1/payments/direct-debit", "directdebit_charge_response.json")
	d, err := c.Mandates.Charge(ctx(), validDebit())
	require.NoError(t, err)
	assert.Equal(t, &DirectDebit{
		TransactionID: "09f84e20a283942e807128e8c21d08d6", Description: "Union Dues", ClientReference: "3jL2KlUy3vt216789",
		Amount: 80, Charges: 5, AmountAfterCharges: 80, AmountCharged: 85,
	}, d)
}

func TestProviderReceiveStatusReadsCedis(t *testing.T) {
	for name, tc := range map[string]struct {
		fixture          string
		status           CollectionStatus
		final, succeeded bool
	}{
		"paid":   {"receive_status_paid_doc.json", CollectionStatusPaid, true, true},
		"unpaid": {"receive_status_unpaid_doc.json", CollectionStatusUnpaid, false, false},
	} {
		t.Run(name, func(t *testing.T) {
			c, mock := newMockClient(t)
			providerAnswer(t, mock, http.MethodGet, mockBaseURL+"/v1/payments/ref1", tc.fixture)
			st, err := c.Payments.ReceiveStatus(ctx(), "ref1")
			require.NoError(t, err)
			assert.Equal(t, CodeSuccess, st.ResponseCode)
			assert.Equal(t, "Successful", st.Message)
			assert.Equal(t, tc.status, st.Status)
			assert.Equal(t, tc.final, st.IsFinal(), "Unpaid under 0000 is still pending")
			assert.Equal(t, tc.succeeded, st.Succeeded())
			assert.Equal(t, []int64{10, 2, 8}, []int64{st.Amount, st.Charges, st.AmountAfterCharges}, "0.1 cedi is 10")
			assert.Empty(t, st.CurrencyCode, "null")
			assert.False(t, st.IsFulfilled, "null")
			assert.Equal(t, "7fd01221faeb41469daec7b3561bddc5", st.TransactionID)
			assert.Equal(t, "0000006824852622", st.ExternalTransactionID)
			assert.Equal(t, time.Date(2024, 4, 25, 21, 45, 48, 474096400, time.UTC), st.Date)

			o, err := readStatus(c, KindReceive, "ref1") // the fixture names its own reference
			require.NoError(t, err)
			assert.Equal(t, tc.succeeded, o.Succeeded())
			assert.Equal(t, int64(10), o.Amount)
			assert.Equal(t, int64(2), o.Charges)
		})
	}
}

func TestProviderChargeStatusReadsCedis(t *testing.T) {
	c, mock := newMockClient(t)
	providerAnswer(t, mock, http.MethodGet, mockBaseURL+"/v1/payments/direct-debit/status/ref1", "directdebit_status_paid.json")
	st, err := c.Mandates.ChargeStatus(ctx(), "ref1")
	require.NoError(t, err)
	assert.True(t, st.Succeeded())
	assert.Equal(t, []DecimalAmount{10, 2, 8}, []DecimalAmount{st.Amount, st.Charges, st.AmountAfterCharges})
	assert.Equal(t, time.Date(2024, 4, 25, 21, 45, 48, 474096400, time.UTC), st.Date)
}

// The send status check answers the word "success" for the request: the payout's state
// is transactionStatus, and its amounts are cedis.
func TestProviderSendStatusReadsTheWordSuccess(t *testing.T) {
	c, mock := newMockClient(t)
	providerAnswer(t, mock, http.MethodGet, mockBaseURL+"/v1/payments/pay101", "send_status_success.json")
	st, err := c.Payouts.SendStatus(ctx(), "pay101")
	require.NoError(t, err)
	assert.True(t, st.Succeeded())
	assert.Equal(t, CodeSuccess, st.ResponseCode, "the code the state implies")
	assert.Equal(t, int64(80), st.Amount, "0.8 is 80")
	assert.Equal(t, int64(1), st.Fees, "0.010 is 1")
	assert.Equal(t, PayoutChannelVodafone, st.Channel)
	assert.Equal(t, "142116938399", st.NetworkTransactionID)
	assert.Equal(t, "233200010000", st.CustomerNumber)
	assert.Equal(t, time.Date(2021, 8, 23, 11, 31, 6, 0, time.UTC), st.CreatedAt)

	o, err := statusOutcome(ctx(), c, KindSend, "pay101")
	require.NoError(t, err)
	assert.True(t, o.Succeeded())
	assert.Equal(t, CodeSuccess, o.Code)
	assert.Equal(t, []int64{80, 1}, []int64{o.Amount, o.Charges})
}

// Under the word "success", whole numbers are cedis too.
func TestProviderSendStatusWholeNumbersUnderTheWordAreCedis(t *testing.T) {
	c, mock := newMockClient(t)
	mock.RegisterResponder(http.MethodGet, mockBaseURL+"/v1/payments/pay102", httpmock.NewStringResponder(200,
		`{"ResponseCode":"success","Data":{"Amount":10,"Fees":0,"ClientReference":"pay102","transactionStatus":"pending"}}`))
	st, err := c.Payouts.SendStatus(ctx(), "pay102")
	require.NoError(t, err)
	assert.Equal(t, []int64{1000, 0}, []int64{st.Amount, st.Fees})
	assert.True(t, st.IsPending())
	assert.Equal(t, CodeAccepted, st.ResponseCode)
}

func TestProviderBankStatusFailedUnderTheWordSuccessIsFailed(t *testing.T) {
	for name, tc := range map[string]struct {
		fixture        string
		succeeded      bool
		code           ResponseCode
		amount, fees   DecimalAmount
		customerNumber string
		network        string
		created        time.Time
	}{
		"success": {"bank_status_success.json", true, CodeSuccess, 100, 101, "233546335113", "367121386447",
			time.Date(2022, 8, 23, 11, 31, 6, 0, time.UTC)},
		"failed": {"bank_status_failed.json", false, CodeFailed, 1000, 10, "233200585542", "",
			time.Date(2024, 8, 1, 8, 30, 53, 0, time.UTC)},
	} {
		t.Run(name, func(t *testing.T) {
			c, mock := newMockClient(t, WithDisbursementAccount("2020101"))
			providerAnswer(t, mock, http.MethodGet, mockBaseURL+"/v1/merchants/2020101/transactions/status", tc.fixture)
			st, err := c.Payouts.BankTransferStatus(ctx(), &BankTransferStatusParams{ClientReference: "ref1"})
			require.NoError(t, err)
			assert.True(t, st.IsFinal())
			assert.Equal(t, tc.succeeded, st.Succeeded())
			assert.Equal(t, tc.code, st.ResponseCode)
			assert.Equal(t, tc.code.IsFailure(), !tc.succeeded)
			assert.Equal(t, tc.amount, st.Amount, "Amount 1 beside Fees 1.01 is one cedi")
			assert.Equal(t, tc.fees, st.Fees, "fees in either casing")
			assert.Equal(t, tc.customerNumber, st.CustomerNumber, "customerNumber in either casing")
			assert.Equal(t, tc.network, st.NetworkTransactionID)
			assert.Equal(t, PayoutChannelBank, st.Channel)
			assert.Equal(t, tc.created, st.CreatedAt)

			o, err := readStatus(c, KindBankTransfer, "ref1") // the fixture names its own reference
			require.NoError(t, err)
			assert.Equal(t, tc.succeeded, o.Succeeded())
			assert.Equal(t, !tc.succeeded, o.Failed(), "a failed transfer under the word success is failed")
			assert.Equal(t, codeState(o.Code), o.State, "the outcome's code agrees with its state")
		})
	}
}

func TestProviderMandateAnswers(t *testing.T) {
	c, mock := newMockClient(t)
	providerAnswer(t, mock, http.MethodGet, mockBaseURL+"/v1/mandates/preapproval/ref1/status", "preapproval_status.json")
	m, err := c.Mandates.Status(ctx(), "ref1")
	require.NoError(t, err, "the code is read under code")
	assert.Equal(t, &Mandate{
		ServicePreApprovalID: "5f20092321d54eefb974dbfea6de5c34", ClientReferenceID: "3jL2KlUy3vt21debitC",
		CustomerMSISDN: "233546335113", VerificationType: VerificationTypeUSSD, PreapprovalStatus: MandateStatusApproved,
		CreatedAt: time.Date(2023, 8, 11, 18, 18, 55, 643937400, time.UTC),
	}, m)
	o, err := readStatus(c, KindMandate, "ref1") // the fixture names its own reference
	require.NoError(t, err)
	assert.True(t, o.Succeeded())

	providerAnswer(t, mock, http.MethodPost, mockBaseURL+"/v1/mandates", "preapproval_initiate_ussd.json")
	m, err = c.Mandates.Create(ctx(), validMandate())
	require.NoError(t, err)
	assert.Empty(t, m.OTPPrefix, "null")
	assert.True(t, m.IsPending())
	providerAnswer(t, mock, http.MethodPost, mockBaseURL+"/v1/mandates", "preapproval_initiate_otp.json")
	m, err = c.Mandates.Create(ctx(), validMandate())
	require.NoError(t, err)
	assert.Equal(t, "HNRM", m.OTPPrefix)
	assert.Equal(t, VerificationTypeOTP, m.VerificationType)

	providerAnswer(t, mock, http.MethodPost, mockBaseURL+"/v1/mandates/verifyotp", "preapproval_verifyotp.json")
	m, err = c.Mandates.VerifyOTP(ctx(), &MandateVerifyOTPParams{CustomerMSISDN: "233200010000",
		ServicePreApprovalID: "5f20092321d54eefb974dbfea6de5c34", ClientReferenceID: "3jL2KlUy3vt21debitC", OTPCode: "HNRM-1234"})
	require.NoError(t, err)
	assert.Equal(t, &Mandate{ServicePreApprovalID: "5f20092321d54eefb974dbfea6de5c34", PreapprovalStatus: MandateStatusPending}, m)

	providerAnswer(t, mock, http.MethodPost, mockBaseURL+"/v1/mandates/preapproval/reactivate", "preapproval_reactivate.json")
	m, err = c.Mandates.Reactivate(ctx(), &MandateReactivateParams{CustomerMSISDN: "233200010000", CallbackURL: "https://shop.example.com/cb"})
	require.NoError(t, err)
	assert.Equal(t, "GNCC", m.OTPPrefix)
}

func TestProviderMandateCancelDataTrueIsASuccess(t *testing.T) {
	c, mock := newMockClient(t)
	providerAnswer(t, mock, http.MethodGet, mockBaseURL+"/v1/mandates/preapproval/233548359582/cancel", "preapproval_cancel.json")
	m, err := c.Mandates.Cancel(ctx(), "+233 54 835 9582")
	require.NoError(t, err)
	assert.Equal(t, &Mandate{CustomerMSISDN: "233548359582", PreapprovalStatus: MandateStatusCancelled}, m)
	assert.True(t, m.IsFinal())

	mock.RegisterResponder(http.MethodGet, mockBaseURL+"/v1/mandates/preapproval/233548359582/cancel",
		httpmock.NewStringResponder(200, `{"message":"Could not cancel preapproval","responseCode":"2000","data":false}`))
	m, err = c.Mandates.Cancel(ctx(), "233548359582")
	assert.Nil(t, m)
	var apiErr *APIError
	require.ErrorAs(t, err, &apiErr, "data false is no cancellation")
	assert.Equal(t, "Could not cancel preapproval", apiErr.Message)
}

func TestProviderCallbacksAreReadField(t *testing.T) {
	fixtures := providerFixtures(t)
	parse := func(name string) Event {
		ev, err := ParseEvent(fixtures[name])
		require.NoError(t, err, name)
		return ev
	}

	for name, state := range map[string]EventState{
		"receive_callback_success_doc.json": EventSucceeded, "receive_callback_failed_doc.json": EventFailed,
		"directdebit_callback_success.json": EventSucceeded, "directdebit_callback_failed.json": EventFailed,
	} {
		cb, ok := parse(name).(*TransactionCallback)
		require.True(t, ok, name)
		assert.Equal(t, state, cb.State(), name)
		assert.Equal(t, "3jL2KlUy3vt21", cb.Reference(), name)
		assert.Equal(t, TransactionCallbackData{
			Amount: 80, Charges: 5, AmountAfterCharges: 80, AmountCharged: 85, Description: cb.Data.Description,
			ClientReference: "3jL2KlUy3vt21", TransactionID: "09f84e20a283942e807128e8c21d08d6",
			ExternalTransactionID: "2116938399", OrderID: "09f84e20a283942e807128e8c21d08d6",
			PaymentDate: "2024-05-14T00:44:57.5142719Z",
		}, cb.Data, name)
	}

	send, ok := parse("send_callback_success.json").(*PayoutCallback)
	require.True(t, ok)
	assert.Equal(t, EventSucceeded, send.State())
	assert.Equal(t, PayoutCallbackData{
		AmountDebited: 80, Amount: 80, Charges: 1, TransactionID: "09f84e20a283942e807128e8c21d0303",
		Description: "Vodafone cash payment has been made successfully", ClientReference: "pay101",
		ExternalTransactionID: "142116938399", RecipientName: "Joe Doe", Meta: []byte("null"),
	}, send.Data, "Charges 0.010 is 1")

	failed, ok := parse("send_callback_failed_4075.json").(*PayoutCallback)
	require.True(t, ok)
	assert.Equal(t, EventFailed, failed.State())
	assert.Equal(t, CodeInsufficientBalance, failed.Code())
	assert.Equal(t, DecimalAmount(80), failed.Data.AmountDebited)
	assert.Empty(t, failed.Data.ExternalTransactionID, "null")
	assert.Empty(t, failed.Data.RecipientName, "null")

	bank, ok := parse("bank_callback_success.json").(*PayoutCallback)
	require.True(t, ok)
	assert.Equal(t, EventSucceeded, bank.State())
	assert.Equal(t, " The Instant Bank Request has been processed successfully", bank.Data.Description, "kept as written")
	bankFailed, ok := parse("bank_callback_failed_4075.json").(*PayoutCallback)
	require.True(t, ok)
	assert.Equal(t, EventFailed, bankFailed.State())
	assert.Equal(t, []DecimalAmount{1010, 1000, 10}, []DecimalAmount{bankFailed.Data.AmountDebited, bankFailed.Data.Amount, bankFailed.Data.Charges},
		"Amount 10 is ten cedis")

	for name, state := range map[string]EventState{
		"preapproval_callback_approved.json": EventSucceeded, "preapproval_callback_failed.json": EventFailed,
	} {
		m, ok := parse(name).(*MandateCallback)
		require.True(t, ok, name)
		assert.Equal(t, state, m.State(), name)
		assert.Equal(t, "3jL2KlUy3vt21debitC", m.Reference())
		assert.Equal(t, "5f20092321d54eefb974dbfea6de5c34", m.ServicePreapprovalID)
		assert.Equal(t, "2022-11-14T21:08:16.7533466Z", m.CreatedAt)
	}
	failedMandate := parse("preapproval_callback_failed.json").(*MandateCallback)
	assert.Equal(t, MandateStatusFailed, failedMandate.PreapprovalStatus)
	assert.Equal(t, VerificationTypeOTP, failedMandate.VerificationType)
}

func TestProviderCheckoutWebhookIsACheckoutEvent(t *testing.T) {
	ev, err := ParseEvent(providerFixtures(t)["checkout_webhook.json"])
	require.NoError(t, err)
	co, ok := ev.(*CheckoutEvent)
	require.True(t, ok, "%T", ev)
	assert.Equal(t, EventSucceeded, co.State())
	assert.Equal(t, CodeSuccess, co.Code())
	assert.Equal(t, "Kaks545253", co.Reference(), "the ClientReference, which names the session on the provider's wire")
	assert.Equal(t, "59e2fbbff4e443b98e09346881ac7e9a", co.Data.Reference, "the CheckoutId")
	assert.Equal(t, "Kaks545253", co.ClientReference)
	assert.Equal(t, Payment{
		ID: "e96ccfb4746045bba13f425bd573a31c", Reference: "59e2fbbff4e443b98e09346881ac7e9a", Status: PaymentStatusSucceeded,
		Method: PaymentMethodMobileMoney, Amount: 50,
		Description:       "The MTN Mobile Money payment has been approved and processed successfully.",
		Customer:          PaymentCustomer{Phone: "233242825109"},
		MobileMoneyDetail: MobileMoneyDetail{Network: "mtn-gh", Phone: "233242825109"},
	}, co.Data, "Amount 0.5 is 50")

	for status, want := range map[string]EventState{"Failed": EventFailed, "Pending": EventPending, "Paid": EventSucceeded, "": EventPending, "whatever": EventPending} {
		body := strings.ReplaceAll(string(providerFixtures(t)["checkout_webhook.json"]), `"Success"`, `"`+status+`"`)
		ev, err := ParseEvent([]byte(body))
		require.NoError(t, err, status)
		assert.Equal(t, want, ev.State(), status)
	}
}

// The confirming handler confirms the provider's checkout webhook with Payments.Get of
// its ClientReference or, when the service finds no session by it, of its CheckoutId,
// whose payment must name that client reference. The confirmed event is the service's
// payment; the client reference is the service's, in the outcome.
func TestProviderCheckoutWebhookIsConfirmedByItsCheckoutID(t *testing.T) {
	c, mock := newMockClient(t)
	mock.RegisterResponder(http.MethodGet, mockBaseURL+"/v1/payments/Kaks545253",
		httpmock.NewStringResponder(404, `{"success":false,"message":"not found"}`))
	mock.RegisterResponder(http.MethodGet, mockBaseURL+"/v1/payments/59e2fbbff4e443b98e09346881ac7e9a",
		httpmock.NewStringResponder(200, `{"success":true,"data":{"id":"e96ccfb4746045bba13f425bd573a31c",
			"reference":"59e2fbbff4e443b98e09346881ac7e9a","status":"SUCCEEDED","amount":50,"currency":"GHS",
			"metadata":{"clientReference":"Kaks545253"}}}`))
	ev, err := ParseEvent(providerFixtures(t)["checkout_webhook.json"])
	require.NoError(t, err)
	conf := confirmEvent(context.Background(), c, nil, ev)
	assert.Equal(t, http.StatusOK, conf.status, conf.reason)
	truth := conf.truth.(*CheckoutEvent)
	assert.Empty(t, truth.ClientReference, "no field of the webhook")
	assert.Equal(t, "GHS", truth.Data.Currency, "the service's payment")
	assert.Equal(t, "Kaks545253", conf.outcome.ClientReference, "the client reference the service's payment names")
}

// A field the SDK cannot read never turns a known state into an unknown one, nor an
// accepted movement into a refused or unknown one.
func TestAFieldTheSDKCannotReadKeepsTheState(t *testing.T) {
	const garbage = `"abc"`
	t.Run("acceptance", func(t *testing.T) {
		c, mock := newMockClient(t)
		mock.RegisterResponder(http.MethodPost, mockBaseURL+"/v1/payments/receive", httpmock.NewStringResponder(200,
			`{"Message":"pending","ResponseCode":"0001","Data":{"TransactionId":"t1","ClientReference":"rcv1","Amount":`+garbage+`,"Charges":0.001}}`))
		r, err := c.Payments.Receive(ctx(), validReceive())
		require.NoError(t, err)
		assert.Equal(t, "t1", r.ID)
		assert.Zero(t, r.Amount)
	})
	t.Run("status checks", func(t *testing.T) {
		c, mock := newMockClient(t, WithDisbursementAccount("2020101"))
		mock.RegisterResponder(http.MethodGet, mockBaseURL+"/v1/payments/ref1", httpmock.NewStringResponder(200,
			`{"responseCode":"0000","data":{"status":"Paid","amount":`+garbage+`,"charges":{"x":1},"date":"yesterday","isFulfilled":"yes","transactionId":42}}`))
		st, err := c.Payments.ReceiveStatus(ctx(), "ref1")
		require.NoError(t, err)
		assert.True(t, st.Succeeded())
		assert.Equal(t, "42", st.TransactionID, "an id written as a number keeps its digits")
		o, err := readStatus(c, KindReceive, "ref1") // the fixture names its own reference
		require.NoError(t, err)
		assert.True(t, o.Succeeded())

		mock.RegisterResponder(http.MethodGet, mockBaseURL+"/v1/merchants/2020101/transactions/status", httpmock.NewStringResponder(200,
			`{"ResponseCode":"success","Data":{"transactionStatus":"failed","Amount":0.001,"Fees":`+garbage+`,"CreatedAt":5}}`))
		bt, err := c.Payouts.BankTransferStatus(ctx(), &BankTransferStatusParams{ClientReference: "ref1"})
		require.NoError(t, err)
		assert.True(t, bt.IsFinal())
		assert.False(t, bt.Succeeded())
	})
	t.Run("callbacks", func(t *testing.T) {
		for body, state := range map[string]EventState{
			`{"ResponseCode":"0000","Message":"success","Data":{"ClientReference":"r1","Amount":1.005,"OrderId":"o"}}`: EventSucceeded,
			`{"ResponseCode":"2001","Data":{"ClientReference":"r1","AmountDebited":` + garbage + `,"Charges":[1]}}`:    EventFailed,
			`{"PreapprovalStatus":"FAILED","ClientReferenceId":"m1","CreatedAt":7}`:                                    EventFailed,
			`{"ResponseCode":"0000","Data":{"CheckoutId":"c1","Status":"Success","Amount":` + garbage + `}}`:           EventSucceeded,
		} {
			ev, err := ParseEvent([]byte(body))
			require.NoError(t, err, body)
			assert.Equal(t, state, ev.State(), body)
		}
	})
}

// The provider's receive status of whole cedis (amount 1, charges 0) is in cedis like
// its decimals: the object names no currency, which the spec's always does.
func TestProviderReceiveStatusOfWholeCedisReadsCedis(t *testing.T) {
	c, mock := newMockClient(t)
	body := `{"message":"Successful","responseCode":"0000","data":{"date":"2024-04-25T21:45:48.4740964Z","status":"Paid",
		"transactionId":"7fd01221","externalTransactionId":"0000006824852622","paymentMethod":"mobilemoney",
		"clientReference":"order77","currencyCode":null,"amount":1,"charges":0,"amountAfterCharges":1,"isFulfilled":null}}`
	mock.RegisterResponder(http.MethodGet, mockBaseURL+"/v1/payments/order77", httpmock.NewStringResponder(http.StatusOK, body))
	st, err := c.Payments.ReceiveStatus(context.Background(), "order77")
	require.NoError(t, err)
	assert.Equal(t, int64(100), st.Amount)
	assert.Equal(t, int64(0), st.Charges)
	assert.Equal(t, int64(100), st.AmountAfterCharges)

	// The spec's, naming its currency, keeps integers as minor units.
	spec := strings.Replace(strings.Replace(body, `"currencyCode":null`, `"currencyCode":"GHS"`, 1), `"amount":1,`, `"amount":2500,`, 1)
	mock.RegisterResponder(http.MethodGet, mockBaseURL+"/v1/payments/order78", httpmock.NewStringResponder(http.StatusOK, spec))
	st, err = c.Payments.ReceiveStatus(context.Background(), "order78")
	require.NoError(t, err)
	assert.Equal(t, int64(2500), st.Amount)
}
