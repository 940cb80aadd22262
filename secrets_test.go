package billing_test

import (
	"context"
	"encoding/base64"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
)

// lockedBuffer collects log output written from several goroutines: the callback
// endpoint logs from the server's.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// The phone numbers and account numbers the flows use: none may appear in full in a log
// line or an error string.
const (
	phoneCustomer       = "233245550101"
	phoneCustomerNew    = "233245550102"
	phonePayer          = "233245550103"
	phoneReceive        = "233245550104"
	phoneReceiveFails   = "233245550001" // test number: the callback says 2001
	phoneReceiveRefused = "233245550003" // test number: 4070 at once
	phoneSend           = "233205550105"
	phoneSendRefused    = "233205550003" // test number: 3050 at once
	msisdnUSSD          = "233245550106"
	msisdnOTP           = "233205550107"
	msisdnNoMandate     = "233245550108"
	msisdnNeverMandated = "233245550109"
	phoneBankRecipient  = "233245550110"
	accountBank         = "1441000123456"
	accountBankFails    = "1441000120001" // test number: the name check fails
)

// secretFlows runs every flow of the SDK against the sandbox, through clients that
// log at debug level, and returns the error strings of every call that failed. Most
// calls are meant to succeed and are required to; the failures are chosen ones.
func secretFlows(t *testing.T, srv *billingtest.Server, logger *slog.Logger) []string {
	t.Helper()
	ctx := context.Background()
	var failures []string
	failed := func(err error) {
		t.Helper()
		require.Error(t, err)
		failures = append(failures, err.Error())
	}

	basic := srv.Client(billing.WithLogger(logger))
	keyed := srv.Client(billing.WithSecretKey(srv.SecretKey), billing.WithLogger(logger))
	session, err := billing.NewClient(billing.WithBaseURL(srv.URL), billing.WithSessionToken(srv.SessionToken), billing.WithLogger(logger))
	require.NoError(t, err)
	wrong := srv.Client(billing.WithClientCredentials(srv.ClientID, "wrong-client-secret"), billing.WithLogger(logger))

	tracker := billing.NewTracker(basic, billing.TrackerOptions{Clock: srv.Clock(), Logger: logger})
	endpoint := httptest.NewServer(tracker.Handler(billing.WithDedupe(0), billing.WithStatusCheckConfirmation(basic), billing.WithWebhookLogger(logger)))
	t.Cleanup(endpoint.Close)
	callback := endpoint.URL + "/callbacks"

	// Customers, with the secret key.
	cust, err := keyed.Customers.Create(ctx, &billing.CustomerCreateParams{Email: "ama@example.com", Name: "Ama", Phone: "+" + phoneCustomer})
	require.NoError(t, err)
	_, err = keyed.Customers.Update(ctx, cust.ID, &billing.CustomerUpdateParams{Phone: billing.Value(phoneCustomerNew)})
	require.NoError(t, err)
	_, err = keyed.Customers.ListPage(ctx, nil)
	require.NoError(t, err)
	_, err = keyed.Customers.Create(ctx, &billing.CustomerCreateParams{Email: "ama@example.com", Name: "Twin"})
	failed(err) // 409
	_, err = keyed.Customers.Get(ctx, "cust_missing")
	failed(err) // 404
	_, err = wrong.Customers.Get(ctx, cust.ID)
	failed(err) // 401

	// Products, subscriptions on the session token, credits, meters, licenses.
	prod, err := keyed.Products.Create(ctx, &billing.ProductCreateParams{Name: "Pro"})
	require.NoError(t, err)
	price, err := keyed.Products.CreatePrice(ctx, prod.ID, &billing.PriceCreateParams{UnitAmount: 5000, IsRecurring: true, Interval: billing.PriceIntervalMonth})
	require.NoError(t, err)
	sub, err := session.Subscriptions.Create(ctx, &billing.SubscriptionCreateParams{CustomerID: cust.ID, PriceID: price.ID})
	require.NoError(t, err)
	_, err = session.Subscriptions.Pause(ctx, sub.ID)
	require.NoError(t, err)
	_, err = session.Subscriptions.Resume(ctx, sub.ID)
	require.NoError(t, err)
	_, err = session.Subscriptions.Resume(ctx, sub.ID)
	failed(err) // 409: it is not paused
	_, err = basic.Subscriptions.Cancel(ctx, sub.ID, nil)
	require.NoError(t, err)
	_, err = keyed.Products.ArchivePrice(ctx, prod.ID, price.ID)
	require.NoError(t, err)
	_, err = keyed.Credits.Grant(ctx, cust.ID, &billing.CreditGrantParams{Amount: 100})
	require.NoError(t, err)
	_, err = keyed.Credits.Deduct(ctx, cust.ID, &billing.CreditDeductParams{Amount: 500})
	failed(err) // beyond the balance
	meter, err := keyed.Meters.Create(ctx, &billing.MeterCreateParams{Name: "Calls", EventName: "calls"})
	require.NoError(t, err)
	_, err = keyed.Meters.RecordEvent(ctx, meter.ID, &billing.MeterEventParams{CustomerID: cust.ID, IdempotencyKey: "call-1"})
	require.NoError(t, err)
	_, err = keyed.Meters.Usage(ctx, meter.ID, cust.ID, srv.Now().Add(-1), srv.Now())
	require.NoError(t, err)
	lic, err := keyed.Licenses.Create(ctx, &billing.LicenseCreateParams{CustomerID: cust.ID})
	require.NoError(t, err)
	_, err = keyed.Licenses.Activate(ctx, lic.Key)
	require.NoError(t, err)
	_, err = keyed.Licenses.Revoke(ctx, lic.Key)
	require.NoError(t, err)
	_, err = keyed.Licenses.Activate(ctx, lic.Key)
	failed(err) // revoked

	// Checkout.
	pay, err := basic.Payments.CreateCheckout(ctx, &billing.CheckoutParams{Amount: 5000, ClientReference: "secretsChk1",
		Customer: billing.CheckoutCustomer{Name: "Ama", Email: "payer@example.com", Phone: "+" + phonePayer}})
	require.NoError(t, err)
	require.NoError(t, srv.CompleteCheckout(pay.Reference, "MOBILE_MONEY", "succeeded"))
	_, err = basic.Payments.Get(ctx, pay.Reference)
	require.NoError(t, err)

	// Receive, send and send-to-bank, resolved through the Tracker's callback endpoint.
	receive := func(ref, phone string) error {
		_, err := basic.Payments.Receive(ctx, &billing.ReceiveParams{Amount: 2500, Phone: phone, Provider: billing.ProviderMTN,
			Description: "Order " + ref, ClientReference: ref, CallbackURL: callback})
		return err
	}
	require.NoError(t, receive("secretsRcv1", phoneReceive))
	require.NoError(t, receive("secretsRcv2", phoneReceiveFails))
	failed(receive("secretsRcv3", phoneReceiveRefused)) // 4070
	send := func(ref, phone string) error {
		_, err := basic.Payouts.Send(ctx, &billing.SendParams{Amount: 1000, Phone: phone, Provider: billing.ProviderMTN,
			Description: "Refund " + ref, ClientReference: ref, CallbackURL: callback})
		return err
	}
	require.NoError(t, send("secretsSnd1", phoneSend))
	failed(send("secretsSnd2", phoneSendRefused)) // 3050
	bank := func(ref, account string) error {
		_, err := basic.Payouts.SendToBank(ctx, &billing.BankTransferParams{BankCode: "300302", Amount: 10000, PrimaryCallbackURL: callback,
			Description: "Supplier " + ref, BankAccountNumber: account, ClientReference: ref, RecipientPhoneNumber: phoneBankRecipient})
		return err
	}
	require.NoError(t, bank("secretsBnk1", accountBank))
	require.NoError(t, bank("secretsBnk2", accountBankFails))

	// Lost responses: the work is done, the answer never comes.
	srv.InjectFault(billingtest.Fault{Route: "POST /v1/payments/receive", Kind: billingtest.FaultResponseLost})
	failed(receive("secretsRcv4", phoneReceive))
	srv.InjectFault(billingtest.Fault{Route: "POST /v1/merchants/{account}/send/bank/gh/{bankCode}", Kind: billingtest.FaultResponseLost})
	failed(bank("secretsBnk3", accountBank))

	// Mandates and direct debit.
	_, err = basic.Mandates.Create(ctx, &billing.MandateCreateParams{ClientReferenceID: "secretsMnd1", CustomerMSISDN: "+" + msisdnUSSD,
		Channel: billing.DirectDebitChannelMTN, CallbackURL: callback})
	require.NoError(t, err)
	_, err = basic.Mandates.Create(ctx, &billing.MandateCreateParams{ClientReferenceID: "secretsMnd2", CustomerMSISDN: msisdnUSSD,
		Channel: billing.DirectDebitChannelMTN, CallbackURL: callback})
	failed(err) // 4204: the MSISDN already has one
	otp, err := basic.Mandates.Create(ctx, &billing.MandateCreateParams{ClientReferenceID: "secretsMnd3", CustomerMSISDN: msisdnOTP,
		Channel: billing.DirectDebitChannelVodafone, CallbackURL: callback})
	require.NoError(t, err)
	texts := srv.SMS(msisdnOTP)
	require.NotEmpty(t, texts)
	_, err = basic.Mandates.VerifyOTP(ctx, &billing.MandateVerifyOTPParams{CustomerMSISDN: msisdnOTP, ServicePreApprovalID: otp.ServicePreApprovalID,
		ClientReferenceID: "secretsMnd3", OTPCode: texts[0]})
	require.NoError(t, err)
	for _, kr := range []struct {
		kind billing.Kind
		ref  string
	}{{billing.KindReceive, "secretsRcv1"}, {billing.KindReceive, "secretsRcv2"}, {billing.KindSend, "secretsSnd1"},
		{billing.KindBankTransfer, "secretsBnk1"}, {billing.KindBankTransfer, "secretsBnk2"}, {billing.KindMandate, "secretsMnd1"}} {
		require.NoError(t, tracker.Track(context.Background(), kr.kind, kr.ref))
	}
	srv.Advance(0) // everything due resolves and calls back
	for _, kr := range []struct {
		kind billing.Kind
		ref  string
	}{{billing.KindReceive, "secretsRcv1"}, {billing.KindReceive, "secretsRcv2"}, {billing.KindSend, "secretsSnd1"},
		{billing.KindBankTransfer, "secretsBnk1"}, {billing.KindBankTransfer, "secretsBnk2"}, {billing.KindMandate, "secretsMnd1"}} {
		o, err := tracker.Await(ctx, kr.kind, kr.ref)
		require.NoError(t, err, kr.ref)
		require.True(t, o.IsFinal(), kr.ref)
	}
	_, err = basic.Payments.ReceiveStatus(ctx, "secretsRcv4")
	require.NoError(t, err)
	_, err = basic.Payouts.SendStatus(ctx, "secretsSnd1")
	require.NoError(t, err)
	_, err = basic.Payouts.BankTransferStatus(ctx, &billing.BankTransferStatusParams{ClientReference: "secretsBnk3"})
	require.NoError(t, err)
	_, err = basic.Mandates.Status(ctx, "secretsMnd1")
	require.NoError(t, err)
	debit := func(ref, msisdn string) error {
		_, err := basic.Mandates.Charge(ctx, &billing.DirectDebitParams{CustomerMSISDN: msisdn, Channel: billing.DirectDebitChannelMTN, Amount: 2500,
			PrimaryCallbackURL: callback, Description: "Plan " + ref, ClientReference: ref, CustomerName: "Ama", CustomerEmail: "ama@example.com"})
		return err
	}
	require.NoError(t, debit("secretsDbt1", msisdnUSSD))
	failed(debit("secretsDbt2", msisdnNoMandate)) // 4204: no approved mandate
	srv.Advance(0)
	_, err = basic.Mandates.ChargeStatus(ctx, "secretsDbt1")
	require.NoError(t, err)
	_, err = basic.Mandates.Cancel(ctx, msisdnUSSD)
	require.NoError(t, err)
	_, err = basic.Mandates.Reactivate(ctx, &billing.MandateReactivateParams{CustomerMSISDN: msisdnUSSD, CallbackURL: callback})
	require.NoError(t, err)
	_, err = basic.Mandates.Cancel(ctx, msisdnNeverMandated)
	failed(err) // 404 naming the MSISDN

	// A forged success reaches the endpoint and is refused, with a logged reason.
	forged := `{"ResponseCode":"0000","Message":"success","Data":{"ClientReference":"secretsRcv2","Amount":25.00,"TransactionId":"forged"}}`
	resp, err := http.Post(callback, "application/json", strings.NewReader(forged))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	return failures
}

