package billing_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
)

// This file forges every field of every callback and webhook fixture, one at a time, and
// delivers each forgery to the two places a merchant mounts: a confirming webhook handler
// and a Tracker's Handler, both against a sandbox where the genuine movement exists and
// is final. A field the service signs nothing for must either get the body refused or
// never reach merchant code: the function the handler calls, the Outcome Await returns
// (its Event included), the outcomes OnOutcome and the observer's OutcomeSettled are given.

// forgeFixture is one callback or webhook fixture and the genuine movement it is aligned
// to: the sandbox runs a movement of kind with the same final state on the fixture's
// wire, and the fixture's values are replaced by that movement's before forging.
type forgeFixture struct {
	file string
	kind forgeKind
	// succeeded is the final state of the genuine movement.
	succeeded bool
}

// forgeKind is the operation a fixture reports; checkout is not a Tracker kind today.
type forgeKind string

const (
	forgeReceive  forgeKind = "receive"
	forgeDebit    forgeKind = "direct_debit"
	forgeSend     forgeKind = "send"
	forgeBank     forgeKind = "bank_transfer"
	forgeMandate  forgeKind = "mandate"
	forgeCheckout forgeKind = "checkout"
)

// trackerKind is the Tracker's kind of k, "" for a checkout.
func (k forgeKind) trackerKind() billing.Kind {
	return map[forgeKind]billing.Kind{
		forgeReceive: billing.KindReceive, forgeDebit: billing.KindDirectDebit, forgeSend: billing.KindSend,
		forgeBank: billing.KindBankTransfer, forgeMandate: billing.KindMandate,
	}[k]
}

// forgeFixtures is every callback and webhook fixture of both wires. The selection in
// forgeFixtureFiles must find no fixture missing from it.
var forgeFixtures = []forgeFixture{
	{"events/direct_debit_callback_url_spelling.json", forgeDebit, true},
	{"events/direct_debit_success.json", forgeDebit, true},
	{"events/mandate_active.json", forgeMandate, true},
	{"events/mandate_approved.json", forgeMandate, true},
	{"events/payment_succeeded.json", forgeCheckout, true},
	{"events/payment_succeeded_minimal.json", forgeCheckout, true},
	{"events/send_failed_2001.json", forgeSend, false},
	{"events/send_failed_4075.json", forgeSend, false},
	{"events/send_success.json", forgeSend, true},
	{"events/send_to_bank_failed_2001.json", forgeBank, false},
	{"events/send_to_bank_success.json", forgeBank, true},
	{"events/transaction_failed.json", forgeReceive, false},
	{"events/transaction_success.json", forgeReceive, true},
	{"payments/checkout_webhook.json", forgeCheckout, true},
	{"payments/checkout_webhook_minimal.json", forgeCheckout, true},
	{"payments/transaction_callback_failed.json", forgeReceive, false},
	{"payments/transaction_callback_success.json", forgeReceive, true},
	{"payouts/bank_callback_name_check_failed.json", forgeBank, false},
	{"payouts/bank_callback_success.json", forgeBank, true},
	{"payouts/send_callback_insufficient_balance.json", forgeSend, false},
	{"payouts/send_callback_success.json", forgeSend, true},
	{"mandates/debit_callback_success.json", forgeDebit, true},
	{"mandates/mandate_callback.json", forgeMandate, true},
	{"provider/bank_callback_failed_4075.json", forgeBank, false},
	{"provider/bank_callback_success.json", forgeBank, true},
	{"provider/checkout_webhook.json", forgeCheckout, true},
	{"provider/directdebit_callback_failed.json", forgeDebit, false},
	{"provider/directdebit_callback_success.json", forgeDebit, true},
	{"provider/preapproval_callback_approved.json", forgeMandate, true},
	{"provider/preapproval_callback_failed.json", forgeMandate, false},
	{"provider/receive_callback_failed_doc.json", forgeReceive, false},
	{"provider/receive_callback_success_doc.json", forgeReceive, true},
	{"provider/send_callback_failed_4075.json", forgeSend, false},
	{"provider/send_callback_success.json", forgeSend, true},
}

// wire is the wire a fixture was recorded on: the provider's under provider/, the
// spec's elsewhere.
func (f forgeFixture) wire() billingtest.Wire {
	if strings.HasPrefix(f.file, "provider/") {
		return billingtest.WireProvider
	}
	return billingtest.WireSpec
}

