//go:build !windows

package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"io/fs"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestPlantedSecretsNeverReachDisk plants secrets in a server's argv, stderr,
// stdout noise, bodies, tool list and error messages, and in a client's
// request, with --capture full and --otlp on, then probes the same server:
// no secret is in the ledger, the OTLP payloads, the probe cache or the
// probe's ledger. Each round shuffles the shapes and draws new values.
func TestPlantedSecretsNeverReachDisk(t *testing.T) {
	script, err := filepath.Abs("testdata/hostile/server.sh")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var payloads bytes.Buffer
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body io.Reader = r.Body
		if r.Header.Get("Content-Encoding") == "gzip" {
			if body, err = gzip.NewReader(r.Body); err != nil {
				t.Errorf("otlp: %v", err)
				return
			}
		}
		mu.Lock()
		io.Copy(&payloads, body)
		mu.Unlock()
	}))
	defer collector.Close()

	for round := range 3 {
		seed := rand.Uint64()
		rng := rand.New(rand.NewPCG(seed, uint64(round)))
		text, args, cores := plantedSecrets(rng)
		dir := t.TempDir()
		env := []string{"HOSTILE_RAW=" + text, "HOSTILE_JSON=" + jsonEscaped(text), "HOSTILE_TOOL=lookup", "XDG_CACHE_HOME=" + filepath.Join(dir, "cache"),
			"XDG_STATE_HOME=" + filepath.Join(dir, "state"), "HOME=" + dir, "OTEL_EXPORTER_OTLP_COMPRESSION=none"}
		client := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/list"}
{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"t","arguments":{"q":"` + jsonEscaped(text) + `"}}}
{"jsonrpc":"2.0","id":4,"method":"ping"}
`
		shimArgs := append([]string{"--name", "leaky", "--capture", "full", "--otlp", collector.URL, "--", script}, args...)
		if _, _, stderr := runBinary(t, env, client, shimArgs...); !strings.Contains(stderr, "tool_call_responded") {
			t.Fatalf("round %d: the session did not reach a tool call; stderr:\n%s", round, stderr)
		}
		quoted := make([]string, len(args))
		for i, a := range args {
			quoted[i] = `"` + jsonEscaped(a) + `"`
		}
		config := filepath.Join(dir, ".mcp.json")
		cfg := `{"mcpServers":{"leaky":{"command":"` + script + `","args":[` + strings.Join(quoted, ",") + `]}}}`
		if err := os.WriteFile(config, []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		runBinary(t, env, "", "probe", "--config", config)

		sinks := map[string][]byte{}
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && p != config {
				sinks[p], _ = os.ReadFile(p)
			}
			return nil
		})
		if len(sinks) < 2 {
			t.Fatalf("round %d: want a ledger and a probe cache, found %d files", round, len(sinks))
		}
		mu.Lock()
		sinks["the OTLP payloads"] = append([]byte(nil), payloads.Bytes()...)
		mu.Unlock()
		if len(sinks["the OTLP payloads"]) == 0 {
			t.Fatalf("round %d: the collector got nothing", round)
		}
		for name, data := range sinks {
			for _, c := range cores {
				if i := bytes.Index(data, []byte(c)); i >= 0 {
					t.Errorf("round %d (seed %d): %s holds the planted secret %q: …%s…", round, seed, name, c, data[max(0, i-60):min(len(data), i+len(c)+20)])
				}
			}
		}
	}
}

// TestEnvSecretValuesHidden: the value of a credential variable the server
// was given is hidden wherever the server echoes it, in whatever shape.
func TestEnvSecretValuesHidden(t *testing.T) {
	script, err := filepath.Abs("testdata/hostile/server.sh")
	if err != nil {
		t.Fatal(err)
	}
	const value = "plainlowercasewords" // no rule knows this shape
	ledger := filepath.Join(t.TempDir(), "l.jsonl")
	env := []string{"MY_SERVICE_TOKEN=" + value, "HOSTILE_RAW=using " + value, "HOSTILE_JSON=using " + value}
	client := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}
{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"t","arguments":{}}}
`
	runBinary(t, env, client, "--ledger", ledger, "--capture", "full", "--", script)
	data, err := os.ReadFile(ledger)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte("using [REDACTED]")) || bytes.Contains(data, []byte(value)) {
		t.Errorf("the ledger keeps MY_SERVICE_TOKEN's value %q (or never saw it):\n%s", value, data)
	}
}
