#!/bin/sh
# install-interop.sh installs the npm packages of the interop suite exactly as
# pinned in interop/package-lock.json, for `go test ./interop`. It needs node
# (20 or later) and npm on PATH and the npm registry; no cache.
set -eu
cd "$(dirname "$0")/.."
echo "node $(node --version), npm $(npm --version)"
npm ci --prefix interop --no-audit --no-fund
