package sandbox

import (
	"bytes"
	"io"
	"net/http"
	"time"
)

// The subscription states of SPEC "States and transitions › Subscription".
// The sandbox never enters INCOMPLETE, PAST_DUE or UNPAID: the spec shows no
// transition into them, and sandbox invoices are always paid.
const (
	subscriptionTrialing = "TRIALING"
	subscriptionActive   = "ACTIVE"
	subscriptionPaused   = "PAUSED"
	subscriptionCanceled = "CANCELED"
)

// Codes of the sandbox's error body for subscriptions, beyond the spec's.
const (
	// CodeInvalidState answers a transition the state machine forbids (HTTP
	// 409): resuming what is not paused, cancelling what is cancelled.
	CodeInvalidState = "invalid_state"
	// CodePriceArchived answers a subscription to an archived price (HTTP 409).
	CodePriceArchived = "price_archived"
)

// EventSubscriptionTrial is the webhook event sent when a subscription
// starts its trial (SPEC "Events").
const EventSubscriptionTrial = "customer.subscription.trial"

// subscription is a subscription as the wire shows it (SPEC "Subscription").
// priceId and quantity are not in the spec's table; the sandbox shows them
// because a subscription is meaningless without them.
type subscription struct {
	ID                 string     `json:"id"`
	CustomerID         string     `json:"customerId"`
	PriceID            string     `json:"priceId"`
	Quantity           int64      `json:"quantity"`
	Status             string     `json:"status"`
	Currency           string     `json:"currency"`
	TrialStart         *timestamp `json:"trialStart"`
	TrialEnd           *timestamp `json:"trialEnd"`
	CurrentPeriodStart *timestamp `json:"currentPeriodStart"`
	CurrentPeriodEnd   *timestamp `json:"currentPeriodEnd"`
	CancelAt           *timestamp `json:"cancelAt"`
	CanceledAt         *timestamp `json:"canceledAt"`
	CreatedAt          timestamp  `json:"createdAt"`

	interval      string    // the price's, kept: a price never changes once created
	intervalCount int64     // likewise
	amount        int64     // what each paid period bills (periodAmount), in minor units
	anchor        time.Time // start of the first paid period; every period end counts from it
	periods       int64     // paid periods begun since anchor
	// epoch changes whenever the subscription's schedule does, so a task
	// scheduled before (a period end of a paused subscription) sees it is
	// stale and does nothing.
	epoch int
}

// subscriptionCancellation is the answer of a cancel.
type subscriptionCancellation struct {
	ID         string     `json:"id"`
	Status     string     `json:"status"`
	CancelAt   *timestamp `json:"cancelAt"`
	CanceledAt *timestamp `json:"canceledAt"`
}

// subscriptionStatus is the answer of a pause or resume.
type subscriptionStatus struct {
	ID     string `json:"id"`
	Status string `json:"status"`
}

// subscriptionEvent is the body of the customer.subscription.trial webhook.
type subscriptionEvent struct {
	ID        string       `json:"id"`
	Event     string       `json:"event"`
	CreatedAt timestamp    `json:"createdAt"`
	Data      subscription `json:"data"`
}

type subscriptionStore struct {
	table table[subscription]
	// invoices are each subscription's invoices by its id, oldest first.
	invoices map[string][]Invoice
}

