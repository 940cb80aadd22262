package billing

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// ErrAlreadyTracked is matched (errors.Is) by the error of the Tracker's Send, Receive,
// SendToBank, Charge, CreateMandate and CreateCheckout when the Tracker's store already
// tracks the client reference: nothing was sent, since the movement may already have
// moved money. Track and TrackAmount answer it only for another movement under the same
// key (another kind, amount or currency): tracking the same movement again succeeds.
// Await the reference for its outcome; use a new client reference for a new movement.
var ErrAlreadyTracked = errors.New("billing: movement already tracked; not sent again")

// Receive tracks a mobile-money prompt, then sends it (Payments.Receive), so that no
// crash can forget it. An error matching ErrOutcomeUnknown leaves it pending: Await or
// Run resolves it by its status check. A definite refusal (an *APIError that is not
// ErrOutcomeUnknown) settles it failed, with Source SourceRequest. Invalid params are a
// *ValidationError and track nothing; a request that surely never left (its context
// ended before any byte was written) releases its movement, so its reference may be
// used again. The amount and currency asked are tracked: a success of another amount
// settles EventMismatched.
func (t *Tracker) Receive(ctx context.Context, p *ReceiveParams) (*DirectReceive, error) {
	p, err := withCallback(t, p, "callbackUrl", func(p *ReceiveParams) *string { return &p.CallbackURL })
	if err != nil {
		return nil, err
	}
	if err := p.validate(); err != nil {
		return nil, err
	}
	return trackThenSend(ctx, t, KindReceive, p.ClientReference, Money{p.Amount, p.Currency}, func() (*DirectReceive, error) {
		return t.client.Payments.Receive(ctx, p)
	})
}

// Send tracks a mobile-money payout, then sends it (Payouts.Send): see Receive for what
// its errors leave behind.
func (t *Tracker) Send(ctx context.Context, p *SendParams) (*DirectSend, error) {
	p, err := withCallback(t, p, "callbackUrl", func(p *SendParams) *string { return &p.CallbackURL })
	if err != nil {
		return nil, err
	}
	if err := p.validate(); err != nil {
		return nil, err
	}
	return trackThenSend(ctx, t, KindSend, p.ClientReference, Money{p.Amount, p.Currency}, func() (*DirectSend, error) {
		return t.client.Payouts.Send(ctx, p)
	})
}

// SendToBank tracks a send-to-bank payout, then sends it (Payouts.SendToBank): see
// Receive for what its errors leave behind.
func (t *Tracker) SendToBank(ctx context.Context, p *BankTransferParams) (*BankTransfer, error) {
	p, err := withCallback(t, p, "PrimaryCallbackUrl", func(p *BankTransferParams) *string { return &p.PrimaryCallbackURL })
	if err != nil {
		return nil, err
	}
	if err := p.validate(); err != nil {
		return nil, err
	}
	return trackThenSend(ctx, t, KindBankTransfer, p.ClientReference, Money{Amount: int64(p.Amount)}, func() (*BankTransfer, error) {
		return t.client.Payouts.SendToBank(ctx, p)
	})
}

// Charge tracks a direct-debit charge, then sends it (Mandates.Charge): see Receive for
// what its errors leave behind.
func (t *Tracker) Charge(ctx context.Context, p *DirectDebitParams) (*DirectDebit, error) {
	p, err := withCallback(t, p, "PrimaryCallbackURL", func(p *DirectDebitParams) *string { return &p.PrimaryCallbackURL })
	if err != nil {
		return nil, err
	}
	if err := p.validate(); err != nil {
		return nil, err
	}
	return trackThenSend(ctx, t, KindDirectDebit, p.ClientReference, Money{Amount: int64(p.Amount)}, func() (*DirectDebit, error) {
		return t.client.Mandates.Charge(ctx, p)
	})
}

// CreateMandate tracks a mandate's approval (KindMandate, keyed by ClientReferenceID),
// then asks for it (Mandates.Create): see Receive for what its errors leave behind.
func (t *Tracker) CreateMandate(ctx context.Context, p *MandateCreateParams) (*Mandate, error) {
	p, err := withCallback(t, p, "callbackUrl", func(p *MandateCreateParams) *string { return &p.CallbackURL })
	if err != nil {
		return nil, err
	}
	if err := p.validate(); err != nil {
		return nil, err
	}
	return trackThenSend(ctx, t, KindMandate, p.ClientReferenceID, Money{}, func() (*Mandate, error) {
		return t.client.Mandates.Create(ctx, p)
	})
}

