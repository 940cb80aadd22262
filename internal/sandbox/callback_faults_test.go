package sandbox

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Callback bodies as the sandbox sends them, one of each shape.
const (
	faultedTransaction = `{"ResponseCode":"0000","Message":"success","Data":{"Amount":50.00,"Charges":0.50,"ClientReference":"rcv1","TransactionId":"t1"}}`
	faultedPayout      = `{"ResponseCode":"0000","Data":{"AmountDebited":51.00,"Amount":50.00,"ClientReference":"snd1","RecipientName":"AMA"}}`
	faultedMandate     = `{"CustomerMsisdn":"233241234567","PreapprovalStatus":"APPROVED","ClientReferenceId":"mnd1"}`
	faultedCheckout    = `{"id":"evt_1","event":"payment.succeeded","data":{"id":"pay_1","reference":"chk1","status":"SUCCEEDED","amount":5000}}`
	faultedTrial       = `{"id":"evt_2","event":"customer.subscription.trial","data":{"id":"sub_1","status":"TRIALING"}}`
)

// deliverRaw has the sandbox deliver a raw JSON body to url.
func deliverRaw(s *Server, url, body string) { s.deliver(url, json.RawMessage(body)) }

func TestCallbackReferenceOfEveryShape(t *testing.T) {
	for body, want := range map[string]string{
		faultedTransaction: "rcv1", faultedPayout: "snd1", faultedMandate: "mnd1", faultedCheckout: "chk1", faultedTrial: "sub_1",
		`{"x":1}`: "", `not json`: "",
	} {
		assert.Equal(t, want, callbackReference([]byte(body)), body)
	}
}

func TestCallbackDroppedIsNeverDelivered(t *testing.T) {
	url := newCallbackReceiver(t)
	s := newTestServer(t, Config{})
	require.NoError(t, s.InjectCallbackFault(CallbackFault{Kind: CallbackDropped, Reference: "rcv1", Nth: 2}))

	deliverRaw(s, url, faultedPayout) // another reference: not counted
	deliverRaw(s, url, faultedTransaction)
	deliverRaw(s, url, faultedTransaction) // the second of rcv1: dropped
	deliverRaw(s, url, faultedTransaction)
	s.Advance(24 * time.Hour)
	got := deliveredTo(s, url)
	require.Len(t, got, 3)
	assert.Equal(t, "snd1", callbackReference(got[0]))
	assert.Equal(t, "rcv1", callbackReference(got[1]))
	assert.Equal(t, "rcv1", callbackReference(got[2]))
}

func TestCallbackDuplicatedIsDeliveredTwice(t *testing.T) {
	url := newCallbackReceiver(t)
	s := newTestServer(t, Config{})
	require.NoError(t, s.InjectCallbackFault(CallbackFault{Kind: CallbackDuplicated}))
	deliverRaw(s, url, faultedMandate)
	deliverRaw(s, url, faultedTransaction) // the fault was used up: once
	s.Advance(0)
	got := deliveredTo(s, url)
	require.Len(t, got, 3)
	assert.JSONEq(t, faultedMandate, string(got[0]))
	assert.JSONEq(t, faultedMandate, string(got[1]))
	assert.JSONEq(t, faultedTransaction, string(got[2]))
}

