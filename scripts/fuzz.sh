#!/usr/bin/env bash
# Builds the libFuzzer targets (the `asan` preset: clang, ASan + UBSan) and runs each for a fixed
# budget over its corpus in fuzz/corpus/<target>/ (fuzz/README.md). New inputs go to a scratch
# folder, never into the repository; a crash, an untyped exception or a leak fails the script
# and leaves the input in build/asan/artifacts/. LOOM_FUZZ_SECONDS sets the budget per target
# (default 20). Assumes scripts/bootstrap.sh has run.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${LOOM_FUZZ_SECONDS:-20}"
cmake --preset asan >/dev/null
cmake --build --preset asan --target fuzz_targets --parallel "${LOOM_BUILD_JOBS:-$(nproc)}"
artifacts="$PWD/build/asan/artifacts"
mkdir -p "$artifacts"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
for target in event_row config_toml envelope wire; do
  mkdir -p "$scratch/$target"
  echo "fuzz: ${target}_fuzz for ${seconds} s"
  if ! ./build/asan/fuzz/"${target}_fuzz" -max_total_time="$seconds" -timeout=10 \
      -rss_limit_mb=2048 -print_final_stats=0 -artifact_prefix="$artifacts/${target}-" \
      "$scratch/$target" "fuzz/corpus/$target" >"$scratch/$target.log" 2>&1; then
    tail -n 60 "$scratch/$target.log"
    echo "fuzz: ${target}_fuzz found a failing input; it is in $artifacts (replay it with" \
         "./build/asan/fuzz/${target}_fuzz <file>)" >&2
    exit 1
  fi
  grep -E "^#[0-9]+.*DONE|Done [0-9]+ runs" "$scratch/$target.log" | tail -n 1 || true
done
