#!/usr/bin/env bash
# Measures what npx adds to a server's start: the time from spawning the
# client's command to the answer to initialize, for a fixture server behind
# mcpshim started (a) as the binary, (b) through the npm launcher installed in
# a project (npm install mcpshim), (c) as `npx -y mcpshim` warm (its cache
# holds the packages), (d) as `npx -y mcpshim` cold (an empty cache each run).
# npx reads the packages from a loopback registry (registry.js) serving the
# tarballs packed from DIST, so no network is used and none is measured.
#
#   npm/start-cost.sh DIST [RUNS]     DIST from goreleaser release --snapshot
set -euo pipefail
dist=$(cd "${1:?usage: npm/start-cost.sh DIST [RUNS]}" && pwd)
runs=${2:-20}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
registry=
trap '[ -z "$registry" ] || kill "$registry"; rm -rf "$tmp"' EXIT

version=$(node -p "require('$dist/metadata.json').version")
os=$(node -p process.platform) cpu=$(node -p process.arch)
"$here/pack.sh" "$dist" "$tmp/tgz" >/dev/null
node "$here/registry.js" "$tmp/tgz" >"$tmp/registry.url" &
registry=$!
until [ -s "$tmp/registry.url" ]; do kill -0 "$registry"; sleep 0.1; done
export npm_config_registry npm_config_fetch_retries=0 npm_config_update_notifier=false
npm_config_registry=$(cat "$tmp/registry.url")

mkdir "$tmp/prefix"
npm install --cache "$tmp/cache" --prefix "$tmp/prefix" --no-audit --no-fund --loglevel=error mcpshim >/dev/null
bin=$tmp/prefix/node_modules/@mcpshim/$os-$cpu/bin/mcpshim
server=(--name start-cost --ledger "$tmp/ledger.jsonl" -- "$bin" fixture healthy)

cd "$tmp"
echo "mcpshim $version on $os/$cpu, $runs runs each, load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime)"
measure() { printf '%-36s' "$1"; shift; node "$here/start-cost.js" "$runs" "$@"; }
measure "the fixture server alone:" -- "$bin" fixture healthy
measure "(a) mcpshim, the binary:" -- "$bin" "${server[@]}"
measure "(b) the npm launcher (npm install):" -- "$tmp/prefix/node_modules/.bin/mcpshim" "${server[@]}"
npx -y --cache "$tmp/warm" mcpshim --version >/dev/null
measure "(c) npx -y mcpshim, warm:" -- npx -y --cache "$tmp/warm" mcpshim "${server[@]}"
measure "(d) npx -y mcpshim, cold:" --fresh-cache "$tmp/cold" -- npx -y --cache "$tmp/cold" mcpshim "${server[@]}"
