# Sourced by scripts/fuzz.sh and scripts/fuzz-explore.sh from the repository root: builds the
# libFuzzer targets (the `asan` preset) and sets `artifacts` (where a failing input is left) and
# `scratch` (new inputs, removed on exit). Assumes scripts/bootstrap.sh ran.
fuzz_targets=(event_row config_toml envelope wire)
cmake --preset asan >/dev/null
cmake --build --preset asan --target fuzz_targets --parallel "${LOOM_BUILD_JOBS:-$(nproc)}"
artifacts="$PWD/build/asan/artifacts"
mkdir -p "$artifacts"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
