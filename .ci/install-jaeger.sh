#!/bin/sh
# install-jaeger.sh builds the Jaeger that cmd/mcpshim's TestJaeger exports to
# (v1.75.0, pinned with its dependencies in .ci/jaeger/go.mod and go.sum, a
# module of its own so mcpshim's go.mod never takes its dependencies) once,
# into a cache kept across runs, and prints the binary's path. The build takes
# ~9 min on 2 cores: .ci/run starts this in the background first.
set -eu
cd "$(dirname "$0")/jaeger"
version=v1.75.0
bin="${MCPSHIM_JAEGER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mcpshim-ci}/jaeger-$version"
if [ ! -x "$bin" ]; then
	mkdir -p "$(dirname "$bin")"
	# -trimpath and no VCS stamp: the same inputs give the same binary.
	GOFLAGS="-mod=readonly -buildvcs=false" go build -trimpath -o "$bin.tmp" github.com/jaegertracing/jaeger/cmd/jaeger
	mv "$bin.tmp" "$bin"
fi
echo "$bin"
