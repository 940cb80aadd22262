package billing

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func validSend() *SendParams {
	return &SendParams{Amount: 15000, Phone: "233201234567", Provider: ProviderTelecel, Name: "Kofi", Description: "Refund", ClientReference: "snd1"}
}

func validBankTransfer() *BankTransferParams {
	return &BankTransferParams{
		BankCode: "300302", Amount: 50000, PrimaryCallbackURL: "https://shop.example.com/cb",
		Description: "Invoice", BankAccountNumber: "1441000123456", ClientReference: "bank1",
	}
}

func TestSendSendsTheRecordedRequestAndDecodesTheAcceptance(t *testing.T) {
	c, mock := newMockClient(t)
	ex := recordedExchange(t, mock, http.MethodPost, mockBaseURL+"/v1/payments/send", "payouts/send_request.json", 200, "payouts/send_accepted.json")

	s, err := c.Payouts.Send(ctx(), &SendParams{
		Amount: 15000, Currency: "GHS", Phone: "+233 20 123 4567", Provider: ProviderTelecel, Name: "Kofi Boateng",
		Description: "Refund of order 1040", ClientReference: "refund1040", CallbackURL: "https://shop.example.com/callbacks/payouts",
	})
	require.NoError(t, err)
	assert.Equal(t, basicClientAuth, ex.auth)
	assert.Equal(t, &DirectSend{
		ID: "snd_9d3e7a1b", Reference: "refund1040", Status: "PROCESSING", Amount: 15000, Fee: 150, Currency: "GHS",
		Phone: "233201234567", Name: "Kofi Boateng", CreatedAt: time.Date(2025, 1, 1, 13, 0, 0, 0, time.UTC),
	}, s)
}

func TestSendLetsThePhoneStandInForAnUnknownName(t *testing.T) {
	c, mock := newMockClient(t)
	var body map[string]any
	mock.RegisterResponder(http.MethodPost, mockBaseURL+"/v1/payments/send", func(r *http.Request) (*http.Response, error) {
		body = requestBody(t, r)
		return fixtureResponder(t, 200, "payouts/send_accepted.json")(r)
	})
	p := validSend()
	p.Name, p.Phone = "", "+233 20 123 4567"
	_, err := c.Payouts.Send(ctx(), p)
	require.NoError(t, err)
	assert.Equal(t, "233201234567", body["name"])
	assert.Empty(t, p.Name, "the caller's params are not changed")
}

func TestSendStatusReadsTheTransactionStatus(t *testing.T) {
	for name, tc := range map[string]struct {
		fixture          string
		code             ResponseCode
		status           PayoutStatus
		final, succeeded bool
		channel          PayoutChannel
	}{
		"pending": {"payouts/send_status_pending.json", CodeAccepted, PayoutStatusPending, false, false, PayoutChannelVodafone},
		"success": {"payouts/send_status_success.json", CodeSuccess, PayoutStatusSuccess, true, true, PayoutChannelVodafone},
		"failed":  {"payouts/send_status_failed.json", CodeInsufficientBalance, PayoutStatusFailed, true, false, PayoutChannelMTN},
	} {
		t.Run(name, func(t *testing.T) {
			c, mock := newMockClient(t)
			ex := recordedExchange(t, mock, http.MethodGet, mockBaseURL+"/v1/payments/refund1040", "", 200, tc.fixture)
			st, err := c.Payouts.SendStatus(ctx(), "refund1040")
			require.NoError(t, err)
			assert.Equal(t, basicClientAuth, ex.auth)
			assert.Equal(t, tc.code, st.ResponseCode)
			assert.Equal(t, tc.status, st.TransactionStatus)
			assert.Equal(t, tc.final, st.IsFinal())
			assert.Equal(t, !tc.final, st.IsPending())
			assert.Equal(t, tc.succeeded, st.Succeeded())
			assert.Equal(t, tc.channel, st.Channel)
			assert.Equal(t, int64(15000), st.Amount)
			assert.Equal(t, int64(150), st.Fees)
			assert.NotEmpty(t, st.TransactionID)
			assert.NotEmpty(t, st.CustomerNumber)
			assert.Equal(t, 0, st.CreatedAt.Second())
			assert.Equal(t, 2025, st.CreatedAt.Year(), "YYYY-MM-DD HH:MM:SS is read as UTC")
			assert.Equal(t, time.UTC, st.CreatedAt.Location())
		})
	}
}

func TestSendRefusalsAreAPIErrors(t *testing.T) {
	c, mock := newMockClient(t)
	recordedExchange(t, mock, http.MethodPost, mockBaseURL+"/v1/payments/send", "", 200, "payouts/send_not_registered.json")
	_, err := c.Payouts.Send(ctx(), validSend())
	var apiErr *APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, CodeNotRegistered, apiErr.Code)
	assert.NotErrorIs(t, err, ErrOutcomeUnknown)

	recordedExchange(t, mock, http.MethodPost, mockBaseURL+"/v1/payments/send", "", 403, "errors/ip_not_allowed.json")
	_, err = c.Payouts.Send(ctx(), validSend())
	assert.ErrorIs(t, err, ErrIPNotAllowed)
}

