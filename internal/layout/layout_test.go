// Package layout holds one test: the imports are those README's "How the
// code is laid out" states. When a rule here changes, that section changes
// with it.
package layout

import (
	"encoding/json"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/mcpshim-dev/mcpshim/"

type pkg struct {
	ImportPath string
	Imports    []string // the non-test files' own
	Deps       []string
}

// ours lists the module's packages: each with its imports and dependencies
// of this module only, without the module prefix.
func ours(t *testing.T) map[string]pkg {
	t.Helper()
	out, err := exec.Command("go", "list", "-e", "-json=ImportPath,Imports,Deps", module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	trim := func(paths []string) []string {
		var o []string
		for _, p := range paths {
			if rest, ok := strings.CutPrefix(p, module); ok {
				o = append(o, rest)
			}
		}
		return o
	}
	pkgs := map[string]pkg{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		p.ImportPath = strings.TrimPrefix(p.ImportPath, module)
		p.Imports, p.Deps = trim(p.Imports), trim(p.Deps)
		pkgs[p.ImportPath] = p
	}
	return pkgs
}

func TestImportsPointDown(t *testing.T) {
	pkgs := ours(t)
	importers := map[string][]string{}
	for _, p := range pkgs {
		for _, i := range p.Imports {
			importers[i] = append(importers[i], p.ImportPath)
		}
	}
	onlyImports := func(name string, allowed ...string) {
		for _, i := range pkgs[name].Imports {
			if !slices.Contains(allowed, i) {
				t.Errorf("%s imports %s; want only %v", name, i, allowed)
			}
		}
	}
	importedOnlyBy := func(name string, allowed ...string) {
		for _, by := range importers[name] {
			if !slices.Contains(allowed, by) {
				t.Errorf("%s is imported by %s; want only by %v", name, by, allowed)
			}
		}
	}
	notDependingOn := func(name string, below ...string) {
		for _, d := range pkgs[name].Deps {
			if slices.Contains(below, d) {
				t.Errorf("%s depends on %s", name, d)
			}
		}
	}
	for _, name := range []string{"mcp", "jsonscan", "phases", "verdict", "supervisor", "remote", "demo", "probe", "report", "lock", "tap", "proc", "ledger", "oauth", "sse"} {
		if _, ok := pkgs[name]; !ok {
			t.Fatalf("no package %s: the rules below name it", name)
		}
	}
	onlyImports("mcp", "jsonscan")
	onlyImports("jsonscan")
	onlyImports("sse")
	onlyImports("phases", "ledger")
	onlyImports("verdict", "ledger", "phases", "cause", "mcp", "termsafe")
	notDependingOn("tap", "jsonrpc", "supervisor", "remote")
	notDependingOn("proc", "mcp")
	notDependingOn("ledger", "mcp")
	notDependingOn("oauth", "jsonrpc", "ledger", "mcp")
	notDependingOn("lock", "supervisor", "remote", "probe")
	importedOnlyBy("supervisor", "cmd/mcpshim")
	importedOnlyBy("remote", "cmd/mcpshim")
	importedOnlyBy("demo", "cmd/mcpshim")
	importedOnlyBy("probe", "cmd/mcpshim", "report")
	importedOnlyBy("report", "cmd/mcpshim", "demo")
	importedOnlyBy("internal/testkit") // tests only: go list's Imports are the non-test files'
	for _, p := range pkgs {
		if slices.Contains(p.Imports, "cmd/mcpshim") {
			t.Errorf("%s imports cmd/mcpshim", p.ImportPath)
		}
	}
}
