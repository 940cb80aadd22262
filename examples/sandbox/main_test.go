package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/billingsdk/billing-go/internal/sandbox"
)

// startRun runs the command with args and returns its printed banner lines
// by label ("base URL" -> "http://..."), the function that stops it, and the
// channel that receives run's result.
func startRun(t *testing.T, args ...string) (map[string]string, context.CancelFunc, <-chan error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	out, stdout := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := run(ctx, args, stdout)
		_ = stdout.CloseWithError(io.EOF)
		done <- err
	}()

	banner := map[string]string{}
	lines := bufio.NewScanner(out)
	for lines.Scan() {
		if strings.HasPrefix(lines.Text(), "Press Ctrl+C") {
			break
		}
		if label, value, ok := strings.Cut(lines.Text(), ":"); ok {
			banner[strings.TrimSpace(label)] = strings.TrimSpace(value)
		}
	}
	go func() { _, _ = io.Copy(io.Discard, out) }() // request logs, if any
	return banner, cancel, done
}

// awaitReturn waits for run to return after its context ended.
func awaitReturn(t *testing.T, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("run did not return after its context ended")
		return nil
	}
}

func TestRunServesUntilItsContextEnds(t *testing.T) {
	banner, cancel, done := startRun(t, "-addr", "127.0.0.1:0", "-v")
	baseURL := banner["base URL"]
	require.True(t, strings.HasPrefix(baseURL, "http://127.0.0.1:"), "banner: %v", banner)
	assert.Equal(t, baseURL+"/checkout/", banner["hosted checkout"])
	assert.Equal(t, baseURL+"/sdk/checkout.js", banner["web SDK"])
	assert.Equal(t, sandbox.DefaultPublicKey, banner["public key (web SDK)"])
	assert.Equal(t, sandbox.DefaultClientID, banner["client id"])
	assert.Equal(t, sandbox.DefaultClientSecret, banner["client secret"])
	assert.Equal(t, sandbox.DefaultSecretKey, banner["secret key"])
	assert.Equal(t, sandbox.DefaultDisbursementAccount, banner["disbursement account"])
	assert.Equal(t, "2s", banner["resolve after"])
	assert.Equal(t, "1000000.00 GHS", banner["disbursement balance"])
	assert.Contains(t, banner["sandbox controls"], "POST /sandbox/payments/{reference}/complete")

	req, err := http.NewRequest(http.MethodPost, baseURL+"/v1/customers", strings.NewReader(`{"email":"ada@example.com","name":"Ada"}`))
	require.NoError(t, err)
	req.SetBasicAuth(banner["client id"], banner["client secret"])
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, http.StatusCreated, resp.StatusCode)
	var body struct {
		Success bool `json:"success"`
		Data    struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	assert.True(t, body.Success)
	assert.True(t, strings.HasPrefix(body.Data.ID, "cust_"))

	cancel()
	assert.NoError(t, awaitReturn(t, done))
	_, err = http.Get(baseURL + "/v1/customers")
	assert.Error(t, err, "the server is down")
}

func TestRunAppliesItsFlags(t *testing.T) {
	banner, cancel, done := startRun(t, "-addr", "127.0.0.1:0", "-scopes", "customers:read, products:read",
		"-allow-ip", "10.0.0.0/8,192.0.2.7", "-resolve-after", "0s", "-webhook-url", "http://127.0.0.1:9/hooks",
		"-disbursement-balance", "250.5", "-checkout-lifetime", "30m")
	assert.Equal(t, "customers:read, products:read", banner["scopes"])
	assert.Equal(t, "30m0s", banner["checkout lifetime"])
	assert.Equal(t, "1010101", banner["sales account (POS)"])
	assert.Equal(t, "10.0.0.0/8, 192.0.2.7/32", banner["allowed IPs"])
	assert.Equal(t, "0s", banner["resolve after"])
	assert.Equal(t, "250.50 GHS", banner["disbursement balance"])

	req, err := http.NewRequest(http.MethodPost, banner["base URL"]+"/v1/customers", strings.NewReader(`{"email":"ada@example.com","name":"Ada"}`))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+banner["secret key"])
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusForbidden, resp.StatusCode, "customers:write is not granted")

	cancel()
	assert.NoError(t, awaitReturn(t, done))
}

func TestRunScopesNone(t *testing.T) {
	banner, cancel, done := startRun(t, "-addr", "127.0.0.1:0", "-scopes", "none")
	assert.Empty(t, banner["scopes"])
	req, err := http.NewRequest(http.MethodGet, banner["base URL"]+"/v1/customers", nil)
	require.NoError(t, err)
	req.SetBasicAuth(banner["client id"], banner["client secret"])
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
	cancel()
	assert.NoError(t, awaitReturn(t, done))
}

