package verdict

import (
	"fmt"
	"strings"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/phases"
)

// Answer is one of why's four questions about a run (did it launch,
// initialize, list tools, reach out?): "yes", "no" or
// "unknown", with the record that shows it.
type Answer struct {
	Key      string `json:"key"` // launched, initialized, tools, external
	Question string `json:"question"`
	Answer   string `json:"answer"`
	Reason   string `json:"reason"`
	Evidence *Ref   `json:"-"`
}

// Ref names a record of the run: its event and where it stands. A reader
// holding the run's records finds it with Find.
type Ref struct {
	Event string
	At    Mark
}

// Find returns the record ref names among a run's records, or nil.
func (r *Ref) Find(entries []ledger.Entry) *ledger.Entry {
	if r == nil {
		return nil
	}
	for i := range entries {
		if e := &entries[i]; e.Event == r.Event && markOf(e) == r.At {
			return e
		}
	}
	return nil
}

func ref(event string, at Mark) *Ref {
	if !at.Set() {
		return nil
	}
	return &Ref{event, at}
}

// answers are the four questions answered from the judged run, so they
// cannot contradict its outcome.
func (j *judgement) answers() []Answer {
	return []Answer{j.launched(), j.initialized(), j.tools(), j.external()}
}

func (j *judgement) launched() Answer {
	f := j.f
	a := Answer{Key: "launched", Question: "did the process launch?"}
	if f.Remote {
		a.Question = "did it connect?"
		switch {
		case f.At.Connected.Set() && !f.SpawnFailed:
			a.Answer, a.Evidence = "yes", ref(phases.Connected, f.At.Connected)
			a.Reason = "connected to " + orUnknown(f.URL)
			if f.Address != "" {
				a.Reason += " (" + f.Address + ")"
			}
			if j.v.Outcome == AuthRequired && f.AuthStage != "" {
				a.Reason += "; it wanted a token, and " + j.v.Cause
				a.Evidence = ref(phases.AuthFailed, f.At.AuthFailed)
			} else if j.v.Outcome == AuthRequired {
				a.Reason += "; the server then answered " + j.v.Cause
				a.Evidence = ref(phases.AuthFailed, f.At.AuthFailed)
			} else if f.Redirect != "" && !j.done {
				a.Reason += "; the server then redirected the handshake (" + f.Redirect + "), which was not followed"
				a.Evidence = ref(phases.RedirectRefused, f.At.Redirect)
			} else if f.HTTPFailure != "" && !j.done {
				a.Reason += "; the server then answered " + j.httpCause()
			}
			if f.Redirect != "" && j.done {
				a.Reason += "; a request was redirected later (" + f.Redirect + "), not followed"
			}
			if f.Recovered {
				a.Reason += "; the server was back after an outage"
			}
		case f.SpawnFailed:
			a.Answer, a.Evidence = "no", ref(phases.ConnectFailed, f.At.Connected)
			a.Reason = "cannot connect: " + f.Error
		default:
			a.Answer, a.Reason = "unknown", "no connected record: the ledger starts after the connection or lost it"
		}
		a.Reason += j.outage()
		return a
	}
	switch {
	case f.At.Spawned.Set():
		a.Answer, a.Evidence = "yes", ref(phases.Spawned, f.At.Spawned)
		a.Reason = "spawned"
		if f.Origin == phases.OriginProbe {
			a.Reason = "started by mcpshim probe"
		}
		if f.PID > 0 {
			a.Reason += fmt.Sprintf(" as pid %d", f.PID)
		}
		if f.ExecutableReady {
			a.Reason += "; the server reported executable_ready"
		}
	case f.SpawnFailed:
		a.Answer, a.Evidence = "no", ref(phases.SpawnFailed, f.At.End)
		a.Reason = "the command could not be started: " + f.Error
	default:
		a.Answer, a.Reason = "unknown", "no spawn record: the ledger starts after the launch or lost it"
	}
	return a
}

// outage is what "did it connect?" adds when the run is part of an outage:
// seed 004's page, which is a signal to a person and no exit, or the bridge
// giving up after --give-up-after.
func (j *judgement) outage() string {
	switch f := j.f; {
	case f.Exhausted:
		return "; the bridge gave up after " + Plural(f.Attempts, "consecutive failure")
	case f.Paged > 0:
		return "; an outage: paged after " + Plural(f.Paged, "consecutive failure") + ", the bridge keeps retrying"
	}
	return ""
}

