package main

import (
	"path/filepath"
	"strings"
	"time"

	"github.com/mcpshim-dev/mcpshim/phases"
	"github.com/mcpshim-dev/mcpshim/probe"
)

// probeEvents maps a probe's timeline onto the ledger's vocabulary, seen
// from the server's side as the shim sees it: the probe's request_sent
// initialize is the server's initialize_received.
var probeEvents = map[string][2]string{
	"request_sent initialize":                     {string(phases.Handshake), phases.InitializeReceived},
	"response_received initialize":                {string(phases.Handshake), phases.InitializeResponded},
	"request_sent server/discover":                {string(phases.Handshake), phases.DiscoverReceived},
	"response_received server/discover":           {string(phases.Handshake), phases.DiscoverResponded},
	"request_sent tools/list":                     {string(phases.Discovery), phases.ToolsListReceived},
	"request_sent tools/call":                     {string(phases.Execution), phases.ToolCallReceived},
	"response_received tools/call":                {string(phases.Execution), phases.ToolCallResponded},
	"notification_sent notifications/initialized": {string(phases.Handshake), phases.InitializedReceived},
}

// failedEvents name a response that carried a JSON-RPC error.
var failedEvents = map[string]string{
	phases.InitializeResponded: phases.InitializeFailed,
	phases.DiscoverResponded:   phases.DiscoverFailed,
}

// recordProbe appends one probe of a server to that server's ledger with
// origin probe, so `mcpshim ledger` shows probe history beside the shim's
// runs. dir "" is the default ledger directory; "off" records nothing.
func recordProbe(c *cli, dir, shimID string, r probe.Result) {
	if dir == "off" || r.Cached {
		return
	}
	if dir == "" {
		dir = phases.DefaultDir(c.getenv)
	}
	l, err := phases.OpenLedger(phases.LedgerOptions{Path: filepath.Join(dir, sanitize(r.Server)+".jsonl"), Shim: shimID, Server: r.Server})
	if err != nil {
		return // the probe's own report is what the user reads; the ledger is a bonus
	}
	defer l.Close()
	run := phases.NewID("run", r.Started)
	write := func(at time.Time, p phases.Phase, event string, fields ...phases.Field) {
		l.Write(&phases.Record{Time: at, Run: run, Origin: phases.OriginProbe, Phase: p, Event: event, Fields: fields})
	}
	for _, st := range r.Timeline {
		switch st.Event {
		case "spawned":
			write(st.At, phases.Launch, phases.Spawned)
		case "spawn_failed":
			write(st.At, phases.Launch, phases.SpawnFailed, phases.F("error", st.Detail))
		case "tools_listed":
			write(st.At, phases.Discovery, phases.ToolsListResponded, phases.F("complete", true),
				phases.F("tool_count", len(r.Tools)), phases.F("tools", r.ToolNames()))
		case "deadline":
			write(st.At, phases.Handshake, phases.HandshakeTimeout, phases.F("last_event", r.LastEvent), phases.F("waiting", st.Method))
		case "stopped", "exited":
			if r.Transport == "http" {
				continue // no process ran: the probe_result says how it went
			}
			write(st.At, phases.Launch, phases.Exited, phases.F("detail", st.Detail), phases.F("requested_by_shim", st.Event == "stopped"),
				phases.F("stderr_tail", r.StderrTail))
		default:
			pe, ok := probeEvents[st.Event+" "+st.Method]
			if !ok {
				continue
			}
			event := pe[1]
			fields := []phases.Field{}
			if strings.HasPrefix(st.Detail, "error ") {
				if failed, ok := failedEvents[event]; ok {
					event = failed
				}
				fields = append(fields, phases.F("message", st.Detail))
			}
			if event == phases.InitializeResponded || event == phases.DiscoverResponded {
				fields = append(fields, phases.F("protocol_version", r.Protocol))
				if r.ServerInfo != nil {
					fields = append(fields, phases.F("server_name", r.ServerInfo.Name), phases.F("server_version", r.ServerInfo.Version))
				}
			}
			write(st.At, phases.Phase(pe[0]), event, fields...)
		}
	}
	write(r.Started.Add(r.Elapsed), phases.LedgerPhase, phases.ProbeResult, phases.F("outcome", string(r.Outcome)),
		phases.F("detail", r.Detail), phases.F("elapsed_ms", r.Elapsed), phases.F("attempts", r.Attempts),
		phases.F("transport", r.Transport))
}
