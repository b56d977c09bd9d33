#!/usr/bin/env bash
# Exploratory fuzzing for a developer, not part of the test command: each libFuzzer target runs
# from a fresh random seed for LOOM_FUZZ_SECONDS (default 600) over its corpus. A finding is left
# in build/asan/artifacts/; fix the parser, then copy the input into fuzz/corpus/<target>/ so the
# test command (scripts/fuzz.sh) replays it from then on. Name targets to run only those.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${LOOM_FUZZ_SECONDS:-600}"
# shellcheck source=scripts/fuzz-setup.sh
source scripts/fuzz-setup.sh
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${fuzz_targets[@]}")
failed=0
for target in "${targets[@]}"; do
  mkdir -p "$scratch/$target"
  echo "fuzz-explore: ${target}_fuzz for ${seconds} s from a random seed"
  if ! ./build/asan/fuzz/"${target}_fuzz" -max_total_time="$seconds" -timeout=10 \
      -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$artifacts/${target}-" \
      "$scratch/$target" "fuzz/corpus/$target" >"$scratch/$target.log" 2>&1; then
    tail -n 60 "$scratch/$target.log"
    echo "fuzz-explore: ${target}_fuzz found a failing input in $artifacts: fix the parser and" \
         "add the input to fuzz/corpus/$target/" >&2
    failed=1
  fi
done
exit "$failed"
