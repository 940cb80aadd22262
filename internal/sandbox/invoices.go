package sandbox

import (
	"net/http"
	"slices"
	"time"
)

// The billing reasons of an invoice: why a paid period began.
const (
	// InvoiceForCreate bills the first period of a subscription created
	// without a trial.
	InvoiceForCreate = "CREATE"
	// InvoiceForTrialEnd bills the first paid period, which begins when the
	// trial ends.
	InvoiceForTrialEnd = "TRIAL_END"
	// InvoiceForRenewal bills a period that follows the one before.
	InvoiceForRenewal = "RENEWAL"
	// InvoiceForResume bills the period a resume begins.
	InvoiceForResume = "RESUME"
)

// InvoicePaid is the status of every sandbox invoice: the sandbox collects
// each one as it is compiled (see the subscription states).
const InvoicePaid = "PAID"

// Invoice is what the service compiles and sends to the customer at the start
// of each paid billing period of a subscription (SPEC "Subscription"). The
// service documents no way to read one; the sandbox keeps them for the
// control GET /sandbox/subscriptions/{id}/invoices and Server.Invoices.
type Invoice struct {
	// ID is the invoice's id, inv_ and 24 hex digits.
	ID string
	// SubscriptionID, CustomerID and PriceID name what is billed, and
	// Quantity how many of the price.
	SubscriptionID, CustomerID, PriceID string
	Quantity                            int64
	// Currency is the price's; Amount is in its minor units (periodAmount).
	Currency string
	Amount   int64
	// PeriodStart and PeriodEnd bound the period billed; the invoice is
	// compiled at PeriodStart by the sandbox clock.
	PeriodStart, PeriodEnd time.Time
	// Status is InvoicePaid.
	Status string
	// BillingReason is why the period began: InvoiceForCreate,
	// InvoiceForTrialEnd, InvoiceForRenewal or InvoiceForResume.
	BillingReason string
}

// invoiceView is an invoice as the control writes it.
type invoiceView struct {
	ID             string    `json:"id"`
	SubscriptionID string    `json:"subscriptionId"`
	CustomerID     string    `json:"customerId"`
	PriceID        string    `json:"priceId"`
	Quantity       int64     `json:"quantity"`
	Currency       string    `json:"currency"`
	Amount         int64     `json:"amount"`
	PeriodStart    timestamp `json:"periodStart"`
	PeriodEnd      timestamp `json:"periodEnd"`
	Status         string    `json:"status"`
	BillingReason  string    `json:"billingReason"`
}

func (inv Invoice) view() invoiceView {
	return invoiceView{ID: inv.ID, SubscriptionID: inv.SubscriptionID, CustomerID: inv.CustomerID, PriceID: inv.PriceID,
		Quantity: inv.Quantity, Currency: inv.Currency, Amount: inv.Amount, PeriodStart: timestamp{inv.PeriodStart},
		PeriodEnd: timestamp{inv.PeriodEnd}, Status: inv.Status, BillingReason: inv.BillingReason}
}

// periodAmount is what one period of a subscription to quantity of pr bills,
// in minor units: a FLAT price its unit amount whatever the quantity; PER_UNIT
// the unit amount times the quantity, and so TIERED and VOLUME, for which the
// service takes no tiers. An amount above maxAmount is refused, naming the
// field that makes it so.
func periodAmount(pr *price, quantity int64) (int64, error) {
	if pr.Scheme == "FLAT" {
		if pr.UnitAmount > maxAmount {
			return 0, validationError("priceId", "price %s bills %d minor units a period, more than the largest amount, %d", pr.ID, pr.UnitAmount, maxAmount)
		}
		return pr.UnitAmount, nil
	}
	if pr.UnitAmount > maxAmount/quantity {
		return 0, validationError("quantity", "quantity %d of price %s (unitAmount %d) bills more than the largest amount, %d minor units, a period",
			quantity, pr.ID, pr.UnitAmount, maxAmount)
	}
	return pr.UnitAmount * quantity, nil
}

// compileInvoice records the invoice of sub's current period, which begins
// now for reason. Call it with s.mu held.
func (s *Server) compileInvoice(sub *subscription, reason string) {
	if s.subscriptions.invoices == nil {
		s.subscriptions.invoices = make(map[string][]Invoice)
	}
	s.subscriptions.invoices[sub.ID] = append(s.subscriptions.invoices[sub.ID], Invoice{
		ID: newID("inv_"), SubscriptionID: sub.ID, CustomerID: sub.CustomerID, PriceID: sub.PriceID, Quantity: sub.Quantity,
		Currency: sub.Currency, Amount: sub.amount, PeriodStart: sub.CurrentPeriodStart.Time, PeriodEnd: sub.CurrentPeriodEnd.Time,
		Status: InvoicePaid, BillingReason: reason,
	})
}

// Invoices returns the invoices compiled for the subscription, oldest first,
// and whether the subscription exists.
func (s *Server) Invoices(subscriptionID string) ([]Invoice, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.subscriptions.table.get(subscriptionID); !ok {
		return nil, false
	}
	return slices.Clone(s.subscriptions.invoices[subscriptionID]), true
}

// listInvoices is the control GET /sandbox/subscriptions/{id}/invoices: the
// subscription's invoices, oldest first; 404 for an unknown subscription.
func (s *Server) listInvoices(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	invoices, ok := s.Invoices(id)
	if !ok {
		writeError(w, notFoundError("subscription", id))
		return
	}
	views := make([]invoiceView, len(invoices))
	for i, inv := range invoices {
		views[i] = inv.view()
	}
	writeData(w, http.StatusOK, views)
}
