package remote_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkAddedLatency measures what the bridge adds to one tools/call: the
// same go-sdk client calls the same loopback server directly over HTTP and
// through `mcpshim --url` on stdio, in alternating blocks so that the load
// of a shared machine lands on both. It reports the median round trip of
// each and their difference.
//
//	go test -run '^$' -bench AddedLatency -benchtime 2000x ./remote/
func BenchmarkAddedLatency(b *testing.B) {
	for _, srv := range []struct {
		name string
		opts *mcp.StreamableHTTPOptions
	}{
		{"sse-sessions", nil},
		{"stateless-json", &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true}},
	} {
		b.Run(srv.name, func(b *testing.B) {
			var ran counters
			s := serve(b, "127.0.0.1:0", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return newServer(&ran, nil) }, srv.opts))
			ctx := context.Background()
			client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
			direct, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.url()}, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer direct.Close()
			cmd := exec.Command(shim, "--quiet", "--ledger", filepath.Join(b.TempDir(), "l.jsonl"), "--url", s.url())
			bridged, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer bridged.Close()
			call := func(cs *mcp.ClientSession) time.Duration {
				start := time.Now()
				if _, err := echo(ctx, cs, "x"); err != nil {
					b.Fatal(err)
				}
				return time.Since(start)
			}
			for range 200 { // warm-up: connections, the recorder's queue
				call(direct)
				call(bridged)
			}
			var d, br []time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i += 100 {
				for range min(100, b.N-i) {
					d = append(d, call(direct))
				}
				for range min(100, b.N-i) {
					br = append(br, call(bridged))
				}
			}
			b.StopTimer()
			md, mb := median(d), median(br)
			b.ReportMetric(float64(md.Microseconds()), "direct-µs/call")
			b.ReportMetric(float64(mb.Microseconds()), "bridged-µs/call")
			b.ReportMetric(float64((mb - md).Microseconds()), "added-µs/call")
		})
	}
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkBigEvent measures the shim's peak RSS while one 64 MiB answer
// crosses the bridge, as an SSE event and as a JSON body (the stdio path
// relays a 64 MiB line at about 19 MiB).
//
//	go test -run '^$' -bench BigEvent -benchtime 1x ./remote/
func BenchmarkBigEvent(b *testing.B) {
	text := strings.Repeat("0123456789abcdef", 64<<20/16)
	for _, kind := range []string{"sse", "json"} {
		b.Run(kind, func(b *testing.B) {
			s := serve(b, "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				id := "1"
				if i := strings.Index(string(body), `"id":`); i >= 0 {
					id = strings.TrimRight(strings.SplitN(string(body)[i+5:], ",", 2)[0], "}")
				}
				msg := `{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":"` + text + `"}]}}`
				if kind == "sse" {
					w.Header().Set("Content-Type", "text/event-stream")
					io.WriteString(w, "data: "+msg+"\n\n")
					return
				}
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, msg)
			}))
			for i := 0; i < b.N; i++ {
				cmd := exec.Command(shim, "--quiet", "--ledger", filepath.Join(b.TempDir(), "l.jsonl"), "--url", s.url())
				in, _ := cmd.StdinPipe()
				out, _ := cmd.StdoutPipe()
				if err := cmd.Start(); err != nil {
					b.Fatal(err)
				}
				io.WriteString(in, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"big","arguments":{}}}`+"\n")
				br := bufio.NewReaderSize(out, 1<<20)
				got := 0
				for {
					chunk, err := br.ReadSlice('\n')
					got += len(chunk)
					if err != bufio.ErrBufferFull {
						break
					}
				}
				if got < len(text) {
					b.Fatalf("the answer was %d bytes, want over %d", got, len(text))
				}
				rss := peakRSSOf(cmd.Process.Pid)
				in.Close()
				cmd.Wait()
				b.ReportMetric(float64(rss)/(1<<20), "peak-RSS-MiB")
			}
		})
	}
}

// peakRSSOf is a process's VmHWM in bytes.
func peakRSSOf(pid int) int64 {
	data, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}
