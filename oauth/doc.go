// Package oauth signs mcpshim in to a remote MCP server the way the MCP
// authorization spec (2025-06-18, 2025-11-25, 2026-07-28, with the 2025-03-26
// fallbacks) says: protected resource metadata (RFC 9728), authorization
// server metadata (RFC 8414, OpenID discovery), the client's identity (a
// client ID metadata document, a pre-registered client, or dynamic
// registration, RFC 7591), the authorization code grant with PKCE S256 and a
// loopback redirect (RFC 8252), the issuer checks of RFC 9207, the resource
// indicator of RFC 8707, refresh, client credentials and step-up on
// insufficient_scope. Tokens are kept per server and client in a Store under
// the user's config directory, owner-only.
//
// It knows nothing of JSON-RPC, the bridge or the ledger: the bridge asks a
// Session for the Authorization header and hands it the 401 and 403
// challenges; every step the Session takes is reported as a Step, whose
// values never hold a code, a token, a secret or a verifier.
package oauth
