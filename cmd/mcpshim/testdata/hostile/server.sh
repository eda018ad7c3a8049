#!/bin/sh
# A hostile MCP server for the terminal-safety and redaction tests. It puts
# $HOSTILE_RAW (raw bytes) on stderr and as stdout noise, and $HOSTILE_JSON
# (the same text, JSON-escaped) in its server name, a tool name and
# description, a tool result and an error message. Its argv is in stderr too.
printf 'starting %s %s\n' "$*" "$HOSTILE_RAW" >&2
printf 'noise %s\n' "$HOSTILE_RAW"
while IFS= read -r line; do
	id=$(printf '%s' "$line" | sed -n 's/^.*"id":\([^,}]*\).*$/\1/p')
	case "$line" in
	*'"initialize"'*)
		printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"srv %s","version":"1"}}}\n' "$id" "$HOSTILE_JSON" ;;
	*'"tools/list"'*)
		printf '{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"ok_tool","description":"d","inputSchema":{"type":"object"}},{"name":"t %s","description":"%s","inputSchema":{"type":"object"}}]}}\n' "$id" "${HOSTILE_TOOL-$HOSTILE_JSON}" "$HOSTILE_JSON" ;;
	*'"tools/call"'*)
		printf 'stderr during call %s\n' "$HOSTILE_RAW" >&2
		printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"body %s"}]}}\n' "$id" "$HOSTILE_JSON" ;;
	*'"die"'*)
		printf 'dying %s\n' "$HOSTILE_RAW" >&2
		exit 3 ;;
	*'"id"'*)
		printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"no %s"}}\n' "$id" "$HOSTILE_JSON" ;;
	esac
done
printf 'exiting %s\n' "$HOSTILE_RAW" >&2
exit 3
