// Package faultfs is an in-memory vfs.FS for tests of the jsonl backend
// and of its users: it injects disk errors (ENOSPC, EIO, short writes) and
// crashes that keep only what was synced. It is test machinery, kept out of
// the jsonl package so that no production build carries it.
package faultfs

import (
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/seed-e5e476df/logbook/plugins/jsonl/vfs"
)

// FS is an in-memory vfs.FS for tests that injects disk errors and
// crashes. It models what a crash keeps: a file's data is durable up to its
// last Sync, and a directory entry (a create, link, rename, remove or
// mkdir) only once its directory was synced with SyncDir. Crash throws
// away everything else, as a power cut would.
//
// Locks follow flock(2) among the open files of the FS: one exclusive
// holder per file, or any number of shared ones, so two backends over one
// FS compete like two processes.
// Inode numbers are unique and modification times come from a logical
// clock that ticks on every change, so revisions always differ after a
// change. Every method is safe for concurrent use.
type FS struct {
	mu      sync.Mutex
	root    *inode
	ino     uint64
	clock   int64
	gen     int // crash generation: files opened before a crash are dead
	faults  []*faultRule
	faultID int
}

// Op names the FS operation a Fault applies to.
type Op string

// The operations a Fault can fail.
const (
	OpOpen     Op = "open"
	OpRead     Op = "read"
	OpWrite    Op = "write"
	OpSync     Op = "sync"
	OpTruncate Op = "truncate"
	OpLock     Op = "lock"
	OpMkdir    Op = "mkdir"
	OpLink     Op = "link"
	OpRename   Op = "rename"
	OpRemove   Op = "remove"
	OpSyncDir  Op = "syncdir"
	OpStat     Op = "fstat" // Stat of an open file
)

// Fault is one injected failure.
type Fault struct {
	// Op is the operation that fails.
	Op Op
	// Name is a path.Match pattern for the base name of the file or
	// directory ("events.v4.jsonl", "*.tmp"); "" matches every name. For
	// Link and Rename it is matched against the new name.
	Name string
	// Err is the error returned (wrapped in *fs.PathError); nil means
	// syscall.EIO.
	Err error
	// Keep is, for OpWrite, how many bytes of the write land before it
	// fails: a short write.
	Keep int
	// Times is how many matching calls fail; 0 means every one until the
	// fault is removed.
	Times int
	// Crash makes the matching call crash the file system (see Crash)
	// before it returns its error; for OpWrite the Keep bytes land first
	// and are lost with the crash unless synced.
	Crash bool
}

type faultRule struct {
	Fault
	id   int
	hits int
}

type inode struct {
	ino          uint64
	dir          bool
	mode         fs.FileMode
	children     map[string]*inode // directory entries now
	durableKids  map[string]*inode // directory entries as of the last SyncDir
	data         []byte            // file content now
	durable      []byte            // file content as of the last Sync
	mtime, ctime int64
	lock         *file          // the exclusive holder
	shared       map[*file]bool // the shared holders
}

// New returns an empty FS holding only the root directory "/".
func New() *FS {
	f := &FS{}
	f.root = f.newInode(true, 0o755)
	return f
}

// Inject arms fault and returns a function that removes it.
func (f *FS) Inject(fault Fault) (remove func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.faultID++
	r := &faultRule{Fault: fault, id: f.faultID}
	f.faults = append(f.faults, r)
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.faults = slices.DeleteFunc(f.faults, func(x *faultRule) bool { return x == r })
	}
}

// ClearFaults removes every armed fault.
func (f *FS) ClearFaults() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.faults = nil
}

// Crash simulates a power cut: every directory goes back to its entries as
// of its last SyncDir and every file to its content as of its last Sync;
// every open file dies (its calls fail with EIO) and every lock is
// released. The FS stays usable, as the disk after a reboot.
func (f *FS) Crash() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.crashLocked()
}

func (f *FS) crashLocked() {
	f.gen++
	var walk func(n *inode)
	seen := map[*inode]bool{}
	walk = func(n *inode) {
		if seen[n] {
			return
		}
		seen[n] = true
		n.lock, n.shared = nil, nil
		if !n.dir {
			n.data = slices.Clone(n.durable)
			return
		}
		n.children = cloneKids(n.durableKids)
		for _, c := range n.children {
			walk(c)
		}
	}
	walk(f.root)
}

// ReadFile returns a copy of the current content of the file name (test
// helper; no fault applies).
func (f *FS) ReadFile(name string) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, err := f.lookup(name)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	if n.dir {
		return nil, &fs.PathError{Op: "read", Path: name, Err: syscall.EISDIR}
	}
	return slices.Clone(n.data), nil
}

