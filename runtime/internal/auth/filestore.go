package auth

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/durable"
)

// maxTokenFileBytes bounds the token file read: far above any real
// number of tokens, far below what would hurt.
const maxTokenFileBytes = 64 << 20

// fileBackend is the token file: replaced whole (temporary file, fsync,
// rename, directory fsync) under an exclusive lock on <path>.lock, so
// writers never lose each other's changes and readers never see half a
// file.
type fileBackend struct {
	path string
}

func (f *fileBackend) where() string { return "token file " + strconv.Quote(f.path) }

func (f *fileBackend) close() error { return nil }

// version is the file's inode, size, modification time and mode: a
// replace always makes a new inode, a chmod changes the mode. A missing
// file is "absent".
func (f *fileBackend) version(context.Context) (string, error) {
	fi, err := os.Stat(f.path)
	if errors.Is(err, fs.ErrNotExist) {
		return "absent", nil
	}
	if err != nil {
		return "", f.ioErr("cannot stat", err)
	}
	return fileVersion(fi), nil
}

func fileVersion(fi fs.FileInfo) string {
	v := strconv.FormatInt(fi.Size(), 10) + ":" + strconv.FormatInt(fi.ModTime().UnixNano(), 10) + ":" + fi.Mode().String()
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		v += ":" + strconv.FormatUint(st.Dev, 10) + ":" + strconv.FormatUint(st.Ino, 10)
	}
	return v
}

// load reads the file, refusing one that others than its owner may read
// or write.
func (f *fileBackend) load(context.Context) (*tokenSet, string, error) {
	file, err := os.Open(f.path)
	if errors.Is(err, fs.ErrNotExist) {
		return newTokenSet(nil), "absent", nil
	}
	if err != nil {
		return nil, "", f.ioErr("cannot open", err)
	}
	defer file.Close()
	fi, err := file.Stat()
	if err != nil {
		return nil, "", f.ioErr("cannot stat", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, "", sdk.Errorf(sdk.CodeConfigInvalid, op, "%s is not a regular file", f.where())
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return nil, "", sdk.Errorf(sdk.CodeConfigInvalid, op, "%s has permissions %04o: it holds credentials, so only its owner may read it; run chmod 600 %s", f.where(), perm, f.path)
	}
	data, err := io.ReadAll(io.LimitReader(file, maxTokenFileBytes+1))
	if err != nil {
		return nil, "", f.ioErr("cannot read", err)
	}
	if len(data) > maxTokenFileBytes {
		return nil, "", sdk.Errorf(sdk.CodeConfigInvalid, op, "%s is larger than %d bytes", f.where(), maxTokenFileBytes)
	}
	set, err := parseTokenFile(data, f.where())
	if err != nil {
		return nil, "", err
	}
	return set, fileVersion(fi), nil
}

func (f *fileBackend) create(ctx context.Context, e entry) error {
	return f.update(ctx, func(s *tokenSet) (*tokenSet, error) {
		if s.find(e.Name) >= 0 {
			return nil, duplicate(e.Name, f.where())
		}
		return newTokenSet(append(s.entries, e)), nil
	})
}

func (f *fileBackend) revoke(ctx context.Context, name string) error {
	return f.update(ctx, func(s *tokenSet) (*tokenSet, error) {
		i := s.find(name)
		if i < 0 {
			return nil, unknown(name, f.where())
		}
		entries := append(s.entries[:i:i], s.entries[i+1:]...)
		return newTokenSet(entries), nil
	})
}

// update replaces the file with change's result, under the lock.
func (f *fileBackend) update(ctx context.Context, change func(*tokenSet) (*tokenSet, error)) error {
	if err := durable.MkdirAll(filepath.Dir(f.path)); err != nil {
		return f.ioErr("cannot create the directory of", err)
	}
	lock, err := os.OpenFile(f.path+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return f.ioErr("cannot open the lock file of", err)
	}
	defer lock.Close() // releases the lock
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
		return f.ioErr("cannot lock", err)
	}
	cur, _, err := f.load(ctx)
	if err != nil {
		return err
	}
	next, err := change(cur)
	if err != nil {
		return err
	}
	if err := durable.ReplaceFile(f.path, encodeTokenFile(next), 0o600); err != nil {
		return f.ioErr("cannot write", err)
	}
	return nil
}

func (f *fileBackend) ioErr(what string, err error) error {
	return sdk.Wrapf(sdk.CodeIOError, op, err, "%s %s", what, f.where())
}
