package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// nobody is the uid the tests give files and directories "of another user".
const nobody = 65534

// asAnotherUser chowns path to nobody, which only root may do.
func asAnotherUser(t *testing.T, path string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("giving a file to another user needs root; run the tests as root (CI does) to cover it")
	}
	if err := os.Lchown(path, nobody, nobody); err != nil {
		t.Fatal(err)
	}
}

// lines returns the lines of s that contain sub.
func lines(s, sub string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return out
}

// TestLedgerNeverThroughALink: a NAME.jsonl symlink planted in the ledger
// directory (here to a shell rc file) is refused with one stderr line, its
// target is left as it was, and the session is relayed all the same.
func TestLedgerNeverThroughALink(t *testing.T) {
	dir := t.TempDir()
	rc := filepath.Join(dir, "bashrc")
	os.WriteFile(rc, []byte("alias ll='ls -l'\n"), 0o600)
	if err := os.Symlink(rc, filepath.Join(dir, "test.jsonl")); err != nil {
		t.Fatal(err)
	}
	s := start(t, true, []string{"--ledger", dir}, "fixture", "healthy")
	legacySession(s)
	if status := s.finish(); status != 0 {
		t.Fatalf("shim exit status %d, want 0; stderr:\n%s", status, s.stderr)
	}
	if b, _ := os.ReadFile(rc); string(b) != "alias ll='ls -l'\n" {
		t.Errorf("the link's target was written to: %q", b)
	}
	if got := lines(s.stderr.String(), "symbolic link"); len(got) != 1 || !strings.Contains(got[0], "carries on without it") {
		t.Errorf("stderr lines about the link: %q; want one saying the session carries on without the ledger\n%s", got, s.stderr)
	}
}

// TestProbeCacheAndLockNeverThroughALink: the probe's cache and a lock file
// with a symlink planted at their path are refused, the link's target left
// alone; the probe itself still runs.
func TestProbeCacheAndLockNeverThroughALink(t *testing.T) {
	dir := t.TempDir()
	cfg := writeMCPConfig(t, dir, map[string]any{"fs": fixtureEntry(t, "healthy")})
	target := filepath.Join(dir, "profile")
	os.WriteFile(target, []byte("export PATH\n"), 0o600)
	cache := filepath.Join(dir, "cache")
	os.Mkdir(filepath.Join(cache), 0o700)
	os.Mkdir(filepath.Join(cache, "mcpshim"), 0o700)
	os.Symlink(target, filepath.Join(cache, "mcpshim", "probe.json"))
	lock := filepath.Join(dir, "mcp-tools.lock.json")
	os.Symlink(target, lock)

	code, _, stderr := runBinary(t, probeEnv(cache), "", "probe", "--config", cfg)
	if code != 0 || len(lines(stderr, "cache not used")) != 1 || len(lines(stderr, "symbolic link")) != 1 {
		t.Errorf("probe with a planted cache link: exit %d, stderr:\n%s\nwant 0 and one line saying the cache is not used", code, stderr)
	}
	code, _, stderr = runBinary(t, probeEnv(cache), "", "lock", "--config", cfg, "--out", lock)
	if code == 0 || !strings.Contains(stderr, "symbolic link") {
		t.Errorf("lock --out a planted link: exit %d, stderr:\n%s\nwant a failure naming the link", code, stderr)
	}
	if b, _ := os.ReadFile(target); string(b) != "export PATH\n" {
		t.Errorf("the links' target was written to: %q", b)
	}
}

// TestFullCaptureOfLongLinesIsRead: with --capture full and --max-observe
// past the reader's 16 MiB line limit, the record of a 20 MB answer is cut
// to fit, so the reader counts the call instead of skipping its record as
// torn: what the writer writes, the reader reads.
func TestFullCaptureOfLongLinesIsRead(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "big.jsonl")
	client := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":` + initParams + "}\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"dump","arguments":{}}}` + "\n"
	// A generous --kill-grace: the client closes its stdin at once, and the
	// answer is still being relayed and recorded whole on a loaded machine.
	code, out, stderr := runBinary(t, nil, client, "--quiet", "--capture", "full", "--max-observe", "33554432", "--kill-grace", "2m",
		"--ledger", path, "--", fixtureBin(t), "fixture", "huge-response", "--size", "20000000")
	if code != 0 || len(out) < 20000000 {
		t.Fatalf("shim: exit %d, %d bytes to the client; stderr:\n%s", code, len(out), stderr)
	}
	var doc struct {
		Skipped int `json:"skipped_lines"`
		Runs    []struct {
			Calls struct{ OK int } `json:"calls"`
		} `json:"runs"`
	}
	ledgerJSON(t, &doc, path)
	if doc.Skipped != 0 || len(doc.Runs) != 1 || doc.Runs[0].Calls.OK != 1 {
		t.Errorf("ledger --json: %d lines skipped, runs %+v; want none skipped and one run with 1 ok call", doc.Skipped, doc.Runs)
	}
	responded := find(readLedger(t, path), "tool_call_responded")
	if responded == nil || !strings.HasSuffix(responded.Str("body"), "…") {
		t.Errorf("tool_call_responded: %v; want its body cut and ending with …", responded != nil)
	}
}
