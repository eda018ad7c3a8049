#!/bin/sh
# The files a package carries beside the binary, made from the binary's own
# text (GoReleaser's before hook, .goreleaser.yaml; npm/pack.sh reads them):
#
#   scripts/extras.sh OUT
#
#   OUT/completions/mcpshim.bash _mcpshim mcpshim.fish mcpshim.ps1
#                          mcpshim completion bash|zsh|fish|powershell
#   OUT/manpages/mcpshim.1.gz    mcpshim __man, from the usage texts
#
# The same bytes from the same commit on any machine (gzip -n: no name or time).
set -eu
out=${1:?usage: scripts/extras.sh OUT}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
CGO_ENABLED=0 go build -trimpath -o "$tmp/mcpshim" ./cmd/mcpshim
rm -rf "$out"
mkdir -p "$out/completions" "$out/manpages"
"$tmp/mcpshim" completion bash >"$out/completions/mcpshim.bash"
"$tmp/mcpshim" completion zsh >"$out/completions/_mcpshim"
"$tmp/mcpshim" completion fish >"$out/completions/mcpshim.fish"
"$tmp/mcpshim" completion powershell >"$out/completions/mcpshim.ps1"
"$tmp/mcpshim" __man | gzip -9n >"$out/manpages/mcpshim.1.gz"
