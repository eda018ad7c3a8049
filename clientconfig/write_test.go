package clientconfig

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestReplace(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, ".claude.json")
	if err := os.WriteFile(file, []byte(`{"v": 1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	orig, _ := os.Stat(file) // 0600 on Unix; Windows has no modes to keep
	backup := BackupPath(filepath.Join(dir, "state", "backups"), file, "wrap", time.Now())
	if err := Replace(file, []byte(`{"v": 1}`), []byte(`{"v": 2}`), backup); err != nil {
		t.Fatalf("Replace(%s): %v", file, err)
	}
	for path, want := range map[string]string{file: `{"v": 2}`, backup: `{"v": 1}`} {
		got, err := os.ReadFile(path)
		fi, serr := os.Stat(path)
		if err != nil || serr != nil || string(got) != want || fi.Mode().Perm() != orig.Mode().Perm() {
			t.Errorf("%s after Replace: %q, mode %v (%v, %v); want %q, %v", path, got, fi.Mode().Perm(), err, serr, want, orig.Mode().Perm())
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("dir holds %v after Replace, want the file and the state directory only", entries)
	}
}

func TestReplaceRefusesAChangedFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), ".claude.json")
	if err := os.WriteFile(file, []byte(`{"numStartups": 2}`), 0o600); err != nil {
		t.Fatal(err)
	}
	err := Replace(file, []byte(`{"numStartups": 1}`), []byte(`{}`), filepath.Join(t.TempDir(), "b"))
	got, _ := os.ReadFile(file)
	if !errors.Is(err, ErrChanged) || string(got) != `{"numStartups": 2}` {
		t.Errorf("Replace over a file changed since it was read: %v, file %q; want ErrChanged and the file kept", err, got)
	}
}
