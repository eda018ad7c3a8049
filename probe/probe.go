// Package probe shakes hands with MCP servers under one deadline per server and
// sorts each into an outcome that says what a person should do about it.
//
// A probe launches a stdio server (or POSTs to a Streamable HTTP one), speaks
// server/discover falling back to initialize, lists every page of tools, may
// call one read-only canary tool, and then stops the server with its whole
// process group. Every read, on every transport, is bounded by the same
// deadline: a server that answers the handshake and then goes silent gives up
// on time. The package also owns the lock file that pins a fleet's tool
// surface (its digests are mcp's), and the per-outcome result cache. It spawns
// through proc and knows nothing of the shim's supervisor.
package probe

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"sync"
	"time"

	"github.com/mcpshim-dev/mcpshim/lock"
	"github.com/mcpshim-dev/mcpshim/mcp"
	"github.com/mcpshim-dev/mcpshim/phases"
	"github.com/mcpshim-dev/mcpshim/redact"
	"github.com/mcpshim-dev/mcpshim/verdict"
)

// Outcome is the verdict on one server.
type Outcome string

// The outcomes are the verdict's words (package verdict judges the probe's
// records as it judges the shim's): the four a startup can have (ready, no
// answer in time, exited, refused), and a remote server's.
const (
	// Ready: the handshake completed and tools were listed.
	Ready Outcome = verdict.Ready
	// Timeout: no answer before the deadline. Time may fix it; config will not.
	Timeout Outcome = verdict.Timeout
	// Exited: the stdio server died or could not be started.
	Exited Outcome = verdict.Exited
	// Crashed: the server died after its handshake.
	Crashed Outcome = verdict.Crashed
	// ProtocolError: the server answered and refused, or spoke something other than JSON-RPC.
	ProtocolError Outcome = verdict.ProtocolError
	// Unreachable: a remote server refused the connection, its name did not
	// resolve, or it answered 5xx.
	Unreachable Outcome = verdict.Unreachable
	// AuthRequired: a remote server answered 401 or 403.
	AuthRequired Outcome = verdict.AuthRequired
)

// Retryable reports whether a second attempt could change the outcome: only
// waiting fixes a timeout or a server that is not up yet.
func (o Outcome) Retryable() bool { return o == Timeout || o == Unreachable }

// Last confirmed events of a TIMEOUT: how far the probe got before the
// deadline. The handshake states are the ledger's words.
const (
	// SpawnedNoInitialize: the server was started but the handshake never reached it.
	SpawnedNoInitialize = phases.SpawnedNoInitialize
	// InitializeReceivedNoResponse: the handshake request was delivered and never answered.
	InitializeReceivedNoResponse = phases.InitializeReceivedNoResponse
	// ToolsListNoResponse: the handshake was answered, tools/list was not.
	ToolsListNoResponse = "tools_list_no_response"
	// CanaryNoResponse: tools were listed, the canary's tools/call was not answered.
	CanaryNoResponse = "canary_no_response"
)

var (
	// ErrBadCanary is returned by ParseCanary for a spec it cannot read.
	ErrBadCanary = errors.New("canary must be SERVER:TOOL:{json args}:REGEX")

	// errClosed: the server closed stdout, or exited, before answering.
	errClosed = errors.New("server closed stdout")
)

// Target is one server to probe: a command for stdio, or a URL for Streamable HTTP.
type Target struct {
	Name    string            `json:"name"`
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"` // added to Options.Env
	Dir     string            `json:"dir,omitempty"`
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
}

// Remote reports whether the target is probed over HTTP.
func (t Target) Remote() bool { return t.URL != "" }

// Options apply to every server of a run.
type Options struct {
	Timeout  time.Duration // the whole probe of one server, every read included; default 5s
	Parallel int           // servers alive at once; 0 starts them all, as a client does; Adaptive as the CPU allows
	Retries  int           // further attempts after a retryable outcome
	Protocol string        // "" speaks both eras; mcp.ModernVersion or an older version forces one
	Env      []string      // the environment stdio servers start from
	Canaries []Canary      // run against the servers they name, after listing
	// OnDone is called once per server with its final result, never concurrently.
	OnDone func(Result)
}

// Step is one confirmed event of a probe, for the ledger's timeline.
type Step struct {
	At time.Time `json:"at"`
	// spawned, spawn_failed, request_sent, response_received, no_response,
	// notification_sent, tools_listed, stdout_noise, protocol_error,
	// http_status, connect_failed, deadline, exited (on its own), stopped
	// (by the probe), canary (its verdict)
	Event  string `json:"event"`
	Method string `json:"method,omitempty"`
	Tool   string `json:"tool,omitempty"`    // tools/call and canary: the tool
	Result string `json:"outcome,omitempty"` // a tools/call's answer (success, is_error, rpc_error); a canary's "ok" or its failure
	Detail string `json:"detail,omitempty"`
	Code   int    `json:"code,omitempty"`  // a JSON-RPC error's code, an HTTP status
	Class  string `json:"class,omitempty"` // spawn_failed, connect_failed: the error's class
	Hint   string `json:"hint,omitempty"`  // spawn_failed: what to try
}

