package lock

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestToolDigest(t *testing.T) {
	const base = `{"name":"fetch","description":"Fetch it","inputSchema":{"type":"object","properties":{"a":{"type":"string"}}}}`
	cases := []struct {
		name string
		raw  string
		same bool // same digest as base
	}{
		{"identical", base, true},
		{"keys reordered, whitespace", `{ "inputSchema": {"properties": {"a": {"type": "string"}}, "type": "object"},
			"description": "Fetch it", "name": "fetch" }`, true},
		{"members outside the digest", `{"name":"fetch","title":"Fetch","icons":[],"_meta":{"x":1},"description":"Fetch it","inputSchema":{"type":"object","properties":{"a":{"type":"string"}}}}`, true},
		{"null is absent", `{"name":"fetch","description":"Fetch it","inputSchema":{"type":"object","properties":{"a":{"type":"string"}}},"outputSchema":null}`, true},
		{"description changed", `{"name":"fetch","description":"Fetch that","inputSchema":{"type":"object","properties":{"a":{"type":"string"}}}}`, false},
		{"schema changed", `{"name":"fetch","description":"Fetch it","inputSchema":{"type":"object","properties":{"a":{"type":"number"}}}}`, false},
		{"annotations added", `{"name":"fetch","description":"Fetch it","inputSchema":{"type":"object","properties":{"a":{"type":"string"}}},"annotations":{"readOnlyHint":true}}`, false},
		{"renamed", `{"name":"get","description":"Fetch it","inputSchema":{"type":"object","properties":{"a":{"type":"string"}}}}`, false},
	}
	_, want, err := toolDigest(json.RawMessage(base))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(want, "sha256/v1:") || len(want) != len("sha256/v1:")+64 {
		t.Fatalf("toolDigest(%s): got %q, want sha256/v1: and 64 hex digits", base, want)
	}
	for _, c := range cases {
		name, got, err := toolDigest(json.RawMessage(c.raw))
		if err != nil {
			t.Errorf("%s: toolDigest(%s): %v", c.name, c.raw, err)
			continue
		}
		if (got == want) != c.same {
			t.Errorf("%s: toolDigest(%s) = %s %s, base %s: want same=%v", c.name, c.raw, name, got, want, c.same)
		}
	}
}

// The digest is over the canonical text, pinned here so a change to the
// canonical form cannot pass unnoticed: it would need a new version prefix.
func TestToolDigestCanonicalForm(t *testing.T) {
	raw := `{"name":"x", "inputSchema": {"type":"object"}, "description":"a<b", "title":"X"}`
	// printf '%s' '{"description":"a<b","inputSchema":{"type":"object"},"name":"x"}' | sha256sum
	want := "sha256/v1:c8878a586049ef47b022856f8c2ffb0a8c21533e7a09a24953858b15edb3ac13"
	if _, got, err := toolDigest(json.RawMessage(raw)); err != nil || got != want {
		t.Fatalf("toolDigest(%s) = %q, %v; want %q", raw, got, err, want)
	}
}

func TestToolDigestErrors(t *testing.T) {
	for _, raw := range []string{`{"description":"no name"}`, `{"name":""}`, `{"name":3}`} {
		if _, _, err := toolDigest(json.RawMessage(raw)); !errors.Is(err, ErrBadTool) {
			t.Errorf("toolDigest(%s): got %v, want ErrBadTool", raw, err)
		}
	}
	if _, _, err := toolDigest(json.RawMessage(`[1,2]`)); err == nil {
		t.Errorf("toolDigest([1,2]): got nil error, want one")
	}
}

func TestShapeDigestIgnoresName(t *testing.T) {
	a, _ := NewTool(json.RawMessage(`{"name":"old","description":"d","inputSchema":{"type":"object"}}`))
	b, _ := NewTool(json.RawMessage(`{"name":"new","description":"d","inputSchema":{"type":"object"}}`))
	if a.ShapeDigest != b.ShapeDigest || a.Digest == b.Digest {
		t.Fatalf("old/new with one shape: got shapes %s %s digests %s %s, want equal shapes, different digests", a.ShapeDigest, b.ShapeDigest, a.Digest, b.Digest)
	}
}

// toolDigest is a tool definition's name and digest.
func toolDigest(raw json.RawMessage) (name, digest string, err error) {
	t, err := NewTool(raw)
	return t.Name, t.Digest, err
}
