#!/usr/bin/env bash
# Workers on one PostgreSQL server (docs/benchmarks.md, "PostgreSQL"): submits RUNS runs of
# example.steps (STEPS tiny steps each) and times how long K `loom worker` processes (separate
# homes: separate "machines"), each running up to CONCURRENCY at once, take to finish them all,
# for K in WORKERS (default "1 2 4"), ROUNDS times interleaved. Prints one line per
# measurement: workers, seconds, runs/s, steps/s. Needs LOOM_BENCH_POSTGRES_URL and a release
# build (build/release/loom).
set -euo pipefail
cd "$(dirname "$0")/.."
: "${LOOM_BENCH_POSTGRES_URL:?set LOOM_BENCH_POSTGRES_URL (scripts/postgres-test-cluster.sh start prints one)}"
loom=$PWD/build/release/loom
runs=${RUNS:-64} steps=${STEPS:-20} concurrency=${CONCURRENCY:-8} rounds=${ROUNDS:-3}
work=$(mktemp -d "${TMPDIR:-/tmp}/loom-pgworkers.XXXXXX")
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
export LOOM_DATABASE_URL=$LOOM_BENCH_POSTGRES_URL

for round in $(seq 1 "$rounds"); do
  for k in ${WORKERS:-1 2 4}; do
    LOOM_DATABASE_SCHEMA="bench_workers_${round}_${k}_$$"
    export LOOM_DATABASE_SCHEMA
    "$loom" --home "$work/submit" db migrate >/dev/null
    for i in $(seq 1 "$runs"); do
      "$loom" --home "$work/submit" run example.steps --id "r$i" --input "{\"steps\":$steps}" --submit >/dev/null
    done
    start=$(date +%s.%N)
    pids=()
    for w in $(seq 1 "$k"); do
      "$loom" --home "$work/machine-$w" worker --concurrency "$concurrency" --poll-ms 100 >/dev/null &
      pids+=($!)
    done
    while [ "$("$loom" --home "$work/submit" ls --json | grep -o '"status":"completed"' | wc -l)" -lt "$runs" ]; do
      sleep 0.05
    done
    end=$(date +%s.%N)
    kill -TERM "${pids[@]}"; wait "${pids[@]}" 2>/dev/null || true
    awk -v k="$k" -v s="$start" -v e="$end" -v r="$runs" -v n="$steps" -v round="$round" \
      'BEGIN { t = e - s; printf "round %d: workers %d: %.2f s, %.1f runs/s, %.0f steps/s\n", round, k, t, r / t, r * n / t }'
  done
done