func TestSendToBankSendsTheRecordedRequestToTheAccountsPath(t *testing.T) {
	c, mock := newMockClient(t, WithDisbursementAccount("2020202"))
	ex := recordedExchange(t, mock, http.MethodPost, mockBaseURL+"/v1/merchants/2020202/send/bank/gh/300329", "payouts/bank_request.json", 200, "payouts/bank_accepted.json")

	bt, err := c.Payouts.SendToBank(ctx(), &BankTransferParams{
		BankCode: "300329", Amount: 50000, PrimaryCallbackURL: "https://shop.example.com/callbacks/bank",
		Description: "Supplier invoice 88", BankAccountNumber: "1441000123456", ClientReference: "supplier88",
		BankAccountName: "Adwoa Farms Ltd", RecipientPhoneNumber: "+233 24 123 4567", BankName: "Example Bank Ghana",
		BankBranch: "Accra Central", BankBranchCode: "010101",
	})
	require.NoError(t, err)
	assert.Equal(t, basicClientAuth, ex.auth)
	assert.Equal(t, &BankTransfer{
		AmountDebited: 50100, TransactionID: "btr_4e1a7c9d", Description: "Supplier invoice 88", ClientReference: "supplier88",
		Amount: 50000, Charges: 100, Meta: []byte("null"),
	}, bt)
}

func TestSendToBankAccountFromParamsWinsAndOneIsRequired(t *testing.T) {
	c, mock := newMockClient(t, WithDisbursementAccount("2020202"))
	ex := recordedExchange(t, mock, http.MethodPost, mockBaseURL+"/v1/merchants/9090909/send/bank/gh/300302", "", 200, "payouts/bank_accepted.json")
	p := validBankTransfer()
	p.DisbursementAccount = "9090909"
	_, err := c.Payouts.SendToBank(ctx(), p)
	require.NoError(t, err)
	assert.Equal(t, 1, ex.calls)

	bare, mock := newMockClient(t)
	mock.RegisterNoResponder(httpmock.NewStringResponder(500, "must not be called"))
	_, err = bare.Payouts.SendToBank(ctx(), validBankTransfer())
	var v *ValidationError
	require.ErrorAs(t, err, &v)
	assert.Equal(t, "disbursementAccount", v.Field)
	_, err = bare.Payouts.BankTransferStatus(ctx(), &BankTransferStatusParams{ClientReference: "bank1"})
	require.ErrorAs(t, err, &v)
	assert.Equal(t, "disbursementAccount", v.Field)
	assert.Zero(t, mock.GetTotalCallCount())
}

func TestBankTransferStatusSendsTheQueryAndReadsDecimals(t *testing.T) {
	for name, tc := range map[string]struct {
		fixture          string
		code             ResponseCode
		final, succeeded bool
	}{
		"pending": {"payouts/bank_status_pending.json", CodeAccepted, false, false},
		"success": {"payouts/bank_status_success.json", CodeSuccess, true, true},
		"failed":  {"payouts/bank_status_failed.json", CodeFailed, true, false},
	} {
		t.Run(name, func(t *testing.T) {
			c, mock := newMockClient(t, WithDisbursementAccount("2020202"))
			ex := recordedExchange(t, mock, http.MethodGet, mockBaseURL+"/v1/merchants/2020202/transactions/status", "", 200, tc.fixture)
			st, err := c.Payouts.BankTransferStatus(ctx(), &BankTransferStatusParams{ClientReference: "supplier88", ServiceTransactionID: "btr_4e1a7c9d"})
			require.NoError(t, err)
			assert.Equal(t, "clientReference=supplier88&serviceTransactionId=btr_4e1a7c9d", ex.query)
			assert.Equal(t, basicClientAuth, ex.auth)
			assert.Equal(t, tc.code, st.ResponseCode)
			assert.Equal(t, tc.final, st.IsFinal())
			assert.Equal(t, !tc.final, st.IsPending())
			assert.Equal(t, tc.succeeded, st.Succeeded())
			assert.Equal(t, DecimalAmount(50000), st.Amount)
			assert.Equal(t, DecimalAmount(100), st.Fees)
			assert.Equal(t, PayoutChannelBank, st.Channel)
			assert.NotEmpty(t, st.Description)
			assert.Equal(t, time.UTC, st.CreatedAt.Location())
			assert.Equal(t, 14, st.CreatedAt.Hour())
		})
	}
}

