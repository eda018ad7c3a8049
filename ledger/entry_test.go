package ledger_test

import (
	"bytes"
	"slices"
	"testing"
	"time"

	"github.com/mcpshim-dev/mcpshim/ledger"
)

// EntryOf reads a Record as Decode reads the line the Record becomes, for
// every kind of value a field may hold.
func TestEntryOfAgreesWithDecode(t *testing.T) {
	r := ledger.Record{Time: time.Date(2026, 12, 1, 8, 0, 0, 123456789, time.UTC), Shim: "shim_A", Run: "run_A", Seq: 7,
		Server: "fs", PID: 42, Origin: "server", Phase: "launch", Event: "exited",
		Fields: []ledger.Field{ledger.F("s", "text"), ledger.F("empty", ""), ledger.F("t", true), ledger.F("f", false),
			ledger.F("i", 3), ledger.F("i64", int64(-4)), ledger.F("u", uint64(5)), ledger.F("x", 1.5),
			ledger.F("d", 1500*time.Microsecond), ledger.F("l", []string{"a", "b"}), ledger.F("nil_list", []string(nil)),
			ledger.F("obj", []ledger.Field{ledger.F("k", "v")}), ledger.F("pid", 43), ledger.F("s", "again")}}
	var buf bytes.Buffer
	r.Encode(&buf)
	want, err := ledger.Decode(bytes.TrimSpace(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	got := ledger.EntryOf(&r)
	if !got.Time.Equal(want.Time) || got.Shim != want.Shim || got.Run != want.Run || got.Seq != want.Seq ||
		got.Server != want.Server || got.PID != want.PID || got.Origin != want.Origin || got.Phase != want.Phase || got.Event != want.Event {
		t.Fatalf("EntryOf head = %+v, want %+v", got, want)
	}
	if !slices.Equal(got.FieldKeys(), want.FieldKeys()) {
		t.Fatalf("EntryOf keys = %v, want %v", got.FieldKeys(), want.FieldKeys())
	}
	for _, k := range append(want.FieldKeys(), "absent") {
		gi, gok := got.Int(k)
		wi, wok := want.Int(k)
		gf, gfok := got.Float(k)
		wf, wfok := want.Float(k)
		if got.Str(k) != want.Str(k) || gi != wi || gok != wok || gf != wf || gfok != wfok || got.Bool(k) != want.Bool(k) ||
			got.False(k) != want.False(k) || !slices.Equal(got.Strs(k), want.Strs(k)) || got.Has(k) != want.Has(k) {
			t.Errorf("field %q: got %q %d,%v %v,%v %v %v %q %v, want %q %d,%v %v,%v %v %v %q %v", k,
				got.Str(k), gi, gok, gf, gfok, got.Bool(k), got.False(k), got.Strs(k), got.Has(k),
				want.Str(k), wi, wok, wf, wfok, want.Bool(k), want.False(k), want.Strs(k), want.Has(k))
		}
	}
}
