package proptest_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"pgregory.net/rapid"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
)

// TestConfirmedFactsOnce drives checkout sessions against the sandbox (created, paid,
// declined, left) while webhooks about them arrive in every claim shape of both wires
// (the spec's webhook in full or minimal, the provider's keyed by the client reference,
// each claiming success, failure or a pending state), redelivered and reordered, to
// three handlers that confirm and pass events on: NewWebhookHandler with WithDedupe,
// with WithDedupeStore, and Tracker.Handler's event function for sessions no Tracker
// tracks. After every step it checks what merchant code received:
//   - each confirmed fact (kind, session, state) at most once per handler, whatever
//     shapes its claims took;
//   - never a kind that contradicts the state the sandbox holds: payment.succeeded only
//     for a session the sandbox holds SUCCEEDED, payment.failed only for one it holds
//     FAILED, each in the type of its state;
//   - never an event for a session the sandbox does not hold.
func TestConfirmedFactsOnce(t *testing.T) {
	nameSeed(t)
	var checks, deliveries, passed atomic.Int64
	rapid.Check(t, func(rt *rapid.T) {
		f := newFactsWorld(rt)
		checks.Add(1)
		rt.Repeat(map[string]func(*rapid.T){
			"create":   f.create,
			"complete": f.complete,
			"deliver":  f.deliver,
			"advance":  f.advance,
			"":         f.check,
		})
		f.check(rt)
		deliveries.Add(f.deliveries)
		passed.Add(f.passed)
	})
	t.Logf("explored %d checks; %d webhook deliveries, %d passed on to merchant code", checks.Load(), deliveries.Load(), passed.Load())
}

// factsWorld is one run: the sandbox, its sessions and the handlers under test.
type factsWorld struct {
	srv      *billingtest.Server
	client   *billing.Client
	sessions []factsSession
	handlers []*factsHandler

	deliveries, passed int64
}

// factsSession is a checkout session the sandbox holds.
type factsSession struct {
	reference, clientReference string
	amount                     int64
}

// factsHandler is a handler under test and what its merchant code received.
type factsHandler struct {
	name    string
	handler http.Handler
	mu      sync.Mutex
	events  []billing.Event
}

func (h *factsHandler) record(_ context.Context, ev billing.Event) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events = append(h.events, ev)
	return nil
}

func newFactsWorld(rt *rapid.T) *factsWorld {
	wire := rapid.SampledFrom(billingtest.Wires()).Draw(rt, "wire")
	srv, err := billingtest.Start(billingtest.WithManualClock(), billingtest.WithWire(wire))
	if err != nil {
		rt.Fatalf("starting the sandbox: %v", err)
	}
	rt.Cleanup(srv.Close)
	transport := http.DefaultTransport.(*http.Transport).Clone()
	rt.Cleanup(transport.CloseIdleConnections)
	client := srv.Client(billing.WithRetry(2, time.Millisecond, 5*time.Millisecond),
		billing.WithHTTPClient(&http.Client{Transport: transport, Timeout: billing.DefaultTimeout}))
	f := &factsWorld{srv: srv, client: client}
	dedupe := &factsHandler{name: "WithDedupe"}
	dedupe.handler = billing.NewWebhookHandler(dedupe.record, billing.WithStatusCheckConfirmation(client), billing.WithDedupe(0))
	stored := &factsHandler{name: "WithDedupeStore"}
	stored.handler = billing.NewWebhookHandler(stored.record, billing.WithStatusCheckConfirmation(client),
		billing.WithDedupeStore(billing.NewMemoryStore(0)))
	tracked := &factsHandler{name: "Tracker.Handler"}
	tr := billing.NewTracker(client, billing.TrackerOptions{Clock: srv.Clock(), Store: billing.NewMemoryStore(0)})
	tracked.handler = tr.Handler(billing.WithEventHandler(tracked.record))
	f.handlers = []*factsHandler{dedupe, stored, tracked}
	return f
}

// create opens a checkout session.
func (f *factsWorld) create(rt *rapid.T) {
	amount := rapid.SampledFrom([]int64{500, 5000, 12050}).Draw(rt, "amount")
	ref := fmt.Sprintf("order%d", len(f.sessions)+1)
	pay, err := f.client.Payments.CreateCheckout(context.Background(), &billing.CheckoutParams{
		Amount: amount, Description: "Order " + ref, ClientReference: ref,
	})
	if err != nil {
		rt.Fatalf("creating checkout %s: %v", ref, err)
	}
	f.sessions = append(f.sessions, factsSession{reference: pay.Reference, clientReference: ref, amount: amount})
}

// complete has the payer pay for, or fail, a pending session.
func (f *factsWorld) complete(rt *rapid.T) {
	if len(f.sessions) == 0 {
		rt.Skip("no session")
	}
	s := rapid.SampledFrom(f.sessions).Draw(rt, "session")
	method := rapid.SampledFrom([]string{"CARD", "MOBILE_MONEY", "BANK_TRANSFER"}).Draw(rt, "method")
	outcome := rapid.SampledFrom([]string{"succeeded", "failed"}).Draw(rt, "outcome")
	_ = f.srv.CompleteCheckout(s.reference, method, outcome) // a session no longer pending stays as it is
}

