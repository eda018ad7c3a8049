#!/usr/bin/env bash
# Packs the npm distribution from a GoReleaser dist/: the main package mcpshim
# (the launcher) and one package per platform carrying its binary, all at the
# release's version. Nothing is published.
#
#   npm/pack.sh DIST OUT    writes OUT/mcpshim-VERSION.tgz and OUT/mcpshim-PLATFORM-VERSION.tgz
#                           (DIST/../extras: the completions and man page, scripts/extras.sh)
set -euo pipefail
dist=$(cd "${1:?usage: npm/pack.sh DIST OUT}" && pwd)
mkdir -p "${2:?usage: npm/pack.sh DIST OUT}"
out=$(cd "$2" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT

cp -R "$here/mcpshim" "$here/@mcpshim" "$stage/"
# Every package carries the licence (npm packs a LICENSE file whatever "files" says).
for dir in "$stage/mcpshim" "$stage"/@mcpshim/*; do
	cp "$here/../LICENSE" "$dir/LICENSE"
done
# The main package carries the completions and the man page (npm links
# man/mcpshim.1 on npm install -g), as the release build made them.
extras=$dist/../extras
[ -f "$extras/manpages/mcpshim.1.gz" ] || { echo "npm/pack.sh: no $extras/manpages/mcpshim.1.gz (scripts/extras.sh makes it)" >&2; exit 1; }
cp -R "$extras/completions" "$stage/mcpshim/completions"
mkdir "$stage/mcpshim/man"
gunzip -c "$extras/manpages/mcpshim.1.gz" >"$stage/mcpshim/man/mcpshim.1"
# Stamp the version everywhere and put each binary into its package.
node - "$dist" "$stage" <<'JS'
const fs = require('fs'), path = require('path');
const [dist, stage] = process.argv.slice(2);
const { version } = JSON.parse(fs.readFileSync(path.join(dist, 'metadata.json')));
const cpu = { amd64: 'x64', arm64: 'arm64' };
const nodeOS = { linux: 'linux', darwin: 'darwin', windows: 'win32' };
const edit = (file, change) => {
  const pkg = JSON.parse(fs.readFileSync(file));
  change(pkg);
  fs.writeFileSync(file, JSON.stringify(pkg, null, 2) + '\n');
};
edit(path.join(stage, 'mcpshim', 'package.json'), (pkg) => {
  pkg.version = version;
  for (const dep of Object.keys(pkg.optionalDependencies)) pkg.optionalDependencies[dep] = version;
});
const platforms = fs.readdirSync(path.join(stage, '@mcpshim'));
const binaries = JSON.parse(fs.readFileSync(path.join(dist, 'artifacts.json'))).filter((a) => a.type === 'Binary');
for (const platform of platforms) {
  const a = binaries.find((b) => `${nodeOS[b.goos]}-${cpu[b.goarch]}` === platform);
  if (!a) throw new Error(`${dist} has no binary for ${platform}`);
  const dir = path.join(stage, '@mcpshim', platform);
  const bin = path.join(dir, 'bin', a.goos === 'windows' ? 'mcpshim.exe' : 'mcpshim');
  fs.mkdirSync(path.join(dir, 'bin'));
  fs.copyFileSync(path.resolve(dist, '..', a.path), bin);
  fs.chmodSync(bin, 0o755);
  edit(path.join(dir, 'package.json'), (pkg) => { pkg.version = version; });
  fs.writeFileSync(path.join(dir, 'README.md'), `# @mcpshim/${platform}

The ${a.goos}/${a.goarch} binary of [mcpshim](https://www.npmjs.com/package/mcpshim) ${version}, as the release
archive \`mcpshim_${version}_${a.goos}_${a.goarch}\` holds it. Install \`mcpshim\`, not this package: its launcher
picks the package that matches the machine. Licensed under the Apache License 2.0 (LICENSE).

Documentation and the source: https://github.com/mcpshim-dev/mcpshim
`);
}
JS
for dir in "$stage/mcpshim" "$stage"/@mcpshim/*; do
	npm pack --silent --pack-destination "$out" "$dir" >/dev/null
done
ls "$out"/*.tgz
