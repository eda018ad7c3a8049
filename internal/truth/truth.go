// Package truth computes, from a fault spec alone, what mcpshim must say of
// the run: failed or not, the outcome word, who is at fault, the cause the
// server stated, the kind of advice, why's answers and what the client gets.
// It knows the fault fixture and the fault client (testfixtures) and nothing
// of package verdict: it is the oracle the judge is held to (issue 33), and
// its rules are the lead's binding decisions (notes/decisions.md) and the
// issue's principle, that every word is backed by a recorded fact.
package truth

import (
	"fmt"
	"strconv"
	"time"

	"github.com/mcpshim-dev/mcpshim/testfixtures"
)

// Who is at fault.
const (
	None        = "none"
	Server      = "server"
	Client      = "client"
	Environment = "environment" // a signal the shim did not send: the OOM killer, a person, the OS
)

// The kinds of advice, each a different action for the person reading.
const (
	AdviceNone      = ""
	AdviceFix       = "fix"           // fix what the server said
	AdviceUnstated  = "unstated"      // it said nothing that states a problem: how to see more
	AdviceQuit      = "quit"          // it quit by itself, status 0: its arguments, its configuration
	AdviceSignal    = "signal"        // killed by a signal the shim did not send: where to look (OOM)
	AdviceClosedOut = "stdout-closed" // it closed its stdout before answering
	AdviceSlow      = "slow"          // no handshake answer in the client's wait: a slow start or a wedge
	AdviceUnanswer  = "unanswered"    // it answered the handshake, then not a request it read
	AdviceProtocol  = "protocol"      // align the protocol version
	AdviceToolsList = "tools-list"    // tools/list failed: the server's side
	AdviceClient    = "client"        // look at the client
	AdviceWarning   = "warning"       // a problem the client got past: a stricter one fails on it
)

// FaultOf is who is at fault for a kind of advice.
func FaultOf(advice string) string {
	switch advice {
	case AdviceNone:
		return None
	case AdviceSignal:
		return Environment
	case AdviceClient:
		return Client
	}
	return Server
}

// Truth is what the shim must say of a fault spec's one run.
type Truth struct {
	Failed  bool
	Outcome string
	Fault   string
	Cause   string // the verdict's cause, exactly; "" when the server stated none
	Advice  string // the kind
	// Initialized and Tools are why's answers to "did it initialize?" (yes,
	// no) and "did it list tools?" (yes, no, unknown: asked and never
	// answered); did it launch is always yes.
	Initialized, Tools string
	ListAsked          bool   // the client sent tools/list (its answer never says "never asked")
	Client             string // what the client got: testfixtures.FaultGot's words
}

func (t Truth) String() string {
	mark := ""
	if t.Failed {
		mark = " !"
	}
	return fmt.Sprintf("%s%s fault=%s cause=%q advice=%s initialized=%s tools=%s client=%q", t.Outcome, mark, t.Fault, t.Cause, t.Advice, t.Initialized, t.Tools, t.Client)
}

// Patience is how long the fault client waits for each answer: over the
// judge's real wait (a second), under a slow fault's sleep.
const Patience = 2500 * time.Millisecond

// death is how the fault leaves the server.
type death int

const (
	alive   death = iota // serving
	dead                 // exited or killed
	mute                 // alive, stdout closed
	deaf                 // alive, answering nothing
	ignores              // alive, never answering one method
)

// sim is the fault fixture and the fault client played on paper, message
// by message, as testfixtures plays them over pipes.
type sim struct {
	sp      testfixtures.FaultSpec
	n       int // messages the server read
	fired   bool
	state   death
	errNext int
	badVer  bool
	ask     bool
	slow    bool // the request read when the fault fired is answered after the client's patience
	hs      bool // the handshake was answered, usably
	diedHS  bool // the fault fired before the handshake was answered
	asked   bool // tools/list sent
	listed  bool // tools/list answered
	listErr bool // tools/list answered with an error
	noise   bool // noise on stdout
	failed  *answerOf
}

// answerOf is what one request got.
type answerOf struct {
	method string
	what   string // result, error, none, shim (the shim's -31000), version
	code   int
	msg    string
}

