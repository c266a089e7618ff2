// Package durable writes files so that, once a call returns, they survive
// a crash or a power loss: the data is fsynced before the name appears, and
// the directory is fsynced after.
package durable

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
)

// WriteFile creates the file path holding data, with permissions perm,
// never replacing a file that exists (an existing path fails with an error
// satisfying errors.Is(err, fs.ErrExist)). The data goes to a temporary
// file beside path, is fsynced, is linked to path in one step, and the
// directory is fsynced, so path is either absent or complete, also after
// a crash. The directory is created (0700) with its missing parents, each
// new one fsynced into its parent. On failure nothing is left at path.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	dir := filepath.Dir(path)
	if err := MkdirAll(dir); err != nil {
		return err
	}
	var nonce [6]byte
	rand.Read(nonce[:]) // never fails (crypto/rand)
	tmp := filepath.Join(dir, "."+filepath.Base(path)+"."+hex.EncodeToString(nonce[:])+".tmp")
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	defer os.Remove(tmp) // after the link, only the temporary name goes
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := os.Link(tmp, path); err != nil {
		return err
	}
	if err := SyncDir(dir); err != nil {
		os.Remove(path) // its entry may not be durable: never report it written
		return err
	}
	return nil
}

// MkdirAll creates dir and its missing parents with permissions 0700 and
// fsyncs each parent that gained an entry, so the directories survive a
// crash. An existing dir is left as it is.
func MkdirAll(dir string) error {
	if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
		return nil
	}
	parent := filepath.Dir(dir)
	if parent != dir {
		if err := MkdirAll(parent); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		if os.IsExist(err) {
			return nil // made meanwhile by someone else
		}
		return err
	}
	return SyncDir(parent)
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
