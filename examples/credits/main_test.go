package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCreditsRuns(t *testing.T) {
	t.Setenv("BILLING_BASE_URL", "")
	t.Setenv("BILLING_CLIENT_ID", "")
	t.Setenv("BILLING_CLIENT_SECRET", "")
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))
	for _, line := range []string{
		"using an embedded sandbox",
		"granted 1000: wallet cwa_",
		"holds 1000 credits",
		"granted 200 expiring ",
		": balance 1200",
		"deducted 150: balance 1200 -> 1050",
		"deducting 5000 is refused: ",
		"a deduct of 5000 credits exceeds the balance of 1050",
		"31 days later the promo has expired: balance 1000",
		"ledger, newest first:\n  EXPIRY    50   1050 -> 1000  unused credits of grant ctx_",
		"  USAGE    150   1200 -> 1050  report export\n",
		"  GRANT    200   1000 -> 1200  launch promo\n",
		"  GRANT   1000      0 -> 1000  paid top-up\n",
	} {
		assert.Contains(t, out.String(), line)
	}
}
