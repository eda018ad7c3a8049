package verdict

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/mcp"
	"github.com/mcpshim-dev/mcpshim/phases"
)

// Mark is where a record stands in its run: its time (unix ns), then its
// seq (per shim). The zero Mark is "not seen".
type Mark struct {
	T   int64  `json:"t"`
	Seq uint64 `json:"seq,omitempty"`
}

func markOf(e *ledger.Entry) Mark { return Mark{e.Time.UnixNano(), e.Seq} }

// Set reports whether the record was seen.
func (m Mark) Set() bool { return m != Mark{} }

// Before reports whether m is set and earlier than o (or o is unset).
func (m Mark) Before(o Mark) bool {
	switch {
	case !m.Set():
		return false
	case !o.Set():
		return true
	}
	return m.T < o.T || m.T == o.T && m.Seq < o.Seq
}

// first and last keep the earliest and the latest of a kind of record.
func (m *Mark) first(n Mark) bool {
	if n.Before(*m) {
		*m = n
		return true
	}
	return false
}

func (m *Mark) last(n Mark) bool {
	if m.Before(n) || !m.Set() {
		*m = n
		return true
	}
	return false
}

// Calls counts a run's tool calls. Error counts JSON-RPC errors and calls the
// shim failed because the server went away (pending_failed).
type Calls struct {
	Received      int `json:"received"`
	OK            int `json:"ok"`
	IsError       int `json:"is_error"`
	Error         int `json:"error"`
	InputRequired int `json:"input_required"`
}

// Count adds one finished call by its outcome field.
func (c *Calls) Count(outcome string) {
	switch outcome {
	case "success":
		c.OK++
	case "is_error":
		c.IsError++
	case "input_required":
		c.InputRequired++
	default:
		c.Error++
	}
}

