#!/usr/bin/env bash
# The inspector's end-to-end browser test: records agent runs in a fresh home (one parked on an
# approval with offloaded tool results, one with untrusted results offloaded, one parked retrying
# after two attempts, one whose call a person denied, one waiting for an approval with a
# deadline, one sealed under a subject whose key the server lacks) and a workflow run, serves
# them with `loom serve`, and drives the page in headless Chromium (inspector.mjs).
#   tests/browser/run.sh path/to/loom
# Needs /usr/bin/chromium (Debian: apt-get install chromium; $CHROMIUM overrides) and
# playwright-core (scripts/install-playwright.sh, into $LOOM_PLAYWRIGHT_DIR or build/playwright).
# Without them it skips (exit 77, ctest's skip code) unless LOOM_TEST_BROWSER_REQUIRED=1.
# Screenshots go to the work folder (kept when the test fails), or to docs/images with
# LOOM_UPDATE_SCREENSHOTS=1.
set -euo pipefail

if [ $# -ne 1 ]; then
  echo "usage: $0 path/to/loom" >&2
  exit 2
fi
repo="$(cd "$(dirname "$0")/../.." && pwd)"
loom="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
[ -x "$loom" ] || { echo "browser test: $1 is not an executable loom binary" >&2; exit 2; }

chromium="${CHROMIUM:-/usr/bin/chromium}"
playwright="${LOOM_PLAYWRIGHT_DIR:-$repo/build/playwright}/node_modules/playwright-core"
missing=""
command -v node >/dev/null 2>&1 || missing+=" node (Node.js >= 20);"
[ -x "$chromium" ] || missing+=" chromium ($chromium; Debian: apt-get install chromium);"
[ -f "$playwright/package.json" ] || missing+=" playwright-core ($playwright);"
if [ -n "$missing" ]; then
  if [ "${LOOM_TEST_BROWSER_REQUIRED:-0}" = "1" ]; then
    echo "browser test: missing:$missing run scripts/install-playwright.sh (or scripts/bootstrap.sh)" \
         "to install what the browser test needs" >&2
    exit 1
  fi
  echo "browser test: skipped, missing:$missing run scripts/install-playwright.sh to enable it"
  exit 77
fi
for tool in curl python3; do
  command -v "$tool" >/dev/null 2>&1 || { echo "browser test: $tool is not installed" >&2; exit 1; }
done

work="$(mktemp -d "${TMPDIR:-/tmp}/loom-browser.XXXXXX")"
home="$work/home"
serve_pid=""
cleanup() {
  local rc=$?
  if [ -n "$serve_pid" ] && kill -0 "$serve_pid" 2>/dev/null; then
    kill "$serve_pid" 2>/dev/null || true
    wait "$serve_pid" 2>/dev/null || true
  fi
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ]; then
    echo "browser test: failed; kept the work folder $work (home, server log, screenshots)" >&2
  else
    rm -rf "$work"
  fi
}
trap cleanup EXIT

# ---- the agent apps --------------------------------------------------------------------------
cp -R "$repo/examples/agents/tools" "$work/tools"
cp "$repo/examples/agents/scripts/research.json" "$work/research.json"
tools="$work/tools"

# Claim-check (examples/agents/claim-check.toml, 3 turns instead of 200): search and
# fetch_report results go to the content store, then `publish` waits for an approval.
cat > "$work/approve.json" <<'JSON'
{"turns": [
  {"toolCalls": [{"name": "search", "arguments": {"query": "quarterly revenue by region"}},
                 {"name": "fetch_report", "arguments": {"page": 1}}]},
  {"toolCalls": [{"name": "fetch_report", "arguments": {"page": 2}}]},
  {"toolCalls": [{"name": "publish", "arguments": {"pages": 2}}]},
  {"answer": "Published the summary of 2 report pages."}
]}
JSON
cat > "$work/approve.toml" <<TOML
[agent]
name = "claim-check"
prompt = "Read the report, then publish a summary."
maxTurns = 10

