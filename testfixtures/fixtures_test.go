package testfixtures

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestNames(t *testing.T) {
	contract := []string{
		"healthy", "exit-early", "banner", "log-on-stdout", "invalid-schema", "zero-tools",
		"iserror", "rpc-error-tool", "silent", "slow-init", "init-no-response", "protocol-reject",
		"crash-mid-response", "huge-response", "modern-only", "stubborn", "grandchild", "sleep",
		"report", "sampling", "server-events", "stderr-chatty",
	}
	list := Names()
	var got []string
	for _, f := range list {
		got = append(got, f.Name)
		if f.Description == "" || strings.Contains(f.Description, "\n") {
			t.Errorf("Names(): %s: got description %q, want one non-empty line", f.Name, f.Description)
		}
	}
	if !slices.IsSorted(got) {
		t.Errorf("Names(): got %v, want sorted", got)
	}
	for _, name := range contract {
		if !slices.Contains(got, name) {
			t.Errorf("Names(): got %v, want it to include %q", got, name)
		}
	}
}

func TestServeRejectsBadInvocation(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantStderr string
	}{
		{"no-such-fixture", nil, "known fixtures: banner, browser, chaos, crash-mid-response,"},
		{"healthy", []string{"--no-such-flag"}, "flag provided but not defined"},
		{"healthy", []string{"--delay", "soon"}, "invalid value"},
		{"healthy", []string{"extra"}, `unexpected argument "extra"`},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		code := Serve(tt.name, tt.args, strings.NewReader(""), &stdout, &stderr)
		if code != 2 || !strings.Contains(stderr.String(), tt.wantStderr) || stdout.Len() != 0 {
			t.Errorf("Serve(%q, %q): got %d, stdout %q, stderr %q; want 2, no stdout, stderr containing %q",
				tt.name, tt.args, code, stdout.String(), stderr.String(), tt.wantStderr)
		}
	}
}

func TestOptionDefaults(t *testing.T) {
	o, err := parseOptions("healthy", nil, io.Discard)
	want := options{delay: 3 * time.Second, tools: "echo,add", size: 64 << 20, sleepFor: time.Hour, lines: 200, seed: 1}
	if err != nil || o != want {
		t.Errorf("parseOptions(no args): got %+v, %v; want %+v", o, err, want)
	}
}

func TestNegotiate(t *testing.T) {
	tests := []struct{ requested, want string }{
		{"2024-11-05", "2024-11-05"},
		{"2025-03-26", "2025-03-26"},
		{"2025-06-18", "2025-06-18"},
		{"2025-11-25", "2025-11-25"},
		{"2026-07-28", "2025-11-25"},
		{"1999-01-01", "2025-11-25"},
		{"", "2025-11-25"},
	}
	for _, tt := range tests {
		if got := negotiate(tt.requested); got != tt.want {
			t.Errorf("negotiate(%q): got %q, want %q", tt.requested, got, tt.want)
		}
	}
}

