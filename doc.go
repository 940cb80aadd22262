// Package billing is a client for the billing and payments service: customers, products
// and prices, subscriptions, prepaid credit wallets, usage meters, license keys, hosted
// checkout, mobile-money receive and send, send-to-bank, and direct-debit mandates.
// Package [github.com/billingsdk/billing-go/billingtest] runs an in-memory sandbox of the
// whole service for tests.
//
// # Getting started
//
//	c, err := billing.NewClient(
//		billing.WithBaseURL("https://api.example.com"),
//		billing.WithClientCredentials(os.Getenv("BILLING_CLIENT_ID"), os.Getenv("BILLING_CLIENT_SECRET")),
//	)
//	cust, err := c.Customers.Create(ctx, &billing.CustomerCreateParams{
//		Email: "ama@example.com",
//		Name:  "Ama Mensah",
//	})
//
// Every call takes a context first. A [Client] is safe for concurrent use; create one per
// set of credentials and share it.
//
// # Money
//
// Amounts are int64 minor units (5000 is GHS 50.00); the endpoints that carry decimals
// on the wire take a [DecimalAmount], which holds minor units too. Floats never carry
// money. [Money] prints an amount for people, with the currency's decimal places.
//
// # Errors
//
// Bad parameters are refused before anything is sent, with a [*ValidationError] naming the
// field and the rule. Failures reported by the service are [*APIError] values carrying the
// HTTP status, the service's response code and its message; a failing response code is
// an error even under HTTP 200. errors.Is matches [ErrNotFound], [ErrUnauthorized],
// [ErrIPNotAllowed], [ErrConflict], [ErrInvalidRequest], [ErrRateLimited],
// [ErrOutcomeUnknown], and the resource-specific ones such as [ErrInsufficientCredits] and
// the license refusals.
//
// # Retries never move money twice
//
// Reads (and writes that carry a dedupe key) are retried on 5xx, timeouts and reset
// connections. Other writes are re-sent only when the request cannot have reached the
// server: the connection was never made, or the service answered 429. A money movement
// that may have reached the server but gave no definite answer returns an
// [*OutcomeUnknownError] matching [ErrOutcomeUnknown], carrying the client reference:
// resolve it with the status check or a [Tracker], never by sending the payment again.
// Waits between attempts grow exponentially with jitter, honour Retry-After, and end at
// once when the context does.
//
// # Asynchronous outcomes
//
// Money movements answer "accepted" first; the final state arrives later by callback.
// [ParseEvent] reads any callback or webhook, [NewWebhookHandler] serves them (confirm
// claimed successes with [WithStatusCheckConfirmation]: callbacks are not signed), and a
// [Tracker] waits for the callback and falls back to the status check.
//
// # Lists
//
// List methods return an iterator over every item, fetching one page at a time as the
// loop advances; ListPage methods return one [Page] with its cursor.
//
//	for cust, err := range c.Customers.List(ctx, &billing.CustomerListParams{Status: billing.CustomerStatusActive}) {
//		if err != nil {
//			return err
//		}
//		fmt.Println(cust.Email)
//	}
package billing
