#!/usr/bin/env bash
# A private PostgreSQL cluster for the tests: `start` runs initdb in a new temporary folder and
# starts a server on 127.0.0.1 at a free port (fsync on, trust authentication for user loom),
# then prints the shell assignments the tests read:
#   LOOM_TEST_POSTGRES_URL=postgresql://loom@127.0.0.1:PORT/postgres
#   LOOM_TEST_POSTGRES_DIR=/tmp/loom-pg.XXXXXX
# `stop DIR` stops that server (by the pid in its postmaster.pid) and removes DIR. Nothing
# depends on a server an earlier run left. Usage:
#   eval "$(scripts/postgres-test-cluster.sh start)"; ...; scripts/postgres-test-cluster.sh stop "$LOOM_TEST_POSTGRES_DIR"
set -euo pipefail

bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
if [ -z "$bindir" ] || [ ! -x "$bindir/initdb" ]; then
  echo "postgres-test-cluster: no PostgreSQL server is installed (/usr/lib/postgresql/*/bin/initdb);" \
       "run scripts/bootstrap.sh, which installs postgresql-15" >&2
  exit 1
fi

# initdb and the server refuse to run as root: run them as the postgres user then.
as_owner=()
if [ "$(id -u)" -eq 0 ]; then as_owner=(runuser -u postgres --); fi

case "${1:-}" in
  start)
    dir=$(mktemp -d /tmp/loom-pg.XXXXXX)
    [ ${#as_owner[@]} -eq 0 ] || chown postgres: "$dir"
    if ! "${as_owner[@]}" "$bindir/initdb" -D "$dir/data" -U loom --auth=trust -E UTF8 \
        --locale=C.UTF-8 >"$dir/initdb.log" 2>&1; then
      cat "$dir/initdb.log" >&2
      exit 1
    fi
    for attempt in $(seq 1 20); do
      port=$((20000 + RANDOM % 30000))
      if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then continue; fi  # taken
      if "${as_owner[@]}" "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
          -o "-c listen_addresses=127.0.0.1 -p $port -c unix_socket_directories=$dir -c fsync=on -c max_connections=300" \
          start >/dev/null 2>&1; then
        echo "LOOM_TEST_POSTGRES_URL=postgresql://loom@127.0.0.1:$port/postgres"
        echo "LOOM_TEST_POSTGRES_DIR=$dir"
        exit 0
      fi
    done
    echo "postgres-test-cluster: the server did not start; its log:" >&2
    cat "$dir/server.log" >&2 || true
    exit 1
    ;;
  stop)
    dir="${2:?usage: postgres-test-cluster.sh stop DIR}"
    case "$dir" in /tmp/loom-pg.*) ;; *) echo "postgres-test-cluster: $dir is not a test cluster" >&2; exit 1 ;; esac
    if [ -f "$dir/data/postmaster.pid" ]; then
      pid=$(head -1 "$dir/data/postmaster.pid")
      kill -INT "$pid" 2>/dev/null || true  # fast shutdown
      for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -KILL "$pid" 2>/dev/null || true
    fi
    rm -rf "$dir"
    ;;
  *)
    echo "usage: postgres-test-cluster.sh start | stop DIR" >&2
    exit 2
    ;;
esac
