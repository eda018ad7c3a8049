package ledger

import (
	"os"
	"unsafe"

	"golang.org/x/sys/windows"
)

// OpenRead opens a ledger file for reading, sharing every access: a reader
// (ledger tail -f) must not keep the shims writing it from rotating it,
// which os.Open, not sharing delete access, would.
func OpenRead(path string) (*os.File, error) {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	h, err := windows.CreateFile(p, windows.GENERIC_READ, windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE,
		nil, windows.OPEN_EXISTING, windows.FILE_ATTRIBUTE_NORMAL, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(h), path), nil
}

// fileStandardInfo is FILE_STANDARD_INFO.
type fileStandardInfo struct {
	AllocationSize, EndOfFile int64
	NumberOfLinks             uint32
	DeletePending, Directory  bool
}

// deletePending reports whether f was deleted while open. Where Windows
// deletes the old way (before Windows 10 1809, some file systems, wine), the
// name stays, on a file nobody can open, until the last handle closes: the
// ledger must let go of it to write where readers look.
func deletePending(f *os.File) bool {
	var info fileStandardInfo
	err := windows.GetFileInformationByHandleEx(windows.Handle(f.Fd()), windows.FileStandardInfo, (*byte)(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info)))
	return err == nil && info.DeletePending
}
