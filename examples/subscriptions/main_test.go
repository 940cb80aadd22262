package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSubscriptionsRuns(t *testing.T) {
	t.Setenv("BILLING_BASE_URL", "")
	t.Setenv("BILLING_CLIENT_ID", "")
	t.Setenv("BILLING_CLIENT_SECRET", "")
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))
	for _, line := range []string{
		"using an embedded sandbox",
		": GHS 50.00 a month, 14-day trial\n",
		" is TRIALING until 2025-01-15\n",
		"webhook customer.subscription.trial for sub_",
		"14 days later: ACTIVE, billed 2025-01-15 to 2025-02-15\n",
		"renewed: billed 2025-02-15 to 2025-03-15\n",
		"PAUSED for 60 days: no renewal\n",
		"ACTIVE again: a new period 2025-04-16 to 2025-05-16\n",
		"cancel asked on 2025-04-16: ACTIVE until 2025-05-16\n",
		"on 2025-05-16: CANCELED\n",
		"resuming it is refused (invalid_state): subscription sub_",
	} {
		assert.Contains(t, out.String(), line)
	}
}
