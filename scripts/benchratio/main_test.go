package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const sample = `goos: linux
BenchmarkCustomersGet/mode=serial/impl=sdk-2     1000  110 ns/op  0 new-conns  900 B/op  40 allocs/op
BenchmarkCustomersGet/mode=serial/impl=sdk-2     1000  100 ns/op  0 new-conns  900 B/op  40 allocs/op
BenchmarkCustomersGet/mode=serial/impl=sdk-2     1000  300 ns/op  0 new-conns  900 B/op  40 allocs/op
BenchmarkCustomersGet/mode=serial/impl=raw-2     1000  100 ns/op  0 new-conns  800 B/op  30 allocs/op
BenchmarkCustomersGet/mode=parallel8/impl=sdk-2  1000   50 ns/op  2 new-conns  900 B/op  80 allocs/op
BenchmarkCustomersGet/mode=parallel8/impl=raw-2  1000   50 ns/op  0 new-conns  800 B/op  30 allocs/op
BenchmarkSandboxGetCustomer-2                    5000 5000 ns/op  200000 req/s
BenchmarkCustomersGet/mode=serial/ratio-2         100 900000 ns/op  1.08 x-raw
BenchmarkCustomersList/items=10000/impl=sdk-2       3 30000000 ns/op  27000 peak-live-B
BenchmarkCustomersList/items=10000/impl=raw-2       3 40000000 ns/op  28000 peak-live-B
BenchmarkCustomersList/items=100000/impl=sdk-2      3 300000000 ns/op  29700 peak-live-B
BenchmarkCustomersList/items=100000/impl=raw-2      3 400000000 ns/op  45000 peak-live-B
BenchmarkCustomersGet/mode=serial/ratio-2         100 900000 ns/op  1.30 x-raw
BenchmarkCustomersGet/mode=serial/ratio-2         100 900000 ns/op  1.06 x-raw
PASS
`

func TestReportComparesMediansAgainstTargets(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, report(strings.NewReader(sample), &out))
	lines := out.String()
	assert.Regexp(t, `mode=serial\s+ns/op\s+110.0\s+100.0\s+1.100\s+ok \(<= 1.15x\)`, lines, "the median, not the outlier")
	assert.Regexp(t, `mode=serial\s+allocs/op\s+40.0\s+30.0\s+1.333\s+ok \(<= raw \+ 25\)`, lines)
	assert.Regexp(t, `mode=parallel8\s+allocs/op\s+80.0\s+30.0\s+2.667\s+MISSED`, lines)
	assert.Regexp(t, `mode=parallel8\s+new-conns\s+2.0\s+0.0\s+-\s+MISSED`, lines)
	assert.Regexp(t, `BenchmarkSandboxGetCustomer\s+200000.000`, lines)
	assert.Regexp(t, `100,000 over 10,000 \(sdk\)\s+1.100  ok`, lines)
	assert.Regexp(t, `mode=serial/ratio x-raw\s+1.080  ok \(<= 1.15x, interleaved\)`, lines)
}
