package session

import (
	"context"
	"errors"
)

// Control is a session owner's handle (the store's): the operations that
// change a session's lifecycle or extend its log outside the append path.
// Only the one who created the session can hold it — pass a new Control
// in Options.Control and New, Restore or a Restorer binds it to the
// session — so code that is handed a *Session cannot close, fence or
// extend it behind its owner's back, e.g. extend a live session whose
// owner would then never queue the new events for storage.
type Control struct{ s *Session }

// Extend runs the restore pipeline over events that continue the log (a
// repair batch, closers for an inspect view) and commits them, for a session
// that is still being built and not yet shared: no hooks run and nothing is
// published to the feed. FirstLiveSeq moves to the new length. On error the
// session is partly extended and must be discarded.
func (c *Control) Extend(ctx context.Context, evs []Event, src Source) error {
	s := c.s
	s.appendMu.Lock()
	defer s.appendMu.Unlock()
	for _, e := range evs {
		seq := s.nextSeq()
		if err := s.restoreOne(ctx, e.r, seq, false); err != nil {
			return s.restoreError(src, int(seq), seq, err)
		}
	}
	s.refoldLoop()
	s.stateMu.Lock()
	s.publish()
	s.stateMu.Unlock()
	s.firstLive = s.Len()
	return nil
}

// SetReadOnly turns a session that is still being built into a read-only
// inspect view whose last pending events exist only in memory.
func (c *Control) SetReadOnly(pending int) {
	c.s.readOnly = true
	c.s.pendingRepair = pending
}

// Close marks the session closed (released): later appends fail with
// SESSION_CLOSED. Reads keep working. Idempotent. An append that passed
// its first check before Close may still commit; Settle waits for it.
func (c *Control) Close() { c.s.closed.Store(true) }

// Settle returns once no append is in flight: after Close, every append
// has either committed (and been handed to OnCommit) or failed, and none
// commits later. An append waiting in the Backpressure or Admit hook
// holds it up until the hook returns.
func (c *Control) Settle() {
	c.s.appendMu.Lock()
	// Nothing to do under the lock: taking it is the wait.
	c.s.appendMu.Unlock()
}

// Reopen undoes Close, for an owner whose release failed and who keeps
// the session live: appends are accepted again.
func (c *Control) Reopen() { c.s.closed.Store(false) }

// Fence refuses every later append with SESSION_FENCED wrapping cause (a final
// persistence failure, docs/architecture.md). The first cause wins; a nil cause is
// recorded as an unspecified one.
func (c *Control) Fence(cause error) {
	if cause == nil {
		cause = errors.New("fenced without a stated cause")
	}
	c.s.fenced.CompareAndSwap(nil, &cause)
}