// TestCallbackCopiesFollowTheFinalOne covers the faults that deliver the callback, then
// a copy in another state: stale (the state before the final one) and contradicted (the
// opposite final state).
func TestCallbackCopiesFollowTheFinalOne(t *testing.T) {
	failedTransaction := `{"ResponseCode":"2001","Message":"failed","Data":{"Amount":50.00,"ClientReference":"rcv2","TransactionId":"t2"}}`
	for name, tc := range map[string]struct {
		kind       CallbackFaultKind
		body, copy string
	}{
		"stale transaction": {CallbackStale, faultedTransaction, `{"ResponseCode":"0001","Message":"pending","Data":{"Amount":50.00,"Charges":0.50,"ClientReference":"rcv1","TransactionId":"t1"}}`},
		"stale payout":      {CallbackStale, faultedPayout, `{"ResponseCode":"0001","Data":{"AmountDebited":51.00,"Amount":50.00,"ClientReference":"snd1","RecipientName":"AMA"}}`},
		"stale mandate":     {CallbackStale, faultedMandate, `{"CustomerMsisdn":"233241234567","PreapprovalStatus":"PENDING","ClientReferenceId":"mnd1"}`},
		"stale checkout":    {CallbackStale, faultedCheckout, `{"id":"evt_1","event":"payment.succeeded","data":{"id":"pay_1","reference":"chk1","status":"PENDING","amount":5000}}`},
		"stale trial":       {CallbackStale, faultedTrial, faultedTrial},

		"contradicted success":  {CallbackContradicted, faultedTransaction, `{"ResponseCode":"2001","Message":"failed","Data":{"Amount":50.00,"Charges":0.50,"ClientReference":"rcv1","TransactionId":"t1"}}`},
		"contradicted failure":  {CallbackContradicted, failedTransaction, `{"ResponseCode":"0000","Message":"success","Data":{"Amount":50.00,"ClientReference":"rcv2","TransactionId":"t2"}}`},
		"contradicted payout":   {CallbackContradicted, faultedPayout, `{"ResponseCode":"2001","Data":{"AmountDebited":51.00,"Amount":50.00,"ClientReference":"snd1","RecipientName":"AMA"}}`},
		"contradicted mandate":  {CallbackContradicted, faultedMandate, `{"CustomerMsisdn":"233241234567","PreapprovalStatus":"FAILED","ClientReferenceId":"mnd1"}`},
		"contradicted checkout": {CallbackContradicted, faultedCheckout, `{"id":"evt_1","event":"payment.succeeded","data":{"id":"pay_1","reference":"chk1","status":"FAILED","amount":5000}}`},
	} {
		t.Run(name, func(t *testing.T) {
			url := newCallbackReceiver(t)
			s := newTestServer(t, Config{})
			require.NoError(t, s.InjectCallbackFault(CallbackFault{Kind: tc.kind}))
			deliverRaw(s, url, tc.body)
			s.Advance(0)
			got := deliveredTo(s, url)
			require.Len(t, got, 2)
			assert.JSONEq(t, tc.body, string(got[0]), "the true state first")
			assert.JSONEq(t, tc.copy, string(got[1]), "then the copy")
			if name == "stale transaction" {
				assert.Equal(t, "50.00", string(object(t, object(t, got[1])["Data"])["Amount"]), "amounts keep their text")
			}
		})
	}
}

func TestCallbackDelayedPastFiveMinutes(t *testing.T) {
	url := newCallbackReceiver(t)
	s := newTestServer(t, Config{})
	require.NoError(t, s.InjectCallbackFault(CallbackFault{Kind: CallbackDelayed, Reference: "rcv1"}))
	require.NoError(t, s.InjectCallbackFault(CallbackFault{Kind: CallbackDelayed, Reference: "snd1", Delay: 30 * time.Minute}))
	start := s.Now()
	deliverRaw(s, url, faultedTransaction)
	deliverRaw(s, url, faultedPayout)
	s.Advance(DefaultCallbackDelay - time.Second)
	assert.Empty(t, deliveredTo(s, url))
	s.Advance(time.Second)
	require.Len(t, deliveredTo(s, url), 1)
	s.Advance(24 * time.Minute)
	got := s.Deliveries()
	require.Len(t, got, 2)
	assert.Equal(t, start.Add(6*time.Minute), got[0].At)
	assert.Equal(t, start.Add(30*time.Minute), got[1].At)
	assert.Equal(t, "snd1", callbackReference(got[1].Body))
}

func TestCallbackFaultsAreRedeliveredLikeAnyCallback(t *testing.T) {
	s := newTestServer(t, Config{})
	require.NoError(t, s.InjectCallbackFault(CallbackFault{Kind: CallbackDuplicated}))
	deliverRaw(s, "http://127.0.0.1:1/unreachable", faultedTransaction)
	s.Advance(30 * time.Second)
	assert.Len(t, s.Deliveries(), 4, "each copy is tried, then retried after 30s")
}

