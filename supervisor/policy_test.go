package supervisor

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"
)

// t0 is the fake clock's origin; every time in these tests is an offset from it.
var t0 = time.Date(2026, 1, 15, 8, 0, 0, 0, time.UTC)

func at(d time.Duration) time.Time { return t0.Add(d) }

// ran is a run from..to that completed its handshake 100ms in and exited with code.
func ran(from, to time.Duration, code int) Exit {
	return Exit{Code: code, Started: at(from), Ended: at(to), HandshakeAt: at(from + 100*time.Millisecond), EverHandshook: true}
}

// killed is ran, ended by a signal.
func killed(from, to time.Duration, sig string) Exit {
	e := ran(from, to, -1)
	e.Signal = sig
	return e
}

// silent is e without a handshake in this run; ever says whether an earlier run had one.
func silent(e Exit, ever bool) Exit {
	e.HandshakeAt, e.EverHandshook = time.Time{}, ever
	return e
}

func spawnFailed(when time.Duration) Exit {
	return Exit{Code: -1, SpawnFailed: true, Started: at(when), Ended: at(when), EverHandshook: true}
}

func restart(attempt int, delay time.Duration, reason string) Decision {
	return Decision{Restart: true, Delay: delay, Attempt: attempt, Reason: reason}
}

func giveUp(attempts int, reason string) Decision {
	return Decision{Attempt: attempts, Reason: reason, GiveUp: true}
}

func end(attempts int) Decision {
	return Decision{Attempt: attempts, Reason: "clean exit"}
}

const ms = time.Millisecond

