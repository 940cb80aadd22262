package billing_test

import (
	"context"
	"encoding/json"
	"regexp"
	"testing"
	"time"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// debit charges amount (minor units) to msisdn's MTN mandate under ref.
func debit(msisdn, ref, url string, amount billing.DecimalAmount) *billing.DirectDebitParams {
	return &billing.DirectDebitParams{
		CustomerMSISDN: msisdn, Channel: billing.DirectDebitChannelMTN, Amount: amount,
		PrimaryCallbackURL: url, Description: "Plan " + ref, ClientReference: ref,
	}
}

// mandateApproved sets up an approved MTN (USSD) mandate for msisdn.
func mandateApproved(t *testing.T, srv *billingtest.Server, c *billing.Client, msisdn, ref string) {
	t.Helper()
	ctx := context.Background()
	_, err := c.Mandates.Create(ctx, &billing.MandateCreateParams{
		ClientReferenceID: ref, CustomerMSISDN: msisdn, Channel: billing.DirectDebitChannelMTN, CallbackURL: "https://example.com/mandates",
	})
	require.NoError(t, err)
	srv.Advance(time.Second)
	m, err := c.Mandates.Status(ctx, ref)
	require.NoError(t, err)
	require.True(t, m.Succeeded(), "the USSD approval follows on its own")
}

// mandateCallback reads the mandate callback of wire, keys exactly as its fixture has
// them (the provider names the id HubtelPreapprovalId), into a Mandate.
func mandateCallback(t *testing.T, wire billingtest.Wire, body json.RawMessage) billing.Mandate {
	t.Helper()
	assertShape(t, wireFixture(wire, "mandates/mandate_callback.json", "preapproval_callback_approved.json"), body, true)
	return decodeCallback[billing.Mandate](t, body)
}

var otpCode = regexp.MustCompile(`[A-Z]{4}-[0-9]{4}`)

func TestUSSDMandateThenChargeEndToEnd(t *testing.T) {
	onEachWire(t, testUSSDMandateThenCharge)
}

func testUSSDMandateThenCharge(t *testing.T, wire billingtest.Wire) {
	sink := callbackSink(t)
	srv, c := moneySandbox(t, billingtest.WithWire(wire))
	ctx := context.Background()
	const msisdn = "233241234567"

	m, err := c.Mandates.Create(ctx, &billing.MandateCreateParams{
		ClientReferenceID: "ussd1", CustomerMSISDN: "+233 24 123 4567",
		Channel: billing.DirectDebitChannelMTN, CallbackURL: sink + "/mandates/ussd1",
	})
	require.NoError(t, err)
	assert.NotEmpty(t, m.ServicePreApprovalID)
	assert.Equal(t, "ussd1", m.ClientReferenceID)
	assert.Equal(t, billing.VerificationTypeUSSD, m.VerificationType)
	assert.Empty(t, m.OTPPrefix)
	assert.True(t, m.IsPending())
	assert.Equal(t, 1, srv.Movements("ussd1"))
	assert.Empty(t, srv.SMS(msisdn), "USSD sends no passcode")

	_, err = c.Mandates.Charge(ctx, debit(msisdn, "early1", sink, 4999))
	var apiErr *billing.APIError
	require.ErrorAs(t, err, &apiErr, "no charge before approval")
	assert.Equal(t, billing.CodePreapprovalFailed, apiErr.Code)
	assert.Zero(t, srv.Movements("early1"))

	srv.Advance(time.Second)
	bodies := deliveredTo(srv, sink+"/mandates/ussd1")
	require.Len(t, bodies, 1)
	cb := mandateCallback(t, wire, bodies[0])
	assert.Equal(t, billing.MandateStatusApproved, cb.PreapprovalStatus)
	assert.Equal(t, m.ServicePreApprovalID, cb.ServicePreApprovalID)
	assert.Equal(t, msisdn, cb.CustomerMSISDN)

	st, err := c.Mandates.Status(ctx, "ussd1")
	require.NoError(t, err)
	want := &billing.Mandate{
		ServicePreApprovalID: m.ServicePreApprovalID, ClientReferenceID: "ussd1", CustomerMSISDN: msisdn,
		Channel: billing.DirectDebitChannelMTN, VerificationType: billing.VerificationTypeUSSD,
		PreapprovalStatus: billing.MandateStatusApproved, CreatedAt: srv.Now().Add(-time.Second),
	}
	if wire == billingtest.WireProvider {
		want.Channel = "" // the provider's status check names no channel
	}
	assert.Equal(t, want, st)

	d, err := c.Mandates.Charge(ctx, debit("+233 24 123 4567", "charge1", sink+"/debit/charge1", 4999))
	require.NoError(t, err)
	assert.Equal(t, "charge1", d.ClientReference)
	assert.Equal(t, billing.DecimalAmount(4999), d.Amount)
	assert.Equal(t, billing.DecimalAmount(100), d.Charges, "a flat 1.00")
	assert.Equal(t, billing.DecimalAmount(4899), d.AmountAfterCharges)

	srv.Advance(time.Second)
	cs, err := c.Mandates.ChargeStatus(ctx, "charge1")
	require.NoError(t, err)
	assert.True(t, cs.Succeeded())
	assert.True(t, cs.IsFinal())
	assert.Equal(t, billing.CodeSuccess, cs.ResponseCode)
	assert.Equal(t, d.TransactionID, cs.TransactionID)
	assert.Equal(t, billing.DecimalAmount(4999), cs.Amount)
	assert.Equal(t, billing.DecimalAmount(100), cs.Charges)
	assert.Equal(t, billing.DecimalAmount(4899), cs.AmountAfterCharges)

	debits := deliveredTo(srv, sink+"/debit/charge1")
	require.Len(t, debits, 1)
	assertShape(t, wireFixture(wire, "mandates/debit_callback_success.json", "directdebit_callback_success.json"), debits[0], true)
	dcb := decodeCallback[transactionCallback](t, debits[0])
	assert.Equal(t, billing.CodeSuccess, dcb.ResponseCode)
	assert.Equal(t, billing.DecimalAmount(4999), dcb.Data.Amount)
	assert.Contains(t, string(debits[0]), `"Amount":49.99`)
}

func TestOTPMandateCancelAndReactivateEndToEnd(t *testing.T) {
	onEachWire(t, testOTPMandateCancelAndReactivate)
}

func testOTPMandateCancelAndReactivate(t *testing.T, wire billingtest.Wire) {
	sink := callbackSink(t)
	srv, c := moneySandbox(t, billingtest.WithWire(wire))
	ctx := context.Background()
	const msisdn = "233201234567"
	vodafoneDebit := func(ref string) *billing.DirectDebitParams {
		p := debit(msisdn, ref, sink+"/debit", 1000)
		p.Channel = billing.DirectDebitChannelVodafone
		return p
	}

	m, err := c.Mandates.Create(ctx, &billing.MandateCreateParams{
		ClientReferenceID: "otp1", CustomerMSISDN: msisdn,
		Channel: billing.DirectDebitChannelVodafone, CallbackURL: sink + "/mandates/first",
	})
	require.NoError(t, err)
	assert.Equal(t, billing.VerificationTypeOTP, m.VerificationType)
	assert.Regexp(t, `^[A-Z]{4}$`, m.OTPPrefix)
	sms := srv.SMS(msisdn)
	require.NotEmpty(t, sms)
	code := otpCode.FindString(sms[0])
	require.NotEmpty(t, code, "the passcode is in the newest SMS: %q", sms[0])
	assert.Equal(t, m.OTPPrefix, code[:4])

	verify := func(code string) (*billing.Mandate, error) {
		return c.Mandates.VerifyOTP(ctx, &billing.MandateVerifyOTPParams{
			CustomerMSISDN: msisdn, ServicePreApprovalID: m.ServicePreApprovalID, ClientReferenceID: "otp1", OTPCode: code,
		})
	}
	wrong := code[:5] + "0000"
	if wrong == code {
		wrong = code[:5] + "9999"
	}
	_, err = verify(wrong)
	var apiErr *billing.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, billing.CodePreapprovalFailed, apiErr.Code)
	assert.Equal(t, 400, apiErr.StatusCode)
	srv.Advance(time.Second)
	st, err := c.Mandates.Status(ctx, "otp1")
	require.NoError(t, err)
	assert.True(t, st.IsPending(), "a wrong passcode approves nothing")
	assert.Empty(t, deliveredTo(srv, sink+"/mandates/first"))

	v, err := verify(code)
	require.NoError(t, err)
	assert.Equal(t, m.ServicePreApprovalID, v.ServicePreApprovalID)
	assert.Equal(t, billing.MandateStatusPending, v.PreapprovalStatus, "the approval follows by callback")
	srv.Advance(time.Second)
	bodies := deliveredTo(srv, sink+"/mandates/first")
	require.Len(t, bodies, 1)
	cb := mandateCallback(t, wire, bodies[0])
	assert.Equal(t, billing.MandateStatusApproved, cb.PreapprovalStatus)
	assert.Equal(t, billing.VerificationTypeOTP, cb.VerificationType)
	assert.Equal(t, "otp1", cb.ClientReferenceID)

	_, err = c.Mandates.Charge(ctx, vodafoneDebit("vf1"))
	require.NoError(t, err)
	_, err = c.Mandates.Charge(ctx, debit(msisdn, "vfwrongchannel", sink, 1000))
	require.ErrorAs(t, err, &apiErr, "the mandate is on the Vodafone channel, not MTN")
	assert.Equal(t, billing.CodePreapprovalFailed, apiErr.Code)

	cancelled, err := c.Mandates.Cancel(ctx, "+"+msisdn)
	require.NoError(t, err)
	assert.Equal(t, billing.MandateStatusCancelled, cancelled.PreapprovalStatus)
	if wire == billingtest.WireProvider {
		assert.Equal(t, msisdn, cancelled.CustomerMSISDN, "the provider answers data true, naming no mandate")
	} else {
		assert.Equal(t, m.ServicePreApprovalID, cancelled.ServicePreApprovalID)
	}
	st, err = c.Mandates.Status(ctx, "otp1")
	require.NoError(t, err)
	assert.Equal(t, billing.MandateStatusCancelled, st.PreapprovalStatus)
	_, err = c.Mandates.Charge(ctx, vodafoneDebit("vf2"))
	require.ErrorAs(t, err, &apiErr, "a cancelled mandate cannot be charged")
	assert.Equal(t, billing.CodePreapprovalFailed, apiErr.Code)
	assert.Zero(t, srv.Movements("vf2"))

	r, err := c.Mandates.Reactivate(ctx, &billing.MandateReactivateParams{CustomerMSISDN: msisdn, CallbackURL: sink + "/mandates/again"})
	require.NoError(t, err)
	assert.Equal(t, billing.MandateStatusPending, r.PreapprovalStatus)
	assert.Equal(t, "otp1", r.ClientReferenceID)
	assert.Regexp(t, `^[A-Z]{4}$`, r.OTPPrefix)
	sms = srv.SMS(msisdn)
	require.Len(t, sms, 2, "a fresh passcode")
	fresh := otpCode.FindString(sms[0])
	assert.Equal(t, r.OTPPrefix, fresh[:4])

	_, err = c.Mandates.VerifyOTP(ctx, &billing.MandateVerifyOTPParams{
		CustomerMSISDN: msisdn, ServicePreApprovalID: r.ServicePreApprovalID, ClientReferenceID: "otp1", OTPCode: fresh,
	})
	require.NoError(t, err)
	srv.Advance(time.Second)
	again := deliveredTo(srv, sink+"/mandates/again")
	require.Len(t, again, 1, "the new approval goes to the new callback URL")
	assert.Equal(t, billing.MandateStatusApproved, mandateCallback(t, wire, again[0]).PreapprovalStatus)
	assert.Len(t, deliveredTo(srv, sink+"/mandates/first"), 1, "and not to the old one")

	_, err = c.Mandates.Charge(ctx, vodafoneDebit("vf3"))
	assert.NoError(t, err, "approved again, so it can be charged")

	_, err = c.Mandates.Cancel(ctx, "233209999999")
	assert.ErrorIs(t, err, billing.ErrNotFound, "no mandate for that number")
}

