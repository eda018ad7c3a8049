package probe

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParseCanary(t *testing.T) {
	cases := []struct {
		spec           string
		server, tool   string
		args           string
		match, nomatch string
	}{
		{`rates:get_rate:{"currency":"EUR"}:^EUR/USD [0-9.]+`, "rates", "get_rate", `{"currency":"EUR"}`, "EUR/USD 1.08 as of", "upstream 401"},
		{`s:t:{}:a:b`, "s", "t", `{}`, "a:b", "ab"},
		{`s:t:{"url":"http://x:1/"}:ok`, "s", "t", `{"url":"http://x:1/"}`, "ok", "no"},
	}
	for _, c := range cases {
		got, err := ParseCanary(c.spec)
		if err != nil {
			t.Errorf("ParseCanary(%q): %v", c.spec, err)
			continue
		}
		if got.Server != c.server || got.Tool != c.tool || string(got.Args) != c.args ||
			!got.Expect.MatchString(c.match) || got.Expect.MatchString(c.nomatch) {
			t.Errorf("ParseCanary(%q) = %s %s %s /%s/, want %s %s %s matching %q not %q",
				c.spec, got.Server, got.Tool, got.Args, got.Expect, c.server, c.tool, c.args, c.match, c.nomatch)
		}
	}
	for _, bad := range []string{"", "s", "s:t", "s:t:{}", "s:t:[1]:x", `s:t:{"a":1}x`, "s:t:{}:(", ":t:{}:x", "s::{}:x", "s:t:nojson:x"} {
		if _, err := ParseCanary(bad); !errors.Is(err, ErrBadCanary) {
			t.Errorf("ParseCanary(%q): got %v, want ErrBadCanary", bad, err)
		}
	}
}

// A JSON-RPC error, isError and an answer that fails the check are
// three failures, each reported differently.
func TestCanaries(t *testing.T) {
	cases := []struct {
		target  Target
		spec    string
		ok      bool
		failure string
		detail  string
	}{
		{fixture("healthy"), `healthy:echo:{"text":"EUR/USD 1.08"}:^EUR/USD`, true, "", "echo -> EUR/USD 1.08"},
		{fixture("healthy"), `healthy:echo:{"text":"stale"}:^EUR/USD`, false, CanaryMismatch, `echo answered "stale", which fails /^EUR/USD/`},
		{fixture("healthy"), `healthy:get_rate:{}:.`, false, CanaryMissingTool, "tools/list has no get_rate"},
		{fixture("iserror"), `iserror:fetch:{"url":"x"}:.`, false, CanaryIsError, "fetch returned isError: upstream answered 401: invalid api key"},
		{fixture("rpc-error-tool"), `rpc-error-tool:lookup:{"id":"1"}:.`, false, CanaryRPCError, "lookup: JSON-RPC error -32602: unknown tool"},
	}
	for _, c := range cases {
		cn, err := ParseCanary(c.spec)
		if err != nil {
			t.Fatal(err)
		}
		r := probeOne(t, c.target, 5*time.Second, func(o *Options) { o.Canaries = []Canary{cn} })
		if r.Outcome != Ready || len(r.Canaries) != 1 {
			t.Fatalf("canary %s: got %s %q with %d canary results, want READY with one", c.spec, r.Outcome, r.Detail, len(r.Canaries))
		}
		got := r.Canaries[0]
		if got.OK != c.ok || got.Failure != c.failure || got.Detail != c.detail {
			t.Errorf("canary %s: got ok=%v %q %q, want ok=%v %q %q", c.spec, got.OK, got.Failure, got.Detail, c.ok, c.failure, c.detail)
		}
		if r.CanaryFailed() == c.ok {
			t.Errorf("canary %s: CanaryFailed() = %v, want %v", c.spec, r.CanaryFailed(), !c.ok)
		}
	}
}

func TestCanaryOnlyRunsOnItsServer(t *testing.T) {
	cn, _ := ParseCanary(`other:echo:{"text":"x"}:x`)
	r := probeOne(t, fixture("healthy"), 5*time.Second, func(o *Options) { o.Canaries = []Canary{cn} })
	if len(r.Canaries) != 0 || strings.Contains(strings.Join(timelineMethods(r), " "), "tools/call") {
		t.Fatalf("canary for server other, probing healthy: got %v and timeline %v, want no tools/call", r.Canaries, timelineMethods(r))
	}
}

func timelineMethods(r Result) []string {
	var out []string
	for _, s := range r.Timeline {
		out = append(out, s.Method)
	}
	return out
}
