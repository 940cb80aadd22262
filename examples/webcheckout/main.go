// Webcheckout serves a small merchant page that takes payment through the web SDK: the
// backend creates the checkout session with the client secret, and the page embeds the
// hosted checkout in the page (iframe), in a pop-up (modal), or opens it in a new tab
// (redirect) with only the public key. With no credentials in the environment it runs
// against an embedded sandbox, whose checkout page offers the simulated card, mobile-money
// and bank-transfer flows. It prints the address to open and serves until interrupted.
//
//	go run ./examples/webcheckout
//
// Against a real service set BILLING_BASE_URL, BILLING_CLIENT_ID, BILLING_CLIENT_SECRET
// and BILLING_PUBLIC_KEY.
package main

import (
	"context"
	"errors"
	"fmt"
	"html/template"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// run serves the shop until ctx ends, saying on out where it is and what the service
// reports: the payment.succeeded webhook and the web SDK's transaction callbacks.
func run(ctx context.Context, out io.Writer) error {
	out = &lockedWriter{w: out} // handlers write from their own goroutines
	webhookURL, stopWebhooks, err := serve(billing.NewWebhookHandler(report(out, "webhook")))
	if err != nil {
		return err
	}
	defer stopWebhooks()
	c, sandbox, err := connect(out, billingtest.WithWebhookURL(webhookURL))
	if err != nil {
		return err
	}
	if sandbox != nil {
		defer sandbox.Close()
	}

	publicKey := os.Getenv("BILLING_PUBLIC_KEY")
	if sandbox != nil {
		publicKey = sandbox.PublicKey
	}
	if publicKey == "" {
		return errors.New("set BILLING_PUBLIC_KEY, the public key of the web SDK, beside the other BILLING_ variables")
	}
	s := &shop{client: c, publicKey: publicKey}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.payPage)
	mux.HandleFunc("GET /thanks", s.thanks)
	mux.Handle("POST /callbacks", billing.NewWebhookHandler(report(out, "transaction callback")))
	shopURL, stopShop, err := serve(mux)
	if err != nil {
		return err
	}
	defer stopShop()
	s.url = shopURL

	fmt.Fprintf(out, "open %s/ to pay; Ctrl+C stops\n", shopURL)
	<-ctx.Done()
	return nil
}

// report prints each event the service delivers.
func report(out io.Writer, what string) func(context.Context, billing.Event) error {
	return func(_ context.Context, ev billing.Event) error {
		fmt.Fprintf(out, "%s %s for %s: %s\n", what, ev.Kind(), ev.Reference(), ev.State())
		return nil
	}
}

type shop struct {
	client    *billing.Client
	publicKey string
	url       string
}

// payPage creates a session on the backend for each visit and gives the page what the
// web SDK needs for it. The client secret stays here; the page sees the public key.
func (s *shop) payPage(w http.ResponseWriter, r *http.Request) {
	pay, err := s.client.Payments.CreateCheckout(r.Context(), &billing.CheckoutParams{
		Amount:      billing.GHS(50),
		Description: "Two bags of rice",
		Customer:    billing.CheckoutCustomer{Name: "Ama Mensah", Email: "ama@example.com", Phone: "+233 24 123 4567"},
		ReturnURL:   s.url + "/thanks", // where a payer who paid in a new tab comes back to
	})
	if err != nil {
		http.Error(w, "creating the checkout session: "+err.Error(), http.StatusBadGateway)
		return
	}
	web, err := billing.NewWebCheckout(pay, &billing.WebCheckoutParams{PublicKey: s.publicKey, CallbackURL: s.url + "/callbacks"})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	render(w, payPage, map[string]any{"Web": web, "Price": billing.Money{Amount: pay.Amount, Currency: pay.Currency}})
}

// thanks is where the checkout sends a payer back: it asks the service for the outcome
// rather than trusting the query string.
func (s *shop) thanks(w http.ResponseWriter, r *http.Request) {
	pay, err := s.client.Payments.Get(r.Context(), r.URL.Query().Get("reference"))
	if err != nil {
		http.Error(w, "looking up the payment: "+err.Error(), http.StatusBadGateway)
		return
	}
	render(w, thanksPage, pay)
}

