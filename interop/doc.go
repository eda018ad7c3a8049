// Package interop holds mcpshim's interop suite: real MCP SDK clients (the
// official Go SDK, mcp-go, the TypeScript SDK through inspector-cli) against
// real servers (the npm reference servers, a Go SDK server, an mcp-go server,
// a Python standard-library server), each session run with and without the
// shim in front. It has no code outside its tests; see interop_test.go.
//
// The npm packages are pinned in package.json and package-lock.json and
// installed with `npm ci --prefix interop` (.ci/install-interop.sh).
//
// The suite is not built for Windows: its peers are the ones installed on
// the Linux machine (Node, npm packages, python3), and it stops process
// groups with SIGSTOP and locks npm's install with flock.
package interop
