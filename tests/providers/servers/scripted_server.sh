#!/usr/bin/env bash
# A minimal MCP server over stdio for failure tests. It answers initialize and tools/list (one
# tool, "probe"); on tools/call it does what $1 says:
#   hang     never answers
#   garbage  writes a line that is not JSON
#   exit     writes to stderr and exits with status 3
#   asks     first sends the client two requests (sampling/createMessage and ping), then
#            answers the call with the client's two replies as text
#   echo     answers with the call's "text" argument as text (letters, digits, - and _ only)
#   fail     answers with isError: true (the tool conformance suite)
# Ids are read with sed: the Loom client writes compact JSON with integer ids.
mode="${1:-hang}"
reply() { printf '{"jsonrpc":"2.0","id":%s,"result":%s}\n' "$1" "$2"; }
while IFS= read -r line; do
  id=$(sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p' <<<"$line")
  case "$line" in
    *'"method":"initialize"'*)
      reply "$id" '{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"scripted","version":"1"}}' ;;
    *'"method":"tools/list"'*)
      reply "$id" '{"tools":[{"name":"probe","description":"Probes the client","inputSchema":{"type":"object"}}]}' ;;
    *'"method":"tools/call"'*)
      case "$mode" in
        hang) ;;
        garbage) echo "<html>this is not JSON-RPC</html>" ;;
        exit) echo "scripted server: giving up" >&2; exit 3 ;;
        echo)
          text=$(sed -n 's/.*"text":"\([A-Za-z0-9_-]*\)".*/\1/p' <<<"$line")
          reply "$id" "{\"content\":[{\"type\":\"text\",\"text\":\"$text\"}]}" ;;
        fail) reply "$id" '{"content":[{"type":"text","text":"the probe failed"}],"isError":true}' ;;
        asks)
          echo '{"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage","params":{}}'
          IFS= read -r first
          echo '{"jsonrpc":"2.0","id":"s2","method":"ping"}'
          IFS= read -r second
          body=$(printf '%s\n%s' "$first" "$second" | sed 's/\\/\\\\/g; s/"/\\"/g' | paste -sd '|')
          reply "$id" "{\"content\":[{\"type\":\"text\",\"text\":\"$body\"}]}" ;;
      esac ;;
  esac
done
