#!/usr/bin/env bash
# Runs pgstore's Run benchmarks on this tree and on a base revision side by side, on one
# throwaway PostgreSQL cluster, their runs interleaved (base, this, this, base, ...) so
# that both see the same machine and neither always runs after the other, then pgbench's rate for a transaction of the same
# statements on the same cluster, the figures' ceiling.
#
#   scripts/benchstore.sh 7c3e38e              # ROUNDS=3
#   ROUNDS=5 BENCH='RunResolutions' scripts/benchstore.sh main
#
# The base is built with this tree's pgstore/run_bench_test.go, so both run the same
# benchmarks.
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:?usage: scripts/benchstore.sh <base revision>}
ROUNDS=${ROUNDS:-3}
BENCH=${BENCH:-RunResolutions|BacklogDrain}
work=$(mktemp -d "${TMPDIR:-/tmp}/benchstore.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/base"
git archive "$base" | tar -x -C "$work/base"
cp pgstore/run_bench_test.go "$work/base/pgstore/"
(cd "$work/base/pgstore" && go test -c -o "$work/base.test" .)
(cd pgstore && go test -c -o "$work/this.test" .)
{
	go version
	grep -m1 'model name' /proc/cpuinfo 2>/dev/null || true
	echo "cores: $(nproc); load: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "base: $(git rev-parse --short "$base"); this: $(git rev-parse --short HEAD)$(git diff --quiet || echo ' (with changes)')"
} >&2
# shellcheck disable=SC2016 # expanded by the inner shell
scripts/pgtest.sh bash -c '
	set -euo pipefail
	for round in $(seq 1 '"$ROUNDS"'); do
		order="base this"
		[ $((round % 2)) -eq 0 ] && order="this base" # ABBA: neither always runs after the other
		for which in $order; do
			echo "== round $round: $which"
			(cd pgstore && '"$work"'/$which.test -test.run "^\$" -test.bench "'"$BENCH"'" -test.benchtime 1x) | grep -E "^Benchmark"
		done
	done
	bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
	host=$(echo "$DATABASE_URL" | sed -E "s/.*host=([^&]*).*/\1/")
	"$bin/psql" -q -h "$host" -U postgres -d billing_test -f scripts/benchstore/schema.sql
	for clients in 1 8; do
		echo "== pgbench: a resolution'"'"'s statements in one transaction, $clients clients, 10 s"
		"$bin/pgbench" -n -h "$host" -U postgres -c "$clients" -j 2 -T 10 -f scripts/benchstore/resolution.sql billing_test |
			grep -E "^(tps|latency average|number of transactions actually)"
	done
'
