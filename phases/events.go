// Package phases is the vocabulary of an MCP server run's ledger: the phases,
// the event names, the directions and the origins. It is a leaf above the
// record format alone: views that only read events need nothing else. Turning
// traffic into events is tap's; judging a run is verdict's.
//
// One ledger entry per run, phase events appended and never changed: stable
// names, timestamps, and enough correlation fields to reconstruct what
// happened, not a rules engine.
package phases

import "github.com/mcpshim-dev/mcpshim/ledger"

// Phase is the boundary an event belongs to.
type Phase = ledger.Phase

// The phases, in the order a healthy run crosses them.
const (
	Launch       Phase = "launch"
	Handshake    Phase = "handshake"
	Discovery    Phase = "discovery"
	Execution    Phase = "execution"
	Transport    Phase = "transport"
	Interruption Phase = "interruption"
	Supervision  Phase = "supervision"
	LedgerPhase  Phase = ledger.PhaseLedger
)

// Event names are the ledger's contract: readers, tests and users match on them.
const (
	// launch
	SpawnRequested  = "spawn_requested"
	Spawned         = "spawned"
	SpawnFailed     = "spawn_failed"
	ExecutableReady = "executable_ready" // reported by the server itself
	Exited          = "exited"
	// A remote server (mcpshim --url) has no process: a run is a connection.
	Connected     = "connected"      // the server's address resolved and dialled (TLS facts for https)
	ConnectFailed = "connect_failed" // refused, DNS, TLS: the run never reached the server
	Disconnected  = "disconnected"   // the bridge ended the run (the client left, or it gave up)

	// handshake
	InitializeReceived  = "initialize_received"
	InitializeResponded = "initialize_responded"
	InitializeFailed    = "initialize_failed"
	InitializedReceived = "initialized_received"
	DiscoverReceived    = "discover_received"
	DiscoverResponded   = "discover_responded"
	DiscoverFailed      = "discover_failed"
	ModernRequest       = "modern_request" // a 2026-07-28 request with no handshake at all
	HandshakeTimeout    = "handshake_timeout"

	// discovery
	ToolsListReceived  = "tools_list_received"
	ToolsListResponded = "tools_list_responded"
	ToolsListFailed    = "tools_list_failed"
	ToolsListChanged   = "tools_list_changed"
	ToolsMissing       = "tools_missing"
	ToolDropped        = "tool_dropped" // a remote tool whose x-mcp-header declarations are invalid, kept from the client

	// execution
	ToolCallReceived  = "tool_call_received"
	ToolCallResponded = "tool_call_responded"
	// A call's round that is not its end: the server asked for input (MRTR)
	// or answered a task-augmented call with a task; and the client's next
	// round of the same call.
	ToolCallInputRequired = "tool_call_input_required"
	ToolCallContinued     = "tool_call_continued"
	ToolCallTaskCreated   = "tool_call_task_created"
	CanaryChecked         = "canary_checked" // mcpshim probe's verdict on a canary: tool, outcome ok or how it failed, detail
	RequestReceived       = "request_received"
	RequestResponded      = "request_responded"
	RequestCancelled      = "request_cancelled"
	ExternalAttempt       = "external_attempt"
	ExternalResult        = "external_result"
	ExternalDenied        = "external_denied"
	ForgedEvent           = "forged_event" // a server claimed an event only the shim may write

	// transport
	StdoutNoise           = "stdout_noise"
	ClientNoise           = "client_noise"
	MessageTruncated      = "message_truncated"
	PartialLineTerminated = "partial_line_terminated"
	PartialLineDropped    = "partial_line_dropped" // a dying server's half message, held back from the client
	UnknownResponse       = "unknown_response"
	OwnAnswerForwarded    = "own_answer_forwarded" // an answer to the shim's own request, too long to hold back
	NotificationsFolded   = "notifications_folded" // how many progress/message notifications crossed, per method
	HTTPExchange          = "http_exchange"        // one HTTP request to a remote server: method, path, status, body kind, latency
	TransportFallback     = "transport_fallback"   // a remote server answered Streamable HTTP's initialize with 400/404/405 and speaks 2024-11-05 HTTP+SSE
	SSEEndpoint           = "sse_endpoint"         // the POST endpoint a 2024-11-05 HTTP+SSE server named on its stream
	MessageTooLarge       = "message_too_large"    // a remote server's message over --max-message: its request got an error
	RedirectRefused       = "redirect_refused"     // a remote server redirected to another origin, or with another method: not followed, the request got an error

	// interruption
	ClientDisconnected = "client_disconnected"
	SignalReceived     = "signal_received"
	KillRequested      = "kill_requested"
	PendingFailed      = "pending_failed"

	// supervision
	RestartScheduled         = "restart_scheduled"
	RestartsExhausted        = "restarts_exhausted"
	HandshakeReplayed        = "handshake_replayed"
	ReplayFailed             = "replay_failed"
	ToolsChangedAfterRestart = "tools_changed_after_restart"
	LateResponseDropped      = "late_response_dropped"
	MessageRejected          = "message_rejected"
	SessionReinitialized     = "session_reinitialized" // a 404 for a forgotten session: the client's initialize replayed at once
	SessionRestored          = "session_restored"      // after a re-initialization: the log level and subscriptions replayed, and whether the tools changed
	ResentAfterReinit        = "resent_after_reinit"   // the request that met the 404 re-sent once: the server proved it never ran
	ReconnectScheduled       = "reconnect_scheduled"   // a remote server unreachable: the next attempt and its delay
	ReconnectsExhausted      = "reconnects_exhausted"  // the outage outlasted --give-up-after: exit 69
	OutagePaged              = "outage_paged"          // seed 004's page on the third consecutive failure: the bridge goes on trying
	OutageEnded              = "outage_ended"          // the remote server is back: failures and how long the outage lasted
	AuthFailed               = "auth_failed"           // 401/403 from a remote server, with its WWW-Authenticate challenge; or a sign-in that stopped (stage, error)
	// Signing in to a remote server (OAuth): every value redacted; never a
	// code, a token, a secret or a verifier.
	AuthRequired         = "auth_required"         // a 401/403 the bridge answers by signing in: status, scope, error
	AuthorizationStarted = "authorization_started" // issuer, resource, scope, grant, client kind and id
	Authorized           = "authorized"            // a token: issuer, granted scope, expires_in_s, refresh_token
	TokenRefreshed       = "token_refreshed"       // a refresh: expires_in_s, rotated

	// ledger
	RecordsLost = ledger.RecordsLost
	ProbeResult = "probe_result" // the outcome of one mcpshim probe of a server
)

