package e2e_test

import (
	"context"
	"html/template"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
)

// browserTimeout bounds each browser test, every wait included.
const browserTimeout = 90 * time.Second

// chromiumPath finds Chromium: Debian's package, or another build on PATH.
func chromiumPath() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	return ""
}

// newBrowser starts a headless Chromium with a fresh profile for the test and returns
// its first tab. Without Chromium the test skips, except under CI=true, where a missing
// browser fails it: CI installs one (.ci/run).
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	path := chromiumPath()
	if path == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("Chromium is not installed, and CI=true requires the browser tests to run: apt-get install -y chromium")
		}
		t.Skip("skipping the browser test: Chromium is not installed (apt-get install -y chromium); under CI=true this fails")
	}
	// A profile of its own, removed as well as can be: Chromium's helper processes
	// may still write to it as the browser exits, which must not fail the test.
	profile, err := os.MkdirTemp("", "billing-chromium-")
	require.NoError(t, err)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.UserDataDir(profile),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		// The network service in the browser process writes its state before the
		// browser exits, rather than after, into a profile being removed.
		chromedp.Flag("enable-features", "NetworkServiceInProcess2"),
		// Popups are blocked as in a payer's browser: the SDK's redirect must open its
		// tab inside the click.
		chromedp.Flag("disable-popup-blocking", false),
		chromedp.WindowSize(1280, 900),
	)
	ctx, cancel := context.WithTimeout(context.Background(), browserTimeout)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	browserCtx, cancelBrowser := chromedp.NewContext(allocCtx, chromedp.WithErrorf(quietErrorf))
	t.Cleanup(func() {
		cancelBrowser()
		cancelAlloc()
		cancel()
		_ = os.RemoveAll(profile)
	})
	require.NoError(t, chromedp.Run(browserCtx), "starting Chromium at %s", path)
	return browserCtx
}

// quietErrorf reports chromedp's errors on stderr, except the DevTools events newer
// than its protocol tables, which it cannot decode and which the tests do not use.
func quietErrorf(format string, args ...any) {
	if strings.HasPrefix(format, "unhandled") {
		return
	}
	log.Printf(format, args...)
}

// shop is a merchant for the browser tests: its backend creates sessions on the
// sandbox, its pages embed the checkout through the web SDK, and it receives the
// webhook and the SDK's transaction callbacks.
type shop struct {
	t         *testing.T
	sandbox   *billingtest.Server
	client    *billing.Client
	server    *httptest.Server
	webhooks  chan billing.Event // payment.succeeded, at the webhook URL
	callbacks chan billing.Event // transaction callbacks, at config.callbackUrl
}

func newShop(t *testing.T) *shop {
	t.Helper()
	s := &shop{t: t, webhooks: make(chan billing.Event, 8), callbacks: make(chan billing.Event, 8)}
	mux := http.NewServeMux()
	s.server = httptest.NewServer(mux)
	t.Cleanup(s.server.Close)
	s.sandbox = billingtest.NewServer(t, billingtest.WithManualClock(), billingtest.WithWebhookURL(s.server.URL+"/webhooks"))
	s.client = s.sandbox.Client()
	mux.Handle("POST /webhooks", billing.NewWebhookHandler(forward(s.webhooks)))
	mux.Handle("POST /callbacks", billing.NewWebhookHandler(forward(s.callbacks)))
	mux.HandleFunc("GET /pay/{mode}/{reference}", s.payPage)
	mux.HandleFunc("GET /thanks", func(w http.ResponseWriter, r *http.Request) {
		_ = thanksPage.Execute(w, r.URL.Query())
	})
	return s
}

func forward(ch chan<- billing.Event) func(context.Context, billing.Event) error {
	return func(_ context.Context, ev billing.Event) error {
		ch <- ev
		return nil
	}
}

