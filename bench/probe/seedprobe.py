#!/usr/bin/env python3
"""seedprobe.py is seed 000's startup probe, as its article describes it,
for comparison with `mcpshim probe`: per server, Popen, one initialize,
one line read on a thread joined with the deadline as its timeout, then
kill; a pool of 16 workers for the fleet.

usage: seedprobe.py SERVERS SILENT DEADLINE -- COMMAND... (healthy server)
                                              ;; COMMAND... (silent server)
Prints one line: wall seconds, the probe's own CPU seconds (children not
counted), and the count of each outcome.
"""
import json, os, resource, subprocess, sys, threading, time
from concurrent.futures import ThreadPoolExecutor

REQUEST = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                      "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                 "clientInfo": {"name": "startup-probe", "version": "1.0"}}}) + "\n"


def probe(command, timeout):
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    box = {}

    def read_one_line():
        box["line"] = proc.stdout.readline()

    reader = threading.Thread(target=read_one_line, daemon=True)
    try:
        proc.stdin.write(REQUEST)
        proc.stdin.flush()
    except OSError:
        pass
    reader.start()
    reader.join(timeout)
    outcome = "TIMEOUT"
    if not reader.is_alive():
        line = box.get("line") or ""
        outcome = "EXITED" if not line else ("PROTOCOL_ERROR" if "error" in json.loads(line) else "READY")
    proc.kill()
    proc.wait()
    return outcome


def main():
    n, silent, deadline = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
    rest = sys.argv[5:]
    cut = rest.index(";;")
    healthy, quiet = rest[:cut], rest[cut + 1:]
    # The silent servers sit at the same places as in the Go benchmark (every 33rd).
    fleet = [quiet if i % 33 == 32 and silent > 0 else healthy for i in range(n)]
    t0 = time.monotonic()
    with ThreadPoolExecutor(max_workers=16) as pool:
        outcomes = list(pool.map(lambda c: probe(c, deadline), fleet))
    wall = time.monotonic() - t0
    ru = resource.getrusage(resource.RUSAGE_SELF)
    counts = {o: outcomes.count(o) for o in sorted(set(outcomes))}
    print(f"{wall:.3f} {ru.ru_utime + ru.ru_stime:.3f} {counts}")


if __name__ == "__main__":
    main()
