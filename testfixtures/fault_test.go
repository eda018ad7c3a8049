package testfixtures

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"
)

func TestFaultSpecRoundTrip(t *testing.T) {
	for _, s := range []string{
		"era=both open=legacy at=start do=none say=nothing then=stay",
		"era=legacy open=dual at=read:2 do=slow:3s say=chatter then=stay",
		"era=modern open=modern at=midline:1 do=exit:3 say=buried then=stay",
		"era=both open=legacy at=list do=kill:SIGKILL say=nothing then=leave",
		"era=both open=legacy at=read:4 do=request say=nothing then=noanswer",
	} {
		sp, err := ParseFaultSpec(s)
		if err != nil || sp.String() != s {
			t.Errorf("ParseFaultSpec(%q): got %q, %v; want it back", s, sp, err)
		}
	}
	for _, bad := range []string{"era=old", "at=read", "at=start:2", "do=exit", "do=slow:soon", "say=shout", "then=later", "nokey", "color=red"} {
		if _, err := ParseFaultSpec(bad); err == nil {
			t.Errorf("ParseFaultSpec(%q): got no error, want one", bad)
		}
	}
}

// faultSession plays the fault client against the fault fixture over pipes.
func faultSession(t *testing.T, spec string, patience time.Duration) (got FaultGot, code int, stderr string) {
	t.Helper()
	sp, err := ParseFaultSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var errb bytes.Buffer
	done := make(chan int)
	go func() {
		code := Serve("fault", []string{"--spec", spec}, inR, outW, &errb)
		outW.Close()
		inR.Close()
		done <- code
	}()
	got = PlayFaultClient(context.Background(), sp, NewClient(inW, outR), func(string) time.Duration { return patience })
	inW.Close()
	code = <-done
	return got, code, errb.String()
}

func TestFaultFixture(t *testing.T) {
	tests := []struct {
		spec, got string
		code      int
		cause     bool
	}{
		{"era=both open=legacy", "result", 0, false},
		{"era=legacy open=dual", "result", 0, false},
		{"era=modern open=modern", "result", 0, false},
		{"era=both open=legacy at=read:1 do=exit:3 say=cause", "initialize: eof", 3, true},
		{"era=both open=legacy at=midline:3 do=exit:1 say=buried", "tools/list: eof", 1, true},
		{"era=both open=legacy at=read:2 do=hang", "tools/list: none", 0, false},
		{"era=both open=legacy at=start do=ignore:tools/list", "tools/list: none", 0, false},
		{"era=both open=legacy at=read:3 do=error:-32603", "tools/list: error -32603 " + FaultErrorMessage, 0, false},
		{"era=legacy open=dual at=read:2 do=error:-32602", "initialize: error -32602 " + FaultErrorMessage, 0, false},
		{"era=both open=legacy at=start do=version", "initialize: version", 0, false},
		{"era=both open=modern at=start do=version", "server/discover: version", 0, false},
		{"era=both open=legacy at=start do=noise", "result", 0, false},
		{"era=both open=legacy at=start do=request", "result", 0, false},
		{"era=both open=legacy at=start do=request then=noanswer", "tools/call: none", 0, false},
		{"era=both open=legacy at=list do=closeout say=cause", "tools/call: eof", 0, true},
		{"era=both open=legacy at=start do=exit:1 then=leave", "left", 1, false},
	}
	for _, tt := range tests {
		// A wait that must end unanswered is short; the others are long for a loaded machine.
		patience := 20 * time.Second
		if strings.HasSuffix(tt.got, ": none") {
			patience = 300 * time.Millisecond
		}
		got, code, stderr := faultSession(t, tt.spec, patience)
		if got.String() != tt.got || code != tt.code || strings.Contains(stderr, FaultCause) != tt.cause {
			t.Errorf("fault %q: got %s, exit %d, stderr %.80q; want %s, exit %d, cause on stderr %v", tt.spec, got, code, stderr, tt.got, tt.code, tt.cause)
		}
	}
}
