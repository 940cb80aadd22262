package main

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCheckoutRuns(t *testing.T) {
	t.Setenv("BILLING_BASE_URL", "")
	t.Setenv("BILLING_CLIENT_ID", "")
	t.Setenv("BILLING_CLIENT_SECRET", "")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out bytes.Buffer
	require.NoError(t, run(ctx, &out), out.String())
	assert.Regexp(t, `session (\w+): PENDING; send the payer to http://127\.0\.0\.1:\d+/checkout/(\w+)\n`, out.String())
	for _, line := range []string{
		"order1042: succeeded by callback: GHS 50.00, fee GHS 0.98; fulfil: true\n",
		"order1043: expired; fulfil: false\n",
	} {
		assert.Contains(t, out.String(), line)
	}
}