// advance moves the sandbox clock.
func (f *factsWorld) advance(rt *rapid.T) {
	f.srv.Advance(time.Duration(rapid.IntRange(1, 120).Draw(rt, "minutes")) * time.Minute)
}

// claimShapes build a webhook about s in each shape of both wires, claiming state.
var claimShapes = map[string]func(s factsSession, state string) string{
	"spec, full": func(s factsSession, state string) string {
		return fmt.Sprintf(`{"id":"evt_%s","event":"payment.succeeded","createdAt":"2025-01-01T10:00:00Z","environment":"TEST",`+
			`"data":{"reference":%q,"status":%q,"amount":%d,"currency":"GHS"}}`, s.clientReference, s.reference, specState[state], s.amount)
	},
	"spec, minimal": func(s factsSession, state string) string {
		return fmt.Sprintf(`{"event":"payment.succeeded","data":{"reference":%q,"status":%q}}`, s.reference, specState[state])
	},
	"provider": func(s factsSession, state string) string {
		return fmt.Sprintf(`{"ResponseCode":%q,"Status":%q,"Data":{"CheckoutId":%q,"ClientReference":%q,"Status":%q,"Amount":%d.%02d}}`,
			providerCode[state], providerState[state], s.reference, s.clientReference, providerState[state], s.amount/100, s.amount%100)
	},
	"provider, by session only": func(s factsSession, state string) string {
		return fmt.Sprintf(`{"ResponseCode":%q,"Data":{"CheckoutId":%q,"Status":%q}}`, providerCode[state], s.reference, providerState[state])
	},
}

var (
	specState     = map[string]string{"succeeded": "SUCCEEDED", "failed": "FAILED", "pending": "PENDING"}
	providerState = map[string]string{"succeeded": "Success", "failed": "Failed", "pending": "Pending"}
	providerCode  = map[string]string{"succeeded": "0000", "failed": "2001", "pending": "0001"}
)

// deliver posts one webhook about a session, in a drawn shape claiming a drawn state,
// to every handler.
func (f *factsWorld) deliver(rt *rapid.T) {
	if len(f.sessions) == 0 {
		rt.Skip("no session")
	}
	s := rapid.SampledFrom(f.sessions).Draw(rt, "session")
	shape := rapid.SampledFrom(sortedKeys(claimShapes)).Draw(rt, "shape")
	state := rapid.SampledFrom([]string{"succeeded", "failed", "pending"}).Draw(rt, "claimed")
	body := claimShapes[shape](s, state)
	for _, h := range f.handlers {
		rec := httptest.NewRecorder()
		h.mu.Lock()
		before := len(h.events)
		h.mu.Unlock()
		h.handler.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/webhooks", strings.NewReader(body)))
		f.deliveries++
		h.mu.Lock()
		if len(h.events) > before {
			f.passed++
		}
		h.mu.Unlock()
	}
}

// check holds each handler's record against the sandbox.
func (f *factsWorld) check(rt *rapid.T) {
	truth := map[string]billing.PaymentStatus{}
	for _, s := range f.sessions {
		p, err := f.client.Payments.Get(context.Background(), s.reference)
		if err != nil {
			rt.Fatalf("reading session %s: %v", s.reference, err)
		}
		truth[s.reference] = p.Status
	}
	for _, h := range f.handlers {
		h.mu.Lock()
		seen := map[string]int{}
		for _, ev := range h.events {
			key := string(ev.Kind()) + "/" + string(ev.State()) + "/" + ev.Reference()
			seen[key]++
			if seen[key] > 1 {
				rt.Fatalf("%s: merchant code received %s %d times", h.name, key, seen[key])
			}
			status, known := truth[ev.Reference()]
			if !known {
				rt.Fatalf("%s: merchant code received %T for %q, a session the sandbox does not hold", h.name, ev, ev.Reference())
			}
			switch e := ev.(type) {
			case *billing.CheckoutEvent:
				if ev.Kind() != billing.EventKindPaymentSucceeded || status != billing.PaymentStatusSucceeded || e.Data.Status != billing.PaymentStatusSucceeded {
					rt.Fatalf("%s: %s (payment %s) for a session the sandbox holds %s", h.name, ev.Kind(), e.Data.Status, status)
				}
			case *billing.CheckoutFailedEvent:
				if ev.Kind() != billing.EventKindPaymentFailed || status != billing.PaymentStatusFailed {
					rt.Fatalf("%s: %s for a session the sandbox holds %s", h.name, ev.Kind(), status)
				}
			case *billing.CheckoutPendingEvent:
				if ev.Kind() != billing.EventKindPaymentPending {
					rt.Fatalf("%s: a pending checkout of kind %s", h.name, ev.Kind())
				}
			default:
				rt.Fatalf("%s: merchant code received %T (%s) for a checkout", h.name, ev, ev.Kind())
			}
		}
		h.mu.Unlock()
	}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}
