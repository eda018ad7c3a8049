#!/bin/sh
# relay.sh measures every row of issue 14's table. It builds the echo server,
# the bare relay, mcpshim (static and stripped, CGO_ENABLED=0 -ldflags='-s -w',
# as mcpsnoop's releases are built) and the driver, then runs the
# driver RUNS times (default 3: the machine may be shared) and the probe
# benchmark after each, and prints the summary: median and range over the runs.
#   PEER_MCPSNOOP=/path/to/mcpsnoop  adds the peer, trace on and off; build it as
#     its release is: CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' ./cmd/mcpsnoop
#   MCPSHIM=/path/to/mcpshim         measures that build instead (e.g. main's)
#   PROBE=0                          skips the probe benchmark
# Output goes to stdout and to $OUT/run-N.txt; ledgers, stderr logs and the
# run's rows.tsv to $OUT/run-N/. Extra arguments go to the driver (-n 1000,
# -flood 268435456, ...). The load average is printed at the start and end
# of each run: read the figures of a shared machine with it.
# GOFLAGS=-overlay=/path.json builds around a colleague's file that does not compile.
set -eu
cd "$(dirname "$0")/.."
OUT=${OUT:-${TMPDIR:-/tmp}/mcpshim-relaybench}
RUNS=${RUNS:-3}
mkdir -p "$OUT/bin"
go build -o "$OUT/bin/echo" ./bench/relay/echo
go build -o "$OUT/bin/bare" ./bench/relay/bare
go build -o "$OUT/bin/driver" ./bench/relay/driver
shim=${MCPSHIM:-}
if [ -z "$shim" ]; then
	# Static: with cgo, the net package's resolver links libc and ld.so, 1.7 MiB
	# of idle RSS and a slower exec.
	CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$OUT/bin/mcpshim" ./cmd/mcpshim
	shim="$OUT/bin/mcpshim"
fi
if [ "${PROBE:-1}" != 0 ]; then
	go test -c -o "$OUT/bin/probe.test" ./probe/
fi
set -- -echo "$OUT/bin/echo" -bare "$OUT/bin/bare" -shim "$shim" ${PEER_MCPSNOOP:+-mcpsnoop "$PEER_MCPSNOOP"} "$@"
rows=
i=1
while [ "$i" -le "$RUNS" ]; do
	rm -rf "$OUT/run-$i"
	mkdir -p "$OUT/run-$i"
	echo "== run $i of $RUNS"
	"$OUT/bin/driver" -work "$OUT/run-$i" "$@" | tee "$OUT/run-$i.txt"
	# The floods leave ledgers and traces of a GiB or more: keep only their size.
	ls -l "$OUT/run-$i"/*.jsonl >>"$OUT/run-$i.txt" 2>/dev/null || true
	rm -f "$OUT/run-$i"/*.jsonl
	if [ "${PROBE:-1}" != 0 ]; then
		# 100 fixture servers, 3 silent, a 2 s deadline, --parallel 0 (all at once).
		(cd probe && "$OUT/bin/probe.test" -test.run '^$' -test.bench 'Fleet100/parallel-0' -test.benchtime 1x) |
			tee -a "$OUT/run-$i.txt" |
			awk '/wall-s\/op/ { for (f = 1; f < NF; f++) { if ($(f+1) == "wall-s/op") w = $f; if ($(f+1) == "cpu-s/op") c = $f * 1000 } }
				END { if (w != "") { printf "probe_wall\tmcpshim\t%s\nprobe_cpu\tmcpshim\t%s\n", w, c / 97 } }' >>"$OUT/run-$i/rows.tsv"
		# The same fleet through seed 000's Python probe (16 workers, initialize only).
		if command -v python3 >/dev/null; then
			(cd probe && MCPSHIM_PROBE_TEST_FIXTURE=1 python3 ../bench/probe/seedprobe.py 100 3 2 -- \
				"$OUT/bin/probe.test" fixture healthy ';;' "$OUT/bin/probe.test" fixture silent) |
				tee -a "$OUT/run-$i.txt" |
				awk '{ printf "probe_seed_wall\tmcpshim\t%s\nprobe_seed_cpu\tmcpshim\t%s\n", $1, $2 * 1000 / 97 }' >>"$OUT/run-$i/rows.tsv"
		fi
		echo "load average after the probes: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT/run-$i.txt"
	fi
	rows="$rows $OUT/run-$i/rows.tsv"
	i=$((i + 1))
done
echo "== summary"
# shellcheck disable=SC2086 # one argument per run
"$OUT/bin/driver" -summary $rows | tee "$OUT/summary.txt"
