#!/usr/bin/env bash
# CI for Windows (issue 24): vet and build for windows, then every package's
# tests built for windows/amd64 and run under wine, in one prefix, with the
# built mcpshim.exe (TestEndToEnd drives it: a server with a grandchild, bytes
# both ways, the ledger, no process left). Tests that need what wine cannot do
# are skipped by name, with the reason, from .ci/wine-skip.txt; the counts are
# printed. Linux-only tests are left out by build tags, not listed here.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$HOME/go/bin:$PATH"
start=$SECONDS

echo "== windows: wine"
. .ci/wine-setup.sh
W=$(mktemp -d)
trap 'wineserver -k 2>/dev/null || true; rm -rf "$W"' EXIT
echo "ready in $((SECONDS - start))s"

# With wine's overlay throughout, the standard library is compiled for
# windows once, not once with it and once without. windows/arm64 is built by
# GoReleaser in .ci/release-check.sh.
echo "== windows: vet, build, test binaries"
GOOS=windows go vet -overlay "$OVERLAY" ./...
GOOS=windows go build -overlay "$OVERLAY" ./...
pkgs=$(GOOS=windows go list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}}{{end}}' ./... | grep .)
GOOS=windows go build -overlay "$OVERLAY" -o "$W/mcpshim.exe" ./cmd/mcpshim
# One go invocation builds every test binary (pkg.test.exe; the names are unique).
GOOS=windows go test -c -overlay "$OVERLAY" -o "$W/tests/" $pkgs
echo "built in $((SECONDS - start))s"

echo "== windows: tests under wine"
export MCPSHIM_TEST_BIN
MCPSHIM_TEST_BIN=$(winepath -w "$W/mcpshim.exe")
module=$(go list -m)

skip=$(grep -v '^#' .ci/wine-skip.txt | grep . || true)
# run_pkg runs one package's test binary in its directory and writes its
# summary to $W/PKG.result: "status passed skipped-by-test listed seconds".
run_pkg() {
	local pkg=$1 rel=${1#"$module"/} names status=0 t0=$SECONDS
	local args=(-test.v -test.count=1 -test.timeout=10m)
	names=$(awk -v p="$rel" '$1 == p { print $2 }' <<<"$skip" | paste -sd'|')
	[ -n "$names" ] && args+=("-test.skip=^($names)\$")
	# Without CI=true: node and python3 are Linux's here, not Windows programs;
	# a test that needs one skips, saying so (counted and printed below).
	local log=$W/${pkg##*/}.log dir
	dir=$(go list -f '{{.Dir}}' "$pkg")
	(cd "$dir" && env -u CI wine "$W/tests/${pkg##*/}.test.exe" "${args[@]}") >"$log" 2>&1 || status=$?
	# Wine's CreateProcess fails now and then with "Internal error" on a busy
	# machine (one test of about 400, in 1 run of 3). Only the failed tests are run
	# again, once, and only for that error; the retry is printed.
	local failed
	failed=$(grep -o '^--- FAIL: [^ ]*' "$log" | cut -d' ' -f3 | paste -sd'|' || true)
	if [ "$status" -ne 0 ] && [ -n "$failed" ] && grep -q 'Internal error\.' "$log"; then
		echo "retried after wine's Internal error: ${failed//|/ }" >"$W/${pkg##*/}.retry"
		status=0
		(cd "$dir" && env -u CI wine "$W/tests/${pkg##*/}.test.exe" -test.v -test.count=1 -test.timeout=10m "-test.run=^($failed)\$") >"$log.retry" 2>&1 || status=$?
		grep -q '^--- FAIL' "$log.retry" && status=1
		grep -q '^--- PASS' "$log.retry" || status=1
	elif grep -q '^--- FAIL' "$log"; then
		status=1
	fi
	echo "$status $(cat "$log" "$log.retry" 2>/dev/null | grep -c '^--- PASS') $(grep -c '^ *--- SKIP' "$W/${pkg##*/}.log") $(grep -c . <<<"${names//|/$'\n'}") $((SECONDS - t0))" >"$W/${pkg##*/}.result"
}
# One package at a time: with two at once, wine's CreateProcess failed now
# and then with "Internal error" (1 run in 2).
for pkg in $pkgs; do
	run_pkg "$pkg"
done
failed=0 passed=0 skipped=0 listed=0
for pkg in $pkgs; do
	read -r status p s l secs <"$W/${pkg##*/}.result"
	passed=$((passed + p)) skipped=$((skipped + s)) listed=$((listed + l))
	if [ "$status" -ne 0 ]; then
		failed=$((failed + 1))
		echo "FAIL ${pkg#"$module"/} (${secs}s): $(grep -c '^--- FAIL' "$W/${pkg##*/}.log") failed, $p passed"
		# Each failed test's output, from its start to its end.
		cat "$W/${pkg##*/}".log* | awk '/^=== RUN / { n = 0; buf = "" } { if (n++ < 60) buf = buf $0 "\n" }
			/^--- FAIL/ { printf "%s", buf; n = 0; buf = "" } /^panic:/ { p = 1 } p' | head -200
	else
		echo "ok   ${pkg#"$module"/} (${secs}s): $p passed, $s skipped by the test"
	fi
	[ -f "$W/${pkg##*/}.retry" ] && sed 's/^/       /' "$W/${pkg##*/}.retry"
	# A skipped test (or subtest) and the last line it logged: its reason.
	awk '/^=== (RUN|CONT|NAME) / { cur = $3; next }
		/^ +[^ ]+\.go:[0-9]+: / { sub(/^ +/, ""); last[cur] = $0; next }
		/^ *--- SKIP: / { print "       skipped: " $3 ": " last[$3] }' "$W/${pkg##*/}.log"
done
echo "windows under wine: $passed tests passed, $listed skipped by name on wine (.ci/wine-skip.txt), $skipped skipped by the tests themselves (subtests included), $failed packages failed"
awk '!/^#/ && NF { name = $1 " " $2; $1 = $2 = ""; printf "  wine skips %-45s%s\n", name, $0 }' .ci/wine-skip.txt
echo "windows step: $((SECONDS - start))s"
[ "$failed" -eq 0 ]