// TestRestarterNext drives a Restarter exit by exit. The caller's clock reads each exit's
// Ended time, as the supervisor's would when it reaps the child.
func TestRestarterNext(t *testing.T) {
	type step struct {
		exit Exit
		want Decision
	}
	tests := []struct {
		name   string
		policy func(*Policy)
		steps  []step
	}{
		{
			name: "crash loop: 0, 250ms, 500ms, 1s, 2s, then give up",
			steps: []step{
				{ran(0, 1000*ms, 1), restart(1, 0, "exit code 1")},
				{ran(1000*ms, 2000*ms, 1), restart(2, 250*ms, "exit code 1")},
				{ran(2250*ms, 3250*ms, 1), restart(3, 500*ms, "exit code 1")},
				{ran(3750*ms, 4750*ms, 1), restart(4, 1000*ms, "exit code 1")},
				{ran(5750*ms, 6750*ms, 1), restart(5, 2000*ms, "exit code 1")},
				{ran(8750*ms, 9750*ms, 1), giveUp(5, "5 restarts within 10m0s")},
			},
		},
		{
			name:   "backoff stops at BackoffMax",
			policy: func(p *Policy) { p.Backoff, p.BackoffMax, p.MaxRestarts = time.Second, 3*time.Second, 10 },
			steps: []step{
				{ran(0, 10*time.Second, 1), restart(1, 0, "exit code 1")},
				{ran(10*time.Second, 20*time.Second, 1), restart(2, time.Second, "exit code 1")},
				{ran(20*time.Second, 30*time.Second, 1), restart(3, 2*time.Second, "exit code 1")},
				{ran(30*time.Second, 40*time.Second, 1), restart(4, 3*time.Second, "exit code 1")},
				{ran(40*time.Second, 50*time.Second, 1), restart(5, 3*time.Second, "exit code 1")},
			},
		},
		{
			name:   "window: both restarts still inside it",
			policy: func(p *Policy) { p.MaxRestarts, p.Window = 2, time.Minute },
			steps: []step{
				{ran(0, 10*time.Second, 1), restart(1, 0, "exit code 1")},
				{ran(10*time.Second, 30*time.Second, 1), restart(2, 250*ms, "exit code 1")},
				// The restart at 10s is 59s old.
				{ran(30*time.Second, 69*time.Second, 1), giveUp(2, "2 restarts within 1m0s")},
			},
		},
		{
			name:   "window slides: a restart exactly Window old falls out, the backoff keeps growing",
			policy: func(p *Policy) { p.MaxRestarts, p.Window = 2, time.Minute },
			steps: []step{
				{ran(0, 10*time.Second, 1), restart(1, 0, "exit code 1")},
				{ran(10*time.Second, 30*time.Second, 1), restart(2, 250*ms, "exit code 1")},
				// The restart at 10s is now exactly one Window old.
				{ran(30*time.Second, 70*time.Second, 1), restart(2, 500*ms, "exit code 1")},
				{ran(70*time.Second, 80*time.Second, 1), giveUp(2, "2 restarts within 1m0s")},
			},
		},
		{
			name: "a run up StableAfter past its handshake resets count and backoff",
			steps: []step{
				{ran(0, time.Second, 1), restart(1, 0, "exit code 1")},
				{ran(1*time.Second, 2*time.Second, 1), restart(2, 250*ms, "exit code 1")},
				{ran(2*time.Second, 3*time.Second, 1), restart(3, 500*ms, "exit code 1")},
				// Handshake at 3.1s, exit at 63.1s: exactly StableAfter.
				{ran(3*time.Second, 63100*ms, 1), restart(1, 0, "exit code 1")},
				{ran(64*time.Second, 65*time.Second, 1), restart(2, 250*ms, "exit code 1")},
			},
		},
		{
			name: "a run up just short of StableAfter resets nothing",
			steps: []step{
				{ran(0, time.Second, 1), restart(1, 0, "exit code 1")},
				{ran(1*time.Second, 61099*ms, 1), restart(2, 250*ms, "exit code 1")},
			},
		},
		{
			name: "up long but no handshake in the run: no reset",
			steps: []step{
				{ran(0, time.Second, 1), restart(1, 0, "exit code 1")},
				{silent(ran(time.Second, time.Hour/6, 1), true), restart(2, 250*ms, "exit code 1")},
			},
		},
		{
			name:  "spawn failure gives up at once",
			steps: []step{{spawnFailed(0), giveUp(0, "spawn failed")}},
		},
		{
			name:   "spawn failure gives up even under always",
			policy: func(p *Policy) { p.Mode = RestartAlways },
			steps: []step{
				{ran(0, time.Second, 0), restart(1, 0, "exit code 0")},
				{spawnFailed(time.Second), giveUp(1, "spawn failed")},
			},
		},
		{
			name:  "exit before the first run's handshake gives up",
			steps: []step{{silent(ran(0, time.Second, 1), false), giveUp(0, "exited before its first handshake")}},
		},
		{
			name:  "killed before the first run's handshake gives up",
			steps: []step{{silent(killed(0, time.Second, "SIGKILL"), false), giveUp(0, "exited before its first handshake")}},
		},
		{
			name: "a later run without a handshake is restarted",
			steps: []step{
				{ran(0, time.Second, 1), restart(1, 0, "exit code 1")},
				{silent(ran(time.Second, 2*time.Second, 1), true), restart(2, 250*ms, "exit code 1")},
			},
		},
		{
			name: "default permafail codes give up at once",
			steps: []step{
				{ran(0, time.Second, 1), restart(1, 0, "exit code 1")},
				{ran(time.Second, 2*time.Second, 127), giveUp(1, "exit code 127 is permanent")},
			},
		},
		{
			name:  "exit 78 is permanent",
			steps: []step{{ran(0, time.Second, 78), giveUp(0, "exit code 78 is permanent")}},
		},
		{
			name:   "custom permafail codes replace the defaults",
			policy: func(p *Policy) { p.PermafailCodes = []int{3} },
			steps: []step{
				{ran(0, time.Second, 127), restart(1, 0, "exit code 127")},
				{ran(time.Second, 2*time.Second, 3), giveUp(1, "exit code 3 is permanent")},
			},
		},
		{
			name:   "a signal is never a permafail code",
			policy: func(p *Policy) { p.PermafailCodes = []int{-1} },
			steps:  []step{{killed(0, time.Second, "SIGTERM"), restart(1, 0, "signal SIGTERM")}},
		},
		{
			name: "on-failure: a signal restarts, a clean exit ends",
			steps: []step{
				{killed(0, time.Second, "SIGKILL"), restart(1, 0, "signal SIGKILL")},
				{ran(time.Second, 2*time.Second, 0), end(1)},
			},
		},
		{
			name:  "on-failure: a clean exit before any handshake ends cleanly",
			steps: []step{{silent(ran(0, time.Second, 0), false), end(0)}},
		},
		{
			name:   "always: a clean exit restarts with backoff",
			policy: func(p *Policy) { p.Mode = RestartAlways },
			steps: []step{
				{ran(0, time.Second, 0), restart(1, 0, "exit code 0")},
				{ran(time.Second, 2*time.Second, 0), restart(2, 250*ms, "exit code 0")},
				{ran(2*time.Second, 3*time.Second, 2), restart(3, 500*ms, "exit code 2")},
			},
		},
		{
			name:   "always: a clean exit before the first handshake gives up",
			policy: func(p *Policy) { p.Mode = RestartAlways },
			steps:  []step{{silent(ran(0, time.Second, 0), false), giveUp(0, "exited before its first handshake")}},
		},
		{
			name:   "always: still capped by the window",
			policy: func(p *Policy) { p.Mode, p.MaxRestarts = RestartAlways, 1 },
			steps: []step{
				{ran(0, time.Second, 0), restart(1, 0, "exit code 0")},
				{ran(time.Second, 2*time.Second, 0), giveUp(1, "1 restarts within 10m0s")},
			},
		},
		{
			name:   "never: a failure gives up",
			policy: func(p *Policy) { p.Mode = RestartNever },
			steps:  []step{{ran(0, time.Second, 1), giveUp(0, "exit code 1, restart mode never")}},
		},
		{
			name:   "never: a signal gives up",
			policy: func(p *Policy) { p.Mode = RestartNever },
			steps:  []step{{killed(0, time.Second, "SIGSEGV"), giveUp(0, "signal SIGSEGV, restart mode never")}},
		},
		{
			name:   "never: a clean exit ends without giving up",
			policy: func(p *Policy) { p.Mode = RestartNever },
			steps:  []step{{ran(0, time.Second, 0), end(0)}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := DefaultPolicy()
			if tt.policy != nil {
				tt.policy(&p)
			}
			r := NewRestarter(p)
			for i, s := range tt.steps {
				got := r.Next(s.exit.Ended, s.exit)
				if got != s.want {
					t.Fatalf("step %d: Next(%v, %+v) = %+v, want %+v", i+1, s.exit.Ended.Sub(t0), s.exit, got, s.want)
				}
			}
		})
	}
}

