package verdict

import (
	"slices"
	"strings"
	"time"

	"github.com/mcpshim-dev/mcpshim/mcp"
	"github.com/mcpshim-dev/mcpshim/phases"
)

// The outcomes a run can have: the four of a startup (ready, timed out,
// exited, a protocol error), the run states, and a remote server's.
const (
	Ready         = "READY"
	Timeout       = "TIMEOUT"
	Exited        = "EXITED"
	ProtocolError = "PROTOCOL_ERROR"
	Running       = "RUNNING"
	Ended         = "ENDED"
	Crashed       = "CRASHED"
	// Unrecorded is a run whose ledger stops without an exited record while
	// its process is gone: the shim itself was killed (SIGKILL, power loss)
	// before it could write the end.
	Unrecorded = "UNRECORDED"
	// Unreachable: a remote server refused the connection, did not resolve,
	// or answered 5xx until the bridge gave up.
	Unreachable = "UNREACHABLE"
	// AuthRequired: a remote server answered 401 or 403.
	AuthRequired = "AUTH_REQUIRED"
)

// Outcomes is every outcome a run can have, the run states included.
var Outcomes = []string{Ready, Ended, Running, Timeout, Exited, ProtocolError, Crashed, Unrecorded, Unreachable, AuthRequired}

// RealWait is the shortest wait that makes a client leaving before the
// handshake a timeout: a client that left sooner did not wait for an answer
// at all (a script that closed stdin, a client being shut down), and its
// server was not slow. Clients time out after seconds (Claude Code: 30 s).
const RealWait = time.Second

// Verdict is what a person reads about a run. Every view renders it and
// derives nothing of its own: the ledger's table, show, why, stats, the
// HTML report, probe, lock, the OTLP export and the shim's own last line.
type Verdict struct {
	Outcome   string `json:"outcome"`
	Failed    bool   `json:"failed"`            // the `!` mark: the run did not serve, or broke its lock
	Fixable   bool   `json:"fixable,omitempty"` // a person can fix it now; a retry fails the same way
	LastEvent string `json:"last_event"`        // the last confirmed event
	Cause     string `json:"cause,omitempty"`   // the line that says why: stderr, a spawn error, a refusal, an HTTP status
	Reason    string `json:"detail,omitempty"`  // one line: the table's WHY
	Advice    string `json:"advice,omitempty"`  // what to do about it
	Warning   string `json:"warning,omitempty"` // a problem the client got past: not a failure

	Start        time.Time `json:"started"`
	End          time.Time `json:"ended"` // the end, or the last record
	DurationMS   float64   `json:"duration_ms"`
	Alive        bool      `json:"alive"` // no end recorded and the pid answers kill(pid, 0)
	HandshakeAt  time.Time `json:"handshake_at,omitzero"`
	NoiseFirst   bool      `json:"noise_before_handshake,omitempty"`
	ClientLeftMS float64   `json:"client_left_ms,omitempty"` // the client left before the handshake, this long after the start

	// Answers are why's four questions (did it launch, initialize, list
	// tools, reach out?), from the same facts.
	Answers []Answer `json:"-"`
}

// judgement is one Judge call's working state.
type judgement struct {
	f          *Fold
	v          Verdict
	done       bool    // the handshake completed
	shook      bool    // done, and the client got past it (no noise broke it)
	ended      bool    // an end record: exited, disconnected, spawn or connect failed
	clientLeft bool    // client_disconnected before the end
	waited     float64 // ms from the start to the client leaving
	stopped    bool    // the shim signalled the process before it ended (a probe kills without a record)
	selfDied   bool    // it died by itself: a non-zero status or a signal the shim did not send
	listOpen   bool    // a tools/list was never answered
	listWait   float64 // how long it went unanswered (ms): until the client left, the shim stopped the server, the end, or now
	listLeft   bool    // the wait ended by the client leaving, or the shim stopping the server
	callOpen   bool    // the last tools/call had no answer before the client left or the run ended
	callWait   float64 // how long it went unanswered (ms), as listWait
	callLeft   bool    // as listLeft
	askedOpen  bool    // a request the server sent the client was unanswered when it left: the server waited on the client
	refusal    string  // the handshake's refusal
	version    string  // the handshake answer's version no client can use: why
	cause      string  // the stderr line that says why it ended
	line       string  // the stderr line the chooser picked, stated or not: what a wait left to read
}

