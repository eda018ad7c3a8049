#!/usr/bin/env python3
"""A stdio MCP server in the Python standard library only.

It speaks the initialize era (2024-11-05 .. 2025-11-25), like most hand-written
servers: server/discover and any other unknown method answer -32601. Tools:
echo and add. It exits at stdin EOF.
"""

import json
import sys

VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]

TOOLS = [
    {
        "name": "echo",
        "description": "Returns the message.",
        "inputSchema": {
            "type": "object",
            "properties": {"message": {"type": "string"}},
            "required": ["message"],
        },
    },
    {
        "name": "add",
        "description": "Adds two integers.",
        "inputSchema": {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
        },
    },
]


def text(s, is_error=False):
    return {"content": [{"type": "text", "text": s}], "isError": is_error}


def call(params):
    args = params.get("arguments") or {}
    name = params.get("name")
    if name == "echo":
        return text(str(args.get("message", "")))
    if name == "add":
        return text(str(int(args.get("a", 0)) + int(args.get("b", 0))))
    raise LookupError("unknown tool: %s" % name)


def handle(msg):
    method = msg.get("method")
    params = msg.get("params") or {}
    if method == "initialize":
        asked = params.get("protocolVersion")
        return {
            "protocolVersion": asked if asked in VERSIONS else VERSIONS[0],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "pyserver", "version": "1.0.0"},
        }
    if method == "ping":
        return {}
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call":
        return call(params)
    raise NotImplementedError(method)


def main():
    out = sys.stdout
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            msg = json.loads(line)
        except ValueError:
            reply = {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error"}}
        else:
            if "id" not in msg or "method" not in msg:
                continue  # a notification or a response: nothing to answer
            reply = {"jsonrpc": "2.0", "id": msg["id"]}
            try:
                reply["result"] = handle(msg)
            except NotImplementedError as e:
                reply["error"] = {"code": -32601, "message": "method not found: %s" % e}
            except LookupError as e:
                reply["error"] = {"code": -32602, "message": str(e)}
        out.write(json.dumps(reply, separators=(",", ":")) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
