package probe

import (
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func tool(t *testing.T, raw string) Tool {
	t.Helper()
	tl, err := NewTool(json.RawMessage(raw))
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

func reportTools(t *testing.T) []Tool {
	return []Tool{
		tool(t, `{"name":"fetch_daily_report","description":"Fetch the daily sales report","inputSchema":{"type":"object","properties":{"date":{"type":"string"}},"required":["date"]}}`),
		tool(t, `{"name":"list_report_dates","description":"List available report dates","inputSchema":{"type":"object","properties":{}}}`),
	}
}

func TestNewLockRefusesFailedObservations(t *testing.T) {
	results := []Result{
		{Server: "report", Outcome: Ready, Tools: reportTools(t)},
		{Server: "stalled", Outcome: Timeout, Detail: "no response to initialize within 2s"},
		{Server: "ghost", Outcome: Exited, Detail: "fork/exec ./no-such-binary: no such file or directory"},
		{Server: "empty", Outcome: Ready, Tools: []Tool{}},
		{Server: "allowed-empty", Outcome: Ready, Tools: []Tool{}},
		{Server: "canary", Outcome: Ready, Tools: reportTools(t), Canaries: []CanaryResult{{Tool: "x", Failure: CanaryIsError}}},
	}
	l, refused := NewLock(results, []string{"allowed-empty"})
	var names []string
	for _, r := range refused {
		names = append(names, r.Server)
	}
	if want := []string{"stalled", "ghost", "empty", "canary"}; !slices.Equal(names, want) {
		t.Fatalf("NewLock refusals: got %v (%v), want %v", names, refused, want)
	}
	if !strings.Contains(refused[0].Reason, "TIMEOUT: no response") || !strings.Contains(refused[2].Reason, "--allow-empty empty") {
		t.Errorf("NewLock reasons: got %q, want the outcome and detail, and the --allow-empty hint", refused)
	}
	if got := slices.Sorted(maps.Keys(l.Servers)); !slices.Equal(got, []string{"allowed-empty", "report"}) {
		t.Errorf("NewLock servers: got %v, want allowed-empty and report", got)
	}
}

func TestLockRoundTrip(t *testing.T) {
	l, refused := NewLock([]Result{{Server: "report", Outcome: Ready, Tools: reportTools(t)}}, nil)
	if len(refused) != 0 {
		t.Fatal(refused)
	}
	path := filepath.Join(t.TempDir(), "mcp-tools.lock.json")
	if err := l.Write(path); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	// Readable and sorted, meant for review.
	if !strings.Contains(string(data), "\n      \"fetch_daily_report\": {\n        \"digest\": \"sha256/v1:") ||
		strings.Index(string(data), "fetch_daily_report") > strings.Index(string(data), "list_report_dates") {
		t.Errorf("lock file: got\n%s\nwant indented, tools sorted", data)
	}
	back, err := ReadLock(path)
	if err != nil || !reflect.DeepEqual(back, l) {
		t.Fatalf("ReadLock after Write: got %+v, %v; want %+v", back, err, l)
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Errorf("after Write: got %d files in the directory, want only the lock", len(entries))
	}
}

// An unreadable or malformed lock fails closed.
func TestReadLockFailsClosed(t *testing.T) {
	cases := map[string]string{
		"not json":        `{"version":1,`,
		"wrong version":   `{"version":2,"servers":{}}`,
		"no servers":      `{"version":1}`,
		"unknown member":  `{"version":1,"servers":{},"extra":true}`,
		"plain name list": `{"version":1,"servers":{"report":["fetch_daily_report"]}}`,
		"bad digest":      `{"version":1,"servers":{"report":{"x":{"digest":"md5:1","shape":"sha256/v1:2"}}}}`,
		"trailing data":   `{"version":1,"servers":{}} {}`,
	}
	dir := t.TempDir()
	for name, content := range cases {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
		os.WriteFile(path, []byte(content), 0o644)
		if _, err := ReadLock(path); !errors.Is(err, ErrLockMalformed) {
			t.Errorf("ReadLock(%s) of %s: got %v, want ErrLockMalformed", name, content, err)
		}
	}
	if _, err := ReadLock(filepath.Join(dir, "absent.json")); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadLock(absent): got %v, want a not-exist error", err)
	}
}

func TestCheck(t *testing.T) {
	l, _ := NewLock([]Result{{Server: "report", Outcome: Ready, Tools: reportTools(t)}}, nil)
	full := reportTools(t)
	renamed := tool(t, `{"name":"get_daily_report","description":"Fetch the daily sales report","inputSchema":{"type":"object","properties":{"date":{"type":"string"}},"required":["date"]}}`)
	changed := tool(t, `{"name":"list_report_dates","description":"List report dates","inputSchema":{"type":"object","properties":{}}}`)
	extra := tool(t, `{"name":"export","description":"Export","inputSchema":{"type":"object"}}`)
	cases := []struct {
		name             string
		tools            []Tool
		want             Drift
		failed, failedSt bool
	}{
		{"all present", full, Drift{Server: "report", Locked: 2}, false, false},
		{"token missing: 2/2", nil, Drift{Server: "report", Locked: 2, Missing: []string{"fetch_daily_report", "list_report_dates"}}, true, true},
		{"scope read: 1/2", full[1:], Drift{Server: "report", Locked: 2, Missing: []string{"fetch_daily_report"}}, true, true},
		{"extras pass", append(slices.Clone(full), extra), Drift{Server: "report", Locked: 2, Extra: []string{"export"}}, false, false},
		{"changed fails only strict", []Tool{full[0], changed}, Drift{Server: "report", Locked: 2, Changed: []string{"list_report_dates"}}, false, true},
		{"probable rename", []Tool{renamed, full[1]}, Drift{Server: "report", Locked: 2, Missing: []string{"fetch_daily_report"},
			Extra: []string{"get_daily_report"}, Renamed: []Rename{{From: "fetch_daily_report", To: "get_daily_report"}}}, true, true},
	}
	for _, c := range cases {
		got := l.Check("report", c.tools)
		if !reflect.DeepEqual(got, c.want) || got.Failed(false) != c.failed || got.Failed(true) != c.failedSt {
			t.Errorf("%s: Check = %+v failed=%v strict=%v, want %+v failed=%v strict=%v",
				c.name, got, got.Failed(false), got.Failed(true), c.want, c.failed, c.failedSt)
		}
	}
}

func TestVerify(t *testing.T) {
	l, _ := NewLock([]Result{
		{Server: "report", Outcome: Ready, Tools: reportTools(t)},
		{Server: "gone", Outcome: Ready, Tools: reportTools(t)},
		{Server: "slow", Outcome: Ready, Tools: reportTools(t)},
	}, nil)
	drifts := l.Verify([]Result{
		{Server: "report", Outcome: Ready, Tools: reportTools(t)},
		{Server: "slow", Outcome: Timeout},
		{Server: "unlocked", Outcome: Ready},
	})
	want := []Drift{
		{Server: "gone", Locked: 2, Unverified: "not in the probed config"},
		{Server: "report", Locked: 2},
		{Server: "slow", Locked: 2, Unverified: "TIMEOUT"},
	}
	if !reflect.DeepEqual(drifts, want) {
		t.Fatalf("Verify: got %+v, want %+v", drifts, want)
	}
}
