package ledger

import (
	"os"
	"unsafe"

	"golang.org/x/sys/windows"
)

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
