package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest/sandboxctl"
)

// outcome is the result a trigger asks the sandbox for, chosen by a flag.
type outcome string

const (
	outcomeSuccess    outcome = "success"
	outcomeFail       outcome = "fail"
	outcomePending    outcome = "pending"
	outcomeNoCallback outcome = "no-callback"
)

// testNumber is what the sandbox's test numbers (docs/sandbox.md) make of a
// flow: the number (phone, MSISDN or account) that gives an outcome, and
// what then arrives.
type testNumber struct {
	number string
	expect string
}

// flow is one money flow trigger starts: its sandbox kind (as the movements
// control names it), the test numbers of the outcomes it offers, and how to
// start it.
type flow struct {
	kind    string
	about   string
	numbers map[outcome]testNumber
	start   func(ctx context.Context, t *trigger, number string) (accepted string, err error)
}

// flows is the table of the flows trigger starts, by name. The numbers are
// those of docs/sandbox.md's Test numbers: the last four digits choose.
var flows = map[string]flow{
	"receive": {kind: "receive", about: "direct mobile-money receive (Payments.Receive)",
		numbers: map[outcome]testNumber{
			outcomeSuccess:    {"233241234567", "a transaction callback with ResponseCode 0000 (success)"},
			outcomeFail:       {"233241230001", "a transaction callback with ResponseCode 2001 (wrong PIN)"},
			outcomePending:    {"233241230004", "nothing for 10 minutes of sandbox time, then a transaction callback 0000"},
			outcomeNoCallback: {"233241230002", "no callback ever; only the status check says it succeeded"},
		}, start: startReceive},
	"send": {kind: "send", about: "direct mobile-money send (Payouts.Send)",
		numbers: map[outcome]testNumber{
			outcomeSuccess:    {"233241234567", "a payout callback with ResponseCode 0000 (success)"},
			outcomeFail:       {"233241230001", "a payout callback with ResponseCode 2001 (invalid wallet)"},
			outcomeNoCallback: {"233241230002", "no callback ever; only the status check says it succeeded"},
		}, start: startSend},
	"bank": {kind: "send-to-bank", about: "send-to-bank payout (Payouts.SendToBank, bank code 300302)",
		numbers: map[outcome]testNumber{
			outcomeSuccess: {"1234567890", "a payout callback with ResponseCode 0000 (success)"},
			outcomeFail:    {"1234560001", "a payout callback with ResponseCode 2001 (the name check failed)"},
		}, start: startBank},
	"debit": {kind: "direct-debit", about: "direct-debit charge (Mandates.Charge), under a USSD mandate it creates first if needed",
		numbers: map[outcome]testNumber{
			outcomeSuccess:    {"233241234567", "a transaction callback with ResponseCode 0000 (success)"},
			outcomeFail:       {"233241230001", "a transaction callback with ResponseCode 2001"},
			outcomePending:    {"233241230004", "nothing for 10 minutes of sandbox time, then a transaction callback 0000"},
			outcomeNoCallback: {"233241230002", "no callback ever; only the status check says it succeeded"},
		}, start: startDebit},
	"mandate": {kind: "mandate", about: "direct-debit mandate (Mandates.Create)",
		numbers: map[outcome]testNumber{
			// Mandates have no test numbers; a fresh MSISDN each time, since one
			// MSISDN holds one pending or approved mandate per channel.
			outcomeSuccess: {"", "a mandate callback with PreapprovalStatus APPROVED (USSD: approved on its own)"},
			outcomePending: {"", "nothing until the OTP is verified (OTP mandate: read it with GET /sandbox/sms, then Mandates.VerifyOTP)"},
		}, start: startMandate},
	"checkout": {kind: "checkout", about: "hosted checkout session (Payments.CreateCheckout), paid by card through the sandbox's control",
		numbers: map[outcome]testNumber{
			outcomeSuccess: {"CARD succeeded", "a payment.succeeded webhook: billing listen forwards it, else it goes to the sandbox's -webhook-url"},
			outcomeFail:    {"CARD failed", "no webhook; the session ends FAILED"},
			outcomePending: {"", "nothing until a payer pays at the checkout URL (or billing sandbox complete REFERENCE)"},
		}, start: startCheckout},
}

// flowAliases are the Tracker's names of the flows' kinds (billing movements
// --kind), which trigger takes too.
var flowAliases = map[string]string{"bank_transfer": "bank", "direct_debit": "debit"}

