package store

import (
	"time"

	"github.com/seed-e5e476df/logbook/runtime/internal/session"
)

// Clock is the store's time source: the session clock (epoch milliseconds),
// which stamps events and times the write-behind window and retry backoff,
// plus the timers that wake a queue. Tests inject a fake one to drive timing
// without sleeping.
type Clock interface {
	session.Clock
	// AfterFunc calls f in its own goroutine after d.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a pending AfterFunc call.
type Timer interface {
	// Stop prevents the call if it has not started; it reports whether it did.
	Stop() bool
}

// SystemClock is the real clock.
type SystemClock struct{}

// NowMillis returns the wall time in epoch milliseconds.
func (SystemClock) NowMillis() int64 { return time.Now().UnixMilli() }

// AfterFunc wraps time.AfterFunc.
func (SystemClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// clockTime returns c's time as a time.Time, for the queue's deadlines.
func clockTime(c Clock) time.Time { return time.UnixMilli(c.NowMillis()) }
