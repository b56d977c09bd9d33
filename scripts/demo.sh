#!/usr/bin/env bash
# The crash-and-resume demo. Builds `loom`, starts `loom run example.steps` (20 steps of
# 150 ms; each step appends its id to a witness file) in the background with a fresh home,
# kills it with SIGKILL half-way, runs `loom resume <id>` in a new process, and shows that
# every step ran exactly once, except at most the one that was in flight at the kill.
# DEMO_STEPS and DEMO_SLEEP_MS change the size; LOOM_BUILD_JOBS caps the compile jobs.
set -euo pipefail
cd "$(dirname "$0")/.."

steps=${DEMO_STEPS:-20}
sleep_ms=${DEMO_SLEEP_MS:-150}

./scripts/bootstrap.sh
[ -f build/release/build.ninja ] || cmake --preset release >/dev/null
cmake --build --preset release --target loom --parallel "${LOOM_BUILD_JOBS:-$(nproc)}" >/dev/null

loom=./build/release/loom
work=$(mktemp -d "${TMPDIR:-/tmp}/loom-demo.XXXXXX")
home=$work/home
witness=$work/witness.txt
id=demo-$(date +%s)
lines() { if [ -f "$witness" ]; then wc -l <"$witness"; else echo 0; fi; }

echo "== loom run example.steps: $steps steps of ${sleep_ms} ms each, id $id, home $home"
"$loom" --home "$home" run example.steps --id "$id" \
  --input "{\"steps\": $steps, \"sleepMs\": $sleep_ms, \"witness\": \"$witness\"}" \
  >"$work/run.out" 2>&1 &
pid=$!
until [ "$(lines)" -ge $((steps / 2)) ]; do
  if ! kill -0 "$pid" 2>/dev/null; then
    echo "demo: the run ended before it could be killed; see $work/run.out" >&2
    exit 1
  fi
  sleep 0.02
done
kill -KILL "$pid"
{ wait "$pid"; } 2>/dev/null || true
at_kill=$(lines)
recorded=$("$loom" --home "$home" ls --json | grep -o '"steps":[0-9]*' | cut -d: -f2)
echo "== killed with SIGKILL: the witness file had $at_kill lines, the log $recorded recorded steps"
"$loom" --home "$home" ls

echo
echo "== loom resume $id (a fresh process)"
result=$("$loom" --home "$home" resume "$id" --json)
echo "$result"
replayed=$(grep -o '"replayedSteps":[0-9]*' <<<"$result" | cut -d: -f2)
ran=$(grep -o '"effectsRun":[0-9]*' <<<"$result" | cut -d: -f2)

echo
echo "== the witness file: how many times each step ran"
sort -t- -k2 -n "$witness" | uniq -c |
  awk '{printf "  %-8s x%s", $2, $1} NR % 5 == 0 {print ""} END {if (NR % 5) print ""}'
total=$(wc -l <"$witness")
distinct=$(sort -u "$witness" | wc -l)
repeated=$(sort "$witness" | uniq -d)

echo
echo "What happened:"
echo "  before the kill   $recorded steps were recorded in the log ($at_kill witness lines)"
echo "  the resume        replayed $replayed recorded steps without running them, ran $ran"
echo "  the witness file  $total lines for $distinct distinct steps of $steps"
if [ -n "$repeated" ]; then
  echo "  $repeated ran twice: it was in flight when the process died (its output was not"
  echo "  recorded yet), so the resume ran it again. No recorded step ever runs again."
else
  echo "  no step ran twice: the step in flight had not written its line yet when it was"
  echo "  killed; the resume ran it from the start."
fi
if [ "$distinct" -ne "$steps" ] || [ "$total" -gt $((steps + 1)) ] ||
  [ $((replayed + ran)) -ne "$steps" ]; then
  echo "demo: FAILED: expected every step once, at most one twice" >&2
  exit 1
fi
echo
echo "Look closer: $loom --home $home log $id"
echo "             $loom --home $home state $id"