// flowNames returns the names of the flows, sorted.
func flowNames() []string {
	names := make([]string, 0, len(flows))
	for name := range flows {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// offered names the outcomes a flow offers, as their flags.
func (f flow) offered() string {
	var flags []string
	for _, o := range []outcome{outcomeFail, outcomePending, outcomeNoCallback} {
		if _, ok := f.numbers[o]; ok {
			flags = append(flags, "--"+string(o))
		}
	}
	if len(flags) == 0 {
		return "none"
	}
	return strings.Join(flags, ", ")
}

// trigger is one run of billing trigger.
type trigger struct {
	client      *billing.Client
	ctl         *sandboxctl.Client
	reference   string
	amount      int64 // minor units
	callbackURL string
	outcome     outcome
	wait        time.Duration // how long --wait (and a debit's mandate) may take
	checkoutURL string
	number      string // the number used, when the flow chose it
}

// triggerResult is what trigger prints, and writes with --json.
type triggerResult struct {
	Flow        string `json:"flow"`
	Reference   string `json:"reference"`
	Outcome     string `json:"outcome"`
	TestNumber  string `json:"testNumber,omitempty"`
	Amount      string `json:"amount"`
	CallbackURL string `json:"callbackUrl"`
	Accepted    string `json:"accepted"`
	Expect      string `json:"expect"`
	CheckoutURL string `json:"checkoutUrl,omitempty"`
	Final       *final `json:"final,omitempty"`
}

// final is the movement's final state, with --wait.
type final struct {
	State        string `json:"state"`
	ResponseCode string `json:"responseCode"`
}

func runTrigger(ctx context.Context, e *env, args []string) error {
	var lines []string
	for _, name := range flowNames() {
		lines = append(lines, fmt.Sprintf("  %-9s %s; outcomes besides success: %s", name, flows[name].about, flows[name].offered()))
	}
	fs := newFlags(e, "billing trigger", "billing trigger receive|send|bank|debit|mandate|checkout [--fail|--pending|--no-callback] [flags]",
		"Starts a money flow on the sandbox with the test number that gives the outcome asked (docs/sandbox.md,\n"+
			"Test numbers), prints its client reference and what will arrive, and with --wait waits for its final state.\n"+
			"Under billing listen every callback and webhook reaches your application whatever --callback says.\n"+
			"It talks to a sandbox only: before any call it asks GET /sandbox/identity, and sends nothing to a\n"+
			"service that does not answer as a sandbox. bank_transfer and direct_debit name bank and debit too.\n\nFlows:\n"+strings.Join(lines, "\n"))
	conn := addSandboxFlags(fs, e)
	fail := fs.Bool("fail", false, "ask for a failure")
	pending := fs.Bool("pending", false, "ask for a movement that stays pending (receive, debit: 10 minutes; mandate: until its OTP; checkout: until paid)")
	noCallback := fs.Bool("no-callback", false, "ask for a success that sends no callback (only the status check tells)")
	amount := fs.String("amount", "10.00", "amount in GHS, at most two decimals")
	callback := fs.String("callback", "http://localhost:8080/webhooks", "callback URL the request names")
	reference := fs.String("reference", "", "client reference (default: a fresh one, letters and digits)")
	disbursement := fs.String("disbursement-account", orDefault(e.getenv("BILLING_DISBURSEMENT_ACCOUNT"), "2020202"),
		"disbursement account of send-to-bank (env BILLING_DISBURSEMENT_ACCOUNT)")
	wait := fs.Bool("wait", false, "wait for the final state and print it")
	timeout := fs.Duration("timeout", 2*time.Minute, "how long --wait (and a debit's mandate approval) may take")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	positional, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(positional) != 1 {
		return usagef("trigger takes one flow: %s", strings.Join(flowNames(), ", "))
	}
	name := positional[0]
	if canonical, ok := flowAliases[name]; ok {
		name = canonical
	}
	fl, ok := flows[name]
	if !ok {
		return usagef("unknown flow %q: use %s", name, strings.Join(flowNames(), ", "))
	}
	asked := outcomeSuccess
	n := 0
	for flag, o := range map[*bool]outcome{fail: outcomeFail, pending: outcomePending, noCallback: outcomeNoCallback} {
		if *flag {
			asked, n = o, n+1
		}
	}
	if n > 1 {
		return usagef("give at most one of --fail, --pending and --no-callback")
	}
	number, ok := fl.numbers[asked]
	if !ok {
		return usagef("the sandbox has no test number for %s --%s; %s offers: %s", name, asked, name, fl.offered())
	}
	minor, err := billing.ParseMajor("GHS", *amount)
	if err == nil && minor <= 0 {
		err = fmt.Errorf("%q is not a positive amount", *amount)
	}
	if err != nil {
		return usagef("--amount: %v", err)
	}
	if u, err := url.Parse(*callback); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usagef("--callback %s is not an http or https URL", quoteURL(*callback))
	}
	ref := *reference
	if ref == "" {
		ref = newReference()
	} else if !isReference(ref) {
		return usagef("--reference %q: use 1 to 36 letters and digits", ref)
	}
	if *timeout <= 0 {
		return usagef("--timeout must be positive")
	}
	if err := conn.check(); err != nil {
		return err
	}
	// A development tool never moves real money: before any call, the service
	// must prove it is a sandbox, by an answer no live service gives.
	if err := conn.requireSandbox(ctx); err != nil {
		return err
	}
	client, err := billing.NewClient(billing.WithBaseURL(conn.url), billing.WithClientCredentials(conn.clientID, conn.clientSecret),
		billing.WithDisbursementAccount(*disbursement))
	if err != nil {
		return fmt.Errorf("setting up the client: %w", err)
	}
	t := &trigger{client: client, ctl: conn.ctl(), reference: ref, amount: minor, callbackURL: *callback, outcome: asked, wait: *timeout}
	accepted, err := fl.start(ctx, t, number.number)
	if errors.Is(err, billing.ErrNotSent) {
		return fmt.Errorf("starting %s %s: %w (is the sandbox running at %s? start one with billing sandbox)", name, ref, err, quoteURL(conn.url))
	}
	if err != nil {
		return fmt.Errorf("starting %s %s: %w", name, ref, err)
	}
	if t.number != "" {
		number.number = t.number
	}
	result := triggerResult{Flow: name, Reference: ref, Outcome: string(asked), TestNumber: number.number, Amount: billing.Money{Amount: minor, Currency: "GHS"}.String(),
		CallbackURL: *callback, Accepted: accepted, Expect: number.expect, CheckoutURL: t.checkoutURL}
	if !*asJSON {
		fmt.Fprintf(e.stdout, "%s %s started: %s\n", name, ref, accepted)
		if number.number != "" {
			fmt.Fprintf(e.stdout, "  test number: %s\n", number.number)
		}
		fmt.Fprintf(e.stdout, "  expect:      %s\n", number.expect)
		if t.checkoutURL != "" {
			fmt.Fprintf(e.stdout, "  pay at:      %s\n", t.checkoutURL)
		}
	}
	if *wait {
		m, err := t.awaitFinal(ctx, fl.kind)
		if err != nil {
			return err
		}
		result.Final = &final{State: m.State, ResponseCode: m.ResponseCode}
		if !*asJSON {
			fmt.Fprintf(e.stdout, "  final:       %s (%s)\n", m.State, m.ResponseCode)
		}
	}
	if *asJSON {
		return writeJSON(e.stdout, result)
	}
	return nil
}

func orDefault(v, def string) string {
	if v != "" {
		return v
	}
	return def
}

// newReference returns a fresh client reference every flow takes: trg and 16
// random hex digits.
func newReference() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return fmt.Sprintf("trg%x", b)
}

