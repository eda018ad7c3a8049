package lock

import (
	"encoding/json"
	"errors"
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

// lockOf is the lock of one server's tools, as mcpshim lock writes it.
func lockOf(server string, tools []Tool) *Lock {
	l := &Lock{Version: Version, Servers: map[string]map[string]LockedTool{server: {}}}
	for _, t := range tools {
		l.Servers[server][t.Name] = LockedTool{Digest: t.Digest, Shape: t.ShapeDigest}
	}
	return l
}

func TestLockRoundTrip(t *testing.T) {
	l := lockOf("report", reportTools(t))
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
	back, err := Read(path)
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
		if _, err := Read(path); !errors.Is(err, ErrMalformed) {
			t.Errorf("Read(%s) of %s: got %v, want ErrMalformed", name, content, err)
		}
	}
	if _, err := Read(filepath.Join(dir, "absent.json")); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Read(absent): got %v, want a not-exist error", err)
	}
}

func TestCheck(t *testing.T) {
	l := lockOf("report", reportTools(t))
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
