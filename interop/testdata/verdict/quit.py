"""A stdio server that answers initialize, then exits 0 by itself while
its client is still connected."""

import json
import sys

line = sys.stdin.readline()
req = json.loads(line)
sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": req["id"], "result": {
    "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
    "serverInfo": {"name": "quitter", "version": "1.0"}}}) + "\n")
sys.stdout.flush()
sys.stdin.readline()  # notifications/initialized
sys.exit(0)
