package clientconfig

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

const remoteConfig = `{
  "mcpServers": {
    "linear": {
      "type": "http",
      "url": "https://mcp.linear.example/mcp",
      "headers": {
        "Authorization": "Bearer ${LINEAR_TOKEN}",
        "X-Team": "${TEAM:-core}"
      }
    },
    "fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]},
    "old": {"type": "sse", "url": "https://old.example/sse"},
    "cursorish": {"url": "http://127.0.0.1:8080/mcp"}
  }
}
`

func TestWrapRemoteRoundTrip(t *testing.T) {
	data := []byte(remoteConfig)
	wrapped, entries, err := Wrap(".mcp.json", data, "/usr/local/bin/mcpshim", []string{"--ledger", "/var/l"}, Scope{})
	if err != nil {
		t.Fatal(err)
	}
	wrapped, remote, err := WrapRemote(".mcp.json", wrapped, "/usr/local/bin/mcpshim", []string{"--ledger", "/var/l"}, Scope{})
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 4 {
		t.Fatalf("Wrap saw %d entries, want 4", len(entries))
	}
	results := map[string]Result{}
	for _, e := range remote {
		results[e.Server] = e.Result
	}
	want := map[string]Result{"linear": Rewritten, "old": Rewritten, "cursorish": Rewritten}
	if len(results) != len(want) {
		t.Fatalf("WrapRemote results %v, want %v", results, want)
	}
	for k, v := range want {
		if results[k] != v {
			t.Errorf("WrapRemote %s: %v, want %v", k, results[k], v)
		}
	}
	var doc struct {
		MCPServers map[string]struct {
			Type    string   `json:"type"`
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal(wrapped, &doc); err != nil {
		t.Fatalf("the wrapped file is not JSON: %v\n%s", err, wrapped)
	}
	lin := doc.MCPServers["linear"]
	wantArgs := []string{"--name", "linear", "--ledger", "/var/l", "--url", "https://mcp.linear.example/mcp",
		"--header", "Authorization: Bearer ${LINEAR_TOKEN}", "--header", "X-Team: ${TEAM:-core}", RemoteEntryFlag}
	if lin.Type != "stdio" || lin.Command != "/usr/local/bin/mcpshim" || len(lin.Args) != len(wantArgs)+1 || !slices.Equal(lin.Args[:len(wantArgs)], wantArgs) {
		t.Fatalf("the wrapped linear entry = %+v\nwant args %q and the original entry\n%s", lin, wantArgs, wrapped)
	}

	// The old transport's entry says so: the shim speaks it from the start.
	if old := doc.MCPServers["old"].Args; !slices.Equal(old[:8], []string{"--name", "old", "--ledger", "/var/l", "--transport", "sse", "--url", "https://old.example/sse"}) {
		t.Errorf("the wrapped sse entry's args = %q, want --transport sse before --url", old)
	}

	back, _, err := Unwrap(".mcp.json", wrapped, Scope{})
	if err != nil {
		t.Fatal(err)
	}
	back, restored, err := UnwrapRemote(".mcp.json", back, Scope{})
	if err != nil {
		t.Fatal(err)
	}
	if string(back) != remoteConfig {
		t.Fatalf("unwrap did not restore the file byte for byte:\n%s", Diff(".mcp.json", []byte(remoteConfig), back))
	}
	if len(restored) != 3 {
		t.Errorf("UnwrapRemote restored %d entries, want 3", len(restored))
	}
}

func TestUnwrapRemoteRefusesAForgedEntry(t *testing.T) {
	in := `{"mcpServers": {"x": {"command": "/bin/mcpshim", "args": ["--url", "http://a/mcp", "--remote-entry", "not json"]}}}`
	out, entries, err := UnwrapRemote(".mcp.json", []byte(in), Scope{})
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != in || len(entries) != 1 || entries[0].Result != SkippedBroken {
		t.Fatalf("UnwrapRemote of a forged entry = %v, wrote %s; want it skipped, nothing changed", entries, out)
	}
}

// TestOneLine: a remote entry's bytes ride in one argument on one line and
// come back byte for byte, comments, backslashes and CRLF included.
func TestOneLine(t *testing.T) {
	for _, in := range []string{
		"{\n      \"type\": \"http\",\n      \"url\": \"https://x/mcp\"\n    }",
		"{\r\n\t\"url\": \"https://x/\\n\\\\\" // a C:\\new \"path\r\n}",
		"{ /* multi\n line * / \\n */ \"url\": \"u\\\"//\" }",
		`{"url":"https://x"}`,
		"{\"a\": \"\\\\\", \"b\": \"\\\"\" // \\\\n\n}",
	} {
		line := oneLine([]byte(in))
		if strings.ContainsAny(line, "\r\n") {
			t.Errorf("oneLine(%q) = %q: not one line", in, line)
		}
		if back := fromOneLine(line); string(back) != in {
			t.Errorf("fromOneLine(oneLine(%q)) = %q (via %q)", in, back, line)
		}
	}
}

func FuzzOneLine(f *testing.F) {
	f.Add("{\n \"a\": \"b\\n\" // c\\d\n}")
	f.Add("/* \\ */ \"\\\"\"\r\n")
	f.Fuzz(func(t *testing.T, in string) {
		if back := fromOneLine(oneLine([]byte(in))); string(back) != in {
			t.Errorf("fromOneLine(oneLine(%q)) = %q", in, back)
		}
	})
}

// TestRemoteName: a remote server is named after its host, past the
// generic labels.
func TestRemoteName(t *testing.T) {
	for raw, want := range map[string]string{
		"https://mcp.linear.app/mcp":      "linear",
		"https://api.example.com/v1/mcp":  "example",
		"http://127.0.0.1:8080/mcp":       "127",
		"https://www.mcp.api.example/mcp": "example",
		"not a url":                       "remote",
	} {
		if got := RemoteName(raw); got != want {
			t.Errorf("RemoteName(%q) = %q, want %q", raw, got, want)
		}
	}
}
