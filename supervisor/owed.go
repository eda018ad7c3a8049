package supervisor

import (
	"context"
	"fmt"
	"time"

	"github.com/mcpshim-dev/mcpshim/cause"
	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/mcp"
	"github.com/mcpshim-dev/mcpshim/phases"
)

// answer writes the error the shim owes the client for request p.
func (s *Supervisor) answer(p pendingCall, why string) {
	msg := s.owedMessage(why)
	data := map[string]any{"run": s.cur.Load().run, "method": p.method}
	if p.tool != "" {
		data["tool"] = p.tool
	}
	s.writeOwed(p, msg, s.causeData(data))
}

// writeOwedError writes one error response of the shim's own to the client.
func (s *Supervisor) writeOwedError(id []byte, msg string, data map[string]any) error {
	terminated, err := s.client.WriteMessage(errorResponse(id, msg, data))
	if terminated {
		s.emit(phases.Transport, phases.PartialLineTerminated)
	}
	return err
}

func (s *Supervisor) writeOwed(p pendingCall, msg string, data map[string]any) {
	err := s.writeOwedError(p.id, msg, data)
	s.markReplied() // or it can have no answer: its stdout is closed
	if err != nil {
		return
	}
	if id, ok := mcp.ParseID(p.id); ok {
		s.mem.endListen(id) // an answered subscription stream is over
	}
	fields := []ledger.Field{ledger.F(phases.FieldRequestID, string(p.id)), ledger.F(phases.FieldMethod, p.method), ledger.F(phases.FieldDirection, "client")}
	if p.tool != "" {
		fields = append(fields, ledger.F(phases.FieldTool, p.tool))
	}
	s.emit(phases.Interruption, phases.PendingFailed, append(fields, ledger.F(phases.FieldMessage, msg))...)
}

// errorResponse is the JSON-RPC error the shim owes the client for a request
// the server can no longer answer.
func errorResponse(id []byte, message string, data map[string]any) []byte {
	return mcp.ErrorLine(id, mcp.CodeServerGone, message, data)
}

// causeTail is how many stderr lines an owed error's data carries.
const causeTail = 5

// death is how a child ended, for the errors owed after it.
type death struct {
	message string // the error owed for a request it did not answer (diedMessage)
	code    int
	signal  string
}

// diedMessage is the error owed for a request a child did not answer, and
// for one sent after it ended for good: the same words whenever the request
// came. said is the stderr line that states why; stopped says the shim
// stopped it (how then says why and how).
func diedMessage(name, how, said string, stopped bool) string {
	msg := fmt.Sprintf("mcpshim: server %s %s before answering", name, how)
	if stopped {
		msg = fmt.Sprintf("mcpshim: server %s did not answer: %s", name, how)
	}
	if said != "" {
		msg += ": " + said
	}
	if a := cause.Advice(said); a != "" {
		msg += " (" + a + ")"
	}
	return msg
}

// owedMessage is the message of an error the shim writes in place of the
// server's answer, with the cause the client should show: what stopped the
// server, in its own words when it gave some.
// A server that is not running is said to be so by its cause alone.
func (s *Supervisor) owedMessage(why string) string {
	s.causeMu.Lock()
	defer s.causeMu.Unlock()
	switch {
	case why == notRunning && s.death != nil:
		return s.death.message
	case s.cause == "":
	case why == notRunning:
		why = s.cause
	default:
		why += " (" + s.cause + ")"
	}
	return fmt.Sprintf("mcpshim: server %s %s; the request was not answered", s.cfg.Name, why)
}

const notRunning = "is not running"

// causeData adds the details behind the cause to an owed error's data.
func (s *Supervisor) causeData(data map[string]any) map[string]any {
	s.causeMu.Lock()
	defer s.causeMu.Unlock()
	if s.cause != "" {
		data["cause"] = s.cause
	}
	if s.death != nil {
		data["exit_code"], data["signal"] = s.death.code, s.death.signal
	}
	if s.spawnErr != nil {
		data["error_class"] = s.spawnErr.Class
		data["error"] = s.spawnErr.Error()
		if s.spawnErr.Hint != "" {
			data["hint"] = s.spawnErr.Hint
		}
	}
	if tail := s.cur.Load().tail; tail != nil {
		if lines := tail.Lines(); len(lines) > 0 {
			data["stderr_tail"] = lines[max(0, len(lines)-causeTail):]
		}
	}
	return data
}

// withdraw tells the client that the dead child's requests to it (an
// elicitation dialog, a sampling request, roots/list) will never be waited
// for: notifications/cancelled with each requestId. 2025-11-25
// (utilities/cancellation): "When a party wants to cancel an in-progress
// request, it sends a notifications/cancelled notification"; the shim
// speaks for the party that can no longer.
func (s *Supervisor) withdraw(requests []pendingCall, how string) {
	for _, p := range requests {
		note := mcp.Cancelled(p.id, fmt.Sprintf("mcpshim: server %s %s", s.cfg.Name, how))
		terminated, err := s.client.WriteMessage(note)
		if terminated {
			s.emit(phases.Transport, phases.PartialLineTerminated)
		}
		if err != nil {
			return
		}
		s.emit(phases.Interruption, phases.PendingFailed, ledger.F(phases.FieldRequestID, string(p.id)), ledger.F(phases.FieldMethod, p.method),
			ledger.F(phases.FieldDirection, "server"), ledger.F(phases.FieldMessage, "cancelled: the server is gone"))
	}
}

// answerWait is how long a session whose server is gone for good stays open
// for the client's first request. A client writes it as soon as it has
// started the server, so it is on its way; it may come after a server that
// died at once was given up on, and it is owed an answer then too.
const answerWait = 10 * time.Second

// awaitRequest keeps the session open, once no child will come, for a client
// that has had no answer yet: it waits for the client relay to answer the
// client's request with the cause, for the client to leave or for the shim
// to be told to stop, at most answerWait. Exiting at once would leave such a
// client an EPIPE and an empty stdout, the cause only in a log.
func (s *Supervisor) awaitRequest(ctx context.Context) {
	if !s.replied.Load() && !s.cfg.Interactive {
		s.wait(ctx, answerWait, s.firstReply)
	}
}

// markReplied notes that the client had an answer, or that writing one failed.
func (s *Supervisor) markReplied() {
	if s.replied.CompareAndSwap(false, true) {
		close(s.firstReply)
	}
}
