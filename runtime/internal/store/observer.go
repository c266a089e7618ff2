package store

import (
	"time"

	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/sdk"
)

// Observer receives a store's measurements (runtime/internal/metrics implements
// it). Its methods are called on the append path and while flushes run,
// from many goroutines at once: they must be safe for concurrent use,
// cheap, and must not call back into the store.
type Observer interface {
	// Appended is called once per commit to a live session (each event of
	// an Append or AppendBatch; all members of an AppendGroup at once),
	// under the session's append lock, with the number of events and the
	// bytes of their canonical envelopes. The
	// seed of a created or forked session and the repair batch of an Open
	// are not appends and are not reported.
	Appended(events int, bytes int64)
	// Flushed is called once per backend after it settled its part of a
	// flush of a session (Flush, Release, Close) without an error, with how
	// long it took to write everything queued for it and confirm it
	// durable.
	Flushed(backend string, d time.Duration)
	// WriteFailed is called for each failed write-behind call to a backend
	// (an Append, a Flush, a re-open after a restart), retryable or
	// final, with the failure's logbook code ("" when it has none).
	WriteFailed(backend string, code sdk.Code)
}

// observeAppended reports a committed batch; Options.Observer is set.
func (st *Store) observeAppended(evs []session.Event) {
	st.opts.Observer.Appended(len(evs), envelopeBytes(evs))
}

// observeStart returns the time a measured operation starts; zero, and
// no clock read, without an Observer.
func (st *Store) observeStart() time.Time {
	if st.opts.Observer == nil {
		return time.Time{}
	}
	return time.Now()
}

// observeFlushed reports one backend's flush that began at start.
func (st *Store) observeFlushed(backend string, start time.Time) {
	if st.opts.Observer != nil {
		st.opts.Observer.Flushed(backend, time.Since(start))
	}
}