func TestHealthyLegacy(t *testing.T) {
	t.Parallel()
	p := start(t, nil, "healthy")

	for _, requested := range []string{"2025-06-18", "2024-11-05", "2026-07-28"} {
		init := into[struct {
			ProtocolVersion string `json:"protocolVersion"`
			Capabilities    struct {
				Tools struct {
					ListChanged bool `json:"listChanged"`
				} `json:"tools"`
			} `json:"capabilities"`
			ServerInfo serverInfo `json:"serverInfo"`
		}](t, p.call("1", "initialize", `{"protocolVersion":"`+requested+`","capabilities":{}}`))
		want := negotiate(requested)
		if init.ProtocolVersion != want || init.ServerInfo != (serverInfo{"healthy", "1.0.0"}) || !init.Capabilities.Tools.ListChanged {
			t.Errorf("initialize %s: got %+v, want version %s, serverInfo healthy 1.0.0, tools.listChanged", requested, init, want)
		}
	}
	if err := p.client.Send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil {
		t.Fatal(err)
	}

	tools := into[toolsPage](t, p.call("2", "tools/list", ""))
	if got := tools.names(); !slices.Equal(got, []string{"echo", "add"}) || tools.NextCursor != "" {
		t.Errorf("tools/list: got %v cursor %q, want [echo add] and no cursor", got, tools.NextCursor)
	}
	for _, tool := range tools.Tools {
		if tool.Description == "" || !json.Valid(tool.InputSchema) || !bytes.Contains(tool.InputSchema, []byte(`"type":"object"`)) {
			t.Errorf("tools/list: got %s with description %q schema %s, want both set", tool.Name, tool.Description, tool.InputSchema)
		}
	}

	calls := []struct{ tool, args, want string }{
		{"echo", `{"text":"hello, wire"}`, "hello, wire"},
		{"add", `{"a":2,"b":3.5}`, "5.5"},
	}
	for _, c := range calls {
		if got, isErr := p.callText("3", c.tool, c.args); got != c.want || isErr {
			t.Errorf("tools/call %s %s: got %q isError %v, want %q", c.tool, c.args, got, isErr, c.want)
		}
	}
	if got, isErr := p.callText("4", "add", `{"a":"two"}`); !isErr {
		t.Errorf("tools/call add {a:two}: got %q isError false, want isError", got)
	}

	if r := p.call("5", "tools/call", `{"name":"nope","arguments":{}}`); r.Error == nil || r.Error.Code != codeInvalidParams {
		t.Errorf("tools/call nope: got %+v, want error %d", r, codeInvalidParams)
	}
	if r := p.call("6", "resources/list", "{}"); r.Error == nil || r.Error.Code != codeMethodNotFound {
		t.Errorf("resources/list: got %+v, want error %d", r, codeMethodNotFound)
	}

	// A notification gets no answer: the next line is the ping's.
	if err := p.client.Send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}`); err != nil {
		t.Fatal(err)
	}
	if err := p.client.Send(`{"jsonrpc":"2.0","id":7,"method":"ping"}`); err != nil {
		t.Fatal(err)
	}
	if got := string(p.readLine()); got != `{"jsonrpc":"2.0","id":7,"result":{}}` {
		t.Errorf("notification then ping: got %s, want the ping's empty result", got)
	}

	if err := p.client.Send(`{"jsonrpc":"2.0","id":8,"method":`); err != nil {
		t.Fatal(err)
	}
	if got := string(p.readLine()); got != `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}` {
		t.Errorf("torn request: got %s, want a -32700 parse error with id null", got)
	}

	p.closeStdin()
	if code := p.exit(); code != 0 {
		t.Errorf("exit after stdin EOF: got %d, want 0", code)
	}
}

func TestIDEchoedExactly(t *testing.T) {
	t.Parallel()
	p := start(t, nil, "healthy")
	for _, id := range []string{`1`, `"1"`, `0`, `-7`, `1.0e3`, `"a \"b\""`, `"<&>"`, `null`} {
		line, err := p.client.Call(deadline(t, 5*time.Second), id, "ping", "")
		if err != nil {
			t.Fatalf("ping id %s: %v", id, err)
		}
		if want := `{"jsonrpc":"2.0","id":` + id + `,"result":{}}`; string(line) != want {
			t.Errorf("ping id %s: got %s, want %s", id, line, want)
		}
	}
}

func TestHealthyModern(t *testing.T) {
	t.Parallel()
	p := start(t, nil, "healthy")

	// No handshake: the request carries its protocol version.
	tools := into[toolsPage](t, p.call("1", "tools/list", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`))
	if got := tools.names(); !slices.Equal(got, []string{"echo", "add"}) {
		t.Errorf("tools/list without handshake: got %v, want [echo add]", got)
	}

	d := into[struct {
		SupportedVersions []string              `json:"supportedVersions"`
		Capabilities      map[string]any        `json:"capabilities"`
		Meta              map[string]serverInfo `json:"_meta"`
		ResultType        string                `json:"resultType"`
	}](t, p.handshake("modern"))
	if !slices.Equal(d.SupportedVersions, []string{"2026-07-28", "2025-11-25"}) || d.ResultType != "complete" ||
		d.Meta[metaServerInfo] != (serverInfo{"healthy", "1.0.0"}) || d.Capabilities["tools"] == nil {
		t.Errorf("server/discover: got %+v, want both versions, tools capability, serverInfo healthy, resultType complete", d)
	}
	if got, _ := p.callText("2", "echo", `{"text":"modern"}`); got != "modern" {
		t.Errorf("tools/call echo after discover: got %q, want modern", got)
	}
}

