package otelbilling

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
)

// spanText is everything a span holds as text: name, attributes, status, events.
func spanText(s sdktrace.ReadOnlySpan) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s|%s|%s", s.Name(), s.Status().Code, s.Status().Description)
	for _, kv := range s.Attributes() {
		fmt.Fprintf(&b, "|%s=%s", kv.Key, kv.Value.Emit())
	}
	for _, e := range s.Events() {
		fmt.Fprintf(&b, "|%s", e.Name)
		for _, kv := range e.Attributes {
			fmt.Fprintf(&b, "|%s=%s", kv.Key, kv.Value.Emit())
		}
	}
	return b.String()
}

// Every span of calls carrying a planted MSISDN, email and account number, in a path, a
// query and the configured disbursement account, under each request fault the sandbox
// can inject (every billingtest.FaultKind that fails a read): no planted value, and no
// credential, reaches a span in full, and no span carries a URL.
func TestSpansCarryNoPlantedNumberUnderAnyFault(t *testing.T) {
	const (
		msisdn = "233245550171"
		email  = "efua.spancanary@example.com"
	)
	faults := []billingtest.Fault{
		{}, {Kind: billingtest.FaultHTTP500}, {Kind: billingtest.FaultHTTP502}, {Kind: billingtest.FaultHTTP503}, {Kind: billingtest.FaultHTTP429},
		{Kind: billingtest.FaultResetBeforeWork}, {Kind: billingtest.FaultResponseLost}, {Kind: billingtest.FaultTruncatedBody},
		{Kind: billingtest.FaultMalformedJSON}, {Kind: billingtest.FaultCode0005}, {Kind: billingtest.FaultRedirect, Status: 307},
		{Kind: billingtest.FaultLatency, Latency: time.Second}, {Kind: billingtest.FaultRedirectAfterWork, Status: 302},
		{Kind: billingtest.FaultUnclassifiedAfterWork, Status: 204}, {Kind: billingtest.FaultHTTP429AfterWork},
	}
	calls := []struct {
		route string
		run   func(c *billing.Client) error
	}{
		{"GET /v1/mandates/preapproval/{customerMsisdn}/cancel", func(c *billing.Client) error {
			_, err := c.Mandates.Cancel(context.Background(), msisdn)
			return err
		}},
		{"GET /v1/customers", func(c *billing.Client) error {
			_, err := c.Customers.ListPage(context.Background(), &billing.CustomerListParams{Email: email})
			return err
		}},
		{"GET /v1/merchants/{account}/transactions/status", func(c *billing.Client) error {
			_, err := c.Payouts.BankTransferStatus(context.Background(), &billing.BankTransferStatusParams{ClientReference: "span1"})
			return err
		}},
	}
	for _, f := range faults {
		t.Run(string(f.Kind), func(t *testing.T) {
			t.Parallel()
			tp, sr := recorder(t)
			srv := billingtest.NewServer(t, billingtest.WithManualClock())
			opts := []billing.Option{billing.WithObserver(NewObserver(WithTracerProvider(tp))),
				billing.WithRetry(2, time.Millisecond, 2*time.Millisecond)}
			if f.Kind == billingtest.FaultLatency {
				opts = append(opts, billing.WithTimeout(100*time.Millisecond))
			}
			c := srv.Client(opts...)
			for _, call := range calls {
				if f.Kind != "" {
					f.Route = call.route
					srv.InjectFault(f)
				}
				_ = call.run(c)
			}
			spans := sr.Ended()
			if len(spans) < 2*len(calls) {
				t.Fatalf("%d spans, want a call and an attempt span for each of %d calls", len(spans), len(calls))
			}
			for _, s := range spans {
				text := spanText(s)
				for _, planted := range []string{msisdn, msisdn[3:], "efua.spancanary", srv.DisbursementAccount, srv.ClientSecret, srv.SecretKey, "http://", "url.full", "url.path", "url.query"} {
					if strings.Contains(text, planted) {
						t.Errorf("span carries %q: %s", planted, text)
					}
				}
			}
		})
	}
}