// fire is the fixture's fault firing.
func (s *sim) fire() {
	if s.fired {
		return
	}
	s.fired = true
	s.diedHS = !s.hs
	switch s.sp.Do {
	case testfixtures.FaultExit, testfixtures.FaultKill, testfixtures.FaultOutside:
		s.state = dead
	case testfixtures.FaultCloseOut:
		s.state = mute
	case testfixtures.FaultHang:
		s.state = deaf
	case testfixtures.FaultIgnore:
		s.state = ignores
	case testfixtures.FaultSlow:
		d, _ := time.ParseDuration(s.sp.Arg)
		s.slow = d > 2*Patience // a short sleep is a server that behaves
	case testfixtures.FaultVersion:
		s.badVer = true
	case testfixtures.FaultError:
		s.errNext, _ = strconv.Atoi(s.sp.Arg)
	case testfixtures.FaultNoise:
		s.noise = true
	case testfixtures.FaultRequest:
		s.ask = true
	}
}

func (s *sim) era(e string) bool { return s.sp.Era == e || s.sp.Era == "both" }

// send is the client sending one message; for a request, what it gets.
func (s *sim) send(method string, request bool) answerOf {
	got := answerOf{method: method, what: "none"}
	switch s.state {
	case dead:
		switch {
		case request && s.n == 0:
			got.what = "shim" // the opening, held by a shim whose server died at start: it answers
		case request:
			// Sent after the server died: the shim answers it, or has
			// ended (--restart never) and the client reads the end.
			got.what = "gone"
		}
		return got
	case mute:
		if request {
			got.what = "shim" // exactly one answer per request: the shim's, once stdout is gone
		}
		return got
	case deaf:
		return got // a server that reads and says nothing
	}
	s.n++
	at := s.sp.At
	if at.Point == "read" && at.N == s.n {
		s.fire()
		if s.state == dead || s.state == mute {
			if request {
				got.what = "shim"
			}
			return got
		}
		if s.state == deaf {
			return got
		}
	}
	if !request {
		if at.Point == "midline" && at.N == s.n {
			s.fire()
		}
		if method == "notifications/initialized" && at.Point == "handshake" {
			s.fire()
		}
		return got
	}
	if s.state == ignores && s.sp.Arg == method {
		return got
	}
	if s.slow {
		s.slow = false
		return got // answered after the client left
	}
	got = s.answer(method)
	if at.Point == "midline" && at.N == s.n {
		s.fire()
		if s.state == dead {
			return answerOf{method: method, what: "shim"}
		}
		return answerOf{method: method, what: "none"}
	}
	if got.what == "result" && (method == "initialize" || method == "server/discover") {
		if s.badVer {
			got.what = "version"
		} else {
			s.hs = true
		}
		if method == "server/discover" && at.Point == "handshake" {
			s.fire()
		}
	}
	if method == "tools/list" && got.what == "error" {
		s.listErr = true
	}
	if method == "tools/list" && got.what == "result" {
		s.listed = true
		if at.Point == "list" {
			s.fire()
		}
	}
	return got
}

// answer is the fixture's answer to a request while it serves.
func (s *sim) answer(method string) answerOf {
	got := answerOf{method: method, what: "result"}
	if s.errNext != 0 {
		got.what, got.code, got.msg = "error", s.errNext, testfixtures.FaultErrorMessage
		s.errNext = 0
		return got
	}
	switch {
	case method == "initialize" && !s.era("legacy"), method == "server/discover" && !s.era("modern"):
		got.what, got.code, got.msg = "error", -32601, "Method not found"
	case method == "tools/call" && s.ask:
		s.ask = false
		if s.sp.Then == "noanswer" {
			got.what = "asked" // the server waits for the client, which never answers
		}
	}
	return got
}

// play is the fault client's session on paper: PlayFaultClient's steps (a
// dual-era client falls back on the server's error, not on the shim's).
func (s *sim) play() *answerOf {
	if s.sp.At.Point == "start" {
		s.fire()
	}
	first := "initialize"
	if s.sp.Open != "legacy" {
		first = "server/discover"
	}
	if s.sp.Then == "leave" {
		s.send(first, true)
		return &answerOf{what: "left"}
	}
	got := s.send(first, true)
	if first == "server/discover" && got.what == "error" && s.sp.Open == "dual" {
		got = s.send("initialize", true)
	}
	if got.what != "result" {
		return &got
	}
	legacy := got.method == "initialize"
	if legacy {
		s.send("notifications/initialized", false)
	}
	s.asked = true
	if got := s.send("tools/list", true); got.what != "result" {
		return &got
	}
	if got := s.send("tools/call", true); got.what != "result" {
		return &got
	}
	return nil
}

