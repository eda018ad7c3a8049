package tap

import (
	"fmt"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpshim-dev/mcpshim/ledger"
	"github.com/mcpshim-dev/mcpshim/mcp"
	"github.com/mcpshim-dev/mcpshim/phases"
)

// BenchmarkRecordToolCall is the recorder's work for one small tool call
// (its request and its response): the tracker's records, encoded into the
// ledger file and printed as event lines, held and flushed as one poll does,
// through the recorder's own handling (without its goroutine). It is the
// recorder's share of a round trip (bench/relay.sh measures the trip).
func BenchmarkRecordToolCall(b *testing.B) {
	for _, sink := range []struct {
		name   string
		path   bool
		events io.Writer
	}{{"file+log", true, io.Discard}, {"file", true, nil}, {"off", false, nil}} {
		b.Run(sink.name, func(b *testing.B) {
			opts := ledger.Options{Events: sink.events}
			if sink.path {
				opts.Path = filepath.Join(b.TempDir(), "l.jsonl")
			}
			l, _ := ledger.Open(opts)
			defer l.Close()
			t := &Tracker{}
			t.Begin("run_01M8RMSNP1KYPB75JGK35ZPA87", 4242, time.Now(), phases.Spawned)
			r := &Recorder{ledger: l, tracker: t}
			line := func(s string) Observation {
				data := []byte(s)
				return Observation{Data: data, Size: int64(len(data) + 1), Msg: mcp.Peek(data), Forwarded: true}
			}
			observe := func(dir phases.Dir, l0 Observation) {
				l0.End = time.Now()
				r.handle(item{dir: dir, line: l0})
			}
			observe(phases.FromClient, line(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}`))
			observe(phases.FromServer, line(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"echo","version":"1"}}}`))
			observe(phases.FromClient, line(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
			// Scanned once here: the relay scans, not the recorder.
			reqs := make([]Observation, 64)
			resps := make([]Observation, 64)
			for i := range reqs {
				reqs[i] = line(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`, i+1))
				resps[i] = line(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"hi"}]}}`, i+1))
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if i%50 == 0 {
					l.Flush()
					l.Hold()
				}
				observe(phases.FromClient, reqs[i%64])
				observe(phases.FromServer, resps[i%64])
			}
			l.Flush()
		})
	}
}
