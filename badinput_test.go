package billing_test

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
)

// The bad-input table: every rule of SPEC "Limits" and every required field of every
// endpoint, each broken once. For each row the SDK must refuse the call with a
// *ValidationError naming the field, sending nothing; and the sandbox, sent the same
// request as raw JSON past the SDK, must refuse it on its own with a spec-shaped 4xx and
// change nothing that any read can see. A rule only one side enforces fails its row: that
// is what the table is for.

// badInput is one broken rule.
type badInput struct {
	op    string // the SDK method, e.g. "Customers.Create"
	rule  string // the rule broken, as a phrase
	field string // the Field of the SDK's *ValidationError
	sdk   func(ctx context.Context, e *badInputClients) error
	wire  wireRequest
}

// badInputClients are the clients the SDK side calls through; both count what they send.
type badInputClients struct {
	c         *billing.Client // client credentials and the sandbox's disbursement account
	noAccount *billing.Client // the same, with no disbursement account
}

// wireRequest is a row's request as the sandbox receives it, and the refusal it must
// answer.
type wireRequest struct {
	method, path, body string
	status             int    // 0 means 400
	code               string // "" means 4000
	// field is the field the sandbox must name: "" means the SDK's (on a 400), "-" none.
	field string
	// sdkOnly, when set, says why the request cannot be written on the wire at all; the
	// row then checks the SDK side only.
	sdkOnly string
}

// wirePost, wirePatch, wireGet and wireDelete write a row's raw request.
func wirePost(path, body string) wireRequest {
	return wireRequest{method: http.MethodPost, path: path, body: body}
}

func wirePatch(path, body string) wireRequest {
	return wireRequest{method: http.MethodPatch, path: path, body: body}
}

func wireGet(path string) wireRequest    { return wireRequest{method: http.MethodGet, path: path} }
func wireDelete(path string) wireRequest { return wireRequest{method: http.MethodDelete, path: path} }

// notFound is the answer to a path whose id is blank (sent as %20): no record has it.
func (w wireRequest) notFound() wireRequest {
	w.status, w.code, w.field = http.StatusNotFound, "not_found", "-"
	return w
}

// naming sets the field the sandbox names when it is not the SDK's.
func (w wireRequest) naming(field string) wireRequest { w.field = field; return w }

// onlySDK marks a rule the wire cannot carry.
func onlySDK(why string) wireRequest { return wireRequest{sdkOnly: why} }

// obj is a JSON object written in Go; json.Number keeps a number exactly as written.
type obj = map[string]any

// absentKey, given as the value of a path to bodyWith, removes the key.
var absentKey = &struct{ absent bool }{true}

