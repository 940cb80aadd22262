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

func validMandate() *MandateCreateParams {
	return &MandateCreateParams{
		ClientReferenceID: "mandate1", CustomerMSISDN: "233201234567",
		Channel: DirectDebitChannelVodafone, CallbackURL: "https://shop.example.com/cb",
	}
}

func validDebit() *DirectDebitParams {
	return &DirectDebitParams{
		CustomerMSISDN: "233201234567", Channel: DirectDebitChannelVodafone, Amount: 4999,
		PrimaryCallbackURL: "https://shop.example.com/cb", Description: "Monthly plan", ClientReference: "debit1",
	}
}

func TestMandateCreateSendsTheRecordedRequestAndDecodesBothVerifications(t *testing.T) {
	c, mock := newMockClient(t)
	ex := recordedExchange(t, mock, http.MethodPost, mockBaseURL+"/v1/mandates", "mandates/create_request.json", 200, "mandates/create_otp.json")
	m, err := c.Mandates.Create(ctx(), &MandateCreateParams{
		ClientReferenceID: "mandate2001", CustomerMSISDN: "+233 20 123 4567",
		Channel: DirectDebitChannelVodafone, CallbackURL: "https://shop.example.com/callbacks/mandates",
	})
	require.NoError(t, err)
	assert.Equal(t, basicClientAuth, ex.auth)
	assert.Equal(t, &Mandate{
		ServicePreApprovalID: "pre_8c2e5a1f9b", ClientReferenceID: "mandate2001", VerificationType: VerificationTypeOTP,
		OTPPrefix: "KWXQ", PreapprovalStatus: MandateStatusPending,
	}, m)
	assert.True(t, m.IsPending())
	assert.False(t, m.IsFinal())
	assert.False(t, m.Succeeded())

	recordedExchange(t, mock, http.MethodPost, mockBaseURL+"/v1/mandates", "", 200, "mandates/create_ussd.json")
	p := validMandate()
	p.Channel = DirectDebitChannelMTN
	m, err = c.Mandates.Create(ctx(), p)
	require.NoError(t, err)
	assert.Equal(t, VerificationTypeUSSD, m.VerificationType)
	assert.Empty(t, m.OTPPrefix, "null for USSD")
}

func TestMandateVerifyOTP(t *testing.T) {
	c, mock := newMockClient(t)
	recordedExchange(t, mock, http.MethodPost, mockBaseURL+"/v1/mandates/verifyotp", "mandates/verifyotp_request.json", 200, "mandates/verifyotp.json")
	m, err := c.Mandates.VerifyOTP(ctx(), &MandateVerifyOTPParams{
		CustomerMSISDN: "+233201234567", ServicePreApprovalID: "pre_8c2e5a1f9b", ClientReferenceID: "mandate2001", OTPCode: "KWXQ-4821",
	})
	require.NoError(t, err)
	assert.Equal(t, &Mandate{ServicePreApprovalID: "pre_8c2e5a1f9b", PreapprovalStatus: MandateStatusPending}, m)

	recordedExchange(t, mock, http.MethodPost, mockBaseURL+"/v1/mandates/verifyotp", "", 400, "mandates/verifyotp_wrong.json")
	_, err = c.Mandates.VerifyOTP(ctx(), &MandateVerifyOTPParams{
		CustomerMSISDN: "233201234567", ServicePreApprovalID: "pre_8c2e5a1f9b", ClientReferenceID: "mandate2001", OTPCode: "KWXQ-0000",
	})
	var apiErr *APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, CodePreapprovalFailed, apiErr.Code)
	assert.ErrorIs(t, err, ErrInvalidRequest)
}

