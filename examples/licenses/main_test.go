package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLicensesRuns(t *testing.T) {
	t.Setenv("BILLING_BASE_URL", "")
	t.Setenv("BILLING_CLIENT_ID", "")
	t.Setenv("BILLING_CLIENT_SECRET", "")
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))
	assert.Regexp(t, `issued [A-Z0-9]{4}(-[A-Z0-9]{4}){3} to Esi Owusu for Photo Editor: ACTIVE, 2 seats, expires 2025-01-31\n`, out.String())
	for _, line := range []string{
		"using an embedded sandbox",
		"laptop: activated, 1 of 2 seats used\n",
		"desktop: activated, 2 of 2 seats used\n",
		"tablet: refused, every seat is taken\n",
		"tablet while suspended: refused, the license is suspended\n",
		"tablet with a third seat: activated, 3 of 3 seats used\n",
		"31 days later the license is EXPIRED\n",
		"phone: refused, the license has expired\n",
		"renewed without expiry: ACTIVE\n",
		"revoked: REVOKED\n",
		"laptop again: refused, the license is revoked\n",
		"a revoked license cannot be reinstated: true\n",
	} {
		assert.Contains(t, out.String(), line)
	}
}
