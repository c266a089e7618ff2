package pluginrpc

import (
	"context"
	"strconv"
	"sync"

	"github.com/seed-e5e476df/logbook/sdk"
	"google.golang.org/grpc/metadata"
)

// flushAfterKey is the gRPC metadata key of a Flush that the host sends
// right behind an Append, before that Append's reply (AppendFlush): its
// value is the next seq that Append brings the handle to, in decimal. The
// plugin's server holds such a Flush until an Append on the handle has
// reached that seq or failed, so the backend still sees the Append and then
// the Flush (docs/architecture.md), and the host saves a round trip. A server that
// does not know the key answers at once; the host sees a durable next seq
// short of the value and flushes again.
const flushAfterKey = "logbook-flush-after"

// AppendFlusher is implemented by the sdk.Persistence that
// Client.Persistence returns: Append and then Flush in one exchange (see
// that client's AppendFlush). A host's write-behind uses it for the last
// batch of a drain.
type AppendFlusher interface {
	AppendFlush(ctx context.Context, handle string, firstSeq sdk.Seq, events [][]byte) (appended, flushed sdk.Durable, flushErr, err error)
}

// appendProgress is what a persistence server knows of the Append streams
// of its handles: for each handle with a Flush waiting or an Append
// answered, the next seq after its last acknowledged batch and the first
// seq of its last failed one. Close of the handle forgets it.
type appendProgress struct {
	mu      sync.Mutex
	handles map[string]*handleProgress
}

type handleProgress struct {
	next    int64         // next seq after the last acknowledged batch; -1 before any
	failed  int64         // first seq of the last failed batch; -1 if none since
	changed chan struct{} // closed, and replaced, whenever next or failed changes
}

// of returns the progress of handle, creating it. p.mu is held.
func (p *appendProgress) of(handle string) *handleProgress {
	if p.handles == nil {
		p.handles = map[string]*handleProgress{}
	}
	h := p.handles[handle]
	if h == nil {
		h = &handleProgress{next: -1, failed: -1, changed: make(chan struct{})}
		p.handles[handle] = h
	}
	return h
}

// appended records that a batch on handle was acknowledged with next seq
// next.
func (p *appendProgress) appended(handle string, next int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	h := p.of(handle)
	h.next, h.failed = next, -1
	close(h.changed)
	h.changed = make(chan struct{})
}

// failedAt records that the batch from firstSeq on handle failed.
func (p *appendProgress) failedAt(handle string, firstSeq int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	h := p.of(handle)
	h.failed = firstSeq
	close(h.changed)
	h.changed = make(chan struct{})
}

// forget drops what is known of handle (it was closed).
func (p *appendProgress) forget(handle string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if h := p.handles[handle]; h != nil {
		close(h.changed) // a Flush still waiting goes on and meets the closed handle
		delete(p.handles, handle)
	}
}

// await returns once an Append on handle has reached next seq after, or a
// batch of it that starts below after has failed, or ctx ends.
func (p *appendProgress) await(ctx context.Context, handle string, after int64) {
	for {
		p.mu.Lock()
		h := p.of(handle)
		if h.next >= after || h.failed >= 0 && h.failed < after {
			p.mu.Unlock()
			return
		}
		changed := h.changed
		p.mu.Unlock()
		select {
		case <-changed:
			p.mu.Lock()
			gone := p.handles[handle] != h
			p.mu.Unlock()
			if gone {
				return
			}
		case <-ctx.Done():
			return
		}
	}
}

// flushAfter returns the seq a Flush's metadata says to wait for.
func flushAfter(ctx context.Context) (int64, bool) {
	md, ok := metadata.FromIncomingContext(ctx)
	if !ok {
		return 0, false
	}
	v := md.Get(flushAfterKey)
	if len(v) != 1 {
		return 0, false
	}
	n, err := strconv.ParseInt(v[0], 10, 64)
	return n, err == nil && n > 0
}
