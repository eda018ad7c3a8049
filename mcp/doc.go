// Package mcp owns the Model Context Protocol as the shim sees it on the
// wire: JSON-RPC message classification (one streaming scanner), request ids
// as values, the protocol eras and their _meta rules, the requests the shim
// itself sends, tools/list paging, call outcomes and the digests that pin a
// tool surface.
//
// It must not know about processes, pipes, the relay's buffering or the
// ledger: it reads bytes it is given and builds bytes it is asked for. It
// never re-encodes a message it did not build.
package mcp
