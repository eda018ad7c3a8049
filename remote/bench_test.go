package remote_test

import (
	"context"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
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
