package billing

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
)

// confirmation is what the status check says of an event that claims a final state.
// Nothing in a callback is signed, so the callback is only a hint: the status check is
// the truth.
type confirmation struct {
	// status is http.StatusOK when the status check confirms the event,
	// http.StatusForbidden when it contradicts it, and http.StatusServiceUnavailable when
	// it cannot tell yet (still pending, or unreachable).
	status int
	// reason says why, for the log; it is never shown to the sender.
	reason string
	// truth is the event as the status check tells it, when confirmed.
	truth Event
	// outcome is the status check's outcome of a money movement, when confirmed; nil
	// for a checkout event and for events without a status check.
	outcome *Outcome
}

func refused(status int, format string, args ...any) confirmation {
	return confirmation{status: status, reason: fmt.Sprintf(format, args...)}
}

// movementCallback is a callback of a money movement or a mandate: it can say what it
// claims beyond its state, and be rewritten with what the status check says.
type movementCallback interface {
	Event
	// claimed returns the amount (minor units, 0 when the callback carries none) and the
	// service's transaction id the callback claims.
	claimed() (amount int64, transactionID string)
	// withTruth returns a copy of the callback carrying the status check's state, code,
	// amounts and ids.
	withTruth(o *Outcome) Event
}

// confirmEvent asks the status check whether ev tells the truth. Events that report no
// final state, and events without a status check (a trial start), pass as they are: they
// settle nothing.
func confirmEvent(ctx context.Context, c *Client, ev Event) confirmation {
	if ev.State() == EventPending {
		return confirmation{status: http.StatusOK, truth: ev}
	}
	switch ev := ev.(type) {
	case *CheckoutEvent:
		return confirmCheckout(ctx, c, ev)
	case movementCallback:
		return confirmMovement(ctx, c, ev)
	}
	return confirmation{status: http.StatusOK, truth: ev}
}

// confirmMovement asks the status check of each kind whose callbacks have ev's shape, in
// the order of movementKinds, until one knows the reference.
func confirmMovement(ctx context.Context, c *Client, ev movementCallback) confirmation {
	for _, kind := range movementKinds {
		if callback, _ := kind.callbackKind(); callback != ev.Kind() {
			continue
		}
		o, err := statusOutcome(ctx, c, kind, ev.Reference())
		var invalidErr *ValidationError
		switch {
		case errors.Is(err, ErrNotFound), errors.As(err, &invalidErr):
			continue // not this kind (or, for a bank transfer, no account to ask about)
		case err != nil:
			return refused(http.StatusServiceUnavailable, "the %s status check failed: %v", kind, err)
		case o.IsPending():
			return refused(http.StatusServiceUnavailable, "the %s status check says it is still pending", kind)
		case o.State != ev.State():
			return refused(http.StatusForbidden, "the %s status check says %s (code %s)", kind, o.State, o.Code)
		}
		amount, transactionID := ev.claimed()
		switch {
		case amount != 0 && o.Amount != 0 && amount != o.Amount:
			return refused(http.StatusForbidden, "the callback's amount %d differs from the %s status check's %d", amount, kind, o.Amount)
		case transactionID != "" && o.TransactionID != "" && transactionID != o.TransactionID:
			return refused(http.StatusForbidden, "the callback's transaction id %q differs from the %s status check's %q", transactionID, kind, o.TransactionID)
		}
		if o.codeImplied && ev.Code() != "" {
			// The status check confirms the state but names no reason; the callback's
			// code for that same state is the reason.
			o.Code, o.codeImplied = ev.Code(), false
		}
		o.Source, o.Event = SourceCallback, ev.withTruth(o)
		return confirmation{status: http.StatusOK, truth: o.Event, outcome: o}
	}
	return refused(http.StatusForbidden, "no status check knows the reference %q", ev.Reference())
}

// confirmCheckout asks Payments.Get about a checkout event. The event handed on carries
// the payment the service holds, so its metadata (the merchant's order) is the service's.
func confirmCheckout(ctx context.Context, c *Client, ev *CheckoutEvent) confirmation {
	p, err := c.Payments.Get(ctx, ev.Reference())
	var invalidErr *ValidationError
	switch {
	case errors.Is(err, ErrNotFound), errors.As(err, &invalidErr):
		return refused(http.StatusForbidden, "the service knows no payment %q", ev.Reference())
	case err != nil:
		return refused(http.StatusServiceUnavailable, "Payments.Get failed: %v", err)
	case !p.IsFinal():
		return refused(http.StatusServiceUnavailable, "the payment is still %s", p.Status)
	case p.Status != ev.Data.Status:
		return refused(http.StatusForbidden, "the payment is %s", p.Status)
	case ev.Data.Amount != 0 && ev.Data.Amount != p.Amount:
		return refused(http.StatusForbidden, "the webhook's amount %d differs from the payment's %d", ev.Data.Amount, p.Amount)
	case ev.Data.Currency != "" && !strings.EqualFold(ev.Data.Currency, p.Currency):
		return refused(http.StatusForbidden, "the webhook's currency %q differs from the payment's %q", ev.Data.Currency, p.Currency)
	case len(ev.Data.Metadata) != 0 && !reflect.DeepEqual(ev.Data.Metadata, p.Metadata):
		return refused(http.StatusForbidden, "the webhook's metadata differs from the payment's")
	}
	truth := *ev
	truth.Data = *p
	return confirmation{status: http.StatusOK, truth: &truth}
}

// confirmedKey carries a confirmed outcome from the handler to the function it calls.
type confirmedKey struct{}

// withConfirmedOutcome returns ctx carrying o, the status check's outcome of the event
// the handler passes on.
func withConfirmedOutcome(ctx context.Context, o *Outcome) context.Context {
	if o == nil {
		return ctx
	}
	return context.WithValue(ctx, confirmedKey{}, o)
}

// confirmedOutcome returns the outcome the status check confirmed for the event being
// handled, or nil when it was not confirmed.
func confirmedOutcome(ctx context.Context) *Outcome {
	o, _ := ctx.Value(confirmedKey{}).(*Outcome)
	return o
}

func (c *TransactionCallback) claimed() (int64, string) {
	return int64(c.Data.Amount), c.Data.TransactionID
}

func (c *TransactionCallback) withTruth(o *Outcome) Event {
	truth := *c
	truth.ResponseCode, truth.Message = o.Code, "success"
	if o.Failed() {
		truth.Message = "failed"
	}
	d := &truth.Data
	d.Amount, d.Charges = DecimalAmount(o.Amount), DecimalAmount(o.Charges)
	d.TransactionID, d.ExternalTransactionID = o.TransactionID, o.ExternalTransactionID
	return &truth
}

func (c *PayoutCallback) claimed() (int64, string) {
	return int64(c.Data.Amount), c.Data.TransactionID
}

func (c *PayoutCallback) withTruth(o *Outcome) Event {
	truth := *c
	truth.ResponseCode = o.Code
	d := &truth.Data
	d.Amount, d.Charges = DecimalAmount(o.Amount), DecimalAmount(o.Charges)
	d.TransactionID, d.ExternalTransactionID = o.TransactionID, o.ExternalTransactionID
	return &truth
}

func (c *MandateCallback) claimed() (int64, string) { return 0, c.ServicePreapprovalID }

func (c *MandateCallback) withTruth(o *Outcome) Event {
	truth := *c
	truth.ServicePreapprovalID = o.TransactionID
	return &truth
}
