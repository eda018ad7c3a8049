package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpshim-dev/mcpshim/bench/relay/progress"
)

func TestWriteHugeIsOneLineOfExactSize(t *testing.T) {
	for _, size := range []int{80, 1 << 20, 1<<20 + 7, 3<<20 + 1} {
		var out bytes.Buffer
		if err := writeHuge(&out, []byte("42"), size); err != nil {
			t.Fatalf("writeHuge(size %d): %v", size, err)
		}
		b := out.Bytes()
		if len(b) != size {
			t.Errorf("writeHuge(size %d): got %d bytes, want %d", size, len(b), size)
		}
		if i := bytes.IndexByte(b, '\n'); i != len(b)-1 {
			t.Errorf("writeHuge(size %d): got first newline at %d, want %d", size, i, len(b)-1)
		}
		var msg struct {
			ID int `json:"id"`
		}
		if err := json.Unmarshal(b, &msg); err != nil || msg.ID != 42 {
			t.Errorf("writeHuge(size %d): got id %d, err %v; want id 42, valid JSON", size, msg.ID, err)
		}
	}
}

func TestWriteHugeTooSmall(t *testing.T) {
	if err := writeHuge(&bytes.Buffer{}, []byte("1"), 10); err == nil {
		t.Errorf("writeHuge(size 10): got nil error, want one")
	}
}

func TestServe(t *testing.T) {
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"huge","arguments":{"bytes":200}}}`,
		strings.TrimSuffix(string(progress.Line(1024)), "\n"),
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"flood","arguments":{"lines":3,"bytes":1024}}}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"sink","arguments":{"data":"` + strings.Repeat("y", 200<<10) + `"}}}`,
	}, "\n") + "\n"
	var buf bytes.Buffer
	out := bufio.NewWriter(&buf)
	if err := serve(strings.NewReader(in), out); err != nil {
		t.Fatalf("serve: %v", err)
	}
	out.Flush()
	lines := strings.SplitAfter(buf.String(), "\n")
	lines = lines[:len(lines)-1] // after the last newline
	wantIDs := []string{`"id":1,`, `"id":"a",`, `"id":3,`, `"progress"`, `"progress"`, `"progress"`, `"id":4,`, `"id":5,`}
	if len(lines) != len(wantIDs) {
		t.Fatalf("serve(%q): got %d lines %q, want %d", in, len(lines), lines, len(wantIDs))
	}
	for i, want := range wantIDs {
		if !strings.Contains(lines[i], want) || !json.Valid([]byte(lines[i])) {
			t.Errorf("serve: line %d got %q, want valid JSON with %s", i, lines[i], want)
		}
	}
	if len(lines[2]) != 200 {
		t.Errorf("serve: huge line got %d bytes, want 200", len(lines[2]))
	}
	if len(lines[3]) != 1024 {
		t.Errorf("serve: flood line got %d bytes, want 1024", len(lines[3]))
	}
}
