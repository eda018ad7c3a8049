package main

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
)

// TestServerEventsFolded: logfmt phase events on the server's stderr land
// in the ledger with origin server; a forged exited does not.
func TestServerEventsFolded(t *testing.T) {
	s := start(t, true, nil, "fixture", "server-events")
	s.call("1", "initialize", initParams)
	s.call("2", "tools/call", `{"name":"issue_lookup","arguments":{"id":"A-1"}}`)
	s.finish()
	es := s.entries()
	var server []string
	exited := 0
	for _, e := range es {
		if e.Origin == "server" {
			server = append(server, e.Event)
		}
		if e.Event == "exited" {
			exited++
			if e.Origin != "" {
				t.Errorf("exited has origin %q, want the shim's", e.Origin)
			}
		}
	}
	if exited != 1 {
		t.Errorf("%d exited records, want 1", exited)
	}
	want := map[string]bool{"executable_ready": false, "forged_event": false}
	for _, ev := range server {
		if _, ok := want[ev]; ok {
			want[ev] = true
		}
	}
	for ev, seen := range want {
		if !seen {
			t.Errorf("no server-reported %s; server events %v", ev, server)
		}
	}
}

// TestEgressWitness: a Python server (honouring the proxy variables) connects
// out during startup and inside a tool call. The ledger flags the first as
// before_handshake, attributes the second to the call, records a refused
// port as refused and a denied host as denied. Only loopback is used.
func TestEgressWitness(t *testing.T) {
	needTool(t, "python3", "python3")
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }))
	defer origin.Close()
	script, _ := filepath.Abs("../../witness/testdata/egress_server.py")
	s := start(t, true, []string{"--egress-witness", "--egress-deny", "tracker.example.test"},
		"python3", script, "--startup", origin.URL+"/whoami",
		"--call", origin.URL+"/issue", "--call", "http://127.0.0.1:1/closed", "--call", "http://tracker.example.test/x")
	s.call("1", "initialize", initParams)
	s.client.Send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	s.call("2", "tools/list", `{}`)
	s.call(`"call-7"`, "tools/call", `{"name":"fetch_all","arguments":{}}`)
	s.finish()
	es := s.entries()
	var attempts, results []map[string]any
	for _, e := range es {
		if e.Origin != "witness" {
			continue
		}
		m := map[string]any{"event": e.Event}
		for k, v := range e.Fields {
			m[k] = v
		}
		if e.Event == "external_attempt" {
			attempts = append(attempts, m)
		} else {
			results = append(results, m)
		}
	}
	if len(attempts) != 4 {
		t.Fatalf("got %d attempts %v, want 4", len(attempts), attempts)
	}
	// The client's initialize may already be with the server while it starts up:
	// the attempt is before the handshake completed, in launch or handshake.
	if p := attempts[0]["run_phase"]; attempts[0]["before_handshake"] != true || (p != "launch" && p != "handshake") {
		t.Errorf("startup attempt = %v, want before_handshake in launch or handshake", attempts[0])
	}
	for _, a := range attempts[1:] {
		if a["request_id"] != `"call-7"` || a["tool"] != "fetch_all" || a["before_handshake"] != false {
			t.Errorf("tool call attempt = %v, want attributed to request \"call-7\" fetch_all", a)
		}
	}
	statuses := map[string]int{}
	for _, r := range results {
		statuses[r["status"].(string)]++
	}
	if statuses["connected"] != 2 || statuses["refused"] != 1 || statuses["denied"] != 1 {
		t.Errorf("result statuses %v, want 2 connected, 1 refused, 1 denied", statuses)
	}
	if sr := find(es, "spawn_requested"); sr.Str("egress") != "witnessed" {
		t.Errorf("spawn_requested.egress = %q, want witnessed", sr.Str("egress"))
	}
}
