package verdict

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mcpshim-dev/mcpshim/cause"
	"github.com/mcpshim-dev/mcpshim/phases"
)

// The verdict in words: each reason is one line for the table's WHY, each
// piece of advice what a person should do first.

const (
	exitAdvice       = "fix what it says and start it again: a retry fails the same way"
	quitAdvice       = "it quit by itself, status 0, before answering: check its arguments and configuration (some servers print their usage and exit 0)"
	refusalAdvice    = "align the protocol version or the client's identity: a retry is refused the same way"
	versionAdvice    = "the server answered a protocol version the client did not ask for and MCP does not have, and the client went no further: align the protocol version (upgrade the server or its MCP SDK); a retry is answered the same way"
	noiseAdvice      = "stdout must carry only JSON-RPC: make the server log to stderr; --divert-noise repairs it meanwhile"
	leftEarlyAdvice  = "the client did not wait for an answer (a script that closed stdin, a client shutting down): look at the client, not the server"
	unrecordedAdvice = "the shim itself was killed (SIGKILL, out of memory, power loss) before it could record the end: the ledger stops at the last event"
	zeroToolsAdvice  = "the handshake works and no tool is offered: a credential or permission problem, not a connection one; pin the surface with `mcpshim lock` so unattended runs fail closed"
	lockAdvice       = "the server lacks tools the lock promises: fix its credentials or configuration, or re-lock with `mcpshim lock` if the change is intended"
	warningAdvice    = "fix it: a stricter client fails on it (make the server log to stderr; --divert-noise meanwhile)"
)

// stderrCause is the server's stderr line that says why it ended: the one
// the shim chose when it saw every line (stderr_cause), else the chooser's
// pick of the tail; stated says whether it states an error.
func stderrCause(f *Fold) (line string, stated bool) {
	if f.StderrCause != "" {
		_, stated = cause.Choose([]string{f.StderrCause})
		return f.StderrCause, stated
	}
	return cause.Choose(f.StderrTail)
}

// exitHow is "exit 1", "killed by SIGKILL" or "exit status unknown".
func exitHow(f *Fold) string {
	switch {
	case f.Signal != "":
		return "killed by " + f.Signal
	case f.ExitCode != nil:
		return "exit " + strconv.Itoa(*f.ExitCode)
	}
	return "exit status unknown"
}

// before says how far a run that died before its handshake got: whether
// the handshake (initialize, or server/discover) had reached it.
func before(f *Fold) string {
	switch {
	case f.At.InitReceived.Set() || f.At.DiscReceived.Set():
		return "before answering the handshake"
	case f.At.ReplayFailed.Set():
		return "before answering the handshake the shim replayed"
	case f.At.Spawned.Set():
		return "before any request reached it"
	}
	return "before the handshake"
}

// withCause is "CAUSE (how)" or "how".
func withCause(c, how string) string {
	if c == "" {
		return how
	}
	return c + " (" + how + ")"
}

func spawnReason(f *Fold) string {
	return "cannot start: " + f.Error
}

func spawnAdvice(f *Fold) string {
	if f.Hint != "" {
		return f.Hint
	}
	return "the command could not be started: check the path and its permissions"
}

func (j *judgement) exitReason() string {
	sep := " "
	if j.outside() {
		sep = ", "
	}
	return withCause(j.cause, j.how()+sep+before(j.f)) + j.unstated() + j.oom()
}

func (j *judgement) crashReason() string {
	return withCause(j.cause, j.how()+", "+j.sinceHandshake()) + j.unstated() + j.oom()
}

// how is exitHow, and whose signal it was when the shim sent none.
func (j *judgement) how() string {
	if j.outside() {
		return exitHow(j.f) + ", not sent by the shim"
	}
	return exitHow(j.f)
}

// outside reports whether the run died by a signal the shim did not send.
func (j *judgement) outside() bool { return j.selfDied && j.f.Signal != "" }