func render(w http.ResponseWriter, page *template.Template, data any) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if err := page.Execute(w, data); err != nil {
		log.Printf("rendering %s: %v", page.Name(), err)
	}
}

var payPage = template.Must(template.New("pay").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Rice shop: checkout</title>
<script src="{{.Web.ScriptURL}}"></script>
</head>
<body>
<main>
<h1>Rice shop</h1>
<p>Two bags of rice: {{.Price}}</p>
<p>
<button type="button" data-mode="iframe">Pay in this page</button>
<button type="button" data-mode="modal">Pay in a pop-up</button>
<button type="button" data-mode="redirect">Pay in a new tab</button>
</p>
<div id="billing-checkout-iframe"></div>
<p id="outcome" role="status"></p>
</main>
<script>
const web = {{.Web}};
const checkout = new BillingCheckout();
const outcome = document.getElementById('outcome');
const callbacks = {
  onPaymentSuccess: (payment) => {
    outcome.textContent = 'Paid: ' + payment.reference + ' by ' + payment.method + '. Thank you!';
    checkout.closePopUp();
  },
  onPaymentFailure: (failure) => { outcome.textContent = 'Not paid: ' + failure.message; },
  onClose: () => { if (!outcome.textContent) outcome.textContent = 'Checkout closed.'; },
};
document.querySelectorAll('button[data-mode]').forEach((button) => {
  button.addEventListener('click', () => {
    const options = { purchaseInfo: web.purchaseInfo, config: web.config, callbacks: callbacks };
    if (button.dataset.mode === 'iframe') {
      checkout.initIframe({ ...options, iframeStyle: { width: '100%', height: 760, border: 'none' } });
    } else if (button.dataset.mode === 'modal') {
      checkout.openModal(options);
    } else {
      checkout.redirect(options);
    }
  });
});
</script>
</body>
</html>
`))

var thanksPage = template.Must(template.New("thanks").Parse(`<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>Rice shop: thank you</title></head>
<body><main>
<h1>Rice shop</h1>
<p id="status">Payment {{.Reference}}: {{.Status}}</p>
{{if .Succeeded}}<p>Thank you! Your rice is on its way.</p>{{else}}<p><a href="/">Try again</a></p>{{end}}
</main></body>
</html>
`))

// lockedWriter lets concurrent handlers print whole lines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// connect returns a client for the service named by BILLING_BASE_URL, BILLING_CLIENT_ID
// and BILLING_CLIENT_SECRET when they are set. Otherwise it starts a sandbox
// of the service in this process (opts configure it) and returns it too, for the caller
// to drive and close.
func connect(out io.Writer, opts ...billingtest.Option) (*billing.Client, *billingtest.Server, error) {
	base, id, secret := os.Getenv("BILLING_BASE_URL"), os.Getenv("BILLING_CLIENT_ID"), os.Getenv("BILLING_CLIENT_SECRET")
	if base == "" && id == "" && secret == "" {
		sandbox, err := billingtest.Start(opts...)
		if err != nil {
			return nil, nil, err
		}
		fmt.Fprintf(out, "using an embedded sandbox at %s (set BILLING_BASE_URL, BILLING_CLIENT_ID and BILLING_CLIENT_SECRET to use a real service)\n", sandbox.URL)
		return sandbox.Client(), sandbox, nil
	}
	c, err := billing.NewClient(
		billing.WithBaseURL(base),
		billing.WithClientCredentials(id, secret),
	)
	if err != nil {
		return nil, nil, fmt.Errorf("BILLING_BASE_URL, BILLING_CLIENT_ID and BILLING_CLIENT_SECRET must all be set: %w", err)
	}
	fmt.Fprintf(out, "using the service at %s\n", base)
	return c, nil, nil
}

// serve serves h on a free port of this machine, where the embedded sandbox can reach
// it, and returns its base URL and a function that stops it. In production the service
// is given a public HTTPS address of the merchant's server instead.
func serve(h http.Handler) (url string, stop func(), err error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(l) }()
	return "http://" + l.Addr().String(), func() { _ = srv.Close() }, nil
}