// Of is the truth of a spec's run.
func Of(sp testfixtures.FaultSpec) Truth {
	s := &sim{sp: sp}
	stop := s.play()
	t := Truth{Initialized: yes(s.hs), Tools: yes(s.listed), ListAsked: s.asked, Client: "result"}
	if s.asked && !s.listed && !s.listErr {
		t.Tools = "unknown" // asked, and no answer came: the shim cannot know
	}
	stated := sp.Say == testfixtures.SayCause || sp.Say == testfixtures.SayBuried
	said := func() string {
		if stated && s.fired {
			return testfixtures.FaultCause
		}
		return ""
	}
	if stop != nil {
		t.Client = clientWords(*stop, sp)
	}
	failed := func(outcome, cause, advice string) {
		t.Failed, t.Outcome, t.Cause, t.Advice = true, outcome, cause, advice
	}
	fixOr := func(otherwise string) string {
		if said() != "" {
			return AdviceFix
		}
		return otherwise
	}
	beforeOr := func(before, after string) string {
		if s.diedHS {
			return before
		}
		return after
	}
	switch {
	case s.fired && s.state == dead && sp.Do == testfixtures.FaultExit && sp.Arg == "0" && !s.diedHS:
		t.Outcome = Undecided // exit 0 after the handshake: no decision yet, the generator leaves it out
	case s.fired && s.state == dead && sp.Do == testfixtures.FaultExit && sp.Arg == "0":
		failed("EXITED", said(), fixOr(AdviceQuit))
	case s.fired && s.state == dead && sp.Do == testfixtures.FaultExit:
		failed(beforeOr("EXITED", "CRASHED"), said(), fixOr(AdviceUnstated))
	case s.fired && s.state == dead:
		failed(beforeOr("EXITED", "CRASHED"), said(), AdviceSignal)
	case stop != nil && stop.what == "left" && s.fired && s.state == deaf:
		t.Outcome, t.Advice = "ENDED", AdviceClient
	case s.fired && s.state == mute:
		failed(beforeOr("EXITED", "CRASHED"), said(), fixOr(AdviceClosedOut))
	case stop != nil && stop.what == "version":
		failed("PROTOCOL_ERROR", VersionCause, AdviceProtocol)
	case stop != nil && stop.what == "error" && (stop.method == "initialize" || stop.method == "server/discover"):
		failed("PROTOCOL_ERROR", fmt.Sprintf("%d %s", stop.code, stop.msg), AdviceProtocol)
	case stop != nil && stop.what == "error" && stop.method == "tools/list":
		failed("PROTOCOL_ERROR", fmt.Sprintf("%d %s", stop.code, stop.msg), AdviceToolsList)
	case stop != nil && stop.what == "none" && !s.hs:
		failed("TIMEOUT", said(), AdviceSlow)
	case stop != nil && stop.what == "none":
		failed("TIMEOUT", said(), AdviceUnanswer)
	case stop != nil && stop.what == "asked":
		t.Outcome, t.Advice = "ENDED", AdviceClient
	case s.noise:
		t.Outcome, t.Advice = "ENDED", AdviceWarning
	default:
		t.Outcome = "ENDED" // a tool's error answer is the tool's, not the run's
	}
	t.Fault = FaultOf(t.Advice)
	return t
}

// Gone is what the client gets for a request sent after the server died:
// the shim's -31000 or the end of the stream (the shim ended first).
const Gone = "error -31000 or eof"

// Undecided is the outcome of a spec whose truth is arguable and not decided.
const Undecided = "UNDECIDED"

// VersionCause marks the cause of an unasked protocol version: the judge
// may name the version, and nothing else (the server stated no cause).
const VersionCause = "<version " + testfixtures.FaultVersionAnswered + ">"

func clientWords(a answerOf, sp testfixtures.FaultSpec) string {
	switch a.what {
	case "left":
		return "left"
	case "shim":
		return a.method + ": error -31000"
	case "gone":
		return a.method + ": " + Gone
	case "error":
		return fmt.Sprintf("%s: error %d %s", a.method, a.code, a.msg)
	case "asked", "none":
		return a.method + ": none"
	}
	return a.method + ": " + a.what
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
