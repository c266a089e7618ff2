package pluginrpc

import (
	"math/bits"
	"sync"

	"google.golang.org/grpc/mem"
)

// framePool is the gRPC buffer pool of plugin connections (installed with
// grpc/experimental, on both ends), for the buffers gRPC takes itself: each
// HTTP/2 frame read from the connection, each message it encodes. gRPC's
// default pool clears every buffer it hands out — some 200 KiB per
// write-behind batch on the plugin side, a few MiB per restore on the host —
// although gRPC overwrites every byte it then uses (it reads a frame with
// io.ReadFull into a buffer of the frame's length; it encodes a message into
// one of the message's length). This pool hands buffers out as they were put
// back: one sync.Pool per power of two up to 1 MiB; larger ones are
// allocated. Skipping the clearing matters on the ingest path, where every
// batch passes through such buffers on both ends.
type framePool struct{ classes [framePoolClasses]sync.Pool }

// framePoolClasses: class k holds buffers of capacity 1<<k, up to 1 MiB.
const framePoolClasses = 21

var frameBuffers = &framePool{}

// Get returns a buffer of length n.
func (p *framePool) Get(n int) *[]byte {
	k := bits.Len(uint(max(n, 1) - 1))
	if k < framePoolClasses {
		if b, ok := p.classes[k].Get().(*[]byte); ok {
			*b = (*b)[:n]
			return b
		}
		b := make([]byte, n, 1<<k)
		return &b
	}
	b := make([]byte, n)
	return &b
}

// Put takes back a buffer Get returned.
func (p *framePool) Put(b *[]byte) {
	c := cap(*b)
	if k := bits.Len(uint(c - 1)); c > 0 && k < framePoolClasses && 1<<k == c {
		p.classes[k].Put(b)
	}
}

var _ mem.BufferPool = (*framePool)(nil)