// Judge is the verdict on a folded run: a pure function of its facts, the
// time now (the end of a run still going) and whether its pid is alive
// (asked only of a run with no end record).
//
// The outcome, the failure, the cause and the reason are sealed by the run's
// end record: records after it (restarts_exhausted, a client leaving during
// the backoff) may only add advice, so a reader that stops at the end (the
// OTLP export, the shim's own line) says the same.
func Judge(f *Fold, now time.Time, alive bool) Verdict {
	j := judge(f, now, alive)
	j.v.Answers = j.answers()
	return j.v
}

// JudgeWithoutAnswers is Judge but for the Answers, which it leaves nil: a
// reader of a million runs that shows none of them saves half of what the
// judgement allocates.
func JudgeWithoutAnswers(f *Fold, now time.Time, alive bool) Verdict {
	return judge(f, now, alive).v
}

func judge(f *Fold, now time.Time, alive bool) *judgement {
	j := &judgement{f: f}
	j.facts(now, alive)
	v := &j.v
	switch {
	case f.Origin == phases.OriginProbe && j.done:
		j.probed()
	case f.Remote:
		j.remote()
	default:
		j.local()
	}
	switch v.Outcome {
	case Ready, Ended, Running:
	default:
		v.Failed = true
	}
	if f.LockMode == "enforce" && len(f.LockMissing) > 0 {
		v.Failed, v.Fixable = true, true // connected, but not the surface the agent was promised
	}
	if len(f.CanaryFailed) > 0 {
		v.Failed, v.Fixable = true, true // it shook hands, but its tool does not work: probe exits 78
	}
	return j
}

// facts works out what every rule reads: times, the handshake, who ended the run.
func (j *judgement) facts(now time.Time, alive bool) {
	f, v := j.f, &j.v
	at := &f.At
	start := f.startMark()
	v.Start = time.Unix(0, start.T).UTC()
	v.End = time.Unix(0, at.Last.T).UTC()
	j.ended = at.End.Set()
	if j.ended {
		v.End = time.Unix(0, at.End.T).UTC()
	} else if alive {
		v.Alive = true
		v.End = now.UTC()
	}
	v.DurationMS = ms(v.End.Sub(v.Start))
	v.LastEvent = f.Internal.Progress
	if f.Internal.ExitLastEvent != "" {
		v.LastEvent = f.Internal.ExitLastEvent // what the shim had confirmed when it ended
	}
	j.done = at.Handshake.Set() || f.Internal.ExitHandshake
	if at.Handshake.Set() {
		v.HandshakeAt = time.Unix(0, at.Handshake.T).UTC()
	}
	v.NoiseFirst = at.Noise.Before(at.Handshake)
	wentOn := f.Initialized || f.Tools != nil || f.ToolsListFailed > 0 || f.Calls.Received > 0
	if j.done && !wentOn && !at.ListAsked.Set() {
		// A client that went on used the version it was answered; one
		// that did not was answered no handshake it could use.
		if j.version = j.unusableVersion(); j.version != "" {
			j.done = false
		}
	}
	if v.NoiseFirst && j.done && wentOn {
		v.Warning = "stdout noise before the handshake, which the client skipped: " + quote(f.NoisePreview)
	}
	j.clientLeft = at.Client.Set() && (!j.ended || at.Client.Before(at.End))
	if j.clientLeft {
		j.waited = float64(at.Client.T-start.T) / 1e6
		if !j.done {
			v.ClientLeftMS = round3(j.waited)
		}
	}
	j.stopped = at.Kill.Set() && (!j.ended || at.Kill.Before(at.End)) || f.RequestedByShim && f.Signal != ""
	j.selfDied = f.Exited && !j.stopped && (f.ExitCode != nil && *f.ExitCode != 0 || f.Signal != "")
	if at.ListAsked.Set() && !(at.ListAnswered.Set() && at.ListAsked.Before(at.ListAnswered)) {
		j.listOpen = true
		end := v.End
		switch {
		case j.clientLeft:
			end, j.listLeft = time.Unix(0, at.Client.T), true
		case at.Kill.Set() && at.ListAsked.Before(at.Kill):
			end, j.listLeft = time.Unix(0, at.Kill.T), true
		}
		j.listWait = max(0, ms(end.Sub(time.Unix(0, at.ListAsked.T))))
	}
	// An answer the shim wrote after the client left (its error for a call
	// in flight) was never the client's.
	answered := func(asked, answer Mark) bool {
		return asked.Before(answer) && (!j.clientLeft || answer.Before(at.Client))
	}
	if at.CallAsked.Set() && !answered(at.CallAsked, at.CallAnswered) {
		j.callOpen = true
		end := v.End
		switch {
		case j.clientLeft:
			end, j.callLeft = time.Unix(0, at.Client.T), true
		case at.Kill.Set() && at.CallAsked.Before(at.Kill):
			end, j.callLeft = time.Unix(0, at.Kill.T), true
		}
		j.callWait = max(0, ms(end.Sub(time.Unix(0, at.CallAsked.T))))
	}
	j.askedOpen = at.ServerAsked.Set() && !answered(at.ServerAsked, at.ServerAnswered)
	j.shook = j.done && !(v.NoiseFirst && v.Warning == "")
	j.refusal = j.refused()
	var stated bool
	j.line, stated = stderrCause(f)
	if stated {
		j.cause = j.line // log chatter and banners are never the cause
	}
}

