// Times a server's start as a client sees it: from spawning the command to
// the answer to initialize on its stdout. Used by start-cost.sh.
//
//   node start-cost.js RUNS [--fresh-cache DIR] -- COMMAND [ARG...]
//
// With --fresh-cache, DIR is emptied before each run (npx's cold start).
'use strict';
const { spawn } = require('child_process');
const fs = require('fs');

const args = process.argv.slice(2);
const runs = Number(args.shift());
let fresh = null;
if (args[0] === '--fresh-cache') { args.shift(); fresh = args.shift(); }
if (args.shift() !== '--' || !(runs > 0) || args.length === 0) {
  console.error('usage: node start-cost.js RUNS [--fresh-cache DIR] -- COMMAND [ARG...]');
  process.exit(64);
}
const initialize = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'start-cost', version: '1' } } }) + '\n';

function once() {
  return new Promise((resolve, reject) => {
    if (fresh) fs.rmSync(fresh, { recursive: true, force: true });
    const start = process.hrtime.bigint();
    const child = spawn(args[0], args.slice(1), { stdio: ['pipe', 'pipe', 'ignore'] });
    let out = '', ms = null;
    child.stdout.on('data', (b) => {
      out += b;
      if (ms === null && out.includes('\n')) {
        ms = Number(process.hrtime.bigint() - start) / 1e6;
        child.stdin.end();
      }
    });
    child.on('error', reject);
    child.on('exit', (code) => (ms === null ? reject(new Error(`exited ${code} before answering initialize`)) : resolve(ms)));
    child.stdin.write(initialize);
  });
}

(async () => {
  const times = [];
  for (let i = 0; i < runs; i++) times.push(await once());
  times.sort((a, b) => a - b);
  const f = (x) => x.toFixed(0);
  console.log(`median ${f(times[Math.floor(times.length / 2)])} ms, min ${f(times[0])}, max ${f(times[times.length - 1])} (${runs} runs)`);
})().catch((err) => { console.error(err.message); process.exit(1); });