// WriteFile replaces the content of the file name, creating it, and makes
// both the content and its directory entry durable (test helper; no fault
// applies).
func (f *FS) WriteFile(name string, data []byte, perm fs.FileMode) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	dir, base, err := f.parent(name)
	if err != nil {
		return &fs.PathError{Op: "open", Path: name, Err: err}
	}
	n := dir.children[base]
	if n == nil {
		n = f.newInode(false, perm)
		dir.children[base] = n
		f.touch(dir)
	}
	if n.dir {
		return &fs.PathError{Op: "open", Path: name, Err: syscall.EISDIR}
	}
	n.data = slices.Clone(data)
	n.durable = slices.Clone(data)
	dir.durableKids[base] = n
	f.touch(n)
	return nil
}

func (f *FS) newInode(dir bool, perm fs.FileMode) *inode {
	f.ino++
	f.clock++
	n := &inode{ino: f.ino, dir: dir, mode: perm & fs.ModePerm, mtime: f.clock, ctime: f.clock}
	if dir {
		n.mode |= fs.ModeDir
		n.children = map[string]*inode{}
		n.durableKids = map[string]*inode{}
	}
	return n
}

func (f *FS) touch(n *inode) {
	f.clock++
	n.mtime, n.ctime = f.clock, f.clock
}

func cloneKids(m map[string]*inode) map[string]*inode {
	out := make(map[string]*inode, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// fault returns the error of the first armed fault matching op and name,
// counting the hit; nil when none matches. f.mu is held.
func (f *FS) fault(op Op, name string) *faultRule {
	base := path.Base(name)
	for _, r := range f.faults {
		if r.Op != op {
			continue
		}
		if r.Name != "" {
			if ok, _ := path.Match(r.Name, base); !ok {
				continue
			}
		}
		r.hits++
		if r.Times > 0 && r.hits >= r.Times {
			f.faults = slices.DeleteFunc(f.faults, func(x *faultRule) bool { return x == r })
		}
		return r
	}
	return nil
}

// fail turns a matching rule into the error to return, crashing first when
// the rule says so. f.mu is held.
func (f *FS) fail(r *faultRule, op, name string) error {
	if r.Crash {
		f.crashLocked()
	}
	err := r.Err
	if err == nil {
		err = syscall.EIO
	}
	return &fs.PathError{Op: op, Path: name, Err: err}
}

// split cleans an absolute name into its components.
func split(name string) ([]string, error) {
	if !strings.HasPrefix(name, "/") {
		return nil, syscall.EINVAL
	}
	clean := path.Clean(name)
	if clean == "/" {
		return nil, nil
	}
	return strings.Split(clean[1:], "/"), nil
}

// lookup resolves name; f.mu is held.
func (f *FS) lookup(name string) (*inode, error) {
	parts, err := split(name)
	if err != nil {
		return nil, err
	}
	n := f.root
	for _, p := range parts {
		if !n.dir {
			return nil, syscall.ENOTDIR
		}
		c, ok := n.children[p]
		if !ok {
			return nil, syscall.ENOENT
		}
		n = c
	}
	return n, nil
}

// parent resolves the directory holding name and name's base; f.mu is held.
func (f *FS) parent(name string) (*inode, string, error) {
	parts, err := split(name)
	if err != nil {
		return nil, "", err
	}
	if len(parts) == 0 {
		return nil, "", syscall.EINVAL
	}
	dir, err := f.lookup("/" + strings.Join(parts[:len(parts)-1], "/"))
	if err != nil {
		return nil, "", err
	}
	if !dir.dir {
		return nil, "", syscall.ENOTDIR
	}
	return dir, parts[len(parts)-1], nil
}

// OpenFile implements vfs.FS.
func (f *FS) OpenFile(name string, flag int, perm fs.FileMode) (vfs.File, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r := f.fault(OpOpen, name); r != nil {
		return nil, f.fail(r, "open", name)
	}
	dir, base, err := f.parent(name)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	n := dir.children[base]
	switch {
	case n != nil && flag&os.O_CREATE != 0 && flag&os.O_EXCL != 0:
		return nil, &fs.PathError{Op: "open", Path: name, Err: syscall.EEXIST}
	case n == nil && flag&os.O_CREATE == 0:
		return nil, &fs.PathError{Op: "open", Path: name, Err: syscall.ENOENT}
	case n == nil:
		n = f.newInode(false, perm)
		dir.children[base] = n
		f.touch(dir)
	}
	acc := flag & (os.O_RDONLY | os.O_WRONLY | os.O_RDWR)
	if n.dir && acc != os.O_RDONLY {
		return nil, &fs.PathError{Op: "open", Path: name, Err: syscall.EISDIR}
	}
	if flag&os.O_TRUNC != 0 && acc != os.O_RDONLY {
		n.data = n.data[:0]
		f.touch(n)
	}
	return &file{fs: f, n: n, name: name, gen: f.gen,
		read: acc == os.O_RDONLY || acc == os.O_RDWR, write: acc == os.O_WRONLY || acc == os.O_RDWR}, nil
}

// Stat implements vfs.FS.
func (f *FS) Stat(name string) (vfs.FileInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, err := f.lookup(name)
	if err != nil {
		return vfs.FileInfo{}, &fs.PathError{Op: "stat", Path: name, Err: err}
	}
	return n.info(), nil
}

// Lstat implements vfs.FS; an FS has no symbolic links, so it is Stat.
func (f *FS) Lstat(name string) (vfs.FileInfo, error) { return f.Stat(name) }

func (n *inode) info() vfs.FileInfo {
	return vfs.FileInfo{Size: int64(len(n.data)), Mode: n.mode, Dev: 1, Ino: n.ino, MtimeNs: n.mtime, CtimeNs: n.ctime}
}

// Mkdir implements vfs.FS.
func (f *FS) Mkdir(name string, perm fs.FileMode) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r := f.fault(OpMkdir, name); r != nil {
		return f.fail(r, "mkdir", name)
	}
	dir, base, err := f.parent(name)
	if err != nil {
		return &fs.PathError{Op: "mkdir", Path: name, Err: err}
	}
	if _, ok := dir.children[base]; ok {
		return &fs.PathError{Op: "mkdir", Path: name, Err: syscall.EEXIST}
	}
	dir.children[base] = f.newInode(true, perm)
	f.touch(dir)
	return nil
}

// Link implements vfs.FS.
func (f *FS) Link(oldname, newname string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r := f.fault(OpLink, newname); r != nil {
		return f.fail(r, "link", newname)
	}
	n, err := f.lookup(oldname)
	if err != nil {
		return &os.LinkError{Op: "link", Old: oldname, New: newname, Err: err}
	}
	if n.dir {
		return &os.LinkError{Op: "link", Old: oldname, New: newname, Err: syscall.EPERM}
	}
	dir, base, err := f.parent(newname)
	if err != nil {
		return &os.LinkError{Op: "link", Old: oldname, New: newname, Err: err}
	}
	if _, ok := dir.children[base]; ok {
		return &os.LinkError{Op: "link", Old: oldname, New: newname, Err: syscall.EEXIST}
	}
	dir.children[base] = n
	f.touch(dir)
	f.clock++
	n.ctime = f.clock
	return nil
}

// Rename implements vfs.FS.
func (f *FS) Rename(oldname, newname string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r := f.fault(OpRename, newname); r != nil {
		return f.fail(r, "rename", newname)
	}
	odir, obase, err := f.parent(oldname)
	if err != nil {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: err}
	}
	n, ok := odir.children[obase]
	if !ok {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: syscall.ENOENT}
	}
	ndir, nbase, err := f.parent(newname)
	if err != nil {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: err}
	}
	if old, ok := ndir.children[nbase]; ok && old.dir {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: syscall.EISDIR}
	}
	delete(odir.children, obase)
	ndir.children[nbase] = n
	f.touch(odir)
	f.touch(ndir)
	return nil
}