func TestMandateStatusCancelAndReactivate(t *testing.T) {
	c, mock := newMockClient(t)
	recordedExchange(t, mock, http.MethodGet, mockBaseURL+"/v1/mandates/preapproval/mandate2001/status", "", 200, "mandates/status_approved.json")
	m, err := c.Mandates.Status(ctx(), "mandate2001")
	require.NoError(t, err)
	assert.Equal(t, &Mandate{
		ServicePreApprovalID: "pre_8c2e5a1f9b", ClientReferenceID: "mandate2001", CustomerMSISDN: "233201234567",
		Channel: DirectDebitChannelVodafone, VerificationType: VerificationTypeOTP, PreapprovalStatus: MandateStatusApproved,
		CreatedAt: time.Date(2025, 1, 1, 15, 0, 0, 0, time.UTC),
	}, m)
	assert.True(t, m.Succeeded())
	assert.True(t, m.IsFinal())

	ex := recordedExchange(t, mock, http.MethodGet, mockBaseURL+"/v1/mandates/preapproval/233201234567/cancel", "", 200, "mandates/cancel.json")
	m, err = c.Mandates.Cancel(ctx(), "+233 20 123 4567")
	require.NoError(t, err)
	assert.Equal(t, basicClientAuth, ex.auth)
	assert.Equal(t, MandateStatusCancelled, m.PreapprovalStatus)
	assert.True(t, m.IsFinal())
	assert.False(t, m.Succeeded())

	recordedExchange(t, mock, http.MethodPost, mockBaseURL+"/v1/mandates/preapproval/reactivate", "mandates/reactivate_request.json", 200, "mandates/reactivate.json")
	m, err = c.Mandates.Reactivate(ctx(), &MandateReactivateParams{CustomerMSISDN: "233 20 123 4567", CallbackURL: "https://shop.example.com/callbacks/mandates/again"})
	require.NoError(t, err)
	assert.Equal(t, "MZTR", m.OTPPrefix)
	assert.True(t, m.IsPending())
}

func TestMandateCancelIsNotResentOnceItMayHaveActed(t *testing.T) {
	c, mock := newMockClient(t, WithRetry(4, 0, 0))
	mock.RegisterResponder(http.MethodGet, mockBaseURL+"/v1/mandates/preapproval/233201234567/cancel",
		httpmock.NewStringResponder(502, `<html>bad gateway</html>`))
	_, err := c.Mandates.Cancel(ctx(), "233201234567")
	var apiErr *APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, 502, apiErr.StatusCode)
	assert.Equal(t, 1, mock.GetTotalCallCount(), "a repeat would answer 404 and hide a cancel that happened")

	recordedExchange(t, mock, http.MethodGet, mockBaseURL+"/v1/mandates/preapproval/233201234567/cancel", "", 404, "mandates/cancel_none.json")
	_, err = c.Mandates.Cancel(ctx(), "233201234567")
	assert.ErrorIs(t, err, ErrNotFound)
}

func TestChargeSendsTheRecordedPascalRequest(t *testing.T) {
	c, mock := newMockClient(t)
	ex := recordedExchange(t, mock, http.MethodPost, mockBaseURL+"/v1/payments/direct-debit", "mandates/charge_request.json", 200, "mandates/charge_accepted.json")
	d, err := c.Mandates.Charge(ctx(), &DirectDebitParams{
		CustomerMSISDN: "+233 20 123 4567", Channel: DirectDebitChannelVodafone, Amount: 4999,
		PrimaryCallbackURL: "https://shop.example.com/callbacks/debit", Description: "Monthly plan, February",
		ClientReference: "debit2025feb", CustomerName: "Efua Owusu", CustomerEmail: "efua@example.com",
	})
	require.NoError(t, err)
	assert.Equal(t, basicClientAuth, ex.auth)
	assert.Equal(t, &DirectDebit{
		TransactionID: "ddc_7b2e9f4a", Description: "Monthly plan, February", ClientReference: "debit2025feb",
		Amount: 4999, Charges: 100, AmountAfterCharges: 4899, AmountCharged: 4999, DeliveryFee: 0,
	}, d)

	recordedExchange(t, mock, http.MethodPost, mockBaseURL+"/v1/payments/direct-debit", "", 400, "mandates/charge_no_mandate.json")
	_, err = c.Mandates.Charge(ctx(), validDebit())
	var apiErr *APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, CodePreapprovalFailed, apiErr.Code)
	assert.Contains(t, apiErr.Message, "no approved mandate")
	assert.NotErrorIs(t, err, ErrOutcomeUnknown)
}