// Facts is what a run's records say, whatever their order. Its JSON names
// are the ledger reader's (`mcpshim ledger --json`).
type Facts struct {
	ID          string `json:"run"`
	Server      string `json:"server"`
	Shim        string `json:"shim"`
	Origin      string `json:"origin,omitempty"`
	PID         int    `json:"pid"`
	Generation  int    `json:"generation"`
	PreviousRun string `json:"previous_run,omitempty"`
	Remote      bool   `json:"remote,omitempty"` // a --url run: a connection, no process
	URL         string `json:"url,omitempty"`
	Address     string `json:"address,omitempty"`

	Handshake        string   `json:"handshake,omitempty"` // the event that completed it
	Initialized      bool     `json:"initialized"`         // notifications/initialized arrived
	ProtocolVersion  string   `json:"protocol_version,omitempty"`
	ServerName       string   `json:"server_name,omitempty"`
	ServerVersion    string   `json:"server_version,omitempty"`
	Tools            *int     `json:"tools"` // the last complete tools/list; null: never listed
	ToolsListFailed  int      `json:"tools_list_failed,omitempty"`
	ToolsListError   string   `json:"tools_list_error,omitempty"` // the first failure's code and message
	Calls            Calls    `json:"calls"`
	Noise            int      `json:"noise"` // stdout lines that were not JSON-RPC
	NoisePreview     string   `json:"noise_preview,omitempty"`
	ClientNoise      int      `json:"client_noise,omitempty"`
	LockMissing      []string `json:"lock_missing,omitempty"`  // locked tools the server lacked (tools_missing)
	LockMode         string   `json:"lock_mode,omitempty"`     // warn or enforce
	CanaryFailed     []string `json:"canary_failed,omitempty"` // each failed canary of a probe: "how: detail"
	Egress           string   `json:"egress,omitempty"`        // witnessed or unwitnessed, from spawn_requested
	External         int      `json:"external,omitempty"`      // external_attempt and external_result records
	ExternalTarget   string   `json:"external_target,omitempty"`
	ExternalByServer bool     `json:"external_by_server,omitempty"` // the first attempt was the server's own report
	DeniedTarget     string   `json:"denied_target,omitempty"`
	ExecutableReady  bool     `json:"executable_ready,omitempty"`

	SpawnFailed     bool     `json:"spawn_failed,omitempty"` // spawn_failed, or connect_failed for a remote run
	ErrorClass      string   `json:"error_class,omitempty"`
	Error           string   `json:"error,omitempty"` // why it could not start, or the refused handshake's code and message
	Hint            string   `json:"hint,omitempty"`
	TimeoutLast     string   `json:"timeout_last_event,omitempty"`
	TimeoutMS       float64  `json:"timeout_ms,omitempty"`
	TimeoutWaiting  string   `json:"timeout_waiting,omitempty"` // the request a probe's deadline caught unanswered
	Exited          bool     `json:"exited"`                    // exited, or disconnected for a remote run
	ExitCode        *int     `json:"exit_code"`
	Signal          string   `json:"signal,omitempty"`
	RequestedByShim bool     `json:"requested_by_shim,omitempty"`
	OOMKills        *int     `json:"oom_kills,omitempty"`      // a signal the shim did not send: the OOM kills its cgroup counted meanwhile
	OOMFile         string   `json:"oom_file,omitempty"`       // the file that counts them
	OOMUnreadable   string   `json:"oom_unreadable,omitempty"` // why that count could not be read
	StopReason      string   `json:"stop_reason,omitempty"`    // kill_requested's reason, or the client's leaving
	StderrTail      []string `json:"stderr_tail,omitempty"`
	StderrCause     string   `json:"stderr_cause,omitempty"` // the tail's line that states the error, as the shim chose it
	Exhausted       bool     `json:"restarts_exhausted,omitempty"`
	Attempts        int      `json:"attempts,omitempty"`   // restarts or reconnects before giving up
	GaveUp          string   `json:"gave_up,omitempty"`    // a remote run: why the bridge gave up (exit 69)
	EndReason       string   `json:"end_reason,omitempty"` // a remote run's disconnected reason
	AuthStatus      int      `json:"auth_status,omitempty"`
	Challenge       string   `json:"www_authenticate,omitempty"`
	AuthStage       string   `json:"auth_stage,omitempty"`     // where signing in stopped (OAuth), "" for a plain 401/403
	OwnCredential   bool     `json:"own_credential,omitempty"` // the bridge sent the user's --header Authorization
	AuthMessage     string   `json:"auth_message,omitempty"`   // what the bridge said about it
	AuthError       string   `json:"auth_error,omitempty"`     // the server's OAuth error code
	HTTPFailure     string   `json:"http_failure,omitempty"`   // the last HTTP exchange that failed: status or error
	HTTPFailMethod  string   `json:"http_failure_method,omitempty"`
	HTTPStatus      int      `json:"http_status,omitempty"`   // its status, 0 for a transport error
	Transport       string   `json:"transport,omitempty"`     // a remote run: streamable-http or http+sse
	Redirect        string   `json:"redirect,omitempty"`      // a redirect the bridge refused: "HTTP 307 to URL"
	Paged           int      `json:"paged,omitempty"`         // the consecutive failures at seed 004's page (outage_paged)
	Recovered       bool     `json:"recovered,omitempty"`     // the run began when an outage ended (outage_ended)
	ToolsDropped    []string `json:"tools_dropped,omitempty"` // tools kept from the client: invalid x-mcp-header declarations
	TooLarge        int      `json:"too_large,omitempty"`     // answers over --max-message
	RecordsLost     int      `json:"records_lost,omitempty"`
	Forged          int      `json:"forged,omitempty"` // shim-only events the server wrote about itself, ignored
	Records         int      `json:"records"`
}