// createSession creates a checkout session as the merchant's backend does.
func (s *shop) createSession(ctx context.Context, amount int64) *billing.Payment {
	s.t.Helper()
	pay, err := s.client.Payments.CreateCheckout(ctx, &billing.CheckoutParams{
		Amount:      amount,
		Description: "Two bags of rice",
		Customer:    billing.CheckoutCustomer{Name: "Ama Mensah", Email: "ama@example.com", Phone: "+233 24 123 4567"},
		ReturnURL:   s.server.URL + "/thanks",
	})
	require.NoError(s.t, err)
	return pay
}

// payPage is the merchant's page for a session: the backend reads the session and
// gives the page what the web SDK needs, and the page embeds the checkout (mode iframe
// or modal) or sends the payer to it (redirect) when the payer clicks Pay. It records
// every SDK callback, and payment.succeeded messages heard by its own listener, in
// window.shopEvents and as list items the test waits for.
func (s *shop) payPage(w http.ResponseWriter, r *http.Request) {
	pay, err := s.client.Payments.Get(r.Context(), r.PathValue("reference"))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	web, err := billing.NewWebCheckout(pay, &billing.WebCheckoutParams{PublicKey: s.sandbox.PublicKey, CallbackURL: s.server.URL + "/callbacks"})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if key, ok := r.URL.Query()["publicKey"]; ok {
		web.Config.PublicKey = key[0] // a page gone wrong, to see the SDK refuse it
	}
	_ = payPage.Execute(w, map[string]any{"Mode": r.PathValue("mode"), "Web": web})
}

var payPage = template.Must(template.New("pay").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Rice shop</title>
<script src="{{.Web.ScriptURL}}"></script></head>
<body>
<h1>Rice shop</h1>
<button type="button" id="pay">Pay</button>
<div id="checkout"></div>
<ol id="events"></ol>
<script>
const web = {{.Web}};
window.shopEvents = [];
function record(name, data) {
  window.shopEvents.push({ name: name, data: data === undefined ? null : data });
  const item = document.createElement('li');
  item.className = 'event-' + name;
  item.textContent = name;
  document.getElementById('events').appendChild(item);
}
const callbacks = {};
['onInit', 'onLoad', 'onPaymentSuccess', 'onPaymentFailure', 'onFeesChanged', 'onResize', 'onClose'].forEach(function (name) {
  callbacks[name] = function (data) { record(name, data); };
});
// The merchant's own listener: the checkout posts payment.succeeded to its parent.
window.addEventListener('message', function (e) {
  if (e.origin === new URL(web.checkoutUrl).origin && e.data && e.data.event === 'payment.succeeded') {
    record('message-payment.succeeded', e.data.data);
  }
});
const checkout = new BillingCheckout();
document.getElementById('pay').addEventListener('click', function () {
  const options = { purchaseInfo: web.purchaseInfo, config: web.config, callbacks: callbacks };
  try {
{{- if eq .Mode "iframe"}}
    options.container = '#checkout';
    options.iframeStyle = { width: '100%', height: 720, border: '1px solid #999' };
    checkout.initIframe(options);
{{- else if eq .Mode "modal"}}
    checkout.openModal(options);
{{- else}}
    checkout.redirect(options);
{{- end}}
  } catch (err) {
    record('thrown', { message: err.message });
  }
});
</script>
</body></html>
`))

var thanksPage = template.Must(template.New("thanks").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Thank you</title></head>
<body><h1 id="thanks">Back at the rice shop</h1>
<p id="outcome">{{.Get "status"}} {{.Get "reference"}}</p></body></html>
`))

// shopEvent is one callback or message the merchant's page recorded.
type shopEvent struct {
	Name string         `json:"name"`
	Data map[string]any `json:"data"`
}

// shopEvents returns what the page recorded, oldest first.
func shopEvents(t *testing.T, ctx context.Context) []shopEvent {
	t.Helper()
	var events []shopEvent
	require.NoError(t, chromedp.Run(ctx, chromedp.Evaluate(`window.shopEvents`, &events)))
	return events
}

