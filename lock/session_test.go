package lock

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestPages: the list is whole after the page without a nextCursor (an
// empty cursor is a cursor); a page that cannot be read starts over.
func TestPages(t *testing.T) {
	var p Pages
	steps := []struct {
		page     string
		complete bool
		tools    int
	}{
		{`{"tools":[{"name":"a"}],"nextCursor":""}`, false, 0},
		{`{"tools":[{"name":"b"}]}`, true, 2},
		{`{"tools":[{"name":"c"}],"nextCursor":"2"}`, false, 0},
		{`{"tools":`, false, 0}, // unreadable: what was gathered is dropped
		{`{"tools":[{"name":"d"}]}`, true, 1},
	}
	for i, st := range steps {
		tools, complete := p.Add([]byte(st.page))
		if complete != st.complete || len(tools) != st.tools {
			t.Errorf("step %d: Add(%s) = %d tools, complete %v; want %d, %v", i, st.page, len(tools), complete, st.tools, st.complete)
		}
	}
}

// TestCheckerAndMissing: the locked tools a list lacks, and how a session
// says so in either mode.
func TestCheckerAndMissing(t *testing.T) {
	l := lockOf("report", reportTools(t))
	raw := []json.RawMessage{json.RawMessage(`{"name":"list_report_dates","description":"List available report dates","inputSchema":{"type":"object","properties":{}}}`), json.RawMessage(`{"description":"no name"}`)}
	missing := Checker(l, "report")(raw)
	if strings.Join(missing, ",") != "fetch_daily_report" {
		t.Fatalf("Checker: got missing %v, want [fetch_daily_report]", missing)
	}
	m := Missing{Server: "report", Tools: missing, Enforce: true}
	if f := m.Fields(); len(f) != 2 || f[1].Value != "enforce" {
		t.Errorf("Fields = %+v, want missing and mode enforce", f)
	}
	if got, want := m.Notice(), "tool surface lock: 1 locked tool(s) missing: fetch_daily_report"; got != want {
		t.Errorf("Notice = %q, want %q", got, want)
	}
	if got, want := m.Error(), "mcpshim: server report lacks locked tools: fetch_daily_report"; got != want {
		t.Errorf("Error = %q, want %q", got, want)
	}
}
