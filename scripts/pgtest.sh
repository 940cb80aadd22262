#!/usr/bin/env bash
# Runs a command against a throwaway PostgreSQL cluster, then stops the cluster and
# deletes it. The command finds the database in BILLING_TEST_DATABASE_URL and
# DATABASE_URL, and the same database behind pgbouncer in transaction mode
# (pool_mode=transaction: each transaction may run on another server connection, as
# behind RDS Proxy or Supavisor) in BILLING_TEST_POOLER_URL. Without a command it runs
# the PostgreSQL store's tests:
#
#   scripts/pgtest.sh                                    # cd pgstore && go test -race -count=1 ./...
#   scripts/pgtest.sh bash -c 'cd pgstore && go test -run Conformance ./...'
#
# PostgreSQL and pgbouncer come from the Debian packages, installed when missing
# (apt-get, as root or through sudo). The cluster and the pooler listen only on unix
# sockets in a temporary directory, with trust authentication, so they collide with no
# other server and need no password. Where pgbouncer cannot be installed,
# BILLING_TEST_POOLER_URL stays unset: the pooler's tests skip, or fail under CI=true.
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
pgbouncer=$(command -v pgbouncer || ls /usr/sbin/pgbouncer 2>/dev/null || true)
if [ -z "$pgbouncer" ]; then
	echo "pgtest: installing pgbouncer from the distribution's packages" >&2
	{ $as_root apt-get update && DEBIAN_FRONTEND=noninteractive $as_root apt-get install -y pgbouncer; } >&2 ||
		echo "pgtest: pgbouncer could not be installed" >&2
	pgbouncer=$(command -v pgbouncer || ls /usr/sbin/pgbouncer 2>/dev/null || true)
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
	if [ -s "$dir/pooler/pgbouncer.pid" ]; then
		kill "$(cat "$dir/pooler/pgbouncer.pid")" 2>/dev/null || true
	fi
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

# pgbouncer in transaction mode before the same database, on a socket of its own
# directory (pgbouncer refuses to run as root: as root, it runs as postgres). Its admin
# console (database pgbouncer, user postgres) shows its statistics.
if [ -n "$pgbouncer" ]; then
	mkdir "$dir/pooler"
	[ "$(id -u)" -eq 0 ] && chown postgres "$dir/pooler"
	echo '"postgres" ""' >"$dir/pooler/users.txt"
	cat >"$dir/pooler/pgbouncer.ini" <<EOF
[databases]
billing_test = host=$dir dbname=billing_test user=postgres

[pgbouncer]
listen_addr =
listen_port = 6432
unix_socket_dir = $dir/pooler
auth_type = trust
auth_file = $dir/pooler/users.txt
admin_users = postgres
pool_mode = transaction
default_pool_size = 40
max_client_conn = 1000
logfile = $dir/pooler/pgbouncer.log
pidfile = $dir/pooler/pgbouncer.pid
EOF
	if run_pg "$pgbouncer" -d "$dir/pooler/pgbouncer.ini" >/dev/null 2>&1; then
		for _ in $(seq 50); do
			[ -S "$dir/pooler/.s.PGSQL.6432" ] && break
			sleep 0.1
		done
	fi
	if [ -S "$dir/pooler/.s.PGSQL.6432" ]; then
		export BILLING_TEST_POOLER_URL="postgres://postgres@/billing_test?host=$dir/pooler&port=6432&sslmode=disable"
		echo "pgtest: pgbouncer $("$pgbouncer" --version | awk 'NR == 1 {print $2}') (pool_mode=transaction) at $BILLING_TEST_POOLER_URL" >&2
	else
		echo "pgtest: pgbouncer did not start" >&2
		cat "$dir/pooler/pgbouncer.log" >&2 2>/dev/null || true
	fi
fi

if [ "$#" -eq 0 ]; then
	set -- bash -c 'cd pgstore && go test -race -count=1 ./...'
fi
"$@"
