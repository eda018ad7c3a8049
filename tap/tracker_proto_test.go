package tap

import (
	"testing"
)

// TestTrackerPairsIDsByValue: an answer that re-spells its id pairs with the
// request, and the record keeps the request's spelling.
func TestTrackerPairsIDsByValue(t *testing.T) {
	for _, c := range []struct{ req, resp string }{
		{`"\u00e9"`, `"é"`}, {`"a\/b"`, `"a/b"`}, {`1e2`, `100`}, {`1`, `1.0`},
	} {
		var tr Tracker
		rs := feed(t, &tr,
			`> {"jsonrpc":"2.0","id":`+c.req+`,"method":"tools/call","params":{"name":"echo"}}`,
			`< {"result":{"content":[]},"jsonrpc":"2.0","id":`+c.resp+`}`)
		if got := eventNames(rs); got != "tool_call_received tool_call_responded" {
			t.Errorf("request id %s, answer id %s: events %q, want tool_call_received tool_call_responded", c.req, c.resp, got)
			continue
		}
		if got := fieldOf(rs[1], "request_id"); got != c.req {
			t.Errorf("request_id = %v, want %s (the request's spelling)", got, c.req)
		}
	}
	var tr Tracker
	rs := feed(t, &tr, `> {"jsonrpc":"2.0","id":1,"method":"ping"}`, `< {"jsonrpc":"2.0","id":"1","result":{}}`)
	if got := eventNames(rs); got != "request_received unknown_response" {
		t.Errorf("a string answering a number: %q, want request_received unknown_response", got)
	}
}

// TestTrackerEmptyCursor: a page with nextCursor "" is not the last.
func TestTrackerEmptyCursor(t *testing.T) {
	var tr Tracker
	rs := feed(t, &tr,
		`> {"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","inputSchema":{"type":"object"}}],"nextCursor":""}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":""}}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"b","inputSchema":{"type":"object"}}]}}`)
	if len(rs) != 4 || fieldOf(rs[1], "complete") != false || fieldOf(rs[3], "complete") != true || fieldOf(rs[3], "tool_count") != 2 {
		t.Fatalf("records %q: want the first page incomplete, the second complete with 2 tools", eventNames(rs))
	}
}

// TestTrackerRoundsAndTasks: MRTR rounds are one call; a task's outcome is
// its call's; a stopped run returns the tasks it lost.
func TestTrackerRoundsAndTasks(t *testing.T) {
	var tr Tracker
	rs := feed(t, &tr,
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"deploy"}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","requestState":"s"}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"deploy","inputResponses":{},"requestState":"s"}}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"content":[],"isError":true}}`,
		`> {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"build","task":{}}}`,
		`< {"jsonrpc":"2.0","id":3,"result":{"task":{"taskId":"t1","status":"working"}}}`,
		`> {"jsonrpc":"2.0","id":4,"method":"tasks/result","params":{"taskId":"t1"}}`,
		`< {"jsonrpc":"2.0","id":4,"result":{"content":[]}}`,
		`> {"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"build","task":{}}}`,
		`< {"jsonrpc":"2.0","id":5,"result":{"task":{"taskId":"t2","status":"working"}}}`)
	want := "tool_call_received tool_call_input_required tool_call_continued tool_call_responded " +
		"tool_call_received tool_call_task_created request_received tool_call_responded tool_call_received tool_call_task_created"
	if got := eventNames(rs); got != want {
		t.Fatalf("events\n %s\nwant\n %s", got, want)
	}
	if fieldOf(rs[3], "outcome") != "is_error" {
		t.Errorf("the second round's outcome = %v, want is_error", fieldOf(rs[3], "outcome"))
	}
	if r := rs[7]; fieldOf(r, "request_id") != "3" || fieldOf(r, "task_id") != "t1" || fieldOf(r, "via_request_id") != "4" {
		t.Errorf("the task's outcome = %+v, want it under call 3 with task t1 via 4", r.Fields)
	}
	if lost := tr.Stop(); len(lost) != 1 || lost[0] != "t2" {
		t.Errorf("Stop() = %v, want [t2]", lost)
	}
}