func TestInjectCallbackFaultRefusesWhatItCannotDo(t *testing.T) {
	s := newTestServer(t, Config{})
	assert.ErrorContains(t, s.InjectCallbackFault(CallbackFault{Kind: "lose"}), "unknown callback fault kind")
	assert.Error(t, s.InjectCallbackFault(CallbackFault{Kind: CallbackDropped, Nth: -1}))
	assert.Error(t, s.InjectCallbackFault(CallbackFault{Kind: CallbackDelayed, Delay: -time.Second}))
	assert.Empty(t, s.callbackFaults.armed)
}

func TestCallbackFaultControl(t *testing.T) {
	url := newCallbackReceiver(t)
	s := newTestServer(t, Config{})
	rec := serve(t, s, http.MethodPost, "/sandbox/callbacks/faults", basicHeader, `{"kind":"delay","reference":"rcv1","delaySeconds":420}`)
	body := answer(t, rec, http.StatusCreated)
	assert.JSONEq(t, `{"kind":"delay","reference":"rcv1","nth":1,"delaySeconds":420}`, string(body["data"]))

	for _, tc := range []struct{ body, field string }{
		{`{}`, "kind"},
		{`{"kind":"lose"}`, "kind"},
		{`{"kind":"drop","nth":0}`, "nth"},
		{`{"kind":"delay","delaySeconds":-5}`, "delaySeconds"},
		{`{"kind":"drop","reference":7}`, "reference"},
	} {
		requireError(t, serve(t, s, http.MethodPost, "/sandbox/callbacks/faults", basicHeader, tc.body), http.StatusBadRequest, CodeValidation, tc.field, "")
	}
	requireError(t, serve(t, s, http.MethodPost, "/sandbox/callbacks/faults", "", `{"kind":"drop"}`), http.StatusUnauthorized, CodeKeysMismatch, "", "")
	require.Len(t, s.callbackFaults.armed, 1, "refused requests armed nothing")

	deliverRaw(s, url, faultedTransaction)
	s.Advance(7*time.Minute - time.Second)
	assert.Empty(t, deliveredTo(s, url))
	s.Advance(time.Second)
	assert.Len(t, deliveredTo(s, url), 1)
}

func TestADroppedReceiveCallbackLeavesTheStatusCheck(t *testing.T) {
	url := newCallbackReceiver(t)
	s := newTestServer(t, Config{})
	require.NoError(t, s.InjectCallbackFault(CallbackFault{Kind: CallbackDropped, Reference: "rcv9"}))
	answer(t, serve(t, s, http.MethodPost, "/v1/payments/receive", basicHeader, receiveBody("+233241234567", "rcv9", url)), http.StatusOK)
	s.Advance(time.Hour)
	assert.Empty(t, deliveredTo(s, url), "the callback was dropped")
	status := answer(t, serve(t, s, http.MethodGet, "/v1/payments/rcv9", basicHeader, nil), http.StatusOK)
	assert.Equal(t, `"0000"`, string(status["responseCode"]))
	assert.Equal(t, `"Paid"`, string(object(t, status["data"])["status"]), "the money moved all the same")
}

func TestCallbackFaultCounts(t *testing.T) {
	url := newCallbackReceiver(t)
	s := newTestServer(t, Config{})
	require.NoError(t, s.InjectCallbackFault(CallbackFault{Kind: CallbackDropped, Reference: "rcv1"}))
	require.NoError(t, s.InjectCallbackFault(CallbackFault{Kind: CallbackDropped, Reference: "nobody"}))
	deliverRaw(s, url, faultedTransaction)
	armed, fired := s.CallbackFaultCounts()
	assert.Equal(t, []int{1, 1}, []int{armed, fired})
}

func TestParseCallbackFaults(t *testing.T) {
	faults, err := ParseCallbackFaults("order7=drop; *#3=delay:10m;payout9#2=contradict;*=stale")
	require.NoError(t, err)
	assert.Equal(t, []CallbackFault{
		{Reference: "order7", Nth: 1, Kind: CallbackDropped},
		{Reference: "", Nth: 3, Kind: CallbackDelayed, Delay: 10 * time.Minute},
		{Reference: "payout9", Nth: 2, Kind: CallbackContradicted},
		{Reference: "", Nth: 1, Kind: CallbackStale},
	}, faults)
	for _, bad := range []string{"order7", "order7=drop:1m", "*#-1=drop", "*=delay:later"} {
		_, err := ParseCallbackFaults(bad)
		assert.Error(t, err, bad)
	}
	faults, err = ParseCallbackFaults("*=lose")
	require.NoError(t, err, "the kind is checked when armed")
	s := newTestServer(t, Config{})
	assert.ErrorContains(t, s.InjectCallbackFault(faults[0]), "unknown callback fault kind")
}

