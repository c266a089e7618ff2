// Package flockclaim takes the non-blocking flock(2) of a backend's
// cross-process write claim, so that a look at whether a claim is held
// never passes for a claim. A look takes the lock shared and drops it at
// once; a claim (exclusive) that meets only shared holders waits them out.
// An exclusive holder met for an instant (a claim that then finds the id
// stored and lets go) is tried again a few times before it counts as the
// holder; a claim that succeeded holds the lock as long as it lives, so it
// is still held after the last try.
package flockclaim

import (
	"errors"
	"syscall"
	"time"
)

// SharedWait bounds how long Take waits for shared holders to go, and
// SharedRetry is its pause between those tries. An exclusive holder is
// tried HeldTries times in all, HeldRetry apart.
const (
	SharedWait  = time.Second
	SharedRetry = 50 * time.Microsecond
	HeldTries   = 4
	HeldRetry   = time.Millisecond
)

// Take calls try (flock(LOCK_EX|LOCK_NB) for a claim, flock(LOCK_SH|
// LOCK_NB) for a look, on the caller's open file) until it succeeds or
// fails with anything but EWOULDBLOCK, and returns that. After an
// EWOULDBLOCK it asks onlyShared (a claim's: flock(LOCK_SH|LOCK_NB)
// through an open file of its own, closed at once, true when that
// succeeds; nil for a look, which only an exclusive holder blocks): while
// only shared holders block it, for up to SharedWait, it tries again at
// once; an exclusive holder still there after HeldTries tries gets the
// EWOULDBLOCK returned.
func Take(try func() error, onlyShared func() bool) error {
	deadline := time.Now().Add(SharedWait)
	for held := 0; ; {
		err := try()
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return err
		}
		if onlyShared != nil && time.Now().Before(deadline) && onlyShared() {
			time.Sleep(SharedRetry)
			continue
		}
		if held++; held == HeldTries {
			return err
		}
		time.Sleep(HeldRetry)
	}
}