// oom is what the process's memory cgroup said about OOM kills during a
// run that died by a signal from outside.
func (j *judgement) oom() string {
	f := j.f
	switch {
	case !j.outside():
		return ""
	case f.OOMKills != nil && *f.OOMKills > 0:
		return "; its memory cgroup counted " + Plural(*f.OOMKills, "OOM kill") + " meanwhile (" + f.OOMFile + ")"
	case f.OOMKills != nil:
		return "; its memory cgroup counted no OOM kill meanwhile (" + f.OOMFile + ")"
	case f.OOMUnreadable != "":
		return "; OOM kills unreadable: " + f.OOMUnreadable
	}
	return ""
}

// outsideAdvice is what to do about a signal from outside, from what the
// cgroup said.
func (j *judgement) outsideAdvice() string {
	f := j.f
	switch {
	case f.OOMKills != nil && *f.OOMKills > 0:
		return "the OOM killer ended it: raise the memory limit of its cgroup or container, or find what grows"
	case f.Signal != "SIGKILL":
		return "something outside the shim sent it " + f.Signal + " (a person, a supervisor, the system): " + seeMore
	}
	return "something outside the shim killed it (a person, a supervisor, or the OOM killer): the kernel log (dmesg, journalctl -k) says whether it was an OOM kill"
}

// unstated says what stderr held when no line of it states the error: a
// server that said nothing is told apart from one that said why.
func (j *judgement) unstated() string {
	f := j.f
	switch {
	case j.cause != "" || f.Remote || f.Signal != "":
		return ""
	case len(f.StderrTail) == 0 && f.StderrCause == "":
		return "; stderr silent"
	case j.line != "":
		return "; no stderr line states an error (the last: " + quote(j.line) + ")"
	}
	return "; no stderr line states an error"
}

// seeMore is the advice for a server that did not say why it ended: how to
// find out.
const seeMore = "run the entry's command by hand with its env to see more, or look at the server's own log"

// unsaid is the advice's start for a server no stderr line of which states
// why it ended.
func (j *judgement) unsaid() string {
	if len(j.f.StderrTail) == 0 && j.f.StderrCause == "" {
		return "it said nothing on stderr: " + seeMore
	}
	return "it stated no cause on stderr (no line says error, fatal or panic): " + seeMore
}

// exitAdvice is what to do about a server that exited before its handshake:
// a container engine's own failure (no daemon, no image) has its advice.
func (j *judgement) exitAdvice() string {
	if a := cause.Advice(j.cause); a != "" {
		return a
	}
	switch {
	case j.outside() && j.cause == "":
		return j.outsideAdvice()
	case j.cause == "":
		return j.unsaid()
	}
	return exitAdvice
}

// sinceHandshake is "12ms after the handshake" (without the time when its
// record was lost).
func (j *judgement) sinceHandshake() string {
	if j.v.HandshakeAt.IsZero() {
		return "after the handshake"
	}
	return FormatMS(ms(j.v.End.Sub(j.v.HandshakeAt))) + " after the handshake"
}

func (j *judgement) crashAdvice() string {
	fix := "fix what it says"
	switch {
	case j.outside() && j.cause == "":
		fix = j.outsideAdvice()
	case j.cause == "":
		fix = j.unsaid()
	}
	if j.f.Exhausted && j.f.Attempts > 0 {
		return fmt.Sprintf("it keeps crashing: the shim gave up after %s; %s", Plural(j.f.Attempts, "restart"), fix)
	}
	if j.f.Origin == phases.OriginProbe {
		return "it died after its handshake: " + fix
	}
	return "the calls in flight got the shim's error; --restart on-failure restarts it unless it keeps crashing: " + fix
}

// state is the handshake's last confirmed state, in handshake_timeout's words.
func (j *judgement) state() string {
	f := j.f
	switch {
	case f.TimeoutLast != "":
		return f.TimeoutLast
	case j.done:
		return phases.ResponseSentNoInitialized
	case f.At.InitReceived.Set() || f.At.DiscReceived.Set():
		return phases.InitializeReceivedNoResponse
	}
	return phases.SpawnedNoInitialize
}