// bodyWith returns base encoded as JSON after setting each dotted path (into nested
// objects) to its value, or removing it when the value is absentKey. base is not changed.
func bodyWith(base obj, pathValues ...any) string {
	b, err := json.Marshal(base)
	if err != nil {
		panic(err)
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	var m obj
	if err := dec.Decode(&m); err != nil {
		panic(err)
	}
	for i := 0; i+1 < len(pathValues); i += 2 {
		keys := strings.Split(pathValues[i].(string), ".")
		at := m
		for _, k := range keys[:len(keys)-1] {
			next, ok := at[k].(obj)
			if !ok {
				next = obj{}
				at[k] = next
			}
			at = next
		}
		if last := keys[len(keys)-1]; pathValues[i+1] == absentKey {
			delete(at, last)
		} else {
			at[last] = pathValues[i+1]
		}
	}
	out, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return string(out)
}

// breaking returns an SDK call that builds valid params, breaks them with a mutation
// and calls the SDK with them.
func breaking[P any](valid func() *P, call func(ctx context.Context, e *badInputClients, p *P) error) func(func(*P)) func(context.Context, *badInputClients) error {
	return func(mutate func(*P)) func(context.Context, *badInputClients) error {
		return func(ctx context.Context, e *badInputClients) error {
			p := valid()
			mutate(p)
			return call(ctx, e, p)
		}
	}
}

// seededRecords are the records the table's paths name, created before it runs.
type seededRecords struct {
	customerID, productID, priceID, subscriptionID, meterID, licenseKey string
}

// Client references the table's money bodies carry. No row may ever record a movement
// under any of them.
const (
	refCheckout = "badchk1"
	refReceive  = "badrcv1"
	refSend     = "badsnd1"
	refBank     = "badbnk1"
	refMandate  = "badmnd1"
	refDebit    = "baddbt1"
	refHyphen   = "bad-ref"
	refDotted   = "bad.ref" // no reference takes a dot
	// The seeded mandates: one awaiting its OTP, one cancelled.
	refOTPMandate       = "seedotp1"
	refCancelledMandate = "seedcnl1"
	msisdnOTPMandate    = "233205550078"
	msisdnCancelled     = "233205550079"
)

var (
	ref37     = strings.Repeat("r", 37)
	text256   = strings.Repeat("d", 256)
	key256    = strings.Repeat("k", 256)
	badRefs   = []string{refCheckout, refReceive, refSend, refBank, refMandate, refDebit, refHyphen, ref37}
	nested    = billing.Metadata{"address": map[string]any{"city": "Accra"}}
	nestedRaw = obj{"address": obj{"city": "Accra"}}
)

func badInputs(s seededRecords) []badInput {
	const callback = "https://merchant.example/callbacks"
	blank := "%20" // a blank path segment: the SDK refuses " " as a missing id

	type (
		customerCreate  = billing.CustomerCreateParams
		customerUpdate  = billing.CustomerUpdateParams
		customerList    = billing.CustomerListParams
		productCreate   = billing.ProductCreateParams
		productList     = billing.ProductListParams
		priceCreate     = billing.PriceCreateParams
		subCreate       = billing.SubscriptionCreateParams
		creditGrant     = billing.CreditGrantParams
		creditDeduct    = billing.CreditDeductParams
		ledgerList      = billing.CreditTransactionListParams
		meterCreate     = billing.MeterCreateParams
		meterEvent      = billing.MeterEventParams
		meterEventList  = billing.MeterEventListParams
		licenseCreate   = billing.LicenseCreateParams
		licenseUpdate   = billing.LicenseUpdateParams
		checkout        = billing.CheckoutParams
		receive         = billing.ReceiveParams
		send            = billing.SendParams
		bankTransfer    = billing.BankTransferParams
		bankStatus      = billing.BankTransferStatusParams
		mandateCreate   = billing.MandateCreateParams
		mandateOTP      = billing.MandateVerifyOTPParams
		mandateReactive = billing.MandateReactivateParams
		debit           = billing.DirectDebitParams
	)

	createCustomer := breaking(func() *customerCreate { return &customerCreate{Email: "new@example.com", Name: "New"} },
		func(ctx context.Context, e *badInputClients, p *customerCreate) error {
			_, err := e.c.Customers.Create(ctx, p)
			return err
		})
	customerBody := obj{"email": "new@example.com", "name": "New"}
	updateCustomer := breaking(func() *customerUpdate { return &customerUpdate{} },
		func(ctx context.Context, e *badInputClients, p *customerUpdate) error {
			_, err := e.c.Customers.Update(ctx, s.customerID, p)
			return err
		})
	listCustomers := breaking(func() *customerList { return &customerList{} },
		func(ctx context.Context, e *badInputClients, p *customerList) error {
			_, err := e.c.Customers.ListPage(ctx, p)
			return err
		})

	createProduct := breaking(func() *productCreate { return &productCreate{Name: "Pro"} },
		func(ctx context.Context, e *badInputClients, p *productCreate) error {
			_, err := e.c.Products.Create(ctx, p)
			return err
		})
	productBody := obj{"name": "Pro"}
	listProducts := breaking(func() *productList { return &productList{} },
		func(ctx context.Context, e *badInputClients, p *productList) error {
			_, err := e.c.Products.ListPage(ctx, p)
			return err
		})
	createPrice := breaking(func() *priceCreate { return &priceCreate{UnitAmount: 1000} },
		func(ctx context.Context, e *badInputClients, p *priceCreate) error {
			_, err := e.c.Products.CreatePrice(ctx, s.productID, p)
			return err
		})
	priceBody := obj{"unitAmount": 1000}
	pricesPath := "/v1/products/" + s.productID + "/prices"

	createSubscription := breaking(func() *subCreate { return &subCreate{CustomerID: s.customerID, PriceID: s.priceID} },
		func(ctx context.Context, e *badInputClients, p *subCreate) error {
			_, err := e.c.Subscriptions.Create(ctx, p)
			return err
		})
	subscriptionBody := obj{"customerId": s.customerID, "priceId": s.priceID}

	grant := breaking(func() *creditGrant { return &creditGrant{Amount: 10} },
		func(ctx context.Context, e *badInputClients, p *creditGrant) error {
			_, err := e.c.Credits.Grant(ctx, s.customerID, p)
			return err
		})
	deduct := breaking(func() *creditDeduct { return &creditDeduct{Amount: 10} },
		func(ctx context.Context, e *badInputClients, p *creditDeduct) error {
			_, err := e.c.Credits.Deduct(ctx, s.customerID, p)
			return err
		})
	creditBody := obj{"amount": 10}
	creditsPath := "/v1/credits/" + s.customerID
	listLedger := breaking(func() *ledgerList { return &ledgerList{} },
		func(ctx context.Context, e *badInputClients, p *ledgerList) error {
			_, err := e.c.Credits.TransactionsPage(ctx, s.customerID, p)
			return err
		})

	createMeter := breaking(func() *meterCreate { return &meterCreate{Name: "Calls", EventName: "calls.new"} },
		func(ctx context.Context, e *badInputClients, p *meterCreate) error {
			_, err := e.c.Meters.Create(ctx, p)
			return err
		})
	meterBody := obj{"name": "Calls", "eventName": "calls.new"}
	recordEvent := breaking(func() *meterEvent { return &meterEvent{} },
		func(ctx context.Context, e *badInputClients, p *meterEvent) error {
			_, err := e.c.Meters.RecordEvent(ctx, s.meterID, p)
			return err
		})
	eventsPath := "/v1/meters/" + s.meterID + "/events"
	listEvents := breaking(func() *meterEventList { return &meterEventList{} },
		func(ctx context.Context, e *badInputClients, p *meterEventList) error {
			_, err := e.c.Meters.EventsPage(ctx, s.meterID, p)
			return err
		})

	createLicense := breaking(func() *licenseCreate { return &licenseCreate{CustomerID: s.customerID} },
		func(ctx context.Context, e *badInputClients, p *licenseCreate) error {
			_, err := e.c.Licenses.Create(ctx, p)
			return err
		})
	licenseBody := obj{"customerId": s.customerID}
	updateLicense := breaking(func() *licenseUpdate { return &licenseUpdate{} },
		func(ctx context.Context, e *badInputClients, p *licenseUpdate) error {
			_, err := e.c.Licenses.Update(ctx, s.licenseKey, p)
			return err
		})
	licensePath := "/v1/licenses/" + s.licenseKey

	createCheckout := breaking(func() *checkout { return &checkout{Amount: 5000, ClientReference: refCheckout} },
		func(ctx context.Context, e *badInputClients, p *checkout) error {
			_, err := e.c.Payments.CreateCheckout(ctx, p)
			return err
		})
	checkoutBody := obj{"amount": 5000, "metadata": obj{"clientReference": refCheckout}}
	payer := billing.CheckoutCustomer{Name: "Ama", Email: "ama@example.com"}

	receiveMoney := breaking(func() *receive {
		return &receive{Amount: 500, Phone: "233241234567", Provider: billing.ProviderMTN, Description: "Order 1", ClientReference: refReceive}
	}, func(ctx context.Context, e *badInputClients, p *receive) error {
		_, err := e.c.Payments.Receive(ctx, p)
		return err
	})
	receiveBody := obj{"amount": 500, "phone": "233241234567", "provider": "MTN", "description": "Order 1",
		"metadata": obj{"clientReference": refReceive}}

	sendMoney := breaking(func() *send {
		return &send{Amount: 500, Phone: "233241234567", Provider: billing.ProviderMTN, Name: "Kofi", Description: "Refund", ClientReference: refSend}
	}, func(ctx context.Context, e *badInputClients, p *send) error {
		_, err := e.c.Payouts.Send(ctx, p)
		return err
	})
	sendBody := obj{"amount": 500, "phone": "233241234567", "provider": "MTN", "name": "Kofi", "description": "Refund",
		"metadata": obj{"clientReference": refSend}}

	sendToBank := breaking(func() *bankTransfer {
		return &bankTransfer{BankCode: "300302", Amount: 50000, PrimaryCallbackURL: callback, Description: "Supplier",
			BankAccountNumber: "1441000123456", ClientReference: refBank}
	}, func(ctx context.Context, e *badInputClients, p *bankTransfer) error {
		_, err := e.c.Payouts.SendToBank(ctx, p)
		return err
	})
	bankBody := obj{"Amount": json.Number("500.00"), "PrimaryCallbackUrl": callback, "Description": "Supplier",
		"BankAccountNumber": "1441000123456", "ClientReference": refBank}
	bankPath := "/v1/merchants/2020202/send/bank/gh/300302"

	createMandate := breaking(func() *mandateCreate {
		return &mandateCreate{ClientReferenceID: refMandate, CustomerMSISDN: "233241234567", Channel: billing.DirectDebitChannelMTN, CallbackURL: callback}
	}, func(ctx context.Context, e *badInputClients, p *mandateCreate) error {
		_, err := e.c.Mandates.Create(ctx, p)
		return err
	})
	mandateBody := obj{"clientReferenceId": refMandate, "customerMsisdn": "233241234567", "channel": "mtn-gh-direct-debit", "callbackUrl": callback}
	verifyOTP := breaking(func() *mandateOTP {
		return &mandateOTP{CustomerMSISDN: msisdnOTPMandate, ServicePreApprovalID: "seeded", ClientReferenceID: refOTPMandate, OTPCode: "ABCD-1234"}
	}, func(ctx context.Context, e *badInputClients, p *mandateOTP) error {
		_, err := e.c.Mandates.VerifyOTP(ctx, p)
		return err
	})
	otpBody := obj{"customerMsisdn": msisdnOTPMandate, "servicePreApprovalId": "seeded", "clientReferenceId": refOTPMandate, "otpCode": "ABCD-1234"}
	reactivate := breaking(func() *mandateReactive {
		return &mandateReactive{CustomerMSISDN: msisdnCancelled, CallbackURL: callback}
	}, func(ctx context.Context, e *badInputClients, p *mandateReactive) error {
		_, err := e.c.Mandates.Reactivate(ctx, p)
		return err
	})
	reactivateBody := obj{"customerMsisdn": msisdnCancelled, "callbackUrl": callback}
	charge := breaking(func() *debit {
		return &debit{CustomerMSISDN: "233241234567", Channel: billing.DirectDebitChannelMTN, Amount: 2500,
			PrimaryCallbackURL: callback, Description: "Monthly plan", ClientReference: refDebit}
	}, func(ctx context.Context, e *badInputClients, p *debit) error {
		_, err := e.c.Mandates.Charge(ctx, p)
		return err
	})
	debitBody := obj{"CustomerMsisdn": "233241234567", "Channel": "mtn-gh-direct-debit", "Amount": json.Number("25.00"),
		"PrimaryCallbackURL": callback, "Description": "Monthly plan", "ClientReference": refDebit}

	const jsonHasNoNaN = "JSON has no NaN or infinity: no such request can be written"
	return []badInput{
		// Customers.
		{"Customers.Create", "email is required", "email", createCustomer(func(p *customerCreate) { p.Email = "" }), wirePost("/v1/customers", bodyWith(customerBody, "email", absentKey))},
		{"Customers.Create", "email must be an address", "email", createCustomer(func(p *customerCreate) { p.Email = "not-an-email" }), wirePost("/v1/customers", bodyWith(customerBody, "email", "not-an-email"))},
		{"Customers.Create", "name is required", "name", createCustomer(func(p *customerCreate) { p.Name = "" }), wirePost("/v1/customers", bodyWith(customerBody, "name", absentKey))},
		{"Customers.Create", "name must not be blank", "name", createCustomer(func(p *customerCreate) { p.Name = "  " }), wirePost("/v1/customers", bodyWith(customerBody, "name", "  "))},
		{"Customers.Create", "phone must be international", "phone", createCustomer(func(p *customerCreate) { p.Phone = "0241234567" }), wirePost("/v1/customers", bodyWith(customerBody, "phone", "0241234567"))},
		{"Customers.Create", "phone must be digits", "phone", createCustomer(func(p *customerCreate) { p.Phone = "+233 24 CALL ME" }), wirePost("/v1/customers", bodyWith(customerBody, "phone", "+23324CALLME"))},
		{"Customers.Create", "phone must have at least 7 digits", "phone", createCustomer(func(p *customerCreate) { p.Phone = "+233241" }), wirePost("/v1/customers", bodyWith(customerBody, "phone", "+233241"))},
		{"Customers.Create", "currency must be ISO 4217", "currency", createCustomer(func(p *customerCreate) { p.Currency = "cedi" }), wirePost("/v1/customers", bodyWith(customerBody, "currency", "cedi"))},
		{"Customers.Create", "metadata is flat", "metadata.address", createCustomer(func(p *customerCreate) { p.Metadata = nested }), wirePost("/v1/customers", bodyWith(customerBody, "metadata", nestedRaw)).naming("metadata")},
		{"Customers.Create", "metadata keys are not empty", "metadata", createCustomer(func(p *customerCreate) { p.Metadata = billing.Metadata{"": "x"} }), wirePost("/v1/customers", bodyWith(customerBody, "metadata", obj{"": "x"}))},
		{"Customers.Create", "metadata numbers are finite", "metadata.score", createCustomer(func(p *customerCreate) { p.Metadata = billing.Metadata{"score": math.NaN()} }), onlySDK(jsonHasNoNaN)},
		{"Customers.Get", "id is required", "id", func(ctx context.Context, e *badInputClients) error {
			_, err := e.c.Customers.Get(ctx, " ")
			return err
		}, wireGet("/v1/customers/" + blank).notFound()},
		{"Customers.Update", "id is required", "id", func(ctx context.Context, e *badInputClients) error {
			_, err := e.c.Customers.Update(ctx, " ", &customerUpdate{Name: "X"})
			return err
		}, wirePatch("/v1/customers/"+blank, `{"name":"X"}`).notFound()},
		{"Customers.Update", "name must not be blank", "name", updateCustomer(func(p *customerUpdate) { p.Name = "  " }), wirePatch("/v1/customers/"+s.customerID, `{"name":"  "}`)},
		{"Customers.Update", "phone must be international", "phone", updateCustomer(func(p *customerUpdate) { p.Phone = billing.Value("0241234567") }), wirePatch("/v1/customers/"+s.customerID, `{"phone":"0241234567"}`)},
		{"Customers.Update", "phone is not empty (Null clears it)", "phone", updateCustomer(func(p *customerUpdate) { p.Phone = billing.Value("") }), wirePatch("/v1/customers/"+s.customerID, `{"phone":""}`)},
		{"Customers.Update", "status is a customer status", "status", updateCustomer(func(p *customerUpdate) { p.Status = "DELETED" }), wirePatch("/v1/customers/"+s.customerID, `{"status":"DELETED"}`)},
		{"Customers.Update", "metadata is flat", "metadata.address", updateCustomer(func(p *customerUpdate) { p.Metadata = nested }), wirePatch("/v1/customers/"+s.customerID, bodyWith(obj{}, "metadata", nestedRaw)).naming("metadata")},
		{"Customers.ListPage", "limit is at most 100", "limit", listCustomers(func(p *customerList) { p.Limit = 101 }), wireGet("/v1/customers?limit=101")},
		{"Customers.ListPage", "limit is at least 1", "limit", listCustomers(func(p *customerList) { p.Limit = -1 }), wireGet("/v1/customers?limit=-1")},
		{"Customers.ListPage", "status is a customer status", "status", listCustomers(func(p *customerList) { p.Status = "DELETED" }), wireGet("/v1/customers?status=DELETED")},

		// Products and prices.
		{"Products.Create", "name is required", "name", createProduct(func(p *productCreate) { p.Name = "" }), wirePost("/v1/products", bodyWith(productBody, "name", absentKey))},
		{"Products.Create", "name must not be blank", "name", createProduct(func(p *productCreate) { p.Name = " " }), wirePost("/v1/products", bodyWith(productBody, "name", " "))},
		{"Products.Create", "type is a product type", "type", createProduct(func(p *productCreate) { p.Type = "SUBSCRIPTION" }), wirePost("/v1/products", bodyWith(productBody, "type", "SUBSCRIPTION"))},
		{"Products.Create", "imageUrl is absolute", "imageUrl", createProduct(func(p *productCreate) { p.ImageURL = "img/pro.png" }), wirePost("/v1/products", bodyWith(productBody, "imageUrl", "img/pro.png"))},
		{"Products.Create", "imageUrl is http or https", "imageUrl", createProduct(func(p *productCreate) { p.ImageURL = "ftp://cdn.example.com/pro.png" }), wirePost("/v1/products", bodyWith(productBody, "imageUrl", "ftp://cdn.example.com/pro.png"))},
		{"Products.Create", "metadata is flat", "metadata.address", createProduct(func(p *productCreate) { p.Metadata = nested }), wirePost("/v1/products", bodyWith(productBody, "metadata", nestedRaw)).naming("metadata")},
		{"Products.ListPage", "limit is at most 100", "limit", listProducts(func(p *productList) { p.Limit = 101 }), wireGet("/v1/products?limit=101")},
		{"Products.ListPage", "active is true or false", "active", listProducts(func(p *productList) { p.Active = billing.Null[bool]() }), wireGet("/v1/products?active=null")},
		{"Products.CreatePrice", "productId is required", "productId", func(ctx context.Context, e *badInputClients) error {
			_, err := e.c.Products.CreatePrice(ctx, " ", &priceCreate{UnitAmount: 1000})
			return err
		}, wirePost("/v1/products/"+blank+"/prices", bodyWith(priceBody)).notFound()},
		{"Products.CreatePrice", "unitAmount is required", "unitAmount", createPrice(func(p *priceCreate) { p.UnitAmount = 0 }), wirePost(pricesPath, bodyWith(priceBody, "unitAmount", absentKey))},
		{"Products.CreatePrice", "unitAmount is positive", "unitAmount", createPrice(func(p *priceCreate) { p.UnitAmount = -1000 }), wirePost(pricesPath, bodyWith(priceBody, "unitAmount", -1000))},
		{"Products.CreatePrice", "unitAmount is an integer in minor units", "unitAmount", createPrice(func(p *priceCreate) { p.UnitAmount = 0 }), wirePost(pricesPath, bodyWith(priceBody, "unitAmount", json.Number("10.50")))},
		{"Products.CreatePrice", "currency is ISO 4217", "currency", createPrice(func(p *priceCreate) { p.Currency = "GH" }), wirePost(pricesPath, bodyWith(priceBody, "currency", "GH"))},
		{"Products.CreatePrice", "scheme is a price scheme", "scheme", createPrice(func(p *priceCreate) { p.Scheme = "FREE" }), wirePost(pricesPath, bodyWith(priceBody, "scheme", "FREE"))},
		{"Products.CreatePrice", "interval is required when recurring", "interval", createPrice(func(p *priceCreate) { p.IsRecurring = true }), wirePost(pricesPath, bodyWith(priceBody, "isRecurring", true))},
		{"Products.CreatePrice", "interval is a price interval", "interval", createPrice(func(p *priceCreate) { p.IsRecurring, p.Interval = true, "FORTNIGHT" }), wirePost(pricesPath, bodyWith(priceBody, "isRecurring", true, "interval", "FORTNIGHT"))},
		{"Products.CreatePrice", "intervalCount is at most 365", "intervalCount", createPrice(func(p *priceCreate) { p.IsRecurring, p.Interval, p.IntervalCount = true, "DAY", 366 }), wirePost(pricesPath, bodyWith(priceBody, "isRecurring", true, "interval", "DAY", "intervalCount", 366))},
		{"Products.CreatePrice", "intervalCount is positive", "intervalCount", createPrice(func(p *priceCreate) { p.IsRecurring, p.Interval, p.IntervalCount = true, "DAY", -1 }), wirePost(pricesPath, bodyWith(priceBody, "isRecurring", true, "interval", "DAY", "intervalCount", -1))},
		{"Products.CreatePrice", "trialPeriodDays is at most 730", "trialPeriodDays", createPrice(func(p *priceCreate) { p.TrialPeriodDays = 731 }), wirePost(pricesPath, bodyWith(priceBody, "trialPeriodDays", 731))},
		{"Products.CreatePrice", "trialPeriodDays is not negative", "trialPeriodDays", createPrice(func(p *priceCreate) { p.TrialPeriodDays = -1 }), wirePost(pricesPath, bodyWith(priceBody, "trialPeriodDays", -1))},
		{"Products.CreatePrice", "metadata is flat", "metadata.address", createPrice(func(p *priceCreate) { p.Metadata = nested }), wirePost(pricesPath, bodyWith(priceBody, "metadata", nestedRaw)).naming("metadata")},
		{"Products.ArchivePrice", "productId is required", "productId", func(ctx context.Context, e *badInputClients) error {
			_, err := e.c.Products.ArchivePrice(ctx, " ", s.priceID)
			return err
		}, wireDelete("/v1/products/" + blank + "/prices/" + s.priceID).notFound()},
		{"Products.ArchivePrice", "priceId is required", "priceId", func(ctx context.Context, e *badInputClients) error {
			_, err := e.c.Products.ArchivePrice(ctx, s.productID, " ")
			return err
		}, wireDelete(pricesPath + "/" + blank).notFound()},

		// Subscriptions.
		{"Subscriptions.Create", "customerId is required", "customerId", createSubscription(func(p *subCreate) { p.CustomerID = "" }), wirePost("/v1/subscriptions", bodyWith(subscriptionBody, "customerId", absentKey))},
		{"Subscriptions.Create", "priceId is required", "priceId", createSubscription(func(p *subCreate) { p.PriceID = "" }), wirePost("/v1/subscriptions", bodyWith(subscriptionBody, "priceId", absentKey))},
		{"Subscriptions.Create", "quantity is positive", "quantity", createSubscription(func(p *subCreate) { p.Quantity = -1 }), wirePost("/v1/subscriptions", bodyWith(subscriptionBody, "quantity", -1))},
		{"Subscriptions.Create", "trialDays is at most 730", "trialDays", createSubscription(func(p *subCreate) { p.TrialDays = billing.Value(731) }), wirePost("/v1/subscriptions", bodyWith(subscriptionBody, "trialDays", 731))},
		{"Subscriptions.Create", "trialDays is not negative", "trialDays", createSubscription(func(p *subCreate) { p.TrialDays = billing.Value(-1) }), wirePost("/v1/subscriptions", bodyWith(subscriptionBody, "trialDays", -1))},
		{"Subscriptions.Get", "id is required", "id", func(ctx context.Context, e *badInputClients) error {
			_, err := e.c.Subscriptions.Get(ctx, " ")
			return err
		}, wireGet("/v1/subscriptions/" + blank).notFound()},
		{"Subscriptions.Cancel", "id is required", "id", func(ctx context.Context, e *badInputClients) error {
			_, err := e.c.Subscriptions.Cancel(ctx, " ", nil)
			return err
		}, wirePatch("/v1/subscriptions/"+blank+"/cancel", `{}`).notFound()},
		{"Subscriptions.Pause", "id is required", "id", func(ctx context.Context, e *badInputClients) error {
			_, err := e.c.Subscriptions.Pause(ctx, " ")
			return err
		}, wirePatch("/v1/subscriptions/"+blank+"/pause", "").notFound()},
		{"Subscriptions.Resume", "id is required", "id", func(ctx context.Context, e *badInputClients) error {
			_, err := e.c.Subscriptions.Resume(ctx, " ")
			return err
		}, wirePatch("/v1/subscriptions/"+blank+"/resume", "").notFound()},

		// Credit wallets.
		{"Credits.Get", "customerId is required", "customerId", func(ctx context.Context, e *badInputClients) error {
			_, err := e.c.Credits.Get(ctx, " ")
			return err
		}, wireGet("/v1/credits/" + blank).notFound()},
		{"Credits.Grant", "customerId is required", "customerId", func(ctx context.Context, e *badInputClients) error {
			_, err := e.c.Credits.Grant(ctx, " ", &creditGrant{Amount: 10})
			return err
		}, wirePost("/v1/credits/"+blank+"/grant", bodyWith(creditBody)).notFound()},
		{"Credits.Grant", "amount is required", "amount", grant(func(p *creditGrant) { p.Amount = 0 }), wirePost(creditsPath+"/grant", bodyWith(creditBody, "amount", absentKey))},
		{"Credits.Grant", "amount is positive", "amount", grant(func(p *creditGrant) { p.Amount = -10 }), wirePost(creditsPath+"/grant", bodyWith(creditBody, "amount", -10))},
		{"Credits.Grant", "amount is an integer", "amount", grant(func(p *creditGrant) { p.Amount = 0 }), wirePost(creditsPath+"/grant", bodyWith(creditBody, "amount", json.Number("1.5")))},
		{"Credits.Grant", "metadata is flat", "metadata.address", grant(func(p *creditGrant) { p.Metadata = nested }), wirePost(creditsPath+"/grant", bodyWith(creditBody, "metadata", nestedRaw)).naming("metadata")},
		{"Credits.Deduct", "customerId is required", "customerId", func(ctx context.Context, e *badInputClients) error {
			_, err := e.c.Credits.Deduct(ctx, " ", &creditDeduct{Amount: 10})
			return err
		}, wirePost("/v1/credits/"+blank+"/deduct", bodyWith(creditBody)).notFound()},
		{"Credits.Deduct", "amount is required", "amount", deduct(func(p *creditDeduct) { p.Amount = 0 }), wirePost(creditsPath+"/deduct", bodyWith(creditBody, "amount", absentKey))},
		{"Credits.Deduct", "amount is positive", "amount", deduct(func(p *creditDeduct) { p.Amount = -10 }), wirePost(creditsPath+"/deduct", bodyWith(creditBody, "amount", -10))},
		{"Credits.Deduct", "metadata is flat", "metadata.address", deduct(func(p *creditDeduct) { p.Metadata = nested }), wirePost(creditsPath+"/deduct", bodyWith(creditBody, "metadata", nestedRaw)).naming("metadata")},
		{"Credits.TransactionsPage", "customerId is required", "customerId", func(ctx context.Context, e *badInputClients) error {
			_, err := e.c.Credits.TransactionsPage(ctx, " ", nil)
			return err
		}, wireGet("/v1/credits/" + blank + "/transactions").notFound()},
		{"Credits.TransactionsPage", "limit is at most 100", "limit", listLedger(func(p *ledgerList) { p.Limit = 101 }), wireGet(creditsPath + "/transactions?limit=101")},
		{"Credits.TransactionsPage", "type is a ledger entry type", "type", listLedger(func(p *ledgerList) { p.Type = "BONUS" }), wireGet(creditsPath + "/transactions?type=BONUS")},

		// Meters and usage events.
		{"Meters.Create", "name is required", "name", createMeter(func(p *meterCreate) { p.Name = "" }), wirePost("/v1/meters", bodyWith(meterBody, "name", absentKey))},
		{"Meters.Create", "eventName is required", "eventName", createMeter(func(p *meterCreate) { p.EventName = "" }), wirePost("/v1/meters", bodyWith(meterBody, "eventName", absentKey))},
		{"Meters.Create", "aggregation is a meter aggregation", "aggregation", createMeter(func(p *meterCreate) { p.Aggregation = "AVG" }), wirePost("/v1/meters", bodyWith(meterBody, "aggregation", "AVG"))},
		{"Meters.Create", "valueField must not be blank", "valueField", createMeter(func(p *meterCreate) { p.ValueField = " " }), wirePost("/v1/meters", bodyWith(meterBody, "valueField", " "))},
		{"Meters.Get", "id is required", "id", func(ctx context.Context, e *badInputClients) error {
			_, err := e.c.Meters.Get(ctx, " ")
			return err
		}, wireGet("/v1/meters/" + blank).notFound()},
		{"Meters.RecordEvent", "meterId is required", "meterId", func(ctx context.Context, e *badInputClients) error {
			_, err := e.c.Meters.RecordEvent(ctx, " ", nil)
			return err
		}, wirePost("/v1/meters/"+blank+"/events", `{}`).notFound()},
		{"Meters.RecordEvent", "value is not negative", "value", recordEvent(func(p *meterEvent) { p.Value = billing.Value(-1.0) }), wirePost(eventsPath, `{"value":-1}`)},
		{"Meters.RecordEvent", "value is a number, not null", "value", recordEvent(func(p *meterEvent) { p.Value = billing.Null[float64]() }), wirePost(eventsPath, `{"value":null}`)},
		{"Meters.RecordEvent", "value is finite", "value", recordEvent(func(p *meterEvent) { p.Value = billing.Value(math.Inf(1)) }), onlySDK(jsonHasNoNaN)},
		{"Meters.RecordEvent", "idempotencyKey is at most 255 characters", "idempotencyKey", recordEvent(func(p *meterEvent) { p.IdempotencyKey = key256 }), wirePost(eventsPath, bodyWith(obj{}, "idempotencyKey", key256))},
		{"Meters.RecordEvent", "idempotencyKey must not be blank", "idempotencyKey", recordEvent(func(p *meterEvent) { p.IdempotencyKey = "  " }), wirePost(eventsPath, `{"idempotencyKey":"  "}`)},
		{"Meters.RecordEvent", "customerId must not be blank", "customerId", recordEvent(func(p *meterEvent) { p.CustomerID = " " }), wirePost(eventsPath, `{"customerId":" "}`)},
		{"Meters.RecordEvent", "metadata is flat", "metadata.address", recordEvent(func(p *meterEvent) { p.Metadata = nested }), wirePost(eventsPath, bodyWith(obj{}, "metadata", nestedRaw)).naming("metadata")},
		{"Meters.EventsPage", "meterId is required", "meterId", func(ctx context.Context, e *badInputClients) error {
			_, err := e.c.Meters.EventsPage(ctx, " ", nil)
			return err
		}, wireGet("/v1/meters/" + blank + "/events").notFound()},
		{"Meters.EventsPage", "limit is at most 100", "limit", listEvents(func(p *meterEventList) { p.Limit = 101 }), wireGet(eventsPath + "?limit=101")},
		{"Meters.EventsPage", "from is not after to", "from", listEvents(func(p *meterEventList) {
			p.From, p.To = time.Date(2025, 2, 1, 0, 0, 0, 0, time.UTC), time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
		}), wireGet(eventsPath + "?from=2025-02-01T00:00:00Z&to=2025-01-01T00:00:00Z")},

		// Licenses.
		{"Licenses.Create", "customerId is required", "customerId", createLicense(func(p *licenseCreate) { p.CustomerID = "" }), wirePost("/v1/licenses", bodyWith(licenseBody, "customerId", absentKey))},
		{"Licenses.Create", "maxActivations is positive", "maxActivations", createLicense(func(p *licenseCreate) { p.MaxActivations = -1 }), wirePost("/v1/licenses", bodyWith(licenseBody, "maxActivations", -1))},
		{"Licenses.Create", "metadata is flat", "metadata.address", createLicense(func(p *licenseCreate) { p.Metadata = nested }), wirePost("/v1/licenses", bodyWith(licenseBody, "metadata", nestedRaw)).naming("metadata")},
		{"Licenses.Get", "key has the license shape", "key", func(ctx context.Context, e *badInputClients) error {
			_, err := e.c.Licenses.Get(ctx, "ABCD-EFGH")
			return err
		}, wireGet("/v1/licenses/ABCD-EFGH")},
		{"Licenses.Activate", "key has the license shape", "key", func(ctx context.Context, e *badInputClients) error {
			_, err := e.c.Licenses.Activate(ctx, "ABCD_EFGH_JKLM_NPQR")
			return err
		}, wirePost("/v1/licenses/ABCD_EFGH_JKLM_NPQR/activate", "")},
		{"Licenses.Revoke", "key has the license shape", "key", func(ctx context.Context, e *badInputClients) error {
			_, err := e.c.Licenses.Revoke(ctx, "ABCD-EFGH-JKLM-NPQ!")
			return err
		}, wireDelete("/v1/licenses/ABCD-EFGH-JKLM-NPQ%21")},
		{"Licenses.Update", "key has the license shape", "key", func(ctx context.Context, e *badInputClients) error {
			_, err := e.c.Licenses.Update(ctx, "ABCD", &licenseUpdate{Status: billing.LicenseStatusSuspended})
			return err
		}, wirePatch("/v1/licenses/ABCD", `{"status":"SUSPENDED"}`)},
		{"Licenses.Update", "status is ACTIVE or SUSPENDED", "status", updateLicense(func(p *licenseUpdate) { p.Status = billing.LicenseStatusRevoked }), wirePatch(licensePath, `{"status":"REVOKED"}`)},
		{"Licenses.Update", "maxActivations is positive", "maxActivations", updateLicense(func(p *licenseUpdate) { p.MaxActivations = -1 }), wirePatch(licensePath, `{"maxActivations":-1}`)},
		{"Licenses.Update", "metadata is flat", "metadata.address", updateLicense(func(p *licenseUpdate) { p.Metadata = nested }), wirePatch(licensePath, bodyWith(obj{}, "metadata", nestedRaw)).naming("metadata")},

		// Hosted checkout.
		{"Payments.CreateCheckout", "amount is required", "amount", createCheckout(func(p *checkout) { p.Amount = 0 }), wirePost("/v1/payments", bodyWith(checkoutBody, "amount", absentKey))},
		{"Payments.CreateCheckout", "amount is positive", "amount", createCheckout(func(p *checkout) { p.Amount = -5000 }), wirePost("/v1/payments", bodyWith(checkoutBody, "amount", -5000))},
		{"Payments.CreateCheckout", "amount is an integer in minor units", "amount", createCheckout(func(p *checkout) { p.Amount = 0 }), wirePost("/v1/payments", bodyWith(checkoutBody, "amount", json.Number("50.00")))},
		{"Payments.CreateCheckout", "currency is ISO 4217", "currency", createCheckout(func(p *checkout) { p.Currency = "CEDI" }), wirePost("/v1/payments", bodyWith(checkoutBody, "currency", "CEDI"))},
		{"Payments.CreateCheckout", "description is at most 255 characters", "description", createCheckout(func(p *checkout) { p.Description = text256 }), wirePost("/v1/payments", bodyWith(checkoutBody, "description", text256))},
		{"Payments.CreateCheckout", "customer name is required", "customer.name", createCheckout(func(p *checkout) { p.Customer = billing.CheckoutCustomer{Email: payer.Email} }), wirePost("/v1/payments", bodyWith(checkoutBody, "customer", obj{"email": payer.Email}))},
		{"Payments.CreateCheckout", "customer email is required", "customer.email", createCheckout(func(p *checkout) { p.Customer = billing.CheckoutCustomer{Name: payer.Name} }), wirePost("/v1/payments", bodyWith(checkoutBody, "customer", obj{"name": payer.Name}))},
		{"Payments.CreateCheckout", "customer email must be an address", "customer.email", createCheckout(func(p *checkout) { p.Customer = billing.CheckoutCustomer{Name: payer.Name, Email: "ama"} }), wirePost("/v1/payments", bodyWith(checkoutBody, "customer", obj{"name": payer.Name, "email": "ama"}))},
		{"Payments.CreateCheckout", "customer phone must be international", "customer.phone", createCheckout(func(p *checkout) { p.Customer = payer; p.Customer.Phone = "0241234567" }), wirePost("/v1/payments", bodyWith(checkoutBody, "customer", obj{"name": payer.Name, "email": payer.Email, "phone": "0241234567"}))},
		{"Payments.CreateCheckout", "clientReference is at most 36 characters", "ClientReference", createCheckout(func(p *checkout) { p.ClientReference = ref37 }), wirePost("/v1/payments", bodyWith(checkoutBody, "metadata.clientReference", ref37)).naming("metadata.clientReference")},
		{"Payments.CreateCheckout", "clientReference is letters, digits, hyphens and underscores", "ClientReference", createCheckout(func(p *checkout) { p.ClientReference = refDotted }), wirePost("/v1/payments", bodyWith(checkoutBody, "metadata.clientReference", refDotted)).naming("metadata.clientReference")},
		{"Payments.CreateCheckout", "clientReference is said once", "metadata.clientReference", createCheckout(func(p *checkout) { p.Metadata = billing.Metadata{"clientReference": "other1"} }), onlySDK("the wire has one metadata.clientReference: two that disagree cannot be written")},
		{"Payments.CreateCheckout", "returnUrl is absolute", "ReturnURL", createCheckout(func(p *checkout) { p.ReturnURL = "/thanks" }), onlySDK("metadata is free-form on the wire: the sandbox keeps a returnUrl that is not a web address and never sends the payer there")},
		{"Payments.CreateCheckout", "metadata is flat", "metadata.address", createCheckout(func(p *checkout) { p.Metadata = nested }), wirePost("/v1/payments", bodyWith(checkoutBody, "metadata.address", nestedRaw["address"])).naming("metadata")},
		{"Payments.Get", "reference is required", "reference", func(ctx context.Context, e *badInputClients) error {
			_, err := e.c.Payments.Get(ctx, " ")
			return err
		}, wireGet("/v1/payments/" + blank).notFound()},

		// Direct receive.
		{"Payments.Receive", "amount is required", "amount", receiveMoney(func(p *receive) { p.Amount = 0 }), wirePost("/v1/payments/receive", bodyWith(receiveBody, "amount", absentKey))},
		{"Payments.Receive", "amount is positive", "amount", receiveMoney(func(p *receive) { p.Amount = -500 }), wirePost("/v1/payments/receive", bodyWith(receiveBody, "amount", -500))},
		{"Payments.Receive", "amount is an integer in minor units", "amount", receiveMoney(func(p *receive) { p.Amount = 0 }), wirePost("/v1/payments/receive", bodyWith(receiveBody, "amount", json.Number("5.00")))},
		{"Payments.Receive", "currency is ISO 4217", "currency", receiveMoney(func(p *receive) { p.Currency = "GHS1" }), wirePost("/v1/payments/receive", bodyWith(receiveBody, "currency", "GHS1"))},
		{"Payments.Receive", "phone is required", "phone", receiveMoney(func(p *receive) { p.Phone = "" }), wirePost("/v1/payments/receive", bodyWith(receiveBody, "phone", absentKey))},
		{"Payments.Receive", "phone must be international", "phone", receiveMoney(func(p *receive) { p.Phone = "0241234567" }), wirePost("/v1/payments/receive", bodyWith(receiveBody, "phone", "0241234567"))},
		{"Payments.Receive", "phone has at most 15 digits", "phone", receiveMoney(func(p *receive) { p.Phone = "2332412345678901" }), wirePost("/v1/payments/receive", bodyWith(receiveBody, "phone", "2332412345678901"))},
		{"Payments.Receive", "provider is required", "provider", receiveMoney(func(p *receive) { p.Provider = "" }), wirePost("/v1/payments/receive", bodyWith(receiveBody, "provider", absentKey))},
		{"Payments.Receive", "provider is a receive network", "provider", receiveMoney(func(p *receive) { p.Provider = "mtn" }), wirePost("/v1/payments/receive", bodyWith(receiveBody, "provider", "mtn"))},
		{"Payments.Receive", "description is required", "description", receiveMoney(func(p *receive) { p.Description = "" }), wirePost("/v1/payments/receive", bodyWith(receiveBody, "description", absentKey))},
		{"Payments.Receive", "description is at most 255 characters", "description", receiveMoney(func(p *receive) { p.Description = text256 }), wirePost("/v1/payments/receive", bodyWith(receiveBody, "description", text256))},
		{"Payments.Receive", "clientReference is at most 36 characters", "ClientReference", receiveMoney(func(p *receive) { p.ClientReference = ref37 }), wirePost("/v1/payments/receive", bodyWith(receiveBody, "metadata.clientReference", ref37)).naming("metadata.clientReference")},
		{"Payments.Receive", "clientReference is letters, digits, hyphens and underscores", "ClientReference", receiveMoney(func(p *receive) { p.ClientReference = refDotted }), wirePost("/v1/payments/receive", bodyWith(receiveBody, "metadata.clientReference", refDotted)).naming("metadata.clientReference")},
		{"Payments.Receive", "clientReference is required", "ClientReference", receiveMoney(func(p *receive) { p.ClientReference = "" }), onlySDK("the spec makes metadata optional and the sandbox gives a receive without a reference one of its own; the SDK insists, since only the reference resolves an unknown outcome")},
		{"Payments.Receive", "callbackUrl is absolute", "callbackUrl", receiveMoney(func(p *receive) { p.CallbackURL = "/callbacks" }), wirePost("/v1/payments/receive", bodyWith(receiveBody, "callbackUrl", "/callbacks"))},
		{"Payments.Receive", "metadata is flat", "metadata.address", receiveMoney(func(p *receive) { p.Metadata = nested }), wirePost("/v1/payments/receive", bodyWith(receiveBody, "metadata.address", nestedRaw["address"])).naming("metadata")},
		{"Payments.ReceiveStatus", "clientReference is required", "clientReference", func(ctx context.Context, e *badInputClients) error {
			_, err := e.c.Payments.ReceiveStatus(ctx, " ")
			return err
		}, wireGet("/v1/payments/" + blank).notFound()},

		// Direct send.
		{"Payouts.Send", "amount is required", "amount", sendMoney(func(p *send) { p.Amount = 0 }), wirePost("/v1/payments/send", bodyWith(sendBody, "amount", absentKey))},
		{"Payouts.Send", "amount is positive", "amount", sendMoney(func(p *send) { p.Amount = -500 }), wirePost("/v1/payments/send", bodyWith(sendBody, "amount", -500))},
		{"Payouts.Send", "currency is ISO 4217", "currency", sendMoney(func(p *send) { p.Currency = "G$" }), wirePost("/v1/payments/send", bodyWith(sendBody, "currency", "G$"))},
		{"Payouts.Send", "phone is required", "phone", sendMoney(func(p *send) { p.Phone = "" }), wirePost("/v1/payments/send", bodyWith(sendBody, "phone", absentKey))},
		{"Payouts.Send", "phone must be international", "phone", sendMoney(func(p *send) { p.Phone = "024 123 4567" }), wirePost("/v1/payments/send", bodyWith(sendBody, "phone", "0241234567"))},
		{"Payouts.Send", "provider is required", "provider", sendMoney(func(p *send) { p.Provider = "" }), wirePost("/v1/payments/send", bodyWith(sendBody, "provider", absentKey))},
		{"Payouts.Send", "provider is a payout network (not MPESA)", "provider", sendMoney(func(p *send) { p.Provider = billing.ProviderMPESA }), wirePost("/v1/payments/send", bodyWith(sendBody, "provider", "MPESA"))},
		{"Payouts.Send", "description is required", "description", sendMoney(func(p *send) { p.Description = " " }), wirePost("/v1/payments/send", bodyWith(sendBody, "description", " "))},
		{"Payouts.Send", "description is at most 255 characters", "description", sendMoney(func(p *send) { p.Description = text256 }), wirePost("/v1/payments/send", bodyWith(sendBody, "description", text256))},
		{"Payouts.Send", "clientReference is at most 36 characters", "ClientReference", sendMoney(func(p *send) { p.ClientReference = ref37 }), wirePost("/v1/payments/send", bodyWith(sendBody, "metadata.clientReference", ref37)).naming("metadata.clientReference")},
		{"Payouts.Send", "clientReference is letters, digits, hyphens and underscores", "ClientReference", sendMoney(func(p *send) { p.ClientReference = refDotted }), wirePost("/v1/payments/send", bodyWith(sendBody, "metadata.clientReference", refDotted)).naming("metadata.clientReference")},
		{"Payouts.Send", "clientReference is required", "ClientReference", sendMoney(func(p *send) { p.ClientReference = "" }), onlySDK("the spec makes metadata optional and the sandbox gives a send without a reference one of its own; the SDK insists, since only the reference resolves an unknown outcome")},
		{"Payouts.Send", "callbackUrl is absolute", "callbackUrl", sendMoney(func(p *send) { p.CallbackURL = "merchant.example/cb" }), wirePost("/v1/payments/send", bodyWith(sendBody, "callbackUrl", "merchant.example/cb"))},
		{"Payouts.SendStatus", "clientReference is required", "clientReference", func(ctx context.Context, e *badInputClients) error {
			_, err := e.c.Payouts.SendStatus(ctx, " ")
			return err
		}, wireGet("/v1/payments/" + blank).notFound()},

		// Send-to-bank.
		{"Payouts.SendToBank", "bankCode is required", "bankCode", sendToBank(func(p *bankTransfer) { p.BankCode = "" }), wirePost("/v1/merchants/2020202/send/bank/gh/"+blank, bodyWith(bankBody))},
		{"Payouts.SendToBank", "bankCode is an accepted bank", "bankCode", sendToBank(func(p *bankTransfer) { p.BankCode = "300301" }), wirePost("/v1/merchants/2020202/send/bank/gh/300301", bodyWith(bankBody))},
		{"Payouts.SendToBank", "disbursementAccount is required", "disbursementAccount", func(ctx context.Context, e *badInputClients) error {
			_, err := e.noAccount.Payouts.SendToBank(ctx, &bankTransfer{BankCode: "300302", Amount: 50000, PrimaryCallbackURL: callback,
				Description: "Supplier", BankAccountNumber: "1441000123456", ClientReference: refBank})
			return err
		}, wirePost("/v1/merchants/"+blank+"/send/bank/gh/300302", bodyWith(bankBody)).notFound()},
		{"Payouts.SendToBank", "Amount is required", "Amount", sendToBank(func(p *bankTransfer) { p.Amount = 0 }), wirePost(bankPath, bodyWith(bankBody, "Amount", absentKey))},
		{"Payouts.SendToBank", "Amount is positive", "Amount", sendToBank(func(p *bankTransfer) { p.Amount = -100 }), wirePost(bankPath, bodyWith(bankBody, "Amount", json.Number("-1.00")))},
		{"Payouts.SendToBank", "Amount is above zero", "Amount", sendToBank(func(p *bankTransfer) { p.Amount = 0 }), wirePost(bankPath, bodyWith(bankBody, "Amount", json.Number("0.00")))},
		{"Payouts.SendToBank", "Amount has exactly two decimals, not one", "Amount", sendToBank(func(p *bankTransfer) { p.Amount = 0 }), wirePost(bankPath, bodyWith(bankBody, "Amount", json.Number("500.1")))},
		{"Payouts.SendToBank", "Amount has exactly two decimals, not none", "Amount", sendToBank(func(p *bankTransfer) { p.Amount = 0 }), wirePost(bankPath, bodyWith(bankBody, "Amount", json.Number("500")))},
		{"Payouts.SendToBank", "Amount is a number, not a string", "Amount", sendToBank(func(p *bankTransfer) { p.Amount = 0 }), wirePost(bankPath, bodyWith(bankBody, "Amount", "500.00"))},
		{"Payouts.SendToBank", "PrimaryCallbackUrl is required", "PrimaryCallbackUrl", sendToBank(func(p *bankTransfer) { p.PrimaryCallbackURL = "" }), wirePost(bankPath, bodyWith(bankBody, "PrimaryCallbackUrl", absentKey))},
		{"Payouts.SendToBank", "PrimaryCallbackUrl is absolute", "PrimaryCallbackUrl", sendToBank(func(p *bankTransfer) { p.PrimaryCallbackURL = "callbacks" }), wirePost(bankPath, bodyWith(bankBody, "PrimaryCallbackUrl", "callbacks"))},
		{"Payouts.SendToBank", "Description is required", "Description", sendToBank(func(p *bankTransfer) { p.Description = "" }), wirePost(bankPath, bodyWith(bankBody, "Description", absentKey))},
		{"Payouts.SendToBank", "Description is at most 255 characters", "Description", sendToBank(func(p *bankTransfer) { p.Description = text256 }), wirePost(bankPath, bodyWith(bankBody, "Description", text256))},
		{"Payouts.SendToBank", "BankAccountNumber is required", "BankAccountNumber", sendToBank(func(p *bankTransfer) { p.BankAccountNumber = "" }), wirePost(bankPath, bodyWith(bankBody, "BankAccountNumber", absentKey))},
		{"Payouts.SendToBank", "ClientReference is required", "ClientReference", sendToBank(func(p *bankTransfer) { p.ClientReference = "" }), wirePost(bankPath, bodyWith(bankBody, "ClientReference", absentKey))},
		{"Payouts.SendToBank", "ClientReference is at most 36 characters", "ClientReference", sendToBank(func(p *bankTransfer) { p.ClientReference = ref37 }), wirePost(bankPath, bodyWith(bankBody, "ClientReference", ref37))},
		{"Payouts.SendToBank", "ClientReference is letters and digits", "ClientReference", sendToBank(func(p *bankTransfer) { p.ClientReference = refHyphen }), wirePost(bankPath, bodyWith(bankBody, "ClientReference", refHyphen))},
		{"Payouts.SendToBank", "RecipientPhoneNumber is international", "RecipientPhoneNumber", sendToBank(func(p *bankTransfer) { p.RecipientPhoneNumber = "0241234567" }), wirePost(bankPath, bodyWith(bankBody, "RecipientPhoneNumber", "0241234567"))},
		{"Payouts.BankTransferStatus", "clientReference is required", "clientReference", func(ctx context.Context, e *badInputClients) error {
			_, err := e.c.Payouts.BankTransferStatus(ctx, &bankStatus{})
			return err
		}, wireGet("/v1/merchants/2020202/transactions/status")},

		// Mandates.
		{"Mandates.Create", "clientReferenceId is required", "clientReferenceId", createMandate(func(p *mandateCreate) { p.ClientReferenceID = "" }), wirePost("/v1/mandates", bodyWith(mandateBody, "clientReferenceId", absentKey))},
		{"Mandates.Create", "clientReferenceId is at most 36 characters", "clientReferenceId", createMandate(func(p *mandateCreate) { p.ClientReferenceID = ref37 }), wirePost("/v1/mandates", bodyWith(mandateBody, "clientReferenceId", ref37))},
		{"Mandates.Create", "clientReferenceId is letters and digits", "clientReferenceId", createMandate(func(p *mandateCreate) { p.ClientReferenceID = refHyphen }), wirePost("/v1/mandates", bodyWith(mandateBody, "clientReferenceId", refHyphen))},
		{"Mandates.Create", "customerMsisdn is required", "customerMsisdn", createMandate(func(p *mandateCreate) { p.CustomerMSISDN = "" }), wirePost("/v1/mandates", bodyWith(mandateBody, "customerMsisdn", absentKey))},
		{"Mandates.Create", "customerMsisdn is international", "customerMsisdn", createMandate(func(p *mandateCreate) { p.CustomerMSISDN = "0241234567" }), wirePost("/v1/mandates", bodyWith(mandateBody, "customerMsisdn", "0241234567"))},
		{"Mandates.Create", "channel is required", "channel", createMandate(func(p *mandateCreate) { p.Channel = "" }), wirePost("/v1/mandates", bodyWith(mandateBody, "channel", absentKey))},
		{"Mandates.Create", "channel is a direct-debit channel", "channel", createMandate(func(p *mandateCreate) { p.Channel = "mtn-gh" }), wirePost("/v1/mandates", bodyWith(mandateBody, "channel", "mtn-gh"))},
		{"Mandates.Create", "callbackUrl is required", "callbackUrl", createMandate(func(p *mandateCreate) { p.CallbackURL = "" }), wirePost("/v1/mandates", bodyWith(mandateBody, "callbackUrl", absentKey))},
		{"Mandates.Create", "callbackUrl is absolute", "callbackUrl", createMandate(func(p *mandateCreate) { p.CallbackURL = "/cb" }), wirePost("/v1/mandates", bodyWith(mandateBody, "callbackUrl", "/cb"))},
		{"Mandates.VerifyOTP", "customerMsisdn is required", "customerMsisdn", verifyOTP(func(p *mandateOTP) { p.CustomerMSISDN = "" }), wirePost("/v1/mandates/verifyotp", bodyWith(otpBody, "customerMsisdn", absentKey))},
		{"Mandates.VerifyOTP", "servicePreApprovalId is required", "servicePreApprovalId", verifyOTP(func(p *mandateOTP) { p.ServicePreApprovalID = "" }), wirePost("/v1/mandates/verifyotp", bodyWith(otpBody, "servicePreApprovalId", absentKey))},
		{"Mandates.VerifyOTP", "clientReferenceId is required", "clientReferenceId", verifyOTP(func(p *mandateOTP) { p.ClientReferenceID = "" }), wirePost("/v1/mandates/verifyotp", bodyWith(otpBody, "clientReferenceId", absentKey))},
		{"Mandates.VerifyOTP", "clientReferenceId is letters and digits", "clientReferenceId", verifyOTP(func(p *mandateOTP) { p.ClientReferenceID = refHyphen }), wirePost("/v1/mandates/verifyotp", bodyWith(otpBody, "clientReferenceId", refHyphen))},
		{"Mandates.VerifyOTP", "otpCode is required", "otpCode", verifyOTP(func(p *mandateOTP) { p.OTPCode = "" }), wirePost("/v1/mandates/verifyotp", bodyWith(otpBody, "otpCode", absentKey))},
		{"Mandates.VerifyOTP", "otpCode has its hyphen", "otpCode", verifyOTP(func(p *mandateOTP) { p.OTPCode = "ABCD1234" }), wirePost("/v1/mandates/verifyotp", bodyWith(otpBody, "otpCode", "ABCD1234"))},
		{"Mandates.VerifyOTP", "otpCode starts with four letters", "otpCode", verifyOTP(func(p *mandateOTP) { p.OTPCode = "ABC1-1234" }), wirePost("/v1/mandates/verifyotp", bodyWith(otpBody, "otpCode", "ABC1-1234"))},
		{"Mandates.VerifyOTP", "otpCode ends with four digits", "otpCode", verifyOTP(func(p *mandateOTP) { p.OTPCode = "ABCD-123" }), wirePost("/v1/mandates/verifyotp", bodyWith(otpBody, "otpCode", "ABCD-123"))},
		{"Mandates.Status", "clientReferenceId is required", "clientReferenceId", func(ctx context.Context, e *badInputClients) error {
			_, err := e.c.Mandates.Status(ctx, " ")
			return err
		}, wireGet("/v1/mandates/preapproval/" + blank + "/status").notFound()},
		{"Mandates.Cancel", "customerMsisdn is required", "customerMsisdn", func(ctx context.Context, e *badInputClients) error {
			_, err := e.c.Mandates.Cancel(ctx, " ")
			return err
		}, wireGet("/v1/mandates/preapproval/" + blank + "/cancel").notFound()},
		{"Mandates.Cancel", "customerMsisdn is international", "customerMsisdn", func(ctx context.Context, e *badInputClients) error {
			_, err := e.c.Mandates.Cancel(ctx, "0205550079")
			return err
		}, wireGet("/v1/mandates/preapproval/0205550079/cancel").notFound()},
		{"Mandates.Reactivate", "customerMsisdn is required", "customerMsisdn", reactivate(func(p *mandateReactive) { p.CustomerMSISDN = "" }), wirePost("/v1/mandates/preapproval/reactivate", bodyWith(reactivateBody, "customerMsisdn", absentKey))},
		{"Mandates.Reactivate", "customerMsisdn is international", "customerMsisdn", reactivate(func(p *mandateReactive) { p.CustomerMSISDN = "0205550079" }), wirePost("/v1/mandates/preapproval/reactivate", bodyWith(reactivateBody, "customerMsisdn", "0205550079"))},
		{"Mandates.Reactivate", "callbackUrl is required", "callbackUrl", reactivate(func(p *mandateReactive) { p.CallbackURL = "" }), wirePost("/v1/mandates/preapproval/reactivate", bodyWith(reactivateBody, "callbackUrl", absentKey))},
		{"Mandates.Reactivate", "callbackUrl is absolute", "callbackUrl", reactivate(func(p *mandateReactive) { p.CallbackURL = "cb" }), wirePost("/v1/mandates/preapproval/reactivate", bodyWith(reactivateBody, "callbackUrl", "cb"))},

		// Direct debit.
		{"Mandates.Charge", "CustomerMsisdn is required", "CustomerMsisdn", charge(func(p *debit) { p.CustomerMSISDN = "" }), wirePost("/v1/payments/direct-debit", bodyWith(debitBody, "CustomerMsisdn", absentKey))},
		{"Mandates.Charge", "CustomerMsisdn is international", "CustomerMsisdn", charge(func(p *debit) { p.CustomerMSISDN = "0241234567" }), wirePost("/v1/payments/direct-debit", bodyWith(debitBody, "CustomerMsisdn", "0241234567"))},
		{"Mandates.Charge", "Channel is required", "Channel", charge(func(p *debit) { p.Channel = "" }), wirePost("/v1/payments/direct-debit", bodyWith(debitBody, "Channel", absentKey))},
		{"Mandates.Charge", "Channel is a direct-debit channel", "Channel", charge(func(p *debit) { p.Channel = "tigo-gh-direct-debit" }), wirePost("/v1/payments/direct-debit", bodyWith(debitBody, "Channel", "tigo-gh-direct-debit"))},
		{"Mandates.Charge", "Amount is required", "Amount", charge(func(p *debit) { p.Amount = 0 }), wirePost("/v1/payments/direct-debit", bodyWith(debitBody, "Amount", absentKey))},
		{"Mandates.Charge", "Amount is positive", "Amount", charge(func(p *debit) { p.Amount = -2500 }), wirePost("/v1/payments/direct-debit", bodyWith(debitBody, "Amount", json.Number("-25.00")))},
		{"Mandates.Charge", "Amount has at most two decimals", "Amount", charge(func(p *debit) { p.Amount = 0 }), wirePost("/v1/payments/direct-debit", bodyWith(debitBody, "Amount", json.Number("25.005")))},
		{"Mandates.Charge", "PrimaryCallbackURL is required", "PrimaryCallbackURL", charge(func(p *debit) { p.PrimaryCallbackURL = "" }), wirePost("/v1/payments/direct-debit", bodyWith(debitBody, "PrimaryCallbackURL", absentKey))},
		{"Mandates.Charge", "PrimaryCallbackURL is absolute", "PrimaryCallbackURL", charge(func(p *debit) { p.PrimaryCallbackURL = "cb" }), wirePost("/v1/payments/direct-debit", bodyWith(debitBody, "PrimaryCallbackURL", "cb"))},
		{"Mandates.Charge", "Description is required", "Description", charge(func(p *debit) { p.Description = "" }), wirePost("/v1/payments/direct-debit", bodyWith(debitBody, "Description", absentKey))},
		{"Mandates.Charge", "Description is at most 255 characters", "Description", charge(func(p *debit) { p.Description = text256 }), wirePost("/v1/payments/direct-debit", bodyWith(debitBody, "Description", text256))},
		{"Mandates.Charge", "ClientReference is required", "ClientReference", charge(func(p *debit) { p.ClientReference = "" }), wirePost("/v1/payments/direct-debit", bodyWith(debitBody, "ClientReference", absentKey))},
		{"Mandates.Charge", "ClientReference is at most 36 characters", "ClientReference", charge(func(p *debit) { p.ClientReference = ref37 }), wirePost("/v1/payments/direct-debit", bodyWith(debitBody, "ClientReference", ref37))},
		{"Mandates.Charge", "ClientReference is letters and digits", "ClientReference", charge(func(p *debit) { p.ClientReference = refHyphen }), wirePost("/v1/payments/direct-debit", bodyWith(debitBody, "ClientReference", refHyphen))},
		{"Mandates.Charge", "CustomerEmail must be an address", "CustomerEmail", charge(func(p *debit) { p.CustomerEmail = "kofi.example.com" }), wirePost("/v1/payments/direct-debit", bodyWith(debitBody, "CustomerEmail", "kofi.example.com"))},
		{"Mandates.ChargeStatus", "clientReference is required", "clientReference", func(ctx context.Context, e *badInputClients) error {
			_, err := e.c.Mandates.ChargeStatus(ctx, " ")
			return err
		}, wireGet("/v1/payments/direct-debit/status/" + blank).notFound()},
	}
}

// inputOperations are the SDK methods that take input from the caller: each must have
// at least one row in the table.
var inputOperations = []string{
	"Customers.Create", "Customers.Get", "Customers.Update", "Customers.ListPage",
	"Products.Create", "Products.ListPage", "Products.CreatePrice", "Products.ArchivePrice",
	"Subscriptions.Create", "Subscriptions.Get", "Subscriptions.Cancel", "Subscriptions.Pause", "Subscriptions.Resume",
	"Credits.Get", "Credits.Grant", "Credits.Deduct", "Credits.TransactionsPage",
	"Meters.Create", "Meters.Get", "Meters.RecordEvent", "Meters.EventsPage",
	"Licenses.Create", "Licenses.Get", "Licenses.Activate", "Licenses.Update", "Licenses.Revoke",
	"Payments.CreateCheckout", "Payments.Get", "Payments.Receive", "Payments.ReceiveStatus",
	"Payouts.Send", "Payouts.SendStatus", "Payouts.SendToBank", "Payouts.BankTransferStatus",
	"Mandates.Create", "Mandates.VerifyOTP", "Mandates.Status", "Mandates.Cancel", "Mandates.Reactivate",
	"Mandates.Charge", "Mandates.ChargeStatus",
}

func TestBadInputIsRefusedByTheSDKAndByTheSandbox(t *testing.T) {
	srv := billingtest.NewServer(t, billingtest.WithManualClock())
	ctx := context.Background()
	seeded := seedBadInputSandbox(t, ctx, srv)
	reader := srv.Client()

	counted, counter := countingClient(srv)
	noAccount := srv.Client(billing.WithDisbursementAccount(""), billing.WithHTTPClient(&http.Client{Transport: counter}))
	clients := &badInputClients{c: counted, noAccount: noAccount}

	rows := badInputs(seeded)
	covered := map[string]bool{}
	for _, row := range rows {
		covered[row.op] = true
	}
	for _, op := range inputOperations {
		assert.True(t, covered[op], "%s has no row in the bad-input table", op)
	}

	for _, row := range rows {
		t.Run(row.op+": "+row.rule, func(t *testing.T) {
			before := viewSandbox(t, ctx, srv, reader, seeded)
			sent := counter.n.Load()
			err := row.sdk(ctx, clients)
			var invalid *billing.ValidationError
			require.ErrorAs(t, err, &invalid, "the SDK must refuse it before sending")
			assert.Equal(t, row.field, invalid.Field)
			assert.Equal(t, sent, counter.n.Load(), "the SDK sent a request")

			w := row.wire
			if w.sdkOnly != "" {
				t.Logf("SDK only: %s", w.sdkOnly)
				return
			}
			status, body := rawCall(t, srv, w.method, w.path, w.body)
			wantStatus, wantCode, wantField := w.status, w.code, w.field
			if wantStatus == 0 {
				wantStatus = http.StatusBadRequest
			}
			if wantCode == "" {
				wantCode = "4000"
			}
			if wantField == "" && wantStatus == http.StatusBadRequest {
				wantField = row.field
			}
			assert.Equal(t, wantStatus, status, "sandbox answer %v", body)
			assert.Equal(t, wantCode, anyKey(body, "code", "responseCode"), "sandbox answer %v", body)
			if wantField != "-" {
				assert.Equal(t, wantField, anyKey(body, "field"), "sandbox answer %v", body)
			}
			assert.NotEmpty(t, anyKey(body, "message"), "a refusal says why")
			if success, ok := body["success"]; ok {
				assert.Equal(t, false, success)
			}
			assert.Equal(t, before, viewSandbox(t, ctx, srv, reader, seeded), "the refused request changed the sandbox")
		})
	}
}

// anyKey returns the string under the first of keys the body has, matching keys without
// regard to case as the SDK's decoder does.
func anyKey(body map[string]any, keys ...string) string {
	for _, want := range keys {
		for k, v := range body {
			if strings.EqualFold(k, want) {
				s, _ := v.(string)
				return s
			}
		}
	}
	return ""
}

// seedBadInputSandbox creates the records the table's rows name: a customer with a
// subscription, credits and a license, a product with a recurring price, a meter with an
// event, an OTP mandate awaiting its code and a cancelled one.
func seedBadInputSandbox(t *testing.T, ctx context.Context, srv *billingtest.Server) seededRecords {
	t.Helper()
	c := srv.Client()
	cust, err := c.Customers.Create(ctx, &billing.CustomerCreateParams{Email: "seeded@example.com", Name: "Seeded", Phone: "+233241110000"})
	require.NoError(t, err)
	prod, err := c.Products.Create(ctx, &billing.ProductCreateParams{Name: "Seeded"})
	require.NoError(t, err)
	price, err := c.Products.CreatePrice(ctx, prod.ID, &billing.PriceCreateParams{UnitAmount: 1000, IsRecurring: true, Interval: billing.PriceIntervalMonth})
	require.NoError(t, err)
	sub, err := c.Subscriptions.Create(ctx, &billing.SubscriptionCreateParams{CustomerID: cust.ID, PriceID: price.ID})
	require.NoError(t, err)
	_, err = c.Credits.Grant(ctx, cust.ID, &billing.CreditGrantParams{Amount: 100})
	require.NoError(t, err)
	meter, err := c.Meters.Create(ctx, &billing.MeterCreateParams{Name: "Calls", EventName: "calls"})
	require.NoError(t, err)
	_, err = c.Meters.RecordEvent(ctx, meter.ID, nil)
	require.NoError(t, err)
	lic, err := c.Licenses.Create(ctx, &billing.LicenseCreateParams{CustomerID: cust.ID})
	require.NoError(t, err)
	for _, m := range []billing.MandateCreateParams{
		{ClientReferenceID: refOTPMandate, CustomerMSISDN: msisdnOTPMandate},
		{ClientReferenceID: refCancelledMandate, CustomerMSISDN: msisdnCancelled},
	} {
		m.Channel, m.CallbackURL = billing.DirectDebitChannelVodafone, "https://merchant.example/mandates"
		_, err := c.Mandates.Create(ctx, &m)
		require.NoError(t, err)
	}
	_, err = c.Mandates.Cancel(ctx, msisdnCancelled)
	require.NoError(t, err)
	return seededRecords{customerID: cust.ID, productID: prod.ID, priceID: price.ID, subscriptionID: sub.ID, meterID: meter.ID, licenseKey: lic.Key}
}

// sandboxView is everything of the sandbox's state that a read can show: what a refused
// request must leave as it was.
type sandboxView struct {
	Customers    []billing.CustomerSummary
	Customer     *billing.Customer
	Products     []billing.ProductSummary
	Subscription *billing.Subscription
	Wallet       *billing.CreditWallet
	Ledger       []billing.CreditTransaction
	Meter        *billing.Meter
	Events       []billing.MeterEvent
	License      *billing.License
	Mandates     []*billing.Mandate
	Movements    map[string]int
	Balance      int64
	Deliveries   int
	SMS          []string
}

func viewSandbox(t *testing.T, ctx context.Context, srv *billingtest.Server, c *billing.Client, s seededRecords) sandboxView {
	t.Helper()
	var v sandboxView
	var err error
	must := func(err error) {
		t.Helper()
		require.NoError(t, err)
	}
	customers, err := c.Customers.ListPage(ctx, &billing.CustomerListParams{ListParams: billing.ListParams{Limit: 100}})
	must(err)
	v.Customers = customers.Items
	v.Customer, err = c.Customers.Get(ctx, s.customerID)
	must(err)
	products, err := c.Products.ListPage(ctx, &billing.ProductListParams{ListParams: billing.ListParams{Limit: 100}})
	must(err)
	v.Products = products.Items
	v.Subscription, err = c.Subscriptions.Get(ctx, s.subscriptionID)
	must(err)
	v.Wallet, err = c.Credits.Get(ctx, s.customerID)
	must(err)
	ledger, err := c.Credits.TransactionsPage(ctx, s.customerID, &billing.CreditTransactionListParams{ListParams: billing.ListParams{Limit: 100}})
	must(err)
	v.Ledger = ledger.Items
	v.Meter, err = c.Meters.Get(ctx, s.meterID)
	must(err)
	events, err := c.Meters.EventsPage(ctx, s.meterID, &billing.MeterEventListParams{ListParams: billing.ListParams{Limit: 100}})
	must(err)
	v.Events = events.Items
	v.License, err = c.Licenses.Get(ctx, s.licenseKey)
	must(err)
	for _, ref := range []string{refOTPMandate, refCancelledMandate} {
		m, err := c.Mandates.Status(ctx, ref)
		must(err)
		v.Mandates = append(v.Mandates, m)
	}
	v.Movements = map[string]int{}
	for _, ref := range badRefs {
		v.Movements[ref] = srv.Movements(ref)
	}
	v.Balance = srv.DisbursementBalance()
	v.Deliveries = len(srv.Deliveries())
	v.SMS = append(srv.SMS(msisdnOTPMandate), srv.SMS(msisdnCancelled)...)
	return v
}

// TestBadInputEdgesPassBothSides sends what lies just inside each limit through the SDK
// to the sandbox: both must accept it. Where the SDK is stricter than the service, this
// is the test that fails.
func TestBadInputEdgesPassBothSides(t *testing.T) {
	srv := billingtest.NewServer(t, billingtest.WithManualClock())
	ctx := context.Background()
	seeded := seedBadInputSandbox(t, ctx, srv)
	c := srv.Client()
	const callback = "https://merchant.example/callbacks"
	ref36 := func(prefix string) string { return prefix + strings.Repeat("0", 36-len(prefix)) }
	text255 := strings.Repeat("d", 255)
	flat := billing.Metadata{"orderId": "o-1", "paid": false, "items": 3, "note": nil}

	for name, call := range map[string]func() error{
		"a 7-digit international phone": func() error {
			_, err := c.Customers.Create(ctx, &billing.CustomerCreateParams{Email: "niue@example.com", Name: "Niue", Phone: "+683 4002"})
			return err
		},
		"a 15-digit international phone": func() error {
			_, err := c.Customers.Create(ctx, &billing.CustomerCreateParams{Email: "long@example.com", Name: "Long", Phone: "+49 1512 345 678 901", Currency: "usd", Metadata: flat})
			return err
		},
		"list limits 1 and 100": func() error {
			for _, limit := range []int{1, 100} {
				lp := billing.ListParams{Limit: limit}
				if _, err := c.Customers.ListPage(ctx, &billing.CustomerListParams{ListParams: lp}); err != nil {
					return err
				}
				if _, err := c.Products.ListPage(ctx, &billing.ProductListParams{ListParams: lp, Active: billing.Value(false)}); err != nil {
					return err
				}
				if _, err := c.Credits.TransactionsPage(ctx, seeded.customerID, &billing.CreditTransactionListParams{ListParams: lp}); err != nil {
					return err
				}
				if _, err := c.Meters.EventsPage(ctx, seeded.meterID, &billing.MeterEventListParams{ListParams: lp}); err != nil {
					return err
				}
			}
			return nil
		},
		"the longest interval and trials": func() error {
			price, err := c.Products.CreatePrice(ctx, seeded.productID, &billing.PriceCreateParams{UnitAmount: 1, IsRecurring: true,
				Interval: billing.PriceIntervalDay, IntervalCount: billing.MaxIntervalCount, TrialPeriodDays: billing.MaxTrialDays, Metadata: flat})
			if err != nil {
				return err
			}
			_, err = c.Subscriptions.Create(ctx, &billing.SubscriptionCreateParams{CustomerID: seeded.customerID, PriceID: price.ID, Quantity: 1, TrialDays: billing.Value(billing.MaxTrialDays)})
			return err
		},
		"a zero reading with the longest idempotency key": func() error {
			_, err := c.Meters.RecordEvent(ctx, seeded.meterID, &billing.MeterEventParams{Value: billing.Value(0.0), IdempotencyKey: strings.Repeat("k", 255), Metadata: flat})
			return err
		},
		"credits of 1": func() error {
			if _, err := c.Credits.Grant(ctx, seeded.customerID, &billing.CreditGrantParams{Amount: 1, Metadata: flat}); err != nil {
				return err
			}
			_, err := c.Credits.Deduct(ctx, seeded.customerID, &billing.CreditDeductParams{Amount: 1})
			return err
		},
		"checkout of 1 with the longest description and reference": func() error {
			_, err := c.Payments.CreateCheckout(ctx, &billing.CheckoutParams{Amount: 1, Currency: "ghs", Description: text255, ClientReference: ref36("chk"),
				ReturnURL: "https://shop.example/thanks", Customer: billing.CheckoutCustomer{Name: "Ama", Email: "ama@example.com", Phone: "+233 24 123 4567"}})
			return err
		},
		"receive of 1 with the longest description and reference": func() error {
			_, err := c.Payments.Receive(ctx, &billing.ReceiveParams{Amount: 1, Currency: "ghs", Phone: "+233 (24) 123-4567", Provider: billing.ProviderMPESA,
				Description: text255, ClientReference: ref36("rcv"), CallbackURL: callback, Metadata: flat})
			return err
		},
		"send with no name: the phone stands in": func() error {
			sent, err := c.Payouts.Send(ctx, &billing.SendParams{Amount: 1, Phone: "00233241234567", Provider: billing.ProviderAirtelTigo,
				Description: text255, ClientReference: ref36("snd")})
			if err == nil && sent.Name != "233241234567" {
				t.Errorf("recipient name %q, want the phone", sent.Name)
			}
			return err
		},
		"send-to-bank of 0.01 with the longest reference": func() error {
			_, err := c.Payouts.SendToBank(ctx, &billing.BankTransferParams{BankCode: billing.BankCodes()[0], Amount: 1, PrimaryCallbackURL: callback,
				Description: text255, BankAccountNumber: "1441000123456", ClientReference: ref36("bnk"), RecipientPhoneNumber: "+233 24 123 4567"})
			return err
		},
		"a mandate with the longest reference, then its OTP typed in lower case": func() error {
			msisdn := "233205550080"
			m, err := c.Mandates.Create(ctx, &billing.MandateCreateParams{ClientReferenceID: ref36("mnd"), CustomerMSISDN: "+" + msisdn,
				Channel: billing.DirectDebitChannelVodafone, CallbackURL: callback})
			if err != nil {
				return err
			}
			texts := srv.SMS(msisdn)
			require.NotEmpty(t, texts)
			_, err = c.Mandates.VerifyOTP(ctx, &billing.MandateVerifyOTPParams{CustomerMSISDN: msisdn, ServicePreApprovalID: m.ServicePreApprovalID,
				ClientReferenceID: m.ClientReferenceID, OTPCode: strings.ToLower(texts[0])})
			return err
		},
		"a license of one activation": func() error {
			_, err := c.Licenses.Create(ctx, &billing.LicenseCreateParams{CustomerID: seeded.customerID, ProductID: seeded.productID, MaxActivations: 1, Metadata: flat})
			return err
		},
	} {
		assert.NoError(t, call(), name)
	}
}
