#!/usr/bin/env bash
# Release check, called from .ci/run: a GoReleaser snapshot of the checked-out
# tree, the archives it made (checksums, contents, each binary's target and
# stamps, the one for this machine run), the .deb installed and the .rpm
# listed and unpacked, the project's identity in every package, that a second
# build elsewhere gives the same bytes, and the npm packages packed from it,
# installed with no network and run through npx. Publishes nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
export PATH="/usr/local/go/bin:$HOME/go/bin:$PATH"

# v2.17.0 is the newest GoReleaser that builds with Go 1.26 (v2.18 needs 1.27).
GORELEASER=github.com/goreleaser/goreleaser/v2@v2.17.0
CYCLONEDX=github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod@v1.10.0

fail() { echo "release check: $*" >&2; exit 1; }
tmp=$(mktemp -d)
registry=
trap '[ -z "$registry" ] || kill "$registry"; rm -rf "$tmp"' EXIT
json() { node -p "const v = JSON.parse(require('fs').readFileSync('$1')); $2"; }

# The project's identity in every package: npm's author, the .deb's and the
# .rpm's maintainer and vendor, winget's publisher (.goreleaser.yaml).
IDENTITY="mcpshim developers"
PROJECT_URL=https://github.com/mcpshim-dev/mcpshim
# rpm lists the .rpm (rpm -qlp) and unpacks it (rpm2cpio | cpio): Debian 12's, pinned.
RPM_DEBS="rpm=4.18.0+dfsg-1+deb12u1 rpm2cpio=4.18.0+dfsg-1+deb12u1 cpio=2.13+dfsg-7.1"

echo "== release tools"
# The Windows archives are zips.
command -v unzip >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq unzip >/dev/null
for pkg in $RPM_DEBS; do
	[ "$(dpkg-query -W -f '${Version}' "${pkg%%=*}" 2>/dev/null)" = "${pkg#*=}" ] && continue
	(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $RPM_DEBS >/dev/null) ||
		fail "could not install $RPM_DEBS (apt-cache policy names the versions this Debian has; update RPM_DEBS)"
	break
done
# Built once into $HOME/go/bin; a later run finds the pinned version there.
goreleaser --version 2>/dev/null | grep -q "GitVersion: *${GORELEASER#*@}$" || go install "$GORELEASER"
cyclonedx-gomod version 2>/dev/null | grep -q "Version:.*${CYCLONEDX#*@}$" || go install "$CYCLONEDX"

