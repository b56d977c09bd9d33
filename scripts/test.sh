#!/usr/bin/env bash
# Installs what the build needs (scripts/bootstrap.sh), configures and builds everything with
# the release preset (warnings are errors) and runs every test; then builds the asan preset
# (AddressSanitizer + UndefinedBehaviorSanitizer) and runs every test again there; then runs
# the libFuzzer targets deterministically: corpus, then fixed runs from a fixed seed
# (scripts/fuzz.sh). Exits non-zero on the first
# failure. LOOM_BUILD_JOBS caps the parallel compile jobs (default: the number of CPUs).
# The PostgreSQL stores' tests run against a private cluster this script starts
# (scripts/postgres-test-cluster.sh: a temporary folder, 127.0.0.1, a free port) and stops at
# the end, whatever happens. After the release tests, `loom sim` runs seeded simulations for
# LOOM_SIM_BUDGET (default 2m) on the embedded default, then LOOM_SIM_POSTGRES_BUDGET (default
# 1m) on the PostgreSQL cluster. The inspector's browser test runs Debian's Chromium (installed by
# bootstrap with LOOM_BOOTSTRAP_BROWSER=1) through playwright-core (scripts/install-playwright.sh).
# The Python package's pytest suites and the Node.js package's node --test suites run in the
# release ctest (python/, node/).
set -euo pipefail
cd "$(dirname "$0")/.."

LOOM_BOOTSTRAP_BROWSER=1 ./scripts/bootstrap.sh
./scripts/install-mcp-servers.sh
./scripts/install-playwright.sh
./scripts/install-node-package-deps.sh  # node-addon-api for the Node.js package's addon
export LOOM_TEST_BROWSER_REQUIRED=1  # the inspector's browser test must run, not skip
pg_env=$(./scripts/postgres-test-cluster.sh start)  # fails the script if the server cannot start
eval "$pg_env"
trap './scripts/postgres-test-cluster.sh stop "$LOOM_TEST_POSTGRES_DIR"' EXIT
export LOOM_TEST_POSTGRES_URL LOOM_TEST_POSTGRES_REQUIRED=1
cmake --preset release
cmake --build --preset release --parallel "${LOOM_BUILD_JOBS:-$(nproc)}"
ctest --preset release
./scripts/test-embed.sh
# The deterministic simulator (docs/testing.md): as many seeds as fit in the budget; a failing
# seed prints the command that replays it. Homes go to /dev/shm when it is there (faster).
sim_scratch=$([ -w /dev/shm ] && echo /dev/shm || echo "${TMPDIR:-/tmp}")
./build/release/loom sim --seeds 1000000 --budget "${LOOM_SIM_BUDGET:-2m}" --scratch "$sim_scratch"
# The same on the private PostgreSQL server: every store there, a schema per seed.
./build/release/loom sim --seeds 1000000 --budget "${LOOM_SIM_POSTGRES_BUDGET:-1m}" \
  --scratch "$sim_scratch" --postgres "$LOOM_TEST_POSTGRES_URL"
cmake --preset asan
cmake --build --preset asan --parallel "${LOOM_BUILD_JOBS:-$(nproc)}"
ctest --preset asan
./scripts/fuzz.sh