// The provider's checkout webhook carries its state in Status and Data.Status
// besides ResponseCode: a stale or contradicting copy restates all three.
func TestCallbackCopiesOfTheProvidersCheckoutWebhook(t *testing.T) {
	const webhook = `{"ResponseCode":"0000","Status":"Success","Data":{"CheckoutId":"c1","ClientReference":"chk9","Status":"Success","Amount":0.5}}`
	assert.Equal(t, "chk9", callbackReference([]byte(webhook)))
	for kind, copy := range map[CallbackFaultKind]string{
		CallbackStale:        `{"ResponseCode":"0001","Status":"Pending","Data":{"CheckoutId":"c1","ClientReference":"chk9","Status":"Pending","Amount":0.5}}`,
		CallbackContradicted: `{"ResponseCode":"2001","Status":"Failed","Data":{"CheckoutId":"c1","ClientReference":"chk9","Status":"Failed","Amount":0.5}}`,
	} {
		t.Run(string(kind), func(t *testing.T) {
			url := newCallbackReceiver(t)
			s := newProviderServer(t, Config{})
			require.NoError(t, s.InjectCallbackFault(CallbackFault{Kind: kind, Reference: "chk9"}))
			deliverRaw(s, url, webhook)
			s.Advance(0)
			got := deliveredTo(s, url)
			require.Len(t, got, 2)
			assert.JSONEq(t, webhook, string(got[0]), "the true state first")
			assert.JSONEq(t, copy, string(got[1]), "then the copy")
			assert.Equal(t, "0.5", string(object(t, object(t, got[1])["Data"])["Amount"]), "amounts keep their text")
		})
	}
}

// A forged failure comes while the movement is still pending, shaped as the failure
// callback it would send on the server's wire, and the genuine callback follows.
func TestCallbackForgedFailureComesWhileThePaymentIsPending(t *testing.T) {
	for wire, newServer := range map[string]func(testing.TB, Config) *Server{"spec": newTestServer, "provider": newProviderServer} {
		t.Run(wire, func(t *testing.T) {
			url := newCallbackReceiver(t)
			s := newServer(t, Config{ResolveAfter: 10 * time.Minute})
			require.NoError(t, s.InjectCallbackFault(CallbackFault{Kind: CallbackForgedFailure, Reference: "rcv9"}))
			answer(t, serve(t, s, http.MethodPost, "/v1/payments/receive", basicHeader, receiveBody("+233241234567", "rcv9", url)), http.StatusOK)
			s.Advance(0)
			got := deliveredTo(s, url)
			require.Len(t, got, 1, "the forgery, at once")
			forged := object(t, got[0])
			assert.Equal(t, `"2001"`, string(forged["ResponseCode"]))
			assert.Equal(t, `"failed"`, string(forged["Message"]))
			data := object(t, forged["Data"])
			assert.Equal(t, `"rcv9"`, string(data["ClientReference"]))
			assert.NotEqual(t, `"0001-01-01T00:00:00Z"`, string(data["PaymentDate"]), "dated as a real failure would be")
			records := s.Movements("rcv9")
			require.Len(t, records, 1)
			assert.Equal(t, StatePending, records[0].State, "the movement itself is untouched")
			_, fired := s.CallbackFaultCounts()
			assert.Equal(t, 1, fired)

			s.Advance(10 * time.Minute)
			got = deliveredTo(s, url)
			require.Len(t, got, 2, "then the genuine callback")
			assert.Equal(t, `"0000"`, string(object(t, got[1])["ResponseCode"]))
			assert.Equal(t, StateSucceeded, s.Movements("rcv9")[0].State)
		})
	}
}

