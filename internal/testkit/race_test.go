//go:build race

package testkit

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

// TestRaceReportTaken: a race-built process started with the tests'
// GORACE halts with status 66 and its report is taken, once; the detector
// can fail.
func TestRaceReportTaken(t *testing.T) {
	builds.mu.Lock()
	err := raceSetUp()
	builds.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	bin := MustBuild(t, "./testdata/racy", "-race")
	err = exec.Command(bin).Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 66 {
		t.Fatalf("racy: got %v, want exit status 66 (GORACE=%q)", err, os.Getenv("GORACE"))
	}
	reports := takeRaces()
	if len(reports) != 1 || !strings.Contains(reports[0], "WARNING: DATA RACE") {
		t.Fatalf("got reports %q, want one data race", reports)
	}
	if again := takeRaces(); len(again) != 0 {
		t.Fatalf("got %d reports taken twice, want 0", len(again))
	}
}