// Last confirmed handshake states named by handshake_timeout.
const (
	SpawnedNoInitialize          = "spawned_no_initialize"
	InitializeReceivedNoResponse = "initialize_received_no_response"
	ResponseSentNoInitialized    = "response_sent_no_initialized"
)

// Origins of a record. The shim's own records have no origin field.
const (
	OriginServer = "server" // reported by the server on its stderr
	OriginProbe  = "probe"  // written by mcpshim probe
)

// shimOwned are the events only the shim may write: a server reporting one of
// these on its stderr cannot forge it.
var shimOwned = map[string]bool{
	SpawnRequested: true, Spawned: true, SpawnFailed: true, Exited: true,
	Connected: true, ConnectFailed: true, Disconnected: true, HTTPExchange: true, RedirectRefused: true, MessageTooLarge: true,
	TransportFallback: true, SSEEndpoint: true, ToolDropped: true, SessionReinitialized: true,
	ResentAfterReinit: true, ReconnectScheduled: true, ReconnectsExhausted: true, OutagePaged: true, OutageEnded: true, AuthFailed: true,
	AuthRequired: true, AuthorizationStarted: true, Authorized: true, TokenRefreshed: true,
	InitializeReceived: true, InitializeResponded: true, InitializeFailed: true, InitializedReceived: true,
	DiscoverReceived: true, DiscoverResponded: true, DiscoverFailed: true, HandshakeTimeout: true,
	ToolsListReceived: true, ToolsListResponded: true, ToolsListFailed: true,
	ToolCallReceived: true, ToolCallResponded: true, PendingFailed: true, KillRequested: true,
	ToolCallInputRequired: true, ToolCallContinued: true, ToolCallTaskCreated: true,
	RestartScheduled: true, RestartsExhausted: true, RecordsLost: true,
}

// ShimOwned reports whether only the shim may write event.
func ShimOwned(event string) bool { return shimOwned[event] }
