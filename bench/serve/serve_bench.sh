#!/usr/bin/env bash
# The inspector's benchmark (docs/benchmarks.md, "The inspector"): a home holding a 10,000-turn
# agent run (the long-run example's fetch_report, a subprocess per call) and 20 parked runs,
# served by `loom serve`. Measures, ROUNDS times interleaved, the time to first byte (curl's
# time_starttransfer) of the run list, the long run's summary, its first timeline page and its
# first page of events; then the server's memory while ten headless Chromium pages watch the
# list and the long run (each polls every 2 s, as the page does) and new runs keep starting.
# Needs a release build (build/release/loom), Debian's chromium and scripts/install-playwright.sh.
# TURNS (default 10000), ROUNDS (5), WATCH_SECONDS (30) change the sizes.
set -euo pipefail
cd "$(dirname "$0")/../.."
loom=$PWD/build/release/loom
turns=${TURNS:-10000} rounds=${ROUNDS:-5} watch=${WATCH_SECONDS:-30}
# BENCH_HOME=DIR keeps the home (with its long run) in DIR for the next round; reused if there.
work=$(mktemp -d "${TMPDIR:-/tmp}/loom-servebench.XXXXXX")
server=""
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null; rm -rf "$work"' EXIT
home=${BENCH_HOME:-$work/home}
cp -r examples/agents/tools "$work/tools"
cat >"$work/script.toml" <<TOML
[generate]
turns = $turns
answer = "Read all $turns report pages."
[[generate.toolCalls]]
name = "fetch_report"
arguments = { page = "{turn}" }
TOML
cat >"$work/long.toml" <<TOML
[agent]
name = "long-run"
prompt = "Read every page of the report."
maxTurns = $((turns + 1))
warnTranscriptBytes = 1_000_000_000
[model]
kind = "scripted"
script = "script.toml"
[[tools]]
name = "fetch_report"
description = "Fetches one page of the quarterly report."
command = ["tools/fetch_report"]
TOML
if [ ! -f "$home/loom.db" ]; then
  echo "making a $turns-turn run (a few minutes)..." >&2
  "$loom" --home "$home" --durability normal run "$work/long.toml" --id long >/dev/null
  for i in $(seq 1 20); do "$loom" --home "$home" run example.approval --id "p$i" >/dev/null; done
fi

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$loom" --home "$home" serve --port "$port" >"$work/serve.out" 2>&1 &
server=$!
until curl -sf "http://127.0.0.1:$port/api/v1/server" >/dev/null; do sleep 0.1; done
base=http://127.0.0.1:$port/api/v1
ttfb() { curl -s -o /dev/null -w '%{time_starttransfer}\n' "$1"; }
: >"$work/ttfb.txt"
for round in $(seq 1 "$rounds"); do
  echo "floor $(ttfb "$base/server")" >>"$work/ttfb.txt"
  echo "list $(ttfb "$base/executions")" >>"$work/ttfb.txt"
  echo "summary $(ttfb "$base/executions/long")" >>"$work/ttfb.txt"
  echo "timeline $(ttfb "$base/executions/long/timeline?limit=50")" >>"$work/ttfb.txt"
  echo "events $(ttfb "$base/executions/long/events?limit=200")" >>"$work/ttfb.txt"
done
echo "time to first byte, ms: median [range] of $rounds; floor = GET /api/v1/server (no store read)"
echo "(the first summary tallies the whole run's usage; later ones read only new events)"
for what in floor list summary timeline events; do
  grep "^$what " "$work/ttfb.txt" | awk '{print $2 * 1000}' | sort -n |
    awk -v w="$what" '{v[NR]=$1} END {printf "  %-9s %.1f [%.1f-%.1f]\n", w, v[int((NR+1)/2)], v[1], v[NR]}'
done
rss() { awk '/^VmRSS/ {print $2}' "/proc/$server/status"; }
echo "server RSS before watchers: $(rss) kB"
( for i in $(seq 1 1000); do
    "$loom" --home "$home" run example.steps --id "live$$-$i" \
      --input "{\"steps\": 20, \"sleepMs\": 100, \"witness\": \"$work/w.txt\"}" >/dev/null 2>&1 || true
  done ) &
LOOM_URL="http://127.0.0.1:$port" RUN_ID=long WATCHERS=10 SECONDS_TO_WATCH=$watch \
  SERVER_PID=$server CHROMIUM=${CHROMIUM:-/usr/bin/chromium} \
  PLAYWRIGHT_CORE=${LOOM_PLAYWRIGHT_DIR:-$PWD/build/playwright}/node_modules/playwright-core \
  node bench/serve/watchers.mjs
