#!/usr/bin/env bash
# Measures the Tracker on PostgreSQL directly and through pgbouncer in pool_mode=transaction,
# side by side on one throwaway cluster (scripts/pgtest.sh starts both): pgstore's
# BenchmarkRunResolutions (direct, statements unnamed: the default),
# BenchmarkRunResolutionsNamed (direct, Options.NamedStatements) and
# BenchmarkRunResolutionsPooler (through the pooler) with 8 instances, their runs
# interleaved (the order reversed every other round) so that none always runs after
# another, each reporting resolutions per second and statements per movement; then
# pgbench's rate for a resolution's statements (scripts/benchstore/resolution.sql), 8
# clients, directly and through the same pooler.
#
#   scripts/benchpooler.sh              # ROUNDS=2
#   ROUNDS=4 scripts/benchpooler.sh
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-2}
work=$(mktemp -d "${TMPDIR:-/tmp}/benchpooler.XXXXXX")
trap 'rm -rf "$work"' EXIT
(cd pgstore && go test -c -o "$work/pgstore.test" .)
{
	go version
	grep -m1 'model name' /proc/cpuinfo 2>/dev/null || true
	echo "cores: $(nproc); load: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "this: $(git rev-parse --short HEAD)$(git diff --quiet || echo ' (with changes)')"
} >&2
# shellcheck disable=SC2016 # expanded by the inner shell
scripts/pgtest.sh bash -c '
	set -euo pipefail
	: "${BILLING_TEST_POOLER_URL:?pgbouncer did not start}"
	for round in $(seq 1 '"$ROUNDS"'); do
		order="direct named pooler"
		[ $((round % 2)) -eq 0 ] && order="pooler named direct"
		for which in $order; do
			case $which in
			direct) bench="^BenchmarkRunResolutions\$/^instances=8\$" ;;
			named) bench="^BenchmarkRunResolutionsNamed\$/^instances=8\$" ;;
			pooler) bench="^BenchmarkRunResolutionsPooler\$/^instances=8\$" ;;
			esac
			echo "== round $round: $which"
			(cd pgstore && '"$work"'/pgstore.test -test.run "^\$" -test.bench "$bench" -test.benchtime 1x) | grep -E "^Benchmark"
		done
	done
	bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
	host=$(echo "$DATABASE_URL" | sed -E "s/.*host=([^&]*).*/\1/")
	"$bin/psql" -q -h "$host" -U postgres -d billing_test -f scripts/benchstore/schema.sql
	for which in direct pooler; do
		where=(-h "$host")
		[ "$which" = pooler ] && where=(-h "$host/pooler" -p 6432)
		echo "== pgbench ($which): a resolution'"'"'s statements in one transaction, 8 clients, 10 s"
		"$bin/pgbench" -n "${where[@]}" -U postgres -c 8 -j 2 -T 10 -f scripts/benchstore/resolution.sql billing_test |
			grep -E "^(tps|latency average|number of transactions actually)"
	done
'
