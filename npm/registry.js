// A loopback npm registry serving the packed tarballs in a directory, so that
// `npx -y mcpshim` can run exactly as a config writes it, with no network:
//
//   node registry.js DIR     prints http://127.0.0.1:PORT/ and serves until killed
//
// It answers GET /NAME (the packument: every version of NAME in DIR, the
// newest as latest) and GET /-/FILE.tgz (the tarball); anything else is 404.
'use strict';
const crypto = require('crypto');
const fs = require('fs');
const http = require('http');
const path = require('path');
const { execFileSync } = require('child_process');

const dir = path.resolve(process.argv[2] || '');
const packuments = {};
let base = '';
for (const file of fs.readdirSync(dir).filter((f) => f.endsWith('.tgz'))) {
  const tgz = fs.readFileSync(path.join(dir, file));
  const pkg = JSON.parse(execFileSync('tar', ['-xzOf', path.join(dir, file), 'package/package.json']));
  const doc = packuments[pkg.name] ||= { name: pkg.name, 'dist-tags': {}, versions: {} };
  doc.versions[pkg.version] = { ...pkg, dist: {
    tarball: `/-/${file}`,
    shasum: crypto.createHash('sha1').update(tgz).digest('hex'),
    integrity: 'sha512-' + crypto.createHash('sha512').update(tgz).digest('base64'),
  } };
  doc['dist-tags'].latest = pkg.version;
}

const server = http.createServer((req, res) => {
  const url = decodeURIComponent(req.url.split('?')[0]);
  if (url.startsWith('/-/') && !url.includes('..')) {
    const file = path.join(dir, url.slice(3));
    if (fs.existsSync(file)) return res.end(fs.readFileSync(file));
  }
  const doc = packuments[url.slice(1)];
  if (!doc) {
    res.writeHead(404, { 'content-type': 'application/json' });
    return res.end('{"error":"not found"}');
  }
  const versions = Object.fromEntries(Object.entries(doc.versions).map(([v, p]) =>
    [v, { ...p, dist: { ...p.dist, tarball: base + p.dist.tarball.slice(1) } }]));
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ ...doc, versions }));
});
server.listen(0, '127.0.0.1', () => {
  base = `http://127.0.0.1:${server.address().port}/`;
  console.log(base);
});