// TestRestarterJitter checks delay × (0.8 + 0.4×Jitter()), capped at BackoffMax, for a
// fixed Jitter value: the third consecutive restart has a 500ms base delay, the ninth 30s.
func TestRestarterJitter(t *testing.T) {
	tests := []struct {
		jitter  float64
		restart int
		want    time.Duration
	}{
		{0, 1, 0},
		{0.99, 1, 0},
		{0, 3, 400 * ms},
		{0.5, 3, 500 * ms},
		{0.75, 3, 550 * ms},
		{0, 9, 24 * time.Second},
		{0.5, 9, 30 * time.Second},
		{0.99, 9, 30 * time.Second},
	}
	for _, tt := range tests {
		p := DefaultPolicy()
		p.MaxRestarts = 100
		p.Jitter = func() float64 { return tt.jitter }
		r := NewRestarter(p)
		var got Decision
		for i := range tt.restart {
			e := ran(time.Duration(i)*time.Second, time.Duration(i+1)*time.Second, 1)
			got = r.Next(e.Ended, e)
		}
		if got.Delay != tt.want {
			t.Errorf("restart %d with Jitter %v: got delay %v, want %v", tt.restart, tt.jitter, got.Delay, tt.want)
		}
	}
}

// TestRestarterJitterBounds sweeps Jitter over [0,1) and checks every delay lies within
// ±20% of the unjittered schedule and never above BackoffMax.
func TestRestarterJitterBounds(t *testing.T) {
	base := []time.Duration{0, 250 * ms, 500 * ms, time.Second, 2 * time.Second, 4 * time.Second,
		8 * time.Second, 16 * time.Second, 30 * time.Second, 30 * time.Second, 30 * time.Second}
	for j := 0.0; j < 1; j += 0.05 {
		p := DefaultPolicy()
		p.MaxRestarts = len(base)
		p.Jitter = func() float64 { return j }
		r := NewRestarter(p)
		for i, b := range base {
			e := ran(time.Duration(i)*time.Second, time.Duration(i+1)*time.Second, 1)
			got := r.Next(e.Ended, e).Delay
			lo, hi := time.Duration(float64(b)*0.8), min(time.Duration(float64(b)*1.2), p.BackoffMax)
			if got < lo || got > hi {
				t.Errorf("restart %d with Jitter %.2f: got delay %v, want within [%v, %v]", i+1, j, got, lo, hi)
			}
		}
	}
}