// Result is what one server's probe established.
type Result struct {
	Server     string              `json:"server"`
	Transport  string              `json:"transport"` // "stdio" or "http"
	Outcome    Outcome             `json:"outcome"`
	Detail     string              `json:"detail"`           // the verdict's reason, verbatim where the server gave one
	Cause      string              `json:"cause,omitempty"`  // the line that says why: stderr, a refusal, an HTTP status
	Advice     string              `json:"advice,omitempty"` // what to do about it
	Started    time.Time           `json:"started"`
	Elapsed    time.Duration       `json:"-"` // as elapsed_ms in JSON, the unit of every duration mcpshim writes
	Attempts   int                 `json:"attempts"`
	Protocol   string              `json:"protocol,omitempty"`
	ServerInfo *mcp.Implementation `json:"server_info,omitempty"`
	Tools      []lock.Tool         `json:"tools"`
	Warnings   []string            `json:"warnings,omitempty"`
	Canaries   []CanaryResult      `json:"canaries,omitempty"`

	LastEvent    string   `json:"last_event,omitempty"` // TIMEOUT: one of SpawnedNoInitialize...
	StderrActive bool     `json:"stderr_active,omitempty"`
	StderrTail   []string `json:"stderr_tail,omitempty"` // redacted
	PID          int      `json:"pid,omitempty"`
	ExitStatus   string   `json:"exit_status,omitempty"`
	ExitCode     *int     `json:"exit_code,omitempty"` // -1 for a signal
	Signal       string   `json:"signal,omitempty"`
	HTTPStatus   int      `json:"http_status,omitempty"`
	Realm        string   `json:"realm,omitempty"` // AUTH_REQUIRED: the WWW-Authenticate realm

	Timeline []Step `json:"timeline"`
	Cached   bool   `json:"cached,omitempty"`

	url     string        // a remote target's endpoint, without query or user info
	timeout time.Duration // the deadline the probe had
}

// resultJSON is Result with its duration in milliseconds.
type resultJSON struct {
	ElapsedMS float64 `json:"elapsed_ms"`
	*resultFields
}

type resultFields Result // Result without its methods, so encoding it does not recurse

func (r Result) MarshalJSON() ([]byte, error) {
	return json.Marshal(resultJSON{ElapsedMS: float64(r.Elapsed.Microseconds()) / 1000, resultFields: (*resultFields)(&r)})
}

func (r *Result) UnmarshalJSON(data []byte) error {
	v := resultJSON{resultFields: (*resultFields)(r)}
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	r.Elapsed = time.Duration(v.ElapsedMS * float64(time.Millisecond))
	return nil
}

// ToolNames returns the listed tool names, sorted.
func (r *Result) ToolNames() []string {
	names := make([]string, len(r.Tools))
	for i, t := range r.Tools {
		names[i] = t.Name
	}
	sort.Strings(names)
	return names
}

// CanaryFailed reports whether any canary judged the server broken.
func (r *Result) CanaryFailed() bool {
	for _, c := range r.Canaries {
		if !c.OK {
			return true
		}
	}
	return false
}

func (o *Options) withDefaults() Options {
	out := *o
	if out.Timeout <= 0 {
		out.Timeout = 5 * time.Second
	}
	return out
}

// Run probes every target and returns the results in the order given. It
// spawns the servers one after another, in that order: at most
// Options.Parallel alive at once, all of them for 0, or as the CPU allows
// for Adaptive (see admission). It holds every conversation until the
// spawning first has to wait (the list is done, or no server may start
// yet): each deadline starts at its server's spawn, so the last server's
// starts near the probe's start instead of after the CPU spent on the
// answers of the others. A retryable outcome is tried again up to
// Options.Retries times; the others would only fail the same way twice.
func Run(ctx context.Context, targets []Target, opts Options) []Result {
	opts = opts.withDefaults()
	results := make([]Result, len(targets))
	g := newGate(opts.Parallel, len(targets))
	spawned := make(chan struct{})
	spawning := sync.OnceFunc(func() { close(spawned) })
	var wg sync.WaitGroup
	var doneMu sync.Mutex
	for i, t := range targets {
		g.wait(ctx, spawning)
		a := begin(ctx, t, opts)
		g.started(i, a.pid)
		// One goroutine per started server; it exits with its verdict.
		wg.Go(func() {
			defer g.done(i)
			<-spawned
			results[i] = a.retry(ctx)
			if opts.OnDone != nil {
				doneMu.Lock()
				opts.OnDone(results[i])
				doneMu.Unlock()
			}
		})
	}
	spawning()
	wg.Wait()
	return results
}

// Probe probes one target, retrying a retryable outcome up to Options.Retries
// times. The result describes the last attempt.
func Probe(ctx context.Context, t Target, opts Options) Result {
	opts = opts.withDefaults()
	return begin(ctx, t, opts).retry(ctx)
}

// retry finishes a and, while the outcome is retryable, tries again. Each
// attempt is judged from its records once they are redacted: the records
// the ledger gets, so that the ledger judges it the same.
func (a *attempt) retry(ctx context.Context) Result {
	r := a.finish()
	for attempt := 1; ; attempt++ {
		r.redact(redact.EnvHider(a.t.Env))
		r.judge(a.opts.Timeout)
		r.Attempts = attempt
		if !r.Outcome.Retryable() || attempt > a.opts.Retries || ctx.Err() != nil {
			return r
		}
		b := begin(ctx, a.t, a.opts)
		a.pid.Store(b.pid.Load()) // the retry's process is the one the gate reads
		r = b.finish()
	}
}
