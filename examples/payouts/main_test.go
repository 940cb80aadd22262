package main

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPayoutsRuns(t *testing.T) {
	t.Setenv("BILLING_BASE_URL", "")
	t.Setenv("BILLING_CLIENT_ID", "")
	t.Setenv("BILLING_CLIENT_SECRET", "")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out bytes.Buffer
	require.NoError(t, run(ctx, &out))
	assert.Equal(t, `  disbursement balance: 1000000.00 GHS
sending 150.00 GHS to Kofi: PROCESSING, fee 1.50
  outcome by callback: succeeded, code 0000
  disbursement balance: 999848.50 GHS
sending 150.00 GHS to a wallet the network refuses: PROCESSING, fee 1.50
  outcome by callback: failed, code 4075
  disbursement balance: 999848.50 GHS
sending 500.00 GHS to account 1441000123456: charges 1.00, debited 501.00
  outcome by callback: succeeded, code 0000
  disbursement balance: 999347.50 GHS
sending 500.00 GHS to account 1441000120001: charges 1.00, debited 501.00
  outcome by callback: failed, code 2001
  disbursement balance: 999347.50 GHS
refused before sending: provider must be one of MTN, TELECEL, AIRTELTIGO
`, out.String()[bytes.IndexByte(out.Bytes(), '\n')+1:], "everything after the line naming the sandbox")
}