func TestRunRefusesBadFlags(t *testing.T) {
	ctx := context.Background()
	assert.ErrorContains(t, run(ctx, []string{"-allow-ip", "10.0.0.0/8,nonsense"}, io.Discard), `"nonsense" is neither an address nor a CIDR prefix`)
	assert.Error(t, run(ctx, []string{"-no-such-flag"}, io.Discard))
	assert.Error(t, run(ctx, []string{"-addr", "256.0.0.1:0"}, io.Discard))
	assert.ErrorContains(t, run(ctx, []string{"-disbursement-balance", "10.123"}, io.Discard), "-disbursement-balance")
	assert.ErrorContains(t, run(ctx, []string{"-checkout-lifetime", "0s"}, io.Discard), "-checkout-lifetime")
}

func TestRunArmsItsFaults(t *testing.T) {
	banner, cancel, done := startRun(t, "-addr", "127.0.0.1:0",
		"-faults", "GET /v1/customers#2=http-503:7s; GET /v1/customers#3=malformed-json",
		"-callback-faults", "order7=drop;*#2=delay:10m")
	assert.Equal(t, "2 on requests, 2 on callbacks", banner["faults armed"])
	assert.Contains(t, banner["sandbox controls"], "POST /sandbox/faults")

	get := func() (*http.Response, []byte) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, banner["base URL"]+"/v1/customers", nil)
		require.NoError(t, err)
		req.SetBasicAuth(banner["client id"], banner["client secret"])
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp, body
	}
	first, _ := get()
	assert.Equal(t, http.StatusOK, first.StatusCode)
	second, _ := get()
	assert.Equal(t, http.StatusServiceUnavailable, second.StatusCode, "the second request")
	assert.Equal(t, "7", second.Header.Get("Retry-After"))
	_, third := get()
	assert.False(t, json.Valid(third), "the third request: %s", third)
	fourth, _ := get()
	assert.Equal(t, http.StatusOK, fourth.StatusCode, "the faults are spent")

	cancel()
	assert.NoError(t, awaitReturn(t, done))
}

func TestRunRefusesBadFaults(t *testing.T) {
	ctx := context.Background()
	assert.ErrorContains(t, run(ctx, []string{"-faults", "GET /v1/customers=lose"}, io.Discard), "-faults: sandbox: unknown fault kind")
	assert.ErrorContains(t, run(ctx, []string{"-faults", "GET /v1/nowhere=http-500"}, io.Discard), `-faults: sandbox: no route "GET /v1/nowhere"`)
	assert.ErrorContains(t, run(ctx, []string{"-faults", "GET /v1/customers#0=http-500"}, io.Discard), "-faults: fault")
	assert.ErrorContains(t, run(ctx, []string{"-callback-faults", "order7=drop:5m"}, io.Discard), "-callback-faults: fault")
	assert.ErrorContains(t, run(ctx, []string{"-callback-faults", "order7=lose"}, io.Discard), "-callback-faults: sandbox: unknown callback fault kind")
}

func TestRunAnswersOnTheWireItIsGiven(t *testing.T) {
	receive := func(t *testing.T, banner map[string]string, reference string) (map[string]json.RawMessage, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, banner["base URL"]+"/v1/payments/receive", strings.NewReader(
			`{"amount":80,"phone":"233241234567","provider":"MTN","description":"Order","metadata":{"clientReference":"`+reference+`"}}`))
		require.NoError(t, err)
		req.SetBasicAuth(banner["client id"], banner["client secret"])
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		var body map[string]json.RawMessage
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
		return body, resp.Header.Get("X-Request-Id")
	}
	for wire, answer := range map[string]string{"": "success responseCode message data", "spec": "success responseCode message data",
		"provider": "Message ResponseCode Data"} {
		t.Run("wire "+wire, func(t *testing.T) {
			args := []string{"-addr", "127.0.0.1:0"}
			if wire != "" {
				args = append(args, "-wire", wire)
			}
			banner, cancel, done := startRun(t, args...)
			want := wire
			if want == "" {
				want = "spec"
			}
			assert.Equal(t, want, banner["wire"])
			body, id := receive(t, banner, "rcv1")
			var got []string
			for key := range body {
				got = append(got, key)
			}
			assert.ElementsMatch(t, strings.Fields(answer), got)
			assert.Regexp(t, `^req_[0-9a-f]{24}$`, id)
			cancel()
			assert.NoError(t, awaitReturn(t, done))
		})
	}
	assert.ErrorContains(t, run(context.Background(), []string{"-wire", "soap"}, io.Discard), `-wire: unknown wire "soap": use spec or provider`)
}
