// Package standalone runs the sandbox as a standalone server: the code behind
// billing sandbox and go run ./examples/sandbox, flags, banner and all.
package standalone

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/billingsdk/billing-go/internal/sandbox"
)

// ManualClockStart is where -manual-clock stops the sandbox's clock, as
// billingtest.WithManualClock does.
var ManualClockStart = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// Run serves the sandbox as args configure it until ctx ends, writing its
// address and credentials to stdout. name is the command's name in the usage
// text. -h answers flag.ErrHelp after printing the usage; any other flag
// error is a *UsageError.
func Run(ctx context.Context, name string, args []string, stdout io.Writer) error {
	return RunEnv(ctx, name, args, stdout, func(string) string { return "" })
}

// DefaultAddr is where the sandbox serves without -addr.
const DefaultAddr = "127.0.0.1:4010"

// defaultAddr is where the sandbox serves without -addr: the address of
// BILLING_BASE_URL when that names a loopback host and a port (so the
// sandbox serves where the examples and the billing command look for it),
// else DefaultAddr.
func defaultAddr(getenv func(string) string) string {
	u, err := url.Parse(getenv("BILLING_BASE_URL"))
	if err != nil || u.Scheme != "http" || u.Port() == "" || u.User != nil || (u.Path != "" && u.Path != "/") {
		return DefaultAddr
	}
	host := u.Hostname()
	if ip, err := netip.ParseAddr(host); (err != nil || !ip.IsLoopback()) && host != "localhost" {
		return DefaultAddr
	}
	return u.Host
}

// RunEnv is Run with the environment getenv reads: without -addr, the
// sandbox serves at BILLING_BASE_URL's address when that is a loopback
// http URL with a port.
func RunEnv(ctx context.Context, name string, args []string, stdout io.Writer, getenv func(string) string) error {
	return RunIO(ctx, name, args, IO{Stdout: stdout, Getenv: getenv})
}

// IO is where RunIO writes and what it reads.
type IO struct {
	// Stdout receives the usage and, with -v, the request log.
	Stdout io.Writer
	// Banner receives the banner: the sandbox's address and its own public
	// test credentials. Nil means Stdout.
	Banner io.Writer
	// Getenv reads the environment (BILLING_BASE_URL); nil reads none.
	Getenv func(string) string
}