// forgeFixtureFiles selects the fixtures a merchant's endpoint receives: every event of
// testdata/events and every file named as a callback or webhook, except the trial
// webhook, which reports a fact no status check confirms and settles nothing.
func forgeFixtureFiles(t *testing.T) []string {
	t.Helper()
	all, err := filepath.Glob(filepath.Join("testdata", "*", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, path := range all {
		rel := filepath.ToSlash(strings.TrimPrefix(path, "testdata"+string(filepath.Separator)))
		name := filepath.Base(rel)
		if !strings.HasPrefix(rel, "events/") && !strings.Contains(name, "callback") && !strings.Contains(name, "webhook") {
			continue
		}
		body, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		ev, err := billing.ParseEvent(body)
		if err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
		if ev.Kind() == billing.EventKindSubscriptionTrial {
			continue
		}
		out = append(out, rel)
	}
	return out
}

// TestForgeFixturesCoverEveryCallbackFixture keeps the forging complete: a callback or
// webhook fixture added to testdata must get a row in forgeFixtures.
func TestForgeFixturesCoverEveryCallbackFixture(t *testing.T) {
	listed := map[string]bool{}
	for _, f := range forgeFixtures {
		listed[f.file] = true
	}
	files := forgeFixtureFiles(t)
	for _, file := range files {
		if !listed[file] {
			t.Errorf("testdata/%s is a callback or webhook fixture without a row in forgeFixtures", file)
		}
		delete(listed, file)
	}
	for file := range listed {
		t.Errorf("forgeFixtures lists testdata/%s, which is not a callback or webhook fixture", file)
	}
}

// TestForgeEveryFieldOfEveryCallback forges, one at a time, every leaf of every callback
// and webhook fixture of both wires (and every field the event's type reads that the
// fixture lacks) with a canary value of the same shape, and delivers the forgery to a
// confirming webhook handler and to a Tracker's Handler while the genuine movement is
// final in the sandbox. The body must be refused, or the canary must appear nowhere in
// what merchant code is given.
func TestForgeEveryFieldOfEveryCallback(t *testing.T) {
	byWire := map[billingtest.Wire][]forgeFixture{}
	for _, f := range forgeFixtures {
		byWire[f.wire()] = append(byWire[f.wire()], f)
	}
	total, leaked := 0, 0
	for _, wire := range billingtest.Wires() {
		lab := newForgeLab(t, wire)
		genuine := lab.startAll(t, byWire[wire])
		for i, f := range byWire[wire] {
			t.Run(f.file, func(t *testing.T) {
				n, refused, bad := lab.forgeFixture(t, f, genuine[i])
				total += n
				leaked += bad
				t.Logf("%s: %d fields forged: %d refused by both endpoints, %d reached merchant code", f.file, n, refused, bad)
			})
		}
	}
	t.Logf("forged %d fields in %d fixtures; %d forgeries reached merchant code", total, len(forgeFixtures), leaked)
}

// forgeLab is one sandbox on one wire, a sink for its callbacks, and a client.
type forgeLab struct {
	srv    *billingtest.Server
	client *billing.Client
	sink   string
}

func newForgeLab(t *testing.T, wire billingtest.Wire) *forgeLab {
	t.Helper()
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(sink.Close)
	srv := billingtest.NewServer(t, billingtest.WithManualClock(), billingtest.WithWire(wire),
		billingtest.WithWebhookURL(sink.URL+"/webhooks"))
	return &forgeLab{srv: srv, client: srv.Client(), sink: sink.URL}
}

// forgeGenuine is a genuine movement in the sandbox and the callback it sent.
type forgeGenuine struct {
	kind      forgeKind
	reference string // the client reference; a checkout's session reference
	body      []byte
}

// startAll runs one genuine movement per fixture, lets the sandbox resolve them all, and
// returns each with the callback or webhook the sandbox sent for it.
func (l *forgeLab) startAll(t *testing.T, fixtures []forgeFixture) []forgeGenuine {
	t.Helper()
	ctx := context.Background()
	out := make([]forgeGenuine, len(fixtures))
	for i, f := range fixtures {
		ref := fmt.Sprintf("forge%s%d", strings.ReplaceAll(string(f.kind), "_", ""), i)
		callbackURL := l.sink + "/callbacks/" + ref
		// The sandbox's test numbers: a phone or account ending 0001 fails (a mandate's
		// 0009 is refused); anything else succeeds.
		suffix := "4567"
		if !f.succeeded {
			suffix = "0001"
		}
		// One mandate a number: each fixture's movement has numbers of its own.
		mtn, telecel := fmt.Sprintf("23324%02d1", i), fmt.Sprintf("23320%02d1", i)
		var err error
		switch f.kind {
		case forgeReceive:
			_, err = l.client.Payments.Receive(ctx, &billing.ReceiveParams{Amount: 5000, Phone: mtn + suffix,
				Provider: billing.ProviderMTN, Description: "Order " + ref, ClientReference: ref, CallbackURL: callbackURL})
		case forgeSend:
			_, err = l.client.Payouts.Send(ctx, &billing.SendParams{Amount: 2000, Phone: telecel + suffix,
				Provider: billing.ProviderTelecel, Name: "Kofi", Description: "Refund " + ref, ClientReference: ref, CallbackURL: callbackURL})
		case forgeBank:
			_, err = l.client.Payouts.SendToBank(ctx, &billing.BankTransferParams{BankCode: "300302", Amount: 10000,
				PrimaryCallbackURL: callbackURL, Description: "Supplier " + ref, BankAccountNumber: "144100012" + suffix,
				ClientReference: ref, BankAccountName: "Adwoa Farms Ltd"})
		case forgeDebit:
			msisdn := mtn + suffix
			err = l.approveMandate(ctx, msisdn, "mandate"+ref)
			if err == nil {
				_, err = l.client.Mandates.Charge(ctx, &billing.DirectDebitParams{CustomerMSISDN: msisdn,
					Channel: billing.DirectDebitChannelMTN, Amount: 4999, PrimaryCallbackURL: callbackURL,
					Description: "Plan " + ref, ClientReference: ref})
			}
		case forgeMandate:
			if !f.succeeded {
				suffix = "0009"
			}
			_, err = l.client.Mandates.Create(ctx, &billing.MandateCreateParams{ClientReferenceID: ref,
				CustomerMSISDN: mtn + suffix, Channel: billing.DirectDebitChannelMTN, CallbackURL: callbackURL})
		case forgeCheckout:
			var p *billing.Payment
			p, err = l.client.Payments.CreateCheckout(ctx, forgeCheckoutParams(t, f, ref))
			if err == nil {
				err = l.srv.CompleteCheckout(p.Reference, "MOBILE_MONEY", "succeeded")
				ref = p.Reference
			}
		}
		if err != nil {
			t.Fatalf("starting the genuine movement of %s: %v", f.file, err)
		}
		out[i] = forgeGenuine{kind: f.kind, reference: ref}
	}
	l.srv.Advance(time.Second) // every movement resolves and its callback is posted
	for i := range out {
		out[i].body = l.genuineBody(t, out[i])
	}
	return out
}

// forgeCheckoutParams creates a checkout session whose metadata has the keys of the
// fixture's (a client reference where the provider's webhook names one), so that the
// fixture aligned to it names the payment's own metadata.
func forgeCheckoutParams(t *testing.T, f forgeFixture, ref string) *billing.CheckoutParams {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", filepath.FromSlash(f.file)))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := forgeDecode(t, raw).(map[string]any)
	data, _ := forgeLookup(body, "data")
	dataObj, _ := data.(map[string]any)
	p := &billing.CheckoutParams{Amount: 5000, Description: "Order " + ref, Metadata: billing.Metadata{}}
	if _, ok := forgeLookup(dataObj, "ClientReference"); ok {
		p.ClientReference = ref
	}
	meta, _ := forgeLookup(dataObj, "metadata")
	metaObj, _ := meta.(map[string]any)
	for k := range metaObj {
		switch k {
		case "clientReference":
			p.ClientReference = ref
		case "returnUrl":
			p.ReturnURL = "https://shop.example.com/orders/" + ref
		default:
			p.Metadata[k] = "v" + ref
		}
	}
	return p
}

// approveMandate creates a USSD mandate, which the sandbox approves on its own.
func (l *forgeLab) approveMandate(ctx context.Context, msisdn, ref string) error {
	_, err := l.client.Mandates.Create(ctx, &billing.MandateCreateParams{ClientReferenceID: ref, CustomerMSISDN: msisdn,
		Channel: billing.DirectDebitChannelMTN, CallbackURL: l.sink + "/mandates"})
	if err != nil {
		return err
	}
	l.srv.Advance(time.Second)
	return nil
}

// genuineBody returns the one callback (or webhook) the sandbox posted for g.
func (l *forgeLab) genuineBody(t *testing.T, g forgeGenuine) []byte {
	t.Helper()
	var found [][]byte
	for _, d := range l.srv.Deliveries() {
		switch {
		case g.kind == forgeCheckout && d.URL == l.sink+"/webhooks" && bytes.Contains(d.Body, []byte(`"`+g.reference+`"`)):
		case g.kind != forgeCheckout && d.URL == l.sink+"/callbacks/"+g.reference:
		default:
			continue
		}
		found = append(found, d.Body)
	}
	if len(found) != 1 {
		t.Fatalf("the sandbox posted %d callbacks for %s %s, want 1", len(found), g.kind, g.reference)
	}
	return found[0]
}

// forgeFixture aligns the fixture to the genuine movement, checks that both endpoints
// take the aligned body, then forges each field in turn. It returns how many fields it
// forged, how many both endpoints refused, and how many reached merchant code.
func (l *forgeLab) forgeFixture(t *testing.T, f forgeFixture, g forgeGenuine) (forged, refused, leaked int) {
	raw, err := os.ReadFile(filepath.Join("testdata", filepath.FromSlash(f.file)))
	if err != nil {
		t.Fatal(err)
	}
	fixture := forgeDecode(t, raw)
	aligned := forgeAlign(fixture, forgeDecode(t, g.body))
	base := forgeEncode(t, aligned)

	// The aligned body is the genuine callback in the fixture's shape: both endpoints
	// must take it, or the forgeries below would prove nothing.
	seen := l.deliver(t, f, g, base)
	// On the provider's wire a failed receive or debit is confirmed by nothing: its
	// status check answers 0000 Unpaid, failed or not yet. Both endpoints then answer
	// "not confirmed yet" to the genuine callback too, and every forgery below must still
	// reach no merchant code.
	unconfirmable := seen.webhookStatus == http.StatusServiceUnavailable && seen.trackerStatus == http.StatusServiceUnavailable &&
		strings.HasPrefix(f.file, "provider/") && strings.Contains(f.file, "failed") &&
		(strings.HasPrefix(path.Base(f.file), "receive_") || strings.HasPrefix(path.Base(f.file), "directdebit_"))
	if !unconfirmable && (seen.webhookStatus != http.StatusOK || seen.trackerStatus != http.StatusOK) {
		t.Fatalf("the genuine callback in the fixture's shape was answered %d by the webhook handler and %d by the Tracker; body %s",
			seen.webhookStatus, seen.trackerStatus, base)
	}
	if g.kind != forgeCheckout && !unconfirmable && seen.outcomes() == 0 {
		t.Fatalf("the genuine callback settled nothing merchant code was told of; body %s", base)
	}

	ev, err := billing.ParseEvent(base)
	if err != nil {
		t.Fatalf("the aligned fixture does not parse: %v", err)
	}
	forgeries := forgeLeaves(aligned)
	forgeries = append(forgeries, forgeAbsentFields(aligned, reflect.TypeOf(ev).Elem())...)
	for i, fg := range forgeries {
		body := forgeEncode(t, fg.apply(fg.canary.value(i)))
		c := fg.canary.matcher(i)
		// The canary must be news to merchant code: what it is given for the genuine
		// callback does not hold it.
		if where := seen.find(c); where != "" {
			t.Fatalf("the canary of %s is not distinctive: the genuine callback's %s holds it", fg.path, where)
		}
		got := l.deliver(t, f, g, body)
		forged++
		if got.webhookStatus >= 400 && got.trackerStatus >= 400 {
			refused++
		}
		if where := got.find(c); where != "" {
			leaked++
			t.Errorf("forged %s (%s) reached merchant code: %s (webhook handler %d, Tracker %d)",
				fg.path, fg.canary.describe(i), where, got.webhookStatus, got.trackerStatus)
		}
	}
	return forged, refused, leaked
}

// forgeSeen is what merchant code was given for one delivery to each endpoint.
type forgeSeen struct {
	webhookStatus, trackerStatus int
	// events are what the webhook handler's function received.
	events []billing.Event
	// awaited is the Outcome Await returned, when the Tracker settled the movement.
	awaited *billing.Outcome
	// reported are the outcomes OnOutcome was given; settled those the observer was told.
	reported, settled []*billing.Outcome
}

func (s *forgeSeen) outcomes() int {
	n := len(s.reported) + len(s.settled)
	if s.awaited != nil {
		n++
	}
	return n
}

// find returns where merchant code was given the canary, or "".
func (s *forgeSeen) find(c forgeMatcher) string {
	var where []string
	for i, ev := range s.events {
		where = append(where, c.search(reflect.ValueOf(ev), fmt.Sprintf("webhook function event[%d]", i))...)
	}
	if s.awaited != nil {
		where = append(where, c.search(reflect.ValueOf(s.awaited), "Await's Outcome")...)
	}
	for i, o := range s.reported {
		where = append(where, c.search(reflect.ValueOf(o), fmt.Sprintf("OnOutcome[%d]", i))...)
	}
	for i, o := range s.settled {
		where = append(where, c.search(reflect.ValueOf(o), fmt.Sprintf("observer OutcomeSettled[%d]", i))...)
	}
	return strings.Join(where, "; ")
}

// deliver posts body to a fresh confirming webhook handler and to a fresh Tracker's
// Handler (the movement tracked under its kind), and collects what merchant code was
// given by each.
func (l *forgeLab) deliver(t *testing.T, f forgeFixture, g forgeGenuine, body []byte) forgeSeen {
	t.Helper()
	var seen forgeSeen
	var mu sync.Mutex
	hook := billing.NewWebhookHandler(func(_ context.Context, ev billing.Event) error {
		mu.Lock()
		defer mu.Unlock()
		seen.events = append(seen.events, ev)
		return nil
	}, billing.WithStatusCheckConfirmation(l.client))
	seen.webhookStatus = forgePost(hook, body)

	kind := f.kind.trackerKind()
	obs := &forgeObserver{}
	clock := &forgeRunClock{Clock: l.srv.Clock(), sleeping: make(chan struct{}, 1)}
	tr := billing.NewTracker(l.client, billing.TrackerOptions{
		Clock: clock, Observer: obs,
		OnOutcome: func(_ context.Context, o *billing.Outcome) error {
			mu.Lock()
			defer mu.Unlock()
			seen.reported = append(seen.reported, o)
			return nil
		},
	})
	ctx := context.Background()
	if kind != "" {
		if err := tr.Track(ctx, kind, g.reference); err != nil {
			t.Fatalf("tracking %s %s: %v", kind, g.reference, err)
		}
	}
	seen.trackerStatus = forgePost(tr.Handler(), body)
	if kind != "" {
		// An Await whose context has ended returns at once: the settled outcome, or
		// the pending one.
		done, cancel := context.WithCancel(ctx)
		cancel()
		if o, err := tr.Await(done, kind, g.reference); err == nil {
			seen.awaited = o
		}
	}
	forgeRunOnce(t, tr, clock)
	seen.settled = obs.outcomes()
	return seen
}

// forgePost posts body to h and returns the status it answered.
func forgePost(h http.Handler, body []byte) int {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/callbacks", bytes.NewReader(body)))
	return rec.Code
}

// forgeRunClock is the sandbox's clock that says when Run has ended a round and waits
// for the next: Run is the only caller of After while it runs alone, nothing being due.
type forgeRunClock struct {
	billing.Clock
	sleeping chan struct{}
}

func (c *forgeRunClock) After(d time.Duration) <-chan time.Time {
	select {
	case c.sleeping <- struct{}{}:
	default:
	}
	return c.Clock.After(d)
}

// forgeRunOnce lets Run make one round (OnOutcome is called for every unreported final
// outcome) and stops it.
func forgeRunOnce(t *testing.T, tr *billing.Tracker, clock *forgeRunClock) {
	t.Helper()
	select { // forget the Awaits' and the handler's waits
	case <-clock.sleeping:
	default:
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- tr.Run(ctx) }()
	select {
	case <-clock.sleeping:
	case <-time.After(awaitBoundForge):
		t.Errorf("Run did not finish a round within %s", awaitBoundForge)
	}
	cancel()
	<-done
}

// awaitBoundForge bounds, in real time, a Run round that never ends; it is no timing
// assertion.
const awaitBoundForge = 20 * time.Second

// forgeObserver keeps the outcomes a Tracker settles.
type forgeObserver struct {
	mu      sync.Mutex
	settled []*billing.Outcome
}

func (o *forgeObserver) CallbackReceived(context.Context, billing.Event) {}
func (o *forgeObserver) StatusChecked(context.Context, billing.Kind, string, *billing.Outcome, error) {
}

func (o *forgeObserver) OutcomeSettled(_ context.Context, out *billing.Outcome) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.settled = append(o.settled, out)
}

func (o *forgeObserver) outcomes() []*billing.Outcome {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.settled)
}

