package main

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWebhooksRuns(t *testing.T) {
	t.Setenv("BILLING_BASE_URL", "")
	t.Setenv("BILLING_CLIENT_ID", "")
	t.Setenv("BILLING_CLIENT_SECRET", "")
	t.Setenv("BILLING_CALLBACK_URL", "")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out bytes.Buffer
	require.NoError(t, run(ctx, &out))
	for _, line := range []string{
		"using an embedded sandbox",
		"asked for GHS 50.00 reference order…\n",
		"asked for GHS 50.00 reference order…silent\n",
		"paid out GHS 20.00 reference refund…\n",
		"receive order…: succeeded by callback, code 0000, GHS 50.00: fulfil the order\n",
		"send refund…: succeeded by callback, code 0000, GHS 20.00: fulfil the order\n",
		"a forged success callback was answered 403: nothing was fulfilled\n",
		"no callback for order…silent; moving the sandbox clock five minutes on\n",
		"receive order…silent: succeeded by status_check, code 0000, GHS 50.00: fulfil the order\n",
		"the shop's own event: payment.succeeded, succeeded\n",
	} {
		assert.Contains(t, out.String(), line)
	}
}
