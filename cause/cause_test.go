package cause

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The crash outputs in testdata/stderr were produced by real runtimes (node
// v20.20.2 and v22.23.5, Python 3.11, Go, Rust) running small servers that fail
// the way real ones do; see testdata/README.
func TestChooseRealCrashes(t *testing.T) {
	tests := []struct {
		file   string
		want   string
		stated bool
	}{
		{"node20/uncaught-error.txt", "Error: WEATHER_API_KEY is not set", true},
		{"node20/module-not-found.txt", "Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'zod' imported from /tmp/h18crash/module.mjs", true},
		{"node20/async-typeerror.txt", "TypeError: Cannot read properties of undefined (reading 'tools')", true},
		{"node20/fatal-exit.txt", "fatal: missing API key", true},
		{"node20/killed-banner.txt", "Secure MCP Filesystem Server running on stdio", false},
		{"node22/uncaught-error.txt", "Error: WEATHER_API_KEY is not set", true},
		{"node22/module-not-found.txt", "Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'zod' imported from /tmp/h18n22/x/module.mjs", true},
		{"node22/async-typeerror.txt", "TypeError: Cannot read properties of undefined (reading 'tools')", true},
		{"python/keyerror.txt", "KeyError: 'WEATHER_API_KEY'", true},
		{"python/module-not-found.txt", "ModuleNotFoundError: No module named 'mcp_server_weather_does_not_exist'", true},
		{"python/sys-exit.txt", "fatal: missing API key", true},
		{"go/nil-map-panic.txt", "panic: assignment to entry in nil map", true},
		{"go/log-fatal.txt", "2026/12/01 08:32:48 fatal: missing API key", true},
		{"rust/panic.txt", "thread 'main' (14589) panicked at src/main.rs:8:5: fatal: missing API key", true},
		{"rust/panic-backtrace.txt", "thread 'main' (5350) panicked at src/main.rs:8:5: fatal: missing API key", true},
		{"rust/expect-backtrace.txt", "thread 'main' (5351) panicked at src/main.rs:6:13: WEATHER_API_KEY must be set: NotPresent", true},
	}
	for _, tt := range tests {
		b, err := os.ReadFile(filepath.Join("testdata", tt.file))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(b), "\n")
		got, stated := Choose(lines)
		if got != tt.want || stated != tt.stated {
			t.Errorf("Choose(%s) = %q, %v; want %q, %v", tt.file, got, stated, tt.want, tt.stated)
		}
		// A Finder fed line by line keeps the same cause.
		var f Finder
		for _, l := range lines {
			f.Add(l)
		}
		if got, stated := f.Cause(); got != tt.want || stated != tt.stated {
			t.Errorf("Finder after %s = %q, %v; want %q, %v", tt.file, got, stated, tt.want, tt.stated)
		}
	}
}

func TestChooseLines(t *testing.T) {
	tests := []struct {
		name   string
		lines  []string
		want   string
		stated bool
	}{
		{"empty", nil, "", false},
		{"only the version line", []string{"", "Node.js v22.11.0"}, "", false},
		{"plain last line", []string{"starting", "could not open /data/db.sqlite"}, "could not open /data/db.sqlite", false},
		{"statement before a banner-less trailer", []string{"error: unknown flag --foo", "Usage: server [options]", "  --port"}, "error: unknown flag --foo", true},
		{"logger level", []string{"INFO: up", "ERROR: token expired", "INFO: shutting down"}, "ERROR: token expired", true},
		{"bracketed timestamp", []string{"[2026-12-01T08:00:00Z] fatal: no config"}, "[2026-12-01T08:00:00Z] fatal: no config", true},
		{"dotted python exception", []string{"Traceback (most recent call last):", `  File "x.py", line 1`, "httpx.ConnectError: [Errno 111] Connection refused"}, "httpx.ConnectError: [Errno 111] Connection refused", true},
		{"go fatal error", []string{"fatal error: all goroutines are asleep - deadlock!", "", "goroutine 1 [chan receive]:", "main.main()", "\t/x/main.go:5 +0x1d", "exit status 2"}, "fatal error: all goroutines are asleep - deadlock!", true},
		{"logfmt fatal_error", []string{"ready=false", "fatal_error=Cannot read properties of undefined (reading 'tools')"}, "fatal_error=Cannot read properties of undefined (reading 'tools')", true},
		{"logfmt level", []string{`time=2026-12-01T08:00:00Z level=error msg="db down"`, "level=info msg=retrying"}, `time=2026-12-01T08:00:00Z level=error msg="db down"`, true},
		{"an errors word is not an error", []string{"Loaded 0 errors from cache"}, "Loaded 0 errors from cache", false},
	}
	for _, tt := range tests {
		got, stated := Choose(tt.lines)
		if got != tt.want || stated != tt.stated {
			t.Errorf("%s: Choose(%q) = %q, %v; want %q, %v", tt.name, tt.lines, got, stated, tt.want, tt.stated)
		}
	}
}
