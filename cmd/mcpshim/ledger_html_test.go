package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReportHTML(t *testing.T) {
	dir := writeFleet(t)
	out := filepath.Join(t.TempDir(), "report.html")
	stdout, errs, code := runLedgerCmd(t, "report", "--html", out, dir)
	if code != 0 {
		t.Fatalf("report: exit %d, stderr %s", code, errs)
	}
	if !strings.Contains(stdout, "9 runs in 8 chains (6 failed)") {
		t.Errorf("report: got %q, want 9 runs in 8 chains, 6 failed", stdout)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	for _, banned := range []string{"http://", "https://", " src=", "<link", "@import", "url("} {
		if strings.Contains(page, banned) {
			t.Errorf("report is not self-contained: it has %q", banned)
		}
	}
	for _, want := range []string{
		`<section class="chain failed" data-server="crashy">`, // the crash and its restart, one card
		`<path class="link"`,                    // the restart joined
		`class="mark marker-failed"`,            // a failure marked
		`class="mark noise"`,                    // noise marked
		`<rect class="bar failed"`,              // the call the crash failed
		`<rect class="bar warn"`,                // the isError call
		`<rect class="bar timeout"`,             // the handshake that timed out
		`>call echo #2</text>`,                  // each call its own row
		`>01KB3F0005 · gen 2 · ENDED<`,          // the restarted run in the same card
		`01KB3F0001 EXITED: ` + fatalLine,       // why a failed run stopped
		`not_found: exec: &#34;db-mcp&#34;: ex`, // escaped
	} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	var doc struct {
		File string `json:"file"`
		Runs int    `json:"runs"`
	}
	ledgerJSON(t, &doc, "report", "--html", out, "--limit", "1", dir)
	if doc.File != out || doc.Runs != 1 {
		t.Errorf("report --limit 1 --json: got %+v, want the file and 1 run", doc)
	}
	if _, _, code := runLedgerCmd(t, "report", dir); code != exitUsage {
		t.Errorf("report without --html: got exit %d, want %d", code, exitUsage)
	}
}
