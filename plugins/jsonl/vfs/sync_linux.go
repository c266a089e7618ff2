package vfs

import (
	"os"

	"golang.org/x/sys/unix"
)

// datasync is fdatasync(2): data and size, not the other metadata.
func datasync(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var inner error
	if err := rc.Control(func(fd uintptr) {
		for {
			inner = unix.Fdatasync(int(fd))
			if inner != unix.EINTR {
				return
			}
		}
	}); err != nil {
		return err
	}
	return inner
}
