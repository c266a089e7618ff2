//go:build unix && !linux

package vfs

import "os"

// datasync is os.File.Sync, which on macOS issues F_FULLFSYNC (plain fsync
// there does not reach the disk).
func datasync(f *os.File) error { return f.Sync() }