echo "== goreleaser release --snapshot"
export SOURCE_DATE_EPOCH
SOURCE_DATE_EPOCH=$(git log -1 --format=%ct)
# GoReleaser reads the project's URL from the git remote; a checkout without
# one gets this project's own, for this command only.
remote=()
if [ -z "$(git remote)" ]; then
	remote=(GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=remote.origin.url GIT_CONFIG_VALUE_0=https://github.com/mcpshim-dev/mcpshim.git)
fi
# checksums.txt is signed with cosign keyless (.goreleaser.yaml signs), which
# needs the CI's OIDC identity: here a cosign that checks how GoReleaser calls
# it and writes a placeholder bundle stands in, proving the signing is wired.
mkdir "$tmp/cosign"
cat >"$tmp/cosign/cosign" <<'EOF'
#!/bin/sh
echo "$*" >"$(dirname "$0")/argv"
[ "$#" = 4 ] && [ "$1" = sign-blob ] && [ "${2#--bundle=}" != "$2" ] && [ "$4" = --yes ] || { echo "cosign: unexpected arguments $*" >&2; exit 2; }
echo '{"mediaType":"placeholder: signed by .ci/release-check.sh, not by cosign"}' >"${2#--bundle=}"
EOF
chmod +x "$tmp/cosign/cosign"
PATH="$tmp/cosign:$PATH" env "${remote[@]}" goreleaser release --snapshot --clean >"$tmp/goreleaser.log" 2>&1 ||
	{ cat "$tmp/goreleaser.log"; fail "goreleaser failed"; }

version=$(json dist/metadata.json v.version)
head=$(git rev-parse HEAD)
head_date=$(TZ=UTC git log -1 --date=format-local:%Y-%m-%dT%H:%M:%SZ --format=%cd)
host_os=$(go env GOOS) host_arch=$(go env GOARCH)
extras="completions/_mcpshim completions/mcpshim.bash completions/mcpshim.fish completions/mcpshim.ps1"
# The wine prefix .ci/wine-setup.sh made, if any: the windows/amd64 binary runs there.
wineprefix=${WINEPREFIX:-${TMPDIR:-/tmp}/mcpshim-wine-$(id -u)}

echo "== archives of $version"
(cd dist && sha256sum --quiet -c checksums.txt) || fail "dist/checksums.txt does not match the files"
for os in linux darwin windows; do
	for arch in amd64 arm64; do
		exe=mcpshim archive=dist/mcpshim_${version}_${os}_${arch}.tar.gz
		[ "$os" = windows ] && exe=mcpshim.exe archive=${archive%.tar.gz}.zip
		[ -f "$archive" ] || fail "no $archive"
		dir=$tmp/$os-$arch
		mkdir -p "$dir"
		if [ "$os" = windows ]; then
			contents=$(unzip -Z1 "$archive" | grep -v '/$' | LC_ALL=C sort | tr '\n' ' ')
			unzip -q "$archive" -d "$dir"
		else
			contents=$(tar -tzf "$archive" | grep -v '/$' | LC_ALL=C sort | tr '\n' ' ')
			tar -xzf "$archive" -C "$dir"
		fi
		want="LICENSE README.md $extras manpages/mcpshim.1.gz $exe "
		[ "$contents" = "$want" ] || fail "$archive holds $contents, want $want"
		cmp -s LICENSE "$dir/LICENSE" || fail "$archive: its LICENSE is not the repository's"
		info=$(go version -m "$dir/$exe")
		for want in "GOOS=$os" "GOARCH=$arch" "-trimpath=true" "CGO_ENABLED=0" "mod	github.com/mcpshim-dev/mcpshim"; do
			grep -qF -- "$want" <<<"$info" || fail "$archive: go version -m lacks $want:"$'\n'"$info"
		done
		grep -qaF "$head" "$dir/$exe" || fail "$archive: commit $head is not stamped in"
		run=()
		if [ "$os/$arch" = "$host_os/$host_arch" ]; then
			run=("$dir/mcpshim")
		elif [ "$os/$arch" = linux/arm64 ] && command -v qemu-aarch64-static >/dev/null; then
			run=(qemu-aarch64-static "$dir/mcpshim")
		elif [ "$os/$arch" = windows/amd64 ] && [ -f "$wineprefix/drive_c/windows/system32/bcryptprimitives.dll" ]; then
			run=(env WINEPREFIX="$wineprefix" WINEDEBUG=-all wine "$dir/mcpshim.exe")
		fi
		if [ ${#run[@]} -eq 0 ]; then
			echo "$archive: $os/$arch, stamped (not run on $host_os/$host_arch)"
			continue
		fi
		"${run[@]}" version --json >"$dir/version.json" || fail "$archive: mcpshim version failed"
		got=$(json "$dir/version.json" '[v.version, v.commit, v.date, v.os, v.arch, v.source].join(" ")')
		want="$version $head $head_date $os $arch release"
		[ "$got" = "$want" ] || fail "$archive: version --json says $got, want $want"
		echo "$archive: runs: $("${run[@]}" version)"
		# The man page and the completions are the binary's own text (made by
		# this machine's build: a path in the usage differs on Windows).
		[ "$os/$arch" = "$host_os/$host_arch" ] || continue
		"${run[@]}" __man | cmp -s - <(gunzip -c "$dir/manpages/mcpshim.1.gz") || fail "$archive: manpages/mcpshim.1.gz is not what its mcpshim __man prints"
		for shell in bash:mcpshim.bash zsh:_mcpshim fish:mcpshim.fish powershell:mcpshim.ps1; do
			"${run[@]}" completion "${shell%%:*}" | cmp -s - "$dir/completions/${shell#*:}" ||
				fail "$archive: completions/${shell#*:} is not what its mcpshim completion ${shell%%:*} prints"
		done
	done
done
grep -q "mcpshim_${version}_windows_amd64.zip" dist/checksums.txt || fail "dist/checksums.txt lacks the windows zips"
[ "$(ls dist/mcpshim_"$version"_*.cdx.json | wc -l)" = 6 ] || fail "want an SBOM for each of the 6 binaries: $(ls dist/*.cdx.json)"
for sbom in dist/mcpshim_"$version"_*.cdx.json; do
	n=$(json "$sbom" 'v.bomFormat === "CycloneDX" ? v.components.length : 0')
	[ "$n" -gt 0 ] || fail "$sbom is not a CycloneDX SBOM with components"
	# mcpshim's licence, and one for every dependency: the list to audit.
	got=$(json "$sbom" '(v.metadata.component.licenses || []).map(l => l.license.id).join(",")')
	[ "$got" = Apache-2.0 ] || fail "$sbom: mcpshim's licence is '$got', want Apache-2.0"
	unlicensed=$(json "$sbom" 'v.components.filter(c => !(c.licenses || []).some(l => l.license && (l.license.id || l.license.name))).map(c => c.name).join(" ")')
	[ -z "$unlicensed" ] || fail "$sbom: no licence found for $unlicensed"
done
echo "SBOMs: mcpshim Apache-2.0; $(json "dist/mcpshim_${version}_${host_os}_${host_arch}.cdx.json" 'v.components.map(c => c.name.replace(/^.*\//, "") + " " + c.licenses.map(l => l.license.id || l.license.name).join("/")).join(", ")')"
cask=dist/homebrew/Casks/mcpshim.rb
[ -f "$cask" ] || fail "no Homebrew cask in $cask"
while read -r sum file; do
	case $file in *.tar.gz) grep -q "sha256 \"$sum\"" "$cask" || fail "$cask lacks $file's sha256" ;; esac
done <dist/checksums.txt
grep -q 'binary "mcpshim"' "$cask" || fail "$cask does not install the mcpshim binary"
grep -q '^ *# License: Apache-2.0' "$cask" || fail "$cask does not name the licence"
for want in 'manpage "manpages/mcpshim.1.gz"' 'bash_completion "completions/mcpshim.bash"' 'zsh_completion "completions/_mcpshim"' 'fish_completion "completions/mcpshim.fish"'; do
	grep -qF "$want" "$cask" || fail "$cask lacks $want"
done
[ "$(cat "$tmp/cosign/argv")" = "sign-blob --bundle=dist/checksums.txt.sigstore.json dist/checksums.txt --yes" ] ||
	fail "GoReleaser called cosign with $(cat "$tmp/cosign/argv"), want sign-blob --bundle=dist/checksums.txt.sigstore.json dist/checksums.txt --yes"
[ "$(json dist/artifacts.json "v.filter(a => a.type === 'Signature' && a.name === 'checksums.txt.sigstore.json').length")" = 1 ] ||
	fail "dist/artifacts.json has no Signature checksums.txt.sigstore.json"
echo "checksums.txt: signed by cosign sign-blob --bundle (keyless in a real release; a placeholder here)"
scoop=dist/scoop/mcpshim.json
[ "$(json "$scoop" 'v.license')" = Apache-2.0 ] || fail "$scoop: no license Apache-2.0"
for arch in amd64 arm64; do
	zip=mcpshim_${version}_windows_${arch}.zip
	sum=$(awk -v f="$zip" '$2 == f {print $1}' dist/checksums.txt)
	[ -n "$sum" ] && grep -q "$sum" "$scoop" || fail "$scoop lacks $zip's sha256"
done
winget=dist/winget/manifests/m/mcpshim-dev/mcpshim/$version
grep -qx 'License: Apache-2.0' "$winget/mcpshim-dev.mcpshim.locale.en-US.yaml" || fail "$winget: the locale manifest names no Apache-2.0"
grep -q "InstallerSha256: $(awk -v f="mcpshim_${version}_windows_amd64.zip" '$2 == f {print $1}' dist/checksums.txt)" "$winget/mcpshim-dev.mcpshim.installer.yaml" ||
	fail "$winget: the installer manifest lacks the windows amd64 zip's sha256"
for want in "Publisher: $IDENTITY" "PublisherUrl: $PROJECT_URL" "Author: $IDENTITY"; do
	grep -qx "$want" "$winget/mcpshim-dev.mcpshim.locale.en-US.yaml" || fail "$winget: the locale manifest lacks $want"
done
[ "$(json "$scoop" 'v.homepage')" = "$PROJECT_URL" ] || fail "$scoop: homepage is not $PROJECT_URL"
grep -q "homepage \"$PROJECT_URL\"" "$cask" || fail "$cask: homepage is not $PROJECT_URL"
echo "scoop and winget manifests: Apache-2.0, the windows zips' sha256; winget's publisher and author $IDENTITY; every homepage $PROJECT_URL"
if command -v ruby >/dev/null; then ruby -c "$cask" >/dev/null; fi
if grep -q DEPRECATED "$tmp/goreleaser.log"; then
	grep DEPRECATED "$tmp/goreleaser.log"; fail "GoReleaser warns that .goreleaser.yaml uses something deprecated"
fi

echo "== the .deb, installed; the .rpm's contents"
deb=$(ls dist/mcpshim_*_"$host_arch".deb)
case $host_arch in amd64) rpm_arch=x86_64 ;; arm64) rpm_arch=aarch64 ;; *) rpm_arch=$host_arch ;; esac
rpm=$(ls dist/mcpshim-*."$rpm_arch".rpm)
[ -f "$deb" ] && [ -f "$rpm" ] || fail "no .deb or .rpm for $host_arch in dist"
pkgfiles="/usr/bin/mcpshim /usr/share/bash-completion/completions/mcpshim /usr/share/fish/vendor_completions.d/mcpshim.fish /usr/share/man/man1/mcpshim.1.gz"
if [ "$(id -u)" = 0 ] && command -v dpkg >/dev/null; then
	dpkg -i "$deb" >"$tmp/dpkg.log" 2>&1 || { cat "$tmp/dpkg.log"; fail "dpkg -i $deb failed"; }
	installed=$(dpkg -L mcpshim)
	for f in $pkgfiles /usr/share/zsh/vendor-completions/_mcpshim /usr/share/doc/mcpshim/copyright; do
		grep -qx "$f" <<<"$installed" || fail "$deb does not install $f"
	done
	cmp -s LICENSE /usr/share/doc/mcpshim/copyright || fail "$deb: /usr/share/doc/mcpshim/copyright is not LICENSE"
	[ "$(/usr/bin/mcpshim version)" = "$("$tmp/$host_os-$host_arch/mcpshim" version)" ] || fail "/usr/bin/mcpshim from $deb is not the release binary"
	bash -c '. /usr/share/bash-completion/completions/mcpshim && complete -p mcpshim' >/dev/null || fail "$deb: bash does not load its completion"
	if command -v man >/dev/null; then
		man -w mcpshim | grep -q /usr/share/man/man1/mcpshim.1.gz || fail "man does not find mcpshim(1) after dpkg -i"
	fi
	dpkg --purge mcpshim >/dev/null
	[ ! -e /usr/bin/mcpshim ] || fail "dpkg --purge mcpshim left /usr/bin/mcpshim"
	echo "$deb: installed, mcpshim version, completions, man page and copyright in place, removed"
