package mcp

import "testing"

func TestPeek(t *testing.T) {
	cases := []struct {
		line   string
		kind   Kind
		id     string
		method string
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, Request, `1`, "initialize"},
		{`{"jsonrpc":"2.0","id":"1","method":"tools/call"}`, Request, `"1"`, "tools/call"},
		{`{"method":"notifications/initialized","jsonrpc":"2.0"}`, Notification, ``, "notifications/initialized"},
		{` {"jsonrpc" : "2.0" , "id" : 3 , "result" : {"a":[1,"}"]} }` + "\r", Response, `3`, ""},
		{`{"jsonrpc":"2.0","id":null,"error":{"code":-32700}}`, ErrorResponse, `null`, ""},
		{`{"jsonrpc":"2.0","id":4,"method":"a\/b"}`, Request, `4`, "a/b"},
		{`[2026-07-23 16:48:43] INFO listening`, Noise, ``, ""},
		{`Starting Acme MCP server`, Noise, ``, ""},
		{`{"id":1,"method":"x"}`, Noise, ``, ""}, // no jsonrpc member
		{`{"jsonrpc":"1.0","id":1,"method":"x"}`, Noise, ``, ""},
		{`{"jsonrpc":"2.0"}`, Noise, ``, ""},
		{`[]`, Noise, ``, ""},
		{``, Noise, ``, ""},
		{`[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"b"}]`, Batch, ``, ""},
	}
	for _, c := range cases {
		m := Peek([]byte(c.line))
		if m.Kind != c.kind || string(m.RawID) != c.id || m.Method != c.method {
			t.Errorf("Peek(%q) = kind %v id %q method %q, want %v %q %q", c.line, m.Kind, m.RawID, m.Method, c.kind, c.id, c.method)
		}
	}
	b := Peek([]byte(`[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"b"}]`))
	if len(b.Batch) != 2 || b.Batch[0].Kind != Request || b.Batch[1].Kind != Notification {
		t.Errorf("batch elements = %+v, want request and notification", b.Batch)
	}
}

func TestMember(t *testing.T) {
	params := []byte(`{"arguments":{"name":"not this"},"name":"echo"}`)
	if got := String(Member(params, "name")); got != "echo" {
		t.Fatalf("Member(name) = %q, want echo", got)
	}
	if got := Member(params, "missing"); got != nil {
		t.Fatalf("Member(missing) = %q, want nil", got)
	}
}

// TestParseCallIsMember: ParseCall's one pass reads what a Member call per
// key reads: the first of a repeated key, nothing past a torn member.
func TestParseCallIsMember(t *testing.T) {
	for _, params := range []string{
		`{"name":"echo","arguments":{"name":"not this"},"task":{},"_meta":{"traceparent":"x"}}`,
		`{"arguments":{"a":1},"name":"first","name":"second","requestState":"s"}`,
		`{"inputResponses":{},"name":"e\u0063ho"}`,
		`{"name":"echo","arguments":{"a":1}`,     // cut after a whole member
		`{"name":"echo","arguments":{"a":`,       // cut inside one
		`{"task":null,"name":"a", "_meta" : {}}`, // null is present
		`[]`, ``, `{}`,
	} {
		b := []byte(params)
		got := ParseCall(b)
		want := Call{Name: String(Member(b, "name")), Arguments: Member(b, "arguments"), Task: Member(b, "task") != nil,
			Continuation: Member(b, "inputResponses") != nil || Member(b, "requestState") != nil, Meta: Member(b, "_meta")}
		if got.Name != want.Name || string(got.Arguments) != string(want.Arguments) || got.Task != want.Task ||
			got.Continuation != want.Continuation || string(got.Meta) != string(want.Meta) {
			t.Errorf("ParseCall(%s) = %+v, want %+v (Member per key)", params, got, want)
		}
	}
}

func FuzzPeek(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"x"}`))
	f.Add([]byte(`[{"jsonrpc":"2.0","id":1}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m := Peek(b) // must not panic
		if m.Kind == Request && m.ID.IsZero() {
			t.Fatalf("request without id from %q", b)
		}
	})
}