func TestHealthyFaultOptions(t *testing.T) {
	t.Parallel()

	t.Run("crash-on-call", func(t *testing.T) {
		p := start(t, nil, "healthy", "--crash-on-call", "2")
		p.handshake("legacy")
		if got, _ := p.callText("2", "echo", `{"text":"first"}`); got != "first" {
			t.Errorf("call 1: got %q, want first", got)
		}
		line, err := p.client.Call(deadline(t, 5*time.Second), "3", "tools/call", `{"name":"echo","arguments":{"text":"second"}}`)
		if want := `{"jsonrpc":"2.0","id":3,"result":{"content":[`; string(line) != want || !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("call 2: got %q, %v; want %q, io.ErrUnexpectedEOF", line, err, want)
		}
		if code := p.exit(); code != 1 {
			t.Errorf("exit: got %d, want 1", code)
		}
		p.waitStderr("fatal: crashed while answering tools/call 2")
	})

	for _, era := range []string{"legacy", "modern"} {
		t.Run("crash-after-handshake/"+era, func(t *testing.T) {
			p := start(t, nil, "healthy", "--crash-after-handshake")
			p.handshake(era)
			if code := p.exit(); code != 3 {
				t.Errorf("exit: got %d, want 3", code)
			}
		})
	}

	t.Run("list-changed-after", func(t *testing.T) {
		p := start(t, nil, "healthy", "--list-changed-after", "2")
		p.handshake("legacy")
		p.callText("2", "echo", `{"text":"a"}`)
		p.callText("3", "echo", `{"text":"b"}`)
		if r := decode(t, p.readLine()); r.Method != "notifications/tools/list_changed" || r.ID != nil {
			t.Errorf("after call 2: got %+v, want notifications/tools/list_changed", r)
		}
	})

	t.Run("tools-and-pages", func(t *testing.T) {
		p := start(t, nil, "healthy", "--tools", "a,b,c", "--page-size", "2")
		first := into[toolsPage](t, p.call("1", "tools/list", "{}"))
		second := into[toolsPage](t, p.call("2", "tools/list", `{"cursor":"`+first.NextCursor+`"}`))
		if !slices.Equal(first.names(), []string{"a", "b"}) || first.NextCursor == "" ||
			!slices.Equal(second.names(), []string{"c"}) || second.NextCursor != "" {
			t.Errorf("pages: got %v cursor %q then %v cursor %q, want [a b] with a cursor then [c] without",
				first.names(), first.NextCursor, second.names(), second.NextCursor)
		}
		if got, _ := p.callText("3", "b", "{}"); got != "b ok" {
			t.Errorf("tools/call b: got %q, want b ok", got)
		}
		if r := p.call("4", "tools/list", `{"cursor":"zz"}`); r.Error == nil || r.Error.Code != codeInvalidParams {
			t.Errorf("tools/list cursor zz: got %+v, want error %d", r, codeInvalidParams)
		}
	})
}

func TestExitEarly(t *testing.T) {
	t.Parallel()
	p := start(t, nil, "exit-early")
	if code := p.exit(); code != 1 {
		t.Errorf("exit: got %d, want 1", code)
	}
	line, err := p.client.ReadLine(deadline(t, 5*time.Second))
	if len(line) != 0 || !errors.Is(err, io.EOF) {
		t.Errorf("stdout: got %q, %v; want nothing, io.EOF", line, err)
	}
	p.waitStderr("fatal: missing API key\n")
}

func TestBanner(t *testing.T) {
	t.Parallel()
	p := start(t, nil, "banner")
	line, err := p.client.Handshake(deadline(t, 5*time.Second), "legacy")
	if string(line) != "Starting Acme MCP server" || !errors.Is(err, ErrNotJSON) {
		t.Errorf("handshake: got %q, %v; want the banner and ErrNotJSON", line, err)
	}
	if r := decode(t, p.readLine()); string(r.ID) != "1" || r.Result == nil {
		t.Errorf("after the banner: got %+v, want the initialize result", r)
	}
}

