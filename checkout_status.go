package billing

import (
	"context"
	"encoding/json"
	"fmt"
)

// This file reads what GET /v1/payments/{reference} answers a checkout's status check.
// The path is shared: it answers checkouts (the payment record), receives and sends
// (their status checks) by the same reference. The checkout's status check reads the
// payment record of the spec, and the provider's checkout status check, which is the
// lower-camel collection record ({status: "Paid" | "Unpaid", ...}, amounts in cedis,
// currencyCode null); any other record there is another kind's and no answer, so a
// session paid for is never given up as expired because its answer was read as a
// payment in no state it knows.

// errOtherKindRecord is matched by a checkout status check answered with a record of
// another kind: no answer, like errAnsweredOther, which it wraps.
var errOtherKindRecord = fmt.Errorf("%w: a record of another kind", errAnsweredOther)

// checkoutRecordWire is the data of an answer to a checkout's status check, read as
// each record the path serves: the payment record, the collection record, and the keys
// only a payout's record has.
type checkoutRecordWire struct {
	payment    Payment
	collection collectionStatusWire
	payout     struct {
		TransactionStatus json.RawMessage `json:"transactionStatus"`
		Fees              json.RawMessage `json:"Fees"`
	}
}

// UnmarshalJSON reads the data as each record; a field of the wrong type for one of
// them costs only that reading.
func (w *checkoutRecordWire) UnmarshalJSON(b []byte) error {
	*w = checkoutRecordWire{}
	if err := json.Unmarshal(b, &w.collection); err != nil {
		return err
	}
	_ = json.Unmarshal(b, &w.payout)
	if json.Unmarshal(b, &w.payment) != nil {
		w.payment = Payment{}
	}
	return nil
}

// paymentStates are the payment record's states, in any casing.
var paymentStates = []PaymentStatus{PaymentStatusPending, PaymentStatusSucceeded, PaymentStatusFailed}

// checkoutPayment returns the payment a checkout's status check answered, reading the
// spec's payment record or the provider's checkout status (its Paid is SUCCEEDED, its
// Unpaid PENDING: a session ends FAILED only by the service's word). asked is the
// reference the check was asked about. Any other record is errOtherKindRecord.
func (w *checkoutRecordWire) checkoutPayment(asked string) (*Payment, error) {
	word := foldedOneOf(w.collection.Status, CollectionStatusPaid, CollectionStatusUnpaid)
	collection := word == CollectionStatusPaid || word == CollectionStatusUnpaid
	switch {
	case len(w.payout.TransactionStatus) > 0 || len(w.payout.Fees) > 0:
		return nil, fmt.Errorf("%w: a payout's record answered the checkout %q", errOtherKindRecord, asked)
	case collection && !w.collection.CurrencyCode.null:
		// The spec's receive record names its currency; the provider's checkout
		// status check writes currencyCode null.
		return nil, fmt.Errorf("%w: a receive's record answered the checkout %q", errOtherKindRecord, asked)
	case collection:
		c := w.collection.read(majorUnits)
		p := &Payment{ID: c.transactionID, Status: PaymentStatusPending, Amount: c.amount, Currency: c.currency, Fee: c.charges}
		if word == CollectionStatusPaid {
			p.Status, p.PaidAt = PaymentStatusSucceeded, c.date
		}
		if c.clientReference != "" {
			p.Metadata = Metadata{"clientReference": c.clientReference}
		}
		return p, nil
	}
	p := w.payment
	status := foldedOneOf(wireText(p.Status), paymentStates...)
	if !knownPaymentStatus(status) {
		return nil, fmt.Errorf("%w: the checkout %q answered in state %q", errOtherKindRecord, asked, p.Status)
	}
	p.Status = status
	return &p, nil
}

func knownPaymentStatus(s PaymentStatus) bool {
	for _, k := range paymentStates {
		if s == k {
			return true
		}
	}
	return false
}

// checkoutRecord asks GET /v1/payments/{reference} about a checkout session and reads
// its answer as the checkout's (see checkoutRecordWire.checkoutPayment).
func checkoutRecord(ctx context.Context, c *Client, reference string) (*Payment, error) {
	w, err := send[checkoutRecordWire](ctx, c, epPaymentGet.op(nil, seg("reference", reference)))
	if err != nil {
		return nil, err
	}
	return w.checkoutPayment(reference)
}