// freshMSISDN returns a Ghanaian MSISDN with random digits: 23324 and 7 more.
func freshMSISDN() string {
	b := make([]byte, 7)
	_, _ = rand.Read(b)
	digits := []byte("23324")
	for _, x := range b {
		digits = append(digits, '0'+x%10)
	}
	return string(digits)
}

// isReference is the strictest client reference rule of the flows (send-to-bank,
// direct debit, mandates): 1 to 36 letters and digits.
func isReference(s string) bool {
	if s == "" || len(s) > 36 {
		return false
	}
	for _, r := range s {
		if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9') {
			return false
		}
	}
	return true
}

// pollEvery is the pause between two looks at the sandbox while waiting.
const pollEvery = 100 * time.Millisecond

// poll calls check until it reports done, ctx ends or t.wait passes.
func (t *trigger) poll(ctx context.Context, what string, check func() (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, t.wait)
	defer cancel()
	ticker := time.NewTicker(pollEvery)
	defer ticker.Stop()
	for {
		done, err := check()
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			return err
		}
		if done {
			return nil
		}
		select {
		case <-ticker.C:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("%s: still not there after %s; if the sandbox's clock is manual, move it with billing sandbox advance, or give a longer --timeout", what, t.wait)
	}
	return ctx.Err()
}

// awaitFinal waits until the sandbox's record of the movement is final.
func (t *trigger) awaitFinal(ctx context.Context, kind string) (sandboxctl.Movement, error) {
	var found sandboxctl.Movement
	err := t.poll(ctx, "waiting for the final state of "+t.reference, func() (bool, error) {
		movements, err := t.ctl.Movements(ctx, t.reference)
		if err != nil {
			return false, err
		}
		for _, m := range movements {
			if m.Kind == kind && m.State != "pending" {
				found = m
				return true, nil
			}
		}
		return false, nil
	})
	return found, err
}

func startReceive(ctx context.Context, t *trigger, phone string) (string, error) {
	r, err := t.client.Payments.Receive(ctx, &billing.ReceiveParams{Amount: t.amount, Phone: phone, Provider: billing.ProviderMTN,
		Description: "billing trigger receive", ClientReference: t.reference, CallbackURL: t.callbackURL})
	if err != nil {
		return "", err
	}
	return "status " + r.Status, nil
}

