package memory

import (
	"context"
	"strconv"
	"time"

	"github.com/seed-e5e476df/logbook/sdk"
)

// FailNextAppends makes the next n calls to Append on this instance return
// err before any check of their arguments (so nothing is stored); only a
// call whose context has already ended fails with that instead and does
// not count. A nil err means a retryable IO_ERROR. n ≤ 0 disarms the hook.
// Test hook.
func (b *Backend) FailNextAppends(n int, err error) {
	if err == nil {
		err = sdk.Errorf(sdk.CodeIOError, op, "injected append failure (FailNextAppends)")
	}
	b.st.mu.Lock()
	defer b.st.mu.Unlock()
	b.faults.failN, b.faults.failErr = max(n, 0), err
}

// LoseNextAppendReplies makes the next n successful calls to Append on this
// instance store their batch and then return err instead of the reply: the
// ambiguous failure of docs/plugins.md (the batch is durable, the caller cannot
// know). A nil err means a retryable IO_ERROR. n ≤ 0 disarms the hook.
// Test hook.
func (b *Backend) LoseNextAppendReplies(n int, err error) {
	if err == nil {
		err = sdk.Errorf(sdk.CodeIOError, op, "injected loss of the append reply after the batch was stored (LoseNextAppendReplies)")
	}
	b.st.mu.Lock()
	defer b.st.mu.Unlock()
	b.faults.loseN, b.faults.loseErr = max(n, 0), err
}

// SetAppendDelay makes every later Append on this instance wait d before
// it does anything, as a slow disk would; an Append whose ctx ends while
// it waits fails with IO_ERROR wrapping ctx.Err() and stores nothing.
// d ≤ 0 removes the delay. Test hook.
func (b *Backend) SetAppendDelay(d time.Duration) {
	b.st.mu.Lock()
	defer b.st.mu.Unlock()
	b.faults.delay = max(d, 0)
}

// DropOwnership takes the write claim on session id away from its holder,
// as a lost lock would: the holder's next Append or Flush fails with
// OWNERSHIP_LOST (reads and Close still work), and another Open(write) may
// claim the session. It covers claims of every instance of the store on a
// stored session, and this instance's unmaterialized create of id (which
// then can no longer materialize). It reports whether a claim was dropped
// and changes no revision. Test hook.
func (b *Backend) DropOwnership(id string) bool {
	b.st.mu.Lock()
	defer b.st.mu.Unlock()
	if hd, ok := b.created(id); ok {
		hd.lost = true
		b.abandon(hd)
		return true
	}
	if s, ok := b.st.sessions[id]; ok && s.owner != nil {
		s.owner.lost = true
		s.owner = nil
		return true
	}
	return false
}

// SetStoredFormatVersion rewrites the "version" member of the stored header
// of session id to literal, byte for byte (e.g. "2", "0" or "1.5"), as a
// newer or older build would have written it; later Open, Stat and List
// then apply the format gate of docs/format.md to it. It counts as a change (the
// revision changes). It returns SESSION_NOT_FOUND when id is not stored.
// Test hook.
func (b *Backend) SetStoredFormatVersion(id, literal string) error {
	b.st.mu.Lock()
	defer b.st.mu.Unlock()
	s, ok := b.st.sessions[id]
	if !ok {
		return notFound(id)
	}
	// The header is headerjson's canonical encoding: the version literal
	// follows this prefix and ends at the next comma.
	const prefix = `{"type":"session","version":`
	rest := s.header[len(prefix):]
	end := 0
	for end < len(rest) && rest[end] != ',' {
		end++
	}
	h := make([]byte, 0, len(prefix)+len(literal)+len(rest)-end)
	h = append(append(append(h, prefix...), literal...), rest[end:]...)
	s.size += int64(len(h) - len(s.header))
	s.header = h
	s.gen++
	return nil
}

// appendFaults applies the delay and FailNextAppends hooks at the start of
// Append.
func (b *Backend) appendFaults(ctx context.Context) error {
	b.st.mu.Lock()
	d := b.faults.delay
	b.st.mu.Unlock()
	if d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ended(ctx, "append (delayed by SetAppendDelay "+strconv.Quote(d.String())+")")
		}
	}
	b.st.mu.Lock()
	defer b.st.mu.Unlock()
	if b.faults.failN > 0 {
		b.faults.failN--
		return b.faults.failErr
	}
	return nil
}

// lostReply consumes one LoseNextAppendReplies count; b.st.mu is held.
func (b *Backend) lostReply() error {
	if b.faults.loseN > 0 {
		b.faults.loseN--
		return b.faults.loseErr
	}
	return nil
}
