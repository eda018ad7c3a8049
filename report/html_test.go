package report

import (
	"bytes"
	"html/template"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
)

// hostile are strings a server or a ledger can put on the page: markup,
// quotes that end an attribute, a </title> that ends the tooltip, entities,
// NUL, invalid UTF-8, noncharacters, and template syntax.
var hostile = []string{
	"", "crashy", `"><script>alert(1)</script>`, `' onmouseover='alert(1)`, "</title><script>x()</script>",
	"a+b&c", "&amp;", "\x00", "\xff\xfe", "\uFDD0\uFFFE", "{{.Server}}", "]]><!--", "é 世界 ✕", "line\nbreak\ttab",
	"javascript:alert(1)", "<svg onload=alert(1)>", "</section></svg>",
}

// pageTemplate is the html/template the page was written with before
// writePage; the page must stay byte for byte what it wrote.
func pageTemplate(t *testing.T) *template.Template {
	b, err := os.ReadFile("testdata/html/page.tmpl")
	if err != nil {
		t.Fatal(err)
	}
	return template.Must(template.New("report").Parse(string(b)))
}

func randomView(r *rand.Rand) reportView {
	str := func() string {
		var b strings.Builder
		for n := r.IntN(3); n >= 0; n-- {
			b.WriteString(hostile[r.IntN(len(hostile))])
		}
		return b.String()
	}
	num := func() float64 {
		switch r.IntN(12) {
		case 0:
			return math.Inf(1)
		case 1:
			return math.Inf(-1)
		case 2:
			return math.NaN()
		case 3:
			return -r.Float64() * 100
		}
		return r.Float64() * 2000
	}
	v := reportView{Generated: str(), Files: r.IntN(3), Skipped: r.IntN(2) * r.IntN(50), Runs: r.IntN(9), Failed: r.IntN(3)}
	for c := r.IntN(4); c > 0; c-- {
		cv := chainView{Server: str(), Start: str(), Duration: str(), Failed: r.IntN(2) == 0, Height: r.IntN(900), Dropped: r.IntN(2) * r.IntN(9)}
		for n := r.IntN(4); n > 0; n-- {
			cv.Runs = append(cv.Runs, runBadge{str(), str(), str(), str(), r.IntN(2) == 0, r.IntN(2) == 0, r.IntN(2) == 0})
		}
		for n := r.IntN(4); n > 0; n-- {
			cv.Ticks = append(cv.Ticks, svgTick{num(), str()})
		}
		for n := r.IntN(5); n > 0; n-- {
			row := svgRow{Y: r.IntN(900), Label: str(), Head: r.IntN(2) == 0, Class: str()}
			for m := r.IntN(3); m > 0; m-- {
				row.Bars = append(row.Bars, svgBar{num(), num(), str(), str()})
			}
			for m := r.IntN(3); m > 0; m-- {
				row.Marks = append(row.Marks, svgMark{num(), str(), str(), str()})
			}
			cv.Rows = append(cv.Rows, row)
		}
		for n := r.IntN(3); n > 0; n-- {
			cv.Links = append(cv.Links, svgLink{num(), num(), num(), num(), str()})
		}
		v.Chains = append(v.Chains, cv)
	}
	return v
}

func TestPageIsWhatTheTemplateWrote(t *testing.T) {
	tmpl := pageTemplate(t)
	r := rand.New(rand.NewPCG(28, 1))
	views := []reportView{{}}
	for range 500 {
		views = append(views, randomView(r))
	}
	for i, v := range views {
		var want, got bytes.Buffer
		if err := tmpl.Execute(&want, v); err != nil {
			t.Fatal(err)
		}
		if err := writePage(&got, v); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			g, w := got.String(), want.String()
			at := 0
			for at < len(g) && at < len(w) && g[at] == w[at] {
				at++
			}
			t.Fatalf("view %d: page differs from the template's at byte %d:\ngot  %q\nwant %q", i, at, g[at:min(len(g), at+120)], w[at:min(len(w), at+120)])
		}
	}
}

// TestPageEscapesServerStrings proves a hostile server name, reason or
// label cannot add markup or script to the page: the page keeps exactly its
// own tags however the strings are spelled.
func TestPageEscapesServerStrings(t *testing.T) {
	var clean, dirty bytes.Buffer
	view := func(s string) reportView {
		return reportView{Generated: s, Runs: 1, Chains: []chainView{{
			Server: s, Start: s, Duration: s, Failed: true, Height: 50,
			Runs:  []runBadge{{s, s, s, s, true, true, true}},
			Ticks: []svgTick{{1, s}},
			Rows:  []svgRow{{Y: 24, Label: s, Head: true, Class: s, Bars: []svgBar{{1, 2, s, s}}, Marks: []svgMark{{1, s, s, s}}}},
			Links: []svgLink{{1, 2, 3, 4, s}},
		}}}
	}
	if err := writePage(&clean, view("x")); err != nil {
		t.Fatal(err)
	}
	for _, s := range hostile {
		dirty.Reset()
		if err := writePage(&dirty, view(s)); err != nil {
			t.Fatal(err)
		}
		for _, c := range []string{"<", ">", `"`, "'"} {
			if got, want := strings.Count(dirty.String(), c), strings.Count(clean.String(), c); got != want {
				t.Errorf("server string %q: the page has %d %q, want the page's own %d", s, got, c, want)
			}
		}
		if strings.Contains(dirty.String(), "\x00") {
			t.Errorf("server string %q: NUL reached the page", s)
		}
	}
}