// Internal are the facts only the judgement reads; no view shows them, and
// they are kept with the fold when it is saved.
type Internal struct {
	Progress      string   `json:"progress,omitempty"`        // the last event that shows progress
	ExitLastEvent string   `json:"exit_last_event,omitempty"` // what the shim had confirmed when it ended
	ExitHandshake bool     `json:"exit_handshake,omitempty"`  // the end record vouches for a handshake
	InitFailMsg   string   `json:"init_fail,omitempty"`
	DiscFailMsg   string   `json:"discover_fail,omitempty"`
	InitFailCoded bool     `json:"init_fail_coded,omitempty"`    // the refusal was a JSON-RPC error with a code
	AskedVersion  string   `json:"asked_version,omitempty"`      // the protocol version the client's handshake asked for
	Supported     []string `json:"supported_versions,omitempty"` // the versions server/discover answered
	DiscFailCoded bool     `json:"discover_fail_coded,omitempty"`
	ClientReason  string   `json:"client_reason,omitempty"` // client_disconnected's reason
	StopSignal    string   `json:"stop_signal,omitempty"`   // the signal to the shim that stopped the server, passed on
	ExternalEvent string   `json:"external_event,omitempty"`
	// The restarted server did not take the session back: the method the
	// replay failed at, why, and its deadline when that passed.
	ReplayMethod    string  `json:"replay_method,omitempty"`
	ReplayError     string  `json:"replay_error,omitempty"`
	ReplayTimeoutMS float64 `json:"replay_timeout_ms,omitempty"`
}

// Marks are when the records that order matters for were written.
type Marks struct {
	First, Last, Spawn, End, LastEvent     Mark
	Handshake, InitFailed, DiscFailed      Mark
	InitReceived, DiscReceived, Noise      Mark
	Timeout, Client                        Mark
	Kill, Spawned, SpawnRequested, Ready   Mark
	Listed, ListFailed, Missing, External  Mark
	Denied, Connected, AuthFailed, Failure Mark
	Exhausted, Redirect, Paged, Authorized Mark
	ReplayFailed, ListAsked, ListAnswered  Mark
	// The last tools/call asked and answered (by the server, or by the
	// shim's error), and the last request the server sent the client and
	// its answer: a call the server waits on the client for is not its own.
	CallAsked, CallAnswered     Mark
	ServerAsked, ServerAnswered Mark
}

// Fold is one run's records folded, in any order: the same records give the
// same Fold whatever files and clocks they came through. It keeps no record
// and is plain data, so a fold may be saved and resumed (the OTLP export
// keeps it between invocations).
type Fold struct {
	Facts
	Internal Internal `json:"internal"`
	At       Marks    `json:"at"`
}

// Ended reports whether the run's end record was folded in.
func (f *Fold) Ended() bool { return f.At.End.Set() }

// Started is when the run started: its spawn, or its first record.
func (f *Fold) Started() time.Time { return time.Unix(0, f.startMark().T).UTC() }

func (f *Fold) startMark() Mark {
	if f.At.Spawn.Set() {
		return f.At.Spawn
	}
	return f.At.First
}

