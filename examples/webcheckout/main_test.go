package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	billing "github.com/billingsdk/billing-go"
)

// lineFeed hands each complete line run prints to the test.
type lineFeed struct {
	mu      sync.Mutex
	partial []byte
	lines   chan string
}

func (f *lineFeed) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.partial = append(f.partial, p...)
	for {
		i := bytes.IndexByte(f.partial, '\n')
		if i < 0 {
			return len(p), nil
		}
		f.lines <- string(f.partial[:i])
		f.partial = f.partial[i+1:]
	}
}

// await returns the submatches of the first line printed that matches pattern.
func (f *lineFeed) await(t *testing.T, ctx context.Context, pattern string) []string {
	t.Helper()
	re := regexp.MustCompile(pattern)
	for {
		select {
		case line := <-f.lines:
			if m := re.FindStringSubmatch(line); m != nil {
				return m
			}
		case <-ctx.Done():
			t.Fatalf("nothing printed matched %q: %v", pattern, ctx.Err())
			return nil
		}
	}
}

func get(t *testing.T, ctx context.Context, target string) string {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s: %s", target, body)
	return string(body)
}

func post(t *testing.T, ctx context.Context, target, contentType, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", contentType)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// TestWebCheckoutServesTheShop runs the example, opens its page, and then does what
// the web SDK and the payer do in a browser (the browser tests of the module drive
// the same page in Chromium): start the checkout with the page's purchaseInfo and
// config, and pay by mobile money on the hosted page.
func TestWebCheckoutServesTheShop(t *testing.T) {
	t.Setenv("BILLING_BASE_URL", "")
	t.Setenv("BILLING_CLIENT_ID", "")
	t.Setenv("BILLING_CLIENT_SECRET", "")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	runCtx, stop := context.WithCancel(ctx)
	out := &lineFeed{lines: make(chan string, 64)}
	done := make(chan error, 1)
	go func() { done <- run(runCtx, out) }()

	sandboxURL := out.await(t, ctx, `^using an embedded sandbox at (http://\S+) `)[1]
	shopURL := out.await(t, ctx, `^open (http://127\.0\.0\.1:\d+)/ to pay; Ctrl\+C stops$`)[1]

	page := get(t, ctx, shopURL+"/")
	assert.Contains(t, page, `<script src="`+sandboxURL+`/sdk/checkout.js"></script>`)
	assert.Contains(t, page, "new BillingCheckout()")
	assert.Contains(t, page, "Two bags of rice: GHS 50.00")
	assert.NotContains(t, page, "sandbox-secret", "the client secret never reaches the page")
	script := regexp.MustCompile(`const web = (\{.*\});`).FindStringSubmatch(page)
	require.NotNil(t, script, page)
	var web billing.WebCheckout
	require.NoError(t, json.Unmarshal([]byte(script[1]), &web))
	assert.Equal(t, "pk_test_sandbox", web.Config.PublicKey)
	assert.Equal(t, shopURL+"/callbacks", web.Config.CallbackURL)
	assert.Equal(t, int64(5000), web.PurchaseInfo.Amount)

	start, err := json.Marshal(map[string]any{"purchaseInfo": web.PurchaseInfo, "config": web.Config})
	require.NoError(t, err)
	started := post(t, ctx, sandboxURL+"/sdk/sessions", "application/json", string(start))
	require.Equal(t, http.StatusOK, started.StatusCode)
	var session struct {
		Data struct{ Reference, CheckoutURL string }
	}
	require.NoError(t, json.NewDecoder(started.Body).Decode(&session))
	assert.Equal(t, web.CheckoutURL, session.Data.CheckoutURL)

	form := url.Values{"method": {"MOBILE_MONEY"}, "network": {"MTN"}, "phone": {"233241234567"}, "pin": {"1234"}}
	paid := post(t, ctx, web.CheckoutURL, "application/x-www-form-urlencoded", form.Encode())
	require.Equal(t, http.StatusOK, paid.StatusCode, "the hosted page shows the outcome after its redirect")
	reference := session.Data.Reference

	thanks := get(t, ctx, shopURL+"/thanks?reference="+reference+"&status=SUCCEEDED")
	assert.Contains(t, thanks, "Payment "+reference+": SUCCEEDED", "the shop asks the service")
	out.await(t, ctx, `^webhook payment\.succeeded for `+reference+`: succeeded$`)
	out.await(t, ctx, `^transaction callback transaction for `+reference+`: succeeded$`)

	stop()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-ctx.Done():
		t.Fatal("run did not return after its context ended")
	}
}
