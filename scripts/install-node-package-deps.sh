#!/usr/bin/env bash
# Installs what the Node.js package's addon is built with (node/package.json's
# devDependencies, pinned by node/package-lock.json: node-addon-api and node-api-headers) into
# node/node_modules, from the npm registry only; no install script runs. Idempotent: with
# them installed already it prints nothing and exits 0.
set -euo pipefail
cd "$(dirname "$0")/../node"
[ -f node_modules/node-addon-api/napi.h ] && [ -f node_modules/node-api-headers/include/node_api.h ] && exit 0
if ! command -v npm >/dev/null 2>&1; then
  echo "install-node-package-deps: npm is not installed; install Node.js >= 20 with npm" \
       "(Debian: apt-get install nodejs npm)" >&2
  exit 1
fi
npm ci --ignore-scripts --no-audit --no-fund >/dev/null
