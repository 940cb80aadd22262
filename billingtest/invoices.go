package billingtest

import "time"

// Invoice is an invoice the sandbox compiled for a subscription: the service compiles
// one at the start of each paid billing period and sends it to the customer, and
// documents no way to read it, so a test reads it here.
type Invoice struct {
	// ID is the invoice's id ("inv_…").
	ID string
	// SubscriptionID, CustomerID and PriceID name what is billed; Quantity is the
	// subscription's quantity of the price.
	SubscriptionID, CustomerID, PriceID string
	Quantity                            int64
	// Currency is the price's currency; Amount is in its minor units: a FLAT price's
	// unit amount whatever the quantity, otherwise the unit amount times the quantity.
	Currency string
	Amount   int64
	// PeriodStart and PeriodEnd bound the period billed, by the sandbox clock; the
	// invoice was compiled at PeriodStart.
	PeriodStart, PeriodEnd time.Time
	// Status is "PAID": the sandbox collects every invoice as it is compiled.
	Status string
	// BillingReason says why the period began: "CREATE" (a subscription without a
	// trial), "TRIAL_END", "RENEWAL" or "RESUME".
	BillingReason string
}

// Invoices returns the invoices compiled for the subscription, oldest first: one when
// a paid period begins (at Create without a trial, when the trial ends, at each
// renewal, at Resume), none for a trial. It is nil for an unknown subscription; over
// HTTP, GET /sandbox/subscriptions/{id}/invoices answers the same, 404 for an unknown
// one.
func (s *Server) Invoices(subscriptionID string) []Invoice {
	found, _ := s.sandbox.Invoices(subscriptionID)
	if len(found) == 0 {
		return nil
	}
	out := make([]Invoice, len(found))
	for i, inv := range found {
		out[i] = Invoice(inv)
	}
	return out
}
