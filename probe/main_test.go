package probe

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"testing"
	"time"

	"github.com/mcpshim-dev/mcpshim/mcp"
	"github.com/mcpshim-dev/mcpshim/testfixtures"
)

// The test binary doubles as the servers it probes: with fixtureEnv set,
// "fixture NAME ARGS" serves a testfixtures server and "edge NAME" one of the
// edge cases below, over real pipes in a real child process.
const fixtureEnv = "MCPSHIM_PROBE_TEST_FIXTURE"

func TestMain(m *testing.M) {
	if os.Getenv(fixtureEnv) == "1" && len(os.Args) > 2 {
		switch os.Args[1] {
		case "fixture":
			os.Exit(testfixtures.Serve(os.Args[2], os.Args[3:], os.Stdin, os.Stdout, os.Stderr))
		case "edge":
			os.Exit(edge(os.Args[2], os.Args[3:], os.Stdin, os.Stdout))
		}
	}
	os.Exit(m.Run())
}

// fixture is a target that runs a testfixtures server.
func fixture(name string, args ...string) Target {
	return Target{Name: name, Command: os.Args[0], Args: append([]string{"fixture", name}, args...)}
}

// edgeTarget is a target that runs one of the edge servers.
func edgeTarget(name string, args ...string) Target {
	return Target{Name: name, Command: os.Args[0], Args: append([]string{"edge", name}, args...)}
}

// testEnv is the environment the probed children start from.
func testEnv() []string { return append(os.Environ(), fixtureEnv+"=1") }

// edge serves the cases no fixture covers, in legacy-era JSON-RPC:
//   - list-silent: answers the handshake, then nothing ever again;
//   - noise: answers nothing, printing LSP-style framing instead;
//   - ping-first: pings the client and answers initialize only after the pong;
//   - cursor-loop: every tools/list page points at the same next cursor;
//   - no-tools-cap: declares no tools capability;
//   - slow-start [DURATION]: takes 3s (or DURATION) to start, then answers
//     at once, as a cold npx install or a heavy import does;
//   - burn DURATION: spends DURATION of CPU time before it reads stdin, as a
//     cold npx start compiling its modules does, however loaded the machine.
func edge(name string, args []string, in io.Reader, out io.Writer) int {
	if name == "burn" {
		d, _ := time.ParseDuration(args[0])
		for ownCPU() < d {
			for range 1_000_000 {
			}
		}
	}
	if name == "slow-start" {
		delay := 3 * time.Second
		if len(args) > 0 {
			delay, _ = time.ParseDuration(args[0])
		}
		time.Sleep(delay)
	}
	br := bufio.NewReader(in)
	send := func(v any) {
		data, _ := json.Marshal(v)
		fmt.Fprintf(out, "%s\n", data)
	}
	if name == "noise" {
		fmt.Fprint(out, "Content-Length: 52\r\n\r\n")
	}
	listed := false
	for {
		line, err := br.ReadBytes('\n')
		if err != nil {
			return 0
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(line, &m) != nil || m.ID == nil || name == "noise" || (name == "list-silent" && listed) {
			continue
		}
		switch m.Method {
		case "server/discover":
			send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32601, "message": "Method not found"}})
		case "initialize":
			caps := map[string]any{"tools": map[string]any{}}
			if name == "no-tools-cap" {
				caps = map[string]any{}
			}
			if name == "ping-first" {
				send(map[string]any{"jsonrpc": "2.0", "id": "srv-1", "method": "ping"})
				pong, err := br.ReadBytes('\n')
				var p struct {
					ID     string          `json:"id"`
					Result json.RawMessage `json:"result"`
				}
				if err != nil || json.Unmarshal(pong, &p) != nil || p.ID != "srv-1" || p.Result == nil {
					fmt.Fprintf(os.Stderr, "want the pong to srv-1, got %q\n", pong)
					return 1
				}
			}
			send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{
				"protocolVersion": mcp.LegacyVersion, "capabilities": caps,
				"serverInfo": map[string]any{"name": name, "version": "0.1"},
			}})
			listed = name == "list-silent"
		case "tools/list":
			page := map[string]any{"tools": []any{map[string]any{"name": "t", "inputSchema": map[string]any{"type": "object"}}}}
			if name == "cursor-loop" {
				page["nextCursor"] = "same"
			}
			send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": page})
		default:
			send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32601, "message": "Method not found"}})
		}
	}
}

// probeOne probes t with a deadline and the fixture environment.
func probeOne(t *testing.T, target Target, timeout time.Duration, mod ...func(*Options)) Result {
	t.Helper()
	opts := Options{Timeout: timeout, Env: testEnv()}
	for _, f := range mod {
		f(&opts)
	}
	return Probe(t.Context(), target, opts)
}
