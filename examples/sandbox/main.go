// Command sandbox runs the in-memory sandbox of the billing and payments
// service as a standalone server, for trying the SDK, the examples or another
// language's client against it:
//
//	go run ./examples/sandbox
//	go run ./examples/sandbox -addr 127.0.0.1:4010 -resolve-after 5s -webhook-url http://127.0.0.1:8080/hooks
//	go run ./examples/sandbox -disbursement-balance 500.00 # to see payouts fail with 4075
//	go run ./examples/sandbox -faults 'POST /v1/payments/receive#2=response-lost;GET /v1/payments/{reference}=http-503:5s'
//	go run ./examples/sandbox -callback-faults 'order7=drop;*#3=delay:10m'
//	go run ./examples/sandbox -wire provider # answer as the payments provider does
//	go run ./examples/sandbox -manual-clock  # time moves only when advanced
//
// It prints its base URL, the hosted-checkout address and the credentials,
// then serves until interrupted. Every answer carries an X-Request-Id header;
// -v logs it with each request. State lives in memory and is gone when it stops.
//
// The billing command (cmd/billing) serves the same sandbox as billing sandbox,
// and adds its controls, a callback forwarder and flows to trigger.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/billingsdk/billing-go/internal/sandbox/standalone"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Stdout)
	var usage *standalone.UsageError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp): // -h printed the usage; that is not a failure
	case errors.As(err, &usage):
		fmt.Fprintln(os.Stderr, "sandbox:", err)
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "sandbox:", err)
		os.Exit(1)
	}
}

// run serves the sandbox as args configure it until ctx ends, writing its
// address and credentials to stdout. Without -addr it serves at
// BILLING_BASE_URL's address when that is a loopback http URL with a port.
func run(ctx context.Context, args []string, stdout io.Writer) error {
	return standalone.RunEnv(ctx, "sandbox", args, stdout, os.Getenv)
}
