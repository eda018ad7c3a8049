package phases

// Field names are the ledger's contract as much as event names: the fields
// more than one package writes or reads back (the README's event table lists
// each event's). A field only its writer knows is spelled where it is written.
const (
	// Correlation: which request, which call.
	FieldRequestID    = "request_id"     // the JSON-RPC id as the line spelled it
	FieldViaRequestID = "via_request_id" // the tasks/result that carried a task's answer
	FieldMethod       = "method"
	FieldTool         = "tool"
	FieldTaskID       = "task_id"
	FieldDirection    = "direction" // the side that sent the message or request: client or server
	FieldGeneration   = "generation"
	FieldPreviousRun  = "previous_run"
	FieldURI          = "uri"    // the resource a resources/read, subscribe or unsubscribe names
	FieldPrompt       = "prompt" // the prompt a prompts/get names

	// What came of it.
	FieldOutcome    = "outcome" // a call's: success, is_error, rpc_error; a canary's: ok or how it failed
	FieldDetail     = "detail"  // a probe's result, a canary's verdict: the words probe printed
	FieldCode       = "code"    // a JSON-RPC error's code
	FieldMessage    = "message"
	FieldError      = "error"
	FieldErrorClass = "error_class"
	FieldReason     = "reason"
	FieldStatus     = "status"
	FieldLatencyMS  = "latency_ms"
	FieldDurationMS = "duration_ms"
	FieldPreview    = "preview"

	// The handshake and the tool list.
	FieldProtocolVersion   = "protocol_version"
	FieldSupportedVersions = "supported_versions" // what server/discover answered
	FieldServerName        = "server_name"
	FieldServerVersion     = "server_version"
	FieldTimeoutMS         = "timeout_ms"
	FieldWaiting           = "waiting" // what a handshake_timeout still waited for
	FieldToolCount         = "tool_count"
	FieldComplete          = "complete" // the list's last page was seen
	FieldMissing           = "missing"  // tools_missing: the locked tools the list lacks
	FieldMode              = "mode"     // tools_missing: warn or enforce

	// The stream.
	FieldDiverted = "diverted" // noise sent to stderr instead of the client
	FieldUnparsed = "unparsed"
	FieldCount    = "count"

	// How a process ended.
	FieldExitCode        = "exit_code"
	FieldSignal          = "signal"
	FieldRequestedByShim = "requested_by_shim"
	FieldLastEvent       = "last_event"
	FieldHandshake       = "handshake" // whether the run completed one
	FieldStderrTail      = "stderr_tail"
	FieldStderrCause     = "stderr_cause"
	FieldHint            = "hint"
	FieldEgress          = "egress"
	// A signal the shim did not send: the OOM kills the process's memory
	// cgroup counted during the run and the file that counts them, or why
	// that count is unreadable.
	FieldOOMKills      = "oom_kills"
	FieldOOMFile       = "oom_file"
	FieldOOMUnreadable = "oom_unreadable"

	// Restarts and reconnections.
	FieldAttempts  = "attempts"
	FieldFailures  = "failures"
	FieldDelayMS   = "delay_ms"
	FieldForwarded = "forwarded" // a signal passed on to the server's group

	// Remote servers and the egress witness.
	FieldURL             = "url"
	FieldAddress         = "address"
	FieldHost            = "host"
	FieldPort            = "port"
	FieldScheme          = "scheme"
	FieldShimPID         = "shim_pid"
	FieldHeaderNames     = "header_names"
	FieldHTTPMethod      = "http_method"
	FieldWWWAuthenticate = "www_authenticate"
	FieldStage           = "stage"     // where a sign-in stopped
	FieldTransport       = "transport" // streamable-http, or http+sse (the 2024-11-05 transport)
	FieldTo              = "to"        // transport_fallback: the transport fallen back to
	FieldLocation        = "location"  // a redirect's, as it may be shown
)