func TestBankCodesIsACopyOfTheSpecsList(t *testing.T) {
	codes := BankCodes()
	require.Len(t, codes, 24)
	assert.Equal(t, "300302", codes[0])
	assert.Equal(t, "300362", codes[23])
	codes[0] = "999999"
	assert.Equal(t, "300302", BankCodes()[0])
}

func TestPayoutsValidationSendsNothing(t *testing.T) {
	requireRefusedBeforeSending(t, map[string]refusal{
		"send nil": {func(c *Client) error { _, err := c.Payouts.Send(ctx(), nil); return err }, "params"},
		"send amount": {func(c *Client) error {
			p := validSend()
			p.Amount = -1
			_, err := c.Payouts.Send(ctx(), p)
			return err
		}, "amount"},
		"send mpesa": {func(c *Client) error {
			p := validSend()
			p.Provider = ProviderMPESA
			_, err := c.Payouts.Send(ctx(), p)
			return err
		}, "provider"},
		"send local phone": {func(c *Client) error {
			p := validSend()
			p.Phone = "0201234567"
			_, err := c.Payouts.Send(ctx(), p)
			return err
		}, "phone"},
		"send description": {func(c *Client) error {
			p := validSend()
			p.Description = ""
			_, err := c.Payouts.Send(ctx(), p)
			return err
		}, "description"},
		"send reference": {func(c *Client) error {
			p := validSend()
			p.ClientReference = ""
			_, err := c.Payouts.Send(ctx(), p)
			return err
		}, "ClientReference"},
		"send metadata contradicts": {func(c *Client) error {
			p := validSend()
			p.Metadata = Metadata{"clientReference": "other"}
			_, err := c.Payouts.Send(ctx(), p)
			return err
		}, "metadata.clientReference"},
		"send callback": {func(c *Client) error {
			p := validSend()
			p.CallbackURL = "example.com/cb"
			_, err := c.Payouts.Send(ctx(), p)
			return err
		}, "callbackUrl"},
		"send description long": {func(c *Client) error {
			p := validSend()
			p.Description = strings.Repeat("x", 256)
			_, err := c.Payouts.Send(ctx(), p)
			return err
		}, "description"},
		"bank description long": {func(c *Client) error {
			p := validBankTransfer()
			p.Description = strings.Repeat("x", 256)
			_, err := c.Payouts.SendToBank(ctx(), p)
			return err
		}, "Description"},
		"send status": {func(c *Client) error { _, err := c.Payouts.SendStatus(ctx(), ""); return err }, "clientReference"},
		"bank nil":    {func(c *Client) error { _, err := c.Payouts.SendToBank(ctx(), nil); return err }, "params"},
		"bank code missing": {func(c *Client) error {
			p := validBankTransfer()
			p.BankCode = ""
			_, err := c.Payouts.SendToBank(ctx(), p)
			return err
		}, "bankCode"},
		"bank code unknown": {func(c *Client) error {
			p := validBankTransfer()
			p.BankCode = "300301"
			_, err := c.Payouts.SendToBank(ctx(), p)
			return err
		}, "bankCode"},
		"bank amount": {func(c *Client) error {
			p := validBankTransfer()
			p.Amount = 0
			_, err := c.Payouts.SendToBank(ctx(), p)
			return err
		}, "Amount"},
		"bank callback": {func(c *Client) error {
			p := validBankTransfer()
			p.PrimaryCallbackURL = ""
			_, err := c.Payouts.SendToBank(ctx(), p)
			return err
		}, "PrimaryCallbackUrl"},
		"bank description": {func(c *Client) error {
			p := validBankTransfer()
			p.Description = ""
			_, err := c.Payouts.SendToBank(ctx(), p)
			return err
		}, "Description"},
		"bank account number": {func(c *Client) error {
			p := validBankTransfer()
			p.BankAccountNumber = ""
			_, err := c.Payouts.SendToBank(ctx(), p)
			return err
		}, "BankAccountNumber"},
		"bank reference": {func(c *Client) error {
			p := validBankTransfer()
			p.ClientReference = "supplier 88"
			_, err := c.Payouts.SendToBank(ctx(), p)
			return err
		}, "ClientReference"},
		"bank recipient phone": {func(c *Client) error {
			p := validBankTransfer()
			p.RecipientPhoneNumber = "0241234567"
			_, err := c.Payouts.SendToBank(ctx(), p)
			return err
		}, "RecipientPhoneNumber"},
		"bank status nil": {func(c *Client) error { _, err := c.Payouts.BankTransferStatus(ctx(), nil); return err }, "params"},
		"bank status reference": {func(c *Client) error {
			_, err := c.Payouts.BankTransferStatus(ctx(), &BankTransferStatusParams{})
			return err
		}, "clientReference"},
	}, WithDisbursementAccount("2020202"))

}
