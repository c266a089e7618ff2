// Package rpcsize is how the host sizes the requests it sends a plugin: the
// envelopes of one Append, a bulk copy's batches, the room a summary or
// prune request leaves for its other fields. A backend checks none of it;
// it keeps every request below the plugin request cap (RPCMaxBytes, at most
// sdk.MaxRPCMaxBytes) with room to spare, whatever the backend.
package rpcsize

// How the host sizes the requests it sends a plugin.
const (
	// RPCHeadroom is the part of the plugin request cap (RPCMaxBytes) a
	// request's bulk payload leaves free for the request's other fields:
	// the envelopes of an Append, the messages of a summary or prune
	// request are sized to at most RPCMaxBytes − RPCHeadroom.
	RPCHeadroom = 64 << 10 // 64 KiB

	// AppendEventOverhead is what one envelope adds to an Append request
	// beyond its own bytes (its field tag and length).
	AppendEventOverhead = 16

	// CopyBatchBytes caps one Append of a bulk copy (import, fork, mirror
	// catch-up, migration): a backend stores a batch as one unit (a zstd
	// frame, a transaction), and units of a few MiB keep the next open's
	// scan parallel and its memory small, at one fsync per 4 MiB.
	CopyBatchBytes = 4 << 20 // 4 MiB
)

// MaxAppendBytes is the most that the envelopes of one Append request may
// count, each its length plus AppendEventOverhead, under a plugin request
// cap of rpcMaxBytes.
func MaxAppendBytes(rpcMaxBytes int) int { return rpcMaxBytes - RPCHeadroom }

// MaxCopyBatchBytes is MaxAppendBytes for a bulk copy: never above
// CopyBatchBytes.
func MaxCopyBatchBytes(rpcMaxBytes int) int { return min(MaxAppendBytes(rpcMaxBytes), CopyBatchBytes) }

// AppendBatchLen returns how many of n envelopes, in order, one Append
// request of at most limit bytes carries: as many as fit when each counts
// envelopeLen(i) + AppendEventOverhead, and at least one, so a single
// envelope larger than limit still goes out alone.
func AppendBatchLen(n, limit int, envelopeLen func(i int) int) int {
	size := 0
	for i := range n {
		sz := envelopeLen(i) + AppendEventOverhead
		if i > 0 && size+sz > limit {
			return i
		}
		size += sz
	}
	return n
}
