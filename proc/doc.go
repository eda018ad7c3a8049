// Package proc owns a child process's life at the system's level: spawning it
// in its own process group (a spawn that fails says why, as a shell would),
// the guard process that kills the group when the shim dies, signals, the
// child's stderr forwarded line by line with its tail and the line that
// states its error, and the label a server gets from its command line. It
// knows nothing of MCP, JSON-RPC, restarts or the ledger: supervisor and
// probe build on it.
package proc
