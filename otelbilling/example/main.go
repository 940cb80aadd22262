// Command example traces a billing Client and measures a Tracker with OpenTelemetry,
// printing the spans and metrics to stdout. It runs against an in-process sandbox: take
// a mobile-money payment, wait for its outcome, and print what OpenTelemetry saw.
//
//	go run ./example
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"

	"go.opentelemetry.io/otel/exporters/stdout/stdoutmetric"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
	"github.com/billingsdk/billing-go/otelbilling"
)

func main() {
	if err := run(os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// run takes one payment with tracing and metrics on, writing the spans and metrics to w.
func run(w io.Writer) (err error) {
	ctx := context.Background()

	// OpenTelemetry: spans and metrics printed as JSON. A real service would export them
	// to a collector (otlptracegrpc, otlpmetricgrpc) instead.
	spans, err := stdouttrace.New(stdouttrace.WithWriter(w), stdouttrace.WithPrettyPrint())
	if err != nil {
		return err
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	defer func() { err = errors.Join(err, tp.Shutdown(ctx)) }()
	metrics, err := stdoutmetric.New(stdoutmetric.WithWriter(w), stdoutmetric.WithPrettyPrint())
	if err != nil {
		return err
	}
	// The reader exports on shutdown, at the end of run.
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(metrics)))
	defer func() { err = errors.Join(err, mp.Shutdown(ctx)) }()

	// The sandbox stands in for the service; with real credentials, build the client
	// from BILLING_BASE_URL, BILLING_CLIENT_ID and BILLING_CLIENT_SECRET instead.
	srv, err := billingtest.Start()
	if err != nil {
		return err
	}
	defer srv.Close()

	// The two lines that instrument the SDK: an Observer on the Client, TrackerMetrics
	// on the Tracker.
	c, err := billing.NewClient(
		billing.WithBaseURL(srv.URL),
		billing.WithClientCredentials(srv.ClientID, srv.ClientSecret),
		billing.WithObserver(otelbilling.NewObserver(otelbilling.WithTracerProvider(tp))),
	)
	if err != nil {
		return err
	}
	trackerMetrics, err := otelbilling.NewTrackerMetrics(otelbilling.WithMeterProvider(mp))
	if err != nil {
		return err
	}
	tracker := billing.NewTracker(c, billing.TrackerOptions{Observer: trackerMetrics})
	if err := trackerMetrics.Watch(tracker); err != nil {
		return err
	}

	// The callback endpoint the service posts the payment's outcome to.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	callbacks := &http.Server{Handler: tracker.Handler(billing.WithStatusCheckConfirmation(c))}
	go func() { _ = callbacks.Serve(ln) }()
	defer callbacks.Close()

	// One payment, under a span of the merchant's own.
	ctx, order := tp.Tracer("shop").Start(ctx, "order 1042")
	defer order.End()
	if _, err := c.Payments.Receive(ctx, &billing.ReceiveParams{
		Amount: 5000, Phone: "233241234567", Provider: billing.ProviderMTN, Description: "Order 1042",
		ClientReference: "order1042", CallbackURL: "http://" + ln.Addr().String() + "/callbacks",
	}); err != nil {
		return err
	}
	if err := tracker.Track(billing.KindReceive, "order1042"); err != nil {
		return err
	}
	outcome, err := tracker.Await(ctx, billing.KindReceive, "order1042")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "order1042: %s by %s, %s GHS\n", outcome.State, outcome.Source, major(outcome.Amount))
	return nil
}

// major writes minor units as major ones: 5000 is 50.00.
func major(minor int64) string {
	return fmt.Sprintf("%d.%02d", minor/100, minor%100)
}