// refused is the handshake's refusal, unless the client fell back: a
// server/discover refused when an initialize was sent too is the dual-era
// fallback, not a refusal, whichever reached the server first (a dual-era
// client may send initialize before the refusal comes back), and the
// initialize's own fate decides.
func (j *judgement) refused() string {
	f := j.f
	if f.At.InitFailed.Set() {
		return f.Internal.InitFailMsg
	}
	if f.At.DiscFailed.Set() && !f.At.InitReceived.Set() {
		return f.Internal.DiscFailMsg
	}
	return j.version
}

// unusableVersion says why the handshake's answer names a protocol version
// the client did not ask for and no MCP revision has, "" when it does not.
// basic/lifecycle, "Version Negotiation": "If the server supports the
// requested protocol version, it MUST respond with the same version.
// Otherwise, the server MUST respond with another protocol version it
// supports." An answer that is neither is no handshake. A record without
// the versions (an older ledger) says nothing either way.
func (j *judgement) unusableVersion() string {
	f := j.f
	asked := f.Internal.AskedVersion
	usable := func(v string) bool { return v == asked || mcp.IsRevision(v) }
	to := "the client's " + asked
	if asked == "" {
		to = "a handshake that named no version"
	}
	switch f.Handshake {
	case phases.InitializeResponded:
		if v := f.ProtocolVersion; v != "" && !usable(v) {
			return "protocolVersion " + v + ", which no MCP revision has, answered to " + to
		}
	case phases.DiscoverResponded:
		if len(f.Internal.Supported) > 0 && !slices.ContainsFunc(f.Internal.Supported, usable) {
			return "supportedVersions " + strings.Join(f.Internal.Supported, ", ") + ", which no MCP revision has, answered to " + to
		}
	}
	return ""
}

// refusalReason is "handshake refused: CODE MESSAGE" for a JSON-RPC error,
// "unusable handshake answer: WHY" for an answer the client could not use.
func (j *judgement) refusalReason() string {
	if j.f.Internal.InitFailCoded || j.f.Internal.DiscFailCoded {
		return "handshake refused: " + j.refusal
	}
	return "unusable handshake answer: " + j.refusal
}

// gaveUpWaiting reports whether the client left before the handshake after
// a real wait, or the shim's handshake deadline passed.
func (j *judgement) gaveUpWaiting() bool {
	return j.f.At.Timeout.Set() || j.clientLeft && j.waited >= float64(RealWait.Milliseconds())
}

// local judges a child process's run.
func (j *judgement) local() {
	f, v := j.f, &j.v
	switch {
	case f.SpawnFailed:
		j.set(Exited, f.Error, true)
		v.Reason, v.Advice = spawnReason(f), spawnAdvice(f)
	case !j.done && j.refusal != "":
		j.set(ProtocolError, j.refusal, true)
		v.Reason, v.Advice = j.refusalReason(), refusalAdvice
		if j.refusal == j.version {
			v.Advice = versionAdvice
		}
	case !j.done && f.At.ReplayFailed.Set() && !j.selfDied:
		j.replayFailed()
	case !j.done && j.selfDied:
		// It died by itself, not stopped by the shim (requested_by_shim
		// false, or a signal the shim did not send): its own end, however
		// long the client had waited (at load the client's leaving is
		// recorded late, and that made a server that failed a TIMEOUT).
		j.set(Exited, j.cause, true)
		v.Reason, v.Advice = j.exitReason(), j.exitAdvice()
	case v.NoiseFirst && v.Warning == "":
		// The client did not get past the noise: it broke the session.
		j.set(ProtocolError, f.NoisePreview, true)
		v.Reason, v.Advice = "stdout noise before the handshake: "+quote(f.NoisePreview), noiseAdvice
	case j.done && !j.ended:
		j.running(Ready, v.Alive)
	case j.done && (f.RequestedByShim || !j.selfDied) && j.requestFailed():
	case j.done && (f.RequestedByShim || !j.selfDied):
		j.set(Ended, "", false)
		v.Reason, v.Advice = j.endedReason(), j.endedAdvice()
	case j.done:
		j.set(Crashed, j.cause, false)
		v.Reason, v.Advice = j.crashReason(), j.crashAdvice()
	case j.gaveUpWaiting():
		j.set(Timeout, j.cause, false)
		v.Reason, v.Advice = j.timeoutReason(), j.timeoutAdvice()
	case f.Exited && !j.clientLeft && !f.RequestedByShim:
		j.set(Exited, j.cause, true)
		v.Reason, v.Advice = j.exitReason(), quitAdvice
	case f.Exited:
		j.set(Ended, "", false)
		v.Reason, v.Advice = j.leftEarlyReason(), leftEarlyAdvice
	default:
		j.running(Running, v.Alive)
	}
}