// eventNamed returns the first recorded event with the name.
func eventNamed(t *testing.T, events []shopEvent, name string) shopEvent {
	t.Helper()
	for _, ev := range events {
		if ev.Name == name {
			return ev
		}
	}
	t.Fatalf("the page recorded no %s; it recorded %v", name, events)
	return shopEvent{}
}

// awaitEvent waits for the merchant's server to receive an event.
func awaitEvent(t *testing.T, ctx context.Context, ch <-chan billing.Event, what string) billing.Event {
	t.Helper()
	select {
	case ev := <-ch:
		return ev
	case <-ctx.Done():
		t.Fatalf("no %s arrived: %v", what, ctx.Err())
		return nil
	}
}

// openShop starts a browser and a shop with its sandbox, and creates a session of amount.
func openShop(t *testing.T, amount int64) (context.Context, *shop, *billing.Payment) {
	t.Helper()
	browser := newBrowser(t)
	shop := newShop(t)
	return browser, shop, shop.createSession(browser, amount)
}

// payIn opens the shop's page for pay in mode (iframe or modal) and clicks Pay. Once the
// checkout has loaded it returns the query option that reaches into the SDK's frame.
func (s *shop) payIn(ctx context.Context, mode string, pay *billing.Payment) chromedp.QueryOption {
	s.t.Helper()
	frameSelector := map[string]string{"iframe": `#checkout iframe`, "modal": `dialog.billing-checkout-modal iframe`}[mode]
	var frames []*cdp.Node
	require.NoError(s.t, chromedp.Run(ctx,
		chromedp.Navigate(s.server.URL+"/pay/"+mode+"/"+pay.Reference),
		chromedp.Click(`#pay`, chromedp.ByQuery),
		chromedp.WaitVisible(`#events .event-onLoad`, chromedp.ByQuery),
		chromedp.Nodes(frameSelector, &frames, chromedp.ByQuery),
	))
	return chromedp.FromNode(frames[0])
}

func TestBrowserRedirectCheckoutByCardReturnsToTheShop(t *testing.T) {
	browser, shop, pay := openShop(t, 5000)

	newTab := chromedp.WaitNewTarget(browser, func(info *target.Info) bool { return info.Type == "page" })
	require.NoError(t, chromedp.Run(browser,
		chromedp.Navigate(shop.server.URL+"/pay/redirect/"+pay.Reference),
		chromedp.Click(`#pay`, chromedp.ByQuery),
		chromedp.WaitVisible(`#events .event-onInit`, chromedp.ByQuery),
	))
	var tabID target.ID
	select {
	case tabID = <-newTab:
	case <-browser.Done():
		t.Fatal("redirect opened no tab")
	}
	tab, closeTab := chromedp.NewContext(browser, chromedp.WithTargetID(tabID))
	defer closeTab()

	var location, outcome string
	require.NoError(t, chromedp.Run(tab,
		chromedp.WaitVisible(`#cardNumber`, chromedp.ByQuery),
		chromedp.Click(`#panel-CARD button[value="succeeded"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#thanks`, chromedp.ByQuery),
		chromedp.Location(&location),
		chromedp.Text(`#outcome`, &outcome, chromedp.ByQuery),
	))
	assert.Equal(t, shop.server.URL+"/thanks?reference="+pay.Reference+"&status=SUCCEEDED", location, "metadata.returnUrl, with the outcome")
	assert.Equal(t, "SUCCEEDED "+pay.Reference, outcome)

	paid, err := shop.client.Payments.Get(browser, pay.Reference)
	require.NoError(t, err)
	assert.Equal(t, billing.PaymentStatusSucceeded, paid.Status)
	assert.Equal(t, billing.PaymentMethodCard, paid.Method)
	assert.Equal(t, billing.CardDetail{Brand: "VISA", Last4: "4242"}, paid.CardDetail)
	assert.Equal(t, int64(98), paid.Fee)
	assert.False(t, paid.PaidAt.IsZero())

	shop.sandbox.Advance(0) // the manual clock delivers the webhook
	ev := awaitEvent(t, browser, shop.webhooks, "payment.succeeded webhook")
	assert.Equal(t, billing.EventKindPaymentSucceeded, ev.Kind())
	assert.Equal(t, pay.Reference, ev.Reference())
}