else
	echo "$deb: not installed (needs root and dpkg); its contents listed by the .rpm check only"
fi
listed=$(rpm -qlp "$rpm" 2>/dev/null) || fail "rpm -qlp $rpm failed"
for f in $pkgfiles /usr/share/zsh/site-functions/_mcpshim /usr/share/licenses/mcpshim/LICENSE; do
	grep -qx "$f" <<<"$listed" || fail "$rpm does not hold $f (it lists: $listed)"
done
# Its files are the release's: unpacked, not installed (rpm would need an rpm
# database on Debian).
# Debian's rpm2cpio 4.18 exits 1 on nfpm's .rpm after writing the whole
# archive: cpio's status and the comparisons below are the check.
rpm2cpio "$root/$rpm" >"$tmp/rpm.cpio" || true
mkdir "$tmp/rpm" && (cd "$tmp/rpm" && cpio -idm --quiet --no-absolute-filenames 2>/dev/null <"$tmp/rpm.cpio") || fail "cpio could not unpack $rpm"
cmp -s "$tmp/rpm/usr/bin/mcpshim" "$tmp/$host_os-$host_arch/mcpshim" || fail "$rpm: /usr/bin/mcpshim is not the release binary"
cmp -s LICENSE "$tmp/rpm/usr/share/licenses/mcpshim/LICENSE" || fail "$rpm: /usr/share/licenses/mcpshim/LICENSE is not LICENSE"
gunzip -c "$tmp/rpm/usr/share/man/man1/mcpshim.1.gz" | cmp -s - <("$tmp/$host_os-$host_arch/mcpshim" __man) || fail "$rpm: its man page is not what mcpshim __man prints"
"$tmp/$host_os-$host_arch/mcpshim" completion bash | cmp -s - "$tmp/rpm/usr/share/bash-completion/completions/mcpshim" || fail "$rpm: its bash completion is not what mcpshim completion bash prints"
got=$(rpm -qp --qf '%{LICENSE}|%{VENDOR}|%{PACKAGER}|%{URL}' "$rpm" 2>/dev/null)
[ "$got" = "Apache-2.0|$IDENTITY|$IDENTITY <$PROJECT_URL>|$PROJECT_URL" ] || fail "$rpm: licence|vendor|packager|url are '$got'"
echo "$rpm: holds the binary, completions, man page and licence (rpm -qlp, unpacked and compared); $got"
# A .deb has no Vendor field (nfpm writes it to the .rpm only).
got=$(dpkg-deb -f "$deb" Maintainer Homepage | tr '\n' '|')
[ "$got" = "Maintainer: $IDENTITY <$PROJECT_URL>|Homepage: $PROJECT_URL|" ] || fail "$deb: Maintainer, Homepage are '$got'"
echo "$deb: $got"