func TestUSSDReactivateCallsBackToTheNewURL(t *testing.T) {
	onEachWire(t, testUSSDReactivateCallsBackToTheNewURL)
}

func testUSSDReactivateCallsBackToTheNewURL(t *testing.T, wire billingtest.Wire) {
	sink := callbackSink(t)
	srv, c := moneySandbox(t, billingtest.WithWire(wire))
	ctx := context.Background()
	mandateApproved(t, srv, c, "233241234567", "ussdre")
	_, err := c.Mandates.Cancel(ctx, "233241234567")
	require.NoError(t, err)
	r, err := c.Mandates.Reactivate(ctx, &billing.MandateReactivateParams{CustomerMSISDN: "233241234567", CallbackURL: sink})
	require.NoError(t, err)
	assert.Empty(t, r.OTPPrefix)
	assert.Equal(t, billing.VerificationTypeUSSD, r.VerificationType)
	srv.Advance(time.Second)
	bodies := deliveredTo(srv, sink)
	require.Len(t, bodies, 1)
	assert.Equal(t, "ussdre", mandateCallback(t, wire, bodies[0]).ClientReferenceID)
	st, err := c.Mandates.Status(ctx, "ussdre")
	require.NoError(t, err)
	assert.True(t, st.Succeeded())
}