func TestCallbackForgedFailureOfAMandate(t *testing.T) {
	url := newCallbackReceiver(t)
	s := newTestServer(t, Config{ResolveAfter: 10 * time.Minute})
	require.NoError(t, s.InjectCallbackFault(CallbackFault{Kind: CallbackForgedFailure, Reference: "mnd9"}))
	createMandate(t, s, "mnd9", "233241234567", "mtn-gh-direct-debit", url)
	s.Advance(0)
	got := deliveredTo(s, url)
	require.Len(t, got, 1)
	assert.Equal(t, `"FAILED"`, string(object(t, got[0])["PreapprovalStatus"]))
	assert.Equal(t, `"mnd9"`, string(object(t, got[0])["ClientReferenceId"]))
	s.Advance(10 * time.Minute)
	got = deliveredTo(s, url)
	require.Len(t, got, 2)
	assert.Equal(t, `"APPROVED"`, string(object(t, got[1])["PreapprovalStatus"]), "the mandate was approved all the same")
}

// A forged failure waits for a movement to be accepted: callbacks pass it by.
func TestCallbackForgedFailureIsNotTakenByCallbacks(t *testing.T) {
	url := newCallbackReceiver(t)
	s := newTestServer(t, Config{})
	require.NoError(t, s.InjectCallbackFault(CallbackFault{Kind: CallbackForgedFailure}))
	require.NoError(t, s.InjectCallbackFault(CallbackFault{Kind: CallbackDuplicated, Reference: "rcv1"}))
	deliverRaw(s, url, faultedTransaction)
	s.Advance(0)
	assert.Len(t, deliveredTo(s, url), 2, "the callback met the duplicate, not the forgery")
	armed, fired := s.CallbackFaultCounts()
	assert.Equal(t, []int{1, 1}, []int{armed, fired})
}

func TestCallbackForgedAmountComesBeforeTheGenuineOne(t *testing.T) {
	failedTransaction := `{"ResponseCode":"2001","Message":"failed","Data":{"Amount":50.00,"Charges":0.00,"ClientReference":"rcv2","TransactionId":"t2"}}`
	for name, tc := range map[string]struct{ body, forged string }{
		"transaction":        {faultedTransaction, `{"ResponseCode":"0000","Message":"success","Data":{"Amount":5000.00,"Charges":0.50,"ClientReference":"rcv1","TransactionId":"t1"}}`},
		"failed transaction": {failedTransaction, `{"ResponseCode":"0000","Message":"success","Data":{"Amount":5000.00,"Charges":0.00,"ClientReference":"rcv2","TransactionId":"t2"}}`},
		"payout":             {faultedPayout, `{"ResponseCode":"0000","Data":{"AmountDebited":5100.00,"Amount":5000.00,"ClientReference":"snd1","RecipientName":"AMA"}}`},
		"mandate":            {faultedMandate, faultedMandate},
		"checkout":           {faultedCheckout, `{"id":"evt_1","event":"payment.succeeded","data":{"id":"pay_1","reference":"chk1","status":"SUCCEEDED","amount":500000}}`},
		"provider checkout": {`{"ResponseCode":"0000","Status":"Success","Data":{"ClientReference":"chk9","Status":"Success","Amount":0.5}}`,
			`{"ResponseCode":"0000","Status":"Success","Data":{"ClientReference":"chk9","Status":"Success","Amount":50.0}}`},
	} {
		t.Run(name, func(t *testing.T) {
			url := newCallbackReceiver(t)
			s := newTestServer(t, Config{})
			require.NoError(t, s.InjectCallbackFault(CallbackFault{Kind: CallbackForgedAmount}))
			deliverRaw(s, url, tc.body)
			s.Advance(0)
			got := deliveredTo(s, url)
			require.Len(t, got, 2)
			assert.JSONEq(t, tc.forged, string(got[0]), "the forgery first")
			assert.JSONEq(t, tc.body, string(got[1]), "then the genuine callback")
		})
	}
	assert.Equal(t, "5000.00", string(hundredfold([]byte("50.00"))), "decimals keep their count")
	assert.Equal(t, "0.5e0", string(hundredfold([]byte("0.5e0"))), "not a plain decimal: as it was")
}
