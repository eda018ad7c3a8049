//go:build unix

package safefile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// nobody is the uid the tests give files and directories "of another user".
const nobody = 65534

// asAnotherUser chowns path to nobody, which only root may do.
func asAnotherUser(t *testing.T, path string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("giving a file to another user needs root; run the tests as root (CI does) to cover it")
	}
	if err := os.Lchown(path, nobody, nobody); err != nil {
		t.Fatal(err)
	}
}

func TestOpenAppendNeverThroughALink(t *testing.T) {
	dir := t.TempDir()
	rc := filepath.Join(dir, "bashrc")
	os.WriteFile(rc, []byte("# rc\n"), 0o600)
	path := filepath.Join(dir, "fs.jsonl")
	os.Symlink(rc, path)
	f, _, err := OpenAppend(path)
	if f != nil || !errors.Is(err, ErrUnsafe) || !strings.Contains(err.Error(), "symbolic link (to "+rc+")") {
		t.Fatalf("OpenAppend(a link to %s): got %v, %v; want a refusal naming the link's target", rc, f, err)
	}
	if b, _ := os.ReadFile(rc); string(b) != "# rc\n" {
		t.Errorf("the link's target now holds %q", b)
	}
	if _, err := Read(path); !errors.Is(err, ErrUnsafe) {
		t.Errorf("Read(a link): got %v, want a refusal", err)
	}
	if err := Write(path, []byte("x"), 0o600); !errors.Is(err, ErrUnsafe) {
		t.Errorf("Write(a link): got %v, want a refusal", err)
	}
	if st, err := os.Lstat(path); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("Write replaced the link: %v %v", st, err)
	}
}

func TestOpenAppendRefusesWhatIsNotAFileOfOurs(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := OpenAppend(fifo); err == nil {
		t.Errorf("OpenAppend(a FIFO nobody reads): got no error, want one (and no hang)")
	}
	reader, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0) // another user listening
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	if _, _, err := OpenAppend(fifo); !errors.Is(err, ErrUnsafe) {
		t.Errorf("OpenAppend(a FIFO someone reads): got %v, want a refusal", err)
	}
	if f, _, err := OpenAppend("/dev/null"); err != nil {
		t.Errorf("OpenAppend(/dev/null), a device named on purpose: %v", err)
	} else {
		f.Close()
	}

	wide := filepath.Join(dir, "wide.jsonl")
	os.WriteFile(wide, nil, 0o644)
	os.Chmod(wide, 0o644) // past the umask
	f, note, err := OpenAppend(wide)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if st, _ := os.Stat(wide); st.Mode().Perm() != 0o600 || !strings.Contains(note, "made it 0600") {
		t.Errorf("a ledger others can read: mode %v, note %q; want 0600 and a note saying so", st.Mode().Perm(), note)
	}

	theirs := filepath.Join(dir, "theirs.jsonl")
	os.WriteFile(theirs, nil, 0o666)
	asAnotherUser(t, theirs)
	if _, _, err := OpenAppend(theirs); !errors.Is(err, ErrUnsafe) || !strings.Contains(err.Error(), "another user") {
		t.Errorf("OpenAppend(another user's file): got %v, want a refusal", err)
	}
}

func TestDir(t *testing.T) {
	root := t.TempDir()

	made := filepath.Join(root, "a", "b")
	if note, err := Dir(made); err != nil || note != "" {
		t.Fatalf("Dir(missing): %q %v", note, err)
	}
	if st, _ := os.Stat(made); st.Mode().Perm() != 0o700 {
		t.Errorf("a created directory has mode %v, want 0700", st.Mode().Perm())
	}

	open := filepath.Join(root, "open")
	os.Mkdir(open, 0o777)
	os.Chmod(open, 0o777)
	note, err := Dir(open)
	if st, _ := os.Stat(open); err != nil || st.Mode().Perm() != 0o755 || !strings.Contains(note, "made it 0755") {
		t.Errorf("Dir(our 0777 directory): mode %v, note %q, err %v; want 0755 and a note", st.Mode().Perm(), note, err)
	}

	sticky := filepath.Join(root, "tmp")
	os.Mkdir(sticky, 0o777)
	os.Chmod(sticky, 0o777|os.ModeSticky)
	if note, err := Dir(sticky); err != nil || note != "" {
		t.Errorf("Dir(a sticky shared directory like /tmp): %q %v; want it accepted as it is", note, err)
	}

	theirs := filepath.Join(root, "theirs")
	os.Mkdir(theirs, 0o755)
	asAnotherUser(t, theirs)
	if _, err := Dir(theirs); !errors.Is(err, ErrUnsafe) || !strings.Contains(err.Error(), "another user") {
		t.Errorf("Dir(another user's directory): got %v, want a refusal", err)
	}
	link := filepath.Join(root, "link")
	os.Symlink(made, link)
	asAnotherUser(t, link)
	if _, err := Dir(link); !errors.Is(err, ErrUnsafe) {
		t.Errorf("Dir(another user's link to a directory): got %v, want a refusal", err)
	}
}