func TestNoSecretReachesLogsOrErrorStrings(t *testing.T) {
	srv := billingtest.NewServer(t, billingtest.WithManualClock(), billingtest.WithSessionToken("sess_5ecret_session_token"))
	var logs lockedBuffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	failures := secretFlows(t, srv, logger)

	written := logs.String() + strings.Join(failures, "\n")
	basic := base64.StdEncoding.EncodeToString([]byte(srv.ClientID + ":" + srv.ClientSecret))
	wrongBasic := base64.StdEncoding.EncodeToString([]byte(srv.ClientID + ":wrong-client-secret"))
	secrets := map[string]string{
		"client secret":        srv.ClientSecret,
		"wrong client secret":  "wrong-client-secret",
		"Basic credentials":    basic,
		"wrong Basic":          wrongBasic,
		"secret key":           srv.SecretKey,
		"session token":        srv.SessionToken,
		"disbursement account": srv.DisbursementAccount,
		"bank account":         accountBank,
		"failing bank account": accountBankFails,
	}
	for _, number := range []string{phoneCustomer, phoneCustomerNew, phonePayer, phoneReceive, phoneReceiveFails, phoneReceiveRefused,
		phoneSend, phoneSendRefused, msisdnUSSD, msisdnOTP, msisdnNoMandate, msisdnNeverMandated, phoneBankRecipient} {
		secrets["phone "+number] = number
		secrets["phone "+number+" without its country code"] = number[3:]
	}
	for name, secret := range secrets {
		assert.NotContains(t, written, secret, "%s leaked", name)
	}

	// The logs did see the flows, with the numbers in their paths and messages masked.
	for _, want := range []string{
		"path=/v1/payments/receive", "path=/v1/mandates/verifyotp", "status=401", "status=404", "status=409",
		"path=/v1/merchants/****202/send/bank/gh/300302", // the disbursement account
		"path=/v1/mandates/preapproval/*********106/cancel",
		"billing webhook claiming success refused",
	} {
		assert.Contains(t, logs.String(), want)
	}
	assert.Len(t, failures, 13)
	joined := strings.Join(failures, "\n")
	for _, masked := range []string{"*********106", "*********108", "*********109", "****202"} {
		assert.Contains(t, joined, masked, "error strings name numbers masked")
	}
	t.Logf("%d log lines and %d error strings checked", strings.Count(logs.String(), "\n"), len(failures))
}

// TestErrorStringsMaskNumbersTheServiceQuotes checks the masking where it happens: a
// message that quotes an MSISDN keeps it whole in APIError.Message and Body, for code
// that needs it, and masks it in Error(), which is what reaches logs.
func TestErrorStringsMaskNumbersTheServiceQuotes(t *testing.T) {
	srv := billingtest.NewServer(t, billingtest.WithManualClock())
	_, err := srv.Client().Mandates.Cancel(context.Background(), msisdnNeverMandated)
	var apiErr *billing.APIError
	require.True(t, errors.As(err, &apiErr))
	assert.Contains(t, apiErr.Message, msisdnNeverMandated)
	assert.Contains(t, string(apiErr.Body), msisdnNeverMandated)
	assert.NotContains(t, err.Error(), msisdnNeverMandated)
	assert.Contains(t, err.Error(), "*********109")
}
