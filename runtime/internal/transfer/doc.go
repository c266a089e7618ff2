// Package transfer moves stored sessions between persistence backends and
// compares them, event by event, without a live session in between.
//
// Migrate copies every session of one backend to another, resumably: a
// session the target already holds in full is only verified, one it holds
// in part gets the rest, and a target whose stored events are not the
// source's prefix is MIRROR_DIVERGED and left as it is. Every copy is read
// back and compared byte for byte. Verify compares each session of a
// primary with each mirror and reports one Comparison per pair.
//
// Both work on sdk.Persistence values, so they run the same against a
// plugin subprocess and an in-process backend. Sessions are opened
// read-only on the source (and on a mirror that is only compared), so they
// run beside a writer in another process; a copy opens the target for
// write. Reads go in chunks of ReadChunk events, so memory is bounded by a
// chunk, not by a session; appends go in batches of at most the byte count
// the caller passes (rpcsize.MaxCopyBatchBytes of the plugin request cap).
package transfer
