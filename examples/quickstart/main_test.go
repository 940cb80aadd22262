package main

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestQuickstartRuns(t *testing.T) {
	t.Setenv("BILLING_BASE_URL", "")
	t.Setenv("BILLING_CLIENT_ID", "")
	t.Setenv("BILLING_CLIENT_SECRET", "")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out bytes.Buffer
	require.NoError(t, run(ctx, &out))
	for _, line := range []string{
		"using an embedded sandbox",
		"(Ama Mensah, +233241234567, ACTIVE)",
		"refused before sending: email must be an email address",
		"the same email again is refused",
		`phone "", status BLOCKED`,
		"among the blocked customers",
		"1 blocked customer(s) in all",
		"(Pro plan) at GHS 50.00 every 1 MONTH",
		"refused before sending: interval is required when isRecurring is true",
		": TRIALING for 7 days, then billed monthly",
		"asked 233241234567 to pay GHS 50.00: PROCESSING",
		"paid GHS 50.00 by callback, confirmed by the status check: fulfil the order",
	} {
		assert.Contains(t, out.String(), line)
	}
}