func (j *judgement) initialized() Answer {
	f, v := j.f, &j.v
	a := Answer{Key: "initialized", Question: "did initialization complete?"}
	switch {
	case j.shook && f.At.Handshake.Set():
		a.Answer, a.Evidence = "yes", ref(f.Handshake, f.At.Handshake)
		switch f.Handshake {
		case phases.InitializeResponded:
			a.Reason = "answered initialize with protocol " + f.ProtocolVersion
			if f.Initialized {
				a.Reason += "; notifications/initialized arrived"
			} else {
				a.Reason += "; notifications/initialized was not seen"
			}
		case phases.DiscoverResponded:
			a.Reason = "answered server/discover"
		case phases.HandshakeReplayed:
			a.Reason = "the shim replayed the client's handshake to the restarted server"
		default:
			a.Reason = "the client spoke " + f.ProtocolVersion + " with no handshake, which that version allows"
		}
		if v.Warning != "" {
			a.Reason += "; " + v.Warning
		}
	case j.shook:
		a.Answer, a.Reason = "yes", "the end record says the handshake completed (its own record was lost)"
		a.Evidence = ref(phases.Exited, f.At.End)
	case v.Outcome == Running:
		a.Answer, a.Reason = "unknown", "the server is still waiting for its handshake"
	case v.Outcome == Unrecorded:
		a.Answer, a.Reason = "unknown", "the ledger stops before the handshake"
	default:
		a.Answer, a.Reason, a.Evidence = "no", j.noHandshake(), j.endRef()
	}
	return a
}

// noHandshake says why a run that ended had no handshake, in the words of
// its outcome.
func (j *judgement) noHandshake() string {
	f, v := j.f, &j.v
	switch {
	case f.SpawnFailed && f.Remote:
		return "it never connected"
	case f.SpawnFailed:
		return "the process never started"
	case v.Outcome == ProtocolError && j.refusal != "":
		return j.refusalReason()
	case v.Outcome == ProtocolError && v.NoiseFirst:
		return "stdout carried " + quote(f.NoisePreview) + " before the handshake, which breaks a client's JSON-RPC parser"
	case f.At.ReplayFailed.Set() && (v.Outcome == Timeout || v.Outcome == ProtocolError):
		return v.Reason
	case v.Outcome == Timeout:
		s := "no answer in time, last confirmed state " + j.state()
		if j.clientLeft {
			s += "; the client gave up after " + FormatMS(j.waited)
			if j.stopped {
				s += " and mcpshim stopped the server"
			} else if f.Exited {
				s += " and the server exited when mcpshim closed its stdin"
			}
		}
		return s
	case v.Outcome == Ended:
		return v.Reason
	}
	if f.Remote && f.Redirect != "" {
		return "the server redirected the handshake (" + f.Redirect + "); not followed"
	}
	if f.Remote {
		return "the server answered " + j.httpCause()
	}
	s := "the process ended before the handshake (" + exitHow(f) + ")"
	if j.cause != "" {
		s += ": " + j.cause
	}
	return s
}

// endRef is the evidence of a run with no handshake: the record that shows
// why.
func (j *judgement) endRef() *Ref {
	f, v := j.f, &j.v
	switch {
	case f.SpawnFailed && f.Remote:
		return ref(phases.ConnectFailed, f.At.Connected)
	case f.SpawnFailed:
		return ref(phases.SpawnFailed, f.At.End)
	case f.At.ReplayFailed.Set() && (v.Outcome == Timeout || v.Outcome == ProtocolError):
		return ref(phases.ReplayFailed, f.At.ReplayFailed)
	case v.Outcome == ProtocolError && j.version != "" && j.refusal == j.version:
		return ref(f.Handshake, f.At.Handshake)
	case v.Outcome == ProtocolError && f.At.InitFailed.Set():
		return ref(phases.InitializeFailed, f.At.InitFailed)
	case v.Outcome == ProtocolError && j.refusal != "":
		return ref(phases.DiscoverFailed, f.At.DiscFailed)
	case v.Outcome == ProtocolError && v.NoiseFirst:
		return ref(phases.StdoutNoise, f.At.Noise)
	case v.Outcome == Timeout && f.At.Timeout.Set():
		return ref(phases.HandshakeTimeout, f.At.Timeout)
	case v.Outcome == Timeout && j.clientLeft:
		return ref(phases.ClientDisconnected, f.At.Client)
	case f.Remote && v.Outcome == AuthRequired:
		return ref(phases.AuthFailed, f.At.AuthFailed)
	case f.Remote && f.Redirect != "":
		return ref(phases.RedirectRefused, f.At.Redirect)
	case f.Remote:
		return ref(phases.Disconnected, f.At.End)
	}
	return ref(phases.Exited, f.At.End)
}

