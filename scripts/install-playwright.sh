#!/usr/bin/env bash
# Installs playwright-core, at a pinned version, into build/playwright/ (or $LOOM_PLAYWRIGHT_DIR):
# the library the inspector's browser test (tests/browser/) drives Chromium with. It never
# downloads a browser: the test runs the system's Chromium (Debian: apt-get install chromium).
# Idempotent: when the pinned version is installed already it prints nothing and exits 0.
# Needs Node.js >= 20 and npm (the npm registry is the only network it uses).
set -euo pipefail
cd "$(dirname "$0")/.."

dir="${LOOM_PLAYWRIGHT_DIR:-$PWD/build/playwright}"
# Pinned: the newest release that runs on the machines' Node.js 20 (checked 2026-09).
package="playwright-core"
version="1.65.1"

installed() {
  local manifest="$dir/node_modules/$package/package.json"
  [ -f "$manifest" ] && grep -q "\"version\": \"$version\"" "$manifest"
}

installed && exit 0

if ! command -v npm >/dev/null 2>&1; then
  echo "install-playwright: npm is not installed; install Node.js >= 20 with npm" \
       "(Debian: apt-get install nodejs npm), or skip the browser test" >&2
  exit 1
fi

mkdir -p "$dir"
cat > "$dir/package.json" <<JSON
{
  "name": "loom-playwright",
  "private": true,
  "description": "playwright-core for Loom's inspector browser test (written by scripts/install-playwright.sh)",
  "dependencies": {
    "$package": "$version"
  }
}
JSON
echo "install-playwright: installing $package@$version into $dir" >&2
(cd "$dir" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 \
   npm install --no-audit --no-fund --loglevel=error >&2)
if ! installed; then
  echo "install-playwright: $package@$version is not installed after npm install" >&2
  exit 1
fi
if [ ! -x /usr/bin/chromium ]; then
  echo "install-playwright: note: /usr/bin/chromium is missing; the browser test needs it" \
       "(Debian: apt-get install chromium)" >&2
fi
