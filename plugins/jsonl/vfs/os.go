//go:build unix

package vfs

import (
	"io/fs"
	"os"
	"slices"

	"golang.org/x/sys/unix"
)

// OS returns the FS of the operating system: os.OpenFile, fdatasync (on
// macOS F_FULLFSYNC), link(2), flock(2) and fsync of directories.
func OS() FS { return osFS{} }

type osFS struct{}

func (osFS) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}

func (osFS) Stat(name string) (FileInfo, error) {
	var st unix.Stat_t
	if err := unix.Stat(name, &st); err != nil {
		return FileInfo{}, &fs.PathError{Op: "stat", Path: name, Err: err}
	}
	return infoOf(&st), nil
}

func (osFS) Lstat(name string) (FileInfo, error) {
	var st unix.Stat_t
	if err := unix.Lstat(name, &st); err != nil {
		return FileInfo{}, &fs.PathError{Op: "lstat", Path: name, Err: err}
	}
	return infoOf(&st), nil
}

func (osFS) Mkdir(name string, perm fs.FileMode) error { return os.Mkdir(name, perm) }

func (osFS) Link(oldname, newname string) error { return os.Link(oldname, newname) }

func (osFS) Rename(oldname, newname string) error { return os.Rename(oldname, newname) }

func (osFS) Remove(name string) error { return os.Remove(name) }

func (osFS) ReadDir(name string) ([]string, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	return names, nil
}

func (osFS) SyncDir(name string) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

type osFile struct{ f *os.File }

func (o osFile) ReadAt(p []byte, off int64) (int, error)  { return o.f.ReadAt(p, off) }
func (o osFile) WriteAt(p []byte, off int64) (int, error) { return o.f.WriteAt(p, off) }
func (o osFile) Truncate(size int64) error                { return o.f.Truncate(size) }
func (o osFile) Close() error                             { return o.f.Close() }

func (o osFile) Sync() error {
	if err := datasync(o.f); err != nil {
		return &fs.PathError{Op: "fdatasync", Path: o.f.Name(), Err: err}
	}
	return nil
}

func (o osFile) Stat() (FileInfo, error) {
	var st unix.Stat_t
	err := o.control(func(fd int) error { return unix.Fstat(fd, &st) })
	if err != nil {
		return FileInfo{}, &fs.PathError{Op: "fstat", Path: o.f.Name(), Err: err}
	}
	return infoOf(&st), nil
}

func (o osFile) Lock() error {
	err := o.control(func(fd int) error { return unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB) })
	if err != nil {
		return &fs.PathError{Op: "flock", Path: o.f.Name(), Err: err}
	}
	return nil
}

func (o osFile) LockShared() error {
	err := o.control(func(fd int) error { return unix.Flock(fd, unix.LOCK_SH|unix.LOCK_NB) })
	if err != nil {
		return &fs.PathError{Op: "flock", Path: o.f.Name(), Err: err}
	}
	return nil
}

func (o osFile) Unlock() error {
	err := o.control(func(fd int) error { return unix.Flock(fd, unix.LOCK_UN) })
	if err != nil {
		return &fs.PathError{Op: "flock", Path: o.f.Name(), Err: err}
	}
	return nil
}

// control runs fn on the file descriptor without File.Fd's side effects.
func (o osFile) control(fn func(fd int) error) error {
	rc, err := o.f.SyscallConn()
	if err != nil {
		return err
	}
	var inner error
	if err := rc.Control(func(fd uintptr) { inner = fn(int(fd)) }); err != nil {
		return err
	}
	return inner
}

func infoOf(st *unix.Stat_t) FileInfo {
	mode := fs.FileMode(st.Mode & 0o777)
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		mode |= fs.ModeDir
	case unix.S_IFLNK:
		mode |= fs.ModeSymlink
	}
	return FileInfo{
		Size:    st.Size,
		Mode:    mode,
		Dev:     uint64(st.Dev),
		Ino:     uint64(st.Ino),
		MtimeNs: st.Mtim.Nano(),
		CtimeNs: st.Ctim.Nano(),
	}
}