func TestChargeStatusReadsTheReceiveShapeWithDecimals(t *testing.T) {
	for name, tc := range map[string]struct {
		fixture          string
		code             ResponseCode
		final, succeeded bool
	}{
		"pending": {"mandates/charge_status_pending.json", CodeAccepted, false, false},
		"paid":    {"mandates/charge_status_paid.json", CodeSuccess, true, true},
		"failed":  {"mandates/charge_status_failed.json", CodeFailed, true, false},
	} {
		t.Run(name, func(t *testing.T) {
			c, mock := newMockClient(t)
			ex := recordedExchange(t, mock, http.MethodGet, mockBaseURL+"/v1/payments/direct-debit/status/debit2025feb", "", 200, tc.fixture)
			st, err := c.Mandates.ChargeStatus(ctx(), "debit2025feb")
			require.NoError(t, err)
			assert.Equal(t, basicClientAuth, ex.auth)
			assert.Equal(t, tc.code, st.ResponseCode)
			assert.Equal(t, tc.final, st.IsFinal())
			assert.Equal(t, !tc.final, st.IsPending())
			assert.Equal(t, tc.succeeded, st.Succeeded())
			assert.Equal(t, tc.succeeded, st.IsFulfilled)
			assert.Equal(t, DecimalAmount(4999), st.Amount)
			assert.Equal(t, DecimalAmount(100), st.Charges)
			assert.Equal(t, DecimalAmount(4899), st.AmountAfterCharges)
			assert.Equal(t, 2025, st.Date.Year())
		})
	}
}

