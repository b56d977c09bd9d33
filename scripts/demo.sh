#!/usr/bin/env bash
# The crash-and-resume demo, on an agent. Builds `loom`, starts the research agent of
# examples/agents/research.toml (a scripted model, 12 turns; its tools are small POSIX sh
# programs, and fetch_report takes 0.15 s a page) in the background with a fresh home, kills
# it with SIGKILL mid-run, runs `loom resume <id>` in a new process, and prints the answer,
# the state and log sizes, and the tools' witness file: no recorded model turn or tool call
# ran again (at most the one call in flight at the kill did).
# DEMO_KILL_AFTER (tool calls before the kill, default 6) changes where the kill lands;
# LOOM_BUILD_JOBS caps the compile jobs.
set -euo pipefail
cd "$(dirname "$0")/.."

kill_after=${DEMO_KILL_AFTER:-6}

./scripts/bootstrap.sh
[ -f build/release/build.ninja ] || cmake --preset release >/dev/null
cmake --build --preset release --target loom --parallel "${LOOM_BUILD_JOBS:-$(nproc)}" >/dev/null

loom=./build/release/loom
app=examples/agents/research.toml
work=$(mktemp -d "${TMPDIR:-/tmp}/loom-demo.XXXXXX")
home=$work/home
# Each tool call appends one line ("fetch_report page=3") to this file: what really ran.
export LOOM_TOOL_WITNESS=$work/witness.txt
id=demo-$(date +%s)
lines() { if [ -f "$LOOM_TOOL_WITNESS" ]; then wc -l <"$LOOM_TOOL_WITNESS"; else echo 0; fi; }
field() { grep -o "\"$1\":[0-9]*" | head -1 | cut -d: -f2; }
recorded() { "$loom" --home "$home" log "$id" --json | grep -o "\"stepId\":\"research#turn:[0-9]*:$1" | wc -l; }

echo "== loom run $app --id $id   (home $home)"
"$loom" --home "$home" run "$app" --id "$id" >"$work/run.out" 2>&1 &
pid=$!
until [ "$(lines)" -ge "$kill_after" ]; do
  if ! kill -0 "$pid" 2>/dev/null; then
    echo "demo: the run ended before it could be killed; see $work/run.out" >&2
    exit 1
  fi
  sleep 0.02
done
kill -KILL "$pid"
{ wait "$pid"; } 2>/dev/null || true
at_kill=$(lines)
models=$(recorded model)
tools=$(recorded tool)
echo "== killed with SIGKILL after $at_kill tool calls: the log holds $models model turns and $tools tool calls"
"$loom" --home "$home" ls

echo
echo "== loom resume $id   (a fresh process: it loads $app again)"
result=$("$loom" --home "$home" resume "$id" --json)
replayed=$(field replayedSteps <<<"$result")
ran=$(field effectsRun <<<"$result")
model_calls=$(field modelCalls <<<"$result")
turns=$(field turns <<<"$result")
answer=$(sed -n 's/.*"answer":"\([^"]*\)".*/\1/p' <<<"$result")
status=$(grep -o '"status":"[a-z]*"' <<<"$result" | cut -d'"' -f4)
echo "status:  $status after $turns turns"
echo "answer:  $answer"

echo
echo "== the witness file: how many times each tool call really ran"
awk '{count[$0]++; if (!($0 in first)) {first[$0] = NR; order[++n] = $0}}
     END {for (i = 1; i <= n; i++) printf "  %-40s x%d\n", order[i], count[order[i]]}' \
  "$LOOM_TOOL_WITNESS"
total=$(wc -l <"$LOOM_TOOL_WITNESS")
distinct=$(sort -u "$LOOM_TOOL_WITNESS" | wc -l)
repeated=$(sort "$LOOM_TOOL_WITNESS" | uniq -d)
# The recorded calls are the first $tools lines; each must appear exactly once in the end.
rerun=0
while IFS= read -r call; do
  [ "$(grep -cxF "$call" "$LOOM_TOOL_WITNESS")" -eq 1 ] || rerun=$((rerun + 1))
done < <(head -n "$tools" "$LOOM_TOOL_WITNESS")

log_bytes=$("$loom" --home "$home" ls --json | field logBytes)
kernel_state=$("$loom" --home "$home" ls --json | field stateBytes)
agent_state=$("$loom" --home "$home" state "$id" --json | field stateBytes)

echo
echo "What happened:"
echo "  before the kill   $models model turns and $tools tool calls were recorded ($at_kill calls had finished)"
echo "  the resume        replayed $replayed recorded steps without running them; ran $ran effects,"
echo "                    of which $model_calls model turns (the $turns turns less the $models recorded)"
echo "  the witness       $total lines for $distinct distinct tool calls; recorded calls that ran again: $rerun"
if [ -n "$repeated" ]; then
  echo "  '$repeated' ran twice: it was in flight when the process died (its result was not"
  echo "  recorded yet), so the resume ran it again. No recorded step ever runs again."
else
  echo "  no tool call ran twice: the one in flight had not finished when it was killed."
fi
echo "  sizes             log $log_bytes bytes; folded agent state $agent_state bytes (what a"
echo "                    resume reads; the kernel's folded state: $kernel_state bytes)"
if [ "$status" != completed ] || [ "$rerun" -ne 0 ] || [ "$total" -gt $((distinct + 1)) ] ||
  [ "$model_calls" -ne $((turns - models)) ]; then
  echo "demo: FAILED: a recorded step ran again, or the run did not complete" >&2
  exit 1
fi
echo
echo "Look closer: $loom --home $home log $id"
echo "             $loom --home $home state $id"
