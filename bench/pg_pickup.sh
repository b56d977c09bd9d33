#!/usr/bin/env bash
# Submit to first step across processes on PostgreSQL (docs/benchmarks.md, "Workers in one
# process"): one `loom worker` (in process, LISTEN/NOTIFY), then N one-step runs submitted by
# separate `loom run --submit` processes, 0.3 s apart. Prints each run's time from its
# EXECUTION_STARTED (written by the submitting process) to its STEP_COMPLETED (written by the
# worker after it claimed the run and ran the step, its commit included), sorted, in ms.
# Needs LOOM_DATABASE_URL; uses a fresh schema.
set -euo pipefail
: "${LOOM_DATABASE_URL:?set LOOM_DATABASE_URL to a PostgreSQL server}"
loom="${LOOM:-$(dirname "$0")/../build/release/loom}"
runs="${RUNS:-20}"
export LOOM_DATABASE_SCHEMA="pickup_$$"
home="$(mktemp -d)"
"$loom" --home "$home" db migrate >/dev/null
"$loom" --home "$home" worker >"$home/worker.log" 2>&1 &
worker=$!
trap 'kill "$worker" 2>/dev/null || true' EXIT
sleep 1.5
for i in $(seq 1 "$runs"); do
  "$loom" --home "$home" run example.steps --submit --id "p$i" --input '{"steps":1}' >/dev/null
  sleep 0.3
done
sleep 1
for i in $(seq 1 "$runs"); do
  "$loom" --home "$home" log "p$i" --json | python3 -c '
import datetime, json, sys
events = json.load(sys.stdin)
at = lambda e: datetime.datetime.fromisoformat(e["at"].replace("Z", "+00:00")).timestamp() * 1000
print(int(at(events[1]) - at(events[0])))'
done | sort -n | tr '\n' ' '
echo