// subscriptionRoutes serves both path forms of SPEC "Subscriptions": /v1
// with Basic credentials and scope payments:write, and the short form with
// a session token or the secret key. Their bodies are identical. GET of one
// subscription is not in the spec; the sandbox serves it so a merchant can
// watch the clock-driven transitions.
func subscriptionRoutes(s *Server) []route {
	var routes []route
	for _, form := range []struct {
		prefix string
		auth   authKind
		scope  string
	}{
		{"/v1/subscriptions", authBasic, ScopePaymentsWrite},
		{"/subscriptions", authSession, ""},
	} {
		routes = append(routes,
			route{pattern: "POST " + form.prefix, auth: form.auth, scope: form.scope, handler: s.createSubscription},
			route{pattern: "GET " + form.prefix + "/{id}", auth: form.auth, scope: form.scope, handler: s.getSubscription},
			route{pattern: "PATCH " + form.prefix + "/{id}/cancel", auth: form.auth, scope: form.scope, handler: s.cancelSubscription},
			route{pattern: "PATCH " + form.prefix + "/{id}/pause", auth: form.auth, scope: form.scope, handler: s.pauseSubscription},
			route{pattern: "PATCH " + form.prefix + "/{id}/resume", auth: form.auth, scope: form.scope, handler: s.resumeSubscription},
		)
	}
	return append(routes, route{pattern: "GET /sandbox/subscriptions/{id}/invoices", auth: authBilling, handler: s.listInvoices})
}

func (s *Server) createSubscription(w http.ResponseWriter, r *http.Request) {
	f, err := decodeFields(r)
	if err != nil {
		writeError(w, err)
		return
	}
	customerID := f.requiredString("customerId")
	priceID := f.requiredString("priceId")
	quantity, hasQuantity := f.positiveInteger("quantity")
	if !hasQuantity {
		quantity = 1
	}
	trialDays, hasTrialDays := f.integerRange("trialDays", 0, maxTrialDays)
	if err := f.err(); err != nil {
		writeError(w, err)
		return
	}

	s.mu.Lock()
	sub, err := s.insertSubscription(customerID, priceID, quantity, trialDays, hasTrialDays)
	var event subscriptionEvent
	if err == nil && sub.Status == subscriptionTrialing {
		event = subscriptionEvent{ID: newID("evt_"), Event: EventSubscriptionTrial, CreatedAt: sub.CreatedAt, Data: sub}
	}
	s.mu.Unlock()
	if event.ID != "" {
		s.deliver(s.cfg.WebhookURL, event)
	}
	writeResult(w, http.StatusCreated, sub, err)
}

// insertSubscription starts a subscription: TRIALING when trial days apply
// (trialDays when given, else the price's trialPeriodDays), otherwise ACTIVE
// at once, its first invoice treated as paid. Call it with s.mu held.
func (s *Server) insertSubscription(customerID, priceID string, quantity, trialDays int64, hasTrialDays bool) (subscription, error) {
	if _, ok := s.customers.table.get(customerID); !ok {
		e := notFoundError("customer", customerID)
		e.field = "customerId"
		return subscription{}, e
	}
	pr, ok := s.products.prices[priceID]
	if !ok {
		e := notFoundError("price", priceID)
		e.field = "priceId"
		return subscription{}, e
	}
	if !pr.Active {
		return subscription{}, &apiError{status: http.StatusConflict, code: CodePriceArchived, field: "priceId",
			message: "price " + pr.ID + " is archived: it cannot be subscribed to"}
	}
	if !pr.IsRecurring {
		return subscription{}, validationError("priceId", "price %s is one-time: a subscription needs a recurring price", pr.ID)
	}
	amount, err := periodAmount(pr, quantity)
	if err != nil {
		return subscription{}, err
	}
	if !hasTrialDays && pr.TrialPeriodDays != nil {
		trialDays = *pr.TrialPeriodDays
	}
	now := s.Now()
	sub := &subscription{
		ID: newID("sub_"), CustomerID: customerID, PriceID: pr.ID, Quantity: quantity, Currency: pr.Currency,
		CreatedAt: timestamp{now}, interval: *pr.Interval, intervalCount: pr.IntervalCount, amount: amount,
	}
	if trialDays > 0 {
		trialEnd := now.Add(time.Duration(trialDays) * 24 * time.Hour)
		sub.Status = subscriptionTrialing
		sub.TrialStart, sub.TrialEnd = &timestamp{now}, &timestamp{trialEnd}
		sub.CurrentPeriodStart, sub.CurrentPeriodEnd = &timestamp{now}, &timestamp{trialEnd}
		s.scheduleSubscription(sub)
	} else {
		s.startBilling(sub, now, InvoiceForCreate)
	}
	s.subscriptions.table.insert(sub.ID, sub)
	return *sub, nil
}