echo "== reproducible"
# The same commit built again, in another directory, gives the same bytes.
host_bin=$(json dist/artifacts.json "v.find(a => a.type === 'Binary' && a.goos === '$host_os' && a.goarch === '$host_arch').path")
git ls-files -co --exclude-standard -z | tar --null -T - -cf - | (mkdir "$tmp/src" && tar -xf - -C "$tmp/src")
(cd "$tmp/src" && CGO_ENABLED=0 go build -trimpath -buildvcs=false -o "$tmp/rebuilt" \
	-ldflags "-s -w -X main.version=$version -X main.commit=$head -X main.date=$head_date" ./cmd/mcpshim)
cmp -s "$host_bin" "$tmp/rebuilt" || fail "$host_bin and a rebuild in $tmp/src differ"
echo "$host_bin: the same bytes rebuilt elsewhere"

echo "== npm packages, installed offline"
npm/pack.sh dist "$tmp/tgz" >/dev/null
case $host_arch in amd64) cpu=x64 ;; *) cpu=$host_arch ;; esac
main_tgz=$tmp/tgz/mcpshim-$version.tgz platform_tgz=$tmp/tgz/mcpshim-$host_os-$cpu-$version.tgz
mkdir "$tmp/prefix" "$tmp/winprefix"
npm install --offline --cache "$tmp/npm-cache" --prefix "$tmp/prefix" --no-audit --no-fund --loglevel=error \
	"$main_tgz" "$platform_tgz" >/dev/null
