#!/usr/bin/env bash
# Runs a command against a throwaway PostgreSQL cluster, then stops the cluster and
# deletes it. The command finds the database in BILLING_TEST_DATABASE_URL and
# DATABASE_URL. Without a command it runs the PostgreSQL store's tests:
#
#   scripts/pgtest.sh                                    # cd pgstore && go test -race -count=1 ./...
#   scripts/pgtest.sh bash -c 'cd pgstore && go test -run Conformance ./...'
#
# PostgreSQL comes from the Debian packages, installed when missing (apt-get, as root
# or through sudo). The cluster listens only on a unix socket in a temporary directory,
# with trust authentication, so it collides with no other server and needs no password.
set -euo pipefail
cd "$(dirname "$0")/.."

as_root=""
if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1; then
	as_root="sudo"
fi

pg_bin() {
	ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1
}
bin=$(pg_bin)
if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
	echo "pgtest: installing PostgreSQL from the distribution's packages" >&2
	$as_root apt-get update
	DEBIAN_FRONTEND=noninteractive $as_root apt-get install -y postgresql
	bin=$(pg_bin)
fi

# initdb refuses to run as root: as root, the cluster belongs to the postgres user.
run_pg() { "$@"; }
if [ "$(id -u)" -eq 0 ]; then
	if ! id postgres >/dev/null 2>&1; then
		useradd --system --home-dir /var/lib/postgresql --shell /bin/sh postgres
	fi
	run_pg() { runuser -u postgres -- "$@"; }
fi

dir=$(mktemp -d "${TMPDIR:-/tmp}/billing-pgtest.XXXXXX")
chmod 755 "$dir"
[ "$(id -u)" -eq 0 ] && chown postgres "$dir"

stop() {
	run_pg "$bin/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
	rm -rf "$dir"
}
trap stop EXIT

run_pg "$bin/initdb" -D "$dir/data" -U postgres --auth=trust --encoding=UTF8 --no-sync >"$dir/initdb.log" 2>&1 ||
	{ cat "$dir/initdb.log" >&2; exit 1; }
# No TCP, a socket in our directory; durability is not wanted from a throwaway cluster.
# pg_stat_statements (shipped with the server package) lets benchmarks count the
# statements the store runs.
run_pg "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -o \
	"-c listen_addresses='' -c unix_socket_directories='$dir' -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200 -c shared_preload_libraries=pg_stat_statements" \
	start >/dev/null ||
	{ cat "$dir/server.log" >&2; exit 1; }
run_pg "$bin/createdb" -h "$dir" -U postgres billing_test
run_pg "$bin/psql" -h "$dir" -U postgres -d billing_test -q -c 'CREATE EXTENSION pg_stat_statements' >/dev/null

url="postgres://postgres@/billing_test?host=$dir&sslmode=disable"
export BILLING_TEST_DATABASE_URL="$url"
export DATABASE_URL="$url"
echo "pgtest: PostgreSQL $("$bin/postgres" --version | awk '{print $3}') at $url" >&2

if [ "$#" -eq 0 ]; then
	set -- bash -c 'cd pgstore && go test -race -count=1 ./...'
fi
"$@"
