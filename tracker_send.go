package billing

import (
	"context"
	"errors"
)

// ErrAlreadyTracked is matched (errors.Is) by the error of the Tracker's Send, Receive,
// SendToBank, Charge and CreateMandate when the Tracker's store already tracks the
// client reference: nothing was sent, since the movement may already have moved money.
// Await the reference for its outcome; use a new client reference for a new movement.
var ErrAlreadyTracked = errors.New("billing: movement already tracked; not sent again")

// Receive tracks a mobile-money prompt, then sends it (Payments.Receive), so that no
// crash can forget it. An error matching ErrOutcomeUnknown leaves it pending: Await or
// Run resolves it by its status check. A definite refusal (an *APIError that is not
// ErrOutcomeUnknown) settles it failed, with Source SourceRequest. Invalid params are a
// *ValidationError and track nothing.
func (t *Tracker) Receive(ctx context.Context, p *ReceiveParams) (*DirectReceive, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	return trackThenSend(ctx, t, KindReceive, p.ClientReference, func() (*DirectReceive, error) {
		return t.client.Payments.Receive(ctx, p)
	})
}

// Send tracks a mobile-money payout, then sends it (Payouts.Send): see Receive for what
// its errors leave behind.
func (t *Tracker) Send(ctx context.Context, p *SendParams) (*DirectSend, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	return trackThenSend(ctx, t, KindSend, p.ClientReference, func() (*DirectSend, error) {
		return t.client.Payouts.Send(ctx, p)
	})
}

// SendToBank tracks a send-to-bank payout, then sends it (Payouts.SendToBank): see
// Receive for what its errors leave behind.
func (t *Tracker) SendToBank(ctx context.Context, p *BankTransferParams) (*BankTransfer, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	return trackThenSend(ctx, t, KindBankTransfer, p.ClientReference, func() (*BankTransfer, error) {
		return t.client.Payouts.SendToBank(ctx, p)
	})
}

// Charge tracks a direct-debit charge, then sends it (Mandates.Charge): see Receive for
// what its errors leave behind.
func (t *Tracker) Charge(ctx context.Context, p *DirectDebitParams) (*DirectDebit, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	return trackThenSend(ctx, t, KindDirectDebit, p.ClientReference, func() (*DirectDebit, error) {
		return t.client.Mandates.Charge(ctx, p)
	})
}

// CreateMandate tracks a mandate's approval (KindMandate, keyed by ClientReferenceID),
// then asks for it (Mandates.Create): see Receive for what its errors leave behind.
func (t *Tracker) CreateMandate(ctx context.Context, p *MandateCreateParams) (*Mandate, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	return trackThenSend(ctx, t, KindMandate, p.ClientReferenceID, func() (*Mandate, error) {
		return t.client.Mandates.Create(ctx, p)
	})
}

// trackThenSend is the outbox rule: the movement is in the store before its request may
// reach the service.
func trackThenSend[T any](ctx context.Context, t *Tracker, kind Kind, clientReference string, send func() (*T, error)) (*T, error) {
	_, created, err := t.track(ctx, kind, clientReference)
	if err != nil {
		return nil, err
	}
	if !created {
		return nil, ErrAlreadyTracked
	}
	r, err := send()
	if err == nil || errors.Is(err, ErrOutcomeUnknown) || !moveRefused(err) {
		return r, err // accepted, or unknown: the callback or the status check will say
	}
	key, _ := KeyOf(kind, clientReference)
	o := Outcome{Kind: kind, ClientReference: clientReference, State: EventFailed, Source: SourceRequest, At: t.opts.Clock.Now()}
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		o.Code = apiErr.Code
	}
	if _, serr := t.settle(context.WithoutCancel(ctx), key, o, nil); serr != nil {
		return nil, errors.Join(err, serr)
	}
	return nil, err
}

// moveRefused reports whether err says for certain that the movement's request moved
// nothing: the service refused it, or it was invalid and never sent.
func moveRefused(err error) bool {
	var apiErr *APIError
	var invalid *ValidationError
	return errors.As(err, &apiErr) || errors.As(err, &invalid)
}