// requestFailed judges a run that shook hands and ended without serving: a
// tools/list never answered while the client waited a real wait is a
// timeout, one answered with an error a protocol error (the lead's
// decisions on issue 33); so is a tools/call never answered while the
// client waited a real wait, unless the server was waiting on the client
// (its own request to the client unanswered).
func (j *judgement) requestFailed() bool {
	f, v := j.f, &j.v
	real := float64(RealWait.Milliseconds())
	switch {
	case j.listOpen && j.listLeft && j.listWait >= real:
		j.unanswered("tools/list", j.listWait)
	case f.Tools == nil && f.ToolsListFailed > 0:
		j.set(ProtocolError, f.ToolsListError, true)
		v.Reason = "tools/list failed: " + f.ToolsListError
		v.Advice = "the server answers the handshake but not tools/list: look at its stderr for why"
	case j.callOpen && j.callLeft && j.callWait >= real && !j.askedOpen:
		j.unanswered("tools/call", j.callWait)
	default:
		return false
	}
	return true
}

// unanswered is the timeout of a request after the handshake: method went
// unanswered for wait ms, until the client left or the shim stopped it.
func (j *judgement) unanswered(method string, wait float64) {
	f, v := j.f, &j.v
	j.set(Timeout, j.cause, false)
	v.Reason = "no answer to " + method + " within " + FormatMS(wait) + ", when " + j.waitEnd()
	switch {
	case j.line != "":
		v.Reason += "; stderr: " + j.line
	case f.Exited && !f.Remote && len(f.StderrTail) == 0:
		v.Reason += "; stderr silent"
	}
	v.Advice = "the server answered its handshake, then never answered " + method + ": look at its stderr, or run the entry's command by hand with its env"
	if f.Remote {
		v.Advice = "the server answered its handshake, then never answered " + method + ": look at the server's own logs"
	}
}

// waitEnd says what ended a wait for tools/list.
func (j *judgement) waitEnd() string {
	if j.clientLeft {
		return "the client left"
	}
	return "mcpshim stopped the server (" + j.f.StopReason + ")"
}

// probed judges a run mcpshim probe made after its handshake: the probe
// always stops the server, so the question is whether it listed tools.
func (j *judgement) probed() {
	f, v := j.f, &j.v
	switch {
	case f.At.Timeout.Set():
		j.set(Timeout, j.cause, false)
		v.Reason, v.Advice = j.timeoutReason(), j.timeoutAdvice()
	case f.Tools == nil && f.ToolsListFailed > 0:
		j.set(ProtocolError, f.ToolsListError, true)
		v.Reason, v.Advice = "tools/list failed: "+f.ToolsListError, "the server answers the handshake but not tools/list: look at its stderr"
	case j.selfDied:
		j.set(Crashed, j.cause, false)
		v.Reason, v.Advice = j.crashReason(), j.crashAdvice()
	default:
		j.set(Ready, "", false)
		v.Reason = j.readyReason() // and its notes' advice
	}
}

// running is a run with no end record: still going, or its shim was killed.
func (j *judgement) running(outcome string, alive bool) {
	v := &j.v
	if !alive {
		j.set(Unrecorded, "", false)
		v.Reason, v.Advice = j.unrecordedReason(), unrecordedAdvice
		return
	}
	j.set(outcome, "", false)
	if outcome == Ready {
		v.Reason = j.readyReason()
		return
	}
	if j.f.At.Timeout.Set() {
		j.set(Timeout, j.cause, false)
		v.Reason, v.Advice = j.timeoutReason(), j.timeoutAdvice()
		return
	}
	v.Reason = "waiting for its handshake"
	if j.clientLeft {
		v.Reason = "the client left " + FormatMS(j.waited) + " after the start, before the handshake; the server is being stopped"
	}
}

func (j *judgement) set(outcome, cause string, fixable bool) {
	j.v.Outcome, j.v.Cause, j.v.Fixable = outcome, cause, fixable
}
