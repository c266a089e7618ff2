package store

// Stats is a snapshot of the live sessions and their write-behind queues
// of a store and of every store sharing its budget (Store.Stats).
type Stats struct {
	// LiveSessions counts the live sessions.
	LiveSessions int
	// Queues holds, per configured backend in configuration order, the
	// sums over the live sessions' queues of that backend.
	Queues []QueueStats
	// PendingBytes is the process-wide total that MaxPendingBytesTotal
	// bounds: the bytes of every queue of every live session, plus what
	// admitted appends have reserved and not queued yet.
	PendingBytes int64
	// MaxPendingBytesTotal is the bound (Options.MaxPendingBytesTotal).
	MaxPendingBytesTotal int64
}

// QueueStats sums the write-behind queues of one backend: the committed
// events it has not acknowledged yet.
type QueueStats struct {
	// Backend is the backend's configured name.
	Backend string
	// Events counts the queued events.
	Events int
	// Bytes is the size of their canonical envelopes.
	Bytes int64
}

// Stats returns a snapshot of the live sessions and their queues, in this
// store and every store sharing its budget (the other tenants'): the
// process-wide figures the budget bounds. It takes each queue's lock
// briefly, one at a time, and never waits for a write: a scrape of
// metrics may call it as often as it likes.
func (st *Store) Stats() Stats {
	s := Stats{Queues: make([]QueueStats, len(st.opts.Backends)),
		PendingBytes: st.pending.total.Load(), MaxPendingBytesTotal: st.pending.limit}
	for i, b := range st.opts.Backends {
		s.Queues[i].Backend = b.Name
	}
	var all []*live
	for _, o := range st.budget.members() {
		o.mu.Lock()
		for _, ls := range o.live {
			all = append(all, ls)
		}
		o.mu.Unlock()
	}
	s.LiveSessions = len(all)
	for _, ls := range all {
		for i, q := range ls.queues {
			q.mu.Lock()
			s.Queues[i].Events += len(q.evs)
			s.Queues[i].Bytes += q.bytes
			q.mu.Unlock()
		}
	}
	return s
}
