package billing_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
)

// sinkObserver prints every field the SDK tells an Observer, under every verb.
type sinkObserver struct {
	mu  sync.Mutex
	out strings.Builder
}

func (o *sinkObserver) print(v any) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, verb := range []string{"%v", "%+v", "%s", "%q", "%#v"} {
		fmt.Fprintf(&o.out, verb+"\n", v)
	}
}

func (o *sinkObserver) CallStart(ctx context.Context, c *billing.CallInfo) context.Context {
	o.print(*c)
	return ctx
}
func (o *sinkObserver) CallEnd(_ context.Context, c *billing.CallInfo) {
	o.print(*c)
	o.printErr(c.Err)
}

// printErr prints err, and every field of the SDK's error types an Observer reaches in
// it with errors.As: an observer of one's own reads them too.
func (o *sinkObserver) printErr(err error) {
	o.print(err)
	var apiErr *billing.APIError
	if errors.As(err, &apiErr) {
		o.print(fmt.Sprintf("%s %s %s %s %s %v", apiErr.Message, apiErr.Body, apiErr.Path, apiErr.Field, apiErr.Operation, apiErr.Header))
	}
	var unknown *billing.OutcomeUnknownError
	if errors.As(err, &unknown) {
		o.print(fmt.Sprintf("%s %s %s", unknown.Path, unknown.ClientReference, unknown.Err))
		if errors.As(unknown.Err, &apiErr) {
			o.print(fmt.Sprintf("%s %s %v", apiErr.Message, apiErr.Body, apiErr.Header))
		}
	}
}
func (o *sinkObserver) AttemptStart(ctx context.Context, a *billing.AttemptInfo) context.Context {
	return ctx
}
func (o *sinkObserver) AttemptEnd(_ context.Context, a *billing.AttemptInfo) {
	o.print(*a)
	o.printErr(a.Err)
}

func (o *sinkObserver) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.out.String()
}

// sinkCall is a call whose request carries a planted number or address in its path,
// query or body.
type sinkCall struct {
	name string
	run  func(ctx context.Context, c *billing.Client) error
}

// Planted in the sink calls: none may reach a sink in full.
const (
	sinkMSISDN = "233245550161"
	sinkPhone  = "233205550162"
	sinkEmail  = "kwame.sinkcanary@example.com"
	sinkBank   = "1441000123499"
)

var sinkCalls = []sinkCall{
	{"mandate cancel (MSISDN in the path)", func(ctx context.Context, c *billing.Client) error {
		_, err := c.Mandates.Cancel(ctx, sinkMSISDN)
		return err
	}},
	{"customer list (email in the query)", func(ctx context.Context, c *billing.Client) error {
		_, err := c.Customers.ListPage(ctx, &billing.CustomerListParams{Email: sinkEmail})
		return err
	}},
	{"bank transfer status (account in the path)", func(ctx context.Context, c *billing.Client) error {
		_, err := c.Payouts.BankTransferStatus(ctx, &billing.BankTransferStatusParams{ClientReference: "sink1"})
		return err
	}},
	{"send (phone in the body)", func(ctx context.Context, c *billing.Client) error {
		_, err := c.Payouts.Send(ctx, &billing.SendParams{Amount: 500, Phone: sinkPhone, Provider: billing.ProviderTelecel,
			Description: "Refund", ClientReference: "sink2"})
		return err
	}},
	{"send to bank (account numbers in the path and body)", func(ctx context.Context, c *billing.Client) error {
		_, err := c.Payouts.SendToBank(ctx, &billing.BankTransferParams{BankCode: bankCodeGCB, Amount: 500, PrimaryCallbackURL: "https://shop.example.com/cb",
			Description: "Invoice", BankAccountNumber: sinkBank, ClientReference: "sink3"})
		return err
	}},
}