// CreateCheckout tracks a hosted checkout session (KindCheckout, keyed by
// p.ClientReference, which is required here), then creates it
// (Payments.CreateCheckout), and records the session's reference once the service
// returns it. Its webhook (Handler) or, with none CallbackWait after creation, Run's
// Payments.Get settles it: succeeded (paid as asked), mismatched (paid, but another
// amount or currency), failed, or expired when still unpaid CheckoutExpiry after
// creation. A creation whose answer was lost (an error matching ErrOutcomeUnknown)
// stays unknown until its webhook, or until CheckoutExpiry, when it settles
// EventUnknown, never failed. A refusal settles it failed, with Source SourceRequest.
func (t *Tracker) CreateCheckout(ctx context.Context, p *CheckoutParams) (*Payment, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	if err := referenceCheckout.required("ClientReference", p.ClientReference); err != nil {
		return nil, err
	}
	pay, err := trackThenSend(ctx, t, KindCheckout, p.ClientReference, Money{p.Amount, p.Currency}, func() (*Payment, error) {
		return t.client.Payments.CreateCheckout(ctx, p)
	})
	if err != nil || pay.Reference == "" {
		return pay, err
	}
	key, _ := keyOf(KindCheckout, p.ClientReference)
	if _, rerr := t.store.RecordReference(context.WithoutCancel(ctx), key, pay.Reference); rerr != nil {
		// The session exists; its webhook, or Payments.Get by client reference, still
		// settles it.
		t.opts.Logger.LogAttrs(ctx, slog.LevelWarn, "billing tracker: recording the checkout's reference failed",
			slog.String("clientReference", p.ClientReference), slog.String("error", rerr.Error()))
	}
	return pay, nil
}

// withCallback returns p with the Tracker's CallbackURL where p's own callback URL (the
// field url points at, named field on the wire) is empty: a copy, so that the caller's
// params are not changed. With neither, the movement is refused: its outcome would come
// only from the status check, CallbackWait late.
func withCallback[P any](t *Tracker, p *P, field string, url func(*P) *string) (*P, error) {
	if p == nil || *url(p) != "" {
		return p, nil
	}
	if t.opts.CallbackURL == "" {
		return nil, invalid(field, "is required by the Tracker, which learns outcomes from callbacks: set it, or set "+
			"TrackerOptions.CallbackURL to the URL where the Tracker's Handler is mounted")
	}
	q := *p
	*url(&q) = t.opts.CallbackURL
	return &q, nil
}

// trackThenSend is the outbox rule: the movement is in the store before its request may
// reach the service. A request that surely never left releases the movement again; one
// the service refused settles it failed; anything else leaves it to the callback or the
// status check.
func trackThenSend[T any](ctx context.Context, t *Tracker, kind Kind, clientReference string, amount Money, send func() (*T, error)) (*T, error) {
	m, created, err := t.track(ctx, kind, clientReference, amount, true)
	if err != nil {
		return nil, err
	}
	if !created {
		return nil, ErrAlreadyTracked
	}
	r, err := send()
	key, _ := keyOf(kind, clientReference)
	wctx := context.WithoutCancel(ctx)
	switch {
	case err == nil || errors.Is(err, ErrOutcomeUnknown):
		return r, err // accepted, or unknown: the callback or the status check will say
	case neverSent(err):
		if _, rerr := t.store.Release(wctx, key, m.StartedAt); rerr != nil {
			return nil, errors.Join(err, fmt.Errorf("billing: releasing %s %q: %w", kind, clientReference, rerr))
		}
		return nil, err
	case !moveRefused(err):
		return r, err
	}
	o := Outcome{Kind: kind, ClientReference: clientReference, State: EventFailed, Source: SourceRequest, At: t.opts.Clock.Now()}
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		o.Code = apiErr.Code
	}
	if _, serr := t.settle(wctx, key, o, nil); serr != nil {
		return nil, errors.Join(err, serr)
	}
	return nil, err
}

// neverSent reports whether err says for certain that the request never reached the
// service: it was invalid, no attempt wrote a byte of it (ErrNotSent: the connection
// failed), or its context ended before any byte was written (the client
// returns the context's error unwrapped then; once a money movement may have reached the
// service, its error matches ErrOutcomeUnknown instead).
func neverSent(err error) bool {
	var invalid *ValidationError
	var apiErr *APIError
	switch {
	case errors.Is(err, ErrOutcomeUnknown), errors.As(err, &apiErr):
		return false
	case errors.As(err, &invalid):
		return true
	}
	return errors.Is(err, ErrNotSent) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// moveRefused reports whether err says for certain that the service refused the
// movement's request: nothing moved.
func moveRefused(err error) bool {
	var apiErr *APIError
	return errors.As(err, &apiErr)
}

// checkoutGivenUp is the final outcome of a checkout whose status check, at now, is
// past CheckoutExpiry from its creation and still says nothing final: expired when the
// service holds the session unpaid, unknown when the service never showed it (its
// creation's answer was lost and no session is found). It is nil otherwise, and for
// other kinds: their status check is asked until it says.
func (t *Tracker) checkoutGivenUp(m movement, o *Outcome, err error, now time.Time) *Outcome {
	if m.Kind != KindCheckout || now.Before(m.StartedAt.Add(t.opts.CheckoutExpiry)) {
		return nil
	}
	given := &Outcome{Kind: m.Kind, ClientReference: m.ClientReference, ServiceReference: m.ServiceReference, Source: SourceStatusCheck}
	switch {
	case err == nil && o.IsPending():
		given.State = EventExpired
		given.TransactionID, given.ServiceReference = o.TransactionID, cmp.Or(o.ServiceReference, m.ServiceReference)
		given.Amount, given.Currency = o.Amount, o.Currency
	case errors.Is(err, ErrNotFound) && m.ServiceReference == "":
		given.State = EventUnknown
	default:
		return nil
	}
	return given
}