func TestMandatesValidationSendsNothing(t *testing.T) {
	verify := func(mut func(p *MandateVerifyOTPParams)) func(c *Client) error {
		return func(c *Client) error {
			p := &MandateVerifyOTPParams{CustomerMSISDN: "233201234567", ServicePreApprovalID: "pre_1", ClientReferenceID: "m1", OTPCode: "ABCD-1234"}
			mut(p)
			_, err := c.Mandates.VerifyOTP(ctx(), p)
			return err
		}
	}
	create := func(mut func(p *MandateCreateParams)) func(c *Client) error {
		return func(c *Client) error {
			p := validMandate()
			mut(p)
			_, err := c.Mandates.Create(ctx(), p)
			return err
		}
	}
	charge := func(mut func(p *DirectDebitParams)) func(c *Client) error {
		return func(c *Client) error {
			p := validDebit()
			mut(p)
			_, err := c.Mandates.Charge(ctx(), p)
			return err
		}
	}
	requireRefusedBeforeSending(t, map[string]refusal{
		"create nil":            {func(c *Client) error { _, err := c.Mandates.Create(ctx(), nil); return err }, "params"},
		"create reference":      {create(func(p *MandateCreateParams) { p.ClientReferenceID = "" }), "clientReferenceId"},
		"create reference long": {create(func(p *MandateCreateParams) { p.ClientReferenceID = "m1234567890123456789012345678901234567" }), "clientReferenceId"},
		"create reference sign": {create(func(p *MandateCreateParams) { p.ClientReferenceID = "m-1" }), "clientReferenceId"},
		"create msisdn":         {create(func(p *MandateCreateParams) { p.CustomerMSISDN = "" }), "customerMsisdn"},
		"create local msisdn":   {create(func(p *MandateCreateParams) { p.CustomerMSISDN = "0201234567" }), "customerMsisdn"},
		"create channel":        {create(func(p *MandateCreateParams) { p.Channel = "mtn-gh" }), "channel"},
		"create no channel":     {create(func(p *MandateCreateParams) { p.Channel = "" }), "channel"},
		"create callback":       {create(func(p *MandateCreateParams) { p.CallbackURL = "" }), "callbackUrl"},
		"verify nil":            {func(c *Client) error { _, err := c.Mandates.VerifyOTP(ctx(), nil); return err }, "params"},
		"verify msisdn":         {verify(func(p *MandateVerifyOTPParams) { p.CustomerMSISDN = "" }), "customerMsisdn"},
		"verify preapproval":    {verify(func(p *MandateVerifyOTPParams) { p.ServicePreApprovalID = "" }), "servicePreApprovalId"},
		"verify reference":      {verify(func(p *MandateVerifyOTPParams) { p.ClientReferenceID = "" }), "clientReferenceId"},
		"verify otp digits":     {verify(func(p *MandateVerifyOTPParams) { p.OTPCode = "1234" }), "otpCode"},
		"verify otp prefix":     {verify(func(p *MandateVerifyOTPParams) { p.OTPCode = "AB1D-1234" }), "otpCode"},
		"verify otp hyphen":     {verify(func(p *MandateVerifyOTPParams) { p.OTPCode = "ABCD1234" }), "otpCode"},
		"verify otp short":      {verify(func(p *MandateVerifyOTPParams) { p.OTPCode = "ABCD-123" }), "otpCode"},
		"status reference":      {func(c *Client) error { _, err := c.Mandates.Status(ctx(), ""); return err }, "clientReferenceId"},
		"cancel msisdn":         {func(c *Client) error { _, err := c.Mandates.Cancel(ctx(), ""); return err }, "customerMsisdn"},
		"cancel local msisdn":   {func(c *Client) error { _, err := c.Mandates.Cancel(ctx(), "020 123 4567"); return err }, "customerMsisdn"},
		"reactivate nil":        {func(c *Client) error { _, err := c.Mandates.Reactivate(ctx(), nil); return err }, "params"},
		"reactivate callback": {func(c *Client) error {
			_, err := c.Mandates.Reactivate(ctx(), &MandateReactivateParams{CustomerMSISDN: "233201234567"})
			return err
		}, "callbackUrl"},
		"reactivate msisdn": {func(c *Client) error {
			_, err := c.Mandates.Reactivate(ctx(), &MandateReactivateParams{CallbackURL: "https://example.com/cb"})
			return err
		}, "customerMsisdn"},
		"charge nil":        {func(c *Client) error { _, err := c.Mandates.Charge(ctx(), nil); return err }, "params"},
		"charge msisdn":     {charge(func(p *DirectDebitParams) { p.CustomerMSISDN = "+0201234567" }), "CustomerMsisdn"},
		"charge channel":    {charge(func(p *DirectDebitParams) { p.Channel = "tigo-gh-direct-debit" }), "Channel"},
		"charge amount":     {charge(func(p *DirectDebitParams) { p.Amount = 0 }), "Amount"},
		"charge callback":   {charge(func(p *DirectDebitParams) { p.PrimaryCallbackURL = "callback" }), "PrimaryCallbackURL"},
		"charge desc":       {charge(func(p *DirectDebitParams) { p.Description = "" }), "Description"},
		"charge desc long":  {charge(func(p *DirectDebitParams) { p.Description = strings.Repeat("x", 256) }), "Description"},
		"charge reference":  {charge(func(p *DirectDebitParams) { p.ClientReference = "" }), "ClientReference"},
		"charge email":      {charge(func(p *DirectDebitParams) { p.CustomerEmail = "efua" }), "CustomerEmail"},
		"charge status ref": {func(c *Client) error { _, err := c.Mandates.ChargeStatus(ctx(), ""); return err }, "clientReference"},
	})

}

func TestMoneyEndpointsNeedClientCredentials(t *testing.T) {
	c, err := NewClient(WithBaseURL(mockBaseURL), WithSecretKey("sk_test_abc"), WithDisbursementAccount("2020202"))
	require.NoError(t, err)
	mock := httpmock.NewMockTransport()
	c.http.HTTPClient.Transport = mock
	for name, mc := range moneyCalls {
		err := mc.call(c)
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), "client credentials", name)
	}
	_, err = c.Payments.ReceiveStatus(ctx(), "rcv1")
	assert.Contains(t, err.Error(), "client credentials")
	assert.Zero(t, mock.GetTotalCallCount())
}

func TestMandateStatesReadAsTheSpecNamesThem(t *testing.T) {
	for status, want := range map[MandateStatus][3]bool{ // pending, final, succeeded
		MandateStatusPending:   {true, false, false},
		MandateStatusApproved:  {false, true, true},
		MandateStatusActive:    {false, true, true},
		MandateStatusCancelled: {false, true, false},
	} {
		m := &Mandate{PreapprovalStatus: status}
		assert.Equal(t, want, [3]bool{m.IsPending(), m.IsFinal(), m.Succeeded()}, status)
	}
}