func (j *judgement) timeoutReason() string {
	f := j.f
	s := "no handshake answer"
	switch {
	case f.TimeoutWaiting != "" && f.TimeoutMS > 0:
		s = "no answer to " + f.TimeoutWaiting + " within " + FormatMS(f.TimeoutMS)
	case j.clientLeft && !j.done:
		s += ": the client gave up after " + FormatMS(j.waited)
	case f.TimeoutMS > 0:
		s += " in " + FormatMS(f.TimeoutMS)
	}
	s += " (" + j.state() + ")"
	switch {
	case j.line != "":
		s += "; stderr: " + j.line
	case f.Exited && !f.Remote && len(f.StderrTail) == 0:
		s += "; stderr silent"
	}
	return s
}

func (j *judgement) timeoutAdvice() string {
	switch j.state() {
	case phases.SpawnedNoInitialize:
		return "no initialize reached the server: look at the client first"
	case phases.ResponseSentNoInitialized:
		return "the server answered initialize and notifications/initialized never came: look at the client"
	case phases.InitializeReceivedNoResponse:
		s := "the server read initialize and never answered: look at its stderr"
		if len(j.f.StderrTail) > 0 {
			s = "the server read initialize and never answered while its stderr was active: it may still have been starting"
		}
		return s + "; a cold npx/uvx install or a slow start needs a longer client timeout (Claude Code: MCP_TIMEOUT)"
	}
	return "the server answered its handshake, then not " + j.f.TimeoutWaiting + " in time: look at its stderr"
}

// replayFailed judges a restarted server that did not take the client's
// session back (the shim replays the handshake, then kills it): no answer
// in time is a timeout, any other answer a protocol error.
func (j *judgement) replayFailed() {
	f, v := j.f, &j.v
	in := f.Internal
	killed := ""
	if j.stopped {
		killed = "; mcpshim stopped it (" + exitHow(f) + ")"
	}
	stderr := ""
	switch {
	case j.line != "":
		stderr = "; stderr: " + j.line
	case f.Exited && len(f.StderrTail) == 0:
		stderr = "; stderr silent"
	}
	if in.ReplayTimeoutMS > 0 {
		j.set(Timeout, j.line, false)
		v.Reason = "restarted, no answer to the replayed " + orUnknown(in.ReplayMethod) + " within " + FormatMS(in.ReplayTimeoutMS) + killed + stderr
		v.Advice = "the restarted server never answered the client's handshake, which the shim replayed: look at its stderr, or run the entry's command by hand with its env to see it start"
		return
	}
	j.set(ProtocolError, in.ReplayError, true)
	v.Reason = "restarted, the replayed handshake failed: " + in.ReplayError + killed + stderr
	v.Advice = "the restarted server does not take back the session its first start accepted: look at its stderr; a retry fails the same way"
}

func (j *judgement) leftEarlyReason() string {
	f := j.f
	s := "the client left " + FormatMS(j.waited) + " after the start, before the handshake"
	switch {
	case !j.clientLeft && f.Internal.StopSignal != "":
		return j.signalled() + ", before the handshake"
	case !j.clientLeft:
		s = "stopped by the shim before the handshake"
		if f.StopReason != "" {
			s += " (" + f.StopReason + ")"
		}
		return s
	case j.stopped:
		return s + "; mcpshim stopped the server (" + exitHow(f) + ")"
	}
	return s + "; mcpshim closed the server's stdin and it exited (" + exitHow(f) + ")"
}

// signalled says who stopped a server with a signal to the shim that the
// shim passed on: its sender, not the shim (the sender is not recorded).
func (j *judgement) signalled() string {
	return "stopped by " + j.f.Internal.StopSignal + " to the shim, passed on to the server: its sender stopped it (a client stopping its servers, or Ctrl-C), not the shim"
}

