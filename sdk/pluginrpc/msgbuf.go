package pluginrpc

import (
	"sync"

	"google.golang.org/grpc/mem"

	logbookv1 "github.com/seed-e5e476df/logbook/sdk/proto/logbook/v1"
)

// batchBuffers keeps the buffers of event-batch messages (the encoding of
// a ReadChunk being sent, or of an AppendRequest protobuf's encoder
// encodes) for the next message. A fresh buffer of a few hundred KiB
// per batch costs more than its copy: the runtime clears it, and after a
// collection returned its pages to the system, faults them in again. The
// list is a plain bounded channel, not a sync.Pool, so that a collection
// does not empty it between two write-behind batches. Buffers are handed
// out as they were put back: every user overwrites what it uses.
type bufferList struct{ free chan *[]byte }

// Buffers kept: at most keptBuffers, each of at most keptBufferBytes.
const (
	keptBuffers     = 4
	keptBufferBytes = 4 << 20
)

var batchBuffers = &bufferList{free: make(chan *[]byte, keptBuffers)}

// Get returns a buffer of length n: a kept one when it is large enough.
func (l *bufferList) Get(n int) *[]byte {
	select {
	case b := <-l.free:
		if cap(*b) >= n {
			*b = (*b)[:n]
			return b
		}
	default:
	}
	b := make([]byte, n)
	return &b
}

// Put keeps b for a later Get, unless the list is full or b is too large.
func (l *bufferList) Put(b *[]byte) {
	if cap(*b) > keptBufferBytes {
		return
	}
	select {
	case l.free <- b:
	default:
	}
}

// servedRequests maps each AppendRequest the codec decoded to the buffers
// its events alias, until the server's Append handler has served the
// request and releases it.
var servedRequests sync.Map // *logbookv1.AppendRequest → *heldRequest

// heldRequest is what the events of a decoded AppendRequest alias: the
// buffers gRPC read the message into (one reference taken on them) and the
// pooled copies of the events that spanned two of those.
type heldRequest struct {
	data  mem.BufferSlice
	spill []*[]byte
}

// release gives the buffers back.
func (h *heldRequest) release() {
	h.data.Free()
	for _, p := range h.spill {
		frameBuffers.Put(p)
	}
}

// releaseRequest gives back the buffers req's events alias, if the codec
// decoded it; the events must not be used afterwards.
func releaseRequest(req *logbookv1.AppendRequest) {
	if h, ok := servedRequests.LoadAndDelete(req); ok {
		h.(*heldRequest).release()
	}
}
