//go:build !windows

package main

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// chromium finds a headless browser, or skips saying what to install
// (fails under CI=true).
func chromium(t *testing.T) string {
	t.Helper()
	return needTool(t, "chromium", "chromium", "chromium-browser", "google-chrome")
}

// TestReportInChromium renders the report of real shims' ledgers in headless
// Chromium, checks what rendered, and saves a screenshot
// ($LEDGER_REPORT_PNG, e.g. docs/ledger-report.png, or a temp file).
func TestReportInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real shims and a browser")
	}
	browser := chromium(t)
	dir := t.TempDir()
	if out, err := exec.Command(demoBin(t), "demo", "--dir", dir).CombinedOutput(); err != nil {
		t.Fatalf("mcpshim demo: %v\n%s", err, out)
	}
	page := filepath.Join(t.TempDir(), "report.html")
	if _, errs, code := runLedgerCmd(t, "report", "--html", page, "--failed", dir); code != 0 {
		t.Fatalf("report: exit %d, stderr %s", code, errs)
	}
	headless := func(args ...string) []byte {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, browser, append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
			"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
			"--user-data-dir=" + t.TempDir()}, append(args, "file://"+page)...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s %v: %v\n%s", browser, args, err, stderr.String())
		}
		return out
	}

	dom := string(headless("--dump-dom"))
	if !strings.Contains(dom, `data-ready="yes"`) {
		t.Fatalf("the report's script did not run; DOM:\n%.2000s", dom)
	}
	bars := regexp.MustCompile(`data-bars="(\d+)"`).FindStringSubmatch(dom)
	if n, _ := strconv.Atoi(bars[1]); n < 10 {
		t.Errorf("rendered %s bars, want at least 10", bars[1])
	}
	for _, want := range []string{`class="chain failed" data-server="exit-early"`, `class="mark marker-failed"`,
		`class="link"`, "chains shown, 7 with a failure"} { // the banner the client skipped is a warning, not a failure
		if !strings.Contains(dom, want) {
			t.Errorf("rendered DOM lacks %q", want)
		}
	}

	// At 700 px the page does not overflow: each waterfall scrolls in its card.
	narrow := string(headless("--dump-dom", "--window-size=700,900"))
	if !strings.Contains(narrow, `data-page-overflow="no"`) || !strings.Contains(narrow, `<div class="wf">`) {
		t.Errorf("at 700 px the page overflows its window (want data-page-overflow=no):\n%.600s", narrow)
	}
	if !strings.Contains(dom, `data-page-overflow=`) {
		t.Errorf("the overflow detector did not run")
	}

	shot := os.Getenv("LEDGER_REPORT_PNG")
	if shot == "" {
		shot = filepath.Join(t.TempDir(), "report.png")
	}
	if abs, err := filepath.Abs(shot); err == nil {
		shot = abs
	}
	headless("--screenshot="+shot, "--window-size=1200,900", "--hide-scrollbars")
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot %s: %v", shot, err)
	}
	if b := img.Bounds(); b.Dx() != 1200 || b.Dy() != 900 {
		t.Errorf("screenshot is %v, want 1200x900", b)
	}
	// The failures are visible: the report's red (#c62828) is on screen.
	red := 0
	for y := 0; y < img.Bounds().Dy(); y += 2 {
		for x := 0; x < img.Bounds().Dx(); x += 2 {
			r, g, b, _ := img.At(x, y).RGBA()
			if r>>8 > 170 && g>>8 < 80 && b>>8 < 80 {
				red++
			}
		}
	}
	if red < 50 {
		t.Errorf("screenshot %s shows %d red pixels, want failures marked in red", shot, red)
	}
	t.Logf("screenshot: %s", shot)
}