// Add folds one record of the run in. Events only the shim may write,
// claimed by the server on its stderr, are counted as forged and ignored.
//
// A new event's meaning goes here (what it says about the run, as facts and
// marks) and in Judge (what those facts mean for the verdict); an event
// neither names is counted and otherwise ignored.
func (f *Fold) Add(e *ledger.Entry) {
	if f.ID == "" {
		f.ID, f.Server, f.Shim, f.Origin, f.PID = e.Run, e.Server, e.Shim, e.Origin, e.PID
	}
	if e.Origin == phases.OriginServer && phases.ShimOwned(e.Event) {
		f.Forged++
		return
	}
	m := markOf(e)
	f.Records++
	f.At.First.first(m)
	f.At.Last.last(m)
	if f.Server == "" {
		f.Server = e.Server
	}
	if f.PID == 0 {
		f.PID = e.PID
	}
	if progress(e) && f.At.LastEvent.last(m) {
		f.Internal.Progress = e.Event
	}
	switch e.Event {
	case phases.SpawnRequested:
		f.At.Spawn, f.At.SpawnRequested = m, m
		f.start(e)
		f.Egress = e.Str(phases.FieldEgress)
	case phases.Spawned:
		f.At.Spawned = m
		if e.PID > 0 {
			f.PID = e.PID
		}
	case phases.ExecutableReady:
		f.ExecutableReady = true
		f.At.Ready.first(m)
	case phases.SpawnFailed:
		f.SpawnFailed, f.At.End = true, m
		f.ErrorClass, f.Error, f.Hint = e.Str(phases.FieldErrorClass), e.Str(phases.FieldError), e.Str(phases.FieldHint)
	case phases.Connected, phases.ConnectFailed:
		f.Remote, f.At.Spawn, f.At.Connected = true, m, m
		f.start(e)
		f.URL, f.Address = e.Str(phases.FieldURL), e.Str(phases.FieldAddress)
		if t := e.Str(phases.FieldTransport); t != "" && f.Transport == "" {
			f.Transport = t
		}
		f.OwnCredential = slices.ContainsFunc(e.Strs(phases.FieldHeaderNames), func(h string) bool { return strings.EqualFold(h, "Authorization") })
		if pid, ok := e.Int(phases.FieldShimPID); ok && f.PID == 0 {
			f.PID = int(pid) // no process of its own: the run lives as long as its shim
		}
		if e.Event == phases.ConnectFailed {
			f.SpawnFailed, f.At.End = true, m
			f.ErrorClass, f.Error = e.Str(phases.FieldErrorClass), e.Str(phases.FieldError)
		}
	case phases.Exited, phases.Disconnected:
		f.Exited, f.At.End = true, m
		if c, ok := e.Int(phases.FieldExitCode); ok && c >= 0 {
			code := int(c)
			f.ExitCode = &code
		}
		f.Signal = e.Str(phases.FieldSignal)
		f.Internal.ExitLastEvent = e.Str(phases.FieldLastEvent)
		f.Internal.ExitHandshake = e.Bool(phases.FieldHandshake)
		f.RequestedByShim = e.Bool(phases.FieldRequestedByShim)
		if n, ok := e.Int(phases.FieldOOMKills); ok {
			kills := int(n)
			f.OOMKills = &kills
		}
		f.OOMFile, f.OOMUnreadable = e.Str(phases.FieldOOMFile), e.Str(phases.FieldOOMUnreadable)
		if e.Event == phases.Disconnected {
			f.Remote = true
			f.EndReason = e.Str(phases.FieldReason)
			if f.ExitCode != nil && *f.ExitCode != 0 {
				f.GaveUp = e.Str(phases.FieldReason)
			}
			break
		}
		f.StderrTail = e.Strs(phases.FieldStderrTail)
		f.StderrCause = e.Str(phases.FieldStderrCause)
	case phases.InitializeReceived:
		if f.At.InitReceived.last(m) {
			f.Internal.AskedVersion = e.Str(phases.FieldProtocolVersion)
		}
	case phases.DiscoverReceived:
		if f.At.DiscReceived.last(m) && f.Internal.AskedVersion == "" {
			f.Internal.AskedVersion = e.Str(phases.FieldProtocolVersion)
		}
	case phases.InitializeResponded, phases.DiscoverResponded, phases.ModernRequest, phases.HandshakeReplayed:
		if f.At.Handshake.first(m) {
			f.Handshake = e.Event
			f.ProtocolVersion = e.Str(phases.FieldProtocolVersion)
			f.ServerName, f.ServerVersion = e.Str(phases.FieldServerName), e.Str(phases.FieldServerVersion)
			f.Internal.Supported = e.Strs(phases.FieldSupportedVersions)
		}
	case phases.InitializedReceived:
		f.Initialized = true
	case phases.InitializeFailed:
		if f.At.InitFailed.first(m) {
			f.Internal.InitFailMsg, f.Internal.InitFailCoded = codeMessage(e), e.Has(phases.FieldCode)
		}
	case phases.DiscoverFailed:
		if f.At.DiscFailed.first(m) {
			f.Internal.DiscFailMsg, f.Internal.DiscFailCoded = codeMessage(e), e.Has(phases.FieldCode)
		}
	case phases.HandshakeTimeout:
		f.At.Timeout.first(m)
		f.TimeoutLast = e.Str(phases.FieldLastEvent)
		f.TimeoutMS, _ = e.Float(phases.FieldTimeoutMS)
		f.TimeoutWaiting = e.Str(phases.FieldWaiting)
	case phases.StdoutNoise:
		f.Noise++
		// Noise diverted to stderr (--divert-noise) never reached the client.
		if !e.Bool(phases.FieldDiverted) && f.At.Noise.first(m) {
			f.NoisePreview = e.Str(phases.FieldPreview)
		}
	case phases.ClientNoise:
		f.ClientNoise++
	case phases.ToolsListReceived:
		f.At.ListAsked.last(m)
	case phases.ToolsListResponded:
		f.At.ListAnswered.last(m)
		// Pages before the last say complete=false; the last carries the total.
		if !e.False(phases.FieldComplete) && f.At.Listed.last(m) {
			n, _ := e.Int(phases.FieldToolCount)
			total := int(n)
			f.Tools = &total
		}
	case phases.ToolsListFailed:
		f.ToolsListFailed++
		f.At.ListAnswered.last(m)
		if f.At.ListFailed.first(m) {
			f.ToolsListError = codeMessage(e)
		}
	case phases.ToolsMissing:
		if f.At.Missing.last(m) {
			f.LockMissing, f.LockMode = e.Strs(phases.FieldMissing), e.Str(phases.FieldMode)
		}
	case phases.CanaryChecked:
		if how := e.Str(phases.FieldOutcome); how != "ok" {
			f.CanaryFailed = append(f.CanaryFailed, how+": "+e.Str(phases.FieldDetail))
		}
	case phases.ToolCallReceived:
		f.Calls.Received++
		f.At.CallAsked.last(m)
	case phases.ToolCallInputRequired:
		f.Calls.InputRequired++ // a round that asked for input: the call goes on
		f.At.CallAnswered.last(m)
	case phases.ToolCallTaskCreated:
		f.At.CallAnswered.last(m)
	case phases.ToolCallResponded:
		f.Calls.Count(e.Str(phases.FieldOutcome))
		f.At.CallAnswered.last(m)
	case phases.PendingFailed:
		if e.Str(phases.FieldTool) != "" || e.Str(phases.FieldMethod) == mcp.MethodCallTool {
			f.Calls.Error++
			f.At.CallAnswered.last(m)
		}
	case phases.RequestCancelled:
		if e.Str(phases.FieldMethod) == mcp.MethodCallTool {
			f.At.CallAnswered.last(m) // its sender stopped waiting: not the server's silence
		}
	case phases.RequestReceived:
		if e.Str(phases.FieldDirection) == phases.FromServer.String() {
			f.At.ServerAsked.last(m)
		}
	case phases.RequestResponded:
		if e.Str(phases.FieldDirection) == phases.FromServer.String() {
			f.At.ServerAnswered.last(m)
		}
	case phases.RestartsExhausted, phases.ReconnectsExhausted:
		f.Exhausted = true
		f.At.Exhausted = m
		if n, ok := e.Int(phases.FieldAttempts); ok {
			f.Attempts = int(n)
		} else if n, ok := e.Int(phases.FieldFailures); ok {
			f.Attempts = int(n)
		}
	case phases.ReplayFailed:
		if f.At.ReplayFailed.first(m) {
			f.Internal.ReplayMethod, f.Internal.ReplayError = e.Str(phases.FieldMethod), e.Str(phases.FieldError)
			f.Internal.ReplayTimeoutMS, _ = e.Float(phases.FieldTimeoutMS)
		}
	case phases.RecordsLost:
		n, _ := e.Int(phases.FieldCount)
		f.RecordsLost += int(n)
	case phases.KillRequested:
		if f.At.Kill.first(m) {
			f.StopReason = e.Str(phases.FieldReason)
		}
	case phases.SignalReceived:
		if e.Bool(phases.FieldForwarded) && f.At.Kill.first(m) {
			f.StopReason = e.Str(phases.FieldSignal) + " to the shim, passed on to the server"
			f.Internal.StopSignal = e.Str(phases.FieldSignal)
		}
	case phases.ClientDisconnected:
		if f.At.Client.first(m) {
			f.Internal.ClientReason = e.Str(phases.FieldReason)
		}
	case phases.ExternalAttempt, phases.ExternalResult:
		f.External++
		if f.At.External.first(m) {
			f.ExternalTarget, f.ExternalByServer, f.Internal.ExternalEvent = target(e), e.Origin == phases.OriginServer, e.Event
		}
	case phases.ExternalDenied:
		if f.At.Denied.first(m) {
			f.DeniedTarget = target(e)
		}
	case phases.AuthFailed:
		if f.At.AuthFailed.last(m) {
			n, _ := e.Int(phases.FieldStatus)
			f.AuthStatus, f.Challenge = int(n), e.Str(phases.FieldWWWAuthenticate)
			f.AuthStage, f.AuthMessage, f.AuthError = e.Str(phases.FieldStage), e.Str(phases.FieldMessage), e.Str(phases.FieldError)
		}
	case phases.Authorized, phases.TokenRefreshed:
		// A sign-in or refresh that succeeded answers the failures before it.
		f.At.Authorized.last(m)
	case phases.HTTPExchange:
		f.Remote = true
		status, _ := e.Int(phases.FieldStatus)
		failed := status >= 400 || e.Has(phases.FieldErrorClass)
		if failed && e.Str(phases.FieldHTTPMethod) != "DELETE" && f.At.Failure.last(m) {
			f.HTTPStatus, f.HTTPFailMethod = int(status), e.Str(phases.FieldMethod)
			f.HTTPFailure = e.Str(phases.FieldError)
			if status > 0 {
				f.HTTPFailure = httpStatusText(int(status))
			}
		}
	case phases.RedirectRefused:
		f.Remote = true
		if f.At.Redirect.last(m) {
			n, _ := e.Int(phases.FieldStatus)
			f.Redirect = httpStatusText(int(n)) + " to " + e.Str(phases.FieldLocation)
		}
	case phases.OutagePaged:
		if f.At.Paged.last(m) {
			n, _ := e.Int(phases.FieldFailures)
			f.Paged = int(n)
		}
	case phases.OutageEnded:
		f.Recovered = true
	case phases.TransportFallback:
		f.Transport = e.Str(phases.FieldTo)
	case phases.ToolDropped:
		f.ToolsDropped = append(f.ToolsDropped, e.Str(phases.FieldTool))
	case phases.MessageTooLarge:
		f.TooLarge++
	case phases.ForgedEvent:
		f.Forged++
	}
}