// endedReason says how a run that served ended, and what to know about it.
func (j *judgement) endedReason() string {
	f := j.f
	var how string
	switch {
	case f.LockMode == "enforce" && len(f.LockMissing) > 0:
		how = "stopped by the shim: the tool surface lock is broken"
	case j.clientLeft:
		how = "the client left after " + FormatMS(j.v.DurationMS)
		if f.Internal.ClientReason != "" {
			how += " (" + f.Internal.ClientReason + ")"
		}
	case f.RequestedByShim && f.Internal.StopSignal != "":
		how = j.signalled()
	case f.RequestedByShim:
		how = "stopped by the shim"
		if f.StopReason != "" {
			how += " (" + f.StopReason + ")"
		}
	case f.Remote:
		how = "ended: " + f.EndReason
	default:
		how = "exited 0 by itself " + j.sinceHandshake() + ", the client still connected"
	}
	return strings.Join(append([]string{how}, j.notes()...), "; ")
}

func (j *judgement) endedAdvice() string {
	f := j.f
	if a := j.notesAdvice(); a != "" {
		return a
	}
	if !j.clientLeft && !f.RequestedByShim && !f.Remote {
		return "the client lost the server: --restart always restarts one that exits 0"
	}
	return ""
}

func (j *judgement) readyReason() string {
	f := j.f
	s := "handshake done"
	if f.ProtocolVersion != "" {
		s += " (" + f.ProtocolVersion + ")"
	}
	if name := strings.TrimSpace(f.ServerName + " " + f.ServerVersion); name != "" {
		s = name + ": " + s
	}
	parts := []string{s}
	if f.Tools != nil && *f.Tools > 0 {
		parts = append(parts, Plural(*f.Tools, "tool"))
	}
	j.v.Advice = j.notesAdvice()
	return strings.Join(append(parts, j.notes()...), "; ")
}

// notes are what a run that served should still tell: its tool surface, a
// broken lock, a warning.
func (j *judgement) notes() []string {
	f := j.f
	var parts []string
	switch {
	case f.Tools != nil && *f.Tools == 0:
		parts = append(parts, "zero tools listed")
	case f.Tools == nil && f.ToolsListFailed > 0:
		parts = append(parts, "tools/list failed: "+f.ToolsListError)
	}
	if len(f.LockMissing) > 0 {
		parts = append(parts, "locked tools missing ("+f.LockMode+"): "+strings.Join(f.LockMissing, ", "))
	}
	for _, c := range f.CanaryFailed {
		parts = append(parts, "canary FAILED "+c)
	}
	if j.v.Warning != "" {
		parts = append(parts, "warning: "+j.v.Warning)
	}
	return parts
}

func (j *judgement) notesAdvice() string {
	f := j.f
	switch {
	case len(f.CanaryFailed) > 0:
		return canaryAdvice(f.CanaryFailed[0])
	case len(f.LockMissing) > 0:
		return lockAdvice
	case f.Tools != nil && *f.Tools == 0:
		return zeroToolsAdvice
	case f.Tools == nil && f.ToolsListFailed > 0:
		return "the client got no tools: look at the server's stderr for why tools/list failed"
	case j.v.Warning != "":
		return warningAdvice
	}
	return ""
}

// canaryAdvice says what to fix for a failed canary, "how: detail" (probe's
// canary failures: each calls for a different fix).
func canaryAdvice(failed string) string {
	how, _, _ := strings.Cut(failed, ":")
	switch how {
	case "missing_tool":
		return "the server does not offer the canary's tool: check the --canary tool name against its tools (mcpshim probe -v lists them)"
	case "rpc_error":
		return "the server refused the canary's call: check its arguments against the tool's inputSchema, and the server's stderr"
	case "is_error":
		return "the tool ran and reported failure: what it depends on (an upstream API, a key in its env) is broken, as its text says"
	}
	return "the tool answered, but not what the canary expects: compare its answer with the canary's regex"
}

func (j *judgement) unrecordedReason() string {
	if j.f.PID > 0 {
		return fmt.Sprintf("no end recorded and pid %d is gone: the shim was killed", j.f.PID)
	}
	return "no end recorded: the shim was killed, or is still running elsewhere"
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

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

func quote(s string) string { return strconv.Quote(s) }

// Plural is "1 tool", "2 tools".
func Plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

// httpStatusText is "HTTP 503 Service Unavailable".
func httpStatusText(status int) string {
	return strings.TrimSpace(fmt.Sprintf("HTTP %d %s", status, http.StatusText(status)))
}
