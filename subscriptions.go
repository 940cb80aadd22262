package billing

import (
	"context"
	"time"
)

// SubscriptionsService subscribes customers to recurring prices.
//
// The service offers two path forms with identical bodies: /v1/subscriptions, which
// takes client credentials, and the short /subscriptions, which takes a session token
// or the secret key. A client with client credentials uses the first; any other client
// uses the second.
//
// Invoices: the service compiles an invoice at the start of each billing period of a
// subscription and sends it to the customer. It offers no endpoint that reads
// invoices, so this SDK has none: a merchant sees them as the customer does. In tests,
// billingtest.Server.Invoices (over HTTP, GET /sandbox/subscriptions/{id}/invoices)
// lists the invoices the sandbox compiled: one each time a paid period begins (Create
// without a trial, the trial's end, each renewal, Resume), none for a trial.
type SubscriptionsService service

// SubscriptionStatus is the state of a subscription.
type SubscriptionStatus string

// The subscription states.
const (
	// SubscriptionStatusIncomplete: created, initial invoice unpaid.
	SubscriptionStatusIncomplete SubscriptionStatus = "INCOMPLETE"
	// SubscriptionStatusTrialing: in its free trial, nothing charged.
	SubscriptionStatusTrialing SubscriptionStatus = "TRIALING"
	// SubscriptionStatusActive: in good standing.
	SubscriptionStatusActive SubscriptionStatus = "ACTIVE"
	// SubscriptionStatusPastDue: an invoice payment failed; renewals are retried.
	SubscriptionStatusPastDue SubscriptionStatus = "PAST_DUE"
	// SubscriptionStatusUnpaid: the retries failed; access should be restricted.
	SubscriptionStatusUnpaid SubscriptionStatus = "UNPAID"
	// SubscriptionStatusCanceled: cancelled and inactive, for good.
	SubscriptionStatusCanceled SubscriptionStatus = "CANCELED"
	// SubscriptionStatusPaused: billing paused until Resume.
	SubscriptionStatusPaused SubscriptionStatus = "PAUSED"
)

// Subscription is a customer's subscription to a recurring price. Moments that do not
// apply (no trial, no scheduled cancel) are zero.
type Subscription struct {
	ID         string `json:"id"`
	CustomerID string `json:"customerId"`
	// PriceID and Quantity are not in the service's documented record; the sandbox sends them, and
	// they are zero when a service does not.
	PriceID  string             `json:"priceId,omitempty"`
	Quantity int                `json:"quantity,omitempty"`
	Status   SubscriptionStatus `json:"status"`
	Currency string             `json:"currency,omitempty"`
	// TrialStart and TrialEnd bound the free trial, when there is one.
	TrialStart time.Time `json:"trialStart,omitzero"`
	TrialEnd   time.Time `json:"trialEnd,omitzero"`
	// CurrentPeriodStart and CurrentPeriodEnd bound the period being billed (the trial,
	// while trialing). The invoice of a paid period is compiled at its start and sent
	// to the customer (see SubscriptionsService).
	CurrentPeriodStart time.Time `json:"currentPeriodStart,omitzero"`
	CurrentPeriodEnd   time.Time `json:"currentPeriodEnd,omitzero"`
	// CancelAt is when a scheduled cancellation takes effect.
	CancelAt time.Time `json:"cancelAt,omitzero"`
	// CanceledAt is when the cancellation was asked for.
	CanceledAt time.Time `json:"canceledAt,omitzero"`
	CreatedAt  time.Time `json:"createdAt,omitzero"`
}

// SubscriptionState is what Cancel, Pause and Resume answer: the subscription's id and
// status after the change, and for Cancel when it ends and when that was asked.
type SubscriptionState struct {
	ID     string             `json:"id"`
	Status SubscriptionStatus `json:"status"`
	// CancelAt is set by a cancel at the period end: the moment it takes effect.
	CancelAt time.Time `json:"cancelAt,omitzero"`
	// CanceledAt is set by a cancel: the moment it was asked for.
	CanceledAt time.Time `json:"canceledAt,omitzero"`
}

