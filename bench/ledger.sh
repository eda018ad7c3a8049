#!/bin/sh
# ledger.sh measures `mcpshim ledger` on generated ledgers (bench/genledger,
# seed 1: the same bytes every time), warm in the page cache, with GNU time:
# wall time, CPU (user+sys) and peak RSS, and the load average before and after
# (read the wall times of a shared machine with it). Needs GNU time, and jq for
# the first fleet (apt-get install -y jq time).
#
#   sh bench/ledger.sh                 a 1 GiB fleet of long runs (40 servers,
#     pairs of shims interleaved per file, hundreds of calls a run): ledger
#     --json, ledger stats --json, and jq computing the same per-run summary
#     (the program below); the outcome counts of mcpshim and jq are compared.
#   RUNS=1000000 sh bench/ledger.sh    that many short runs (genledger -lean:
#     about three records a run, 10 servers; 794 MB for a million): every
#     inspection command, against issue 28's goal of 512 MiB and 12 s each.
set -eu
cd "$(dirname "$0")/.."
SIZE=${SIZE:-1073741824}
RUNS=${RUNS:-}
OUT=${OUT:-${TMPDIR:-/tmp}/mcpshim-ledgerbench}
mkdir -p "$OUT/bin"
CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$OUT/bin/mcpshim" ./cmd/mcpshim
go build -o "$OUT/bin/genledger" ./bench/genledger
shim=${MCPSHIM:-$OUT/bin/mcpshim}

# measure NAME CMD... runs CMD with stdout to $OUT/NAME.json and prints its
# wall time, CPU and peak RSS; the seconds are left in $secs.
measure() {
	name=$1
	shift
	/usr/bin/time -f '%e %U %S %M' -o "$OUT/time" "$@" >"$OUT/$name.json"
	read -r secs user sys kib <"$OUT/time"
	printf '%-40s %7.2f s %7.2f s CPU %6d MiB peak RSS\n' "$name" "$secs" "$(echo "$user $sys" | awk '{ print $1 + $2 }')" $((kib / 1024))
}

if [ -n "$RUNS" ]; then
	FLEET="$OUT/runs-$RUNS"
	[ -d "$FLEET" ] || "$OUT/bin/genledger" -dir "$FLEET" -lean -runs "$RUNS" -servers 10
	cat "$FLEET"/*.jsonl >/dev/null
	printf 'ledger: %s bytes in %s files, %s runs; %s CPUs, load %s\n' "$(cat "$FLEET"/*.jsonl | wc -c)" "$(ls "$FLEET" | wc -l)" \
		"$RUNS" "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)"
	measure "ledger" "$shim" ledger "$FLEET"
	measure "ledger --json" "$shim" ledger --json "$FLEET"
	measure "ledger stats --json" "$shim" ledger stats --json "$FLEET"
	measure "ledger why --server server-03" "$shim" ledger why --server server-03 "$FLEET"
	measure "ledger --server server-03 --failed" "$shim" ledger --server server-03 --failed "$FLEET"
	measure "ledger --outcome TIMEOUT,CRASHED" "$shim" ledger --outcome TIMEOUT,CRASHED "$FLEET"
	echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
	exit 0
fi

FLEET="$OUT/fleet-$SIZE"
[ -d "$FLEET" ] || "$OUT/bin/genledger" -dir "$FLEET" -size "$SIZE"

# The per-run summary `mcpshim ledger --json` gives, in jq: slurp every record,
# group by run, order each run by seq, and fold it. (A streaming
# `reduce inputs` keyed by run is slower still in jq 1.6: it copies the
# accumulator on every record.)
cat > "$OUT/runs.jq" <<'JQ'
def count(f): map(select(f)) | length;
group_by(.run) | map(
  sort_by(.seq) as $e
  | ($e | map(select(.event == "initialize_responded" or .event == "discover_responded"
                     or .event == "modern_request" or .event == "handshake_replayed")) | first) as $hs
  | ($e | map(select(.event == "exited")) | last) as $exit
  | {
      run: $e[0].run, server: $e[0].server, started: $e[0].ts, ended: $e[-1].ts,
      records: ($e | length), last_event: $e[-1].event,
      tools: ($e | map(select(.event == "tools_list_responded" and .complete)) | last | .tool_count),
      calls: {
        ok: ($e | count(.event == "tool_call_responded" and .outcome == "success")),
        is_error: ($e | count(.event == "tool_call_responded" and .outcome == "is_error")),
        error: ($e | count((.event == "tool_call_responded" and .outcome == "rpc_error")
                           or (.event == "pending_failed" and .method == "tools/call")))
      },
      noise: ($e | count(.event == "stdout_noise")),
      exit_code: $exit.exit_code, signal: $exit.signal,
      outcome: (
        if any($e[]; .event == "spawn_failed") then "EXITED"
        elif any($e[]; .event == "stdout_noise" and .before_handshake) then "PROTOCOL_ERROR"
        elif $hs != null then
          (if $exit == null then "READY" elif $exit.exit_code == 0 or $exit.requested_by_shim then "ENDED" else "CRASHED" end)
        elif any($e[]; .event == "initialize_failed") then "PROTOCOL_ERROR"
        elif any($e[]; .event == "handshake_timeout") then "TIMEOUT"
        elif $exit != null then "EXITED"
        else "RUNNING" end)
    })
JQ

cat "$FLEET"/*.jsonl >/dev/null # warm the cache for every contender alike
printf 'ledger: %s bytes in %s files, %s; %s\n' "$(cat "$FLEET"/*.jsonl | wc -c)" "$(ls "$FLEET" | wc -l)" \
	"$(jq --version)" "$(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo ?)"
measure "mcpshim ledger --json" "$shim" ledger --json "$FLEET"
list=$secs
measure "mcpshim ledger stats --json" "$shim" ledger stats --json "$FLEET"
stats=$secs
measure "jq -s per-run summary" jq -s -f "$OUT/runs.jq" "$FLEET"/*.jsonl
jq=$secs
awk -v l="$list" -v s="$stats" -v j="$jq" 'BEGIN {
	printf "jq takes %.1fx the time of mcpshim ledger --json and %.1fx that of stats (goal: at least 3x)\n", j / l, j / s }'

ours=$(jq -c '[.runs[].outcome] | group_by(.) | map({(.[0]): length}) | add' "$OUT/mcpshim ledger --json.json")
theirs=$(jq -c '[.[].outcome] | group_by(.) | map({(.[0]): length}) | add' "$OUT/jq -s per-run summary.json")
if [ "$ours" = "$theirs" ]; then
	echo "outcomes agree: $ours"
else
	echo "outcomes differ: mcpshim $ours, jq $theirs"
	exit 1
fi
