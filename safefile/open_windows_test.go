package safefile

import (
	"testing"
	"unsafe"

	"golang.org/x/sys/windows"
)

// openToAll creates path with a DACL letting Everyone (WD) in.
func openToAll(t *testing.T, path string) string {
	sd, err := windows.SecurityDescriptorFromString("D:P(A;;FA;;;WD)")
	if err != nil {
		t.Fatal(err)
	}
	p, _ := windows.UTF16PtrFromString(path)
	sa := &windows.SecurityAttributes{Length: uint32(unsafe.Sizeof(windows.SecurityAttributes{})), SecurityDescriptor: sd}
	h, err := windows.CreateFile(p, windows.GENERIC_WRITE, 0, sa, windows.CREATE_NEW, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	windows.CloseHandle(h)
	return path
}
