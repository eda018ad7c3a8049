#!/bin/sh
# probe-npx.sh starts N (default 10) real npm reference servers from interop/
# (server-memory, -filesystem, -everything, in turn) with `npx --offline`,
# all from one config, and probes them at each --parallel in PARALLEL
# (default "auto 16 2 1"), ROUNDS times each, with a 60 s deadline so that no
# server is cut off: it prints each server's time to READY, how many took
# longer than the default 5 s deadline, and the most servers alive at once.
# This is how probe's default concurrency (auto: one server per CPU, more
# while the started ones leave the CPU idle) was checked. Needs node and
# `npm ci --prefix interop`.
set -eu
cd "$(dirname "$0")/.."
N=${N:-10}
PARALLEL=${PARALLEL:-"auto 16 2 1"}
ROUNDS=${ROUNDS:-2}
OUT=${OUT:-${TMPDIR:-/tmp}/mcpshim-probebench}
mkdir -p "$OUT"
go build -o "$OUT/mcpshim" ./cmd/mcpshim
python3 - "$N" "$OUT" <<'PY'
import json, sys
n, out = int(sys.argv[1]), sys.argv[2]
kinds = [("memory", ["-y", "@modelcontextprotocol/server-memory"]),
         ("fs", ["-y", "@modelcontextprotocol/server-filesystem", out]),
         ("everything", ["-y", "@modelcontextprotocol/server-everything"])]
servers = {}
for i in range(n):
    k, a = kinds[i % 3]
    servers[f"{k}-{i}"] = {"command": "npx", "args": ["--offline"] + a,
                           "env": {"MEMORY_FILE_PATH": f"{out}/memory-{i}.json"}}
json.dump({"mcpServers": servers}, open(f"{out}/fleet.json", "w"), indent=2)
PY
echo "$(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
cd interop # npx finds the pinned packages here
for r in $(seq "$ROUNDS"); do
	for p in $PARALLEL; do
		"$OUT/mcpshim" probe --config "$OUT/fleet.json" --fresh --timeout 60s --retries 0 --parallel "$p" --ledger off --json 2>/dev/null |
			python3 -c '
import json, sys
d = json.load(sys.stdin)
from datetime import datetime
rs = d["results"]
e = sorted(r["elapsed_ms"] / 1000 for r in rs)
import re
def t(s):  # RFC 3339 with up to nanoseconds; Python reads microseconds
    m = re.match(r"(.*T\d\d:\d\d:\d\d)(\.\d+)?(.*)", s)
    frac = (m.group(2) or ".0")[:7]
    return datetime.fromisoformat(m.group(1) + frac + m.group(3).replace("Z", "+00:00")).timestamp()
edges = sorted([(t(r["started"]), 1) for r in rs] + [(t(r["started"]) + r["elapsed_ms"] / 1000, -1) for r in rs])
n = most = 0
for _, x in edges:
    n += x
    most = max(most, n)
print("parallel %s: wall %.1fs, each %s s, over 5s: %d of %d, at most %d alive" % (sys.argv[1], d["elapsed_ms"] / 1000,
      " ".join("%.1f" % x for x in e), sum(x > 5 for x in e), len(e), most))' "$p"
		echo "  load average $(cut -d' ' -f1-3 /proc/loadavg)"
	done
done
