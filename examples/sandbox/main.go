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
//
// It prints its base URL, the hosted-checkout address and the credentials,
// then serves until interrupted. Every answer carries an X-Request-Id header;
// -v logs it with each request. State lives in memory and is gone when it stops.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/billingsdk/billing-go/internal/sandbox"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Stdout)
	if err != nil && !errors.Is(err, flag.ErrHelp) { // -h printed the usage; that is not a failure
		fmt.Fprintln(os.Stderr, "sandbox:", err)
		os.Exit(1)
	}
}

// run serves the sandbox as args configure it until ctx ends, writing its
// address and credentials to stdout.
func run(ctx context.Context, args []string, stdout io.Writer) error {
	flags := flag.NewFlagSet("sandbox", flag.ContinueOnError)
	flags.SetOutput(stdout)
	addr := flags.String("addr", "127.0.0.1:4010", "address to listen on")
	scopes := flags.String("scopes", "", "comma-separated scopes to grant, or none (default: every scope)")
	allowIPs := flags.String("allow-ip", "", "comma-separated addresses or CIDR prefixes admitted to the IP-restricted endpoints (default: loopback)")
	resolveAfter := flags.Duration("resolve-after", 2*time.Second, "delay before a money movement reaches its final state")
	webhookURL := flags.String("webhook-url", "", "URL that receives checkout webhooks (payment.succeeded)")
	checkoutLifetime := flags.Duration("checkout-lifetime", sandbox.DefaultCheckoutLifetime,
		"how long a checkout session stays payable; one still unpaid then ends FAILED with failureCode expired")
	balance := flags.String("disbursement-balance", "1000000.00", "starting balance of the disbursement account in GHS, at most two decimals")
	faults := flags.String("faults", "", "request faults to arm, ROUTE[#N]=KIND[:DURATION] separated by ;\n"+
		"e.g. 'POST /v1/payments/receive#2=response-lost;GET /v1/customers=latency:3s'; kinds: "+strings.Join(sandbox.FaultKindNames(), ", "))
	callbackFaults := flags.String("callback-faults", "", "callback faults to arm, REFERENCE[#N]=KIND[:DURATION] separated by ;\n"+
		"(* for any reference), e.g. 'order7=drop;*#3=delay:10m'; kinds: "+strings.Join(sandbox.CallbackFaultKindNames(), ", "))
	wireName := flags.String("wire", string(sandbox.WireSpec), "wire of the money movements' answers, callbacks and webhooks: "+
		strings.Join(sandbox.WireNames(), " or ")+" (the payments provider's payloads: decimal cedis, its casing)")
	verbose := flags.Bool("v", false, "log every request to stdout")
	if err := flags.Parse(args); err != nil {
		return err
	}

	minorUnits, err := parseAmount(*balance)
	if err != nil {
		return fmt.Errorf("-disbursement-balance: %w", err)
	}
	wire, err := sandbox.ParseWire(*wireName)
	if err != nil {
		return fmt.Errorf("-wire: %w", err)
	}
	if *checkoutLifetime <= 0 {
		return fmt.Errorf("-checkout-lifetime: must be positive, not %s", *checkoutLifetime)
	}
	cfg := sandbox.Config{ResolveAfter: *resolveAfter, WebhookURL: *webhookURL, CheckoutLifetime: *checkoutLifetime,
		DisbursementBalance: minorUnits, Wire: wire}
	switch *scopes {
	case "":
	case "none":
		cfg.Scopes = []string{}
	default:
		cfg.Scopes = splitList(*scopes)
	}
	if *allowIPs != "" {
		prefixes, err := parsePrefixes(splitList(*allowIPs))
		if err != nil {
			return err
		}
		cfg.AllowIPs = prefixes
	}
	if *verbose {
		cfg.Logger = slog.New(slog.NewTextHandler(stdout, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}

	requestFaults, err := sandbox.ParseFaults(*faults)
	if err != nil {
		return fmt.Errorf("-faults: %w", err)
	}
	callbackFaultList, err := sandbox.ParseCallbackFaults(*callbackFaults)
	if err != nil {
		return fmt.Errorf("-callback-faults: %w", err)
	}

	sb := sandbox.New(cfg)
	defer sb.Close()
	for _, f := range requestFaults {
		if err := sb.InjectFault(f); err != nil {
			return fmt.Errorf("-faults: %w", err)
		}
	}
	for _, f := range callbackFaultList {
		if err := sb.InjectCallbackFault(f); err != nil {
			return fmt.Errorf("-callback-faults: %w", err)
		}
	}

	listener, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	server := &http.Server{Handler: sb, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- server.Serve(listener) }()

	printBanner(stdout, "http://"+listener.Addr().String(), sb.Config(), len(requestFaults), len(callbackFaultList))

	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := server.Shutdown(shutdownCtx); err != nil {
		return err
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// printBanner tells the user where the sandbox is and how to authenticate.
func printBanner(w io.Writer, baseURL string, cfg sandbox.Config, faults, callbackFaults int) {
	fmt.Fprintf(w, `Billing sandbox listening
  base URL:             %s
  hosted checkout:      %s/checkout/
  web SDK:              %s/sdk/checkout.js
  client id:            %s
  client secret:        %s
  secret key:           %s
  session token:        %s
  public key (web SDK): %s
  disbursement account: %s
  disbursement balance: %s GHS
  sales account (POS):  %s
  checkout lifetime:    %s
  scopes:               %s
  allowed IPs:          %s
  resolve after:        %s
  wire:                 %s
  faults armed:         %d on requests, %d on callbacks
  sandbox controls:     POST /sandbox/clock/advance, POST /sandbox/payments/{reference}/complete, GET /sandbox/sms?msisdn=, POST /sandbox/faults, POST /sandbox/callbacks/faults
Press Ctrl+C to stop.
`, baseURL, baseURL, baseURL, cfg.ClientID, cfg.ClientSecret, cfg.SecretKey,
		strings.Join(cfg.SessionTokens, ", "), cfg.PublicKey, cfg.DisbursementAccount,
		formatAmount(cfg.DisbursementBalance), cfg.SalesAccount, cfg.CheckoutLifetime, strings.Join(cfg.Scopes, ", "), joinPrefixes(cfg.AllowIPs), cfg.ResolveAfter,
		cfg.Wire, faults, callbackFaults)
}

// splitList splits a comma-separated flag value, dropping blanks.
func splitList(s string) []string {
	var out []string
	for part := range strings.SplitSeq(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

// parsePrefixes reads CIDR prefixes; a bare address stands for itself alone.
func parsePrefixes(items []string) ([]netip.Prefix, error) {
	prefixes := make([]netip.Prefix, 0, len(items))
	for _, item := range items {
		if prefix, err := netip.ParsePrefix(item); err == nil {
			prefixes = append(prefixes, prefix.Masked())
			continue
		}
		addr, err := netip.ParseAddr(item)
		if err != nil {
			return nil, fmt.Errorf("-allow-ip: %q is neither an address nor a CIDR prefix", item)
		}
		addr = addr.Unmap() // the sandbox compares callers unmapped
		prefixes = append(prefixes, netip.PrefixFrom(addr, addr.BitLen()))
	}
	return prefixes, nil
}

func joinPrefixes(prefixes []netip.Prefix) string {
	parts := make([]string, len(prefixes))
	for i, p := range prefixes {
		parts[i] = p.String()
	}
	return strings.Join(parts, ", ")
}

// parseAmount reads a positive amount in major units with at most two
// decimals ("1000000", "250.5", "0.01") as minor units, without floats.
func parseAmount(s string) (int64, error) {
	whole, fraction, hasFraction := strings.Cut(s, ".")
	invalid := fmt.Errorf("%q is not a positive amount with at most two decimals, such as 250000.00", s)
	if whole == "" || len(whole) > 12 || strings.Trim(whole, "0123456789") != "" ||
		hasFraction && (fraction == "" || len(fraction) > 2 || strings.Trim(fraction, "0123456789") != "") {
		return 0, invalid
	}
	major, _ := strconv.ParseInt(whole, 10, 64) // at most 12 digits: it fits
	minor, _ := strconv.ParseInt((fraction + "00")[:2], 10, 64)
	if major == 0 && minor == 0 {
		return 0, invalid
	}
	return major*100 + minor, nil
}

// formatAmount writes minor units in major units with two decimals.
func formatAmount(minorUnits int64) string {
	return fmt.Sprintf("%d.%02d", minorUnits/100, minorUnits%100)
}
