package billing

import (
	"bytes"
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// escapedKeys are the ways a sender may write a genuine callback's telling keys with
// JSON escapes: each reads, to encoding/json and to the inbound gate, as the plain key.
var escapedKeys = map[string][2]string{
	"ResponseCode":            {`"ResponseCode"`, `"\u0052esponseCode"`},
	"Data":                    {`"Data"`, `"\u0044ata"`},
	"ClientReference in Data": {`"ClientReference"`, `"\u0043lient\u0052eference"`},
}

// A tracked, paid receive's genuine callback with a key written with a JSON escape
// settles the receive exactly as the plain callback does: the shape scanner reads the
// canonical form the gate returns, not the bytes as they came.
func TestEscapedKeySettlesATrackedReceive(t *testing.T) {
	plain := fixture(t, "events/transaction_success.json")
	settle := func(t *testing.T, body []byte) (int, *Outcome) {
		tr, mock, _ := newTestTracker(t, TrackerOptions{})
		registerStatus(t, mock, "/v1/payments/order1042", "confirm/receive_status_order1042.json")
		require.NoError(t, tr.Track(context.Background(), KindReceive, "order1042"))
		code := post(t, tr.Handler(), body).Code
		return code, settledNow(t, tr, KindReceive, "order1042")
	}
	wantCode, want := settle(t, plain)
	require.Equal(t, http.StatusOK, wantCode)
	require.NotNil(t, want)
	for name, spelling := range escapedKeys {
		t.Run(name, func(t *testing.T) {
			body := bytes.Replace(plain, []byte(spelling[0]), []byte(spelling[1]), 1)
			require.NotEqual(t, plain, body)
			code, got := settle(t, body)
			assert.Equal(t, wantCode, code, "the escaped callback is answered as the plain one")
			require.NotNil(t, got, "the escaped callback settled nothing")
			assert.True(t, got.Succeeded(), "state %s", got.State)
			assert.Equal(t, SourceCallback, got.Source)
			assert.Equal(t, want.Amount, got.Amount)
			assert.Equal(t, want.TransactionID, got.TransactionID)
			assert.Equal(t, want.Event, got.Event)
		})
	}
}

// The same escaped keys read by ParseEvent: the same event as the plain callback.
func TestEscapedKeyParsesAsThePlainKey(t *testing.T) {
	plain := fixture(t, "events/transaction_success.json")
	want, err := ParseEvent(plain)
	require.NoError(t, err)
	for name, spelling := range escapedKeys {
		body := bytes.Replace(plain, []byte(spelling[0]), []byte(spelling[1]), 1)
		got, err := ParseEvent(body)
		require.NoError(t, err, name)
		assert.Equal(t, want, got, name)
	}
}

// escapedEventName writes the checkout webhook's event name with a JSON escape.
func escapedEventName(t *testing.T, body []byte) []byte {
	t.Helper()
	out := bytes.Replace(body, []byte(`"payment.succeeded"`), []byte(`"payment\u002esucceeded"`), 1)
	require.NotEqual(t, body, out, "no event name in %s", body)
	return out
}

// A tracked, paid checkout's webhook whose event name is written with a JSON escape
// settles the checkout; it is no event of an unknown kind, handed on and dropped.
func TestEscapedEventNameSettlesATrackedCheckout(t *testing.T) {
	tr, svc, _, _ := checkoutTracker(t, false, TrackerOptions{})
	var others []Event
	h := tr.Handler(WithEventHandler(func(_ context.Context, ev Event) error { others = append(others, ev); return nil }))
	pay, err := tr.CreateCheckout(context.Background(), checkoutParams("order9"))
	require.NoError(t, err)
	hook := escapedEventName(t, svc.pay(pay.Reference))

	assert.Equal(t, http.StatusOK, post(t, h, hook).Code)
	o := settledNow(t, tr, KindCheckout, "order9")
	require.NotNil(t, o, "the paid checkout is still pending")
	assert.True(t, o.Succeeded(), "state %s", o.State)
	assert.Equal(t, SourceCallback, o.Source)
	assert.Equal(t, pay.Reference, o.ServiceReference)
	assert.Empty(t, others, "a tracked checkout's webhook reaches no event function")
}

// The recorded checkout webhook with its event name escaped is confirmed and handed on
// as the paid checkout it is, never as an unconfirmed event of an unknown kind.
func TestEscapedEventNameIsTheCheckoutWebhook(t *testing.T) {
	plain := fixture(t, "events/payment_succeeded.json")
	body := escapedEventName(t, plain)
	want, err := ParseEvent(plain)
	require.NoError(t, err)
	got, err := ParseEvent(body)
	require.NoError(t, err)
	assert.Equal(t, want, got)

	h, rec, mock, _ := confirmingHandler(t)
	registerStatus(t, mock, "/v1/payments/ref_7Q2K9XW4LM", "confirm/checkout_get_ref_7Q2K9XW4LM.json")
	assert.Equal(t, http.StatusOK, post(t, h, body).Code)
	ev, ok := rec.last().(*CheckoutEvent)
	require.True(t, ok, "handed on as %T", rec.last())
	assert.Equal(t, PaymentStatusSucceeded, ev.Data.Status)
	assert.Equal(t, "ref_7Q2K9XW4LM", ev.Reference())
}

// The canonical form decodes every escape of keys and strings, replaces text that is no
// UTF-8 as encoding/json does, keeps what JSON must escape escaped, and is the body
// itself when nothing needs decoding.
func TestInboundCanonicalForm(t *testing.T) {
	for body, want := range map[string]string{
		`{"\u0052esponseCode":"0000"}`:          `{"ResponseCode":"0000"}`,
		`{"event":"payment\u002esucceeded"}`:    `{"event":"payment.succeeded"}`,
		`{"a":"\/x\u00e9\ud83d\ude00"}`:         `{"a":"/xé😀"}`,
		`{"a":"say \"hi\"\\ \u0022"}`:           `{"a":"say \"hi\"\\ \""}`,
		`{"a":"line\u000a\ttab\u0001"}`:         `{"a":"line\n\ttab\u0001"}`,
		"{\"a\":\"\xff\"}":                      `{"a":"` + "\uFFFD" + `"}`,
		`{"a":"\ud800"}`:                        `{"a":"` + "\uFFFD" + `"}`,
		` [ {"k" : "\u0076" } , 1.5e3, null ] `: ` [ {"k" : "v" } , 1.5e3, null ] `,
	} {
		got, err := readInbound([]byte(body))
		require.NoError(t, err, body)
		assert.Equal(t, want, string(got), body)
	}
	plain := fixture(t, "events/payment_succeeded.json")
	got, err := readInbound(plain)
	require.NoError(t, err)
	assert.Same(t, &plain[0], &got[0], "a body without escapes is its own canonical form")
}