// forgeDecode decodes JSON keeping numbers as written.
func forgeDecode(t *testing.T, b []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decoding %s: %v", b, err)
	}
	return v
}

func forgeEncode(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// forgeAlign returns the fixture with each leaf the genuine body also has (its key
// matched without regard to case, as the SDK matches keys) replaced by the genuine value,
// written in the fixture's form: a number the fixture writes as a string stays a string.
// Leaves only the fixture has are kept.
func forgeAlign(fixture, genuine any) any {
	switch fx := fixture.(type) {
	case map[string]any:
		gm, ok := genuine.(map[string]any)
		if !ok {
			return fixture
		}
		out := make(map[string]any, len(fx))
		for k, v := range fx {
			if gv, ok := forgeLookup(gm, k); ok {
				out[k] = forgeAlign(v, gv)
			} else {
				out[k] = forgeAlign(v, nil)
			}
		}
		return out
	case []any:
		ga, _ := genuine.([]any)
		out := make([]any, len(fx))
		for i, v := range fx {
			var gv any
			if i < len(ga) {
				gv = ga[i]
			}
			out[i] = forgeAlign(v, gv)
		}
		return out
	}
	if genuine == nil {
		return fixture
	}
	switch fx := fixture.(type) {
	case string:
		if n, ok := genuine.(json.Number); ok {
			if _, err := strconv.ParseFloat(fx, 64); err == nil {
				return n.String()
			}
		}
	case json.Number:
		if s, ok := genuine.(string); ok {
			if _, err := strconv.ParseFloat(s, 64); err == nil {
				return json.Number(s)
			}
		}
	}
	return genuine
}

// forgeLookup finds key in m without regard to case.
func forgeLookup(m map[string]any, key string) (any, bool) {
	if v, ok := m[key]; ok {
		return v, true
	}
	for k, v := range m {
		if strings.EqualFold(k, key) {
			return v, true
		}
	}
	return nil, false
}

// forgery is one field forged: apply returns a copy of the body with the field set to
// the canary's value.
type forgery struct {
	path   string
	canary forgeCanary
	apply  func(value any) any
}

// forgeLeaves lists a forgery for every leaf of body: every string, number, boolean and
// null at any depth, and for an empty object a key added to it.
func forgeLeaves(body any) []forgery {
	var out []forgery
	var walk func(v any, path string, key string, set func(any) any)
	walk = func(v any, path string, key string, set func(any) any) {
		switch v := v.(type) {
		case map[string]any:
			if len(v) == 0 {
				out = append(out, forgery{path: path + ".<added key>", canary: forgeCanary{shape: forgeShapeMap}, apply: set})
				return
			}
			keys := make([]string, 0, len(v))
			for k := range v {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				walk(v[k], path+"."+k, k, func(x any) any {
					c := maps(v)
					c[k] = x
					return set(c)
				})
			}
		case []any:
			for i, e := range v {
				walk(e, fmt.Sprintf("%s[%d]", path, i), key, func(x any) any {
					c := slices.Clone(v)
					c[i] = x
					return set(c)
				})
			}
		default:
			out = append(out, forgery{path: path, canary: forgeCanaryFor(key, v), apply: set})
		}
	}
	walk(body, "$", "", func(x any) any { return x })
	return out
}

// maps returns a shallow copy of m.
func maps(m map[string]any) map[string]any {
	c := make(map[string]any, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// forgeAbsentFields lists a forgery for every field the event's Go type reads (by its
// JSON name, at any depth through structs) that body lacks: a sender may add what the
// genuine sender never writes, like a top-level clientReference on the spec's checkout
// webhook. Fields of an object the body lacks are forged together, as the object.
func forgeAbsentFields(body any, typ reflect.Type) []forgery {
	var out []forgery
	var walk func(obj map[string]any, typ reflect.Type, path string, set func(any) any)
	walk = func(obj map[string]any, typ reflect.Type, path string, set func(any) any) {
		for _, f := range forgeJSONFields(typ) {
			ft := forgeDeref(f.Type)
			if v, ok := forgeLookup(obj, f.name); ok {
				if sub, isObj := v.(map[string]any); isObj && ft.Kind() == reflect.Struct && ft != reflect.TypeOf(time.Time{}) {
					walk(sub, ft, path+"."+f.name, func(x any) any {
						c := maps(obj)
						c[f.name] = x
						return set(c)
					})
				}
				continue
			}
			name := f.name
			out = append(out, forgery{path: path + "." + name + " (absent)", canary: forgeCanaryOfType(name, ft), apply: func(x any) any {
				c := maps(obj)
				c[name] = x
				return set(c)
			}})
		}
	}
	if obj, ok := body.(map[string]any); ok {
		walk(obj, typ, "$", func(x any) any { return x })
	}
	return out
}

// forgeJSONField is an exported struct field and its JSON name.
type forgeJSONField struct {
	name string
	reflect.StructField
}

func forgeJSONFields(typ reflect.Type) []forgeJSONField {
	var out []forgeJSONField
	if typ.Kind() != reflect.Struct {
		return nil
	}
	for i := range typ.NumField() {
		f := typ.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, forgeJSONField{name: name, StructField: f})
	}
	return out
}

func forgeDeref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// forgeShape is the kind of canary a field gets: a value of the shape the field holds,
// distinctive enough to be found wherever merchant code is given it.
type forgeShape int

const (
	forgeShapeText    forgeShape = iota // a reference, an id, a name, a description: letters and digits
	forgeShapeAmount                    // a JSON number: another amount
	forgeShapeDecimal                   // a decimal written as a string: another amount
	forgeShapePhone                     // an MSISDN or phone: other digits
	forgeShapeDate                      // a date or time: another day
	forgeShapeCode                      // a response code: another code of four digits
	forgeShapeWord                      // an enumerated word (status, method, channel): another word
	forgeShapeEnv                       // TEST or LIVE: the other one
	forgeShapeBool                      // true or false: the other one
	forgeShapeMap                       // an object: another entry in it (metadata, Meta)
)

// forgeCanary is the canary of one forgery.
type forgeCanary struct {
	shape forgeShape
	// original is the value forged (for the shapes that keep part of it).
	original any
}

// forgeCanaryFor picks the canary of a leaf from its key and value.
func forgeCanaryFor(key string, v any) forgeCanary {
	lower := strings.ToLower(key)
	c := forgeCanary{original: v}
	switch v := v.(type) {
	case json.Number:
		c.shape = forgeShapeAmount
	case bool:
		c.shape = forgeShapeBool
	case nil:
		c.shape = forgeShapeText
		if lower == "meta" || lower == "metadata" {
			c.shape = forgeShapeMap
		}
	case string:
		_, numErr := strconv.ParseFloat(v, 64)
		switch {
		case strings.EqualFold(v, "TEST") || strings.EqualFold(v, "LIVE"):
			c.shape = forgeShapeEnv
		case strings.Contains(lower, "responsecode") || lower == "code":
			c.shape = forgeShapeCode
		case forgeLooksLikeDate(v):
			c.shape = forgeShapeDate
		case strings.Contains(lower, "msisdn") || strings.Contains(lower, "phone") || strings.Contains(lower, "number"):
			c.shape = forgeShapePhone
		case numErr == nil && strings.Contains(v, "."):
			c.shape = forgeShapeDecimal
		case strings.Contains(lower, "status") || lower == "message" || lower == "method" || lower == "channel" ||
			lower == "network" || lower == "paymenttype" || lower == "verificationtype" || lower == "currency" || lower == "event":
			c.shape = forgeShapeWord
		default:
			c.shape = forgeShapeText
		}
	}
	return c
}

// forgeCanaryOfType picks the canary of an absent field from its Go type.
func forgeCanaryOfType(name string, t reflect.Type) forgeCanary {
	switch {
	case t == reflect.TypeOf(time.Time{}):
		return forgeCanary{shape: forgeShapeDate, original: "2025-01-01T00:00:00Z"}
	case t.Kind() == reflect.Map, t.Kind() == reflect.Struct, t.Kind() == reflect.Slice && t.Elem().Kind() != reflect.Uint8:
		return forgeCanary{shape: forgeShapeMap}
	case t.Kind() == reflect.Bool:
		return forgeCanary{shape: forgeShapeBool, original: false}
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Float64:
		return forgeCanary{shape: forgeShapeAmount, original: json.Number("1")}
	}
	if strings.Contains(strings.ToLower(name), "environment") {
		return forgeCanaryFor(name, "TEST")
	}
	return forgeCanaryFor(name, "x")
}

func forgeLooksLikeDate(s string) bool {
	return len(s) >= 10 && s[4] == '-' && s[7] == '-' && strings.Trim(s[:4], "0123456789") == ""
}

// The canary values. Each forgery's text carries its serial, so no two forgeries of a
// fixture share one and none is a value the sandbox writes.
const (
	forgeAmountMinor = 91337   // the minor units of 913.37, or a count of minor units
	forgeAmountMajor = 9133700 // an integer canary read as cedis
	forgeDateDay     = "2031-07-19"
)

func (c forgeCanary) text(i int) string  { return fmt.Sprintf("Zqx%04dFrg", i) }
func (c forgeCanary) phone(i int) string { return fmt.Sprintf("23355%03d7731", i%1000) }
func (c forgeCanary) word(i int) string  { return fmt.Sprintf("ZQXWORD%04d", i) }
func (c forgeCanary) code(i int) string  { return fmt.Sprintf("7%03d", 300+i%700) }

// value returns the forged JSON value of forgery i.
func (c forgeCanary) value(i int) any {
	switch c.shape {
	case forgeShapeAmount:
		if n, ok := c.original.(json.Number); ok && strings.ContainsAny(n.String(), ".eE") {
			return json.Number("913.37")
		}
		return json.Number(strconv.Itoa(forgeAmountMinor))
	case forgeShapeDecimal:
		return "913.37"
	case forgeShapePhone:
		return c.phone(i)
	case forgeShapeDate:
		s, _ := c.original.(string)
		if len(s) < 10 {
			s = "2025-01-01T00:00:00Z"
		}
		return forgeDateDay + s[10:]
	case forgeShapeCode:
		return c.code(i)
	case forgeShapeWord:
		return c.word(i)
	case forgeShapeEnv:
		if s, _ := c.original.(string); strings.EqualFold(s, "LIVE") {
			return "TEST"
		}
		return "LIVE"
	case forgeShapeBool:
		b, _ := c.original.(bool)
		return !b
	case forgeShapeMap:
		if m, ok := c.original.(map[string]any); ok {
			out := maps(m)
			out["zqxKey"+strconv.Itoa(i)] = c.text(i)
			return out
		}
		return map[string]any{"zqxKey" + strconv.Itoa(i): c.text(i)}
	}
	return c.text(i)
}

// describe says what the canary of forgery i is, for a failure message.
func (c forgeCanary) describe(i int) string {
	b, _ := json.Marshal(c.value(i))
	return "canary " + string(b)
}

// matcher returns what finds the canary of forgery i in merchant code's values.
func (c forgeCanary) matcher(i int) forgeMatcher {
	m := forgeMatcher{}
	switch c.shape {
	case forgeShapeAmount, forgeShapeDecimal:
		m.ints = []int64{forgeAmountMinor, forgeAmountMajor}
		m.floats = []float64{913.37, forgeAmountMinor, forgeAmountMajor}
		// Not the digits alone as a substring: a random hexadecimal id may hold them.
		m.substrings = []string{"913.37"}
		m.exact = []string{"91337", "9133700"}
	case forgeShapePhone:
		// The last digits survive any normalisation of the prefix.
		p := c.phone(i)
		m.substrings = []string{p[3:]}
	case forgeShapeDate:
		m.substrings = []string{forgeDateDay}
		m.years = []int{2031}
	case forgeShapeCode:
		m.exact = []string{c.code(i)}
	case forgeShapeWord:
		m.substrings = []string{c.word(i)}
	case forgeShapeEnv:
		m.exact = []string{c.value(i).(string)}
	case forgeShapeBool:
		// A flipped boolean has no value of its own to find: it is forged and
		// delivered, and counted, but only a refusal or a crash would show.
	case forgeShapeMap:
		m.substrings = []string{c.text(i), "zqxKey" + strconv.Itoa(i)}
	default:
		m.substrings = []string{c.text(i)}
	}
	return m
}

// forgeMatcher finds a canary in any value: strings (and byte slices such as raw JSON)
// containing one of substrings, or equal to one of exact, ignoring case; integers and
// floats equal to one of ints and floats; times in one of years; at any depth, through
// pointers, interfaces, structs (unexported fields too), maps (keys and values) and
// slices.
type forgeMatcher struct {
	substrings, exact []string
	ints              []int64
	floats            []float64
	years             []int
}

func (m forgeMatcher) matchString(s string) bool {
	lower := strings.ToLower(s)
	for _, sub := range m.substrings {
		if strings.Contains(lower, strings.ToLower(sub)) {
			return true
		}
	}
	for _, e := range m.exact {
		if strings.EqualFold(strings.TrimSpace(s), e) {
			return true
		}
	}
	return false
}

// forgeClaimField reports whether a field is named as the raw, unconfirmed claim a
// sender made, kept apart for audit: merchant code is told what it holds is no fact, so
// the search does not look inside it.
func forgeClaimField(name string) bool {
	lower := strings.ToLower(name)
	return strings.Contains(lower, "claim") || strings.Contains(lower, "unconfirmed") || strings.HasPrefix(lower, "raw")
}

// search returns the paths under v, named from path, that hold the canary. It does not
// look inside a field named as the raw claim (see forgeClaimField).
func (m forgeMatcher) search(v reflect.Value, path string) []string {
	var found []string
	var walk func(v reflect.Value, path string, depth int)
	walk = func(v reflect.Value, path string, depth int) {
		if !v.IsValid() || depth > 32 {
			return
		}
		if v.Type() == reflect.TypeOf(time.Time{}) {
			if v.CanInterface() {
				tm := v.Interface().(time.Time)
				if slices.Contains(m.years, tm.Year()) || m.matchString(tm.Format(time.RFC3339Nano)) {
					found = append(found, path)
				}
			}
			return
		}
		switch v.Kind() {
		case reflect.Pointer, reflect.Interface:
			if !v.IsNil() {
				walk(v.Elem(), path, depth+1)
			}
		case reflect.Struct:
			if forgeClaimField(v.Type().Name()) {
				return
			}
			for i := range v.NumField() {
				if name := v.Type().Field(i).Name; !forgeClaimField(name) {
					walk(v.Field(i), path+"."+name, depth+1)
				}
			}
		case reflect.Map:
			iter := v.MapRange()
			for iter.Next() {
				k := fmt.Sprint(iter.Key())
				if iter.Key().Kind() == reflect.String {
					k = iter.Key().String()
				}
				walk(iter.Key(), path+"[key "+k+"]", depth+1)
				walk(iter.Value(), path+"["+k+"]", depth+1)
			}
		case reflect.Slice, reflect.Array:
			if v.Type().Elem().Kind() == reflect.Uint8 {
				if m.matchString(string(forgeBytes(v))) {
					found = append(found, path)
				}
				return
			}
			for i := range v.Len() {
				walk(v.Index(i), fmt.Sprintf("%s[%d]", path, i), depth+1)
			}
		case reflect.String:
			if m.matchString(v.String()) {
				found = append(found, path)
			}
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			if slices.Contains(m.ints, v.Int()) {
				found = append(found, path)
			}
		case reflect.Uint, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			if v.Uint() <= math.MaxInt64 && slices.Contains(m.ints, int64(v.Uint())) {
				found = append(found, path)
			}
		case reflect.Float32, reflect.Float64:
			for _, f := range m.floats {
				if math.Abs(v.Float()-f) < 1e-9 {
					found = append(found, path)
					break
				}
			}
		}
	}
	walk(v, path, 0)
	return found
}

// forgeBytes returns the bytes of a byte slice or array, exported or not.
func forgeBytes(v reflect.Value) []byte {
	b := make([]byte, v.Len())
	for i := range b {
		b[i] = byte(v.Index(i).Uint())
	}
	return b
}
