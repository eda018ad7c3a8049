package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mcpshim-dev/mcpshim/mcp"
	"github.com/mcpshim-dev/mcpshim/testfixtures"
)

// spellID writes the value k as a random one of its JSON spellings: every
// spelling of one k is one id, and different ks never collide.
func spellID(rng *rand.Rand, k int) string {
	switch rng.IntN(6) {
	case 0:
		return fmt.Sprint(k)
	case 1:
		return fmt.Sprintf("%d.0", k)
	case 2:
		return fmt.Sprintf("%de0", k)
	case 3:
		return fmt.Sprintf(`"é-%d"`, k)
	case 4:
		return fmt.Sprintf(`"\u00e9-%d"`, k)
	}
	return fmt.Sprintf(`"a\/%d"`, k)
}

// TestPropertyOneAnswerEachBytesConserved drives the built shim with random
// interleavings against the chaos fixture: client requests under random id
// spellings, answers late and re-spelled with members in random order and
// lines up to 4 MiB, notifications and server requests both ways, and child
// deaths. Whatever happens, each client request gets exactly one answer;
// the client reads exactly the servers' lines, in order, plus the shim's own
// messages; and the servers read the client's lines, in order, none twice.
func TestPropertyOneAnswerEachBytesConserved(t *testing.T) {
	for seed := int64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			rec := t.TempDir()
			s := start(t, true, []string{"--quiet", "--backoff", "1ms", "--backoff-max", "5ms", "--max-restarts", "100000"},
				"fixture", "chaos", "--seed", fmt.Sprint(seed), "--record", rec)
			rng := rand.New(rand.NewPCG(uint64(seed), 7))
			serverReqs := make(chan string, 1024)
			answered := make(chan struct{}, 4096)
			got := make(chan []string, 1)
			go func() { // the client's reader: every line until EOF
				ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
				defer cancel()
				var lines []string
				for {
					line, err := s.client.ReadLine(ctx)
					if err != nil && !errors.Is(err, testfixtures.ErrNotJSON) {
						break
					}
					lines = append(lines, string(line))
					switch m := mcp.Peek(line); {
					case m.Kind == mcp.Request:
						select {
						case serverReqs <- string(m.RawID):
						default:
						}
					case m.IsResponse():
						select {
						case answered <- struct{}{}:
						default:
						}
					}
				}
				got <- lines
			}()
			var sent []string
			want := map[mcp.ID]bool{}
			send := func(line string) {
				sent = append(sent, line)
				s.send(line)
			}
			send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":` + initParams + `}`)
			send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			for k := 1; k <= 150; k++ {
				raw := spellID(rng, k)
				want[id(raw)] = true
				send(`{"jsonrpc":"2.0","id":` + raw + `,"method":"tools/call","params":{"name":"echo","arguments":{"k":` + fmt.Sprint(k) + `}}}`)
				// Pace the client by the answers, so that deaths fall among
				// requests in flight rather than after the client left. The
				// timer only keeps a server that holds every answer moving.
				select {
				case <-answered:
				case <-time.After(50 * time.Millisecond):
				}
				switch rng.IntN(6) {
				case 0:
					send(`{"method":"notifications/progress","jsonrpc":"2.0","params":{"progressToken":1,"progress":` + fmt.Sprint(k) + `}}`)
				case 1:
					select {
					case sid := <-serverReqs:
						send(`{"jsonrpc":"2.0","id":` + sid + `,"result":{"roots":[]}}`)
					default:
					}
				}
			}
			s.stdin.Close()
			var lines []string
			select {
			case lines = <-got:
			case <-time.After(150 * time.Second):
				t.Fatal("the shim never ended its output")
			}
			_ = s.cmd.Wait()

			// Exactly one answer for each request, none for anything else.
			counts := answers(lines)
			want[id(`"init"`)] = true
			for v := range want {
				if counts[v] != 1 {
					t.Errorf("id %v got %d answers, want 1", v, counts[v])
				}
			}
			for v, n := range counts {
				if !want[v] {
					t.Errorf("%d answers for id %v, which the client never used", n, v)
				}
			}

			// The client read the servers' lines in order, plus the shim's own.
			runs, _ := filepath.Glob(filepath.Join(rec, "*.out"))
			sort.Strings(runs) // start time in ns, same width
			var fromServers []string
			for _, f := range runs {
				for _, l := range recordedLines(t, f) {
					if m := mcp.Peek([]byte(l)); m.IsResponse() && mcp.IsOwnID(m.ID) {
						continue // the answer to a replayed handshake, for the shim alone
					}
					fromServers = append(fromServers, l)
				}
			}
			var relayed []string
			owed := 0
			for _, l := range lines {
				if shimsOwn(l) {
					owed++
					continue
				}
				relayed = append(relayed, l)
			}
			if len(relayed) != len(fromServers) {
				t.Fatalf("client read %d server lines (+%d of the shim's), servers wrote %d", len(relayed), owed, len(fromServers))
			}
			for i := range relayed {
				if relayed[i] != fromServers[i] {
					t.Fatalf("line %d: client read %.120q, server wrote %.120q", i, relayed[i], fromServers[i])
				}
			}

			// The servers read the client's lines in order, none twice.
			ins, _ := filepath.Glob(filepath.Join(rec, "*.in"))
			sort.Strings(ins)
			next := 0
			for _, f := range ins {
				for _, l := range recordedLines(t, f) {
					if m := mcp.Peek([]byte(l)); mcp.IsOwnID(m.ID) || (m.Method == "notifications/initialized" && next >= 2) {
						continue // the shim's replay
					}
					for next < len(sent) && sent[next] != l {
						next++ // lost with a dead server (and answered by the shim)
					}
					if next == len(sent) {
						t.Fatalf("a server read %.120q, which is not the client's next line (sent twice, or out of order)", l)
					}
					next++
				}
			}
			t.Logf("%d server runs, %d lines relayed to the client, %d owed by the shim", len(runs), len(relayed), owed)
		})
	}
}

// shimsOwn reports whether a line the client read is one the shim wrote.
func shimsOwn(l string) bool {
	m := mcp.Peek([]byte(l))
	switch {
	case m.Kind == mcp.ErrorResponse:
		return strings.Contains(l, `"code":-31000`) && strings.Contains(l, `"message":"mcpshim: `)
	case m.Method == "notifications/cancelled":
		return strings.Contains(l, `"reason":"mcpshim: `)
	}
	return false
}

func recordedLines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data = bytes.TrimSuffix(data, []byte("\n"))
	if len(data) == 0 {
		return nil
	}
	return strings.Split(string(data), "\n")
}