// start takes what a run's first launch record says about its place in the
// session.
func (f *Fold) start(e *ledger.Entry) {
	if g, ok := e.Int(phases.FieldGeneration); ok {
		f.Generation = int(g)
	}
	f.PreviousRun = e.Str(phases.FieldPreviousRun)
}

// progress reports whether a record tells how far the run got: not its end,
// not the shim stopping or restarting it, not the ledger's own records.
func progress(e *ledger.Entry) bool {
	switch e.Phase {
	case phases.Interruption, phases.Supervision, phases.LedgerPhase:
		return false
	}
	switch e.Event {
	case phases.Exited, phases.Disconnected, phases.ForgedEvent, phases.RecordsLost, phases.HTTPExchange, phases.NotificationsFolded, phases.ProbeResult:
		return false
	}
	return true
}

func codeMessage(e *ledger.Entry) string {
	msg := e.Str(phases.FieldMessage)
	if c, ok := e.Int(phases.FieldCode); ok {
		return fmt.Sprintf("%d %s", c, msg)
	}
	return msg
}

// target names where an external event went: scheme://host:port.
func target(e *ledger.Entry) string {
	s := e.Str(phases.FieldHost)
	if p, ok := e.Int(phases.FieldPort); ok {
		s = fmt.Sprintf("%s:%d", s, p)
	}
	if sc := e.Str(phases.FieldScheme); sc != "" {
		s = sc + "://" + s
	}
	if s == "" {
		return "an unnamed host"
	}
	return s
}