// Every sink, under every fault of the fault matrix (requestFaults) on the route of every
// call that carries a planted number, email or credential: the call's error printed under
// every verb, the log at debug level in text and JSON, and everything a recording
// Observer is told. None carries a planted value in full. The faults are the matrix's
// own rows, so a fault added there is scanned here too.
func TestNoPlantedSecretReachesAnySinkUnderAnyFault(t *testing.T) {
	for _, rf := range requestFaults {
		t.Run(rf.name, func(t *testing.T) {
			t.Parallel()
			srv := billingtest.NewServer(t, billingtest.WithManualClock())
			var logs lockedBuffer
			logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			jsonLogger := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			obs := &sinkObserver{}
			routes := &routeOf{}
			opts := []billing.Option{billing.WithRetry(2, time.Millisecond, 2*time.Millisecond), billing.WithObserver(multiObserver{obs, routes}),
				billing.WithSecretKey(srv.SecretKey)}
			if rf.timeout > 0 {
				opts = append(opts, billing.WithTimeout(rf.timeout))
			}
			var errs strings.Builder
			for i, call := range sinkCalls {
				l := logger
				if i%2 == 1 {
					l = jsonLogger
				}
				c := srv.Client(append(opts, billing.WithLogger(l))...)
				// A first call finds the call's route, then the fault is armed on it.
				routes.reset()
				_ = call.run(context.Background(), c)
				route := routes.first()
				require.NotEmpty(t, route, call.name)
				if rf.fault.Kind != "" {
					f := rf.fault
					location, _ := redirectTarget(t, rf.target)
					f.Route, f.Location = route, location
					f.RetryAfter = 0 // what reaches a sink does not depend on the wait; the test does not sleep it
					srv.InjectFault(f)
				}
				err := call.run(context.Background(), c)
				for _, verb := range []string{"%v", "%+v", "%s", "%q", "%#v"} {
					fmt.Fprintf(&errs, verb+"\n", err)
				}
			}
			written := map[string]string{"error strings": errs.String(), "logs": logs.String(), "observer": obs.String()}
			basic := base64.StdEncoding.EncodeToString([]byte(srv.ClientID + ":" + srv.ClientSecret))
			planted := map[string]string{
				"MSISDN": sinkMSISDN, "MSISDN without its country code": sinkMSISDN[3:], "phone": sinkPhone, "phone without its country code": sinkPhone[3:],
				"email": strings.Split(sinkEmail, "@")[0], "bank account": sinkBank, "disbursement account": srv.DisbursementAccount,
				"client secret": srv.ClientSecret, "Basic credentials": basic, "secret key": srv.SecretKey,
			}
			for sink, text := range written {
				for name, secret := range planted {
					assert.NotContains(t, text, secret, "%s leaked to the %s", name, sink)
				}
			}
		})
	}
}

// routeOf remembers the routes of the calls it is told of.
type routeOf struct {
	mu     sync.Mutex
	routes []string
}

func (r *routeOf) reset() { r.mu.Lock(); r.routes = nil; r.mu.Unlock() }
func (r *routeOf) first() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.routes) == 0 {
		return ""
	}
	return r.routes[0]
}
func (r *routeOf) CallStart(ctx context.Context, c *billing.CallInfo) context.Context {
	r.mu.Lock()
	r.routes = append(r.routes, c.Method+" "+c.Route)
	r.mu.Unlock()
	return ctx
}
func (r *routeOf) CallEnd(context.Context, *billing.CallInfo) {}
func (r *routeOf) AttemptStart(ctx context.Context, _ *billing.AttemptInfo) context.Context {
	return ctx
}
func (r *routeOf) AttemptEnd(context.Context, *billing.AttemptInfo) {}

// multiObserver tells each of its observers, in order.
type multiObserver []billing.Observer

func (m multiObserver) CallStart(ctx context.Context, c *billing.CallInfo) context.Context {
	for _, o := range m {
		ctx = o.CallStart(ctx, c)
	}
	return ctx
}
func (m multiObserver) CallEnd(ctx context.Context, c *billing.CallInfo) {
	for _, o := range m {
		o.CallEnd(ctx, c)
	}
}
func (m multiObserver) AttemptStart(ctx context.Context, a *billing.AttemptInfo) context.Context {
	for _, o := range m {
		ctx = o.AttemptStart(ctx, a)
	}
	return ctx
}
func (m multiObserver) AttemptEnd(ctx context.Context, a *billing.AttemptInfo) {
	for _, o := range m {
		o.AttemptEnd(ctx, a)
	}
}
