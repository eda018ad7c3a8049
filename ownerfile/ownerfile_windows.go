package ownerfile

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"unsafe"

	"golang.org/x/sys/windows"
)

// owners is the SDDL of the access this package gives: full control to the
// user running the shim, SYSTEM (SY) and Administrators (BA), inherited by
// what a directory holds (OICI), none from its parent (P).
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

// MkdirAll creates dir and its missing parents; those it creates grant the
// owners only.
func MkdirAll(dir string) error {
	if st, err := os.Stat(dir); err == nil {
		if !st.IsDir() {
			return &os.PathError{Op: "mkdir", Path: dir, Err: windows.ERROR_ALREADY_EXISTS}
		}
		return nil
	}
	if parent := filepath.Dir(dir); parent != dir {
		if err := MkdirAll(parent); err != nil {
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

// create is CreateFile with the owners' access for a file it creates.
func create(path string, access, share, disposition uint32) (*os.File, error) {
	sa, err := owners()
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	// A symbolic link is opened, not followed; regular refuses it.
	h, err := windows.CreateFile(p, access, share, sa, disposition, windows.FILE_ATTRIBUTE_NORMAL|windows.FILE_FLAG_OPEN_REPARSE_POINT, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return regular(h, path)
}

// regular is h as a file, unless what was opened is a symbolic link (or
// another reparse point) or a directory: a planted link must not send the
// writes where it points.
func regular(h windows.Handle, path string) (*os.File, error) {
	var info windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &info); err != nil {
		windows.CloseHandle(h)
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	if info.FileAttributes&(windows.FILE_ATTRIBUTE_REPARSE_POINT|windows.FILE_ATTRIBUTE_DIRECTORY) != 0 {
		windows.CloseHandle(h)
		return nil, &os.PathError{Op: "open", Path: path, Err: errors.New("not a regular file (a symbolic link?)")}
	}
	return os.NewFile(uintptr(h), path), nil
}

// OpenAppend opens path for appending, as os.OpenFile with O_APPEND would,
// creating it for the owners only, and sharing delete access: without
// FILE_SHARE_DELETE no other process could rename (rotate) or delete the
// file while this one holds it.
func OpenAppend(path string) (*os.File, error) {
	const access = windows.FILE_APPEND_DATA | windows.FILE_WRITE_ATTRIBUTES | windows.FILE_WRITE_EA |
		windows.STANDARD_RIGHTS_WRITE | windows.SYNCHRONIZE
	return create(path, access, windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, windows.OPEN_ALWAYS)
}

// CreateTemp creates a new file in dir for the owners only, its name
// pattern with the last "*" replaced by a random string, as os.CreateTemp.
func CreateTemp(dir, pattern string) (*os.File, error) {
	prefix, suffix := pattern, ""
	if i := lastStar(pattern); i >= 0 {
		prefix, suffix = pattern[:i], pattern[i+1:]
	}
	for try := 0; ; try++ {
		name := filepath.Join(dir, prefix+strconv.FormatUint(uint64(rand.Uint32()), 10)+suffix)
		f, err := create(name, windows.GENERIC_READ|windows.GENERIC_WRITE, windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, windows.CREATE_NEW)
		if err == nil || !errors.Is(err, windows.ERROR_FILE_EXISTS) || try == 100 {
			return f, err
		}
	}
}

func lastStar(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '*' {
			return i
		}
	}
	return -1
}

// WriteFile writes data to path, creating it for the owners only (a file
// that exists keeps its access).
func WriteFile(path string, data []byte) error {
	f, err := create(path, windows.GENERIC_WRITE, windows.FILE_SHARE_READ, windows.OPEN_ALWAYS)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Truncate(int64(len(data)))
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Check says which others than the file's owner, SYSTEM and Administrators
// its DACL lets in, or nil.
func Check(path string) error {
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