func TestBrowserIframeCheckoutPostsPaymentSucceededToTheShop(t *testing.T) {
	browser, shop, pay := openShop(t, 5000)
	in := shop.payIn(browser, "iframe", pay)
	var style map[string]string
	require.NoError(t, chromedp.Run(browser,
		chromedp.Evaluate(`(() => { const s = document.querySelector('#checkout iframe').style; return {width: s.width, height: s.height, border: s.border}; })()`, &style),
		chromedp.Click(`input[name="choose-method"][value="BANK_TRANSFER"]`, chromedp.ByQuery, in),
		chromedp.WaitVisible(`#panel-BANK_TRANSFER button.primary`, chromedp.ByQuery, in),
		chromedp.WaitNotVisible(`#panel-CARD`, chromedp.ByQuery, in),
		chromedp.Click(`#panel-BANK_TRANSFER button.primary`, chromedp.ByQuery, in),
		chromedp.WaitVisible(`#events .event-message-payment\.succeeded`, chromedp.ByQuery),
		chromedp.WaitVisible(`#events .event-onPaymentSuccess`, chromedp.ByQuery),
	))
	assert.Equal(t, map[string]string{"width": "100%", "height": "720px", "border": "1px solid rgb(153, 153, 153)"}, style, "iframeStyle")

	events := shopEvents(t, browser)
	assert.Equal(t, "onInit", events[0].Name)
	assert.Equal(t, pay.Reference, eventNamed(t, events, "onLoad").Data["reference"])
	assert.Equal(t, map[string]any{"amount": 5000.0, "fee": 98.0, "net": 4902.0, "currency": "GHS"}, eventNamed(t, events, "onFeesChanged").Data)
	assert.Greater(t, eventNamed(t, events, "onResize").Data["height"], 0.0)
	heard := eventNamed(t, events, "message-payment.succeeded").Data
	assert.Equal(t, pay.Reference, heard["reference"], "the merchant's own listener hears payment.succeeded")
	assert.Equal(t, "SUCCEEDED", heard["status"])
	assert.Equal(t, "BANK_TRANSFER", heard["method"])
	assert.Equal(t, heard, eventNamed(t, events, "onPaymentSuccess").Data)
	assert.NotContains(t, heard, "customer", "the message carries what the page shows")

	var location string
	require.NoError(t, chromedp.Run(browser, chromedp.Location(&location)))
	assert.Equal(t, shop.server.URL+"/pay/iframe/"+pay.Reference, location, "embedded, the checkout does not send the payer away")

	shop.sandbox.Advance(0)
	callback := awaitEvent(t, browser, shop.callbacks, "transaction callback at config.callbackUrl")
	assert.Equal(t, billing.EventKindTransaction, callback.Kind())
	assert.Equal(t, pay.Reference, callback.Reference(), "the session's reference names it: it has no clientReference")
	assert.Equal(t, billing.EventSucceeded, callback.State())
}