// Remove implements vfs.FS.
func (f *FS) Remove(name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r := f.fault(OpRemove, name); r != nil {
		return f.fail(r, "remove", name)
	}
	dir, base, err := f.parent(name)
	if err != nil {
		return &fs.PathError{Op: "remove", Path: name, Err: err}
	}
	n, ok := dir.children[base]
	if !ok {
		return &fs.PathError{Op: "remove", Path: name, Err: syscall.ENOENT}
	}
	if n.dir && len(n.children) > 0 {
		return &fs.PathError{Op: "remove", Path: name, Err: syscall.ENOTEMPTY}
	}
	delete(dir.children, base)
	f.touch(dir)
	return nil
}

// ReadDir implements vfs.FS.
func (f *FS) ReadDir(name string) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, err := f.lookup(name)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	if !n.dir {
		return nil, &fs.PathError{Op: "readdirent", Path: name, Err: syscall.ENOTDIR}
	}
	names := make([]string, 0, len(n.children))
	for k := range n.children {
		names = append(names, k)
	}
	slices.Sort(names)
	return names, nil
}

// SyncDir implements vfs.FS.
func (f *FS) SyncDir(name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r := f.fault(OpSyncDir, name); r != nil {
		return f.fail(r, "fsync", name)
	}
	n, err := f.lookup(name)
	if err != nil {
		return &fs.PathError{Op: "open", Path: name, Err: err}
	}
	if !n.dir {
		return &fs.PathError{Op: "fsync", Path: name, Err: syscall.ENOTDIR}
	}
	n.durableKids = cloneKids(n.children)
	return nil
}

// file is an open file of a FS.
type file struct {
	fs          *FS
	n           *inode
	name        string
	gen         int
	read, write bool
	closed      bool
}

