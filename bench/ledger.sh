#!/bin/sh
# ledger.sh generates the ledgers of a synthetic fleet (SIZE bytes, default
# 1 GiB: 40 servers, pairs of shims interleaved per file, millions of records)
# and times, side by side in one run over the same files warm in the page
# cache, `mcpshim ledger --json`, `mcpshim ledger stats --json` and jq
# computing the same per-run summary (the program below). Wall time and peak
# RSS come from GNU time; the outcome counts of mcpshim and jq are compared.
# Needs jq and GNU time (apt-get install -y jq time).
set -eu
cd "$(dirname "$0")/.."
SIZE=${SIZE:-1073741824}
OUT=${OUT:-${TMPDIR:-/tmp}/mcpshim-ledgerbench}
FLEET="$OUT/fleet-$SIZE"
mkdir -p "$OUT/bin"
go build -o "$OUT/bin/mcpshim" ./cmd/mcpshim
go build -o "$OUT/bin/genledger" ./bench/genledger
[ -d "$FLEET" ] || "$OUT/bin/genledger" -dir "$FLEET" -size "$SIZE"

# The per-run summary `mcpshim ledger --json` gives, in jq: slurp every record,
# group by run, order each run by seq, and fold it. (A streaming
# `reduce inputs` keyed by run is slower still in jq 1.6: it copies the
# accumulator on every record.)
cat > "$OUT/runs.jq" <<'EOF'
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
EOF

cat "$FLEET"/*.jsonl >/dev/null # warm the cache for every contender alike
printf 'ledger: %s bytes in %s files, %s; %s\n' "$(cat "$FLEET"/*.jsonl | wc -c)" "$(ls "$FLEET" | wc -l)" \
	"$(jq --version)" "$(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo ?)"

# measure NAME CMD... runs CMD with stdout to $OUT/NAME.json and prints its
# wall time and peak RSS; the seconds are left in $secs.
measure() {
	name=$1
	shift
	/usr/bin/time -f '%e %M' -o "$OUT/time" "$@" >"$OUT/$name.json"
	read -r secs kib <"$OUT/time"
	printf '%-28s %8.2f s %7d MiB peak RSS\n' "$name" "$secs" $((kib / 1024))
}
measure "mcpshim ledger --json" "$OUT/bin/mcpshim" ledger --json "$FLEET"
list=$secs
measure "mcpshim ledger stats --json" "$OUT/bin/mcpshim" ledger stats --json "$FLEET"
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