[model]
kind = "scripted"
script = "approve.json"

[[tools]]
name = "search"
description = "Searches the quarterly reports; returns the matching pages with snippets."
command = ["$tools/search"]
inputSchema = { type = "object", properties = { query = { type = "string" } }, required = ["query"] }

[[tools]]
name = "fetch_report"
description = "Fetches one page of the quarterly report."
command = ["$tools/fetch_report"]
inputSchema = { type = "object", properties = { page = { type = "integer" } }, required = ["page"] }

[[tools]]
name = "publish"
description = "Publishes the summary. A person approves it first."
command = ["$tools/publish"]
requiresApproval = true

[storage.contentStore]
kind = "filesystem"

[execution.claimCheck]
store = "default"
toolIds = ["fetch_report", "search"]
inlineCapBytes = 1024
preview = 256
digests.search = { pick = ["/total", "/hits/0/title"] }
TOML

# Research (examples/agents/research.toml) with search's results untrusted: they are recorded
# tainted (tool:search) and the inspector fences them.
cat > "$work/tainted.toml" <<TOML
[agent]
name = "research"
prompt = "Summarize this quarter's revenue by region and what drives churn."
system = "You are a research analyst. Use the tools; cite report pages."
maxTurns = 20

[model]
kind = "scripted"
script = "research.json"

[[tools]]
name = "search"
description = "Searches the quarterly reports; returns the matching pages with snippets."
command = ["$tools/search"]
untrusted = true
inputSchema = { type = "object", properties = { query = { type = "string" } }, required = ["query"] }

[[tools]]
name = "fetch_report"
description = "Fetches one page of the quarterly report."
command = ["$tools/fetch_report"]
inputSchema = { type = "object", properties = { page = { type = "integer" } }, required = ["page"] }

[storage.contentStore]
kind = "filesystem"

# search's untrusted results are offloaded too: the envelope has no preview (untrusted content is
# never previewed) and the blob holds the tainted result.
[execution.claimCheck]
store = "default"
toolIds = ["search"]
inlineCapBytes = 256
TOML

# publish needs an approval: one run's call is denied, another waits with a deadline.
cat > "$work/publish.json" <<'JSON'
{"turns": [
  {"toolCalls": [{"name": "publish", "arguments": {"pages": 3}}]},
  {"answer": "Done."}
]}
JSON
for deadline in none 2h; do
  cat > "$work/publish-$deadline.toml" <<TOML
[agent]
name = "publisher"
prompt = "Publish the summary."
maxTurns = 5

[model]
kind = "scripted"
script = "publish.json"

[[tools]]
name = "publish"
description = "Publishes the summary. A person approves it first."
command = ["$tools/publish"]
requiresApproval = true
$([ "$deadline" = none ] || echo "approvalTimeout = \"$deadline\"")
TOML
done

# A tool that never answers in time: its call fails deadlineExceeded (retryable) and, with the
# next attempt ten minutes away and no inline wait, the run parks retrying.
cat > "$work/retry.json" <<'JSON'
{"turns": [
  {"toolCalls": [{"name": "slow", "arguments": {"what": "anything"}}]},
  {"answer": "The slow tool answered."}
]}
JSON
cat > "$work/retry.toml" <<'TOML'
[agent]
name = "retry"
prompt = "Call the slow tool."
maxTurns = 5

[model]
kind = "scripted"
script = "retry.json"

[[tools]]
name = "slow"
description = "A tool that takes thirty seconds, past its time-out."
command = ["sleep", "30"]
timeoutMillis = 200

[execution.retry]
initialIntervalMs = 600000
maxIntervalMs = 600000
waitInlineUpToMs = 0
TOML

