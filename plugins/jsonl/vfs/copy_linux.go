package vfs

import (
	"errors"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// KernelCopy copies n bytes of src at srcOff to dst at dstOff inside the
// kernel (copy_file_range(2)), without passing them through this process,
// when both are files of OS(). It returns how many bytes it copied: fewer
// than n — 0 when a file is not one of OS() — when the kernel cannot copy
// the rest (a file system without the call), which the caller then copies
// itself.
func KernelCopy(dst File, dstOff int64, src File, srcOff int64, n int64) (int64, error) {
	d, dok := dst.(osFile)
	s, sok := src.(osFile)
	if !dok || !sok {
		return 0, nil
	}
	var done int64
	err := d.control(func(dfd int) error {
		return s.control(func(sfd int) error {
			for done < n {
				so, do := srcOff+done, dstOff+done
				k, err := unix.CopyFileRange(sfd, &so, dfd, &do, int(min(n-done, 1<<30)), 0)
				switch {
				case errors.Is(err, unix.EINTR):
					continue
				case errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EXDEV), errors.Is(err, unix.EINVAL), errors.Is(err, unix.EOPNOTSUPP):
					return nil // not on this file system: the caller copies the rest
				case err != nil:
					return os.NewSyscallError("copy_file_range", err)
				case k == 0:
					return io.ErrUnexpectedEOF // src ends before srcOff+n
				}
				done += int64(k)
			}
			return nil
		})
	})
	return done, err
}
