package billing

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// templateArgs fills each {name} of e's template, in order, with value(i) as the field
// called name.
func templateArgs(e *endpoint, value func(i int) string) []pathValue {
	var args []pathValue
	for rest := e.path; ; {
		open := strings.IndexByte(rest, '{')
		if open < 0 {
			return args
		}
		end := strings.IndexByte(rest, '}')
		args = append(args, seg(rest[open+1:end], value(len(args))))
		rest = rest[end+1:]
	}
}

// requireValidationError returns err as a *ValidationError, failing the test otherwise.
func requireValidationError(t testing.TB, err error) *ValidationError {
	t.Helper()
	var v *ValidationError
	require.ErrorAs(t, err, &v)
	return v
}

// hostileIDs are ids a careless or hostile caller may hand on from a web form: dot
// segments, spelled out and percent-encoded, slashes, a query and a fragment, control
// characters, white space, Unicode look-alikes of '.' and '/' that normalisation turns
// into them, invalid UTF-8 and a megabyte.
var hostileIDs = []string{
	"", ".", "..", "...", " ", "\t", "%2e", "%2e%2e", "%2E%2E", ".%2e", "%2e.", "%252e%252e",
	"a/b", "../x", "x/..", "a/../../v1/payouts", "/", "//", `a\b`, `..\..`, "a%2Fb", "%2F",
	"a?b=c", "?", "a#b", "#", "a;b", "a\r\nb", "\r\n", "a\x00b", "\x00", "a\x7fb", "a b", " a", "a ",
	"\u2024", "\u2024\u2024", "\uff0e\uff0e", "\uff0e", "\u2025", "\uff0f", "\u2215", "\u200b", "\u00a0",
	"a\xffb", "\xc0\xae\xc0\xae", "r\u00e9f", strings.Repeat("a", 1<<20), strings.Repeat(".", 300),
}

// hostileAtoms are the pieces the seeded part of the corpus is assembled from.
var hostileAtoms = []string{".", "..", "/", "%2e", "%2f", "?", "#", "\r", "\n", "\x00", " ", "\u2024", "\uff0e", "\xff", "a", "1", "_", "-", "~"}

// hostileCorpus is hostileIDs and n more ids assembled from hostileAtoms by a generator
// seeded with seed.
func hostileCorpus(seed uint64, n int) []string {
	rng := rand.New(rand.NewPCG(seed, seed))
	out := append([]string(nil), hostileIDs...)
	for range n {
		var b strings.Builder
		for range 1 + rng.IntN(5) {
			b.WriteString(hostileAtoms[rng.IntN(len(hostileAtoms))])
		}
		out = append(out, b.String())
	}
	return out
}

// Each case the issue reproduced against the old code: an id of "." or ".." named
// another endpoint, which a proxy normalising dot segments would have called.
func TestDotIDsCallNoOtherEndpoint(t *testing.T) {
	cases := map[string]refusal{}
	for _, id := range []string{".", ".."} {
		cases["Products.ArchivePrice "+id] = refusal{func(c *Client) error { _, err := c.Products.ArchivePrice(ctx(), "prod_1", id); return err }, "priceId"}
		cases["Products.CreatePrice "+id] = refusal{func(c *Client) error {
			_, err := c.Products.CreatePrice(ctx(), id, &PriceCreateParams{UnitAmount: 100})
			return err
		}, "productId"}
		cases["Credits.Deduct "+id] = refusal{func(c *Client) error {
			_, err := c.Credits.Deduct(ctx(), id, &CreditDeductParams{Amount: 5})
			return err
		}, "customerId"}
		cases["Credits.Get "+id] = refusal{func(c *Client) error { _, err := c.Credits.Get(ctx(), id); return err }, "customerId"}
		cases["Customers.Get "+id] = refusal{func(c *Client) error { _, err := c.Customers.Get(ctx(), id); return err }, "id"}
		cases["Customers.Update "+id] = refusal{func(c *Client) error {
			_, err := c.Customers.Update(ctx(), id, &CustomerUpdateParams{Name: "X"})
			return err
		}, "id"}
		cases["Subscriptions.Pause "+id] = refusal{func(c *Client) error { _, err := c.Subscriptions.Pause(ctx(), id); return err }, "id"}
		cases["Meters.Get "+id] = refusal{func(c *Client) error { _, err := c.Meters.Get(ctx(), id); return err }, "id"}
		cases["Meters.RecordEvent "+id] = refusal{func(c *Client) error {
			_, err := c.Meters.RecordEvent(ctx(), id, &MeterEventParams{})
			return err
		}, "meterId"}
	}
	requireRefusedBeforeSending(t, cases, WithSecretKey("sk_test_1"))
}

