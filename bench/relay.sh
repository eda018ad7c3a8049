#!/bin/sh
# relay.sh builds the echo server, the bare relay, mcpshim and the driver, then
# runs the relay benchmark RUNS times (default 3: the machine may be shared).
# Output goes to stdout and to $OUT/run-N.txt; ledgers and stderr logs to $OUT/run-N/.
# Extra arguments go to the driver (e.g. -n 1000).
# GOFLAGS=-overlay=/path.json builds around a colleague's file that does not compile.
set -eu
cd "$(dirname "$0")/.."
OUT=${OUT:-${TMPDIR:-/tmp}/mcpshim-relaybench}
RUNS=${RUNS:-3}
mkdir -p "$OUT/bin"
go build -o "$OUT/bin/echo" ./bench/relay/echo
go build -o "$OUT/bin/bare" ./bench/relay/bare
go build -o "$OUT/bin/driver" ./bench/relay/driver
go build -o "$OUT/bin/mcpshim" ./cmd/mcpshim
i=1
while [ "$i" -le "$RUNS" ]; do
	rm -rf "$OUT/run-$i"
	mkdir -p "$OUT/run-$i"
	echo "== run $i of $RUNS"
	"$OUT/bin/driver" -echo "$OUT/bin/echo" -bare "$OUT/bin/bare" -shim "$OUT/bin/mcpshim" \
		-work "$OUT/run-$i" "$@" | tee "$OUT/run-$i.txt"
	i=$((i + 1))
done
