package cause

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEngineFailures: the docker CLI's own failures (testdata/docker*, real
// output of two client versions) give the line that states the problem,
// never the usage pointer after it, and the advice for it.
func TestEngineFailures(t *testing.T) {
	tests := []struct {
		file, want, advice string
	}{
		{"daemon-down.txt", "docker: Cannot connect to the Docker daemon at unix:///var/run/docker-not-running.sock. Is the docker daemon running?", "the container engine is not running"},
		{"no-such-image.txt", "docker: Error response from daemon: No such image: mcp/time:latest", "the image is not on this machine and the run may not pull it"},
		{"pull-failed.txt", `docker: Error response from daemon: Get "https://registry-1.docker.io/v2/": dial tcp: lookup registry-1.docker.io on 127.0.0.53:53: no such host`, "the registry could not be reached"},
	}
	for _, dir := range []string{"docker20", "docker28"} {
		for _, tt := range tests {
			b, err := os.ReadFile(filepath.Join("testdata", dir, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			got, stated := Choose(strings.Split(string(b), "\n"))
			if strings.TrimSuffix(got, ".") != tt.want || !stated {
				t.Errorf("%s/%s: Choose = %q, %v, want %q, true", dir, tt.file, got, stated, tt.want)
			}
			if a := Advice(got); !strings.Contains(a, tt.advice) {
				t.Errorf("%s/%s: Advice(%q) = %q, want it to say %q", dir, tt.file, got, a, tt.advice)
			}
		}
	}
	for _, line := range []string{"Error: WEATHER_API_KEY is not set", "fatal: missing API key", "docker: unknown flag: --bogus"} {
		if a := Advice(line); a != "" {
			t.Errorf("Advice(%q) = %q, want none: not an engine failure it knows", line, a)
		}
	}
}