// The path builder's rule for one value, across the corpus: a value it lets through is
// one segment that no decoding or normalisation turns into another route.
func TestPathBuilderLetsThroughOnlyOneSegment(t *testing.T) {
	const seed = 28
	t.Logf("seed %d", seed)
	e := &endpoints[epPriceArchive]
	for _, id := range hostileCorpus(seed, 2000) {
		path, err := e.fill([]pathValue{seg("productId", "prod_1"), seg("priceId", id)})
		if err != nil {
			assert.Equal(t, "priceId", requireValidationError(t, err).Field)
			continue
		}
		assert.Equal(t, "/v1/products/prod_1/prices/"+id, path, "%q", id)
		unescaped, uerr := url.PathUnescape(id)
		require.NoError(t, uerr)
		assert.Equal(t, id, unescaped, "%q is its own escaped form", id)
		assert.NotEqual(t, strings.Repeat(".", len(id)), id, "%q is only dots", id)
	}
	assert.Equal(t, "clientReference", requireValidationError(t, (&clientReferenceRule).check("clientReference", "a.b")).Field)
	_, err := encodeQuery(url.Values{"email": {"a\nb@example.com"}})
	assert.Equal(t, "email", requireValidationError(t, err).Field)
	_, err = encodeQuery(url.Values{"clientReference": {""}})
	assert.Equal(t, "clientReference", requireValidationError(t, err).Field)
	q, err := encodeQuery(url.Values{"email": {"ama.mensah+1@example.com"}})
	require.NoError(t, err)
	assert.Equal(t, "email=ama.mensah%2B1%40example.com", q)
}

// routeRecorder is a server that records the method and raw request target of every
// request it receives and answers 404.
type routeRecorder struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string
}

func newRouteRecorder(t *testing.T) *routeRecorder {
	r := &routeRecorder{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.seen = append(r.seen, req.Method+" "+req.RequestURI)
		r.mu.Unlock()
		jsonAnswer(http.StatusNotFound, `{"success":false,"message":"not found","code":"not_found"}`)(w, req)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *routeRecorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	seen := r.seen
	r.seen = nil
	return seen
}

// routeObserver records the route of every call.
type routeObserver struct {
	mu     sync.Mutex
	routes []string
}

func (o *routeObserver) CallStart(ctx context.Context, call *CallInfo) context.Context {
	o.mu.Lock()
	o.routes = append(o.routes, call.Method+" "+call.Route)
	o.mu.Unlock()
	return ctx
}
func (o *routeObserver) CallEnd(context.Context, *CallInfo) {}
func (o *routeObserver) AttemptStart(ctx context.Context, _ *AttemptInfo) context.Context {
	return ctx
}
func (o *routeObserver) AttemptEnd(context.Context, *AttemptInfo) {}

func (o *routeObserver) take() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	r := o.routes
	o.routes = nil
	return r
}

