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
	assert.Equal(t, `  disbursement balance: GHS 1,000,000.00
sending GHS 150.00 to Kofi: PROCESSING, fee GHS 1.50
  outcome by callback: succeeded, code 0000
  disbursement balance: GHS 999,848.50
sending GHS 150.00 to Ama (test number 0004: insufficient balance): PROCESSING, fee GHS 1.50
  outcome by callback: failed, code 4075
  disbursement balance: GHS 999,848.50
sending GHS 500.00 to account 1441000123456: charges GHS 1.00, debited GHS 501.00
  outcome by callback: succeeded, code 0000
  disbursement balance: GHS 999,347.50
sending GHS 500.00 to account 1441000120001: charges GHS 1.00, debited GHS 501.00
  outcome by callback: failed, code 2001
  disbursement balance: GHS 999,347.50
refused before sending: provider must be one of MTN, TELECEL, AIRTELTIGO
`, out.String()[bytes.IndexByte(out.Bytes(), '\n')+1:], "everything after the line naming the sandbox")
}