// usable reports why the file cannot be used, or nil; f.fs.mu is held.
func (f *file) usable(op string) error {
	switch {
	case f.closed:
		return &fs.PathError{Op: op, Path: f.name, Err: fs.ErrClosed}
	case f.gen != f.fs.gen:
		return &fs.PathError{Op: op, Path: f.name, Err: syscall.EIO} // opened before a crash
	}
	return nil
}

func (f *file) ReadAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.usable("read"); err != nil {
		return 0, err
	}
	if !f.read {
		return 0, &fs.PathError{Op: "read", Path: f.name, Err: syscall.EBADF}
	}
	if r := f.fs.fault(OpRead, f.name); r != nil {
		return 0, f.fs.fail(r, "read", f.name)
	}
	if off < 0 {
		return 0, &fs.PathError{Op: "read", Path: f.name, Err: syscall.EINVAL}
	}
	if off >= int64(len(f.n.data)) {
		return 0, io.EOF
	}
	n := copy(p, f.n.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (f *file) WriteAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.usable("write"); err != nil {
		return 0, err
	}
	if !f.write {
		return 0, &fs.PathError{Op: "write", Path: f.name, Err: syscall.EBADF}
	}
	if off < 0 {
		return 0, &fs.PathError{Op: "write", Path: f.name, Err: syscall.EINVAL}
	}
	r := f.fs.fault(OpWrite, f.name)
	keep := len(p)
	if r != nil {
		keep = min(max(r.Keep, 0), len(p))
	}
	if keep > 0 {
		if end := off + int64(keep); end > int64(len(f.n.data)) {
			f.n.data = append(f.n.data, make([]byte, end-int64(len(f.n.data)))...)
		}
		copy(f.n.data[off:], p[:keep])
		f.fs.touch(f.n)
	}
	if r != nil {
		return keep, f.fs.fail(r, "write", f.name)
	}
	return keep, nil
}

func (f *file) Sync() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.usable("fdatasync"); err != nil {
		return err
	}
	if r := f.fs.fault(OpSync, f.name); r != nil {
		return f.fs.fail(r, "fdatasync", f.name)
	}
	f.n.durable = slices.Clone(f.n.data)
	return nil
}

func (f *file) Truncate(size int64) error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.usable("truncate"); err != nil {
		return err
	}
	if !f.write {
		return &fs.PathError{Op: "truncate", Path: f.name, Err: syscall.EINVAL}
	}
	if r := f.fs.fault(OpTruncate, f.name); r != nil {
		return f.fs.fail(r, "truncate", f.name)
	}
	if size < 0 {
		return &fs.PathError{Op: "truncate", Path: f.name, Err: syscall.EINVAL}
	}
	if size <= int64(len(f.n.data)) {
		f.n.data = f.n.data[:size:size]
	} else {
		f.n.data = append(f.n.data, make([]byte, size-int64(len(f.n.data)))...)
	}
	f.fs.touch(f.n)
	return nil
}

func (f *file) Stat() (vfs.FileInfo, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.usable("fstat"); err != nil {
		return vfs.FileInfo{}, err
	}
	if r := f.fs.fault(OpStat, f.name); r != nil {
		return vfs.FileInfo{}, f.fs.fail(r, "fstat", f.name)
	}
	return f.n.info(), nil
}

func (f *file) Lock() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.usable("flock"); err != nil {
		return err
	}
	if r := f.fs.fault(OpLock, f.name); r != nil {
		return f.fs.fail(r, "flock", f.name)
	}
	if (f.n.lock != nil && f.n.lock != f) || len(f.n.shared) > 1 || (len(f.n.shared) == 1 && !f.n.shared[f]) {
		return &fs.PathError{Op: "flock", Path: f.name, Err: syscall.EWOULDBLOCK}
	}
	delete(f.n.shared, f)
	f.n.lock = f
	return nil
}

func (f *file) LockShared() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.usable("flock"); err != nil {
		return err
	}
	if r := f.fs.fault(OpLock, f.name); r != nil {
		return f.fs.fail(r, "flock", f.name)
	}
	if f.n.lock != nil && f.n.lock != f {
		return &fs.PathError{Op: "flock", Path: f.name, Err: syscall.EWOULDBLOCK}
	}
	if f.n.shared == nil {
		f.n.shared = map[*file]bool{}
	}
	f.n.lock, f.n.shared[f] = nil, true
	return nil
}

func (f *file) Unlock() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.usable("flock"); err != nil {
		return err
	}
	if f.n.lock == f {
		f.n.lock = nil
	}
	delete(f.n.shared, f)
	return nil
}

func (f *file) Close() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return &fs.PathError{Op: "close", Path: f.name, Err: fs.ErrClosed}
	}
	f.closed = true
	if f.n.lock == f {
		f.n.lock = nil
	}
	delete(f.n.shared, f)
	return nil
}
