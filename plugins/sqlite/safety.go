package sqlite

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/durable"
)

// The file-safety rules of docs/storage.md. Every refusal is CONFIG_INVALID: the
// configuration names a place that is not safe to keep sessions in, and
// retrying will not change that. The message says how to fix it.

// fileID identifies a file across paths: the registry key of a database.
type fileID struct{ dev, ino uint64 }

func (f fileID) String() string { return fmt.Sprintf("%d:%d", f.dev, f.ino) }

func idOf(fi fs.FileInfo) fileID {
	st := fi.Sys().(*syscall.Stat_t)
	return fileID{dev: uint64(st.Dev), ino: uint64(st.Ino)}
}

func ownerOf(fi fs.FileInfo) int { return int(fi.Sys().(*syscall.Stat_t).Uid) }

func unsafeErr(format string, args ...any) *sdk.Error {
	return sdk.Errorf(sdk.CodeConfigInvalid, op, format, args...)
}

// checkParent requires the directory holding path to be a directory that
// neither group nor others may write to.
func checkParent(path string) error {
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	if err != nil {
		return unsafeErr("the directory %s of the database cannot be used: %v", strconv.Quote(dir), err)
	}
	if !fi.IsDir() {
		return unsafeErr("%s, the parent of the database, is not a directory", strconv.Quote(dir))
	}
	if perm := fi.Mode().Perm(); perm&0o022 != 0 {
		return unsafeErr("the directory %s of the database is group- or world-writable (mode %04o), so others could replace the database; run chmod go-w on it or move the database", strconv.Quote(dir), perm)
	}
	return nil
}

// checkFile requires path, when it exists, to be a regular file (not a
// symlink) owned by this user without group or other permission bits. what
// names it in messages. It returns the file's info, or nil when path does
// not exist.
func checkFile(path, what string) (fs.FileInfo, error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, unsafeErr("the %s %s cannot be examined: %v", what, strconv.Quote(path), err)
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0 && what == sideFile:
		return nil, unsafeErr("the %s %s is a symbolic link; remove it (SQLite makes its own)", what, strconv.Quote(path))
	case fi.Mode()&fs.ModeSymlink != 0:
		return nil, unsafeErr("the %s %s is a symbolic link; configure the path of the file itself", what, strconv.Quote(path))
	case !fi.Mode().IsRegular():
		return nil, unsafeErr("the %s %s is not a regular file (mode %v)", what, strconv.Quote(path), fi.Mode())
	case ownerOf(fi) != os.Getuid():
		return nil, unsafeErr("the %s %s is owned by uid %d, not by this user (uid %d); run logbook as its owner or chown it", what, strconv.Quote(path), ownerOf(fi), os.Getuid())
	case fi.Mode().Perm()&0o077 != 0:
		return nil, unsafeErr("the %s %s has mode %04o, which lets group or others in; run chmod 600 on it", what, strconv.Quote(path), fi.Mode().Perm())
	}
	return fi, nil
}

// sidecars are the files SQLite keeps beside a database.
var sidecars = []string{"-wal", "-shm", "-journal"}

const sideFile = "database side file"

// prepareFile applies the file-safety rules to the database at path,
// creating it (O_EXCL, mode 0600, directory synced) when it does not exist,
// and its directory when that is missing (see makeParent), and returns its
// identity.
func prepareFile(path string) (fileID, error) {
	if err := makeParent(path); err != nil {
		return fileID{}, err
	}
	if err := checkParent(path); err != nil {
		return fileID{}, err
	}
	for _, suffix := range sidecars {
		if _, err := checkFile(path+suffix, sideFile); err != nil {
			return fileID{}, err
		}
	}
	for {
		fi, err := checkFile(path, "database")
		if err != nil {
			return fileID{}, err
		}
		if fi != nil {
			return idOf(fi), nil
		}
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue // created meanwhile by someone else: check it as existing
		}
		if err != nil {
			return fileID{}, unsafeErr("creating the database %s: %v", strconv.Quote(path), err)
		}
		err = f.Sync()
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = durable.SyncDir(filepath.Dir(path))
		}
		if err != nil {
			return fileID{}, sdk.Wrapf(sdk.CodeIOError, op, err, "creating the database %q", path)
		}
	}
}

// makeParent creates the directory that holds path when it is missing, and
// every missing ancestor, each with mode 0700 and its parent fsynced, as
// the JSONL backend makes its root. Whatever exists, or cannot be
// examined, is left to checkParent.
func makeParent(path string) error {
	dir := filepath.Dir(path)
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err := durable.MkdirAll(dir); err != nil {
		return sdk.Wrapf(sdk.CodeIOError, op, err, "creating the directory %q of the database", dir)
	}
	return nil
}

// secureDir makes sure dir exists as a directory of this user with mode
// 0700 (no group or other bits), creating it and syncing its parent when it
// is missing. what names it in messages.
func secureDir(dir, what string) error {
	err := os.Mkdir(dir, 0o700)
	created := err == nil
	if err != nil && !errors.Is(err, fs.ErrExist) {
		return sdk.Wrapf(sdk.CodeIOError, op, err, "creating the %s %q", what, dir)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return sdk.Wrapf(sdk.CodeIOError, op, err, "examining the %s %q", what, dir)
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0 || !fi.IsDir():
		return unsafeErr("the %s %s is not a directory (mode %v); remove it", what, strconv.Quote(dir), fi.Mode())
	case ownerOf(fi) != os.Getuid():
		return unsafeErr("the %s %s is owned by uid %d, not by this user (uid %d)", what, strconv.Quote(dir), ownerOf(fi), os.Getuid())
	case fi.Mode().Perm()&0o077 != 0:
		return unsafeErr("the %s %s has mode %04o; run chmod 700 on it", what, strconv.Quote(dir), fi.Mode().Perm())
	}
	if created {
		if err := durable.SyncDir(filepath.Dir(dir)); err != nil {
			return sdk.Wrapf(sdk.CodeIOError, op, err, "syncing the parent of the %s %q", what, dir)
		}
	}
	return nil
}