func (j *judgement) tools() Answer {
	f := j.f
	a := Answer{Key: "tools", Question: "were tools discoverable?"}
	switch {
	case f.Tools != nil && *f.Tools > 0:
		a.Answer, a.Evidence = "yes", ref(phases.ToolsListResponded, f.At.Listed)
		a.Reason = fmt.Sprintf("tools/list returned %d tools", *f.Tools)
	case f.Tools != nil:
		a.Answer, a.Evidence = "no", ref(phases.ToolsListResponded, f.At.Listed)
		a.Reason = "tools/list returned no tools: a configuration or permission problem, not a connection one"
	case f.ToolsListFailed > 0:
		a.Answer, a.Evidence = "no", ref(phases.ToolsListFailed, f.At.ListFailed)
		a.Reason = "tools/list failed: " + f.ToolsListError
	case !j.shook && j.v.Outcome != Running && j.v.Outcome != Unrecorded:
		a.Answer, a.Reason = "no", "no handshake, so no discovery"
	// A tools/list asked and never answered says nothing of the tools the
	// server has: unknown, whatever ended the wait.
	case j.listOpen && j.v.Outcome == Timeout:
		a.Answer, a.Evidence = "unknown", ref(phases.ToolsListReceived, f.At.ListAsked)
		a.Reason = "tools/list was sent and never answered: " + j.v.Reason
	case j.listOpen && j.listLeft:
		a.Answer, a.Evidence = "unknown", ref(phases.ToolsListReceived, f.At.ListAsked)
		a.Reason = "tools/list was sent, and the client left " + FormatMS(j.listWait) + " later, before an answer"
	case j.listOpen && j.ended:
		a.Answer, a.Evidence = "unknown", ref(phases.ToolsListReceived, f.At.ListAsked)
		a.Reason = "tools/list was sent, and the server ended " + FormatMS(j.listWait) + " later without answering it"
	case j.listOpen:
		a.Answer, a.Evidence = "unknown", ref(phases.ToolsListReceived, f.At.ListAsked)
		a.Reason = "tools/list was sent " + FormatMS(j.listWait) + " ago and is not answered yet"
	case j.shook && f.RecordsLost > 0:
		a.Answer, a.Reason = "unknown", "no tools/list in the ledger, which lost records"
	case j.shook:
		a.Answer, a.Reason = "unknown", "the client never asked for tools/list"
	default:
		a.Answer, a.Reason = "unknown", "no tools/list in the ledger"
	}
	if len(f.LockMissing) > 0 {
		a.Reason += "; locked tools missing (" + f.LockMode + "): " + strings.Join(f.LockMissing, ", ")
		if a.Evidence == nil {
			a.Evidence = ref(phases.ToolsMissing, f.At.Missing)
		}
	}
	return a
}

func (j *judgement) external() Answer {
	f := j.f
	a := Answer{Key: "external", Question: "did anything reach the outside world?"}
	switch {
	case f.At.External.Set():
		a.Answer, a.Evidence = "yes", ref(f.Internal.ExternalEvent, f.At.External)
		a.Reason = "an external attempt to " + f.ExternalTarget
		if f.ExternalByServer {
			a.Reason += ", as the server itself reports"
		} else {
			a.Reason += ", seen by the egress witness"
		}
	case f.At.Denied.Set():
		a.Answer, a.Evidence = "no", ref(phases.ExternalDenied, f.At.Denied)
		a.Reason = "the egress witness denied a connection to " + f.DeniedTarget
	case f.Remote:
		a.Answer = "unknown"
		if !f.SpawnFailed {
			a.Evidence = ref(phases.Connected, f.At.Connected)
		}
		a.Reason = "a remote server runs elsewhere: what it reaches is not seen from here"
	case f.Egress == "witnessed":
		a.Answer, a.Evidence = "no", ref(phases.SpawnRequested, f.At.SpawnRequested)
		a.Reason = "the egress witness saw no outbound connection (it sees what honours the proxy variables)"
	default:
		a.Answer, a.Evidence = "unknown", ref(phases.SpawnRequested, f.At.SpawnRequested)
		a.Reason = "nothing recorded, and the run was unwitnessed: only the egress witness or the server's own reports show outbound traffic"
	}
	return a
}
