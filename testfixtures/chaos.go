package testfixtures

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// chaos is a random peer for property tests: it answers requests late and
// out of order, re-spells their ids (as JSON.parse/json.loads peers do),
// orders members at random, pads answers up to 4 MiB, writes notifications
// and requests of its own, and dies between lines. Answers to the shim's own
// requests (ids "mcpshim-…") come at once, so a replayed handshake works.
// With record set it appends every line it read and wrote, whole, to
// DIR/<start ns>.in and .out: the test compares them with what the client saw.
func chaos(seed int64, record string, st stdio) int {
	pid := int64(os.Getpid())
	rng := rand.New(rand.NewPCG(uint64(seed), uint64(pid)))
	var in, out io.Writer = io.Discard, io.Discard
	if record != "" {
		stamp := fmt.Sprint(time.Now().UnixNano())
		fi, err1 := os.Create(filepath.Join(record, stamp+".in"))
		fo, err2 := os.Create(filepath.Join(record, stamp+".out"))
		if err := errors.Join(err1, err2); err != nil {
			fmt.Fprintf(st.err, "chaos: %v\n", err)
			return 2
		}
		defer fi.Close()
		defer fo.Close()
		in, out = fi, fo
	}
	write := func(line []byte) error {
		out.Write(line)
		_, err := st.out.Write(line)
		return err
	}
	r := bufio.NewReaderSize(st.in, 64<<10)
	var pending []json.RawMessage
	serverReqs := 0
	answer := func(id json.RawMessage) error {
		peer := []string{peerGo, peerTS, peerPython}[rng.IntN(3)]
		pad := ""
		switch n := rng.IntN(100); {
		case n < 2:
			pad = strings.Repeat("x", rng.IntN(4<<20))
		case n < 10:
			pad = strings.Repeat("y", rng.IntN(64<<10))
		}
		result := `{"content":[{"type":"text","text":"` + pad + `"}]}`
		members := []string{`"jsonrpc":"2.0"`, `"id":` + string(respell(id, peer)), `"result":` + result}
		rng.Shuffle(len(members), func(i, j int) { members[i], members[j] = members[j], members[i] })
		return write([]byte("{" + strings.Join(members, ",") + "}\n"))
	}
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			in.Write(line)
			var m message
			if json.Unmarshal(line, &m) == nil && m.Method != "" && m.ID != nil {
				if bytes.HasPrefix(m.ID, []byte(`"mcpshim-`)) || m.Method == "initialize" {
					if werr := write([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"chaos","version":"1"}}}` + "\n")); werr != nil {
						return 1
					}
				} else {
					pending = append(pending, m.ID)
				}
			}
		acts:
			// A few actions per line read, until one says to read on.
			for {
				switch act := rng.IntN(100); {
				case act < 2:
					fmt.Fprintln(st.err, "chaos: dying between lines")
					return 1
				case act < 60 && len(pending) > 0:
					i := rng.IntN(len(pending))
					id := pending[i]
					pending = append(pending[:i], pending[i+1:]...)
					if answer(id) != nil {
						return 1
					}
				case act < 70:
					if write([]byte(`{"method":"notifications/message","jsonrpc":"2.0","params":{"level":"info","data":"tick"}}`+"\n")) != nil {
						return 1
					}
				case act < 75:
					serverReqs++
					if write([]byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":"srv-%d-%d","method":"roots/list"}`+"\n", pid, serverReqs))) != nil {
						return 1
					}
				default:
					break acts
				}
			}
		}
		if err != nil {
			for _, id := range pending {
				if answer(id) != nil {
					return 1
				}
			}
			return 0
		}
	}
}