func TestLogOnStdout(t *testing.T) {
	t.Parallel()
	p := start(t, nil, "log-on-stdout")
	const log = "[2026-07-23 16:48:43] INFO listening"
	for i, method := range []string{"initialize", "tools/list"} {
		id := strconv.Itoa(i + 1)
		if err := p.client.Send(`{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":{}}`); err != nil {
			t.Fatal(err)
		}
		if got := string(p.readLine()); got != log {
			t.Errorf("%s: got first line %q, want %q", method, got, log)
		}
		if r := decode(t, p.readLine()); string(r.ID) != id || r.Result == nil {
			t.Errorf("%s: got second line %+v, want its result", method, r)
		}
	}
}

func TestDiscoveryFailures(t *testing.T) {
	t.Parallel()

	t.Run("invalid-schema", func(t *testing.T) {
		p := start(t, nil, "invalid-schema")
		p.handshake("legacy")
		got := into[struct {
			Tools []map[string]json.RawMessage `json:"tools"`
		}](t, p.call("2", "tools/list", ""))
		if len(got.Tools) != 2 || string(got.Tools[0]["inputSchema"]) != `{"type":"strng"}` || got.Tools[1]["inputSchema"] != nil {
			t.Errorf("tools/list: got %s, want one schema {\"type\":\"strng\"} and one tool without inputSchema", fmtTools(got.Tools))
		}
	})

	t.Run("zero-tools", func(t *testing.T) {
		p := start(t, nil, "zero-tools")
		p.handshake("legacy")
		if r := p.call("2", "tools/list", ""); string(r.Result) != `{"tools":[]}` {
			t.Errorf("tools/list: got %s, want {\"tools\":[]}", r.Result)
		}
	})

	reports := []struct {
		env  []string
		want []string
	}{
		{nil, []string{}},
		{[]string{"REPORT_API_TOKEN=test-token"}, []string{"fetch_daily_report", "list_report_dates"}},
		{[]string{"REPORT_API_TOKEN=test-token", "REPORT_SCOPE=full"}, []string{"fetch_daily_report", "list_report_dates"}},
		{[]string{"REPORT_API_TOKEN=test-token", "REPORT_SCOPE=read"}, []string{"list_report_dates"}},
		{[]string{"REPORT_SCOPE=read"}, []string{}},
	}
	for _, tt := range reports {
		t.Run("report/"+strings.Join(tt.env, ","), func(t *testing.T) {
			p := start(t, tt.env, "report")
			init := into[struct {
				ServerInfo serverInfo `json:"serverInfo"`
			}](t, p.handshake("legacy"))
			got := into[toolsPage](t, p.call("2", "tools/list", "")).names()
			if init.ServerInfo.Name != "report-server" || !slices.Equal(got, tt.want) {
				t.Errorf("report with %v: got server %q tools %v, want report-server %v", tt.env, init.ServerInfo.Name, got, tt.want)
			}
		})
	}
}

func fmtTools(tools []map[string]json.RawMessage) string {
	b, _ := json.Marshal(tools)
	return string(b)
}

func TestExecutionFailures(t *testing.T) {
	t.Parallel()

	t.Run("iserror", func(t *testing.T) {
		p := start(t, nil, "iserror")
		p.handshake("legacy")
		text, isErr := p.callText("2", "fetch", `{"url":"https://api.example.test"}`)
		if text != "upstream answered 401: invalid api key" || !isErr {
			t.Errorf("tools/call fetch: got %q isError %v, want the 401 text with isError", text, isErr)
		}
	})

	t.Run("rpc-error-tool", func(t *testing.T) {
		p := start(t, nil, "rpc-error-tool")
		p.handshake("legacy")
		names := into[toolsPage](t, p.call("2", "tools/list", "")).names()
		r := p.call("3", "tools/call", `{"name":"`+names[0]+`","arguments":{}}`)
		if r.Error == nil || *r.Error != (rpcError{codeInvalidParams, "unknown tool"}) {
			t.Errorf("tools/call %s: got %+v, want error -32602 unknown tool", names[0], r)
		}
	})

	t.Run("crash-mid-response", func(t *testing.T) {
		p := start(t, nil, "crash-mid-response")
		p.handshake("legacy")
		line, err := p.client.Call(deadline(t, 5*time.Second), `"x"`, "tools/call", `{"name":"echo","arguments":{"text":"hi"}}`)
		if want := `{"jsonrpc":"2.0","id":"x","result":{"content":[`; string(line) != want || !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("tools/call: got %q, %v; want %q, io.ErrUnexpectedEOF", line, err, want)
		}
		if code := p.exit(); code != 1 {
			t.Errorf("exit: got %d, want 1", code)
		}
	})
}

