package report

import (
	"sort"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/mcp"
	"github.com/mcpshim-dev/mcpshim/phases"
	"github.com/mcpshim-dev/mcpshim/verdict"
)

// serverAgg holds one server's statistics across its runs: the runs counted
// (Count) and their outcomes, and the calls, restarts and discoveries of the
// records folded.
type serverAgg struct {
	runs      int
	failed    int
	outcomes  map[string]int
	calls     callAgg
	tools     map[string]*callAgg
	restarts  int
	zeroTools int
}

type callAgg struct {
	n       verdict.Calls
	latency histogram
}

func (s *Summary) server(name string) *serverAgg {
	if s.last != nil && s.lastName == name {
		return s.last // a ledger is mostly one server's: a map lookup a record saved
	}
	g := s.servers[name]
	s.lastName, s.last = name, g
	if g == nil {
		g = &serverAgg{tools: make(map[string]*callAgg), outcomes: make(map[string]int)}
		s.servers[name] = g
		s.last = g
	}
	return g
}

// add counts one record of the server's: its calls, restarts and
// zero-tool discoveries.
func (g *serverAgg) add(e *ledger.Entry) {
	switch e.Event {
	case phases.ToolsListResponded:
		if n, _ := e.Int(phases.FieldToolCount); n == 0 && !e.False(phases.FieldComplete) {
			g.zeroTools++
		}
	case phases.ToolCallResponded:
		ms, hasLatency := e.Float(phases.FieldLatencyMS)
		g.call(e.Str(phases.FieldTool), e.Str(phases.FieldOutcome), ms, hasLatency)
	case phases.PendingFailed:
		if tool := e.Str(phases.FieldTool); tool != "" || e.Str(phases.FieldMethod) == mcp.MethodCallTool {
			g.call(tool, "rpc_error", 0, false)
		}
	case phases.RestartScheduled:
		g.restarts++
	}
}

// Count adds a run to its server's runs and outcomes in Stats.
func (s *Summary) Count(r *Run) {
	g := s.server(r.Server)
	g.runs++
	g.outcomes[r.Outcome]++
	if r.Failed {
		g.failed++
	}
}

func (g *serverAgg) merge(o *serverAgg) {
	g.runs += o.runs
	g.failed += o.failed
	for k, n := range o.outcomes {
		g.outcomes[k] += n
	}
	g.calls.merge(&o.calls)
	for name, t := range o.tools {
		if g.tools[name] == nil {
			g.tools[name] = &callAgg{}
		}
		g.tools[name].merge(t)
	}
	g.restarts += o.restarts
	g.zeroTools += o.zeroTools
}

func (c *callAgg) merge(o *callAgg) {
	c.n.Received += o.n.Received
	c.n.OK += o.n.OK
	c.n.IsError += o.n.IsError
	c.n.Error += o.n.Error
	c.n.InputRequired += o.n.InputRequired
	c.latency.merge(&o.latency)
}

func (g *serverAgg) call(tool, outcome string, ms float64, hasLatency bool) {
	t := g.tools[tool]
	if t == nil {
		t = &callAgg{}
		g.tools[tool] = t
	}
	for _, c := range []*callAgg{&g.calls, t} {
		c.n.Received++
		c.n.Count(outcome)
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
	Failed              int            `json:"failed"` // runs whose verdict is a failure
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
// name: the runs Count counted, and the calls of the records folded.
func (s *Summary) Stats() []ServerStats {
	out := make([]ServerStats, 0, len(s.servers))
	for name, g := range s.servers {
		st := ServerStats{Server: name, Runs: g.runs, Outcomes: g.outcomes, Failed: g.failed, Tools: []ToolStats{},
			Restarts: g.restarts, ZeroToolDiscoveries: g.zeroTools, CallStats: g.calls.stats()}
		for tool, t := range g.tools {
			st.Tools = append(st.Tools, ToolStats{Tool: tool, CallStats: t.stats()})
		}
		sort.Slice(st.Tools, func(i, j int) bool { return st.Tools[i].Tool < st.Tools[j].Tool })
		out = append(out, st)
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
