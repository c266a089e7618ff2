package sqlite

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/durable"
	"github.com/seed-e5e476df/logbook/sdk/flockclaim"
)

// Write ownership (docs/storage.md): an in-process claim table, shared by
// every Backend over one database, refuses a second claim before any file
// is touched; across processes a non-blocking flock on
// <path>.locks/<enc(id)>.lock decides. The kernel drops the flock when the
// process dies. Lock files are never deleted. An in-memory database has no
// other process to exclude and takes no flock.

// claim is one held write claim.
type claim struct {
	owner *handle
	file  *os.File // the flocked lock file; nil for an in-memory database
}

// errClaimed is returned by acquire when another handle holds the claim.
var errClaimed = errors.New("claimed")

// lockPath is the lock file of session id of s's tenant: <enc(id)>.lock
// in the tenant's lock directory (lockDir), which fits 255 bytes for every
// valid id (and would be shortened by durable.FitName otherwise).
func (s space) lockPath(id string) string {
	return filepath.Join(s.dir(s.path+".locks"), durable.FitName(encID(id), ".lock"))
}

// acquire takes the write claim on id for hd. It returns errClaimed
// (wrapped, naming the holder) when a handle of this process or another
// process holds it.
func (s space) acquire(id string, hd *handle) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.claims[s.claimKey(id)]; ok {
		if c.owner == hd {
			return nil
		}
		return fmt.Errorf("%w by handle %s of this process", errClaimed, c.owner.name)
	}
	c := &claim{owner: hd}
	if !s.memory {
		if err := secureDir(s.path+".locks", "lock directory"); err != nil {
			return err
		}
		if dir := s.dir(s.path + ".locks"); dir != s.path+".locks" {
			if err := secureDir(dir, "lock directory of tenant "+strconv.Quote(s.tenant)); err != nil {
				return err
			}
		}
		path := s.lockPath(id)
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if err != nil {
			return sdk.Wrapf(sdk.CodeIOError, op, err, "opening the lock file %q", path)
		}
		tryExclusive := func() error { return unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) }
		onlyShared := func() bool { // a claimedElsewhere is not a claim
			g, err := os.OpenFile(path, os.O_RDWR|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			if err != nil {
				return false
			}
			defer g.Close()
			return unix.Flock(int(g.Fd()), unix.LOCK_SH|unix.LOCK_NB) == nil
		}
		if err := flockclaim.Take(tryExclusive, onlyShared); err != nil {
			f.Close()
			if errors.Is(err, unix.EWOULDBLOCK) {
				return fmt.Errorf("%w by another process (flock on %s)", errClaimed, strconv.Quote(path))
			}
			return sdk.Wrapf(sdk.CodeIOError, op, err, "locking %q", path)
		}
		c.file = f
	}
	s.claims[s.claimKey(id)] = c
	return nil
}

// claimedElsewhere reports whether a handle of this process or another
// holds the write claim on id, without taking it and without creating a
// lock file: it holds the lock shared for a moment, which a claimer waits
// out (flockclaim). It names the holder, or returns "" when the claim is
// free.
func (s space) claimedElsewhere(id string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.claims[s.claimKey(id)]; ok {
		return "handle " + c.owner.name + " of this process", nil
	}
	if s.memory {
		return "", nil
	}
	path := s.lockPath(id)
	f, err := os.OpenFile(path, os.O_RDWR|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", sdk.Wrapf(sdk.CodeIOError, op, err, "opening the lock file %q", path)
	}
	defer f.Close() // closing the only descriptor drops a flock taken here
	if err := flockclaim.Take(func() error { return unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB) }, nil); err != nil {
		if errors.Is(err, unix.EWOULDBLOCK) {
			return "another process (flock on " + strconv.Quote(path) + ")", nil
		}
		return "", sdk.Wrapf(sdk.CodeIOError, op, err, "locking %q", path)
	}
	return "", nil
}

// release drops hd's claim on id, if it holds it.
func (s space) release(id string, hd *handle) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.claims[s.claimKey(id)]
	if !ok || c.owner != hd {
		return
	}
	delete(s.claims, s.claimKey(id))
	if c.file != nil {
		c.file.Close() // closing the only descriptor drops the flock
	}
}

// holds checks that hd still holds the claim on id: its entry in the claim
// table, and a lock file that is still the one it locked (a lock file
// removed or replaced behind its back lets another process lock the new
// one). It returns OWNERSHIP_LOST otherwise.
func (s space) holds(id string, hd *handle) error {
	s.mu.Lock()
	c, ok := s.claims[s.claimKey(id)]
	s.mu.Unlock()
	lost := func(why string) error {
		return newErr(sdk.CodeOwnershipLost, id, "handle %s no longer holds the write claim on session %s: %s", strconv.Quote(hd.name), strconv.Quote(id), why)
	}
	if !ok || c.owner != hd {
		return lost("the claim was released")
	}
	if c.file == nil {
		return nil
	}
	var held, now unix.Stat_t
	if err := unix.Fstat(int(c.file.Fd()), &held); err != nil {
		return lost(err.Error())
	}
	if err := unix.Stat(s.lockPath(id), &now); err != nil {
		return lost("its lock file is gone: " + err.Error())
	}
	if held.Dev != now.Dev || held.Ino != now.Ino {
		return lost("its lock file was replaced")
	}
	return nil
}
