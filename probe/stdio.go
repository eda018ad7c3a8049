package probe

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpshim-dev/mcpshim/mcp"
	"github.com/mcpshim-dev/mcpshim/proc"
	"github.com/mcpshim-dev/mcpshim/redact"
)

const (
	// exitGrace is how long a server that closed stdout may take to exit on its
	// own, so the exit status reported is its own and not our SIGKILL.
	exitGrace = 200 * time.Millisecond
	// maxLine bounds one stdout message; a server streaming without newlines is cut off.
	maxLine = 64 << 20
	// stderrLines is how many stderr lines are kept.
	stderrLines = 20
	// stderrLineMax bounds one kept stderr line.
	stderrLineMax = 1024
)

// stdioProc is a launched stdio server: its process group, its pipes, and the
// goroutines that read them. Every read happens on those goroutines and is
// delivered on channels, so the session's deadline bounds every wait.
type stdioProc struct {
	proc     *proc.Process
	exited   chan struct{} // closed once the exit time is set
	stdin    *os.File
	stdout   *os.File
	stderr   *os.File
	deadline time.Time
	redact   func(string) string

	wrote   atomic.Bool
	exitAt  time.Time
	outDone chan struct{}
	errDone chan struct{}

	writeMu sync.Mutex

	mu      sync.Mutex
	pending map[int64]chan answer
	failure error  // once set, no answer will come
	noise   []byte // the first stdout line that was not JSON-RPC, and when
	noiseAt time.Time
	stderrN int64
	tail    []string
}

// startStdio launches t's command in its own process group with its stdio on
// pipes. A command that cannot be started is an error carrying the OS's words.
func startStdio(t Target, baseEnv []string, deadline time.Time, r *Result) (*stdioProc, error) {
	env := append([]string(nil), baseEnv...)
	keys := make([]string, 0, len(t.Env))
	for k := range t.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+t.Env[k])
	}
	child, err := proc.Start(proc.Spec{Path: t.Command, Args: t.Args, Env: env, Dir: t.Dir})
	if err != nil {
		var se *proc.SpawnError
		if errors.As(err, &se) && se.Class == proc.ClassBadInterpreter {
			// The OS says the file does not exist; it is its #! interpreter that does not.
			return nil, fmt.Errorf("%w (%s)", err, se.Hint)
		}
		return nil, err
	}
	p := &stdioProc{
		proc: child, stdin: child.Stdin, stdout: child.Stdout, stderr: child.Stderr, deadline: deadline,
		redact:  redact.EnvHider(t.Env),
		exited:  make(chan struct{}),
		outDone: make(chan struct{}),
		errDone: make(chan struct{}),
		pending: map[int64]chan answer{},
	}
	r.PID = child.Pid
	r.Timeline = append(r.Timeline, Step{At: time.Now(), Event: "spawned", Detail: "pid " + strconv.Itoa(child.Pid)})
	// The readers return at their pipe's end (stop closes both after killing
	// the group); wait returns when the server has exited. stop waits for all
	// three.
	go p.readStdout()
	go p.readStderr()
	go p.wait()
	return p, nil
}

func (p *stdioProc) delivered() bool { return p.wrote.Load() }

func (p *stdioProc) send(ctx context.Context, req request) <-chan answer {
	ch := make(chan answer, 1)
	data, err := req.encode()
	if err != nil {
		ch <- answer{at: time.Now(), err: &protocolError{fmt.Sprintf("encode %s: %v", req.Method, err)}}
		return ch
	}
	p.mu.Lock()
	if p.failure != nil {
		p.mu.Unlock()
		ch <- answer{at: time.Now(), err: p.failure}
		return ch
	}
	p.pending[req.ID] = ch
	p.mu.Unlock()
	if err := p.write(data); err != nil {
		p.mu.Lock()
		_, still := p.pending[req.ID]
		delete(p.pending, req.ID)
		p.mu.Unlock()
		if still {
			ch <- answer{at: time.Now(), err: err}
		}
	}
	return ch
}

func (p *stdioProc) notify(ctx context.Context, req request) error {
	data, err := req.encode()
	if err != nil {
		return &protocolError{fmt.Sprintf("encode %s: %v", req.Method, err)}
	}
	return p.write(data)
}

// write sends one line to stdin, bounded by the probe's deadline like every read.
func (p *stdioProc) write(data []byte) error {
	p.writeMu.Lock()
	defer p.writeMu.Unlock()
	if !p.deadline.IsZero() {
		p.stdin.SetWriteDeadline(p.deadline)
	}
	_, err := p.stdin.Write(append(data, '\n'))
	switch {
	case err == nil:
		p.wrote.Store(true)
		return nil
	case errors.Is(err, os.ErrDeadlineExceeded):
		return context.DeadlineExceeded
	default:
		// A broken pipe: the server is gone, and stdout's EOF says so too.
		return errClosed
	}
}

// readStdout routes each line: answers to the waiting request, server
// requests answered, notifications dropped, anything else kept as noise.
func (p *stdioProc) readStdout() {
	defer close(p.outDone)
	br := bufio.NewReaderSize(p.stdout, 64<<10)
	for {
		line, err := readLine(br)
		if len(bytes.TrimSpace(line)) > 0 {
			p.dispatch(line)
		}
		if err != nil {
			p.fail(errClosed)
			return
		}
	}
}

