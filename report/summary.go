// Package report owns what is read out of a ledger: runs folded from their
// records, their outcomes and the diagnosis in words, the per-server stats
// with their histograms, and the answers of "ledger why". It reads records
// through ledger's scanner and names events through phases; it never writes
// a ledger and is never on the relay's path.
package report

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/phases"
)

// Run is what the ledger says about one run (one child process), folded from
// its records without keeping them.
type Run struct {
	ID          string    `json:"run"`
	Server      string    `json:"server"`
	Shim        string    `json:"shim"`
	Origin      string    `json:"origin,omitempty"`
	PID         int       `json:"pid"`
	Generation  int       `json:"generation"`
	PreviousRun string    `json:"previous_run,omitempty"`
	NextRun     string    `json:"next_run,omitempty"`
	Start       time.Time `json:"started"`
	End         time.Time `json:"ended"` // the exit, or the last record
	DurationMS  float64   `json:"duration_ms"`
	Outcome     string    `json:"outcome"`
	Alive       bool      `json:"alive"` // no exited record and the pid answers kill(pid, 0)
	LastEvent   string    `json:"last_event"`
	Detail      string    `json:"detail,omitempty"` // why it stopped, in a few words

	Handshake       string    `json:"handshake,omitempty"` // the event that completed it
	HandshakeAt     time.Time `json:"handshake_at,omitzero"`
	Initialized     bool      `json:"initialized"` // notifications/initialized arrived
	ProtocolVersion string    `json:"protocol_version,omitempty"`
	ServerName      string    `json:"server_name,omitempty"`
	Tools           *int      `json:"tools"` // the last complete tools/list; null: never listed
	ToolsListFailed int       `json:"tools_list_failed,omitempty"`
	Calls           Calls     `json:"calls"`
	Noise           int       `json:"noise"` // stdout lines that were not JSON-RPC
	NoisePreview    string    `json:"noise_preview,omitempty"`
	LockMissing     []string  `json:"lock_missing,omitempty"` // locked tools the server lacked (tools_missing)
	NoiseFirst      bool      `json:"noise_before_handshake,omitempty"`
	Warning         string    `json:"warning,omitempty"`        // a problem the client got past: it is not a failure
	ClientLeftMS    float64   `json:"client_left_ms,omitempty"` // the client left before the handshake, this long after the start
	ClientNoise     int       `json:"client_noise,omitempty"`
	Egress          string    `json:"egress,omitempty"`   // witnessed or unwitnessed, from spawn_requested
	External        int       `json:"external,omitempty"` // external_attempt and external_result records

	SpawnFailed     bool     `json:"spawn_failed,omitempty"`
	ErrorClass      string   `json:"error_class,omitempty"` // spawn_failed
	Error           string   `json:"error,omitempty"`       // spawn_failed error, or the refused handshake's code and message
	Hint            string   `json:"hint,omitempty"`
	TimeoutLast     string   `json:"timeout_last_event,omitempty"`
	TimeoutMS       float64  `json:"timeout_ms,omitempty"`
	Exited          bool     `json:"exited"`
	ExitCode        *int     `json:"exit_code"`
	Signal          string   `json:"signal,omitempty"`
	RequestedByShim bool     `json:"requested_by_shim,omitempty"`
	StopReason      string   `json:"stop_reason,omitempty"` // kill_requested or client_disconnected reason
	StderrTail      []string `json:"stderr_tail,omitempty"`
	StderrCause     string   `json:"stderr_cause,omitempty"` // the tail's line that states the error, as the shim chose it
	Exhausted       bool     `json:"restarts_exhausted,omitempty"`
	RecordsLost     int      `json:"records_lost,omitempty"`
	Forged          int      `json:"forged,omitempty"` // shim-only events the server wrote about itself, ignored
	Records         int      `json:"records"`
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

// Fixable reports whether the outcome is one a person can fix now (seed 000:
// do not retry, print the reason).
func (r *Run) Fixable() bool {
	return r.Outcome == phases.OutcomeExited || r.Outcome == phases.OutcomeProtocolError
}

// Failed reports whether the run did not end up serving: every outcome but
// READY, ENDED and RUNNING, and any run that lacked locked tools.
func (r *Run) Failed() bool {
	if len(r.LockMissing) > 0 {
		return true // connected, but not the surface the agent was promised
	}
	switch r.Outcome {
	case phases.OutcomeReady, phases.OutcomeEnded, phases.OutcomeRunning:
		return false
	}
	return true
}

// StderrLast is the server's stderr line that says why it exited: the one
// the shim chose (stderr_cause), else the last one, or "".
func (r *Run) StderrLast() string {
	if r.StderrCause != "" {
		return r.StderrCause
	}
	for i := len(r.StderrTail) - 1; i >= 0; i-- {
		if s := strings.TrimSpace(r.StderrTail[i]); s != "" {
			return s
		}
	}
	return ""
}

// mark orders records: by time, then by seq (per shim).
type mark struct {
	t   int64
	seq uint64
	set bool
}

func markOf(e *ledger.Entry) mark { return mark{e.Time.UnixNano(), e.Seq, true} }

// before reports whether a is set and earlier than b (or b is unset).
func (a mark) before(b mark) bool {
	if !a.set {
		return false
	}
	if !b.set {
		return true
	}
	return a.t < b.t || a.t == b.t && a.seq < b.seq
}

// runAgg is a run under construction. Everything that depends on order is
// kept as marks, so records may arrive in any order (several files, clock
// steps) and the verdict is the same.
type runAgg struct {
	Run
	remoteOutcome, remoteDetail    string // a probe of a remote server: its verdict, since no process ran
	first, last, spawnAt, exitAt   mark
	lastEventAt                    mark
	handshake, initFailed          mark
	discFailed, initReceived       mark
	noise, timeout, disconnected   mark
	exitLastEvent                  string
	exitHandshake                  bool
	initFailMsg, discFailMsg       string
	killReason, disconnectedReason string
}

// Summary folds records into one aggregate per run, and call statistics per
// server and tool. Its memory grows with runs, servers and tools, never with
// events.
type Summary struct {
	Records int // records folded
	Forged  int // shim-only events reported by a server about itself, ignored
	Lost    int // records the writers counted as lost

	// StatsSince leaves records older than it out of Stats' call figures,
	// restarts and discoveries (runs are still folded whole).
	StatsSince time.Time

	runs    map[string]*runAgg
	servers map[string]*serverAgg
}

// NewSummary returns an empty Summary.
func NewSummary() *Summary {
	return &Summary{runs: make(map[string]*runAgg), servers: make(map[string]*serverAgg)}
}

// Add folds one record in.
func (s *Summary) Add(e *ledger.Entry) {
	s.Records++
	if e.Event == phases.RecordsLost {
		n, _ := e.Int("count")
		s.Lost += int(n)
	}
	if e.Run == "" {
		return // a shim-level record
	}
	a := s.runs[e.Run]
	if a == nil {
		a = &runAgg{Run: Run{ID: e.Run, Server: e.Server, Shim: e.Shim, Origin: e.Origin, PID: e.PID}}
		s.runs[e.Run] = a
	}
	if e.Origin == phases.OriginServer && phases.ShimOwned(e.Event) {
		a.Forged++
		s.Forged++
		return
	}
	m := markOf(e)
	a.Records++
	if m.before(a.first) {
		a.first = m
	}
	if a.last.before(m) || !a.last.set {
		a.last = m
	}
	if a.Server == "" {
		a.Server = e.Server
	}
	if a.PID == 0 {
		a.PID = e.PID
	}
	if progress(e) && (a.lastEventAt.before(m) || !a.lastEventAt.set) {
		a.lastEventAt, a.LastEvent = m, e.Event
	}
	var srv *serverAgg // nil: the record is too old for Stats
	if s.StatsSince.IsZero() || !e.Time.Before(s.StatsSince) {
		srv = s.server(a.Server)
	}
	switch e.Event {
	case phases.SpawnRequested:
		a.spawnAt = m
		if g, ok := e.Int("generation"); ok {
			a.Generation = int(g)
		}
		a.PreviousRun = e.Str("previous_run")
		a.Egress = e.Str("egress")
	case phases.ProbeResult:
		if e.Str("transport") == "http" {
			a.remoteOutcome, a.remoteDetail = e.Str("outcome"), e.Str("detail")
		}
	case phases.Spawned:
		if e.PID > 0 {
			a.PID = e.PID
		}
	case phases.SpawnFailed:
		a.SpawnFailed = true
		a.ErrorClass, a.Error, a.Hint = e.Str("error_class"), e.Str("error"), e.Str("hint")
	case phases.Connected: // a remote server's run (mcpshim --url): its connection
		if g, ok := e.Int("generation"); ok {
			a.Generation = int(g)
		}
		a.PreviousRun = e.Str("previous_run")
	case phases.ConnectFailed:
		a.SpawnFailed = true
		a.ErrorClass, a.Error = e.Str("error_class"), e.Str("error")
	case phases.Exited, phases.Disconnected:
		a.Exited, a.exitAt = true, m
		if e.Event == phases.Disconnected {
			zero := 0
			a.ExitCode = &zero
		}
		if c, ok := e.Int("exit_code"); ok && c >= 0 {
			code := int(c)
			a.ExitCode = &code
		}
		a.Signal = e.Str("signal")
		a.exitLastEvent = e.Str("last_event")
		a.StderrTail = e.Strs("stderr_tail")
		a.StderrCause = e.Str("stderr_cause")
		a.exitHandshake = e.Bool("handshake")
		a.RequestedByShim = e.Bool("requested_by_shim")
	case phases.InitializeReceived:
		if a.initReceived.before(m) || !a.initReceived.set {
			a.initReceived = m
		}
	case phases.InitializeResponded, phases.DiscoverResponded, phases.ModernRequest, phases.HandshakeReplayed:
		if m.before(a.handshake) {
			a.handshake, a.Handshake = m, e.Event
			a.ProtocolVersion = e.Str("protocol_version")
			a.ServerName = e.Str("server_name")
		}
	case phases.InitializedReceived:
		a.Initialized = true
	case phases.InitializeFailed:
		if m.before(a.initFailed) {
			a.initFailed, a.initFailMsg = m, codeMessage(e)
		}
	case phases.DiscoverFailed:
		if m.before(a.discFailed) {
			a.discFailed, a.discFailMsg = m, codeMessage(e)
		}
	case phases.HandshakeTimeout:
		a.timeout = m
		a.TimeoutLast = e.Str("last_event")
		a.TimeoutMS, _ = e.Float("timeout_ms")
	case phases.StdoutNoise:
		a.Noise++
		// Noise diverted to stderr (--divert-noise) never reached the client.
		if m.before(a.noise) && !e.Bool("diverted") {
			a.noise, a.NoisePreview = m, e.Str("preview")
		}
	case phases.ClientNoise:
		a.ClientNoise++
	case phases.ToolsListResponded:
		// Pages before the last say complete=false; the last carries the total.
		if !e.False("complete") {
			n, _ := e.Int("tool_count")
			total := int(n)
			a.Tools = &total
			if total == 0 && srv != nil {
				srv.zeroTools++
			}
		}
	case phases.ToolsListFailed:
		a.ToolsListFailed++
	case phases.ToolsMissing:
		a.LockMissing = e.Strs("missing")
	case phases.ToolCallReceived:
		a.Calls.Received++
	case phases.ToolCallInputRequired:
		a.Calls.InputRequired++ // a round that asked for input: the call goes on
	case phases.ToolCallResponded:
		ms, hasLatency := e.Float("latency_ms")
		outcome := e.Str("outcome")
		a.Calls.count(outcome)
		srv.call(e.Str("tool"), outcome, ms, hasLatency)
	case phases.PendingFailed:
		if tool := e.Str("tool"); tool != "" || e.Str("method") == "tools/call" {
			a.Calls.Error++
			srv.call(tool, "rpc_error", 0, false)
		}
	case phases.RestartScheduled:
		if srv != nil {
			srv.restarts++
		}
	case phases.RestartsExhausted:
		a.Exhausted = true
	case phases.RecordsLost:
		n, _ := e.Int("count")
		a.RecordsLost += int(n)
	case phases.KillRequested:
		a.killReason = e.Str("reason")
	case phases.ClientDisconnected:
		a.disconnectedReason = e.Str("reason")
		a.disconnected = m
	case phases.ExternalAttempt, phases.ExternalResult:
		a.External++
	case phases.ForgedEvent:
		a.Forged++
		s.Forged++
	}
}

// progress reports whether a record tells how far the run got: not its end,
// not the shim stopping or restarting it, not the ledger's own records.
func progress(e *ledger.Entry) bool {
	switch e.Phase {
	case phases.Interruption, phases.Supervision, phases.LedgerPhase:
		return false
	}
	switch e.Event {
	case phases.Exited, phases.ForgedEvent, phases.RecordsLost:
		return false
	}
	return true
}

func codeMessage(e *ledger.Entry) string {
	msg := e.Str("message")
	if c, ok := e.Int("code"); ok {
		return fmt.Sprintf("%d %s", c, msg)
	}
	return msg
}

func (c *Calls) count(outcome string) {
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

// Runs returns every run, oldest first, with its outcome. now ends the
// duration of a run still going; alive says whether a pid is still running.
func (s *Summary) Runs(now time.Time, alive func(pid int) bool) []Run {
	out := make([]Run, 0, len(s.runs))
	index := make(map[string]int, len(s.runs))
	for _, a := range s.runs {
		if a.Records == 0 {
			continue // only forged records
		}
		out = append(out, a.finish(now, alive))
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Start.Equal(out[j].Start) {
			return out[i].Start.Before(out[j].Start)
		}
		return out[i].ID < out[j].ID
	})
	for i := range out {
		index[out[i].ID] = i
	}
	for i := range out {
		if j, ok := index[out[i].PreviousRun]; ok {
			out[j].NextRun = out[i].ID
		}
	}
	return out
}

func (a *runAgg) finish(now time.Time, alive func(pid int) bool) Run {
	r := a.Run
	r.Start = time.Unix(0, a.first.t).UTC()
	if a.spawnAt.set {
		r.Start = time.Unix(0, a.spawnAt.t).UTC()
	}
	r.End = time.Unix(0, a.last.t).UTC()
	if a.exitAt.set {
		r.End = time.Unix(0, a.exitAt.t).UTC()
	}
	if a.exitLastEvent != "" {
		r.LastEvent = a.exitLastEvent // what the shim had confirmed when the process died
	}
	r.NoiseFirst = a.noise.set && a.noise.before(a.handshake)
	done := a.handshake.set || a.exitHandshake
	if a.handshake.set {
		r.HandshakeAt = time.Unix(0, a.handshake.t).UTC()
	}
	if r.Handshake == "" && a.exitHandshake {
		r.Handshake = phases.Exited // its record was lost; the exit record vouches for it
	}
	if !a.Exited && !a.SpawnFailed {
		r.Alive = alive != nil && r.PID > 0 && alive(r.PID)
		if r.Alive {
			r.End = now.UTC()
		}
	}
	if r.Error == "" {
		r.Error = a.refusal()
	}
	// Noise before the handshake broke the session only when the client did
	// not go on past it; a client that skips non-JSON lines (Claude Code) went
	// on, and the noise is a warning.
	wentOn := a.Initialized || a.Tools != nil || a.ToolsListFailed > 0 || a.Calls.Received > 0
	if r.NoiseFirst && done && wentOn {
		r.Warning = fmt.Sprintf("stdout noise before the handshake, which the client skipped: %q", r.NoisePreview)
	}
	// A client that left before the handshake gave up on the server: a failed
	// start, whatever the shim's own handshake timeout said, unless the server
	// had already died by itself.
	clientGaveUp := !done && a.disconnected.set && (!a.Exited || r.RequestedByShim)
	if clientGaveUp && a.spawnAt.set {
		r.ClientLeftMS = float64(time.Duration(a.disconnected.t-a.spawnAt.t).Microseconds()) / 1000
	}
	switch {
	case a.SpawnFailed:
		r.Outcome = phases.OutcomeExited
	case r.NoiseFirst && r.Warning == "":
		r.Outcome = phases.OutcomeProtocolError
	case done && !a.Exited:
		r.Outcome = phases.OutcomeReady
		if !r.Alive {
			r.Outcome = phases.OutcomeUnrecorded
		}
	case done && ((r.ExitCode != nil && *r.ExitCode == 0 && r.Signal == "") || r.RequestedByShim):
		r.Outcome = phases.OutcomeEnded
	case done:
		r.Outcome = phases.OutcomeCrashed
	case a.refusal() != "":
		r.Outcome = phases.OutcomeProtocolError
	case a.timeout.set, clientGaveUp:
		r.Outcome = phases.OutcomeTimeout
	case a.Exited:
		r.Outcome = phases.OutcomeExited
	case r.Alive:
		r.Outcome = phases.OutcomeRunning
	default:
		r.Outcome = phases.OutcomeUnrecorded
	}
	if a.remoteOutcome != "" {
		r.Outcome, r.Error = a.remoteOutcome, a.remoteDetail
	}
	r.StopReason = a.killReason
	if r.StopReason == "" && a.disconnectedReason != "" {
		r.StopReason = "client left (" + a.disconnectedReason + ")"
	}
	r.DurationMS = float64(r.End.Sub(r.Start).Microseconds()) / 1000
	r.Detail = detail(&r)
	return r
}

// refusal is the handshake's refusal, unless the client fell back: a
// server/discover refused and then an initialize sent is the dual-era
// fallback, not a refusal.
func (a *runAgg) refusal() string {
	if a.initFailed.set {
		return a.initFailMsg
	}
	fellBack := a.initReceived.set && a.discFailed.before(a.initReceived)
	if a.discFailed.set && !fellBack {
		return a.discFailMsg
	}
	return ""
}

// detail says in a few words why a run stopped or where it stands.
func detail(r *Run) string {
	switch r.Outcome {
	case phases.OutcomeExited:
		if r.SpawnFailed {
			return strings.TrimPrefix(r.ErrorClass+": "+r.Error, ": ")
		}
		if s := r.StderrLast(); s != "" {
			return s
		}
		return exitStatus(r)
	case phases.OutcomeProtocolError:
		if r.NoiseFirst {
			return fmt.Sprintf("stdout noise before the handshake: %q", r.NoisePreview)
		}
		return "handshake refused: " + r.Error
	case phases.OutcomeTimeout:
		s := "no handshake answer"
		if r.ClientLeftMS > 0 {
			s += "; the client gave up after " + FormatMS(r.ClientLeftMS)
		} else if r.TimeoutMS > 0 {
			s += " in " + FormatMS(r.TimeoutMS)
		}
		if r.TimeoutLast != "" {
			s += " (" + r.TimeoutLast + ")"
		}
		if last := r.StderrLast(); last != "" {
			s += "; stderr: " + last
		}
		return s
	case phases.OutcomeCrashed:
		if s := r.StderrLast(); s != "" {
			return exitStatus(r) + ": " + s
		}
		return exitStatus(r)
	case phases.OutcomeEnded:
		var parts []string
		if r.Warning != "" {
			parts = append(parts, r.Warning)
		}
		if len(r.LockMissing) > 0 {
			parts = append(parts, "locked tools missing: "+strings.Join(r.LockMissing, ", "))
		}
		if r.Tools != nil && *r.Tools == 0 {
			parts = append(parts, "zero tools listed")
		}
		if r.RequestedByShim && r.StopReason != "" {
			parts = append(parts, r.StopReason)
		}
		return strings.Join(parts, "; ")
	case phases.OutcomeReady:
		if len(r.LockMissing) > 0 {
			return "locked tools missing: " + strings.Join(r.LockMissing, ", ")
		}
		if r.Tools != nil && *r.Tools == 0 {
			return "zero tools listed"
		}
		return r.Warning
	case phases.OutcomeUnrecorded:
		return "no exit record; pid gone (the shim was killed)"
	}
	return ""
}

// exitStatus is "exit 1", "killed by SIGKILL" or "exit unknown".
func exitStatus(r *Run) string {
	switch {
	case r.Signal != "":
		return "killed by " + r.Signal
	case r.ExitCode != nil:
		return fmt.Sprintf("exit %d", *r.ExitCode)
	}
	return "exit status unknown"
}

// FormatMS prints milliseconds as a short duration: 850µs, 12ms, 1.5s, 2m3s.
func FormatMS(ms float64) string {
	d := time.Duration(ms * float64(time.Millisecond))
	switch {
	case d < time.Millisecond:
		return d.Round(time.Microsecond).String()
	case d < time.Second:
		return d.Round(100 * time.Microsecond).String()
	case d < time.Minute:
		return d.Round(10 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// Diagnosis is one sentence on what happened to the run, for a person:
// which side to look at first and with what evidence.
func Diagnosis(r *Run) string {
	last := ""
	if s := r.StderrLast(); s != "" {
		last = fmt.Sprintf("; its last stderr line was %q", s)
	}
	tools := ""
	if r.Tools != nil {
		tools = fmt.Sprintf(", listed %d tools", *r.Tools)
		if *r.Tools == 0 {
			tools = ", but tools/list returned no tools: a configuration or permission problem, not a connection one"
		}
	}
	calls := ""
	if n := r.Calls.Received; n > 0 {
		calls = fmt.Sprintf(", served %d tool calls (%d ok, %d isError, %d error)", n, r.Calls.OK, r.Calls.IsError, r.Calls.Error)
	}
	switch r.Outcome {
	case phases.OutcomeExited:
		if r.SpawnFailed {
			s := fmt.Sprintf("the command could not be started (%s): %s", r.ErrorClass, r.Error)
			if r.Hint != "" {
				s += "; " + r.Hint
			}
			return s
		}
		after := "before the handshake"
		switch r.LastEvent {
		case phases.InitializeReceived, phases.DiscoverReceived:
			after = "after receiving " + strings.TrimSuffix(r.LastEvent, "_received") + " and before answering it"
		case phases.Spawned, phases.SpawnRequested, phases.ExecutableReady:
			after = "before reading any request"
		}
		return fmt.Sprintf("the server %s %s%s. Fix what it says: a retry fails the same way", exitPhrase(r), after, last)
	case phases.OutcomeProtocolError:
		if r.NoiseFirst {
			return fmt.Sprintf("the server wrote %q to stdout before the handshake, which corrupts the JSON-RPC stream: stdout must carry only protocol messages, log to stderr", r.NoisePreview)
		}
		return fmt.Sprintf("the server refused the handshake (%s): align the protocol version or client identity", r.Error)
	case phases.OutcomeTimeout:
		if r.ClientLeftMS > 0 {
			return fmt.Sprintf("the client gave up %s after the start, before the handshake (last confirmed: %s): a failed start; a cold npx/uvx install or a slow server needs a longer client timeout%s", FormatMS(r.ClientLeftMS), r.LastEvent, last)
		}
		wait := ""
		if r.TimeoutMS > 0 {
			wait = " within " + FormatMS(r.TimeoutMS)
		}
		switch r.TimeoutLast {
		case phases.SpawnedNoInitialize:
			return fmt.Sprintf("the server started but no initialize reached it%s: look at the client first%s", wait, last)
		case phases.ResponseSentNoInitialized:
			return fmt.Sprintf("the server answered initialize but notifications/initialized never came%s: the client gave up or restarted%s", wait, last)
		}
		return fmt.Sprintf("the server received initialize and never answered%s%s", wait, last)
	case phases.OutcomeCrashed:
		after := "after the handshake"
		if !r.HandshakeAt.IsZero() {
			after = FormatMS(float64(r.End.Sub(r.HandshakeAt).Microseconds())/1000) + " " + after
		}
		return fmt.Sprintf("the server %s %s%s%s%s", exitPhrase(r), after, tools, calls, last)
	case phases.OutcomeEnded:
		how := "ended cleanly"
		if r.RequestedByShim {
			how = "was stopped by the shim"
			if r.StopReason != "" {
				how += " (" + r.StopReason + ")"
			}
		}
		return fmt.Sprintf("the server %s after %s%s%s%s", how, FormatMS(r.DurationMS), tools, calls, warning(r))
	case phases.OutcomeReady:
		return fmt.Sprintf("the server is up: handshake done%s%s%s", tools, calls, warning(r))
	case phases.OutcomeRunning:
		return "the server is running and has not finished the handshake yet"
	case phases.OutcomeUnrecorded:
		return fmt.Sprintf("the ledger stops at %s and pid %d is gone: the shim was killed before it could record the end", r.LastEvent, r.PID)
	}
	return ""
}

func warning(r *Run) string {
	if r.Warning == "" {
		return ""
	}
	return "; warning: " + r.Warning + " (fix it: a stricter client fails on it)"
}

func exitPhrase(r *Run) string {
	switch {
	case r.Signal != "":
		return "was killed by " + r.Signal
	case r.ExitCode != nil:
		return fmt.Sprintf("exited with status %d", *r.ExitCode)
	}
	return "exited"
}

// serverAgg holds one server's call statistics across its runs.
type serverAgg struct {
	calls     callAgg
	tools     map[string]*callAgg
	restarts  int
	zeroTools int
}

type callAgg struct {
	n       Calls
	latency histogram
}

func (s *Summary) server(name string) *serverAgg {
	g := s.servers[name]
	if g == nil {
		g = &serverAgg{tools: make(map[string]*callAgg)}
		s.servers[name] = g
	}
	return g
}

func (g *serverAgg) call(tool, outcome string, ms float64, hasLatency bool) {
	if g == nil {
		return
	}
	t := g.tools[tool]
	if t == nil {
		t = &callAgg{}
		g.tools[tool] = t
	}
	for _, c := range []*callAgg{&g.calls, t} {
		c.n.Received++
		c.n.count(outcome)
		if hasLatency {
			c.latency.add(ms)
		}
	}
}

// ServerStats is one server's record across all its runs.
type ServerStats struct {
	Server              string         `json:"server"`
	Runs                int            `json:"runs"`
	Outcomes            map[string]int `json:"outcomes"`
	Restarts            int            `json:"restarts"`
	ZeroToolDiscoveries int            `json:"zero_tool_discoveries"`
	CallStats
	Tools []ToolStats `json:"tools"`
}

// ToolStats is one tool's calls on one server.
type ToolStats struct {
	Tool string `json:"tool"`
	CallStats
}

// CallStats counts finished tool calls. Rates are over Calls; latency
// percentiles come from a log histogram and are within 3% of the exact value.
type CallStats struct {
	Calls         int          `json:"calls"`
	OK            int          `json:"ok"`
	IsError       int          `json:"is_error"`
	Errors        int          `json:"errors"`
	InputRequired int          `json:"input_required"`
	ErrorRate     float64      `json:"error_rate"`
	IsErrorRate   float64      `json:"is_error_rate"`
	Latency       *Percentiles `json:"latency_ms"` // null when no call carried a latency
}

// Percentiles of a latency, in milliseconds.
type Percentiles struct {
	P50 float64 `json:"p50"`
	P95 float64 `json:"p95"`
	P99 float64 `json:"p99"`
}

// Stats returns per-server statistics, by server name, with their tools by
// name; runs (from Runs) supply the outcome counts.
func (s *Summary) Stats(runs []Run) []ServerStats {
	byName := make(map[string]*ServerStats)
	get := func(name string) *ServerStats {
		st := byName[name]
		if st == nil {
			st = &ServerStats{Server: name, Outcomes: make(map[string]int), Tools: []ToolStats{}}
			byName[name] = st
		}
		return st
	}
	for _, r := range runs {
		st := get(r.Server)
		st.Runs++
		st.Outcomes[r.Outcome]++
	}
	for name, g := range s.servers {
		st := get(name)
		st.Restarts, st.ZeroToolDiscoveries = g.restarts, g.zeroTools
		st.CallStats = g.calls.stats()
		for tool, t := range g.tools {
			st.Tools = append(st.Tools, ToolStats{Tool: tool, CallStats: t.stats()})
		}
		sort.Slice(st.Tools, func(i, j int) bool { return st.Tools[i].Tool < st.Tools[j].Tool })
	}
	out := make([]ServerStats, 0, len(byName))
	for _, st := range byName {
		out = append(out, *st)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Server < out[j].Server })
	return out
}

func (c *callAgg) stats() CallStats {
	n := c.n
	st := CallStats{Calls: n.Received, OK: n.OK, IsError: n.IsError, Errors: n.Error, InputRequired: n.InputRequired}
	if st.Calls > 0 {
		st.ErrorRate = float64(st.Errors) / float64(st.Calls)
		st.IsErrorRate = float64(st.IsError) / float64(st.Calls)
	}
	if c.latency.total > 0 {
		st.Latency = &Percentiles{c.latency.quantile(0.50), c.latency.quantile(0.95), c.latency.quantile(0.99)}
	}
	return st
}

// histogram counts latencies in logarithmic buckets, 16 per doubling from
// 1µs: a fixed 2.5 KiB however many calls, and a bucket's midpoint is within
// 2.2% of any value in it.
type histogram struct {
	counts   []uint32
	total    uint64
	min, max float64
}

const (
	histMinMS   = 0.001
	histPerOct  = 16
	histBuckets = 40 * histPerOct // up to 2^40 µs, about 12 days
)

func (h *histogram) add(ms float64) {
	if math.IsNaN(ms) || ms < 0 {
		return
	}
	if h.counts == nil {
		h.counts = make([]uint32, histBuckets)
		h.min, h.max = ms, ms
	}
	h.min, h.max = min(h.min, ms), max(h.max, ms)
	h.counts[bucketOf(ms)]++
	h.total++
}

func bucketOf(ms float64) int {
	if ms <= histMinMS {
		return 0
	}
	b := int(math.Log2(ms/histMinMS)*histPerOct) + 1
	return min(max(b, 0), histBuckets-1)
}

// quantile returns the value at rank ceil(q·n): a bucket's geometric
// midpoint, clamped to the exact minimum and maximum seen.
func (h *histogram) quantile(q float64) float64 {
	rank := uint64(math.Ceil(q * float64(h.total)))
	rank = max(rank, 1)
	var seen uint64
	for i, c := range h.counts {
		seen += uint64(c)
		if seen >= rank {
			if i == histBuckets-1 {
				return h.max // the overflow bucket
			}
			v := histMinMS
			if i > 0 {
				v = histMinMS * math.Exp2((float64(i)-0.5)/histPerOct)
			}
			return min(max(v, h.min), h.max)
		}
	}
	return h.max
}

// SortEntries orders one run's records as they happened: by time, then seq.
func SortEntries(entries []ledger.Entry) {
	sort.SliceStable(entries, func(i, j int) bool {
		if !entries[i].Time.Equal(entries[j].Time) {
			return entries[i].Time.Before(entries[j].Time)
		}
		return entries[i].Seq < entries[j].Seq
	})
}

// Answer is one of seed 002's four questions about a run, answered from the
// ledger: "yes", "no" or "unknown", with the record that shows it.
type Answer struct {
	Key      string        `json:"key"` // launched, initialized, tools, external
	Question string        `json:"question"`
	Answer   string        `json:"answer"`
	Reason   string        `json:"reason"`
	Evidence *ledger.Entry `json:"-"`
}

// Explain answers the four questions of seed 002 for run r from its records,
// in order (SortEntries): whether the process launched, whether
// initialization completed, whether tools were discoverable, and whether
// anything reached the outside world.
func Explain(r *Run, entries []ledger.Entry) []Answer {
	find := func(events ...string) *ledger.Entry {
		for i := range entries {
			e := &entries[i]
			if e.Origin == phases.OriginServer && phases.ShimOwned(e.Event) {
				continue
			}
			for _, ev := range events {
				if e.Event == ev {
					return e
				}
			}
		}
		return nil
	}
	last := func(event string) *ledger.Entry {
		for i := len(entries) - 1; i >= 0; i-- {
			if entries[i].Event == event && !(entries[i].Origin == phases.OriginServer && phases.ShimOwned(event)) {
				return &entries[i]
			}
		}
		return nil
	}
	launched := Answer{Key: "launched", Question: "did the process launch?"}
	switch spawned, failed := find(phases.Spawned), find(phases.SpawnFailed); {
	case spawned != nil:
		launched.Answer, launched.Evidence = "yes", spawned
		launched.Reason = fmt.Sprintf("spawned as pid %d", r.PID)
		if ready := find(phases.ExecutableReady); ready != nil {
			launched.Reason += "; the server reported executable_ready"
		}
	case failed != nil:
		launched.Answer, launched.Evidence = "no", failed
		launched.Reason = "the command could not be started: " + failed.Str("error")
	default:
		launched.Answer, launched.Reason = "unknown", "no spawn record: the ledger starts after the launch or lost it"
	}

	shake := Answer{Key: "initialized", Question: "did initialization complete?"}
	hs := find(phases.InitializeResponded, phases.DiscoverResponded, phases.ModernRequest, phases.HandshakeReplayed)
	switch {
	case r.NoiseFirst:
		shake.Answer, shake.Evidence = "no", find(phases.StdoutNoise)
		shake.Reason = fmt.Sprintf("stdout carried %q before the handshake, which breaks a client's JSON-RPC parser", r.NoisePreview)
	case hs != nil:
		shake.Answer, shake.Evidence = "yes", hs
		switch hs.Event {
		case phases.InitializeResponded:
			shake.Reason = "answered initialize with protocol " + hs.Str("protocol_version")
			if r.Initialized {
				shake.Reason += "; notifications/initialized arrived"
			} else {
				shake.Reason += "; notifications/initialized was not seen"
			}
		case phases.DiscoverResponded:
			shake.Reason = "answered server/discover"
		case phases.HandshakeReplayed:
			shake.Reason = "the shim replayed the client's handshake to the restarted server"
		default:
			shake.Reason = "the client spoke " + hs.Str("protocol_version") + " with no handshake, which that version allows"
		}
	case r.Handshake == phases.Exited:
		shake.Answer, shake.Reason = "yes", "the exit record says the handshake completed (its own record was lost)"
		shake.Evidence = last(phases.Exited)
	case r.SpawnFailed:
		shake.Answer, shake.Reason, shake.Evidence = "no", "the process never started", find(phases.SpawnFailed)
	case r.Error != "":
		shake.Answer, shake.Reason = "no", "the server refused the handshake: "+r.Error
		if shake.Evidence = find(phases.InitializeFailed); shake.Evidence == nil {
			shake.Evidence = find(phases.DiscoverFailed)
		}
	case find(phases.HandshakeTimeout) != nil:
		shake.Answer, shake.Evidence = "no", find(phases.HandshakeTimeout)
		shake.Reason = "no answer in time, last confirmed state " + shake.Evidence.Str("last_event")
	case r.Exited:
		shake.Answer, shake.Evidence = "no", last(phases.Exited)
		shake.Reason = "the process exited before the handshake"
		if s := r.StderrLast(); s != "" {
			shake.Reason += fmt.Sprintf("; last stderr line %q", s)
		}
	case r.Alive:
		shake.Answer, shake.Reason = "unknown", "the server is still waiting for its handshake"
	default:
		shake.Answer, shake.Reason = "unknown", "the ledger stops before the handshake"
	}

	tools := Answer{Key: "tools", Question: "were tools discoverable?"}
	switch listed, failed := last(phases.ToolsListResponded), find(phases.ToolsListFailed); {
	case listed != nil && r.Tools != nil && *r.Tools > 0:
		tools.Answer, tools.Evidence = "yes", listed
		tools.Reason = fmt.Sprintf("tools/list returned %d tools", *r.Tools)
	case listed != nil && r.Tools != nil:
		tools.Answer, tools.Evidence = "no", listed
		tools.Reason = "tools/list returned no tools: a configuration or permission problem, not a connection one"
	case failed != nil:
		tools.Answer, tools.Evidence = "no", failed
		tools.Reason = fmt.Sprintf("tools/list failed: %d %s", intField(failed, "code"), failed.Str("message"))
	case shake.Answer == "no":
		tools.Answer, tools.Reason = "no", "no handshake, so no discovery"
	case r.Alive || shake.Answer == "yes":
		tools.Answer, tools.Reason = "unknown", "the client never asked for tools/list"
	default:
		tools.Answer, tools.Reason = "unknown", "no tools/list in the ledger"
	}
	if missing := last(phases.ToolsMissing); missing != nil {
		tools.Reason += "; missing: " + strings.Join(missing.Strs("missing"), ", ")
	}

	ext := Answer{Key: "external", Question: "did anything reach the outside world?"}
	switch attempt, denied := find(phases.ExternalAttempt, phases.ExternalResult), find(phases.ExternalDenied); {
	case attempt != nil:
		ext.Answer, ext.Evidence = "yes", attempt
		ext.Reason = "an external attempt to " + target(attempt)
		if attempt.Origin == phases.OriginServer {
			ext.Reason += ", as the server itself reports"
		} else {
			ext.Reason += ", seen by the egress witness"
		}
	case denied != nil:
		ext.Answer, ext.Evidence = "no", denied
		ext.Reason = "the egress witness denied a connection to " + target(denied)
	case r.Egress == "witnessed":
		ext.Answer, ext.Evidence = "no", find(phases.SpawnRequested)
		ext.Reason = "the egress witness saw no outbound connection (it sees what honours the proxy variables)"
	default:
		ext.Answer, ext.Evidence = "unknown", find(phases.SpawnRequested)
		ext.Reason = "nothing recorded, and the run was unwitnessed: only the egress witness or the server's own reports show outbound traffic"
	}
	return []Answer{launched, shake, tools, ext}
}

func intField(e *ledger.Entry, key string) int64 {
	v, _ := e.Int(key)
	return v
}

// target names where an external event went: scheme://host:port.
func target(e *ledger.Entry) string {
	s := e.Str("host")
	if p, ok := e.Int("port"); ok {
		s = fmt.Sprintf("%s:%d", s, p)
	}
	if sc := e.Str("scheme"); sc != "" {
		s = sc + "://" + s
	}
	if s == "" {
		return "an unnamed host"
	}
	return s
}
