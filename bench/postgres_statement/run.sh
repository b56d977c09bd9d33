#!/usr/bin/env bash
# The append's statement alone against the floor (docs/benchmarks.md, "PostgreSQL: the
# statement alone"): pgbench sends a bare autocommit INSERT of a 100-byte row (floor.sql) and
# the shape of Loom's leased append (append.sql) as prepared statements, one client, SECONDS
# each; then loom_postgres_bench measures its own floor and `BM_PgAppend/leased:1` (Loom's
# client and the real statement). ROUNDS rounds, interleaved. Prints per round the four times
# in µs and the two ratios, then their medians. Needs LOOM_BENCH_POSTGRES_URL, pgbench
# (postgresql-15) and a release build (build/release/bench/loom_postgres_bench).
set -euo pipefail
cd "$(dirname "$0")"
: "${LOOM_BENCH_POSTGRES_URL:?set LOOM_BENCH_POSTGRES_URL (scripts/postgres-test-cluster.sh start prints one)}"
url=$LOOM_BENCH_POSTGRES_URL
pgbench=$(pg_config --bindir 2>/dev/null || echo /usr/lib/postgresql/15/bin)/pgbench
[ -x "$pgbench" ] || pgbench=/usr/lib/postgresql/15/bin/pgbench
bench=../../build/release/bench/loom_postgres_bench
rounds=${ROUNDS:-5} seconds=${SECONDS_EACH:-4}
psql "$url" -q -v ON_ERROR_STOP=1 -f schema.sql >/dev/null

pgbenchMicros() {  # the average latency of script $1, in µs
  "$pgbench" -n -M prepared -c 1 -T "$seconds" -f "$1" "$url" 2>/dev/null |
    awk '/latency average/ {printf "%.0f", $4 * 1000}'
}
loomMicros() {  # us/step of benchmark $1 of loom_postgres_bench
  LOOM_BENCH_POSTGRES_URL=$url "$bench" --benchmark_filter="$1" --benchmark_min_time="$seconds" \
    2>/dev/null | awk -F'us/step=' '/us\/step=/ {sub(/us.*/, "", $2); printf "%.0f", $2}'
}

rows=$(mktemp)
trap 'rm -f "$rows"; psql "$url" -qc "DROP SCHEMA IF EXISTS loom_statement_bench CASCADE" >/dev/null 2>&1 || true' EXIT
echo "round pgbench:floor pgbench:append ratio loom:floor loom:append ratio"
for round in $(seq 1 "$rounds"); do
  a=$(pgbenchMicros floor.sql) b=$(pgbenchMicros append.sql)
  c=$(loomMicros 'BM_PgBareInsert') d=$(loomMicros 'BM_PgAppend/leased:1')
  echo "$round $a $b $(awk "BEGIN {printf \"%.2f\", $b / $a}") $c $d $(awk "BEGIN {printf \"%.2f\", $d / $c}")"
done | tee "$rows"
printf "median"
for column in 2 3 4 5 6 7; do
  printf " %s" "$(cut -d' ' -f"$column" "$rows" | sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}')"
done
echo
