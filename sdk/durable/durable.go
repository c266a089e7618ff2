// Package durable writes files so that, once a call returns, they survive
// a crash or a power loss: the data is fsynced before the name appears, and
// the directory is fsynced after.
//
// WriteFile and MkdirAll work on the operating system's file system. A
// backend that reaches its files through a file system of its own (so that
// tests inject faults) writes through On(fsys), the same code over its FS.
package durable

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/seed-e5e476df/logbook/sdk"
)

// FS is the part of a file system durable writes through. Errors follow
// the os package: an existing name is fs.ErrExist, a missing one
// fs.ErrNotExist.
type FS interface {
	// OpenFile opens name with os.O_* flags; perm is the mode of a file it
	// creates.
	OpenFile(name string, flag int, perm fs.FileMode) (File, error)
	// Mkdir creates the directory name; its parent must exist.
	Mkdir(name string, perm fs.FileMode) error
	// Link makes newname a second name of the file oldname, never
	// replacing an existing newname.
	Link(oldname, newname string) error
	// Rename renames oldname to newname, replacing newname.
	Rename(oldname, newname string) error
	// Remove removes the file or empty directory name.
	Remove(name string) error
	// SyncDir makes the entries of directory name durable.
	SyncDir(name string) error
}

// File is an open file of an FS.
type File interface {
	WriteAt(p []byte, off int64) (int, error)
	// Sync makes the file's data and size durable.
	Sync() error
	Close() error
}

// Writer writes durably through one FS. The zero value is not usable; call
// On.
type Writer struct{ fs FS }

// On returns the durable writes through fsys.
func On(fsys FS) Writer { return Writer{fs: fsys} }

// WriteFile is On(the OS file system).WriteFile.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	return On(osFS{}).WriteFile(path, data, perm)
}

// WriteFileFunc is On(the OS file system).WriteFileFunc.
func WriteFileFunc(path string, perm os.FileMode, fill func(File) error) error {
	return On(osFS{}).WriteFileFunc(path, perm, fill)
}

// ReplaceFile is On(the OS file system).ReplaceFile.
func ReplaceFile(path string, data []byte, perm os.FileMode) error {
	return On(osFS{}).ReplaceFile(path, data, perm)
}

// WriteFirstFree is On(the OS file system).WriteFirstFree.
func WriteFirstFree(path func(try int) string, tries int, data []byte, perm os.FileMode) (string, error) {
	return On(osFS{}).WriteFirstFree(path, tries, data, perm)
}

// MkdirAll is On(the OS file system).MkdirAll.
func MkdirAll(dir string) error { return On(osFS{}).MkdirAll(dir) }

// WriteFile creates the file path holding data, with permissions perm,
// never replacing a file that exists (an existing path fails with an error
// satisfying errors.Is(err, fs.ErrExist)). The data goes to a temporary
// file beside path (IsTemp names it), is fsynced, is linked to path in one
// step, and the directory is fsynced, so path is either absent or
// complete, also after a crash. The directory is created (0700) with its
// missing parents, each new one fsynced into its parent. On failure
// nothing is left at path; only a crash can leave the temporary file.
func (w Writer) WriteFile(path string, data []byte, perm os.FileMode) error {
	return w.write(path, writeData(data), perm, w.fs.Link)
}

// WriteFileFunc is WriteFile for content that fill writes into the new,
// empty temporary file (through the file's methods, or the file system's
// own calls on it); an error of fill is returned as it is and nothing is
// stored.
func (w Writer) WriteFileFunc(path string, perm os.FileMode, fill func(File) error) error {
	return w.write(path, fill, perm, w.fs.Link)
}

// writeData is the fill that writes data at offset 0.
func writeData(data []byte) func(File) error {
	return func(f File) error {
		_, err := f.WriteAt(data, 0)
		return err
	}
}