// startBilling makes sub ACTIVE with a first period beginning at start,
// invoices it for reason, and schedules its end. Call it with s.mu held.
func (s *Server) startBilling(sub *subscription, start time.Time, reason string) {
	sub.Status = subscriptionActive
	sub.anchor, sub.periods = start, 1
	sub.CurrentPeriodStart = &timestamp{start}
	sub.CurrentPeriodEnd = &timestamp{addIntervals(start, sub.interval, sub.intervalCount)}
	s.compileInvoice(sub, reason)
	s.scheduleSubscription(sub)
}

// scheduleSubscription arranges for the end of sub's current period (or
// trial) to be handled when the sandbox clock reaches it, and makes every
// task scheduled before stale. Call it with s.mu held.
func (s *Server) scheduleSubscription(sub *subscription) {
	sub.epoch++
	at := sub.CurrentPeriodEnd.Time
	s.scheduleJob(at, endPeriodJob{ID: sub.ID, Epoch: sub.epoch, At: timestamp{at}})
}

// scheduleCancel arranges for sub to be cancelled when the sandbox clock
// reaches its cancelAt, even if it is paused by then. Call it with s.mu held.
func (s *Server) scheduleCancel(sub *subscription) {
	s.scheduleJob(sub.CancelAt.Time, cancelSubscriptionJob{ID: sub.ID, At: *sub.CancelAt})
}

// periodEnded moves sub on at the end of its period: a scheduled cancel
// takes effect, a trial turns into the first paid period, and an active
// subscription renews by intervalCount × interval. Call it with s.mu held.
func (s *Server) periodEnded(sub *subscription, at time.Time) {
	switch {
	case sub.CancelAt != nil && !sub.CancelAt.After(at):
		// The cancel task due at the same moment will find it done.
		sub.Status = subscriptionCanceled
		sub.epoch++
	case sub.Status == subscriptionTrialing:
		s.startBilling(sub, at, InvoiceForTrialEnd)
	case sub.Status == subscriptionActive:
		sub.periods++
		sub.CurrentPeriodStart = sub.CurrentPeriodEnd
		sub.CurrentPeriodEnd = &timestamp{addIntervals(sub.anchor, sub.interval, sub.periods*sub.intervalCount)}
		s.compileInvoice(sub, InvoiceForRenewal)
		s.scheduleSubscription(sub)
	}
}

func (s *Server) getSubscription(w http.ResponseWriter, r *http.Request) {
	sub, err := s.withSubscription(r.PathValue("id"), nil)
	writeResult(w, http.StatusOK, sub, err)
}

// cancelSubscription follows the spec's two cancel rows: atPeriodEnd true on
// an ACTIVE subscription schedules the cancel for the period end; otherwise
// the subscription is cancelled at once. Both set canceledAt to the moment of
// the request. A cancelled subscription cannot be cancelled again, and only
// an ACTIVE one can be cancelled at its period end.
func (s *Server) cancelSubscription(w http.ResponseWriter, r *http.Request) {
	f, err := decodeOptionalFields(r)
	if err != nil {
		writeError(w, err)
		return
	}
	atPeriodEnd, _ := f.boolean("atPeriodEnd")
	if err := f.err(); err != nil {
		writeError(w, err)
		return
	}
	var result subscriptionCancellation
	_, err = s.withSubscription(r.PathValue("id"), func(sub *subscription) error {
		if sub.Status == subscriptionCanceled {
			return invalidState(sub, "cancelled: it cannot be cancelled again")
		}
		now := timestamp{s.Now()}
		if atPeriodEnd {
			if sub.Status != subscriptionActive {
				return invalidState(sub, "not ACTIVE: only an active subscription can be cancelled at its period end; cancel it at once instead")
			}
			if sub.CancelAt == nil {
				sub.CancelAt, sub.CanceledAt = sub.CurrentPeriodEnd, &now
				s.scheduleCancel(sub)
			}
		} else {
			sub.Status = subscriptionCanceled
			sub.CancelAt, sub.CanceledAt = nil, &now
			sub.epoch++
		}
		result = subscriptionCancellation{ID: sub.ID, Status: sub.Status, CancelAt: sub.CancelAt, CanceledAt: sub.CanceledAt}
		return nil
	})
	writeResult(w, http.StatusOK, result, err)
}