func TestDirectDebitEveryTestNumber(t *testing.T) {
	onEachWire(t, testDirectDebitEveryTestNumber)
}

func testDirectDebitEveryTestNumber(t *testing.T, wire billingtest.Wire) {
	sink := callbackSink(t)
	for _, tc := range []struct {
		name, msisdn string
		code         billing.ResponseCode
		callback     bool
		pendingUntil time.Duration
	}{
		{"wrong PIN", "233241230001", billing.CodeFailed, true, 0},
		{"no callback ever", "233241230002", billing.CodeSuccess, false, 0},
		{"pending ten minutes", "233241230004", billing.CodeSuccess, true, 10 * time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, c := moneySandbox(t, billingtest.WithWire(wire))
			ctx := context.Background()
			mandateApproved(t, srv, c, tc.msisdn, "m"+tc.msisdn)
			ref := "dd" + tc.msisdn[len(tc.msisdn)-4:]
			url := sink + "/debit/" + ref

			_, err := c.Mandates.Charge(ctx, debit(tc.msisdn, ref, url, 2000))
			require.NoError(t, err)
			if tc.pendingUntil > 0 {
				srv.Advance(tc.pendingUntil - time.Second)
				st, err := c.Mandates.ChargeStatus(ctx, ref)
				require.NoError(t, err)
				assert.True(t, st.IsPending())
				assert.Equal(t, pendingStatusCode(wire), st.ResponseCode)
				assert.Equal(t, billing.CollectionStatusUnpaid, st.Status)
				assert.Empty(t, deliveredTo(srv, url))
			}
			srv.Advance(2 * time.Second)
			st, err := c.Mandates.ChargeStatus(ctx, ref)
			require.NoError(t, err)
			succeeded := tc.code == billing.CodeSuccess
			assert.Equal(t, succeeded, st.Succeeded())
			if wire == billingtest.WireProvider && !succeeded {
				// Unpaid under 0000: only the callback says it failed.
				assert.True(t, st.IsPending())
				assert.Equal(t, billing.CodeSuccess, st.ResponseCode)
			} else {
				assert.True(t, st.IsFinal())
				assert.Equal(t, tc.code, st.ResponseCode)
			}
			assert.Equal(t, ref, st.ClientReference)
			assert.Equal(t, billing.DecimalAmount(2000), st.Amount, "20.00 whichever wire wrote it")

			bodies := deliveredTo(srv, url)
			if !tc.callback {
				assert.Empty(t, bodies)
				return
			}
			require.Len(t, bodies, 1)
			assert.Equal(t, tc.code, decodeCallback[transactionCallback](t, bodies[0]).ResponseCode)
		})
	}

	t.Run("declined at once", func(t *testing.T) {
		srv, c := moneySandbox(t, billingtest.WithWire(wire))
		mandateApproved(t, srv, c, "233241230003", "m0003")
		_, err := c.Mandates.Charge(context.Background(), debit("233241230003", "dd0003", sink, 2000))
		var apiErr *billing.APIError
		require.ErrorAs(t, err, &apiErr)
		assert.Equal(t, billing.CodeDeclined, apiErr.Code)
		assert.Zero(t, srv.Movements("dd0003"))
	})

	t.Run("duplicate reference", func(t *testing.T) {
		srv, c := moneySandbox(t, billingtest.WithWire(wire))
		mandateApproved(t, srv, c, "233241234567", "mdup")
		_, err := c.Mandates.Charge(context.Background(), debit("233241234567", "dddup", sink, 2000))
		require.NoError(t, err)
		_, err = c.Mandates.Charge(context.Background(), debit("233241234567", "dddup", sink, 2000))
		var apiErr *billing.APIError
		require.ErrorAs(t, err, &apiErr)
		assert.Equal(t, billing.CodeFailed, apiErr.Code)
		assert.Equal(t, 1, srv.Movements("dddup"))
	})
}