// validParams are valid params of every params type an exported method takes. A method
// added with a new params type fails TestHostileIDsReachOnlyTheirRoute until its type is
// listed here.
var validParams = map[reflect.Type]func() any{
	reflect.TypeFor[*CustomerCreateParams](): func() any { return &CustomerCreateParams{Email: "ama@example.com", Name: "Ama"} },
	reflect.TypeFor[*CustomerUpdateParams](): func() any { return &CustomerUpdateParams{Name: "Ama"} },
	reflect.TypeFor[*CustomerListParams]():   func() any { return &CustomerListParams{Email: "ama@example.com"} },
	reflect.TypeFor[*ProductCreateParams]():  func() any { return &ProductCreateParams{Name: "Basic"} },
	reflect.TypeFor[*ProductListParams]():    func() any { return &ProductListParams{} },
	reflect.TypeFor[*PriceCreateParams]():    func() any { return &PriceCreateParams{UnitAmount: 2500} },
	reflect.TypeFor[*SubscriptionCreateParams](): func() any {
		return &SubscriptionCreateParams{CustomerID: "cust_1", PriceID: "price_1"}
	},
	reflect.TypeFor[*SubscriptionCancelParams]():    func() any { return &SubscriptionCancelParams{} },
	reflect.TypeFor[*CreditGrantParams]():           func() any { return &CreditGrantParams{Amount: 500} },
	reflect.TypeFor[*CreditDeductParams]():          func() any { return &CreditDeductParams{Amount: 500} },
	reflect.TypeFor[*CreditTransactionListParams](): func() any { return &CreditTransactionListParams{} },
	reflect.TypeFor[*MeterCreateParams]():           func() any { return &MeterCreateParams{Name: "API calls", EventName: "api.call"} },
	reflect.TypeFor[*MeterEventParams]():            func() any { return &MeterEventParams{CustomerID: "cust_1"} },
	reflect.TypeFor[*MeterEventListParams]():        func() any { return &MeterEventListParams{} },
	reflect.TypeFor[*LicenseCreateParams]():         func() any { return &LicenseCreateParams{CustomerID: "cust_1"} },
	reflect.TypeFor[*LicenseUpdateParams]():         func() any { return &LicenseUpdateParams{MaxActivations: 3} },
	reflect.TypeFor[*CheckoutParams](): func() any {
		return &CheckoutParams{Amount: 5000, Description: "Order", ClientReference: "order1042",
			Customer: CheckoutCustomer{Name: "Ama", Email: "ama@example.com", Phone: "+233241234567"}}
	},
	reflect.TypeFor[*ReceiveParams]():            func() any { return validReceive() },
	reflect.TypeFor[*SendParams]():               func() any { return validSend() },
	reflect.TypeFor[*BankTransferParams]():       func() any { return validBankTransfer() },
	reflect.TypeFor[*BankTransferStatusParams](): func() any { return &BankTransferStatusParams{ClientReference: "bank1"} },
	reflect.TypeFor[*MandateCreateParams]():      func() any { return validMandate() },
	reflect.TypeFor[*MandateVerifyOTPParams](): func() any {
		return &MandateVerifyOTPParams{CustomerMSISDN: "233201234567", ServicePreApprovalID: "pre_1", ClientReferenceID: "mandate1", OTPCode: "KWXQ-4821"}
	},
	reflect.TypeFor[*MandateReactivateParams](): func() any {
		return &MandateReactivateParams{CustomerMSISDN: "233201234567", CallbackURL: "https://shop.example.com/cb"}
	},
	reflect.TypeFor[*DirectDebitParams](): func() any { return validDebit() },
}

// validIDs are the candidates for a string argument: the first with which a call reaches
// the server is its valid id (a license key and a phone number have shapes of their own).
var validIDs = []string{"id_1", "ABCD-EFGH-JKLM-NPQR", "233241234567"}

// exportedCall is one exported method of the SDK that sends requests, bound to its
// receiver.
type exportedCall struct {
	name string
	// fn returns the method bound to its receiver: the Client's service, or a new
	// Tracker of the Client on each call, so that no call sees another's movement.
	fn func() reflect.Value
}

