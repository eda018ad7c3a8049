package main

import (
	"os"
	"strings"
	"testing"
)

// TestEnvSecretsByWholeWord: a credential variable's value is hidden, but a
// variable whose name merely contains a secret word's letters (PATH holds
// PAT) is not: the ledger keeps the PATH the server was started with.
func TestEnvSecretsByWholeWord(t *testing.T) {
	t.Setenv("GITHUB_PAT", "pat-value-0123456789")
	s := start(t, true, nil, "fixture", "healthy")
	s.call("1", "initialize", initParams)
	s.finish()
	data, err := os.ReadFile(s.ledger)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "pat-value-0123456789") {
		t.Errorf("GITHUB_PAT's value reached the ledger")
	}
	e := find(s.entries(), "spawn_requested")
	if e == nil {
		t.Fatal("no spawn_requested")
	}
	if got, want := e.Str("path"), os.Getenv("PATH"); got != want {
		t.Errorf("spawn_requested path = %q, want %q (PATH is not a credential)", got, want)
	}
}
