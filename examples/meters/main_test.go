package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMetersRuns(t *testing.T) {
	t.Setenv("BILLING_BASE_URL", "")
	t.Setenv("BILLING_CLIENT_ID", "")
	t.Setenv("BILLING_CLIENT_SECRET", "")
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))
	for _, line := range []string{
		"using an embedded sandbox",
		"(Search API calls, SUM)",
		"recorded batch-1: 120 calls as mte_",
		"recorded batch-3: 45 calls as mte_",
		"not counted twice: true",
		"events, most recently ingested first:\n  batch-3    45\n  batch-2    80\n  batch-1   120\n",
		"usage this period: 245 calls in 3 events (SUM)",
		"seats in use now: 6 (LAST of 4 readings)",
	} {
		assert.Contains(t, out.String(), line)
	}
}