// RunIO is RunEnv with the banner written apart from the rest of the output.
func RunIO(ctx context.Context, name string, args []string, streams IO) error {
	stdout, getenv, banner := streams.Stdout, streams.Getenv, streams.Banner
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	if banner == nil {
		banner = stdout
	}
	flags := flag.NewFlagSet(name, flag.ContinueOnError)
	flags.SetOutput(stdout)
	flags.Usage = func() {
		fmt.Fprintf(flags.Output(), "Usage: %s [flags]\n\nServes the billing sandbox until interrupted (Ctrl+C).\n\nFlags:\n", name)
		flags.PrintDefaults()
	}
	addr := flags.String("addr", defaultAddr(getenv), "address to listen on (default: BILLING_BASE_URL's, when that is a loopback http URL with a port)")
	asJSON := flags.Bool("json", false, "print the address and credentials as one JSON object instead of the banner")
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
	stateFile := flags.String("state", "", "file that keeps the sandbox's records, money movements, deliveries, time and scheduled work\n"+
		"across restarts: loaded at start when it exists, rewritten after every change (default: none, the state is lost at exit)")
	verbose := flags.Bool("v", false, "log every request to stdout")
	manualClock := flags.Bool("manual-clock", false, "stop the sandbox's clock at "+ManualClockStart.Format(time.RFC3339)+
		": it moves only through POST /sandbox/clock/advance (billing sandbox advance), and due work runs only then")
	if err := flags.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return &UsageError{Err: err}
	}
	if flags.NArg() > 0 {
		return &UsageError{Err: fmt.Errorf("unexpected argument %q: %s takes only flags", flags.Arg(0), name)}
	}

	minorUnits, err := parseAmount(*balance)
	if err != nil {
		return &UsageError{fmt.Errorf("-disbursement-balance: %w", err)}
	}
	wire, err := sandbox.ParseWire(*wireName)
	if err != nil {
		return &UsageError{fmt.Errorf("-wire: %w", err)}
	}
	if *checkoutLifetime <= 0 {
		return &UsageError{fmt.Errorf("-checkout-lifetime: must be positive, not %s", *checkoutLifetime)}
	}
	cfg := sandbox.Config{ResolveAfter: *resolveAfter, WebhookURL: *webhookURL, CheckoutLifetime: *checkoutLifetime,
		DisbursementBalance: minorUnits, Wire: wire}
	clockName := "the wall clock"
	if *manualClock {
		cfg.Clock = sandbox.NewManualClock(ManualClockStart)
		clockName = "manual, stopped at " + ManualClockStart.Format(time.RFC3339) + " (advance it with POST /sandbox/clock/advance)"
	}
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
			return &UsageError{err}
		}
		cfg.AllowIPs = prefixes
	}
	if *verbose {
		cfg.Logger = slog.New(slog.NewTextHandler(stdout, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}

	requestFaults, err := sandbox.ParseFaults(*faults)
	if err != nil {
		return &UsageError{fmt.Errorf("-faults: %w", err)}
	}
	callbackFaultList, err := sandbox.ParseCallbackFaults(*callbackFaults)
	if err != nil {
		return &UsageError{fmt.Errorf("-callback-faults: %w", err)}
	}

	sb := sandbox.New(cfg)
	defer sb.Close()
	stateName := "none: everything is forgotten at exit (keep it with -state FILE)"
	if *stateFile != "" {
		restored, err := sb.KeepState(*stateFile)
		if err != nil {
			return fmt.Errorf("-state: %w; move the file away to start empty", err)
		}
		stateName = *stateFile + " (new)"
		if restored {
			stateName = *stateFile + " (restored; -disbursement-balance and the clock's start come from it)"
		}
	}
	for _, f := range requestFaults {
		if err := sb.InjectFault(f); err != nil {
			return &UsageError{fmt.Errorf("-faults: %w", err)}
		}
	}
	for _, f := range callbackFaultList {
		if err := sb.InjectCallbackFault(f); err != nil {
			return &UsageError{fmt.Errorf("-callback-faults: %w", err)}
		}
	}

	listener, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w (is another sandbox running there? pick another with -addr)", *addr, err)
	}
	server := &http.Server{Handler: sb, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- server.Serve(listener) }()

	if *asJSON {
		printJSONBanner(banner, "http://"+listener.Addr().String(), sb, *stateFile)
	} else {
		printBanner(banner, "http://"+listener.Addr().String(), sb.Config(), clockName, stateName, len(requestFaults), len(callbackFaultList))
	}

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
func printBanner(w io.Writer, baseURL string, cfg sandbox.Config, clock, state string, faults, callbackFaults int) {
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
  clock:                %s
  state file:           %s
  faults armed:         %d on requests, %d on callbacks
  sandbox controls:     %s
Press Ctrl+C to stop.
`, baseURL, baseURL, baseURL, cfg.ClientID, cfg.ClientSecret, cfg.SecretKey,
		strings.Join(cfg.SessionTokens, ", "), cfg.PublicKey, cfg.DisbursementAccount,
		formatAmount(cfg.DisbursementBalance), cfg.SalesAccount, cfg.CheckoutLifetime, strings.Join(cfg.Scopes, ", "), joinPrefixes(cfg.AllowIPs), cfg.ResolveAfter,
		cfg.Wire, clock, state, faults, callbackFaults, strings.Join(sandbox.ControlPatterns(), ", "))
}

// jsonBanner is the banner of -json.
type jsonBanner struct {
	BaseURL             string   `json:"baseUrl"`
	Instance            string   `json:"instance"`
	ClientID            string   `json:"clientId"`
	ClientSecret        string   `json:"clientSecret"`
	SecretKey           string   `json:"secretKey"`
	SessionTokens       []string `json:"sessionTokens"`
	PublicKey           string   `json:"publicKey"`
	DisbursementAccount string   `json:"disbursementAccount"`
	Wire                string   `json:"wire"`
	StateFile           string   `json:"stateFile,omitempty"`
}

func printJSONBanner(w io.Writer, baseURL string, sb *sandbox.Server, stateFile string) {
	cfg := sb.Config()
	_ = json.NewEncoder(w).Encode(jsonBanner{BaseURL: baseURL, Instance: sb.Instance(), ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret,
		SecretKey: cfg.SecretKey, SessionTokens: cfg.SessionTokens, PublicKey: cfg.PublicKey, DisbursementAccount: cfg.DisbursementAccount, Wire: string(cfg.Wire), StateFile: stateFile})
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

// UsageError is a mistake in the command line: a command exits 2 for it, as
// Go's tools do.
type UsageError struct{ Err error }

// Error says what was wrong with the command line.
func (e *UsageError) Error() string { return e.Err.Error() }

// Unwrap returns the flag package's error.
func (e *UsageError) Unwrap() error { return e.Err }