func startSend(ctx context.Context, t *trigger, phone string) (string, error) {
	r, err := t.client.Payouts.Send(ctx, &billing.SendParams{Amount: t.amount, Phone: phone, Provider: billing.ProviderMTN, Name: "Trigger Recipient",
		Description: "billing trigger send", ClientReference: t.reference, CallbackURL: t.callbackURL})
	if err != nil {
		return "", err
	}
	return "status " + r.Status, nil
}

func startBank(ctx context.Context, t *trigger, account string) (string, error) {
	r, err := t.client.Payouts.SendToBank(ctx, &billing.BankTransferParams{BankCode: "300302", Amount: billing.DecimalAmount(t.amount),
		PrimaryCallbackURL: t.callbackURL, Description: "billing trigger bank", BankAccountNumber: account,
		ClientReference: t.reference, BankAccountName: "Trigger Recipient"})
	if err != nil {
		return "", err
	}
	return "accepted, transaction " + r.TransactionID, nil
}

func startMandate(ctx context.Context, t *trigger, _ string) (string, error) {
	msisdn := freshMSISDN()
	t.number = msisdn
	channel := billing.DirectDebitChannelMTN // USSD: approved on its own
	if t.outcome == outcomePending {
		channel = billing.DirectDebitChannelVodafone // OTP: pending until verified
	}
	m, err := t.client.Mandates.Create(ctx, &billing.MandateCreateParams{ClientReferenceID: t.reference, CustomerMSISDN: msisdn,
		Channel: channel, CallbackURL: t.callbackURL})
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("mandate %s on %s, %s", m.ServicePreApprovalID, channel, m.PreapprovalStatus), nil
}

func startDebit(ctx context.Context, t *trigger, msisdn string) (string, error) {
	if err := t.ensureMandate(ctx, msisdn); err != nil {
		return "", err
	}
	d, err := t.client.Mandates.Charge(ctx, &billing.DirectDebitParams{CustomerMSISDN: msisdn, Channel: billing.DirectDebitChannelMTN,
		Amount: billing.DecimalAmount(t.amount), PrimaryCallbackURL: t.callbackURL, Description: "billing trigger debit",
		ClientReference: t.reference})
	if err != nil {
		return "", err
	}
	return "accepted, transaction " + d.TransactionID, nil
}

// ensureMandate creates an approved USSD mandate for msisdn unless one is
// approved or pending already, and waits for its approval.
func (t *trigger) ensureMandate(ctx context.Context, msisdn string) error {
	mandateRef := "m" + t.reference
	if len(mandateRef) > 36 {
		mandateRef = mandateRef[:36]
	}
	_, err := t.client.Mandates.Create(ctx, &billing.MandateCreateParams{ClientReferenceID: mandateRef, CustomerMSISDN: msisdn,
		Channel: billing.DirectDebitChannelMTN, CallbackURL: t.callbackURL})
	var apiErr *billing.APIError
	if errors.As(err, &apiErr) && strings.Contains(apiErr.Message, "already has a pending or approved mandate") {
		return nil // the charge finds it, or says why not
	}
	if err != nil {
		return fmt.Errorf("creating the mandate the charge needs: %w", err)
	}
	return t.poll(ctx, "waiting for the approval of mandate "+mandateRef, func() (bool, error) {
		m, err := t.client.Mandates.Status(ctx, mandateRef)
		if err != nil {
			return false, err
		}
		switch m.PreapprovalStatus {
		case billing.MandateStatusApproved, billing.MandateStatusActive:
			return true, nil
		case billing.MandateStatusPending:
			return false, nil
		}
		return false, fmt.Errorf("mandate %s ended %s", mandateRef, m.PreapprovalStatus)
	})
}

func startCheckout(ctx context.Context, t *trigger, _ string) (string, error) {
	p, err := t.client.Payments.CreateCheckout(ctx, &billing.CheckoutParams{Amount: t.amount, Description: "billing trigger checkout",
		ClientReference: t.reference})
	if err != nil {
		return "", err
	}
	t.checkoutURL = p.CheckoutURL
	if t.outcome == outcomePending {
		return "session " + p.Reference + " " + string(p.Status), nil
	}
	result := sandboxctl.OutcomeSucceeded
	if t.outcome == outcomeFail {
		result = sandboxctl.OutcomeFailed
	}
	if err := t.ctl.CompleteCheckout(ctx, p.Reference, sandboxctl.MethodCard, result); err != nil {
		return "", fmt.Errorf("completing session %s: %w", p.Reference, err)
	}
	return "session " + p.Reference + " paid by CARD: " + result, nil
}
