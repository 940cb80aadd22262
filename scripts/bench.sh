#!/usr/bin/env bash
# Runs the side-by-side benchmarks (the SDK beside hand-written net/http + encoding/json
# against the same server in the same run) and the sandbox's throughput benchmarks, then
# prints benchstat's comparison and the SDK/raw ratios against their targets.
#
#   scripts/bench.sh                 # COUNT=6 BENCHTIME=1s
#   COUNT=10 BENCHTIME=2s scripts/bench.sh
set -euo pipefail
cd "$(dirname "$0")/.."

COUNT=${COUNT:-6}
BENCHTIME=${BENCHTIME:-1s}
OUT=${OUT:-bench.txt}
BENCHSTAT=golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da

{
	go version
	grep -m1 'model name' /proc/cpuinfo 2>/dev/null || true
	echo "cores: $(nproc)"
} | tee "$OUT.machine"

go test -run '^$' -benchmem -count "$COUNT" -benchtime "$BENCHTIME" \
	-bench '^(BenchmarkCustomersCreate|BenchmarkCustomersCreateWide|BenchmarkCustomersGet|BenchmarkPaymentsReceive|BenchmarkParseEvent)$' . | tee "$OUT"
# A listing walks 10,000 or 100,000 items per op: a few ops are plenty.
go test -run '^$' -benchmem -count "$COUNT" -benchtime 3x \
	-bench '^BenchmarkCustomersList$' . | tee -a "$OUT"
go test -run '^$' -benchmem -count "$COUNT" -benchtime "$BENCHTIME" \
	-bench '^(BenchmarkSandboxGetCustomer|BenchmarkSandboxCreateCustomer)$' ./internal/sandbox | tee -a "$OUT"

echo
echo "== benchstat: the SDK (impl=sdk) beside its raw floor (impl=raw)"
go run "$BENCHSTAT" -col /impl "$OUT"
echo
echo "== SDK/raw ratios (medians) against the targets"
go run ./scripts/benchratio < "$OUT"