// pauseSubscription stops the billing cycles of any subscription that is not
// cancelled. Pausing a paused subscription changes nothing.
func (s *Server) pauseSubscription(w http.ResponseWriter, r *http.Request) {
	sub, err := s.withSubscription(r.PathValue("id"), func(sub *subscription) error {
		if sub.Status == subscriptionCanceled {
			return invalidState(sub, "cancelled: it cannot be paused")
		}
		if sub.Status != subscriptionPaused {
			sub.Status = subscriptionPaused
			sub.epoch++ // the pending period end no longer applies
		}
		return nil
	})
	writeResult(w, http.StatusOK, subscriptionStatus{ID: sub.ID, Status: sub.Status}, err)
}

// resumeSubscription restarts billing of a PAUSED subscription with a new
// period from now; an interrupted trial is not resumed.
func (s *Server) resumeSubscription(w http.ResponseWriter, r *http.Request) {
	sub, err := s.withSubscription(r.PathValue("id"), func(sub *subscription) error {
		if sub.Status != subscriptionPaused {
			return invalidState(sub, "not PAUSED: only a paused subscription can be resumed")
		}
		s.startBilling(sub, s.Now(), InvoiceForResume)
		return nil
	})
	writeResult(w, http.StatusOK, subscriptionStatus{ID: sub.ID, Status: sub.Status}, err)
}

// withSubscription runs change (when not nil) on the subscription id under
// the lock and returns a copy of the result. A change that fails leaves the
// subscription as it was.
func (s *Server) withSubscription(id string, change func(*subscription) error) (subscription, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sub, ok := s.subscriptions.table.get(id)
	if !ok {
		return subscription{}, notFoundError("subscription", id)
	}
	if change != nil {
		if err := change(sub); err != nil {
			return subscription{}, err
		}
	}
	return *sub, nil
}

func invalidState(sub *subscription, problem string) *apiError {
	return &apiError{status: http.StatusConflict, code: CodeInvalidState, message: "subscription " + sub.ID + " is " + problem}
}

// decodeOptionalFields is decodeFields for a body the spec makes optional:
// an empty body reads as {}.
func decodeOptionalFields(r *http.Request) (*fields, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes+1))
	if err != nil {
		return nil, validationError("", "request body could not be read: %v", err)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return &fields{}, nil
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return decodeFields(r)
}

// addIntervals returns anchor plus n intervals. Months and years keep the
// anchor's day of the month, clamped to the last day of a shorter month, so
// a subscription started on 31 January renews on 28 (or 29) February and
// then on 31 March.
func addIntervals(anchor time.Time, interval string, n int64) time.Time {
	anchor = anchor.UTC()
	switch interval {
	case "DAY":
		return anchor.AddDate(0, 0, int(n))
	case "WEEK":
		return anchor.AddDate(0, 0, 7*int(n))
	case "MONTH":
		return addMonths(anchor, n)
	default: // YEAR
		return addMonths(anchor, 12*n)
	}
}

func addMonths(t time.Time, months int64) time.Time {
	year, month, day := t.Date()
	first := time.Date(year, month+time.Month(months), 1, t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
	lastDay := first.AddDate(0, 1, -1).Day()
	return first.AddDate(0, 0, min(day, lastDay)-1)
}
