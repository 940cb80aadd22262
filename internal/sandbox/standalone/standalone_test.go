package standalone

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"io"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/billingsdk/billing-go/internal/sandbox"
)

func TestParsePrefixes(t *testing.T) {
	prefixes, err := parsePrefixes([]string{"127.0.0.0/8", "10.1.2.3/8", "::1", "203.0.113.9", "::ffff:198.51.100.1"})
	require.NoError(t, err)
	assert.Equal(t, []netip.Prefix{
		netip.MustParsePrefix("127.0.0.0/8"),
		netip.MustParsePrefix("10.0.0.0/8"),
		netip.MustParsePrefix("::1/128"),
		netip.MustParsePrefix("203.0.113.9/32"),
		netip.MustParsePrefix("198.51.100.1/32"),
	}, prefixes)
	assert.Equal(t, []string{"a", "b"}, splitList(" a, ,b,"))
}

func TestParseAmount(t *testing.T) {
	for text, want := range map[string]int64{"1000000": 100_000_000, "250.5": 25_050, "0.01": 1, "10.00": 1_000} {
		got, err := parseAmount(text)
		require.NoError(t, err, text)
		assert.Equal(t, want, got, text)
	}
	for _, text := range []string{"", "0", "0.00", "-5", "1.234", "1.", ".5", "1e3", "ten", "1000000000000"} {
		_, err := parseAmount(text)
		assert.Error(t, err, text)
	}
	assert.Equal(t, "1000000.00", formatAmount(100_000_000))
	assert.Equal(t, "0.05", formatAmount(5))
}

func TestRunWithAManualClock(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, stdout := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, "sandbox", []string{"-addr", "127.0.0.1:0", "-manual-clock"}, stdout)
		_ = stdout.Close()
	}()
	banner := map[string]string{}
	for lines := bufio.NewScanner(out); lines.Scan() && !strings.HasPrefix(lines.Text(), "Press Ctrl+C"); {
		if label, value, ok := strings.Cut(lines.Text(), ":"); ok {
			banner[strings.TrimSpace(label)] = strings.TrimSpace(value)
		}
	}
	go func() { _, _ = io.Copy(io.Discard, out) }()
	assert.Contains(t, banner["clock"], "manual, stopped at 2025-01-01T00:00:00Z")
	// The banner lists every control of the route table, the ones added later too.
	controls := sandbox.ControlPatterns()
	assert.Contains(t, controls, "GET /sandbox/subscriptions/{id}/invoices")
	for _, pattern := range controls {
		assert.Contains(t, banner["sandbox controls"], pattern)
	}

	advance := func(body string) string {
		req, err := http.NewRequest(http.MethodPost, banner["base URL"]+"/sandbox/clock/advance", strings.NewReader(body))
		require.NoError(t, err)
		req.SetBasicAuth(banner["client id"], banner["client secret"])
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", b)
		return string(b)
	}
	assert.Contains(t, advance(`{"duration":"1.25s"}`), `"exact":"2025-01-01T00:00:01.25Z"`, "the clock moved only as far as asked")
	assert.Contains(t, advance(`{"seconds":0}`), `"exact":"2025-01-01T00:00:01.25Z"`, "and not on its own")
	cancel()
	select {
	case err := <-done:
		assert.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
}

func TestRunSortsUsageErrorsFromFailures(t *testing.T) {
	ctx := context.Background()
	for _, args := range [][]string{{"-no-such-flag"}, {"-resolve-after", "soon"}, {"-disbursement-balance", "1.234"},
		{"-wire", "soap"}, {"-allow-ip", "nonsense"}, {"-faults", "GET /v1/nowhere=http-500"}, {"-checkout-lifetime", "0s"}, {"extra"}} {
		var usage *UsageError
		assert.ErrorAs(t, Run(ctx, "sandbox", args, io.Discard), &usage, "%q", args)
	}
	assert.ErrorIs(t, Run(ctx, "sandbox", []string{"-h"}, io.Discard), flag.ErrHelp)
	err := Run(ctx, "sandbox", []string{"-addr", "256.0.0.1:0"}, io.Discard)
	var usage *UsageError
	assert.Error(t, err)
	assert.False(t, errors.As(err, &usage), "an address that cannot be listened on is a failure")
	assert.ErrorContains(t, err, "pick another with -addr")
}
