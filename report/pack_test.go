package report

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"
)

var (
	oddStrings = []string{"", "a", "run_01M8FS14GG224XMY2EFSGZ1PXB", "<script>&amp;</script>", "\u2028\u2029", "\xff\xfe", "\x00\x1f\x7f",
		"é ü 日本", `"\`, "tab\tnew\nline\r\b\f", "\U0001F600", strings.Repeat("x", 300)}
	oddFloats = []float64{0, math.Copysign(0, -1), 1, -1.5, 1e-7, 1e-6, 9.99e-7, 1e20, 1e21, 123.456, 5e-324, math.MaxFloat64, 0.1, 488.6}
)

// randomRun fills every field of a Run through reflection, independently of
// the packed form's field list, leaving about a third of them zero.
func randomRun(rng *rand.Rand) Run {
	var r Run
	var fill func(v reflect.Value)
	fill = func(v reflect.Value) {
		if v.Type() == reflect.TypeFor[time.Time]() {
			if rng.IntN(3) > 0 {
				v.Set(reflect.ValueOf(time.Unix(0, rng.Int64N(1<<62)-1<<61).UTC()))
			}
			return
		}
		if v.Kind() == reflect.Struct {
			for i := 0; i < v.NumField(); i++ {
				if v.Type().Field(i).Tag.Get("json") != "-" {
					fill(v.Field(i))
				}
			}
			return
		}
		if rng.IntN(3) == 0 {
			return
		}
		switch v.Kind() {
		case reflect.String:
			v.SetString(oddStrings[rng.IntN(len(oddStrings))])
		case reflect.Int:
			v.SetInt(rng.Int64N(1<<40) - 1<<39)
		case reflect.Bool:
			v.SetBool(true)
		case reflect.Float64:
			v.SetFloat(oddFloats[rng.IntN(len(oddFloats))])
		case reflect.Pointer:
			n := rng.IntN(5) - 2
			v.Set(reflect.ValueOf(&n))
		case reflect.Slice:
			l := make([]string, rng.IntN(4))
			for i := range l {
				l[i] = oddStrings[rng.IntN(len(oddStrings))]
			}
			v.Set(reflect.ValueOf(l))
		default:
			panic("randomRun: a field of kind " + v.Kind().String() + ": teach the test")
		}
	}
	fill(reflect.ValueOf(&r).Elem())
	return r
}

// TestPackRoundTrip: a packed run unpacks to the same run, whatever its
// fields hold, and its id is found without unpacking it.
func TestPackRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		r := randomRun(rng)
		b := r.pack(nil)
		var got Run
		got.unpack(b)
		if !reflect.DeepEqual(got, r) {
			t.Fatalf("unpack(pack(r)):\ngot  %+v\nwant %+v", got, r)
		}
		if id := packedID(b); string(id) != r.ID {
			t.Fatalf("packedID: got %q, want %q", id, r.ID)
		}
	}
}

// TestAppendJSON holds AppendJSON to encoding/json, byte for byte, at the
// depths the ledger's documents put a run (cmd/mcpshim's runJSON: a Run and
// its short id).
func TestAppendJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 5000 {
		r := randomRun(rng)
		short := oddStrings[rng.IntN(len(oddStrings))]
		shown := struct {
			Run
			Short string `json:"short"`
		}{r, short}
		for _, depth := range []int{0, 2} {
			prefix := strings.Repeat("  ", depth)
			want, werr := json.MarshalIndent(&shown, prefix, "  ")
			got, gerr := AppendJSON(nil, &r, short, depth)
			if (werr == nil) != (gerr == nil) || werr == nil && !bytes.Equal(got, want) {
				t.Fatalf("AppendJSON at depth %d:\ngot  %s (%v)\nwant %s (%v)", depth, got, gerr, want, werr)
			}
		}
	}
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		r := Run{}
		r.DurationMS = f
		_, werr := json.Marshal(&r)
		if _, err := AppendJSON(nil, &r, "", 0); err == nil || werr == nil {
			t.Errorf("AppendJSON with duration %v: got error %v, want one as encoding/json's (%v)", f, err, werr)
		}
	}
}

func BenchmarkAppendJSON(b *testing.B) {
	r := randomRun(rand.New(rand.NewPCG(5, 6)))
	b.Run("AppendJSON", func(b *testing.B) {
		var buf []byte
		for b.Loop() {
			buf, _ = AppendJSON(buf[:0], &r, "01M8FS14GG2", 2)
		}
	})
	b.Run("encoding/json", func(b *testing.B) {
		for b.Loop() {
			json.MarshalIndent(&r, "    ", "  ")
		}
	})
	b.Run("pack+unpack", func(b *testing.B) {
		var buf []byte
		for b.Loop() {
			buf = r.pack(buf[:0])
			var got Run
			got.unpack(buf)
		}
	})
}