func TestBrowserCardDeclineReachesOnPaymentFailure(t *testing.T) {
	browser, shop, pay := openShop(t, 12000)
	in := shop.payIn(browser, "iframe", pay)
	require.NoError(t, chromedp.Run(browser,
		chromedp.Click(`#panel-CARD button[value="failed"]`, chromedp.ByQuery, in),
		chromedp.WaitVisible(`#events .event-onPaymentFailure`, chromedp.ByQuery),
	))
	failure := eventNamed(t, shopEvents(t, browser), "onPaymentFailure").Data
	assert.Equal(t, "card_declined", failure["code"])
	assert.Equal(t, "the card was declined", failure["message"])
	assert.Equal(t, "FAILED", failure["status"])
	assert.Equal(t, pay.Reference, failure["reference"])

	declined, err := shop.client.Payments.Get(browser, pay.Reference)
	require.NoError(t, err)
	assert.Equal(t, billing.PaymentStatusFailed, declined.Status)
	assert.Equal(t, "card_declined", declined.FailureCode)
	assert.True(t, declined.IsFinal())
	assert.False(t, declined.Succeeded())

	shop.sandbox.Advance(0)
	callback := awaitEvent(t, browser, shop.callbacks, "transaction callback at config.callbackUrl")
	assert.Equal(t, billing.EventFailed, callback.State())
	assert.Equal(t, billing.CodeFailed, callback.Code())
	select {
	case ev := <-shop.webhooks:
		t.Fatalf("a decline sends no payment.succeeded, got %v", ev)
	default:
	}
}

func TestBrowserModalMobileMoneyWithPIN(t *testing.T) {
	browser, shop, pay := openShop(t, 5000)
	in := shop.payIn(browser, "modal", pay)
	var prompt string
	require.NoError(t, chromedp.Run(browser,
		chromedp.Click(`input[name="choose-method"][value="MOBILE_MONEY"]`, chromedp.ByQuery, in),
		chromedp.WaitVisible(`#phone`, chromedp.ByQuery, in),
		chromedp.WaitNotVisible(`#pin`, chromedp.ByQuery, in),    // the PIN comes after the confirmation
		chromedp.SendKeys(`#network`, "T", chromedp.ByQuery, in), // Telecel Cash
		chromedp.SendKeys(`#phone`, kb.End+strings.Repeat(kb.Backspace, 20)+"233 20 765 4321", chromedp.ByQuery, in),
		chromedp.Click(`[data-action="confirm"]`, chromedp.ByQuery, in),
		chromedp.WaitVisible(`#pin`, chromedp.ByQuery, in),
		chromedp.Text(`#prompt`, &prompt, chromedp.ByQuery, in),
		chromedp.SendKeys(`#pin`, "1234", chromedp.ByQuery, in),
		chromedp.Click(`[data-step="pin"] button[type="submit"]`, chromedp.ByQuery, in),
		chromedp.WaitVisible(`#events .event-onPaymentSuccess`, chromedp.ByQuery),
	))
	assert.Equal(t, "We sent a payment prompt to 233 20 765 4321 on Telecel Cash. Approve the payment of GHS 50.00 with your mobile-money PIN.", prompt)
	success := eventNamed(t, shopEvents(t, browser), "onPaymentSuccess").Data
	assert.Equal(t, "MOBILE_MONEY", success["method"])

	paid, err := shop.client.Payments.Get(browser, pay.Reference)
	require.NoError(t, err)
	assert.Equal(t, billing.PaymentStatusSucceeded, paid.Status)
	assert.Equal(t, billing.PaymentMethodMobileMoney, paid.Method)
	assert.Equal(t, "TELECEL", paid.MobileMoneyDetail.Network)
	assert.Equal(t, "233207654321", paid.MobileMoneyDetail.Phone)
	assert.Regexp(t, `^[0-9]{11}$`, paid.MobileMoneyDetail.ExternalRef)

	shop.sandbox.Advance(0)
	ev := awaitEvent(t, browser, shop.webhooks, "payment.succeeded webhook")
	checkoutEvent, ok := ev.(*billing.CheckoutEvent)
	require.True(t, ok, "%T", ev)
	assert.Equal(t, pay.Reference, checkoutEvent.Data.Reference)
	assert.Equal(t, paid.MobileMoneyDetail, checkoutEvent.Data.MobileMoneyDetail)

	// The page under the modal is inert: the merchant's code closes it once paid.
	require.NoError(t, chromedp.Run(browser,
		chromedp.Evaluate(`checkout.closePopUp()`, nil),
		chromedp.WaitVisible(`#events .event-onClose`, chromedp.ByQuery),
		chromedp.WaitNotPresent(`dialog.billing-checkout-modal`, chromedp.ByQuery),
	))
}

