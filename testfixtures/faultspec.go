package testfixtures

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// FaultSpec says where and how the fault fixture breaks, and what its
// client does; the truth harness (internal/truth) computes from it alone
// what the shim must say. Its text form, "era=legacy open=dual at=read:1
// do=exit:3 say=cause then=stay", is what a failing seed prints to replay.
type FaultSpec struct {
	Era  string // the server's era: legacy (initialize), modern (server/discover), both
	Open string // the client's opening: legacy, modern, dual (server/discover, then initialize on an error)
	At   Where  // where the fault fires
	Do   string // what happens there: see Faults
	Arg  string // the fault's argument: an exit code, a signal, an error code, a method, a duration
	Say  string // what the server writes on stderr first: cause, nothing, buried, chatter
	Then string // the client: stay, leave (closes stdin after its opening), noanswer (never answers the server's request)
}

// Where is the point a fault fires at.
type Where struct {
	Point string // start, read (after reading message N), midline (halfway through answering message N), handshake, list
	N     int    // the client's message number, from 1, for read and midline
}

func (w Where) String() string {
	if w.Point == "read" || w.Point == "midline" {
		return w.Point + ":" + strconv.Itoa(w.N)
	}
	return w.Point
}

// The faults the fixture injects (FaultSpec.Do).
const (
	FaultNone     = "none"     // behave
	FaultExit     = "exit"     // exit with code Arg
	FaultKill     = "kill"     // die by signal Arg, sent by itself
	FaultOutside  = "outside"  // wait for signal Arg from outside (the harness sends it; the fixture writes its pid to $FAULT_MARK)
	FaultCloseOut = "closeout" // close stdout and keep running (reading stdin until EOF)
	FaultHang     = "hang"     // answer nothing more, reading stdin until EOF
	FaultSlow     = "slow"     // sleep Arg (a duration), then behave
	FaultVersion  = "version"  // answer the handshake with a protocol version nobody asked for
	FaultError    = "error"    // answer the request read there with JSON-RPC error Arg
	FaultIgnore   = "ignore"   // never answer method Arg (At is start)
	FaultNoise    = "noise"    // write a line that is not JSON-RPC on stdout, then behave
	FaultRequest  = "request"  // send the client sampling/createMessage and wait for its answer before answering
)

// What the fault fixture says on stderr (FaultSpec.Say).
const (
	SayCause   = "cause"   // FaultCause, just before the fault
	SayNothing = "nothing" // not a byte
	SayBuried  = "buried"  // FaultCause, then FaultBurial bytes of debug lines
	SayChatter = "chatter" // debug lines and a banner, none stating a problem
)

// FaultCause is the line the fault fixture states its trouble with.
const FaultCause = "Error: FAULT_API_KEY is not set"

// FaultBurial is how much debug text buries the cause under SayBuried.
const FaultBurial = 2 << 20

// FaultVersionAnswered is the protocol version FaultVersion answers with.
const FaultVersionAnswered = "1999-01-01"

// FaultErrorMessage is the message of FaultError's JSON-RPC error.
const FaultErrorMessage = "injected failure"

// ChatterLines are SayChatter's lines: log noise and a banner.
var ChatterLines = []string{"Starting fault MCP server v1.2.3 on stdio", "debug: loaded 3 tools from config", "info: listening"}

// ParseFaultSpec reads the text form; missing keys take the healthy
// defaults (era both, open legacy, at start, do none, say nothing, then stay).
func ParseFaultSpec(s string) (FaultSpec, error) {
	sp := FaultSpec{Era: "both", Open: "legacy", At: Where{Point: "start"}, Do: FaultNone, Say: SayNothing, Then: "stay"}
	for _, kv := range strings.Fields(s) {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return sp, fmt.Errorf("fault spec %q: %q is not key=value", s, kv)
		}
		switch k {
		case "era":
			sp.Era = v
		case "open":
			sp.Open = v
		case "at":
			p, n, _ := strings.Cut(v, ":")
			sp.At.Point = p
			if n != "" {
				i, err := strconv.Atoi(n)
				if err != nil || i < 1 {
					return sp, fmt.Errorf("fault spec %q: at %q: want a message number from 1", s, v)
				}
				sp.At.N = i
			}
		case "do":
			sp.Do, sp.Arg, _ = strings.Cut(v, ":")
		case "say":
			sp.Say = v
		case "then":
			sp.Then = v
		default:
			return sp, fmt.Errorf("fault spec %q: unknown key %q", s, k)
		}
	}
	return sp, sp.check()
}

func (sp FaultSpec) check() error {
	bad := func(what, v string) error { return fmt.Errorf("fault spec %q: unknown %s %q", sp, what, v) }
	switch {
	case !oneOf(sp.Era, "legacy", "modern", "both"):
		return bad("era", sp.Era)
	case !oneOf(sp.Open, "legacy", "modern", "dual"):
		return bad("opening", sp.Open)
	case !oneOf(sp.At.Point, "start", "read", "midline", "handshake", "list"):
		return bad("point", sp.At.Point)
	case (sp.At.Point == "read" || sp.At.Point == "midline") != (sp.At.N > 0):
		return fmt.Errorf("fault spec %q: read and midline take a message number, the others none", sp)
	case !oneOf(sp.Do, FaultNone, FaultExit, FaultKill, FaultOutside, FaultCloseOut, FaultHang, FaultSlow, FaultVersion, FaultError, FaultIgnore, FaultNoise, FaultRequest):
		return bad("fault", sp.Do)
	case !oneOf(sp.Say, SayCause, SayNothing, SayBuried, SayChatter):
		return bad("stderr", sp.Say)
	case !oneOf(sp.Then, "stay", "leave", "noanswer"):
		return bad("client", sp.Then)
	}
	switch sp.Do {
	case FaultExit, FaultError:
		if _, err := strconv.Atoi(sp.Arg); err != nil {
			return fmt.Errorf("fault spec %q: %s takes a number", sp, sp.Do)
		}
	case FaultSlow:
		if _, err := time.ParseDuration(sp.Arg); err != nil {
			return fmt.Errorf("fault spec %q: slow takes a duration", sp)
		}
	case FaultKill, FaultOutside, FaultIgnore:
		if sp.Arg == "" {
			return fmt.Errorf("fault spec %q: %s takes an argument", sp, sp.Do)
		}
	}
	return nil
}

// String is the text form ParseFaultSpec reads.
func (sp FaultSpec) String() string {
	do := sp.Do
	if sp.Arg != "" {
		do += ":" + sp.Arg
	}
	return fmt.Sprintf("era=%s open=%s at=%s do=%s say=%s then=%s", sp.Era, sp.Open, sp.At, do, sp.Say, sp.Then)
}

// Argv is the fixture's command line after the binary: fixture fault --spec SPEC.
func (sp FaultSpec) Argv() []string { return []string{"fixture", "fault", "--spec", sp.String()} }

func oneOf(v string, set ...string) bool {
	for _, s := range set {
		if v == s {
			return true
		}
	}
	return false
}