// readLine reads one newline-terminated line of at most maxLine bytes.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) > maxLine {
			return nil, fmt.Errorf("stdout line longer than %d bytes", maxLine)
		}
		line = append(line, chunk...)
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, err
		}
	}
}

func (p *stdioProc) dispatch(line []byte) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Result json.RawMessage `json:"result"`
		Error  *rpcError       `json:"error"`
	}
	if json.Unmarshal(line, &m) != nil || (m.Method == "" && m.ID == nil && m.Error == nil) {
		p.mu.Lock()
		if p.noise == nil {
			p.noise, p.noiseAt = bytes.TrimSpace(append([]byte(nil), line...)), time.Now()
		}
		p.mu.Unlock()
		return
	}
	switch {
	case m.Method != "" && m.ID != nil:
		p.answerServer(m.ID, m.Method)
	case m.Method != "":
		// A notification: logging or list_changed, nothing the probe needs.
	case m.Error != nil && (m.ID == nil || string(m.ID) == "null"):
		p.fail(m.Error) // the server could not read what we sent
	default:
		v, _ := mcp.ParseID(m.ID)
		id, ok := v.Int() // a value: a peer may answer 1 as 1.0
		if !ok {
			return
		}
		p.mu.Lock()
		ch, ok := p.pending[id]
		delete(p.pending, id)
		p.mu.Unlock()
		if ok {
			ch <- answer{at: time.Now(), result: m.Result, rpcErr: m.Error}
		}
	}
}

// answerServer replies to a request the server sent: ping is answered, the
// rest refused, since the probe declares no client capabilities.
func (p *stdioProc) answerServer(id json.RawMessage, method string) {
	reply := map[string]any{"jsonrpc": "2.0", "id": id}
	if method == mcp.MethodPing {
		reply["result"] = map[string]any{}
	} else {
		reply["error"] = rpcError{Code: -32601, Message: "Method not found"}
	}
	if data, err := json.Marshal(reply); err == nil {
		p.write(data)
	}
}

// fail ends every pending request with err; later requests fail at once.
func (p *stdioProc) fail(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.failure == nil {
		p.failure = err
	}
	for id, ch := range p.pending {
		ch <- answer{at: time.Now(), err: p.failure}
		delete(p.pending, id)
	}
}

func (p *stdioProc) readStderr() {
	defer close(p.errDone)
	br := bufio.NewReaderSize(p.stderr, 4096)
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		p.mu.Lock()
		p.stderrN += int64(len(chunk))
		p.mu.Unlock()
		if room := stderrLineMax - len(line); room > 0 {
			line = append(line, chunk[:min(room, len(chunk))]...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if s := string(bytes.TrimSpace(line)); s != "" {
			p.mu.Lock()
			p.tail = append(p.tail, s)
			if len(p.tail) > stderrLines {
				p.tail = p.tail[1:]
			}
			p.mu.Unlock()
		}
		line = line[:0]
		if err != nil {
			return
		}
	}
}

// wait reaps the server. When it is gone but something it started still
// holds stdout open, the pending requests are failed anyway.
func (p *stdioProc) wait() {
	<-p.proc.Exited()
	p.exitAt = time.Now()
	close(p.exited)
	select {
	case <-p.outDone:
	case <-time.After(exitGrace):
		p.fail(errClosed)
	}
}

// stop kills the whole process group, so nothing the probe started outlives
// it, reaps the server and collects its stderr.
func (p *stdioProc) stop(r *Result) {
	p.mu.Lock()
	closed := errors.Is(p.failure, errClosed)
	p.mu.Unlock()
	if closed {
		select {
		case <-p.exited:
		case <-time.After(exitGrace):
		}
	}
	exitedAlone := false
	select {
	case <-p.exited:
		exitedAlone = true
	default:
	}
	p.proc.Kill() // the group: whatever the server started dies with it
	defer p.proc.Release()
	p.stdin.Close()
	<-p.exited
	// Every holder of the pipes is dead unless one left the group; do not wait on it.
	select {
	case <-p.errDone:
	case <-time.After(exitGrace):
	}
	p.stdout.Close()
	p.stderr.Close()
	<-p.outDone
	<-p.errDone

	code, sig := p.proc.Status()
	r.ExitCode, r.Signal = &code, sig
	if exitedAlone {
		r.ExitStatus = p.proc.State()
		r.Timeline = append(r.Timeline, Step{At: p.exitAt, Event: "exited", Detail: r.ExitStatus})
	} else {
		r.Timeline = append(r.Timeline, Step{At: p.exitAt, Event: "stopped", Detail: "process group killed"})
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.noise != nil {
		r.Timeline = append(r.Timeline, Step{At: p.noiseAt, Event: "stdout_noise", Detail: truncate(string(p.noise), 120)})
	}
	r.StderrActive = p.stderrN > 0
	for _, l := range p.tail {
		r.StderrTail = append(r.StderrTail, p.redact(l))
	}
}
