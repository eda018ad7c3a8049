package probe

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/mcpshim-dev/mcpshim/lock"
)

func tool(t *testing.T, raw string) lock.Tool {
	t.Helper()
	tl, err := lock.NewTool(json.RawMessage(raw))
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

func reportTools(t *testing.T) []lock.Tool {
	return []lock.Tool{
		tool(t, `{"name":"fetch_daily_report","description":"Fetch the daily sales report","inputSchema":{"type":"object","properties":{"date":{"type":"string"}},"required":["date"]}}`),
		tool(t, `{"name":"list_report_dates","description":"List available report dates","inputSchema":{"type":"object","properties":{}}}`),
	}
}

func TestNewLockRefusesFailedObservations(t *testing.T) {
	results := []Result{
		{Server: "report", Outcome: Ready, Tools: reportTools(t)},
		{Server: "stalled", Outcome: Timeout, Detail: "no response to initialize within 2s"},
		{Server: "ghost", Outcome: Exited, Detail: "fork/exec ./no-such-binary: no such file or directory"},
		{Server: "empty", Outcome: Ready, Tools: []lock.Tool{}},
		{Server: "allowed-empty", Outcome: Ready, Tools: []lock.Tool{}},
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

func TestVerify(t *testing.T) {
	l, _ := NewLock([]Result{
		{Server: "report", Outcome: Ready, Tools: reportTools(t)},
		{Server: "gone", Outcome: Ready, Tools: reportTools(t)},
		{Server: "slow", Outcome: Ready, Tools: reportTools(t)},
	}, nil)
	drifts := Verify(l, []Result{
		{Server: "report", Outcome: Ready, Tools: reportTools(t)},
		{Server: "slow", Outcome: Timeout},
		{Server: "unlocked", Outcome: Ready},
	})
	want := []lock.Drift{
		{Server: "gone", Locked: 2, Unverified: "not in the probed config"},
		{Server: "report", Locked: 2},
		{Server: "slow", Locked: 2, Unverified: "TIMEOUT"},
	}
	if !reflect.DeepEqual(drifts, want) {
		t.Fatalf("Verify: got %+v, want %+v", drifts, want)
	}
}
