#!/usr/bin/env bash
# Installs what the build needs (scripts/bootstrap.sh), configures and builds everything with
# the release preset (warnings are errors) and runs every test; then builds the asan preset
# (AddressSanitizer + UndefinedBehaviorSanitizer) and runs every test again there; then runs
# the libFuzzer targets for a fixed budget (scripts/fuzz.sh). Exits non-zero on the first
# failure. LOOM_BUILD_JOBS caps the parallel compile jobs (default: the number of CPUs).
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/bootstrap.sh
./scripts/install-mcp-servers.sh
cmake --preset release
cmake --build --preset release --parallel "${LOOM_BUILD_JOBS:-$(nproc)}"
ctest --preset release
./scripts/test-embed.sh
cmake --preset asan
cmake --build --preset asan --parallel "${LOOM_BUILD_JOBS:-$(nproc)}"
ctest --preset asan
./scripts/fuzz.sh
