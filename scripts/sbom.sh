#!/bin/sh
# The CycloneDX SBOM of one release binary, as GoReleaser's sboms step runs it
# (.goreleaser.yaml), offline:
#
#   scripts/sbom.sh BINARY DOCUMENT VERSION
#
# cyclonedx-gomod reads the module list Go embeds in the binary (exactly what
# was linked in) and each dependency's licence from its LICENSE file in the
# module cache, asserted: the list to audit. mcpshim itself is not in the
# module cache (it is not published), so its licence, the LICENSE at the root
# of this repository, is set here.
# GOSUMDB=off: cyclonedx-gomod runs `go mod download` outside the module,
# which checks each module against the checksum database; offline that fails
# ("module lookup disabled") for a module the build took from the cache,
# already verified by go.sum, and its licence went missing on a fresh machine.
set -eu
GOPROXY=off GOSUMDB=off GOFLAGS=-mod=mod cyclonedx-gomod bin -json -licenses -assert-licenses -version "v$3" -output "$2" "$1" 2>&1 |
	grep -v 'github.com/mcpshim-dev/mcpshim@' >&2 || true
node -e '
const fs = require("fs"), file = process.argv[1];
const bom = JSON.parse(fs.readFileSync(file));
bom.metadata.component.licenses = [{ license: { id: "Apache-2.0" } }];
fs.writeFileSync(file, JSON.stringify(bom, null, 2) + "\n");
' "$2"