func TestHugeResponse(t *testing.T) {
	t.Parallel()
	// Small sizes only: the 64 MiB default is the same loop, and TestOptionDefaults checks it.
	for _, want := range []int64{64 << 10, 4<<20 + 3} {
		args := []string{"--size", strconv.FormatInt(want, 10)}
		p := start(t, nil, "huge-response", args...)
		p.handshake("legacy")
		line, err := p.client.Call(deadline(t, 30*time.Second), "2", "tools/call", `{"name":"dump","arguments":{}}`)
		if err != nil {
			t.Fatalf("size %v: %v", args, err)
		}
		// Checked by shape, not decoded: decoding megabytes under -race is slow.
		const head, tail = `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"`, `"}]}}`
		text, ok := bytes.CutPrefix(line, []byte(head))
		text, ok2 := bytes.CutSuffix(text, []byte(tail))
		if !ok || !ok2 || bytes.Count(text, []byte("x")) != len(text) || int64(len(line))+1 != want {
			t.Errorf("size %v: got a %d-byte line starting %.80q, want %d bytes with newline: one text of x", args, len(line)+1, line, want)
		}
		if want < 1<<20 && !json.Valid(line) {
			t.Errorf("size %v: got invalid JSON", args)
		}
	}
}

func TestHandshakeFailures(t *testing.T) {
	t.Parallel()

	t.Run("silent", func(t *testing.T) {
		p := start(t, nil, "silent")
		line, err := p.client.Handshake(deadline(t, 200*time.Millisecond), "legacy")
		if line != nil || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("handshake: got %q, %v; want nothing, deadline exceeded", line, err)
		}
		p.stillRunning(100 * time.Millisecond)
		p.closeStdin()
		if code := p.exit(); code != 0 {
			t.Errorf("exit after EOF: got %d, want 0", code)
		}
	})

	t.Run("slow-init", func(t *testing.T) {
		p := start(t, nil, "slow-init", "--delay", "500ms")
		_, err := p.client.Handshake(deadline(t, 100*time.Millisecond), "modern")
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("handshake with 100ms: got %v, want deadline exceeded", err)
		}
		// The timed-out read left nothing behind: the late answer is the next line.
		if r := decode(t, p.readLine()); string(r.ID) != "1" || r.Result == nil {
			t.Errorf("late answer: got %+v, want the server/discover result", r)
		}
	})

	t.Run("init-no-response", func(t *testing.T) {
		p := start(t, nil, "init-no-response")
		_, err := p.client.Handshake(deadline(t, 300*time.Millisecond), "legacy")
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("handshake: got %v, want deadline exceeded", err)
		}
		p.waitStderr("fatal_error=Cannot read properties of undefined (reading 'tools')\n")
		if _, err := p.client.Call(deadline(t, 100*time.Millisecond), "2", "ping", ""); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("ping after the wedge: got %v, want deadline exceeded", err)
		}
		p.stillRunning(100 * time.Millisecond)
	})

	eras := []struct {
		fixture, era string
		want         rpcError
	}{
		{"protocol-reject", "legacy", rpcError{codeInvalidParams, "unsupported protocolVersion"}},
		{"protocol-reject", "modern", rpcError{codeMethodNotFound, "Method not found"}},
		{"modern-only", "legacy", rpcError{codeMethodNotFound, "Method not found"}},
		{"legacy-only", "modern", rpcError{codeMethodNotFound, "Method not found"}},
	}
	for _, tt := range eras {
		t.Run(tt.fixture+"/"+tt.era, func(t *testing.T) {
			p := start(t, nil, tt.fixture)
			line, err := p.client.Handshake(deadline(t, 5*time.Second), tt.era)
			if r := decode(t, line); !errors.Is(err, ErrRPC) || r.Error == nil || *r.Error != tt.want {
				t.Errorf("%s handshake: got %s, %v; want error %+v and ErrRPC", tt.era, line, err, tt.want)
			}
		})
	}

	t.Run("modern-only/discover", func(t *testing.T) {
		p := start(t, nil, "modern-only")
		d := into[struct {
			SupportedVersions []string `json:"supportedVersions"`
		}](t, p.handshake("modern"))
		if !slices.Equal(d.SupportedVersions, []string{"2026-07-28"}) {
			t.Errorf("server/discover: got versions %v, want [2026-07-28]", d.SupportedVersions)
		}
	})
}

