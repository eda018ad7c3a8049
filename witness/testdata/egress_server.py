#!/usr/bin/env python3
"""Minimal stdio MCP server that reaches out, for the egress witness tests.

Like seed 002's walkthrough, it fetches every --startup URL during startup,
before reading stdin; then, on each tools/call of its one tool, fetch_all, it
fetches every --call URL. Around each fetch it reports seed 002's logfmt phase
events on stderr. Standard library only.

Proxying: build_opener installs urllib's default ProxyHandler, which reads
http_proxy / https_proxy (either case) from the environment. urllib ignores
all_proxy, and bypasses a host only when no_proxy lists it; the witness sets
no_proxy empty, so even 127.0.0.1 would go through it. The tests use made-up
names anyway, which the witness resolves, so nothing here resolves them.
"""

import argparse
import json
import ssl
import sys
import time
import urllib.error
import urllib.parse
import urllib.request


def event(**fields):
    """Print one logfmt event line on stderr; stdout carries only MCP."""
    parts = []
    for key, value in fields.items():
        value = str(value)
        if value == "" or any(c in value for c in ' "=\\'):
            value = json.dumps(value)
        parts.append(f"{key}={value}")
    print(" ".join(parts), file=sys.stderr, flush=True)


class Fetcher:
    def __init__(self, cafile):
        context = ssl.create_default_context(cafile=cafile)
        self.opener = urllib.request.build_opener(urllib.request.HTTPSHandler(context=context))
        self.count = 0

    def fetch(self, url, phase, tool=None):
        """Fetch url and return a one-line summary: the URL and a status."""
        self.count += 1
        action_id = f"act_{self.count}"
        parts = urllib.parse.urlsplit(url)
        attempt = {"phase": phase, "event": "external_attempt", "action_id": action_id}
        if tool:
            attempt["tool"] = tool
        attempt.update(channel=parts.scheme, host=parts.hostname)
        event(**attempt)
        started = time.monotonic()
        try:
            with self.opener.open(url, timeout=60) as resp:  # generous: a busy machine is slow
                status = str(resp.status)
                body = resp.read().decode(errors="replace")
        except urllib.error.HTTPError as err:
            status, body = str(err.code), ""
        except OSError as err:  # URLError included: refused, tunnel failed
            status, body = "error", str(getattr(err, "reason", err))
        duration_ms = int((time.monotonic() - started) * 1000)
        event(phase=phase, event="external_result", action_id=action_id, status=status, duration_ms=duration_ms)
        return f"{url} {status} {body}".rstrip()


def respond(msg_id, result=None, error=None):
    reply = {"jsonrpc": "2.0", "id": msg_id}
    if error is not None:
        reply["error"] = error
    else:
        reply["result"] = result
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--startup", action="append", default=[])
    parser.add_argument("--call", action="append", default=[])
    parser.add_argument("--cafile")
    args = parser.parse_args()

    fetcher = Fetcher(args.cafile)
    for url in args.startup:
        fetcher.fetch(url, "launch")
    event(phase="launch", event="executable_ready")

    for line in sys.stdin:
        if not line.strip():
            continue
        msg = json.loads(line)
        method, msg_id = msg.get("method"), msg.get("id")
        if msg_id is None:
            continue  # notifications need no answer
        if method == "initialize":
            respond(msg_id, {
                "protocolVersion": msg.get("params", {}).get("protocolVersion", "2025-06-18"),
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "egress-fixture", "version": "0"},
            })
        elif method == "tools/list":
            respond(msg_id, {"tools": [{
                "name": "fetch_all",
                "description": "Fetch every --call URL.",
                "inputSchema": {"type": "object", "properties": {}},
            }]})
        elif method == "tools/call":
            lines = [fetcher.fetch(url, "execution", tool="fetch_all") for url in args.call]
            respond(msg_id, {"content": [{"type": "text", "text": "\n".join(lines)}], "isError": False})
        else:
            respond(msg_id, error={"code": -32601, "message": f"method not found: {method}"})


if __name__ == "__main__":
    main()
