package billing_test

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	billing "github.com/billingsdk/billing-go"
	"github.com/billingsdk/billing-go/billingtest"
)

// readmeGoLines returns the lines of the README's fenced go blocks.
func readmeGoLines(t *testing.T) []string {
	t.Helper()
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	var lines []string
	inGo := false
	for sc := bufio.NewScanner(bytes.NewReader(readme)); sc.Scan(); {
		line := sc.Text()
		switch trimmed := strings.TrimSpace(line); {
		case strings.HasPrefix(trimmed, "```go"):
			inGo = true
		case strings.HasPrefix(trimmed, "```"):
			inGo = false
		case inGo:
			lines = append(lines, line)
		}
	}
	return lines
}

// A moment the README's examples send to the service (an expiry) is taken from the
// sandbox's clock, srv.Now(): under billingtest.WithManualClock the wall clock is years
// away from the service's, and an expiry written with time.Now() is never reached by
// srv.Advance. The line is then run as written, and the grant expires when the sandbox's
// clock reaches it.
func TestReadmeExpiriesAreOnTheSandboxClock(t *testing.T) {
	moment := regexp.MustCompile(`ExpiresAt:\s*([^,}]+)`)
	var grant string
	for _, line := range readmeGoLines(t) {
		for _, m := range moment.FindAllStringSubmatch(line, -1) {
			assert.NotContains(t, m[1], "time.Now()", "the README sets an expiry on the wall clock: %s", strings.TrimSpace(line))
			assert.Contains(t, m[1], "srv.Now()", "an expiry on the sandbox's clock: %s", strings.TrimSpace(line))
		}
		if strings.Contains(line, "c.Credits.Grant(") {
			grant = line
		}
	}
	require.Contains(t, grant, "ExpiresAt: srv.Now().AddDate(0, 1, 0)", "the credits example grants for a month of the sandbox's time")

	ctx := context.Background()
	srv := billingtest.NewServer(t, billingtest.WithManualClock())
	c := srv.Client()
	customerID := newWalletOwner(t, c)
	_, err := c.Credits.Grant(ctx, customerID, &billing.CreditGrantParams{Amount: 1000, ExpiresAt: srv.Now().AddDate(0, 1, 0)})
	require.NoError(t, err)
	srv.Advance(srv.Now().AddDate(0, 1, 0).Sub(srv.Now()) + time.Second)
	wallet, err := c.Credits.Get(ctx, customerID)
	require.NoError(t, err)
	assert.Zero(t, wallet.Balance, "the month of the sandbox's clock passed: the grant expired")

	// The wall clock's month is not the sandbox's: the same grant written with time.Now()
	// outlives the month srv.Advance moves.
	_, err = c.Credits.Grant(ctx, customerID, &billing.CreditGrantParams{Amount: 1000, ExpiresAt: time.Now().AddDate(0, 1, 0)})
	require.NoError(t, err)
	srv.Advance(srv.Now().AddDate(0, 1, 0).Sub(srv.Now()) + time.Second)
	wallet, err = c.Credits.Get(ctx, customerID)
	require.NoError(t, err)
	assert.Equal(t, int64(1000), wallet.Balance, "an expiry on the wall clock is not reached by a month of sandbox time")
}