for cpu_w in x64 arm64; do
	tgz=$tmp/tgz/mcpshim-win32-$cpu_w-$version.tgz
	contents=$(tar -tzf "$tgz" | LC_ALL=C sort | tr '\n' ' ')
	[ "$contents" = "package/LICENSE package/README.md package/bin/mcpshim.exe package/package.json " ] ||
		fail "$tgz holds $contents, want bin/mcpshim.exe, LICENSE, README.md"
done
# Every package: the licence, its text, a README and the node it needs.
for tgz in "$tmp"/tgz/*.tgz; do
	mkdir "$tmp/unpacked" && tar -xzf "$tgz" -C "$tmp/unpacked"
	cmp -s LICENSE "$tmp/unpacked/package/LICENSE" || fail "$tgz: no LICENSE, or not the repository's"
	[ -s "$tmp/unpacked/package/README.md" ] || fail "$tgz: no README.md"
	got=$(json "$tmp/unpacked/package/package.json" '[v.license, v.engines && v.engines.node].join(" ")')
	[ "$got" = "Apache-2.0 >=18" ] || fail "$tgz: package.json license and engines.node are '$got', want Apache-2.0 >=18"
	got=$(json "$tmp/unpacked/package/package.json" '[v.author && v.author.name, v.author && v.author.url, v.homepage].join("|")')
	[ "$got" = "$IDENTITY|$PROJECT_URL|$PROJECT_URL" ] || fail "$tgz: package.json author and homepage are '$got', want $IDENTITY, $PROJECT_URL"
	rm -rf "$tmp/unpacked"
done
contents=$(tar -tzf "$main_tgz" | LC_ALL=C sort | tr '\n' ' ')
want="package/LICENSE package/README.md package/bin/mcpshim.js $(printf 'package/%s ' $extras)package/man/mcpshim.1 package/package.json "
[ "$contents" = "$want" ] || fail "$main_tgz holds $contents, want $want"
echo "npm: the 7 packages carry LICENSE, README.md, \"license\": \"Apache-2.0\", engines, author $IDENTITY ($PROJECT_URL); mcpshim the completions and man/mcpshim.1"
# The launcher, as it runs on Windows x64 (process.platform win32), starts the
# win32-x64 package's mcpshim.exe: on this machine the start fails naming it.
npm install --offline --force --cache "$tmp/npm-cache" --prefix "$tmp/winprefix" --no-audit --no-fund --loglevel=error \
	"$main_tgz" "$tmp/tgz/mcpshim-win32-x64-$version.tgz" >/dev/null 2>&1
got=$(node -e "Object.defineProperty(process, 'platform', {value: 'win32'}); Object.defineProperty(process, 'arch', {value: 'x64'});
	process.argv.splice(1, 0, 'mcpshim'); require('$tmp/winprefix/node_modules/mcpshim/bin/mcpshim.js')" version 2>&1 || true)
grep -qF "node_modules/@mcpshim/win32-x64/bin/mcpshim.exe" <<<"$got" || fail "the launcher on win32 x64 did not run @mcpshim/win32-x64/bin/mcpshim.exe: $got"
echo "npm @mcpshim/win32-x64 and win32-arm64 carry bin/mcpshim.exe; the launcher on win32 starts it"
cd "$tmp/prefix"
npx="npx --offline --cache $tmp/npm-cache"
got=$($npx mcpshim --version)
[ "$got" = "$("$tmp/$host_os-$host_arch/mcpshim" version)" ] || fail "npx mcpshim --version says $got"
echo "npx mcpshim --version: $got"

# The main package alone (its tarball, or --omit=optional): the launcher names
# the platform package it lacks and the command that installs it.
mkdir "$tmp/alone"
npm install --offline --omit=optional --cache "$tmp/npm-cache" --prefix "$tmp/alone" --no-audit --no-fund --loglevel=error \
	"$main_tgz" >/dev/null
alone=0
(cd "$tmp/alone" && $npx mcpshim --version) >/dev/null 2>"$tmp/alone.err" || alone=$?
[ "$alone" = 1 ] && grep -q "npm install @mcpshim/$host_os-$cpu@$version" "$tmp/alone.err" ||
	{ cat "$tmp/alone.err"; fail "npx mcpshim without its platform package exits $alone, want 1 naming npm install @mcpshim/$host_os-$cpu@$version"; }
echo "npx mcpshim without @mcpshim/$host_os-$cpu: $(cat "$tmp/alone.err")"

# A wrapped server through npx: the client reads the server's bytes, unchanged.
bin=$tmp/prefix/node_modules/@mcpshim/$host_os-$cpu/bin/mcpshim
cat >"$tmp/client.jsonl" <<'EOF'
{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"release-check","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":"two","method":"tools/list"}
{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"h\u00e9llo \u2028 w\u00f6rld"}}}
EOF
"$bin" fixture healthy <"$tmp/client.jsonl" >"$tmp/direct.out"
$npx mcpshim --name release-check --ledger "$tmp/ledger.jsonl" -- "$bin" fixture healthy \
	<"$tmp/client.jsonl" >"$tmp/npx.out" 2>"$tmp/npx.err" || { cat "$tmp/npx.err"; fail "the wrapped server failed through npx"; }
cmp "$tmp/direct.out" "$tmp/npx.out" || fail "npx mcpshim changed the server's bytes"
grep -q tool_call_responded "$tmp/ledger.jsonl" || fail "the ledger written through npx has no tool_call_responded"
echo "npx mcpshim -- mcpshim fixture healthy: $(wc -c <"$tmp/npx.out") bytes, identical to the server's own"
status=0
$npx mcpshim --name release-check --ledger "$tmp/ledger.jsonl" --restart never -- sh -c 'exit 3' </dev/null 2>/dev/null || status=$?
direct=0
"$bin" --name release-check --ledger "$tmp/ledger.jsonl" --restart never -- sh -c 'exit 3' </dev/null 2>/dev/null || direct=$?
[ "$status" = "$direct" ] || fail "npx mcpshim exits $status for a server that exits 3, the binary $direct"

echo "== npx -y mcpshim, as a client config writes it"
# From a loopback registry serving the tarballs (npm/registry.js), into an empty cache.
cd "$tmp"
node "$root/npm/registry.js" "$tmp/tgz" >"$tmp/registry.url" &
registry=$!
until [ -s "$tmp/registry.url" ]; do kill -0 "$registry" || fail "npm/registry.js did not start"; sleep 0.1; done
npx_y="npx -y --registry $(cat "$tmp/registry.url") --fetch-retries=0 --cache $tmp/npx-cache mcpshim"
got=$($npx_y --version)
[ "$got" = "$("$bin" version)" ] || fail "npx -y mcpshim --version says $got"
$npx_y --name release-check --ledger "$tmp/ledger.jsonl" -- "$bin" fixture healthy <"$tmp/client.jsonl" >"$tmp/npx-y.out" 2>"$tmp/npx-y.err" ||
	{ cat "$tmp/npx-y.err"; fail "the wrapped server failed through npx -y"; }
cmp "$tmp/direct.out" "$tmp/npx-y.out" || fail "npx -y mcpshim changed the server's bytes"
echo '{"mcpServers": {"fs": {"command": "npx", "args": ["-y", "server-fs"]}}}' >"$tmp/mcp.json"
$npx_y wrap --dry-run --config "$tmp/mcp.json" 2>"$tmp/wrap.err" >/dev/null
grep -q "in npx's cache" "$tmp/wrap.err" ||
	fail "mcpshim wrap run from npx's cache does not say that the path may move"
echo "npx -y mcpshim: $got; the server's bytes unchanged; its wrap warns about npx's cache"
