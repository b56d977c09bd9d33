#!/usr/bin/env bash
# Installs the MCP servers the provider tests and benchmarks run against, at pinned versions,
# into build/mcp-servers/ (or $LOOM_MCP_SERVERS_DIR): the reference "everything" server, the
# filesystem server, and the MCP SDK the tests' own small servers are written with.
# Idempotent: when the pinned versions are installed already it prints nothing and exits 0.
# Needs Node.js >= 18 and npm (the npm registry is the only network it uses).
set -euo pipefail
cd "$(dirname "$0")/.."

dir="${LOOM_MCP_SERVERS_DIR:-$PWD/build/mcp-servers}"
# Pinned: the newest releases that run on the machines' Node.js 20 (checked 2026-09).
declare -A pins=(
  ["@modelcontextprotocol/server-everything"]="2026.8.31"
  ["@modelcontextprotocol/server-filesystem"]="2026.8.31"
  ["@modelcontextprotocol/sdk"]="1.32.2"
)

installed() {  # installed <package> <version>
  local manifest="$dir/node_modules/$1/package.json"
  [ -f "$manifest" ] && grep -q "\"version\": \"$2\"" "$manifest"
}

missing=0
for p in "${!pins[@]}"; do
  installed "$p" "${pins[$p]}" || missing=1
done
[ "$missing" -eq 0 ] && exit 0

if ! command -v npm >/dev/null 2>&1; then
  echo "install-mcp-servers: npm is not installed; install Node.js >= 18 with npm" \
       "(Debian: apt-get install nodejs npm), or skip the MCP tests" >&2
  exit 1
fi

mkdir -p "$dir"
deps=""
for p in $(printf '%s\n' "${!pins[@]}" | sort); do
  deps+="${deps:+,}
    \"$p\": \"${pins[$p]}\""
done
cat > "$dir/package.json" <<JSON
{
  "name": "loom-mcp-servers",
  "private": true,
  "description": "MCP servers for Loom's provider tests (written by scripts/install-mcp-servers.sh)",
  "dependencies": {$deps
  }
}
JSON
echo "install-mcp-servers: installing into $dir" >&2
(cd "$dir" && npm install --no-audit --no-fund --loglevel=error >&2)
for p in "${!pins[@]}"; do
  if ! installed "$p" "${pins[$p]}"; then
    echo "install-mcp-servers: $p@${pins[$p]} is not installed after npm install" >&2
    exit 1
  fi
done