func TestParseRestartMode(t *testing.T) {
	tests := []struct {
		in      string
		want    RestartMode
		wantErr error
	}{
		{"on-failure", RestartOnFailure, nil},
		{"always", RestartAlways, nil},
		{"never", RestartNever, nil},
		{"", 0, ErrRestartMode},
		{"Always", 0, ErrRestartMode},
		{"on-abnormal", 0, ErrRestartMode},
	}
	for _, tt := range tests {
		got, err := ParseRestartMode(tt.in)
		if got != tt.want || !errors.Is(err, tt.wantErr) {
			t.Errorf("ParseRestartMode(%q): got %v, %v, want %v, %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestRestartModeString(t *testing.T) {
	for _, m := range []RestartMode{RestartOnFailure, RestartAlways, RestartNever} {
		got, err := ParseRestartMode(m.String())
		if got != m || err != nil {
			t.Errorf("ParseRestartMode(%q): got %v, %v, want %v, nil", m.String(), got, err, m)
		}
	}
	if got, want := RestartMode(7).String(), "RestartMode(7)"; got != want {
		t.Errorf("RestartMode(7).String(): got %q, want %q", got, want)
	}
}

func TestParsePermafailCodes(t *testing.T) {
	tests := []struct {
		in      string
		want    []int
		wantErr error
	}{
		{"78 126 127", []int{78, 126, 127}, nil},
		{"78,126,127", []int{78, 126, 127}, nil},
		{" 78, 126  127 ", []int{78, 126, 127}, nil},
		{"0 255", []int{0, 255}, nil},
		{"", nil, nil},
		{" , ", nil, nil},
		{"78 x", nil, ErrPermafailCode},
		{"256", nil, ErrPermafailCode},
		{"-1", nil, ErrPermafailCode},
	}
	for _, tt := range tests {
		got, err := ParsePermafailCodes(tt.in)
		if !slices.Equal(got, tt.want) || !errors.Is(err, tt.wantErr) {
			t.Errorf("ParsePermafailCodes(%q): got %v, %v, want %v, %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestDefaultPolicy(t *testing.T) {
	p := DefaultPolicy()
	got := fmt.Sprint(p.Mode, p.Backoff, p.BackoffMax, p.MaxRestarts, p.Window, p.StableAfter, p.PermafailCodes, p.Jitter == nil)
	want := fmt.Sprint(RestartOnFailure, 250*ms, 30*time.Second, 5, 10*time.Minute, time.Minute, []int{78, 126, 127}, true)
	if got != want {
		t.Errorf("DefaultPolicy(): got %s, want %s", got, want)
	}
}
