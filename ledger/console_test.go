package ledger_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/mcpshim-dev/mcpshim/ledger"
)

// TestEventLine pins the readable line of each field type: it is appended by
// hand (not Fprintf'd), so every case it handles is spelled out here.
func TestEventLine(t *testing.T) {
	at := time.Date(2026, 12, 1, 15, 4, 5, 678_000_000, time.Local)
	for _, tc := range []struct {
		rec  ledger.Record
		want string
	}{
		{ledger.Record{Event: "spawned", Phase: "launch", Run: "run_01M8RMSNP1KYPB75JGK35ZPA87", Fields: []ledger.Field{
			ledger.F("pid", 7), ledger.F("n64", int64(-3)), ledger.F("u", uint64(9)), ledger.F("ok", true), ledger.F("f", 0.25),
			ledger.F("big", 1e21), ledger.F("latency_ms", 1500*time.Microsecond), ledger.F("argv", []string{"a b", "c"}),
			ledger.F("empty", ""), ledger.F("eq", "a=b"), ledger.F("ctl", "x\x1b[2Jy"), ledger.F("bad", "\xff"),
			ledger.F("d", []ledger.Field{ledger.F("k", 1), ledger.F("s", "v w")}), ledger.F("path", "/skipped"), ledger.F("other", time.Month(3))}},
			`mcpshim[fs] 15:04:05.678 launch spawned pid=7 n64=-3 u=9 ok=true f=0.25 big=1e+21 latency_ms=1.5 argv=["a b",c] empty="" eq="a=b" ctl=x\x1b[2Jy bad="\xff" d={k=1 s="v w"} other=March run=…5ZPA87` + "\n"},
		{ledger.Record{Event: "x", Phase: "p", Origin: "server", Run: "short"}, "mcpshim[fs] 15:04:05.678 p x (server)\n"},
		// Around the plain fast path: each of these leaves it.
		{ledger.Record{Event: "x", Phase: "p", Fields: []ledger.Field{ledger.F("tab", "a\tb"), ledger.F("del", "a\x7fb"), ledger.F("utf", "héllo"),
			ledger.F("bs", `a\b`), ledger.F("nl", "a\nb"), ledger.F("q", `a"b`), ledger.F("sp", " ")}}, `mcpshim[fs] 15:04:05.678 p x tab="a\tb" del=a\x7fb utf=héllo bs=a\b nl=a\nb q="a\"b" sp=" "` + "\n"},
	} {
		var events bytes.Buffer
		l, _ := ledger.Open(ledger.Options{Server: "fs", Events: &events})
		rec := tc.rec
		rec.Time = at
		l.Write(&rec)
		if got := events.String(); got != tc.want {
			t.Errorf("event line of %+v:\ngot  %q\nwant %q", tc.rec, got, tc.want)
		}
	}
}