// exportedCalls lists, by reflection, every exported method of c's services taking a
// context first, and every method of a Tracker taking a context and params of
// validParams.
func exportedCalls(t *testing.T, c *Client) []exportedCall {
	ctxType := reflect.TypeFor[context.Context]()
	var calls []exportedCall
	cv := reflect.ValueOf(c).Elem()
	for i := range cv.NumField() {
		f := cv.Type().Field(i)
		if !f.IsExported() || !strings.HasSuffix(f.Type.String(), "Service") {
			continue
		}
		sv := cv.Field(i)
		for m := range sv.NumMethod() {
			mt := sv.Type().Method(m)
			if mt.Type.NumIn() > 1 && mt.Type.In(1) == ctxType {
				method := sv.Method(m)
				calls = append(calls, exportedCall{f.Name + "." + mt.Name, func() reflect.Value { return method }})
			}
		}
	}
	tt := reflect.TypeFor[*Tracker]()
	for m := range tt.NumMethod() {
		mt := tt.Method(m)
		if mt.Type.NumIn() == 3 && mt.Type.In(1) == ctxType && validParams[mt.Type.In(2)] != nil {
			calls = append(calls, exportedCall{"Tracker." + mt.Name, func() reflect.Value {
				return reflect.ValueOf(NewTracker(c, TrackerOptions{CallbackURL: "https://shop.example.com/callbacks"})).Method(m)
			}})
		}
	}
	require.NotEmpty(t, calls)
	return calls
}

// invoke calls fn with args and returns the error it ends with: its last result, or the
// first error of the iterator it returns. A panic is an error too.
func invoke(fn reflect.Value, args []reflect.Value) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	out := fn.Call(args)
	last := out[len(out)-1]
	if last.Kind() == reflect.Func { // an iter.Seq2[*T, error]: pull its first item
		yield := reflect.MakeFunc(last.Type().In(0), func(in []reflect.Value) []reflect.Value {
			if e, _ := in[1].Interface().(error); e != nil {
				err = e
			}
			return []reflect.Value{reflect.ValueOf(false)}
		})
		last.Call([]reflect.Value{yield})
		return err
	}
	if e, _ := last.Interface().(error); e != nil {
		return e
	}
	return nil
}

// argSlot is one string a call carries that a caller supplies: an argument, or a string
// field of its params.
type argSlot struct {
	name string
	set  func(args []reflect.Value, v string)
}

// baseArgs returns valid arguments for fn (strings from validIDs[pick]) and its string
// slots.
func baseArgs(t *testing.T, name string, fn reflect.Value, pick int) ([]reflect.Value, []argSlot) {
	ft := fn.Type()
	args := make([]reflect.Value, ft.NumIn())
	var slots []argSlot
	for i := range ft.NumIn() {
		in := ft.In(i)
		switch {
		case i == 0:
			args[i] = reflect.ValueOf(context.Background())
		case in.Kind() == reflect.String:
			args[i] = reflect.ValueOf(validIDs[pick]).Convert(in)
			slots = append(slots, argSlot{fmt.Sprintf("arg %d", i), func(a []reflect.Value, v string) { a[i] = reflect.ValueOf(v).Convert(in) }})
		case in == reflect.TypeFor[time.Time]():
			args[i] = reflect.ValueOf(time.Time{})
		case validParams[in] != nil:
			args[i] = reflect.ValueOf(validParams[in]())
			st := in.Elem()
			for f := range st.NumField() {
				if sf := st.Field(f); sf.IsExported() && sf.Type.Kind() == reflect.String {
					slots = append(slots, argSlot{"params." + sf.Name, func(a []reflect.Value, v string) {
						p := reflect.ValueOf(validParams[in]())
						p.Elem().Field(f).SetString(v)
						a[i] = p
					}})
				}
			}
		default:
			t.Fatalf("%s: no valid value for an argument of type %s: add one to validParams", name, in)
		}
	}
	return args, slots
}