func TestBrowserModalOpensAndCloses(t *testing.T) {
	browser, shop, pay := openShop(t, 5000)

	var open bool
	var focused string
	require.NoError(t, chromedp.Run(browser,
		chromedp.Navigate(shop.server.URL+"/pay/modal/"+pay.Reference),
		chromedp.Click(`#pay`, chromedp.ByQuery),
		chromedp.WaitVisible(`dialog.billing-checkout-modal`, chromedp.ByQuery),
		chromedp.WaitVisible(`#events .event-onLoad`, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector('dialog.billing-checkout-modal').open`, &open),
		chromedp.Evaluate(`document.activeElement.getAttribute('aria-label')`, &focused),
		// Escape closes it, as the Close button and closePopUp do.
		chromedp.KeyEvent(kb.Escape),
		chromedp.WaitVisible(`#events .event-onClose`, chromedp.ByQuery),
		chromedp.WaitNotPresent(`dialog.billing-checkout-modal`, chromedp.ByQuery),
	))
	assert.True(t, open)
	assert.Equal(t, "Close checkout", focused, "the modal takes the focus")

	var closes int
	require.NoError(t, chromedp.Run(browser,
		chromedp.Evaluate(`document.activeElement.id`, &focused),
		chromedp.Click(`#pay`, chromedp.ByQuery),
		chromedp.WaitVisible(`dialog.billing-checkout-modal button[aria-label="Close checkout"]`, chromedp.ByQuery),
		chromedp.Click(`dialog.billing-checkout-modal button[aria-label="Close checkout"]`, chromedp.ByQuery),
		chromedp.WaitNotPresent(`dialog.billing-checkout-modal`, chromedp.ByQuery),
		chromedp.Evaluate(`window.shopEvents.filter(e => e.name === 'onClose').length`, &closes),
	))
	assert.Equal(t, "pay", focused, "closing gives the focus back")
	assert.Equal(t, 2, closes)

	still, err := shop.client.Payments.Get(browser, pay.Reference)
	require.NoError(t, err)
	assert.Equal(t, billing.PaymentStatusPending, still.Status, "closing pays nothing")
}

func TestBrowserWebSDKRefusesABadPublicKey(t *testing.T) {
	browser, shop, pay := openShop(t, 5000)

	var thrown string
	require.NoError(t, chromedp.Run(browser,
		chromedp.Navigate(shop.server.URL+"/pay/iframe/"+pay.Reference+"?publicKey="),
		chromedp.Click(`#pay`, chromedp.ByQuery),
		chromedp.WaitVisible(`#events .event-thrown`, chromedp.ByQuery),
		chromedp.Evaluate(`window.shopEvents[0].data.message`, &thrown),
	))
	assert.Contains(t, thrown, "BillingCheckout.initIframe: config.publicKey is required")
	assert.Len(t, shopEvents(t, browser), 1, "refused before onInit or any request")

	require.NoError(t, chromedp.Run(browser,
		chromedp.Navigate(shop.server.URL+"/pay/modal/"+pay.Reference+"?publicKey=pk_test_other"),
		chromedp.Click(`#pay`, chromedp.ByQuery),
		chromedp.WaitVisible(`#events .event-onPaymentFailure`, chromedp.ByQuery),
		chromedp.WaitNotPresent(`dialog.billing-checkout-modal`, chromedp.ByQuery),
	))
	failure := eventNamed(t, shopEvents(t, browser), "onPaymentFailure").Data
	assert.Equal(t, "4101", failure["code"], "the sandbox refuses another key")
	assert.Equal(t, 401.0, failure["httpStatus"])
	assert.Contains(t, failure["message"], "invalid public key")
}

// TestBrowserCheckoutPageOnAPhone opens the page at 375 pixels wide, uses it with the
// keyboard alone, and keeps a screenshot (in BILLING_SCREENSHOT_DIR when set).
func TestBrowserCheckoutPageOnAPhone(t *testing.T) {
	browser, shop, pay := openShop(t, 5000)

	var requested []string
	var mu sync.Mutex
	chromedp.ListenTarget(browser, func(ev any) {
		if req, ok := ev.(*network.EventRequestWillBeSent); ok {
			mu.Lock()
			requested = append(requested, req.Request.URL)
			mu.Unlock()
		}
	})
	var overflow bool
	var unlabelled []string
	var shot []byte
	require.NoError(t, chromedp.Run(browser,
		network.Enable(),
		chromedp.EmulateViewport(375, 812, chromedp.EmulateMobile, chromedp.EmulateScale(2)),
		chromedp.Navigate(pay.CheckoutURL),
		chromedp.WaitVisible(`.methods`, chromedp.ByQuery),
		chromedp.Evaluate(`document.documentElement.scrollWidth > window.innerWidth`, &overflow),
		chromedp.Evaluate(`[...document.querySelectorAll('input:not([type=hidden]), select')].filter(e => e.labels.length === 0).map(e => e.id || e.name)`, &unlabelled),
		chromedp.FullScreenshot(&shot, 100),
	))
	assert.False(t, overflow, "nothing wider than the phone")
	assert.Empty(t, unlabelled, "every field has a label")
	dir := os.Getenv("BILLING_SCREENSHOT_DIR")
	if dir == "" {
		dir = t.TempDir()
	}
	shotPath := filepath.Join(dir, "checkout-375.png")
	require.NoError(t, os.WriteFile(shotPath, shot, 0o644))
	t.Logf("screenshot at 375px: %s", shotPath)

	// Keyboard only: Tab to the method, arrow to mobile money, Tab through the fields,
	// Enter to confirm, type the PIN, Enter to approve.
	var active string
	require.NoError(t, chromedp.Run(browser,
		chromedp.KeyEvent(kb.Tab),
		chromedp.Evaluate(`document.activeElement.value`, &active),
	))
	assert.Equal(t, "CARD", active, "the method choice comes first")
	require.NoError(t, chromedp.Run(browser,
		chromedp.KeyEvent(kb.ArrowRight),
		chromedp.WaitVisible(`#panel-MOBILE_MONEY`, chromedp.ByQuery),
		chromedp.KeyEvent(kb.Tab), // the network
		chromedp.KeyEvent(kb.Tab), // the number, filled from the customer
		chromedp.Evaluate(`document.activeElement.id`, &active),
	))
	assert.Equal(t, "phone", active)
	require.NoError(t, chromedp.Run(browser,
		chromedp.KeyEvent(kb.Enter),
		chromedp.WaitVisible(`#pin`, chromedp.ByQuery),
		chromedp.Evaluate(`document.activeElement.id`, &active),
	))
	assert.Equal(t, "pin", active, "confirming moves to the PIN")
	require.NoError(t, chromedp.Run(browser,
		chromedp.KeyEvent("4321"),
		chromedp.KeyEvent(kb.Enter),
		chromedp.WaitVisible(`#thanks`, chromedp.ByQuery), // opened directly: back to returnUrl
	))
	paid, err := shop.client.Payments.Get(browser, pay.Reference)
	require.NoError(t, err)
	assert.Equal(t, "233241234567", paid.MobileMoneyDetail.Phone, "the customer's own number")

	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, requested)
	for _, u := range requested {
		assert.True(t, strings.HasPrefix(u, shop.sandbox.URL+"/") || strings.HasPrefix(u, shop.server.URL+"/"),
			"%s: the checkout loads nothing from other hosts", u)
	}
}
