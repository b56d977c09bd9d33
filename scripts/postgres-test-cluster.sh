#!/usr/bin/env bash
# A private PostgreSQL cluster for the tests: `start` runs initdb in a new temporary folder and
# starts a server on 127.0.0.1 at a free port (fsync on; user loom with a random password,
# scram-sha-256, no trust), then prints the shell assignments the tests read:
#   LOOM_TEST_POSTGRES_URL=postgresql://loom:PASSWORD@127.0.0.1:PORT/postgres
#   LOOM_TEST_POSTGRES_DIR=/tmp/loom-pg.XXXXXX
# `restart DIR` restarts that server as a crash would (pg_ctl restart -m immediate: no
# checkpoint, recovery from the WAL) on the same port. `stop DIR` stops that server (pg_ctl
# stop, as the user that runs it) and removes DIR. Nothing
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
    started=0
    cleanup() { [ "$started" -eq 1 ] || rm -rf "$dir"; }
    trap cleanup EXIT
    password=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
    (umask 077; echo "$password" >"$dir/pwfile")
    [ ${#as_owner[@]} -eq 0 ] || chown -R postgres: "$dir"
    if ! "${as_owner[@]}" "$bindir/initdb" -D "$dir/data" -U loom --pwfile="$dir/pwfile" \
        --auth=scram-sha-256 -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1; then
      cat "$dir/initdb.log" >&2
      exit 1
    fi
    rm -f "$dir/pwfile"
    for attempt in $(seq 1 20); do
      port=$((20000 + RANDOM % 30000))
      if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then continue; fi  # taken
      if "${as_owner[@]}" "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
          -o "-c listen_addresses=127.0.0.1 -p $port -c unix_socket_directories=$dir -c fsync=on -c max_connections=300" \
          start >/dev/null 2>&1; then
        started=1
        echo "LOOM_TEST_POSTGRES_URL=postgresql://loom:$password@127.0.0.1:$port/postgres"
        echo "LOOM_TEST_POSTGRES_DIR=$dir"
        exit 0
      fi
    done
    echo "postgres-test-cluster: the server did not start; its log:" >&2
    cat "$dir/server.log" >&2 || true
    exit 1
    ;;
  restart)
    dir="${2:?usage: postgres-test-cluster.sh restart DIR}"
    if ! [[ "$dir" =~ ^/tmp/loom-pg\.[A-Za-z0-9]{6}$ ]]; then
      echo "postgres-test-cluster: $dir is not a test cluster folder" >&2
      exit 1
    fi
    "${as_owner[@]}" "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -m immediate -w -t 60 \
      restart >/dev/null
    ;;
  stop)
    dir="${2:?usage: postgres-test-cluster.sh stop DIR}"
    if ! [[ "$dir" =~ ^/tmp/loom-pg\.[A-Za-z0-9]{6}$ ]]; then
      echo "postgres-test-cluster: $dir is not a test cluster folder" >&2
      exit 1
    fi
    if [ -f "$dir/data/postmaster.pid" ]; then
      "${as_owner[@]}" "$bindir/pg_ctl" -D "$dir/data" -m fast -w -t 30 stop >/dev/null 2>&1 ||
        "${as_owner[@]}" "$bindir/pg_ctl" -D "$dir/data" -m immediate -w -t 30 stop >/dev/null 2>&1 ||
        echo "postgres-test-cluster: the server of $dir did not stop; see $dir/server.log" >&2
    fi
    rm -rf "$dir"
    ;;
  *)
    echo "usage: postgres-test-cluster.sh start | restart DIR | stop DIR" >&2
    exit 2
    ;;
esac