# run <app> <id> <expected status>: records one run, checks the status `loom run --json` prints.
run() {
  local out status
  if ! out="$(cd "$work" && "$loom" --home "$home" run "$1" --id "$2" --json 2>"$work/$2.err")"; then
    echo "browser test: loom run $1 --id $2 failed:" >&2
    cat "$work/$2.err" >&2
    exit 1
  fi
  status="$(printf '%s' "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("status"))')"
  if [ "$status" != "$3" ]; then
    echo "browser test: run $2 is $status, expected $3: $out" >&2
    cat "$work/$2.err" >&2
    exit 1
  fi
}
run approve.toml approve-me parked
run tainted.toml tainted completed
run retry.toml retry-me parked   # `loom ls` shows it as retrying
# A second attempt now: it fails the same way, and both attempts belong to turn 1.
(cd "$work" && "$loom" --home "$home" retry retry-me --json >/dev/null 2>"$work/retry-again.err") || {
  echo "browser test: loom retry retry-me failed:" >&2; cat "$work/retry-again.err" >&2; exit 1; }
run publish-none.toml deny-me parked
(cd "$work" && "$loom" --home "$home" signal deny-me 'approve:publisher#turn:1:tool:0' \
   '{"approved": false, "reason": "not before the board meets"}' --json >/dev/null) || {
  echo "browser test: denying deny-me's call failed" >&2; exit 1; }
run publish-2h.toml deadline-me parked
(cd "$work" && "$loom" --home "$home" run example.steps --id plain-workflow \
   --input '{"steps": 2}' --json >/dev/null) || { echo "browser test: example.steps failed" >&2; exit 1; }
# A run that failed on a step (its witness folder is missing; one attempt), then the fix: the
# page's Rerun completes.
printf '[execution.retry]\nmaxAttempts = 1\n' > "$work/once.toml"
(cd "$work" && "$loom" --home "$home" run example.steps --config once.toml --id failed-run \
   --input "{\"steps\": 2, \"witness\": \"$work/fixed/w.txt\"}" --json >/dev/null 2>&1) && {
  echo "browser test: failed-run did not fail" >&2; exit 1; }
mkdir -p "$work/fixed"
# A run sealed under subject alice: the server below runs without the master key.
cp "$repo/examples/agents/compliance.toml" "$work/compliance.toml"
sed -i "s#tools/#$tools/#g; s#scripts/#$repo/examples/agents/scripts/#g" "$work/compliance.toml"
key="$("$loom" keys new-master)"
(cd "$work" && LOOM_MASTER_KEY="$key" "$loom" --home "$home" run compliance.toml --id sealed-run \
   --subject alice --json >/dev/null 2>"$work/sealed.err") || {
  echo "browser test: the sealed run failed:" >&2; cat "$work/sealed.err" >&2; exit 1; }

# ---- the server -----------------------------------------------------------------------------
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
env -u LOOM_MASTER_KEY "$loom" --home "$home" serve --port "$port" >"$work/serve.log" 2>&1 &
serve_pid=$!
url="http://127.0.0.1:$port"
for _ in $(seq 1 100); do
  if curl -sf "$url/api/v1/server" >/dev/null 2>&1; then break; fi
  if ! kill -0 "$serve_pid" 2>/dev/null; then
    echo "browser test: loom serve exited:" >&2
    cat "$work/serve.log" >&2
    exit 1
  fi
  sleep 0.2
done
if ! curl -sf "$url/api/v1/server" >/dev/null 2>&1; then
  echo "browser test: loom serve did not answer on $url within 20 s:" >&2
  cat "$work/serve.log" >&2
  exit 1
fi

# ---- the browser ----------------------------------------------------------------------------
if [ "${LOOM_UPDATE_SCREENSHOTS:-0}" = "1" ]; then
  shots="$repo/docs/images"
else
  shots="${SCREENSHOT_DIR:-$work}"
fi
mkdir -p "$shots"
if ! LOOM_URL="$url" CHROMIUM="$chromium" PLAYWRIGHT_CORE="$playwright" SCREENSHOT_DIR="$shots" \
     node "$repo/tests/browser/inspector.mjs"; then
  echo "browser test: the server's log:" >&2
  tail -n 40 "$work/serve.log" >&2
  exit 1
fi
