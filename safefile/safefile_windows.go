package safefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

// Windows file owners are SIDs and ACLs decide who may write a directory.
// Files are opened with FILE_FLAG_OPEN_REPARSE_POINT (the nearest thing to
// O_NOFOLLOW) and what was opened is checked: a symbolic link or another
// reparse point is refused. Directories and files this package creates get
// the owners' ACL (below); a directory that exists is trusted, which under
// %LOCALAPPDATA% is the user's alone.

func ownedBySelf(fs.FileInfo) bool { return true }
func ownedByRoot(fs.FileInfo) bool { return false }

func checkDir(string, fs.FileInfo) (string, error) { return "", nil }

// owners is the security of what this package creates: full control to the
// user running mcpshim, SYSTEM (SY) and Administrators (BA), inherited by
// what a directory holds (OICI), none from its parent (P). Under wine, which
// derives ACLs from Unix modes, an inherited ACL let Everyone read; this
// one does not.
var owners = sync.OnceValues(func() (*windows.SecurityAttributes, error) {
	u, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		return nil, fmt.Errorf("who runs mcpshim: %w", err)
	}
	sd, err := windows.SecurityDescriptorFromString(fmt.Sprintf("D:P(A;OICI;FA;;;%s)(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)", u.User.Sid))
	if err != nil {
		return nil, err
	}
	return &windows.SecurityAttributes{Length: uint32(unsafe.Sizeof(windows.SecurityAttributes{})), SecurityDescriptor: sd}, nil
})

// mkdirAll creates dir and its missing parents, those it creates for the
// owners only.
func mkdirAll(dir string) error {
	if st, err := os.Stat(dir); err == nil {
		if !st.IsDir() {
			return refuse("%s is not a directory", dir)
		}
		return nil
	}
	if parent := filepath.Dir(dir); parent != dir {
		if err := mkdirAll(parent); err != nil {
			return err
		}
	}
	sa, err := owners()
	if err != nil {
		return &os.PathError{Op: "mkdir", Path: dir, Err: err}
	}
	p, err := windows.UTF16PtrFromString(dir)
	if err == nil {
		err = windows.CreateDirectory(p, sa)
	}
	if err != nil && !errors.Is(err, windows.ERROR_ALREADY_EXISTS) {
		return &os.PathError{Op: "mkdir", Path: dir, Err: err}
	}
	return nil
}

