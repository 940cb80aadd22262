package main

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReceiveRuns(t *testing.T) {
	t.Setenv("BILLING_BASE_URL", "")
	t.Setenv("BILLING_CLIENT_ID", "")
	t.Setenv("BILLING_CLIENT_SECRET", "")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out bytes.Buffer
	require.NoError(t, run(ctx, &out))
	for _, line := range []string{
		"using an embedded sandbox",
		"asked a customer who approves (233241234567) for GHS 25.00: PROCESSING",
		"  outcome by callback: succeeded, code 0000",
		"asked a customer who types a wrong PIN (233241230001) for GHS 25.00: PROCESSING",
		"  outcome by callback: failed, code 2001",
		"status check: Paid, fulfilled true, GHS 25.00 paid, charges GHS 0.25, GHS 24.75 after charges",
		"declined at once: code 4070",
		"refused before sending: phone looks like a local number",
	} {
		assert.Contains(t, out.String(), line)
	}
}
