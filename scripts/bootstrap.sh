#!/usr/bin/env bash
# Installs every Debian package Loom needs to build, test and run. Idempotent: a second run
# installs nothing and finishes in about a second.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config
  libboost-json1.81-dev libsqlite3-dev sqlite3 libsodium-dev libzstd-dev
  libcli11-dev libtomlplusplus-dev libcpp-httplib-dev
  libgtest-dev libgmock-dev libbenchmark-dev libre2-dev libpq-dev postgresql-15
  clang libclang-rt-14-dev
  iproute2  # ss: a test reads the inspector server's listen backlog
  # The Python package (python/): its native module, its tests, and a virtual environment
  # to install it into.
  pybind11-dev python3-dev python3-pytest python3-venv python3-setuptools
)

# The inspector's browser test (tests/browser/) drives Debian's Chromium: scripts/test.sh asks
# for it with LOOM_BOOTSTRAP_BROWSER=1, so running the demo alone does not install a browser.
[ "${LOOM_BOOTSTRAP_BROWSER:-0}" = "1" ] && packages+=(chromium)

# Node.js and npm run the MCP servers of the provider tests; any Node.js >= 18 will do, so an
# existing installation (from Debian or elsewhere) is kept.
command -v npm >/dev/null 2>&1 || packages+=(nodejs npm)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "bootstrap: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
