package main

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMandatesRuns(t *testing.T) {
	t.Setenv("BILLING_BASE_URL", "")
	t.Setenv("BILLING_CLIENT_ID", "")
	t.Setenv("BILLING_CLIENT_SECRET", "")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out bytes.Buffer
	require.NoError(t, run(ctx, &out))
	assert.Regexp(t, `mandate plan\d+: PENDING, verified by OTP, passcode starts [A-Z]{4}-\n`, out.String())
	assert.Regexp(t, `reactivated: PENDING, new passcode starts [A-Z]{4}-\n`, out.String())
	for _, line := range []string{
		"wrong passcode refused: code 4204\n",
		"approval by callback: succeeded\n",
		"charging GHS 49.99 (charges GHS 1.00)\n",
		"  outcome by callback: succeeded, code 0000\n",
		"mandate CANCELLED\n",
		"charge refused: code 4204\n",
		"new passcode accepted; the approval follows by callback\n",
	} {
		assert.Contains(t, out.String(), line)
	}
}
