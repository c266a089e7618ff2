package store

import "time"

// Clock is the store's time source: wall time for event stamps and timers
// for the write-behind window and retry backoff. Tests inject a fake one to
// drive timing without sleeping.
type Clock interface {
	Now() time.Time
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

// Now returns time.Now().
func (SystemClock) Now() time.Time { return time.Now() }

// AfterFunc wraps time.AfterFunc.
func (SystemClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// sessionClock adapts a Clock to the session's millisecond clock.
type sessionClock struct{ c Clock }

func (s sessionClock) NowMillis() int64 { return s.c.Now().UnixMilli() }