// open is CreateFile without following a link, giving a file it creates
// the owners' ACL, and refusing what is not a regular file.
func open(path string, access, share, disposition uint32) (*os.File, error) {
	sa, err := owners()
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	h, err := windows.CreateFile(p, access, share, sa, disposition, windows.FILE_ATTRIBUTE_NORMAL|windows.FILE_FLAG_OPEN_REPARSE_POINT, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	var info windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &info); err != nil {
		windows.CloseHandle(h)
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	switch {
	case info.FileAttributes&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0:
		windows.CloseHandle(h)
		return nil, symlinkErr(path)
	case info.FileAttributes&windows.FILE_ATTRIBUTE_DIRECTORY != 0:
		windows.CloseHandle(h)
		return nil, refuse("%s is not a regular file (a directory)", path)
	}
	return os.NewFile(uintptr(h), path), nil
}

// shareAll lets others read, write, rename and delete a file this process
// holds: without FILE_SHARE_DELETE no other shim could rotate a ledger this
// one writes, nor a person delete it, nor a reader (ledger tail -f) leave it
// free to rotate.
const shareAll = windows.FILE_SHARE_READ | windows.FILE_SHARE_WRITE | windows.FILE_SHARE_DELETE

// OpenAppend opens path to append to it (as O_APPEND does), creating it for
// the owners only, in a directory checked as by Dir; never through a link.
func OpenAppend(path string) (*os.File, string, error) {
	note, err := Dir(filepath.Dir(path))
	if err != nil {
		return nil, note, err
	}
	const access = windows.FILE_APPEND_DATA | windows.FILE_WRITE_ATTRIBUTES | windows.FILE_WRITE_EA |
		windows.STANDARD_RIGHTS_WRITE | windows.SYNCHRONIZE
	f, err := open(path, access, shareAll, windows.OPEN_ALWAYS)
	return f, note, err
}

// Read reads path, never through a link.
func Read(path string) ([]byte, error) {
	f, err := OpenRead(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// OpenRead opens path to read it, never through a link, sharing every
// access (see shareAll).
func OpenRead(path string) (*os.File, error) {
	return open(path, windows.GENERIC_READ, shareAll, windows.OPEN_EXISTING)
}

// OpenShared opens path to read it as os.Open does (through a link), but
// sharing every access: a reader must not keep others from renaming or
// deleting the file (a shim rotating its ledger, a client rewriting its
// config), which os.Open, not sharing delete access, would.
func OpenShared(path string) (*os.File, error) {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	h, err := windows.CreateFile(p, windows.GENERIC_READ, shareAll, nil, windows.OPEN_EXISTING, windows.FILE_ATTRIBUTE_NORMAL, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(h), path), nil
}

// createTemp creates a new file in dir for the owners only, its name the
// pattern with the last "*" replaced by a random number, as os.CreateTemp.
func createTemp(dir, pattern string) (*os.File, error) {
	prefix, suffix := pattern, ""
	if i := strings.LastIndexByte(pattern, '*'); i >= 0 {
		prefix, suffix = pattern[:i], pattern[i+1:]
	}
	for try := 0; ; try++ {
		name := filepath.Join(dir, prefix+strconv.FormatUint(uint64(rand.Uint32()), 10)+suffix)
		f, err := open(name, windows.GENERIC_READ|windows.GENERIC_WRITE|windows.DELETE, shareAll, windows.CREATE_NEW)
		if err == nil || !errors.Is(err, windows.ERROR_FILE_EXISTS) || try == 100 {
			return f, err
		}
	}
}

// CheckPrivate says which others than the file's owner, SYSTEM and
// Administrators its DACL lets in, or nil.
func CheckPrivate(path string) error {
	sd, err := windows.GetNamedSecurityInfo(path, windows.SE_FILE_OBJECT, windows.DACL_SECURITY_INFORMATION|windows.OWNER_SECURITY_INFORMATION)
	if err != nil {
		return fmt.Errorf("read the access of %s: %w", path, err)
	}
	owner, _, _ := sd.Owner()
	dacl, _, err := sd.DACL()
	if err != nil || dacl == nil {
		return fmt.Errorf("%s has no access list: everyone may read and write it", path)
	}
	u, _ := windows.GetCurrentProcessToken().GetTokenUser()
	var others []string
	for i := range uint32(dacl.AceCount) {
		var ace *windows.ACCESS_ALLOWED_ACE
		if err := windows.GetAce(dacl, i, &ace); err != nil {
			return fmt.Errorf("read the access of %s: %w", path, err)
		}
		if ace.Header.AceType != windows.ACCESS_ALLOWED_ACE_TYPE {
			continue
		}
		sid := (*windows.SID)(unsafe.Pointer(&ace.SidStart))
		switch {
		case owner != nil && sid.Equals(owner), u != nil && sid.Equals(u.User.Sid),
			sid.IsWellKnown(windows.WinLocalSystemSid), sid.IsWellKnown(windows.WinBuiltinAdministratorsSid),
			sid.IsWellKnown(windows.WinCreatorOwnerSid):
		default:
			others = append(others, sid.String())
		}
	}
	if len(others) > 0 {
		return fmt.Errorf("%s lets in %v besides its owner, SYSTEM and Administrators", path, others)
	}
	return nil
}

// Rename renames from over to. Windows refuses to replace a file that is
// open, even by a reader sharing delete access (another shim reading the
// probe cache, a client its config, a session its token): the rename is
// tried again for up to two seconds while it is refused so, as the go
// command does for the same reason (cmd/go/internal/robustio).
func Rename(from, to string) error {
	deadline := time.Now().Add(2 * time.Second)
	for {
		err := os.Rename(from, to)
		if err == nil || !errors.Is(err, windows.ERROR_ACCESS_DENIED) && !errors.Is(err, windows.ERROR_SHARING_VIOLATION) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(10 * time.Millisecond)
	}
}
