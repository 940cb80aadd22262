package billingtest

import "github.com/billingsdk/billing-go/internal/sandbox"

// Wire is the form in which the sandbox answers the money movements: the
// service's specified wire, or the payloads its payments provider sends in
// production. Either way the sandbox moves the same money; only the answers,
// callbacks and webhooks differ.
type Wire string

const (
	// WireSpec answers as the service's specification describes: integer minor
	// units in receive and send, the spec's envelopes and casing. The default.
	WireSpec = Wire(sandbox.WireSpec)
	// WireProvider answers the initiations, status checks, callbacks and the
	// checkout webhook of the money movements as the payments provider does:
	// amounts in decimal cedis (0.8, 0.010), its mixed casing, ResponseCode
	// "success" with transactionStatus on the send and send-to-bank status
	// checks, the mandate status's code under "code", data true for a mandate
	// cancel, dates with 7 fractional digits, and its checkout webhook
	// {ResponseCode, Status, Data: {CheckoutId, ...}}. Error bodies, refusals and
	// the billing resources stay as the spec has them, as the provider
	// documents no other shape for them.
	WireProvider = Wire(sandbox.WireProvider)
)

// Wires returns every wire, the default first, so a test can run once on each:
//
//	for _, wire := range billingtest.Wires() {
//		t.Run(string(wire), func(t *testing.T) {
//			srv := billingtest.NewServer(t, billingtest.WithWire(wire))
//			...
//		})
//	}
func Wires() []Wire { return []Wire{WireSpec, WireProvider} }

// WithWire makes the sandbox answer in wire's shapes (WireSpec by default), so
// code under test meets what production will send. Start refuses, and
// NewServer fails the test on, any other value.
func WithWire(wire Wire) Option {
	return Option{func(c *sandbox.Config) { c.Wire = sandbox.Wire(wire) }}
}

// Wire returns the wire the sandbox answers in.
func (s *Server) Wire() Wire { return Wire(s.sandbox.Config().Wire) }

// checkWire refuses a wire the sandbox does not speak, before it starts.
func checkWire(cfg sandbox.Config) error {
	_, err := sandbox.ParseWire(string(cfg.Wire))
	return err
}
