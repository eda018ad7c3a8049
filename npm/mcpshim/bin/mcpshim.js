#!/usr/bin/env node
// The npm launcher of mcpshim. npm installs the one platform package of
// optionalDependencies that matches this machine (by its "os" and "cpu"); this
// runs the native binary in it with this process's stdin, stdout and stderr,
// which stay the MCP wire, byte for byte: nothing here reads or writes them.
// The binary's exit status, or the signal that ended it, becomes this
// process's; on Unix the signals a client sends to stop its server are passed
// on, and the binary is stopped if this process is orphaned. On Windows the
// binary is mcpshim.exe, and stops its server when the client closes stdin.
'use strict';

const { spawn } = require('child_process');
const path = require('path');

const packages = {
  'darwin arm64': '@mcpshim/darwin-arm64',
  'darwin x64': '@mcpshim/darwin-x64',
  'linux arm64': '@mcpshim/linux-arm64',
  'linux x64': '@mcpshim/linux-x64',
  'win32 arm64': '@mcpshim/win32-arm64',
  'win32 x64': '@mcpshim/win32-x64',
};
const windows = process.platform === 'win32';

function fail(status, message) {
  process.stderr.write(`mcpshim (npm launcher): ${message}\n`);
  process.exit(status);
}

const pkg = packages[`${process.platform} ${process.arch}`];
if (!pkg) {
  fail(1, `no prebuilt binary for ${process.platform}/${process.arch}; ` +
    'build it from source (go install ./cmd/mcpshim in a checkout of https://github.com/mcpshim-dev/mcpshim)');
}
let bin;
try {
  bin = path.join(path.dirname(require.resolve(`${pkg}/package.json`)), 'bin', windows ? 'mcpshim.exe' : 'mcpshim');
} catch {
  // npm installs it as an optional dependency; it is missing when only this
  // package was installed (from its tarball, with --omit=optional, or from a
  // lockfile made on another platform).
  const { version } = require('../package.json');
  fail(1, `${pkg} is not installed, and it holds the mcpshim binary for ${process.platform}/${process.arch}: ` +
    `install it beside mcpshim with npm install ${pkg}@${version} (with -g if mcpshim is installed globally), ` +
    'or use a release archive');
}

const child = spawn(bin, process.argv.slice(2), { stdio: 'inherit' });
// On Windows nothing is forwarded: the binary shares this console and gets
// its Ctrl-C, Ctrl-Break and close itself, where kill() would end it at once
// (TerminateProcess), and libuv has no SIGQUIT or SIGUSR2 to listen to there.
const forwarded = windows ? [] : ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT', 'SIGUSR2'];
const forward = (signal) => child.kill(signal);
for (const signal of forwarded) process.on(signal, forward);

// npx runs this through `sh -c`, and a SIGTERM sent to npx ends npm and that
// shell without reaching us: when the parent goes, stop the binary as if the
// client had signalled it. Not on Windows, where kill() is TerminateProcess:
// there the binary stops its server itself when the client closes its stdin.
const parent = process.ppid;
if (!windows) {
  const orphaned = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(orphaned);
    child.kill('SIGTERM');
  }, 500);
  orphaned.unref();
}

child.on('error', (err) => {
  fail(err.code === 'ENOENT' ? 127 : 126, `run ${bin}: ${err.message}`);
});
child.on('exit', (code, signal) => {
  if (signal === null) process.exit(code);
  // Die of the same signal, so that whoever started us sees what happened.
  for (const s of forwarded) process.removeListener(s, forward);
  process.kill(process.pid, signal);
  process.exit(128 + (require('os').constants.signals[signal] || 0)); // a signal that does not kill
});
