package ownerfile

import (
	"os"
	"path/filepath"
	"testing"
)

// TestOwnerOnly: every way this package creates a file or a directory
// leaves it to its owner, and Check says so; a file open to everyone
// fails Check.
func TestOwnerOnly(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state", "mcpshim")
	if err := MkdirAll(dir); err != nil {
		t.Fatalf("MkdirAll(%s): %v", dir, err)
	}
	f, err := OpenAppend(filepath.Join(dir, "a.jsonl"))
	if err != nil {
		t.Fatalf("OpenAppend: %v", err)
	}
	for _, s := range []string{"one\n", "two\n"} {
		if _, err := f.WriteString(s); err != nil {
			t.Fatal(err)
		}
	}
	f.Close()
	tmp, err := CreateTemp(dir, ".cache.*.tmp")
	if err != nil {
		t.Fatalf("CreateTemp: %v", err)
	}
	tmp.Close()
	if err := WriteFile(filepath.Join(dir, "b.json"), []byte("{}")); err != nil {
		t.Fatalf("WriteFile: %v", err)
	}
	for _, p := range []string{dir, filepath.Dir(dir), filepath.Join(dir, "a.jsonl"), tmp.Name(), filepath.Join(dir, "b.json")} {
		if err := Check(p); err != nil {
			t.Errorf("Check(%s) = %v, want nil", p, err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.jsonl")); string(b) != "one\ntwo\n" {
		t.Errorf("the appended file holds %q, want both lines", b)
	}
	open := openToAll(t, filepath.Join(t.TempDir(), "open"))
	if err := Check(open); err == nil {
		t.Errorf("Check(%s) = nil for a file everyone may read", open)
	}
}

// TestRenameWhileOpen: a file OpenAppend holds can be renamed and removed
// by another (a second shim rotating the ledger), and the holder's writes
// follow it.
func TestRenameWhileOpen(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.jsonl")
	f, err := OpenAppend(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.WriteString("before\n")
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatalf("rename a file another handle holds: %v", err)
	}
	f.WriteString("after\n")
	if b, _ := os.ReadFile(path + ".1"); string(b) != "before\nafter\n" {
		t.Errorf("the renamed file holds %q, want both lines", b)
	}
	if err := os.Remove(path + ".1"); err != nil {
		t.Errorf("remove a file another handle holds: %v", err)
	}
}
