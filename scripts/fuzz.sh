#!/usr/bin/env bash
# The test command's fuzzing, deterministic: builds the libFuzzer targets (the `asan` preset:
# clang, ASan + UBSan), replays every input of each target's corpus in fuzz/corpus/<target>/
# (every past finding is one), then fuzzes from a fixed seed for a fixed number of runs, so one
# commit passes or fails the same way every time. New inputs go to a scratch folder, never into
# the repository; a crash, an untyped exception or a leak fails the script and leaves the input
# in build/asan/artifacts/. Each target's runs are sized to about 15 s on the CI machine
# (event_row, envelope, wire: 200,000; config_toml, ten times slower a run: 25,000);
# LOOM_FUZZ_RUNS sets one count for every target instead, LOOM_FUZZ_SEED the seed (default 1). Exploring with fresh seeds is scripts/fuzz-explore.sh,
# which a developer runs; it is not part of the test command. Assumes scripts/bootstrap.sh ran.
set -euo pipefail
cd "$(dirname "$0")/.."

seed="${LOOM_FUZZ_SEED:-1}"
# The runs of `target`: LOOM_FUZZ_RUNS, else its own default.
runs_of() {
  if [ -n "${LOOM_FUZZ_RUNS:-}" ]; then echo "$LOOM_FUZZ_RUNS"; return; fi
  case "$1" in
    config_toml) echo 25000 ;;
    *) echo 200000 ;;
  esac
}
# shellcheck source=scripts/fuzz-setup.sh
source scripts/fuzz-setup.sh

# Runs one libFuzzer command; on failure prints its log's tail and how to replay, and exits 1.
fuzz_or_fail() {
  local target=$1 what=$2
  shift 2
  if ! ./build/asan/fuzz/"${target}_fuzz" -timeout=10 -rss_limit_mb=2048 -print_final_stats=0 \
      -artifact_prefix="$artifacts/${target}-" "$@" >"$scratch/$target.log" 2>&1; then
    tail -n 60 "$scratch/$target.log"
    echo "fuzz: ${target}_fuzz failed on $what; the input is in $artifacts (replay it with" \
         "./build/asan/fuzz/${target}_fuzz <file>, fix the parser, then add the file to" \
         "fuzz/corpus/$target/)" >&2
    exit 1
  fi
}

for target in "${fuzz_targets[@]}"; do
  corpus="fuzz/corpus/$target"
  echo "fuzz: ${target}_fuzz replays $(find "$corpus" -type f | wc -l) corpus inputs"
  fuzz_or_fail "$target" "a corpus input" -runs=0 "$corpus"
  runs=$(runs_of "$target")
  echo "fuzz: ${target}_fuzz fuzzes $runs runs from seed $seed"
  mkdir -p "$scratch/$target"
  fuzz_or_fail "$target" "seed $seed" -seed="$seed" -runs="$runs" "$scratch/$target" "$corpus"
  grep -E "^#[0-9]+.*DONE|Done [0-9]+ runs" "$scratch/$target.log" | tail -n 1 || true
done