// write fills a fsynced temporary file beside path, gives it the name
// path with place (Link or Rename), and fsyncs the directory.
func (w Writer) write(path string, fill func(File) error, perm os.FileMode, place func(oldname, newname string) error) error {
	dir := filepath.Dir(path)
	if err := w.MkdirAll(dir); err != nil {
		return err
	}
	var nonce [6]byte
	rand.Read(nonce[:]) // never fails (crypto/rand)
	// The temporary name keeps as much of the final one as fits in
	// sdk.MaxFileNameBytes: its nonce, not its stem, makes it unique.
	const tempExtra = len(".") + len(".") + 2*len(nonce) + len(tempSuffix)
	tmp := filepath.Join(dir, "."+cutUTF8(filepath.Base(path), sdk.MaxFileNameBytes-tempExtra)+"."+hex.EncodeToString(nonce[:])+tempSuffix)
	f, err := w.fs.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	defer w.fs.Remove(tmp) // after the link, only the temporary name goes
	err = fill(f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := place(tmp, path); err != nil {
		return err
	}
	if err := w.fs.SyncDir(dir); err != nil {
		w.fs.Remove(path) // its entry may not be durable: never report it written (a replaced file is gone too)
		return err
	}
	return nil
}

// ReplaceFile is WriteFile for a file that may exist: the complete
// temporary file is renamed over path in one step, so path holds either
// its old content or data, also after a crash.
func (w Writer) ReplaceFile(path string, data []byte, perm os.FileMode) error {
	return w.write(path, writeData(data), perm, w.fs.Rename)
}

// WriteFirstFree writes data as WriteFile does to the first of path(0),
// path(1), … path(tries−1) that does not exist, and returns that path; on
// failure it returns the last path it tried. When all of them exist the
// error satisfies errors.Is(err, fs.ErrExist). tries must be ≥ 1.
func (w Writer) WriteFirstFree(path func(try int) string, tries int, data []byte, perm os.FileMode) (string, error) {
	p := ""
	for i := range tries {
		p = path(i)
		err := w.WriteFile(p, data, perm)
		if !errors.Is(err, fs.ErrExist) {
			return p, err
		}
	}
	return p, fmt.Errorf("%d names in a row are taken: %w", tries, fs.ErrExist)
}

// MkdirAll creates dir and its missing parents with permissions 0700 and
// fsyncs each parent that gained an entry, so the directories survive a
// crash. An existing dir is left as it is.
func (w Writer) MkdirAll(dir string) error {
	err := w.fs.Mkdir(dir, 0o700)
	if errors.Is(err, fs.ErrNotExist) {
		if parent := filepath.Dir(dir); parent != dir {
			if err := w.MkdirAll(parent); err != nil {
				return err
			}
		}
		err = w.fs.Mkdir(dir, 0o700)
	}
	switch {
	case errors.Is(err, fs.ErrExist):
		return nil // there already, or made meanwhile by someone else
	case err != nil:
		return err
	}
	return w.fs.SyncDir(filepath.Dir(dir))
}

// tempSuffix ends the name of every temporary file WriteFile makes.
const tempSuffix = ".tmp"

// IsTemp reports whether the base name name is one WriteFile gives its
// temporary files (".<name>.<12 hex>.tmp", <name> cut short when the whole
// would pass sdk.MaxFileNameBytes): one a crash left behind is garbage that
// whoever owns the directory may remove.
func IsTemp(name string) bool {
	rest, ok := strings.CutSuffix(name, tempSuffix)
	if !ok || !strings.HasPrefix(rest, ".") || len(rest) < 1+1+1+12 {
		return false
	}
	nonce := rest[len(rest)-12:]
	if rest[len(rest)-13] != '.' {
		return false
	}
	_, err := hex.DecodeString(nonce)
	return err == nil && strings.ToLower(nonce) == nonce
}

// SyncDir fsyncs a directory, so that a new entry in it survives a crash.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// osFS is the operating system's file system.
type osFS struct{}

func (osFS) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return f, nil
}

func (osFS) Mkdir(name string, perm fs.FileMode) error { return os.Mkdir(name, perm) }

func (osFS) Link(oldname, newname string) error { return os.Link(oldname, newname) }

func (osFS) Remove(name string) error { return os.Remove(name) }

func (osFS) Rename(oldname, newname string) error { return os.Rename(oldname, newname) }

func (osFS) SyncDir(name string) error { return SyncDir(name) }
