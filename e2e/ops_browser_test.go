package e2e_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
	"github.com/billingsdk/billing-go/opsview"
)

// screenshotsEnv names the directory the operator's view test writes its screenshots
// to (docs/ops.md shows them); unset, it writes none, so that a test run leaves the tree
// as it found it.
const screenshotsEnv = "BILLING_OPS_SCREENSHOTS"

// An operator, in a real browser with no script run by the view, opens the overview,
// filters to the overdue movements, opens a paid payout and rechecks it (its status
// check settles it), then resolves a movement the service never saw with a reason and
// sees the audit line on its timeline.
func TestOperatorsViewInTheBrowser(t *testing.T) {
	ctx := newBrowser(t)
	srv := billingtest.NewServer(t, billingtest.WithManualClock())
	tracker := billing.NewTracker(srv.Client(), billing.TrackerOptions{Clock: srv.Clock(), CallbackURL: "http://127.0.0.1:9/callbacks",
		OnOutcome: func(context.Context, *billing.Outcome) error { return nil }})
	bg := context.Background()
	_, err := tracker.Send(bg, &billing.SendParams{Amount: 2000, Phone: "233201234567", Provider: billing.ProviderTelecel,
		Name: "Ama", Description: "refund", ClientReference: "refund-paid"})
	require.NoError(t, err)
	require.NoError(t, tracker.TrackAmount(bg, billing.KindSend, "refund-lost", billing.Money{Amount: 500, Currency: "GHS"}))
	srv.Advance(10 * time.Minute) // both overdue: their callbacks went nowhere

	mux := http.NewServeMux()
	mux.Handle("/ops/", opsview.NewHandler(opsview.Options{Tracker: tracker, Recheck: true, Resolve: true, Refresh: -1,
		Authorize: func(*http.Request, opsview.Action, opsview.Movement) (string, error) { return "ama.operator", nil }}))
	app := httptest.NewServer(mux)
	t.Cleanup(app.Close)

	shot := func(name string) chromedp.Action {
		return chromedp.ActionFunc(func(ctx context.Context) error {
			dir := os.Getenv(screenshotsEnv)
			if dir == "" {
				return nil
			}
			var png []byte
			if err := chromedp.FullScreenshot(&png, 100).Do(ctx); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(dir, "ops-"+name+".png"), png, 0o644)
		})
	}
	var overview, list, paid, lost string
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Navigate(app.URL+"/ops/"),
		chromedp.WaitVisible(`.cards`, chromedp.ByQuery),
		chromedp.Text(`main`, &overview, chromedp.ByQuery),
		shot("overview"),
		chromedp.Click(`a[href="movements?state=overdue"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`table`, chromedp.ByQuery),
		chromedp.Text(`table`, &list, chromedp.ByQuery),
		shot("overdue"),
	))
	assert.Contains(t, overview, "overdue")
	assert.Contains(t, list, "refund-paid")
	assert.Contains(t, list, "refund-lost")

	require.NoError(t, chromedp.Run(ctx,
		chromedp.Click(`//a[text()="refund-paid"]`, chromedp.BySearch),
		chromedp.WaitVisible(`button[value="recheck"]`, chromedp.ByQuery),
		chromedp.Click(`button[value="recheck"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`.notice`, chromedp.ByQuery),
		chromedp.Text(`main`, &paid, chromedp.ByQuery),
	))
	assert.Contains(t, paid, "Done: recheck")
	assert.Contains(t, paid, "settled succeeded", "the status check settled it")
	assert.Contains(t, paid, "operator recheck")

	require.NoError(t, chromedp.Run(ctx,
		chromedp.Navigate(app.URL+"/ops/movements?state=overdue"),
		chromedp.Click(`//a[text()="refund-lost"]`, chromedp.BySearch),
		chromedp.WaitVisible(`button[value="resolve"]`, chromedp.ByQuery),
		chromedp.SetValue(`form:has(button[value="resolve"]) select[name="state"]`, "failed", chromedp.ByQuery),
		chromedp.SendKeys(`form:has(button[value="resolve"]) input[name="reason"]`, "the service has no record of it", chromedp.ByQuery),
		chromedp.Click(`button[value="resolve"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`tr.audit`, chromedp.ByQuery),
		chromedp.Text(`main`, &lost, chromedp.ByQuery),
		shot("movement"),
	))
	assert.Contains(t, lost, "Done: resolve")
	assert.Contains(t, lost, "operator resolve")
	assert.Contains(t, lost, "by ama.operator: pending → failed; reason: the service has no record of it")
	assert.True(t, strings.Contains(lost, "settled failed"), "the operator's outcome stands")
}