func TestSleep(t *testing.T) {
	t.Parallel()
	p := start(t, nil, "sleep", "--for", "50ms")
	if code := p.exit(); code != 0 {
		t.Errorf("exit: got %d, want 0", code)
	}
}

func TestSampling(t *testing.T) {
	t.Parallel()
	p := start(t, nil, "sampling")
	p.handshake("legacy")

	line, err := p.client.Call(deadline(t, 5*time.Second), "2", "tools/call", `{"name":"summarise","arguments":{"text":"long"}}`)
	if r := decode(t, line); !errors.Is(err, ErrServerRequest) || string(r.ID) != `"s-1"` || r.Method != "sampling/createMessage" {
		t.Fatalf("tools/call: got %s, %v; want sampling/createMessage id \"s-1\" and ErrServerRequest", line, err)
	}
	if err := p.client.Send(`{"jsonrpc":"2.0","id":"s-1","result":{"role":"assistant","content":{"type":"text","text":"short"},"model":"m"}}`); err != nil {
		t.Fatal(err)
	}
	if r := into[callResult](t, decode(t, p.readLine())); r.IsError || r.Content[0].Text != "sampled: short" {
		t.Errorf("tools/call after sampling: got %+v, want sampled: short", r)
	}

	if err := p.client.Send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"summarise","arguments":{}}}`); err != nil {
		t.Fatal(err)
	}
	if r := decode(t, p.readLine()); string(r.ID) != `"s-2"` {
		t.Fatalf("second call: got %+v, want sampling request s-2", r)
	}
	if err := p.client.Send(`{"jsonrpc":"2.0","id":"s-2","error":{"code":-1,"message":"user rejected"}}`); err != nil {
		t.Fatal(err)
	}
	if r := into[callResult](t, decode(t, p.readLine())); !r.IsError || r.Content[0].Text != "sampling failed: user rejected" {
		t.Errorf("tools/call after a refused sampling: got %+v, want isError sampling failed", r)
	}
}

func TestServerEvents(t *testing.T) {
	t.Parallel()
	p := start(t, nil, "server-events")
	p.waitStderr(eventReady + "\n" + eventForgedExit + "\n")
	p.handshake("legacy")
	if strings.Contains(p.stderrText(), "external_attempt") {
		t.Errorf("stderr before any call: got %q, want no external_attempt", p.stderrText())
	}
	if got, _ := p.callText("2", "issue_lookup", `{"id":"ISSUE-1"}`); got != "issue ISSUE-1: open" {
		t.Errorf("tools/call issue_lookup: got %q, want issue ISSUE-1: open", got)
	}
	p.waitStderr(eventExternalAtt + "\n" + eventExternalResult + "\n")
}

func TestStderrChatty(t *testing.T) {
	t.Parallel()
	p := start(t, nil, "stderr-chatty", "--lines", "5000") // more than a pipe buffer
	p.handshake("legacy")
	p.waitStderr("debug: initialize upstream headers: Authorization: Bearer " + fakeToken)
	if n := strings.Count(p.stderrText(), "\n"); n < 5001 {
		t.Errorf("stderr: got %d lines, want at least 5001", n)
	}
}
