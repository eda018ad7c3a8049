package safefile

import (
	"os"
	"path/filepath"
	"testing"
)

// TestPrivate: what this package creates (a directory and its parents, a
// file appended to, a file replaced) is its owner's only, and CheckPrivate
// says so; a file open to everyone fails CheckPrivate. On Windows that is the
// owners' DACL (0600 and 0700 on Unix).
func TestPrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state", "mcpshim")
	if _, err := Dir(dir); err != nil {
		t.Fatalf("Dir(%s): %v", dir, err)
	}
	f, _, err := OpenAppend(filepath.Join(dir, "a.jsonl"))
	if err != nil {
		t.Fatalf("OpenAppend: %v", err)
	}
	for _, s := range []string{"one\n", "two\n"} {
		if _, err := f.WriteString(s); err != nil {
			t.Fatal(err)
		}
	}
	f.Close()
	if err := Write(filepath.Join(dir, "b.json"), []byte("{}"), 0o600); err != nil {
		t.Fatalf("Write: %v", err)
	}
	for _, p := range []string{dir, filepath.Dir(dir), filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.json")} {
		if err := CheckPrivate(p); err != nil {
			t.Errorf("CheckPrivate(%s) = %v, want nil", p, err)
		}
	}
	if b, _ := Read(filepath.Join(dir, "a.jsonl")); string(b) != "one\ntwo\n" {
		t.Errorf("the appended file holds %q, want both lines", b)
	}
	open := openToAll(t, filepath.Join(t.TempDir(), "open"))
	if err := CheckPrivate(open); err == nil {
		t.Errorf("CheckPrivate(%s) = nil for a file everyone may read", open)
	}
}

// TestRenameWhileOpen: a file OpenAppend holds can be renamed and removed by
// another (a second shim rotating the ledger), and the holder's writes follow
// it. On Windows that needs FILE_SHARE_DELETE.
func TestRenameWhileOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.jsonl")
	f, _, err := OpenAppend(path)
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
