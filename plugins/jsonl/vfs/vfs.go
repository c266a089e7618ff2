// Package vfs is the small file system interface the jsonl backend reaches
// its files through (docs/storage.md): every open, write, fsync, link and
// lock goes through an FS, so tests inject ENOSPC, EIO, short writes and
// crashes without an external harness (plugins/jsonl/faultfs). OS is the
// production implementation.
package vfs

import (
	"io/fs"

	"github.com/seed-e5e476df/logbook/sdk/durable"
)

// FS is the file system the jsonl backend reaches its files through.
//
// Names are absolute paths. Errors follow the os package: they wrap
// syscall errnos, so errors.Is(err, fs.ErrNotExist) and errors.Is(err,
// fs.ErrExist) work, and File.Lock reports a lock held elsewhere with an
// error matching syscall.EWOULDBLOCK.
type FS interface {
	// OpenFile opens name with os.O_* flags; perm is the mode of a file it
	// creates.
	OpenFile(name string, flag int, perm fs.FileMode) (File, error)
	// Stat describes the file or directory name.
	Stat(name string) (FileInfo, error)
	// Lstat is Stat, except that a symbolic link is described itself (its
	// Mode has fs.ModeSymlink), not the file it points to.
	Lstat(name string) (FileInfo, error)
	// Mkdir creates the directory name; its parent must exist.
	Mkdir(name string, perm fs.FileMode) error
	// Link makes newname a second name of the file oldname; an existing
	// newname is an error (fs.ErrExist), never replaced.
	Link(oldname, newname string) error
	// Rename renames oldname to newname, replacing newname.
	Rename(oldname, newname string) error
	// Remove removes the file or empty directory name.
	Remove(name string) error
	// ReadDir returns the names in directory name, sorted.
	ReadDir(name string) ([]string, error)
	// SyncDir makes the entries of directory name durable (fsync of the
	// directory).
	SyncDir(name string) error
}

// File is an open file of an FS. ReadAt may run concurrently with every
// other method; the backend never calls the others concurrently on one
// File.
type File interface {
	// ReadAt reads len(p) bytes at off, as io.ReaderAt.
	ReadAt(p []byte, off int64) (int, error)
	// WriteAt writes p at off; n < len(p) comes with an error.
	WriteAt(p []byte, off int64) (int, error)
	// Sync makes the file's data and size durable (fdatasync).
	Sync() error
	// Truncate changes the file's size (ftruncate).
	Truncate(size int64) error
	// Stat describes the open file (fstat).
	Stat() (FileInfo, error)
	// Lock takes an exclusive advisory lock without waiting
	// (flock(LOCK_EX|LOCK_NB)); a lock held through another open file,
	// in this process or another, fails with syscall.EWOULDBLOCK. Close
	// releases it, and so does the death of the process.
	Lock() error
	// LockShared takes a shared advisory lock without waiting
	// (flock(LOCK_SH|LOCK_NB)): it fails with syscall.EWOULDBLOCK only
	// while an exclusive lock is held through another open file, and it
	// makes Lock through other open files fail while it is held. It
	// replaces an exclusive lock of this open file.
	LockShared() error
	// Unlock releases the lock (flock(LOCK_UN)).
	Unlock() error
	// Close closes the file.
	Close() error
}

// FileInfo is what Stat reports: enough for the revision of docs/storage.md
// (dev:ino:size:mtimeNs:ctimeNs).
type FileInfo struct {
	Size    int64
	Mode    fs.FileMode
	Dev     uint64
	Ino     uint64
	MtimeNs int64
	CtimeNs int64
}

// IsDir reports whether the FileInfo describes a directory.
func (fi FileInfo) IsDir() bool { return fi.Mode.IsDir() }

// Durable returns fsys as the file system sdk/durable writes through, so
// that the backend's durable writes reach the same files, and the same
// injected faults, as everything else.
func Durable(fsys FS) durable.FS { return durableFS{fsys} }

type durableFS struct{ FS }

func (d durableFS) OpenFile(name string, flag int, perm fs.FileMode) (durable.File, error) {
	f, err := d.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return f, nil
}