// routePattern matches a request target of route ("GET /v1/customers/{id}"): each
// {name} one segment, an optional query.
func routePattern(route string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("^")
	for rest := route; ; {
		open := strings.IndexByte(rest, '{')
		if open < 0 {
			b.WriteString(regexp.QuoteMeta(rest))
			break
		}
		end := strings.IndexByte(rest, '}')
		b.WriteString(regexp.QuoteMeta(rest[:open]))
		b.WriteString(`([^/?#]+)`)
		rest = rest[end+1:]
	}
	b.WriteString(`(\?[^#]*)?$`)
	return regexp.MustCompile(b.String())
}

// Every exported method that takes a string, in an argument or a params field, fed the
// hostile corpus against a server that records each request's method and target: the
// request is not sent (a *ValidationError) or it goes to exactly the route of that
// method's valid call, each id one segment that no proxy normalises away. The methods are
// found by reflection, so a method added later is covered, and every endpoint of the table
// whose path takes an argument must be reached by some method.
func TestHostileIDsReachOnlyTheirRoute(t *testing.T) {
	const seed, extra = 2811, 40
	t.Logf("seed %d, %d generated ids beside the fixed corpus", seed, extra)
	corpus := hostileCorpus(seed, extra)
	srv := newRouteRecorder(t)
	obs := &routeObserver{}
	clients := map[string]*Client{}
	var err error
	clients["client credentials"], err = NewClient(WithBaseURL(srv.URL), WithClientCredentials("client-id", "client-secret"),
		WithDisbursementAccount("2020202"), WithRetry(1, 0, 0), WithObserver(obs))
	require.NoError(t, err)
	clients["session token"], err = NewClient(WithBaseURL(srv.URL), WithSessionToken("session-token"), WithRetry(1, 0, 0), WithObserver(obs))
	require.NoError(t, err)

	reached := map[string]bool{}
	for clientName, c := range clients {
		for _, call := range exportedCalls(t, c) {
			// The valid call: the first candidate id that reaches the server.
			var args []reflect.Value
			var slots []argSlot
			var routes []string
			for pick := range validIDs {
				args, slots = baseArgs(t, call.name, call.fn(), pick)
				_ = invoke(call.fn(), args)
				srv.take()
				if routes = obs.take(); len(routes) > 0 {
					break
				}
			}
			if len(routes) == 0 {
				if clientName == "client credentials" {
					t.Errorf("%s: no valid call reaches the server: add its id to validIDs", call.name)
				}
				continue
			}
			patterns := map[string]*regexp.Regexp{}
			for _, r := range routes {
				reached[r] = true
				patterns[r] = routePattern(r)
			}
			for _, slot := range slots {
				for _, id := range corpus {
					a := append([]reflect.Value(nil), args...)
					slot.set(a, id)
					err := invoke(call.fn(), a)
					seen := srv.take()
					obs.take()
					if len(seen) == 0 {
						var v *ValidationError
						if !errors.As(err, &v) {
							t.Errorf("%s (%s) %s %.40q: nothing sent, yet no *ValidationError: %v", call.name, clientName, slot.name, id, err)
						}
						continue
					}
					for _, target := range seen {
						if !matchesOne(patterns, target) {
							t.Errorf("%s (%s) %s %.40q: sent %.200s, not one of %v", call.name, clientName, slot.name, id, target, routes)
						}
					}
				}
			}
		}
	}
	for id := range endpointCount {
		e := &endpoints[id]
		if strings.Contains(e.path, "{") {
			assert.True(t, reached[e.method+" "+e.path], "no exported method reached %s %s", e.method, e.path)
		}
	}
}

// matchesOne reports whether target matches one of the route patterns with every
// segment it fills one that no decoding or normalisation makes a dot segment or splits.
func matchesOne(patterns map[string]*regexp.Regexp, target string) bool {
	for _, p := range patterns {
		m := p.FindStringSubmatch(target)
		if m == nil {
			continue
		}
		ok := true
		for _, segment := range m[1 : len(m)-1] {
			decoded, err := url.PathUnescape(segment)
			if err != nil || decoded != segment || strings.Trim(segment, ".") == "" {
				ok = false
			}
		}
		if ok {
			return true
		}
	}
	return false
}