// SubscriptionCreateParams subscribes a customer to a recurring price. CustomerID and
// PriceID are required.
type SubscriptionCreateParams struct {
	CustomerID string `json:"customerId"`
	PriceID    string `json:"priceId"`
	// Quantity defaults to 1.
	Quantity int `json:"quantity,omitempty"`
	// TrialDays starts the subscription with a free trial of that many days, up to
	// MaxTrialDays: Value(14) for two weeks, Value(0) for no trial even when the price
	// has one. Left unset, the price's TrialPeriodDays applies.
	TrialDays Nullable[int] `json:"trialDays,omitzero"`
}

func (p *SubscriptionCreateParams) validate() error {
	if p == nil {
		return invalid("params", "are required")
	}
	return firstError(
		required("customerId", p.CustomerID),
		required("priceId", p.PriceID),
		notNegative("quantity", p.Quantity),
		trialDays(p.TrialDays),
	)
}

func trialDays(n Nullable[int]) error {
	if n.IsNull() {
		return invalid("trialDays", "cannot be null: leave it unset to use the price's trial, or Value(0) for none")
	}
	days, _ := n.Get()
	return intRange("trialDays", days, 0, MaxTrialDays, "must be from 0 to 730")
}

// SubscriptionCancelParams says when a cancel takes effect.
type SubscriptionCancelParams struct {
	// AtPeriodEnd keeps an ACTIVE subscription running to the end of its current
	// period and cancels it then. False cancels at once.
	AtPeriodEnd bool `json:"atPeriodEnd"`
}

// form picks the path form of a subscription endpoint that the client's credentials
// allow: /v1/subscriptions with client credentials, else /subscriptions with a session
// token or the secret key.
func (s *SubscriptionsService) form(short, v1 endpointID) endpointID {
	if s.client.basicAuth != "" {
		return v1
	}
	return short
}

// Create subscribes a customer to a recurring price. With a trial (TrialDays, or the
// price's TrialPeriodDays) the subscription starts TRIALING and the service sends the
// customer.subscription.trial webhook; without one it starts ACTIVE. An archived price
// cannot be subscribed to.
//
// Create, Cancel, Pause and Resume are not re-sent once they may have reached the
// service; if the answer is then lost, the error matches ErrOutcomeUnknown. Get the
// subscription to see its status; no endpoint lists subscriptions, so for a lost Create
// ask support with the error's request id before creating another.
func (s *SubscriptionsService) Create(ctx context.Context, p *SubscriptionCreateParams) (*Subscription, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	return send[Subscription](ctx, s.client, s.form(epSubscriptionCreate, epSubscriptionCreateV1).op(p))
}

// Get returns the subscription with the given id. The service documents no such endpoint; the
// sandbox serves it, so the clock-driven moves (trial end, renewal, scheduled cancel)
// can be watched.
func (s *SubscriptionsService) Get(ctx context.Context, id string) (*Subscription, error) {
	return send[Subscription](ctx, s.client, s.form(epSubscriptionGet, epSubscriptionGetV1).op(nil, seg("id", id)))
}

// Cancel cancels a subscription, at once or (p.AtPeriodEnd, for an ACTIVE
// subscription) at the end of its current period. A nil p cancels at once. A cancelled
// subscription cannot be cancelled again.
func (s *SubscriptionsService) Cancel(ctx context.Context, id string, p *SubscriptionCancelParams) (*SubscriptionState, error) {
	if p == nil {
		p = &SubscriptionCancelParams{}
	}
	return send[SubscriptionState](ctx, s.client, s.form(epSubscriptionCancel, epSubscriptionCancelV1).op(p, seg("id", id)))
}

// Pause stops the billing cycles of a subscription that is not cancelled.
func (s *SubscriptionsService) Pause(ctx context.Context, id string) (*SubscriptionState, error) {
	return send[SubscriptionState](ctx, s.client, s.form(epSubscriptionPause, epSubscriptionPauseV1).op(nil, seg("id", id)))
}

// Resume restarts billing of a PAUSED subscription, which becomes ACTIVE. Resuming a
// subscription in any other state is refused.
func (s *SubscriptionsService) Resume(ctx context.Context, id string) (*SubscriptionState, error) {
	return send[SubscriptionState](ctx, s.client, s.form(epSubscriptionResume, epSubscriptionResumeV1).op(nil, seg("id", id)))
}
