package testfixtures

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestMain lets the test binary double as the fixture binary with the same argv as
// `mcpshim fixture NAME ARGS...`, so grandchild's re-exec of `fixture sleep` lands here too.
func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == "fixture" {
		signal.Ignore(syscall.SIGPIPE) // as cmd/mcpshim does
		os.Exit(Serve(os.Args[2], os.Args[3:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// proc is a fixture running as a child over real pipes, in its own process group
// so cleanup can kill it and anything it spawned.
type proc struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  *os.File
	client *Client
	done   chan struct{} // closed once the child is reaped

	mu     sync.Mutex
	stderr bytes.Buffer
}

// start launches fixture name with args; env entries are added after REPORT_* are cleared.
func start(t *testing.T, env []string, name string, args ...string) *proc {
	t.Helper()
	inR, inW := pipe(t)
	outR, outW := pipe(t)
	errR, errW := pipe(t)
	cmd := exec.Command(os.Args[0], append([]string{"fixture", name}, args...)...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "REPORT_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	// Race-built children otherwise linger a second at exit.
	cmd.Env = append(cmd.Env, "GORACE=atexit_sleep_ms=0")
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	ownGroup(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatalf("start fixture %s: %v", name, err)
	}
	inR.Close()
	outW.Close()
	errW.Close()
	p := &proc{t: t, cmd: cmd, stdin: inW, client: NewClient(inW, outR), done: make(chan struct{})}
	go func() {
		cmd.Wait()
		close(p.done)
	}()
	go func() {
		buf := make([]byte, 32<<10)
		for {
			n, err := errR.Read(buf)
			p.mu.Lock()
			p.stderr.Write(buf[:n])
			p.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		killGroup(cmd)
		<-p.done
		inW.Close()
		outR.Close()
		errR.Close()
	})
	return p
}

func pipe(t *testing.T) (r, w *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatalf("pipe: %v", err)
	}
	return r, w
}

func (p *proc) stderrText() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}

// waitStderr waits until the fixture's stderr contains sub.
func (p *proc) waitStderr(sub string) {
	p.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(p.stderrText(), sub) {
		if time.Now().After(deadline) {
			p.t.Fatalf("stderr: got %q, want it to contain %q", p.stderrText(), sub)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// exit waits for the fixture to end and returns its exit code (-1 if signalled).
func (p *proc) exit() int {
	p.t.Helper()
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		p.t.Fatalf("fixture %v did not exit", p.cmd.Args[1:])
	}
	return p.cmd.ProcessState.ExitCode()
}

// stillRunning fails if the fixture ends within d.
func (p *proc) stillRunning(d time.Duration) {
	p.t.Helper()
	select {
	case <-p.done:
		p.t.Fatalf("fixture %v exited (%v), want it still running; stderr %q", p.cmd.Args[1:], p.cmd.ProcessState, p.stderrText())
	case <-time.After(d):
	}
}

// call runs one request with a generous deadline and decodes its response.
func (p *proc) call(id, method, params string) reply {
	p.t.Helper()
	line, err := p.client.Call(deadline(p.t, 5*time.Second), id, method, params)
	if err != nil {
		p.t.Fatalf("Call(%s, %s, %s): %v (line %.200q; stderr %q)", id, method, params, err, line, p.stderrText())
	}
	return decode(p.t, line)
}

func (p *proc) handshake(era string) reply {
	p.t.Helper()
	line, err := p.client.Handshake(deadline(p.t, 5*time.Second), era)
	if err != nil {
		p.t.Fatalf("Handshake(%s): %v (line %q; stderr %q)", era, err, line, p.stderrText())
	}
	return decode(p.t, line)
}

func (p *proc) readLine() []byte {
	p.t.Helper()
	line, err := p.client.ReadLine(deadline(p.t, 5*time.Second))
	if err != nil {
		p.t.Fatalf("ReadLine: %v (line %q; stderr %q)", err, line, p.stderrText())
	}
	return line
}

func deadline(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}

// reply is any JSON-RPC line a fixture writes.
type reply struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *rpcError       `json:"error"`
}

func decode(t *testing.T, line []byte) reply {
	t.Helper()
	var r reply
	if err := json.Unmarshal(line, &r); err != nil {
		t.Fatalf("decode %.200q: %v", line, err)
	}
	return r
}

// into decodes a result, failing the test on a JSON-RPC error.
func into[T any](t *testing.T, r reply) T {
	t.Helper()
	var v T
	if r.Error != nil {
		t.Fatalf("got error %+v, want a result", *r.Error)
	}
	if err := json.Unmarshal(r.Result, &v); err != nil {
		t.Fatalf("decode result %.200q: %v", r.Result, err)
	}
	return v
}

type toolsPage struct {
	Tools []struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"inputSchema"`
	} `json:"tools"`
	NextCursor string `json:"nextCursor"`
}

func (tp toolsPage) names() []string {
	names := []string{}
	for _, tool := range tp.Tools {
		names = append(names, tool.Name)
	}
	return names
}

// callText runs tools/call and returns its text and isError.
func (p *proc) callText(id, name, args string) (string, bool) {
	p.t.Helper()
	r := into[callResult](p.t, p.call(id, "tools/call", `{"name":"`+name+`","arguments":`+args+`}`))
	if len(r.Content) != 1 || r.Content[0].Type != "text" {
		p.t.Fatalf("tools/call %s: got content %+v, want one text item", name, r.Content)
	}
	return r.Content[0].Text, r.IsError
}

func (p *proc) closeStdin() {
	p.t.Helper()
	if err := p.stdin.Close(); err != nil {
		p.t.Fatalf("close stdin: %v", err)
	}
}
